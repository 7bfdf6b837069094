"""`topoawarectl reload --dry-run [FILE]` (issue 15) through the real daemon
and the real client: it reports which containers and claims a reload would
move, from where to where, or why it would be refused (exit status 3), by
the rule book and the reconfiguration of the real reload, which it then
undoes: the grants, the saved state (byte for byte), the configuration
generation, the last reload, the reload counters and the runtime are as
before, and a real reload of the same config moves exactly what it said.
Without FILE the daemon's config file is read by the real reload's rules
(a deleted file, a FIFO: refused; the same bytes: no change). FILE is sent
whole up to the daemon's config file limit (1 MiB) and refused by the
client beyond it, before anything is sent; bytes that are not a config
get the parser's error, as the real reload gives it."""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402
from nri_runtime import Session, parse_cpuset  # noqa: E402

RESERVED = {3, 11}
CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"}}
CONFIG_MAX = 1024 * 1024        # SERVER_CONFIG_MAX, ADMINPROTO_MAX_CONFIG
EXIT_REFUSED = 3
# The file watch would reload what a test writes: only its triggers do.
NEVER = ["--config-debounce", "60000"]


def ctl(d, *args, stdin=None):
    cmd = [os.path.join(tap.builddir(), "topoawarectl"),
           "--socket", d.admin_socket] + list(args)
    return subprocess.run(cmd, capture_output=True, timeout=30,
                          input=stdin if stdin is not None else b"")


def dry(d, *args, stdin=None):
    """The JSON report of a dry run, and its exit status."""
    r = ctl(d, "--json", "reload", "--dry-run", *args, stdin=stdin)
    assert r.returncode in (0, EXIT_REFUSED), r
    return json.loads(r.stdout), r.returncode


def write(path, data):
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else
                json.dumps(data).encode())
    return path


def state_files(d):
    """Every file of the state folder (snapshot, journal, exports)."""
    out = {}
    for root, _, files in os.walk(d.state_dir):
        for name in files:
            p = os.path.join(root, name)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d.state_dir)] = f.read()
    return out


def reload_counts(d):
    text = d.admin("metrics")["result"]["text"]
    return sorted(re.findall(r"^topoaware_reloads_total\S* \S+$", text,
                             re.M))


def observe(d):
    """What a dry run must leave as it was."""
    st = d.admin("status")["result"]
    return {"grants": d.admin("grants")["result"],
            "pools": d.admin("pools")["result"],
            "config": d.admin("config")["result"],
            "generation": st["configGeneration"],
            "lastReload": st["lastReload"], "lastError": st["lastError"],
            "reloads": reload_counts(d), "files": state_files(d)}


def test_moves_are_reported_and_nothing_is_applied():
    with Session(CONFIG, args=NEVER) as s:
        s.start()
        rt, d = s.rt, s.d
        ids = rt.create_shared(6)
        p = rt.make_pod("g", qos="Guaranteed")
        g = rt.make_container(p, "c", request=2000, limit=2000)
        rt.create_container(p, g)
        s.wait_status(lambda st: st["nri"]["synchronized"])
        grants = {x["id"]: x for x in d.admin("grants")["result"]
                  if "id" in x}
        # Reserve one more CPU the shared containers run on.
        extra = min(set().union(*(parse_cpuset(rt.cpus(i)) for i in ids)))
        moved = {i for i in ids if extra in parse_cpuset(rt.cpus(i))}
        assert moved
        new = dict(CONFIG, reservedResources={"cpu": "cpuset:" + ",".join(
            map(str, sorted(RESERVED | {extra})))})
        path = write(os.path.join(d.folder, "new.json"), new)
        before = observe(d)

        rep, rc = dry(d, path)
        assert rc == 0 and rep["dryRun"] is True, rep
        assert rep["refused"] is None and rep["unchanged"] is False, rep
        assert rep["generation"] == before["generation"], rep
        assert rep["claims"] == [], rep
        got = {m["id"]: m for m in rep["containers"]}
        assert set(got) == moved, (sorted(got), sorted(moved))
        for cid, m in got.items():
            old = dict(grants[cid])
            del old["id"]
            assert m["from"] == old, (m, old)
            assert extra not in parse_cpuset(m["to"]["cpus"]), m
            assert m["to"]["pool"] == old["pool"], m
        # The text: a row per container, from and to.
        r = ctl(d, "reload", "--dry-run", path)
        assert r.returncode == 0, r
        out = r.stdout.decode()
        assert out.startswith("would apply: configuration generation 1 "
                              "would become 2\n"), out
        # Columns are two spaces apart at least; a pool name has one.
        rows = [re.split(r"\s{2,}", x) for x in out.splitlines()]
        assert rows[1] == ["CONTAINER", "FROM CPUS", "MEMS", "POOL",
                           "TO CPUS", "MEMS", "POOL"], out
        for cid in moved:
            row = [x for x in rows if x[0] == cid]
            assert len(row) == 1, (cid, out)
            f, t = got[cid]["from"], got[cid]["to"]
            assert row[0][1:] == [f["cpus"], f["mems"], f["pool"],
                                  t["cpus"], t["mems"], t["pool"]], \
                (row, got[cid])
        assert "no claim would move" in out, out

        # Nothing was applied: no update to the runtime, the same
        # grants, state files, generation, last reload and counters.
        assert observe(d) == before
        assert rt.pushed == [], rt.pushed
        for i in ids:
            assert extra in parse_cpuset(rt.cpus(i)) or i not in moved
        assert "reload dry run of config sent over the admin socket: would " \
            "apply, %d containers" % len(moved) in d.output()

        # The real reload of the same config does what the dry run said.
        d.write_config(new)
        assert d.admin("reload")["ok"]
        after = {x["id"]: x for x in d.admin("grants")["result"]
                 if "id" in x}
        for cid in ids + [g.id]:
            old = dict(grants[cid])
            now = dict(after[cid])
            if cid in got:
                del now["id"]
                assert now == got[cid]["to"], (cid, now, got[cid])
            else:
                assert now == old, (cid, now, old)
        assert rt.wait_pushed(lambda p: sorted(
            u.container_id for r in p for u in r.update) == sorted(moved))
        # And now the daemon's own file is the config in force.
        rep, rc = dry(d)
        assert rc == 0 and rep["unchanged"] is True, rep
        assert rep["generation"] == 2, rep
        s.stop()


