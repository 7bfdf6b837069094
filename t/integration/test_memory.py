"""Memory accounted through the real daemon and the runtime simulator, on
the Go e2e machine n6 (a DRAM node per package, an HBM and a PMEM node
near each): memory limits and OOM score adjustments read from NRI,
widening that moves another container and tells the runtime, an
UpdateContainer that resizes, topoawarectl's memory columns, the
NodeResourceTopology-like pools, and zones kept across a restart."""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import statedoc  # noqa: E402
import tap  # noqa: E402
from nri_runtime import Session, kubelet_oom_adj, parse_cpuset  # noqa: E402

N6 = ("packages=2,cores=2,threads=2,mem=2G,memnodes=4,"
      "memnodesize=1G/1G/4G/4G,distances=10:21:15:30:60:70/"
      "21:10:30:15:70:60/15:30:10:35:62:72/30:15:35:10:72:62/"
      "60:70:62:72:10:75/70:60:72:62:75:10")
KEY = "memory-type.resource-policy.nri.io/container."
M = 10 ** 6


def session():
    return Session({}, sysfs_root=tap.mksysfs(N6, "n6"))


def guaranteed(s, name, types, mem, cpu=100):
    rt = s.rt
    ann = {KEY + "c": types} if types else {}
    p = rt.make_pod(name, qos="Guaranteed", annotations=ann)
    c = rt.make_container(p, "c", request=cpu, limit=cpu, mem_limit=mem,
                          oom_adj=-997)
    resp = rt.create_container(p, c)
    return c.id, resp


def mems(s, cid):
    return parse_cpuset(s.rt.containers[cid].linux.resources.cpu.mems)


def exports(s, cid, want, timeout=5):
    """The memory lines of cid's resources.sh (written after the answer:
    waited for), as {key: value}."""
    path = os.path.join(s.d.state_dir, "containers", cid, "resources.sh")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(path) as f:
                got = {k: v.strip('"') for k, v in
                       (ln.split("=", 1) for ln in f.read().splitlines()
                        if ln.endswith('"') and "MEMS" in ln)}
        except FileNotFoundError:
            got = None
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def grants(s):
    r = s.d.admin("grants")
    assert r["ok"], r
    return {g["id"]: g for g in r["result"] if "id" in g}


def ctl(s, *args):
    return subprocess.run([os.path.join(tap.builddir(), "topoawarectl"),
                           "--socket", s.d.admin_socket] + list(args),
                          capture_output=True, text=True, timeout=15)


def test_go_test01_through_nri():
    """pod1's 2816M containers one per package and type; pod2c0's 2G of
    PMEM fits no PMEM node and is spread over both; the daemon's grants
    and the runtime's memory nodes agree."""
    with session() as s:
        s.start()
        ids = {}
        for name, types in (("pod1c0", "hbm,dram"), ("pod1c1", "hbm,dram"),
                            ("pod1c2", "pmem"), ("pod1c3", "pmem")):
            ids[name], _ = guaranteed(s, name, types, 2816 * M)
        pmem = [mems(s, ids[n]) for n in ("pod1c2", "pod1c3")]
        assert sorted(pmem, key=min) == [{4}, {5}], pmem
        dh = [mems(s, ids[n]) for n in ("pod1c0", "pod1c1")]
        assert sorted(dh, key=min) == [{0, 2}, {1, 3}], dh
        cid, resp = guaranteed(s, "pod2c0", "pmem", 2000 * M)
        assert mems(s, cid) == {4, 5}
        assert len(resp.update) == 0, resp.update
        g = grants(s)
        assert g[cid]["memory"] == {"bytes": 2000 * M, "nodes": "4-5"}
        for name, c in ids.items():
            assert parse_cpuset(g[c]["memory"]["nodes"]) == mems(s, c)
            assert g[c]["memory"]["bytes"] == 2816 * M
        # topoawarectl grants: a MEMORY column with the bytes, 1024-based.
        r = ctl(s, "grants")
        assert r.returncode == 0, r.stderr
        rows = {line.split()[0]: line.split() for line in
                r.stdout.splitlines()[1:]}
        assert rows[cid][3] == "1.9G", rows[cid]
        s.stop()


