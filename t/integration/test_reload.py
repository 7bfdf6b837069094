"""Reload and saved state against the real daemon (R-CONF-2, R-CONF-3,
R-STATE-1..3, R-CLAIM-10): reloads through the admin socket and SIGHUP take
the same path, accepted ones bump the configuration generation, refused
ones change nothing and say why in status; grants are saved and held across
a restart, a bad state file is moved aside without stopping the daemon, and
saved claims that cannot keep their CPUs stop the start with exit status 78
and say what conflicts."""

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402


def cpulist(text):
    out = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def finish(d):
    rc = d.stop()
    out = d.output()
    assert rc == 0, "exit %r:\n%s" % (rc, out)
    assert "Sanitizer" not in out, out
    assert "runtime error:" not in out, out


def ctl(d, *args):
    cmd = [os.path.join(tap.builddir(), "topoawarectl"),
           "--socket", d.admin_socket] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=15)


def listen_notify(d):
    """Takes over the daemon's NOTIFY_SOCKET, which start() let go."""
    return d.listen_notify()


def wait_ready(s, timeout=10):
    """A reload ends with READY=1 (sd_notify), accepted or refused."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "no READY=1 after the reload"
        s.settimeout(left)
        msg = s.recv(4096).decode()
        if "READY=1" in msg.split("\n"):
            return


def status(d):
    r = d.admin("status")
    assert r["ok"], r
    return r["result"]


def config(d):
    r = d.admin("config")
    assert r["ok"], r
    return r["result"]


def test_reload_over_admin_accepted():
    with Daemon(config={}) as d:
        d.start()
        assert config(d)["pinMemory"] is True
        d.write_config({"pinMemory": False})
        r = d.admin("reload")
        assert r["ok"], r
        st = status(d)
        assert st["configGeneration"] == r["result"]["generation"]
        assert st["configGeneration"] > 1
        assert st["lastReload"]["ok"] is True
        assert st["lastReload"]["error"] is None
        assert st["lastReload"]["generation"] == st["configGeneration"]
        assert config(d)["pinMemory"] is False

        # The same file again is no new generation, and says so.
        r = ctl(d, "reload")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("unchanged"), r.stdout
        assert status(d)["configGeneration"] == st["configGeneration"]
        d.write_config({"pinMemory": False, "pinCPU": False})
        r = ctl(d, "reload")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("reloaded"), r.stdout
        assert status(d)["configGeneration"] == st["configGeneration"] + 1
        finish(d)


def test_reload_on_sighup_accepted():
    with Daemon(config={}) as d:
        d.start()
        before = status(d)["configGeneration"]
        ns = listen_notify(d)
        try:
            d.write_config({"preferSharedCPUs": True})
            d.signal(signal.SIGHUP)
            wait_ready(ns)
        finally:
            ns.close()
        st = status(d)
        assert st["configGeneration"] > before, st
        assert st["lastReload"]["ok"] is True, st
        assert config(d)["preferSharedCPUs"] is True
        assert "reloaded (SIGHUP)" in d.output()
        finish(d)


def test_reload_refused_on_bad_json_keeps_the_old_config():
    with Daemon(config={"pinCPU": False}) as d:
        d.start()
        d.write_config('{"pinCPU": true,')
        r = d.admin("reload")
        assert r["ok"] is False, r
        assert d.config_path in r["error"], r
        st = status(d)
        assert st["configGeneration"] == 1
        assert st["lastReload"]["ok"] is False
        assert st["lastReload"]["error"] == r["error"]
        assert st["lastReload"]["generation"] == 1
        assert config(d)["pinCPU"] is False

        r = ctl(d, "reload")
        assert r.returncode == 1 and d.config_path in r.stderr, r
        r = ctl(d, "status")
        assert r.returncode == 0, r.stderr
        assert "refused" in r.stdout and "generation 1" in r.stdout, r.stdout

        # Fixed, the next reload goes through.
        d.write_config({"pinCPU": True})
        assert d.admin("reload")["ok"]
        st = status(d)
        assert st["lastReload"]["ok"] is True and st["configGeneration"] == 2
        assert config(d)["pinCPU"] is True
        finish(d)


def test_reload_refused_on_driver_name_change_by_sighup():
    with Daemon(config={}) as d:
        d.start()
        ns = listen_notify(d)
        try:
            d.write_config({"dra": {"driverName": "other.example.com"},
                            "pinMemory": False})
            d.signal(signal.SIGHUP)
            wait_ready(ns)
        finally:
            ns.close()
        st = status(d)
        assert st["configGeneration"] == 1, st
        assert st["lastReload"]["ok"] is False, st
        assert st["lastReload"]["generation"] == 1, st
        assert "dra.driverName" in st["lastReload"]["error"], st
        assert "restart" in st["lastReload"]["error"], st
        cfg = config(d)
        assert cfg["dra"]["driverName"] == "topology-aware.nri.io"
        assert cfg["pinMemory"] is True
        m = d.admin("metrics")["result"]["text"]
        assert 'topoaware_reloads_total{result="refused"} 1\n' in m
        finish(d)


def state_path(d):
    return os.path.join(d.state_dir, "state.json")


def test_state_is_saved_and_a_restart_starts_from_it():
    with Daemon() as d:
        d.start()
        finish(d)
        with open(state_path(d)) as f:
            doc = json.load(f)
        assert doc["version"] == 3, doc
        d.start()
        st = status(d)
        assert st["containers"] == 0 and st["claims"] == 0
        assert not glob.glob(state_path(d) + ".bad-*")
        finish(d)


def node0_claim(d):
    """Two CPUs of NUMA node 0 that are free to claim, and their pool."""
    topo = d.admin("topology")["result"]
    node0 = cpulist(topo["nodes"][0]["cpus"])
    pools = d.admin("pools")["result"]
    pool = [p for p in pools if cpulist(p["cpus"]) == node0][0]
    free = sorted(cpulist(pool["freeSharable"]) - cpulist(pool["reserved"]))
    return free[:2], pool


def write_state(d, grants):
    with open(state_path(d), "w") as f:
        json.dump({"version": 1, "grants": grants}, f)


def test_a_saved_claim_is_held_after_restart():
    with Daemon() as d:
        d.start()
        cpus, pool = node0_claim(d)
        finish(d)
        text = ",".join(str(c) for c in cpus)
        write_state(d, {"claim:uid-1": {"kind": "claim", "cpus": text,
                                        "pool": pool["name"]}})
        d.start()
        st = status(d)
        assert st["claims"] == 1, st
        claims = d.admin("claims")["result"]
        assert len(claims) == 1 and claims[0]["claim"] == "uid-1", claims
        assert cpulist(claims[0]["cpus"]) == set(cpus)
        pools = d.admin("pools")["result"]
        now = [p for p in pools if p["id"] == pool["id"]][0]
        assert not cpulist(now["freeSharable"]) & set(cpus), now

        # topoawarectl shows it in its tables.
        r = ctl(d, "grants")
        assert r.returncode == 0, r.stderr
        rows = r.stdout.splitlines()
        assert rows[0].split() == ["ID", "CPUS", "MEMS", "MEMORY", "POOL"], \
            rows
        assert rows[1].split()[:2] == ["claim:uid-1", text], rows
        r = ctl(d, "claims")
        assert r.stdout.splitlines()[1].split()[:2] == ["uid-1", text], r
        r = ctl(d, "--json", "grants")
        assert json.loads(r.stdout) == d.admin("grants")["result"]

        # A reload that would take a claimed CPU is refused (R-CONF-3).
        d.write_config({"reservedResources": {"cpu": "cpuset:%d" % cpus[0]}})
        r = d.admin("reload")
        assert r["ok"] is False, r
        st = status(d)
        assert st["configGeneration"] == 1 and st["claims"] == 1, st
        assert st["lastReload"]["ok"] is False
        assert config(d)["reservedResources"]["cpu"] == "750m"
        finish(d)

        # The claim is in the file the daemon wrote itself.
        with open(state_path(d)) as f:
            doc = json.load(f)
        assert cpulist(doc["grants"]["claim:uid-1"]["cpus"]) == set(cpus)


def test_a_saved_container_that_no_longer_fits_is_restored():
    """The config changed while the daemon was down, and a saved
    container with eight exclusive CPUs fits nowhere under it: it shares
    the root pool's CPUs, with a warning, and the claim and the rest of
    the state are restored. Before, the whole state was refused for it
    and moved aside, and the claim dropped with it."""
    with Daemon() as d:
        d.start()
        cpus, pool = node0_claim(d)
        finish(d)
        text = ",".join(str(c) for c in cpus)
        mine = sorted(cpulist(pool["freeSharable"]) - set(cpus))[:8]
        spec = {"qos": "Guaranteed", "cpuRequest": 8000, "cpuLimit": 8000,
                "annotations": {}, "env": {}}
        write_state(d, {
            "claim:uid-1": {"kind": "claim", "cpus": text,
                            "pool": pool["name"]},
            "big": {"kind": "container", "pool": pool["name"],
                    "type": "normal",
                    "exclusive": ",".join(str(c) for c in mine),
                    "portion": 0, "zeroRequest": False, "fallback": False,
                    "container": spec}})
        # Four CPUs offered: the claim's two, one reserved, one more.
        offered = sorted(set(cpus) | set(mine[:2]))
        d.write_config({"availableResources": {"cpu": "cpuset:" + ",".join(
            str(c) for c in offered)},
            "reservedResources": {"cpu": "cpuset:%d" % mine[1]}})
        d.start()
        st = status(d)
        assert st["claims"] == 1 and st["containers"] == 1, st
        assert not glob.glob(state_path(d) + ".bad-*")
        out = d.output()
        assert "restoring the saved state: container big: " in out, out
        assert "it shares the root pool's CPUs" in out, out
        claims = d.admin("claims")["result"]
        assert cpulist(claims[0]["cpus"]) == set(cpus), claims
        finish(d)


def conflicting_start(d, grants, what):
    """Starts on saved grants whose claims cannot be reinstated: the
    daemon must exit 78 (no restart under systemd), name what conflicts
    and what to do, and leave every claim saved."""
    write_state(d, grants)
    with open(state_path(d), "rb") as f:
        before = f.read()
    rc = d.start(expect_ready=False)
    out = d.output()
    d.kill()
    assert rc == 78, (rc, out)
    for w in what + ["claim:<uid>", state_path(d)]:
        assert w in out, (w, out)
    # Nothing was dropped nor moved aside: the claims may be in use.
    with open(state_path(d), "rb") as f:
        assert f.read() == before
    assert not glob.glob(state_path(d) + ".bad-*")


def test_two_saved_claims_on_one_cpu_stop_for_good():
    with Daemon() as d:
        d.start()
        cpus, pool = node0_claim(d)
        finish(d)
        both = ",".join(str(c) for c in cpus)
        conflicting_start(d, {
            "claim:uid-1": {"kind": "claim", "cpus": str(cpus[1]),
                            "pool": pool["name"]},
            "claim:uid-2": {"kind": "claim", "cpus": both,
                            "pool": pool["name"]}},
            ["claims uid-1 and uid-2 both hold CPU %d" % cpus[1]])


def test_a_saved_claim_on_a_reserved_cpu_stops_for_good():
    with Daemon() as d:
        d.start()
        cpus, pool = node0_claim(d)
        finish(d)
        d.write_config({"reservedResources": {"cpu": "cpuset:%d" % cpus[0]}})
        conflicting_start(d, {
            "claim:uid-1": {"kind": "claim", "cpus": str(cpus[0]),
                            "pool": pool["name"]}},
            ["claim uid-1 holds CPU %d, which reservedResources.cpu "
             "reserves" % cpus[0]])


def test_corrupt_state_is_moved_aside():
    with Daemon() as d:
        os.makedirs(d.state_dir, mode=0o700)
        bad = b'{"version": 1, "grants": {"claim:x": {"kind": "cl'
        with open(state_path(d), "wb") as f:
            f.write(bad)
        d.start()
        st = status(d)
        assert st["claims"] == 0 and st["containers"] == 0
        moved = glob.glob(state_path(d) + ".bad-*")
        assert len(moved) == 1, moved
        with open(moved[0], "rb") as f:
            assert f.read() == bad
        assert os.path.basename(moved[0]) in d.output(), d.output()
        # A fresh, valid state replaced it.
        with open(state_path(d)) as f:
            assert json.load(f)["version"] == 3
        finish(d)


def test_future_version_state_is_moved_aside():
    with Daemon() as d:
        os.makedirs(d.state_dir, mode=0o700)
        with open(state_path(d), "w") as f:
            json.dump({"version": 99, "grants": {}}, f)
        d.start()
        assert status(d)["claims"] == 0
        assert len(glob.glob(state_path(d) + ".bad-*")) == 1
        finish(d)


if __name__ == "__main__":
    tap.run(globals())