def node0_claim(d):
    """Two CPUs of NUMA node 0 that are free to claim, and their pool."""
    topo = d.admin("topology")["result"]
    node0 = parse_cpuset(topo["nodes"][0]["cpus"])
    pools = d.admin("pools")["result"]
    pool = [p for p in pools if parse_cpuset(p["cpus"]) == node0][0]
    free = sorted(parse_cpuset(pool["freeSharable"]) -
                  parse_cpuset(pool["reserved"]))
    return free[:2], pool


def test_refusals_say_why_and_change_nothing():
    with Daemon(args=NEVER) as d:
        d.start()
        cpus, pool = node0_claim(d)
        d.finish()
        with open(os.path.join(d.state_dir, "state.json"), "w") as f:
            json.dump({"version": 1, "grants": {"claim:uid-1": {
                "kind": "claim", "cpus": ",".join(map(str, cpus)),
                "pool": pool["name"]}}}, f)
        d.start()
        before = observe(d)

        # A config that reserves a claimed CPU: the policy's cause.
        path = write(os.path.join(d.folder, "take.json"), {
            "reservedResources": {"cpu": "cpuset:%d" % cpus[0]}})
        r = ctl(d, "reload", "--dry-run", path)
        assert r.returncode == EXIT_REFUSED, r
        out = r.stdout.decode()
        assert out.startswith("would be refused: "), out
        assert "uid-1" in out, out
        assert "configuration generation 1 stays" in out, out
        rep, rc = dry(d, path)
        assert rc == EXIT_REFUSED and "uid-1" in rep["refused"], rep
        # The real reload gives the same cause.
        d.write_config({"reservedResources": {"cpu": "cpuset:%d" %
                                              cpus[0]}})
        real = d.admin("reload")
        assert real["ok"] is False and real["error"] == rep["refused"], \
            (real, rep)
        d.write_config("{}")
        assert d.admin("reload")["ok"]
        before = observe(d)

        # A key the schema does not have.
        path = write(os.path.join(d.folder, "bad.json"), {"pinCPUs": True})
        rep, rc = dry(d, path)
        assert rc == EXIT_REFUSED and "pinCPUs" in rep["refused"], rep
        assert rep["refused"].startswith(
            "config sent over the admin socket: "), rep

        # A config that keeps the claim: it would not move.
        path = write(os.path.join(d.folder, "ok.json"), {"pinMemory": False})
        rep, rc = dry(d, path)
        assert rc == 0 and rep["refused"] is None, rep
        assert rep["containers"] == [] and rep["claims"] == [], rep
        r = ctl(d, "reload", "--dry-run", path)
        assert r.stdout.decode().splitlines()[1:] == [
            "no container would move",
            "no claim would move: claims keep their CPUs"], r

        assert observe(d) == before
        d.finish()


