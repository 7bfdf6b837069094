"""topoawarectl check against the real daemon, its runtime (the NRI
simulator of t/lib/nri_runtime.py) and its kubelet (t/lib/kubelet.py):
exit 0 and "ok" on a clean node; exit 3 with each violation named when a
claim's CDI spec is edited or deleted, when the journal loses a grant
and when state.json is replaced by a copy older than the journals reach;
NRI requests answered while a check runs; at most two checks at once, and a check whose
client went away cancelled. Exit 1 stays "no daemon"."""

import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import kubelet  # noqa: E402
import statedoc  # noqa: E402
from daemon import Daemon  # noqa: E402
from draenv import DraEnv  # noqa: E402

EXIT_VIOLATIONS = 3     # topoawarectl(8)
MAX_CHECKS = 2          # ADMIN_MAX_CHECKS
STEP_MS = 150           # TOPOAWARE_DEBUG_CHECK_STEP_MS in the slow tests


def ctl(env, *args, timeout=30):
    cmd = [os.path.join(tap.builddir(), "topoawarectl"),
           "--socket", env.d.admin_socket, "--timeout", "25"] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout)


def check(env):
    """topoawarectl check: (exit status, lines printed)."""
    r = ctl(env, "check")
    return r.returncode, r.stdout.splitlines(), r.stderr


def assert_clean(env, claims, grants):
    rc, lines, err = check(env)
    assert rc == 0, (rc, lines, err, env.d.output()[-3000:])
    assert lines == ["ok: %d claims, %d grants, state matches"
                     % (claims, grants)], lines


def node(env, claims=2, pinned=True):
    """Claims of one CPU each on nodes 0, 1, 2, 3 in turn, a Guaranteed
    and a BestEffort container, and a container pinned to the first
    claim: their uids."""
    uids = []
    for i in range(claims):
        c = env.claim_on(i % 4, 1, consumers=["pinned"])
        env.prepare_env(c)
        uids.append(c.uid)
    env.create("guaranteed", qos="Guaranteed", request=2000)
    env.create("besteffort")
    if pinned:
        key, value = env.cdi_env(uids[0])
        env.create("pinned", env=["%s=%s" % (key, value)])
    return uids


def state_file(env):
    return os.path.join(env.d.state_dir, "state.json")


def test_a_clean_node_is_ok():
    with DraEnv() as env:
        env.start()
        assert_clean(env, 0, 0)
        node(env)
        assert_clean(env, 2, 5)
        r = ctl(env, "--json", "check")
        assert r.returncode == 0, r
        got = json.loads(r.stdout)
        assert got["ok"] is True, got
        assert got["violations"] == [], got
        assert got["checked"] == {"containers": 3, "claims": 2,
                                  "grants": 5, "cdi_specs": 2,
                                  "state": "matches"}, got
        # After a restart: the snapshot holds everything, the CDI specs
        # were written again.
        env.restart()
        assert_clean(env, 2, 5)
        r = ctl(env, "check", "extra")
        assert r.returncode == 2, r
        r = ctl(env, "metrics")
        assert 'topoaware_admin_requests_total{command="check"} 1\n' in \
            r.stdout, r.stdout
        env.stop()