def test_widening_and_resize_tell_the_runtime():
    """On one package (the other's CPUs all taken), 1/4 and then 7/8 of a
    DRAM node: the older, smaller one is spread over both DRAM nodes and
    the runtime gets its new memory nodes in the create's reply; an
    update that shrinks the big one leaves the spread one as it is
    (libmem never narrows); a Burstable container's request is read back
    from its OOM score adjustment."""
    with session() as s:
        s.start()
        rt, m = s.rt, s.machine
        cap = m.memory[0]
        guaranteed(s, "filler", None, 0, cpu=4000)
        small, _ = guaranteed(s, "small", "dram", cap // 4)
        assert len(mems(s, small)) == 1
        big, resp = guaranteed(s, "big", "dram", cap // 8 * 7)
        assert len(mems(s, big)) == 1
        updated = {u.container_id: parse_cpuset(u.linux.resources.cpu.mems)
                   for u in resp.update}
        assert updated.get(small) == {0, 1}, resp.update
        assert mems(s, small) == {0, 1}
        # Its resources.sh says so too (a file of its own now: its
        # memory is no longer its pool's).
        want = {"ALL_MEMS": "0-1", "DRAM_MEMS": "0-1"}
        assert exports(s, small, want) == want
        rt.update_container(big, 100, 100, mem_limit=cap // 8)
        g = grants(s)
        assert g[big]["memory"]["bytes"] == cap // 8
        assert parse_cpuset(g[small]["memory"]["nodes"]) == {0, 1}

        total = sum(m.memory.values())
        p = rt.make_pod("bu", qos="Burstable")
        c = rt.make_container(p, "c", request=100, limit=200,
                              mem_limit=total // 2,
                              oom_adj=kubelet_oom_adj("Burstable",
                                                      total // 20, total))
        rt.create_container(p, c)
        b = grants(s)[c.id]["memory"]["bytes"]
        assert total // 20 - total // 1000 <= b <= total // 20, (b, total)
        s.stop()


def test_zones_survive_a_restart():
    """A spread zone is saved: after a restart the daemon holds it as it
    was and tells the runtime nothing new; the pools show the memory
    taken."""
    with session() as s:
        s.start()
        cap = s.machine.memory[0]
        guaranteed(s, "filler", None, 0, cpu=4000)
        small, _ = guaranteed(s, "small", "dram", cap // 4)
        guaranteed(s, "big", "dram", cap // 8 * 7)
        before = grants(s)
        assert parse_cpuset(before[small]["memory"]["nodes"]) == {0, 1}
        s.d.stop()
        s.rt.drop()
        s.d.start()
        s.rt.serve()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        after = grants(s)
        for cid in before:
            assert after[cid].get("memory") == before[cid].get("memory"), \
                (cid, before[cid], after[cid])
        assert mems(s, small) == {0, 1}
        pools = {p["name"]: p for p in s.d.admin("pools")["result"]}
        dram = [p["memory"]["dram"] for p in pools.values()
                if "dram" in p.get("memory", {}) and
                p["memory"]["dram"]["total"] == 2 * cap]
        assert dram and all(d["free"] == 2 * cap - cap // 4 - cap // 8 * 7
                            for d in dram), pools
        s.stop()



# Go's coldstart_test machine: node 0 DRAM with the CPUs, node 1 PMEM.
COLD = "packages=1,cores=2,mem=2G,memnodes=1,memnodesize=8G"
COLD_KEY = "cold-start.resource-policy.nri.io/container.c"


def cold_container(s, name, duration):
    rt = s.rt
    p = rt.make_pod(name, qos="Guaranteed", annotations={
        KEY + "c": "pmem,dram", COLD_KEY: "duration: %s" % duration})
    c = rt.make_container(p, "c", request=1000, limit=1000,
                          mem_limit=256 << 20, oom_adj=-997)
    rt.create_container(p, c)
    return c.id


def pushed_mems(s, cid):
    """The memory nodes the runtime was last told for cid by a push."""
    got = None
    for req in s.rt.pushed:
        for u in req.update:
            if u.container_id == cid and u.linux.resources.cpu.mems:
                got = parse_cpuset(u.linux.resources.cpu.mems)
    return got


def cold_until(s, cid):
    return statedoc.read_state(s.d.state_dir)["grants"][cid]["coldStart"]


def test_cold_start_through_nri():
    """PMEM only until the container has run a second, then DRAM too,
    pushed to the runtime; saved as done, so a restart keeps DRAM."""
    with Session({}, sysfs_root=tap.mksysfs(COLD, "cold")) as s:
        s.start()
        cid = cold_container(s, "cs", "1s")
        assert mems(s, cid) == {1}
        assert cold_until(s, cid) == {"until": 0, "done": False}
        t0 = time.time()
        s.rt.start_container(cid)
        assert s.rt.wait_pushed(lambda p: pushed_mems(s, cid) == {0, 1},
                                timeout=15), s.rt.pushed
        # Not before its second (the deadline is whole ms, rounded up).
        assert time.time() - t0 >= 0.9
        assert mems(s, cid) == {0, 1}
        assert cold_until(s, cid)["done"] is True
        events = [e for _, e in statedoc.journal_events(s.d.state_dir)]
        assert any(e and e.get("op") == "start" and e.get("at", 0) > 0
                   for e in events), events
        assert any(e and e.get("op") == "time" for e in events), events
        s.d.stop()
        # Its start and the end of its cold start replay as recorded.
        r = subprocess.run([os.path.join(tap.builddir(), "topoaware-sim"),
                            "--sysfs-root", tap.mksysfs(COLD, "cold"),
                            "--replay", s.d.state_dir],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, (r.stdout, r.stderr)
        ops = [json.loads(ln).get("op") for ln in r.stdout.splitlines()]
        assert "start" in ops and "time" in ops, r.stdout
        s.rt.drop()
        s.d.start()
        s.rt.serve()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        g = grants(s)[cid]
        assert parse_cpuset(g["memory"]["nodes"]) == {0, 1}, g
        s.stop()


def test_cold_start_survives_a_restart():
    """A restart while the cold start runs neither loses its deadline nor
    starts it again: the saved deadline is the same after the restart,
    and DRAM comes then."""
    with Session({}, sysfs_root=tap.mksysfs(COLD, "cold")) as s:
        s.start()
        cid = cold_container(s, "cr", "3s")
        s.rt.start_container(cid)
        before = cold_until(s, cid)
        assert before["until"] > 0 and not before["done"], before
        s.d.stop()
        s.rt.drop()
        s.d.start()
        s.rt.serve()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        # The runtime says it runs: that is no new start.
        assert cold_until(s, cid) == before
        assert s.rt.wait_pushed(lambda p: pushed_mems(s, cid) == {0, 1},
                                timeout=15), s.rt.pushed
        assert time.time() * 1000 >= before["until"] - 50
        s.stop()


tap.run(globals())