def test_without_file_the_daemon_file_by_the_same_rules():
    with Daemon(config={"pinMemory": False}, args=NEVER) as d:
        d.start()
        before = observe(d)
        rep, rc = dry(d)
        assert rc == 0 and rep["unchanged"] is True, rep
        r = ctl(d, "reload", "--dry-run")
        assert r.stdout.decode() == "no change: this is the config in " \
            "force (generation 1)\n", r

        d.write_config({"pinMemory": False, "pinCPU": False})
        rep, rc = dry(d)
        assert rc == 0 and rep["unchanged"] is False, rep
        assert rep["refused"] is None, rep
        assert d.admin("config")["result"]["pinCPU"] is True
        assert "reload dry run of config %s: would apply" % d.config_path \
            in d.output()

        # Deleted: refused as the real reload refuses it.
        os.unlink(d.config_path)
        rep, rc = dry(d)
        assert rc == EXIT_REFUSED, rep
        assert "is gone" in rep["refused"], rep
        assert d.config_path in rep["refused"], rep
        # A FIFO in its place: refused by kind, the loop not held.
        os.mkfifo(d.config_path)
        rep, rc = dry(d)
        assert rc == EXIT_REFUSED, rep
        assert "is a FIFO, not a regular file" in rep["refused"], rep
        os.unlink(d.config_path)

        # Bad JSON: the parser's place of the error, with the path.
        d.write_config('{"pinCPU": true,')
        rep, rc = dry(d)
        assert rc == EXIT_REFUSED and d.config_path in rep["refused"], rep
        real = d.admin("reload")
        assert real["error"] == rep["refused"], (real, rep)
        # Refused for its bytes, remembered: the dry run says the same.
        rep, rc = dry(d)
        assert rc == EXIT_REFUSED and rep["refused"] == real["error"], rep
        st = d.admin("status")["result"]
        assert st["lastReload"]["error"] == real["error"], st
        d.write_config({"pinMemory": False})
        assert d.admin("reload")["ok"]
        assert observe(d)["generation"] == before["generation"]
        d.finish()


def test_file_size_limit_and_garbage():
    with Daemon(config={}, args=NEVER) as d:
        d.start()
        before = observe(d)

        # Exactly at the limit: sent whole, and judged by the daemon.
        doc = b'{"pinMemory": false}'
        path = write(os.path.join(d.folder, "max.json"),
                     doc + b" " * (CONFIG_MAX - len(doc)))
        rep, rc = dry(d, path)
        assert rc == 0 and rep["refused"] is None, rep
        with open(path, "rb") as f:
            rep2, rc = dry(d, "-", stdin=f.read())
        assert rep2 == rep, (rep2, rep)

        # One byte more: the client refuses it, and sends nothing.
        m0 = d.admin("metrics")["result"]["text"]
        path = write(os.path.join(d.folder, "big.json"),
                     doc + b" " * (CONFIG_MAX + 1 - len(doc)))
        with open(path, "rb") as f:
            big = f.read()
        for args, stdin in (((path,), None), (("-",), big)):
            r = ctl(d, "reload", "--dry-run", *args, stdin=stdin)
            assert r.returncode == 1, r
            err = r.stderr.decode()
            assert "more than %d bytes" % CONFIG_MAX in err, err
            assert "nothing was sent" in err, err
        m1 = d.admin("metrics")["result"]["text"]
        key = 'topoaware_admin_requests_total{command="reload"}'
        assert [x for x in m0.splitlines() if x.startswith(key)] == \
            [x for x in m1.splitlines() if x.startswith(key)], (m0, m1)

        # Bytes that are not UTF-8, nor JSON: the parser says why, as for
        # the same bytes in the config file.
        junk = b"\x00\xff\xfegarbage\x80{"
        path = write(os.path.join(d.folder, "junk"), junk)
        r = ctl(d, "reload", "--dry-run", path)
        assert r.returncode == EXIT_REFUSED, r
        out = r.stdout.decode()
        assert out.startswith("would be refused: config sent over the "
                              "admin socket: "), out
        rep, _ = dry(d, path)
        write(d.config_path, junk)
        real = d.admin("reload")["error"]
        assert rep["refused"].replace("sent over the admin socket",
                                      d.config_path) == real, (rep, real)
        d.write_config("{}")
        assert d.admin("reload")["ok"]
        # A missing FILE: the client says so.
        r = ctl(d, "reload", "--dry-run", os.path.join(d.folder, "none"))
        assert r.returncode == 1 and b"No such file" in r.stderr, r
        assert observe(d)["generation"] == before["generation"]
        d.finish()


def test_bad_requests_and_usage():
    with Daemon(config={}, args=NEVER) as d:
        d.start()
        for args, words in ((["--dry-run", "!!!!"], "not in base64"),
                            (["--dry-run", "e30=", "x"], "no arguments"),
                            (["now"], "no arguments"),
                            (["--dry-run", "e30"], "not in base64")):
            r = d.admin("reload", *args)
            assert r["ok"] is False and words in r["error"], (args, r)
        # "{}" in base64: the defaults, which are in force.
        r = d.admin("reload", "--dry-run", "e30=")
        assert r["ok"] and r["result"]["refused"] is None, r
        for args in (["status", "--dry-run"], ["reload", "--dry-run", "a",
                                               "b"]):
            r = ctl(d, *args)
            assert r.returncode == 2, (args, r)
        assert d.admin("status")["result"]["configGeneration"] == 1
        d.finish()


if __name__ == "__main__":
    tap.run(globals())
