"""Synchronize and pushed updates (SPEC R-NRI, R-POOL-4, R-CONF-2): a
Synchronize of 1,000 containers split in parts with `more` gives every
container a pinning in the last reply; a reload that reserves more CPUs
moves shared containers through UpdateContainers, sent without waiting
for the runtime (protocols.md 9.4: the simulator holds its NRI lock, as
containerd does, and the daemon keeps serving meanwhile); updates the
runtime reports failed are counted."""

import json
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from nri_runtime import Session, parse_cpuset  # noqa: E402

RESERVED = {3, 11}
CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"}}


def test_split_sync_of_1000_containers():
    with Session(CONFIG) as s:
        rt, m = s.rt, s.machine
        guaranteed = set()
        # 500 pods of two containers: a few exclusive ones, the rest share.
        for i in range(500):
            if i % 50 == 0:
                qos, req, lim = "Guaranteed", 1000, 1000
            elif i % 2:
                qos, req, lim = "Burstable", 20, 0
            else:
                qos, req, lim = "BestEffort", 0, 0
            ns = "kube-system" if i % 97 == 1 else "team-%d" % (i % 5)
            p = rt.make_pod("p%03d" % i, namespace=ns, qos=qos)
            for name in ("a", "b"):
                c = rt.make_container(p, name, request=req, limit=lim)
                rt.add(p, c)
                if qos == "Guaranteed" and ns != "kube-system":
                    guaranteed.add(c.id)
        assert len(rt.containers) == 1000
        replies = s.start(split=128, sync_timeout=20)
        assert len(replies) == 8, len(replies)
        # The simulator refuses intermediate replies without `more` or
        # with updates; the last one pins everybody.
        assert not replies[-1].more
        got = {u.container_id: u for u in replies[-1].update}
        assert set(got) == set(rt.containers), len(got)
        taken = set()
        for cid, u in got.items():
            assert u.linux.resources.cpu.mems, u
            if cid in guaranteed:
                cpus = parse_cpuset(u.linux.resources.cpu.cpus)
                # One whole CPU: isolated ones are preferred (R-POOL-2).
                assert len(cpus) == 1 and cpus <= m.online - RESERVED, \
                    (cid, cpus)
                assert not cpus & taken, (cid, cpus, taken)
                taken |= cpus
        assert taken & m.isolated, (taken, m.isolated)
        shareable = m.online - m.isolated - RESERVED - taken
        for cid, u in got.items():
            cpus = parse_cpuset(u.linux.resources.cpu.cpus)
            if rt.pods[rt.containers[cid].pod_sandbox_id].namespace == \
                    "kube-system":
                assert cpus == RESERVED, (cid, cpus)
            elif cid not in guaranteed:
                assert cpus and cpus <= shareable, (cid, cpus)
        st = s.wait_status(lambda st: st["nri"]["synchronized"])
        assert st["containers"] == 1000, st
        # Each part was unpacked for the fields read, none by protobuf-c
        # whole (pbpick.c).
        metrics = s.d.admin("metrics")["result"]["text"]
        assert "topoaware_nri_syncs_unpacked_whole_total 0\n" in metrics, \
            metrics
        assert "topoaware_nri_syncs_total 1\n" in metrics, metrics
        s.stop()


def test_reload_pushes_updates_without_deadlock():
    with Session(CONFIG) as s:
        s.start()
        rt, m = s.rt, s.machine
        ids = rt.create_shared(6)
        before = {i: parse_cpuset(rt.cpus(i)) for i in ids}
        # Reserve one more CPU that some shared container runs on.
        used = set().union(*before.values())
        extra = min(used)
        moved = {i for i, cpus in before.items() if extra in cpus}
        reserved = sorted(RESERVED | {extra})
        s.d.write_config({"reservedResources": {
            "cpu": "cpuset:" + ",".join(map(str, reserved))}})

        # The runtime is busy with an event of its own: the lock is held,
        # so UpdateContainers waits unanswered. The daemon must not.
        rt.lock.acquire()
        try:
            r = s.d.admin("reload")
            assert r["ok"], r
            assert rt.wait_pushed(lambda p: len(p) >= 1, timeout=10,
                                  arrived=True), "no UpdateContainers"
            assert not rt.pushed
            st = s.status()
            assert st["lastReload"]["ok"], st
            assert st["nri"]["connected"], st
        finally:
            rt.lock.release()
        want = lambda p: {u.container_id for r in p  # noqa: E731
                          for u in r.update} >= moved
        assert rt.wait_pushed(want), (rt.pushed, moved)
        for i in ids:
            cpus = parse_cpuset(rt.cpus(i))
            assert extra not in cpus, (i, cpus)
            if i not in moved:
                assert cpus == before[i], (i, cpus, before[i])
        # Every container moved once, and only those moved.
        pushed = [u.container_id for r in rt.pushed for u in r.update]
        assert sorted(pushed) == sorted(moved), (pushed, moved)
        # Events still flow on the same connection.
        p = rt.make_pod("after", qos="BestEffort")
        resp = rt.create_container(p, rt.make_container(p, "c"))
        assert extra not in parse_cpuset(resp.adjust.linux.resources.cpu
                                         .cpus)
        s.stop()


