#!/usr/bin/python3
"""bench_nri: the daemon as the runtime sees it (SPEC R-PERF-1), run by
`make bench` and never by `make check`.

For each machine given as NAME=SYSFSROOT it runs the real topoawared with
the runtime simulator of the tests (t/lib/nri_runtime.py, Python framing
and python3-protobuf, so round trips include the simulator's own cost)
and prints one `name{machine="NAME"} value unit` line per figure:

  start_to_ready_ms         exec to READY=1 on NOTIFY_SOCKET (median of 5)
  rss_idle_kib              VmRSS once synchronized with no containers
  sync_1000_containers_ms   one Synchronize of 1,000 running containers
                            into a fresh daemon, until each is pinned
                            (median of 3)
  rss_loaded_kib            VmRSS with those 1,000 containers
  nri_create_p50_us         CreateContainer round trips on the loaded
  nri_create_p99_us         daemon (each followed by StopContainer)

Every create is saved to the state file before it is answered
(R-STATE-1), so the create figures include a synchronous fsync.
"""

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import main, report, report_latencies  # noqa: E402

CREATES = 500
CONTAINERS = 1000



def vmrss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


def populate(rt, n):
    """n running containers, two per pod: a few exclusive, kube-system
    ones on the reserved CPUs, the rest Burstable or BestEffort."""
    for i in range(n // 2):
        if i % 50 == 0:
            qos, req, lim = "Guaranteed", 1000, 1000
        elif i % 2:
            qos, req, lim = "Burstable", 20, 0
        else:
            qos, req, lim = "BestEffort", 0, 0
        ns = "kube-system" if i % 97 == 1 else "team-%d" % (i % 5)
        p = rt.make_pod("p%04d" % i, namespace=ns, qos=qos)
        for name in ("a", "b"):
            rt.add(p, rt.make_container(p, name, request=req, limit=lim))


def session(nri_runtime, root, work):
    folder = tempfile.mkdtemp(dir=work)
    return nri_runtime.Session(sysfs_root=root, folder=folder)


def bench_machine(name, root, work):
    import nri_runtime
    # Start-up: exec to READY=1, no runtime listening.
    times = []
    for _ in range(5):
        with session(nri_runtime, root, work) as s:
            t0 = time.perf_counter()
            s.d.start(timeout=60)
            times.append(time.perf_counter() - t0)
            s.stop()
    report("start_to_ready_ms", name, statistics.median(times) * 1000, "ms")

    # Synchronize of 1,000 containers into a fresh daemon.
    times = []
    for k in range(3):
        s = session(nri_runtime, root, work)
        try:
            s.start(serve=False)
            rt = s.rt
            rt.accept(timeout=30)
            if not rt.conn.registered.wait(10):
                raise RuntimeError("no registration")
            rt.configure()
            if k == 0:
                rt.synchronize(timeout=30)
                s.wait_status(lambda st: st["nri"]["synchronized"])
                report("rss_idle_kib", name, vmrss_kib(s.d.proc.pid),
                       "kib")
                rt.drop()
                populate(rt, CONTAINERS)
                rt.accept(timeout=30)
                if not rt.conn.registered.wait(10):
                    raise RuntimeError("no registration")
                rt.configure()
            else:
                populate(rt, CONTAINERS)
            t0 = time.perf_counter()
            rt.synchronize(timeout=60)
            # Updates that do not fit the reply follow as UpdateContainers.
            if not rt.wait_pushed(lambda p: all(
                    c.linux.resources.cpu.cpus
                    for c in rt.containers.values()), timeout=60):
                raise RuntimeError("not every container was pinned")
            times.append(time.perf_counter() - t0)
            if k < 2:
                s.stop()
                continue
            report("sync_1000_containers_ms", name,
                   statistics.median(times) * 1000, "ms")
            s.wait_status(lambda st: st["containers"] == CONTAINERS)
            report("rss_loaded_kib", name, vmrss_kib(s.d.proc.pid), "kib")

            # CreateContainer round trips on the loaded daemon.
            lat = []
            for i in range(CREATES):
                qos = ("Guaranteed", "Burstable", "BestEffort")[i % 3]
                req = 1000 if qos == "Guaranteed" else (
                    100 if qos == "Burstable" else 0)
                p = rt.make_pod("c%05d" % i, qos=qos)
                c = rt.make_container(p, "c", request=req,
                                      limit=req if qos == "Guaranteed"
                                      else 0)
                t0 = time.perf_counter()
                rt.create_container(p, c, timeout=10)
                lat.append(time.perf_counter() - t0)
                rt.stop_container(c.id, timeout=10)
                rt.remove_container(c.id, timeout=10)
                del rt.pods[p.id]
            report_latencies("nri_create", name, lat)
            s.stop()
        finally:
            s.rt.close()
            s.d.kill()


if __name__ == "__main__":
    main(__doc__.split("\n")[0], "nri", bench_machine)
