"""topoaware-sim --replay on a state folder the real daemon wrote: every
record of a session (creates, an update, a start, a remove, a reload, and
the Synchronize of a restart) replays as recorded; --explain follows one
container's decisions; a forged record whose grant the policy would not
make is named; a folder that is not a state folder is an error."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from nri_runtime import Session  # noqa: E402

CONFIG = {"reservedResources": {"cpu": "cpuset:15"}}


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def frame(seq, payload):
    """A journal record as the daemon frames it."""
    head = b"%d %d " % (seq, len(payload))
    return (b"J %d %d %08x\n" % (seq, len(payload),
                                 crc32c(head + payload)) + payload + b"\n")


def records(path):
    """(seq, payload) of each record of a journal file."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    while data:
        head, _, rest = data.partition(b"\n")
        _, seq, n, _ = head.split(b" ")
        out.append((int(seq), json.loads(rest[:int(n)])))
        data = rest[int(n) + 1:]
    return out


def replay(state_dir, *extra):
    r = subprocess.run([os.path.join(tap.builddir(), "topoaware-sim"),
                        "--sysfs-root", tap.n4c16(), "--replay", state_dir]
                       + list(extra), capture_output=True, text=True,
                       timeout=60)
    return r, [json.loads(line) for line in r.stdout.splitlines()]


def test_history_replays_as_recorded():
    """A Synchronize of what the runtime already runs, creates, an update,
    a start, a remove and a reload, then a clean stop: the snapshot taken
    at start and the journal after it are kept as the generation behind
    the last snapshot, and every record of it replays as recorded."""
    s = Session(CONFIG, sysfs_root=tap.n4c16())
    try:
        rt = s.rt
        pre = rt.make_pod("pre", qos="Guaranteed")
        rt.add(pre, rt.make_container(pre, "c", request=1000, limit=1000))
        s.start()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        ids = {}
        for name, qos, cpu in (("g", "Guaranteed", 2000),
                               ("be", "BestEffort", 0),
                               ("bu", "Burstable", 500)):
            p = rt.make_pod(name, qos=qos)
            c = rt.make_container(p, "c", request=cpu,
                                  limit=cpu if qos == "Guaranteed" else 0)
            rt.create_container(p, c)
            ids[name] = c.id
        rt.update_container(ids["g"], 1000, 1000)
        rt.start_container(ids["bu"])
        rt.stop_container(ids["be"])
        rt.remove_container(ids["be"])
        s.d.write_config({"reservedResources": {"cpu": "cpuset:14-15"}})
        assert s.d.admin("reload")["ok"]
        s.stop()
        r, lines = replay(s.d.state_dir)
        assert r.returncode == 0, (r.stderr, lines)
        summary = lines[-1]
        assert summary["differ"] == 0 and summary["unreplayed"] == 0, lines
        assert summary["from"] == "state.json.prev", summary
        ops = [ln.get("op") for ln in lines[:-1]]
        assert summary["records"] == len(ops), lines
        assert all(ln["same"] is True for ln in lines[:-1]), lines
        for op in ("sync", "create", "update", "remove", "reconfigure"):
            assert op in ops, (op, ops)
    finally:
        s.rt.close()
        s.d.kill()


def test_explain_follows_a_container_and_forgeries_are_named():
    s = Session(CONFIG, sysfs_root=tap.n4c16())
    try:
        s.start()
        rt = s.rt
        p = rt.make_pod("g", qos="Guaranteed")
        c = rt.make_container(p, "c", request=2000, limit=2000)
        rt.create_container(p, c)
        rt.update_container(c.id, 1000, 1000)
        p2 = rt.make_pod("be", qos="BestEffort")
        rt.create_container(p2, rt.make_container(p2, "c"))
        s.stop()
        state = s.d.state_dir
        r, lines = replay(state, "--explain", c.id)
        assert r.returncode == 0, (r.stderr, lines)
        # The Synchronize at start (nothing running), then the events.
        ops = [ln["op"] for ln in lines if "op" in ln]
        assert ops == ["sync", "create", "update", "create"], lines
        ex = [ln for ln in lines if "explanation" in ln]
        # Its create and its update changed it; the BestEffort create
        # did not move its exclusive CPUs.
        assert [ln["seq"] for ln in ex] == [2, 3], ex
        assert ex[0]["explanation"]["decision"]["how"] == "scored", ex
        assert ex[1]["explanation"]["decision"]["how"] == "kept", ex
        assert ex[1]["explanation"]["allocation"]["exclusive"] != "", ex

        # A forged record: g's create again, as a second container that
        # got the same CPUs. The policy would never give them twice.
        recs = records(os.path.join(state, "journal.prev"))
        seq, create = next((q, rec) for q, rec in recs
                           if rec["event"]["op"] == "create")
        last = records(os.path.join(state, "journal.prev"))[-1][0]
        forged = json.loads(json.dumps(create))
        forged["event"]["id"] = "forged"
        forged["set"] = {"forged": forged["set"][c.id]}
        with open(os.path.join(state, "journal"), "ab") as f:
            f.write(frame(max(last, seq) + 1,
                          json.dumps(forged).encode()))
        r, lines = replay(state)
        assert r.returncode == 3, (r.stderr, lines)
        bad = [ln for ln in lines if ln.get("same") is False]
        assert len(bad) == 1 and bad[0]["differs"][0]["key"] == "forged", \
            lines
        assert bad[0]["differs"][0]["recorded"] == forged["set"]["forged"]
        assert lines[-1]["differ"] == 1
    finally:
        s.rt.close()
        s.d.kill()


def test_not_a_state_folder():
    r, _ = replay(tap.tmpdir())
    assert r.returncode == 1 and "not a state folder" in r.stderr, r.stderr
    r = subprocess.run([os.path.join(tap.builddir(), "topoaware-sim"),
                        "--sysfs-root", tap.n4c16(), "--explain", "x", "-"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--replay" in r.stderr, r.stderr


tap.run(globals())