def test_failed_updates_are_counted():
    with Session({"reservedResources": {"cpu": "cpuset:3,11"},
                  "unlimitedBurstable": "system"}) as s:
        s.start()
        rt = s.rt
        p = rt.make_pod("web", qos="Burstable")
        c = rt.make_container(p, "c", request=100)
        rt.create_container(p, c)
        rt.fail_updates.add(c.id)
        # A claim-free way to move it: reserve another CPU.
        extra = min(parse_cpuset(rt.cpus(c.id)))
        s.d.write_config({"reservedResources": {"cpu": "cpuset:3,11,%d"
                                                % extra},
                          "unlimitedBurstable": "system"})
        assert s.d.admin("reload")["ok"]
        assert rt.wait_pushed(lambda p: len(p) == 1)
        st = s.wait_status(lambda st: st["nri"]["failedUpdates"] == 1)
        assert st["nri"]["connected"], st
        metrics = s.d.admin("metrics")["result"]["text"]
        assert "nri_update_failures" in metrics, metrics
        s.stop()


def test_reload_by_sighup_pushes_too():
    with Session(CONFIG) as s:
        s.start()
        rt = s.rt
        p = rt.make_pod("web", qos="BestEffort")
        c = rt.make_container(p, "c")
        rt.create_container(p, c)
        extra = min(parse_cpuset(rt.cpus(c.id)))
        s.d.write_config({"reservedResources": {"cpu": "cpuset:3,11,%d"
                                                % extra}})
        import signal
        s.d.signal(signal.SIGHUP)
        assert rt.wait_pushed(lambda p: any(
            u.container_id == c.id for r in p for u in r.update)), rt.pushed
        assert extra not in parse_cpuset(rt.cpus(c.id))
        s.stop()


def test_concurrent_events_and_pushes():
    """Events from several threads of the runtime while reloads push:
    every event is answered, nothing hangs."""
    with Session(CONFIG) as s:
        s.start()
        rt = s.rt
        errors = []

        def worker(k):
            try:
                for i in range(20):
                    p = rt.make_pod("t%d-%d" % (k, i), qos="BestEffort")
                    c = rt.make_container(p, "c")
                    rt.create_container(p, c)
                    rt.stop_container(c.id)
                    rt.remove_container(c.id)
            except Exception as e:  # reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(k,))
                   for k in range(3)]
        for t in threads:
            t.start()
        for extra in (15, 19, 23):
            s.d.write_config({"reservedResources": {
                "cpu": "cpuset:3,11,%d" % extra}})
            assert s.d.admin("reload")["ok"]
        for t in threads:
            t.join(60)
        assert not errors, errors
        st = s.wait_status(lambda st: st["containers"] == 0)
        assert st["nri"]["connected"], json.dumps(st)
        s.stop()


def long_cpusets_machine():
    """1,024 CPUs with even ids only: every shared cpuset is written as
    about 5 KB of single ids, so 1,000 updates are over the 4 MiB a
    ttrpc message may hold."""
    root = os.path.join(tap.tmpdir(), "sparse1024")
    subprocess.run([os.path.join(tap.builddir(), "topoaware-mksysfs"),
                    "packages=1,nodes=1,cores=1024,threads=1,sparse=2",
                    root], check=True, stdout=subprocess.DEVNULL,
                   timeout=60)
    return root


def test_updates_over_4mib_are_split():
    with Session({}, sysfs_root=long_cpusets_machine()) as s:
        rt, m = s.rt, s.machine
        for i in range(1000):
            p = rt.make_pod("p%04d" % i, qos="BestEffort")
            rt.add(p, rt.make_container(p, "c"))
        replies = s.start(sync_timeout=20)
        # The reply holds what fits; the rest follows in UpdateContainers
        # (the simulator records any message over 4 MiB as a violation).
        n = len(replies[-1].update)
        assert 0 < n < 1000, n
        ids = set(rt.containers)
        assert rt.wait_pushed(lambda p: {u.container_id for r in p
                                         for u in r.update} |
                              {u.container_id for u in
                               replies[-1].update} >= ids, timeout=20)
        for cid in ids:
            assert len(parse_cpuset(rt.cpus(cid))) > 500, cid

        # An exclusive CPU moves all of them: the CreateContainer reply
        # carries what fits, the rest is pushed.
        pushed = len(rt.pushed)
        g = rt.make_pod("db", qos="Guaranteed")
        resp = rt.create_container(g, rt.make_container(
            g, "db", request=1000, limit=1000), timeout=20)
        excl = parse_cpuset(resp.adjust.linux.resources.cpu.cpus)
        assert len(excl) == 1 and excl <= m.online, excl
        assert 0 < len(resp.update) < 1000, len(resp.update)
        assert rt.wait_pushed(lambda p: len(p) > pushed, timeout=20)
        for cid in ids:
            assert rt.wait_pushed(
                lambda p: not parse_cpuset(rt.cpus(cid)) & excl,
                timeout=20), cid
        s.stop()


tap.run(globals())
