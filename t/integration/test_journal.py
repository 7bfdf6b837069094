"""The state journal as a history (issue: one commit path; topoawared(8),
FILES): every change the daemon acknowledges is a record holding the
event as the policy read it, in topoaware-sim's scenario form. Replaying
the events of a node's journal through topoaware-sim, from the same
machine and config, ends with exactly the grants the daemon held: the
records say everything that decided them. The journal is read with the
tests' own reader of the format (t/lib/statedoc.py).

The machine: n4c16 with CPU 15 reserved (t/lib/draenv.py)."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import kubelet  # noqa: E402
import statedoc  # noqa: E402
from draenv import CONFIG, DraEnv  # noqa: E402


def replay(env, events):
    """The events through topoaware-sim; the grants it ends with."""
    config = os.path.join(tap.tmpdir(), "config.json")
    with open(config, "w") as f:
        json.dump(CONFIG, f)
    lines = [json.dumps(e) for e in events]
    lines.append(json.dumps({"op": "show", "what": "grants"}))
    r = subprocess.run([os.path.join(tap.builddir(), "topoaware-sim"),
                        "--sysfs-root", tap.n4c16(), "--config",
                        config, "-"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=60)
    replies = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(replies) == len(lines), (r.stdout, r.stderr)
    for e, rep in zip(events, replies):
        assert rep["ok"], (e, rep)
    return replies[-1]["grants"]


def cpus_of(grants):
    return {g.get("id") or "claim:" + g["claim"]: (g["cpus"], g["mems"])
            for g in grants}


def test_replayed_journal_gives_the_same_grants():
    with DraEnv() as env:
        env.start()
        rt = env.rt
        env.create("be")
        g, _, _ = env.create("g", qos="Guaranteed", request=2000)
        env.create("bu", qos="Burstable", request=500)
        c = env.claim_on(1, 2, consumers=["pinned", "late"])
        key, val = env.prepare_env(c)
        env.create("pinned", env=["%s=%s" % (key, val)])
        rt.update_container(g, 1000, 1000)
        other = env.claim_on(2, 1)
        env.prepare_env(other)
        rt.stop_container(g)
        rt.remove_container(g)
        assert env.k.unprepare([other]) == {other.uid: ""}
        env.create("late", env=["%s=%s" % (key, val)])
        env.d.write_config(dict(CONFIG, colocatePods=True))
        assert env.d.admin("reload")["ok"]
        env.create("after", qos="Guaranteed", request=1000)
        held = cpus_of(env.admin("grants"))
        # What an operator reads of it.
        st = env.status()["journal"]
        assert st["records"] >= 10 and st["bytes"] > 0, st
        assert not st["damaged"] and not st["unsaved"], st
        r = subprocess.run([os.path.join(tap.builddir(), "topoawarectl"),
                            "--socket", env.d.admin_socket, "status"],
                           capture_output=True, text=True, timeout=15)
        line = [ln for ln in r.stdout.splitlines()
                if ln.startswith("state journal")]
        assert line and "%d records since the snapshot, change %d" % (
            st["records"], st["seq"]) in line[0], r.stdout
        state = env.d.state_dir
        env.stop()

        events = statedoc.journal_events(state)
        ops = [e["op"] for _, e in events]
        for op in ("sync", "create", "claim", "update", "remove",
                   "release", "reconfigure"):
            assert op in ops, (op, ops)
        seqs = [s for s, _ in events]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
        assert cpus_of(replay(env, [e for _, e in events])) == held
        # The snapshot written at the stop holds the same.
        doc = statedoc.read_state(state)
        assert set(doc["grants"]) == set(held), (sorted(doc["grants"]),
                                                 sorted(held))


def crash(env):
    env.k.close()
    env.d.kill()
    env.rt.drop()


def start_again(env):
    env.k = kubelet.Kubelet(env.kdir)
    env.start()


def test_torn_and_damaged_journals():
    """A crash that cut the last record short loses nothing acknowledged:
    the torn record is dropped and said so. A bad record with good ones
    after it is damage: the records before it are applied, the journal
    moved aside, the daemon says so in status, and CDI specs of claims it
    does not hold are kept, as the lost records may have held them."""
    with DraEnv() as env:
        env.start()
        a, _, _ = env.create("a")
        b, _, _ = env.create("b", qos="Guaranteed", request=1000)
        crash(env)                      # no snapshot at the stop
        journal = os.path.join(env.d.state_dir, "journal")
        # Where the crash would have left it: after the records, in the
        # journal's room.
        end = statedoc.records_size(journal)
        with open(journal, "r+b") as f:
            f.seek(end)
            f.write(b"J 999 40 00000000\n{\"event\":")
        start_again(env)
        assert "never acknowledged and is dropped" in env.d.output()
        assert {a, b} <= set(env.grants())
        assert env.status()["journal"]["damaged"] is False
        c, _, _ = env.create("c")
        d, _, _ = env.create("d")
        crash(env)
        # A byte of a record in the middle changes: c's create.
        with open(journal, "rb") as f:
            data = f.read()
        at = data.index(b'{"event":{"id":"%s"' % c.encode())
        data = data[:at] + b"X" + data[at + 1:]
        with open(journal, "wb") as f:
            f.write(data)
        stale = kubelet.cdi_path(env.cdi_dir, "lost-claim")
        os.makedirs(env.cdi_dir, exist_ok=True)
        with open(stale, "w") as f:
            json.dump({"cdiVersion": "0.5.0", "kind": "x/y",
                       "devices": []}, f)
        start_again(env)
        st = env.status()
        assert st["journal"]["damaged"] is True, st
        assert "journal is damaged" in (st["lastError"] or ""), st
        assert "THE STATE JOURNAL IS DAMAGED" in env.d.output()
        assert [n for n in os.listdir(env.d.state_dir)
                if n.startswith("journal.bad-")], os.listdir(env.d.state_dir)
        assert os.path.exists(stale), "a CDI spec was removed"
        # What came before the damage is there; the runtime's sync
        # brings the rest back.
        assert {a, b, c, d} <= set(env.grants())
        env.stop()




def test_room_after_the_records():
    """The journal keeps NUL room after its records, so that an append does
    not change the file's size: while the daemon runs the file is larger
    than its records and ends in NUL bytes; a start after a crash appends
    right after the last record, not after the room; a stop leaves every
    journal file without room."""
    with DraEnv() as env:
        env.start()
        env.create("a")
        journal = os.path.join(env.d.state_dir, "journal")
        with open(journal, "rb") as f:
            data = f.read()
        recs, end = statedoc.records(data)
        size = statedoc.records_size(journal)
        assert recs and end is None, (recs, end)
        assert size > 0 and len(data) > size, (len(data), size)
        assert data[size - 1:size] == b"\n", data[size - 8:size + 8]
        assert len(data) % (256 << 10) == 0, len(data)
        crash(env)
        start_again(env)
        b, _, _ = env.create("b")
        with open(journal, "rb") as f:
            recs, end = statedoc.records(f.read())
        assert end is None, end
        seqs = [seq for seq, _ in recs]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
        assert json.loads(recs[-1][1])["event"].get("id") == b, recs[-1]
        env.stop()
        for name in ("journal", "journal.prev"):
            path = os.path.join(env.d.state_dir, name)
            if os.path.exists(path):
                assert os.path.getsize(path) == \
                    statedoc.records_size(path), name


def test_compaction_at_twice_the_snapshot():
    """The journal is compacted when it holds more than twice its
    snapshot's bytes (journal.h): between two snapshots it grows past the
    snapshot's size, and never stays past twice it."""
    if not tap.debug_hooks():
        raise tap.Skip("built without --enable-debug-hooks")
    with DraEnv() as env:
        env.d.env = {"TOPOAWARE_DEBUG_JOURNAL_MIN": "1"}
        env.start()
        snap = os.path.join(env.d.state_dir, "state.json")
        past_once, compactions = False, 0
        for i in range(40):
            env.create("c%d" % i, qos="Burstable", request=100)
            st = env.status()["journal"]
            size = os.path.getsize(snap)
            assert st["bytes"] <= 2 * size, (i, st, size)
            past_once |= st["bytes"] > size
            compactions = st["compactions"]
        assert past_once, "never let the journal outgrow its snapshot"
        assert compactions >= 2, compactions
        env.stop()


if __name__ == "__main__":
    tap.run(globals())