def test_cdi_specs_edited_and_deleted_are_named():
    with DraEnv() as env:
        env.start()
        a, b = node(env)
        path_a = kubelet.cdi_path(env.cdi_dir, a)
        path_b = kubelet.cdi_path(env.cdi_dir, b)
        with open(path_a) as f:
            original_a = f.read()
        with open(path_b) as f:
            original_b = f.read()
        key, value = env.cdi_env(a)
        # Another CPU, the file's size unchanged.
        other = value[:-1] + ("9" if value[-1] != "9" else "8")
        forged = original_a.replace("%s=%s" % (key, value),
                                    "%s=%s" % (key, other))
        assert forged != original_a and len(forged) == len(original_a)
        with open(path_a, "w") as f:
            f.write(forged)
        rc, lines, err = check(env)
        assert rc == EXIT_VIOLATIONS, (rc, lines, err)
        assert lines == [
            "cdi: claim %s: its CDI spec differs from the claim: it sets "
            "%s=%s, the claim holds %s=%s" % (a, key, other, key, value)], \
            lines

        # One byte of layout is a difference too: the runtime reads it.
        with open(path_a, "w") as f:
            f.write(original_a.rstrip("\n"))
        os.unlink(path_b)
        rc, lines, err = check(env)
        assert rc == EXIT_VIOLATIONS, (rc, lines, err)
        assert sorted(lines) == sorted([
            "cdi: claim %s: its CDI spec is not the one written for it "
            "(which sets %s=%s)" % (a, key, value),
            "cdi: claim %s: its CDI spec is missing" % b]), lines
        r = ctl(env, "--json", "check")
        assert r.returncode == EXIT_VIOLATIONS, r
        got = json.loads(r.stdout)
        assert got["ok"] is False
        assert sorted((v["kind"], v["what"]) for v in got["violations"]) \
            == sorted([("cdi", "claim " + a), ("cdi", "claim " + b)]), got
        assert got["checked"]["state"] == "matches", got

        with open(path_a, "w") as f:
            f.write(original_a)
        with open(path_b, "w") as f:
            f.write(original_b)
        assert_clean(env, 2, 5)
        # A released claim's spec is gone and not missed.
        env.k.unprepare([kubelet.Claim("default", "x", b)])
        assert not os.path.exists(path_b)
        assert_clean(env, 1, 4)

        # A spec left behind for a claim not held is named.
        left = "0badc0de-left-over"
        path_left = kubelet.cdi_path(env.cdi_dir, left)
        with open(path_left, "w") as f:
            f.write(original_b.replace(b, left))
        # Not ours: another driver's spec, a stray file.
        with open(os.path.join(env.cdi_dir, "other.example.com-device_"
                               + left + ".json"), "w") as f:
            f.write("{}")
        rc, lines, err = check(env)
        assert rc == EXIT_VIOLATIONS, (rc, lines, err)
        assert lines == [
            "cdi: claim %s: a CDI spec is left for it (%s) but it is not "
            "held: a container naming it would get CPUs nobody holds"
            % (left, path_left)], lines
        os.unlink(path_left)
        assert_clean(env, 1, 4)
        env.stop()


def encode(seq, payload):
    """A journal record as topoawared(8) FILES describes it."""
    head = b"%d %d " % (seq, len(payload))
    return b"J %s%08x\n%s\n" % (head, statedoc.crc32c(payload,
                                 statedoc.crc32c(head)), payload)


def rewrite_journal(env, edit):
    """Passes each record's payload, parsed, through edit and writes the
    journal again with good checksums, in place."""
    path = os.path.join(env.d.state_dir, "journal")
    with open(path, "rb") as f:
        original = f.read()
    recs, end = statedoc.records(original)
    assert end is None and recs, end
    out = b"".join(encode(seq, json.dumps(edit(json.loads(p))).encode())
                   for seq, p in recs)
    with open(path, "r+b") as f:
        f.write(out)
        f.truncate()
    return path, original


def test_a_grant_missing_from_the_saved_state_is_named():
    with DraEnv() as env:
        env.start()
        a, b = node(env)

        def edit(rec):
            for g in (rec.get("set", {}), rec.get("grants", {})):
                g.pop("claim:" + b, None)
                if "claim:" + a in g:
                    g["claim:" + a]["consumers"] = ["someone-else"]
            return rec
        path, original = rewrite_journal(env, edit)
        rc, lines, err = check(env)
        assert rc == EXIT_VIOLATIONS, (rc, lines, err)
        assert sorted(lines) == sorted([
            "state: claim %s: saved with another consumers than it has "
            "in memory" % a,
            "state: claim %s: held in memory, not in the saved state" % b,
        ]), lines
        with open(path, "r+b") as f:
            f.write(original)
            f.truncate()
        assert_clean(env, 2, 5)
        env.stop()


def test_a_state_older_than_the_journals_is_named():
    with DraEnv() as env:
        env.start()
        old = os.path.join(env.folder, "state.json.old")
        shutil.copy(state_file(env), old)
        node(env, claims=1, pinned=False)
        env.restart()           # journal.prev: the first claim's records
        c = env.claim_on(2, 1)
        env.prepare_env(c)
        env.restart()           # journal.prev: the second claim's only
        assert_clean(env, 2, 4)
        shutil.copy(old, state_file(env))
        rc, lines, err = check(env)
        assert rc == EXIT_VIOLATIONS, (rc, lines, err)
        assert len(lines) == 1, lines
        assert lines[0].startswith("state: journal.prev: damaged at byte "
                                   "0: record "), lines
        assert " follows " in lines[0], lines
        env.stop()


def slow_env(step_ms=STEP_MS):
    return DraEnv(daemon_class=functools.partial(
        Daemon, env={"TOPOAWARE_DEBUG_CHECK_STEP_MS": str(step_ms)}))


def test_nri_is_served_while_a_check_runs():
    if not tap.debug_hooks():
        raise tap.Skip("needs --enable-debug-hooks")
    step = 0.4
    with slow_env(int(step * 1000)) as env:
        env.start()
        uids = node(env, claims=8)
        proc = subprocess.Popen(
            [os.path.join(tap.builddir(), "topoawarectl"), "--socket",
             env.d.admin_socket, "--timeout", "60", "check"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        # Steps 1 to 8 read the claims' specs: a create is answered
        # between two of them.
        time.sleep(2 * step)
        t1 = time.monotonic()
        cid, cpus, _ = env.create("during", qos="Guaranteed", request=1000)
        took = time.monotonic() - t1
        assert cpus, cid
        assert took < 2 * step, took
        # Steps 9 to 11 read state.json, journal.prev and journal: creates
        # there move the journal under the reads, which start again.
        while time.monotonic() - t0 < 9.5 * step:
            time.sleep(0.02)
        late = 0
        while time.monotonic() - t0 < 11.5 * step:
            env.create("late%d" % late)
            late += 1
            time.sleep(0.1)
        assert proc.poll() is None, "the check ended before the creates"
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, (proc.returncode, out, err)
        assert out == "ok: %d claims, %d grants, state matches\n" % (
            len(uids), len(uids) + 4 + late), out
        assert "reading it again" in env.d.output(), env.d.output()
        env.stop()


def request(env, command):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(env.d.admin_socket)
    s.sendall((json.dumps({"command": command, "args": []}) +
               "\n").encode())
    return s


def test_checks_are_bounded_and_cancelled_with_their_client():
    if not tap.debug_hooks():
        raise tap.Skip("needs --enable-debug-hooks")
    with slow_env() as env:
        env.start()
        node(env, claims=8)
        socks = [request(env, "check") for _ in range(MAX_CHECKS)]
        time.sleep(STEP_MS / 1000.0)
        r = ctl(env, "check")
        assert r.returncode == 1, r
        assert "checks are running already" in r.stderr, r
        # Other commands are answered meanwhile.
        assert ctl(env, "status").returncode == 0
        for s in socks:
            s.close()
        # Their jobs are freed within a pass: a new check starts.
        done = {}

        def run():
            done["r"] = ctl(env, "check")
        t = threading.Thread(target=run)
        time.sleep(STEP_MS / 1000.0)
        t.start()
        t.join(60)
        assert done["r"].returncode == 0, done["r"]
        # A client that sent its request and half-closed still gets it.
        s = request(env, "check")
        s.shutdown(socket.SHUT_WR)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            assert chunk, buf
            buf += chunk
        s.close()
        assert json.loads(buf)["result"]["ok"] is True, buf
        env.stop()


def test_no_daemon_is_exit_1():
    folder = tap.tmpdir()
    r = subprocess.run([os.path.join(tap.builddir(), "topoawarectl"),
                        "--socket", os.path.join(folder, "none.sock"),
                        "check"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1, r


if __name__ == "__main__":
    tap.run(globals())
