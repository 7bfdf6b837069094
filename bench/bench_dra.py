#!/usr/bin/python3
"""bench_dra: the daemon as the kubelet sees it (SPEC R-PERF-1), run by
`make bench` and never by `make check`.

For each machine given as NAME=SYSFSROOT it runs the real topoawared with
the runtime simulator of the tests synchronized (t/lib/nri_runtime.py),
the fake API server of the tests on the loopback (t/lib/fake_apiserver.py)
and the kubelet stand-in (t/lib/kubelet.py, Debian's python3-grpcio), and
prints one `name{machine="NAME"} value unit` line per figure:

  dra_prepare_p50_us    NodePrepareResources round trips of a claim of
  dra_prepare_p99_us    one CPU of the first NUMA node, each followed by
                        its NodeUnprepareResources

A prepare includes the daemon's GET of the claim from the API server, the
state file saved with a synchronous fsync and the CDI spec written before
the answer, so the figures include the fake server's and grpcio's own
costs.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
import uuid

ROUNDS = 200
WARMUP = 10


def report(metric, machine, value, unit):
    digits = 0 if value >= 100 else 3
    print('%s{machine="%s"} %.*f %s' % (metric, machine, digits, value,
                                         unit), flush=True)


def bench_machine(mods, name, root, work):
    nri_runtime, fake_apiserver, kubelet = mods

    folder = tempfile.mkdtemp(dir=work)
    api = fake_apiserver.FakeApiServer().start()
    api.set_node("testnode", str(uuid.uuid4()))
    kc = api.kubeconfig(folder)
    s = nri_runtime.Session(sysfs_root=root, folder=folder,
                            args=["--kubeconfig", kc])
    k = kubelet.Kubelet(os.path.join(folder, "kubelet"))
    try:
        s.start()
        s.wait_status(lambda st: st["nri"]["synchronized"], timeout=60)
        k.register(timeout=30)
        node = min(s.machine.nodes)
        lat = []
        for i in range(WARMUP + ROUNDS):
            uid = str(uuid.uuid4())
            cname = "bench-%d" % i
            api.set_claim("default", cname, kubelet.resource_claim(
                uid, [kubelet.result("cpudevnuma%03d" % node, 1)],
                name=cname))
            c = kubelet.Claim("default", cname, uid)
            t0 = time.perf_counter()
            got = k.prepare([c], timeout=30)
            t1 = time.perf_counter()
            if got.get(uid, {}).get("error") != "":
                raise RuntimeError("prepare failed: %r" % got)
            gone = k.unprepare([c], timeout=30)
            if gone != {uid: ""}:
                raise RuntimeError("unprepare failed: %r" % gone)
            if i >= WARMUP:
                lat.append(t1 - t0)
        lat.sort()
        report("dra_prepare_p50_us", name, lat[len(lat) // 2] * 1e6, "us")
        report("dra_prepare_p99_us", name,
               lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6, "us")
        k.close()
        s.stop()
    finally:
        k.close()
        s.rt.close()
        s.d.kill()
        api.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--srcdir", required=True)
    ap.add_argument("--builddir", required=True)
    ap.add_argument("machines", nargs="+", metavar="NAME=SYSFSROOT")
    args = ap.parse_args()

    srcdir = os.path.abspath(args.srcdir)
    work = tempfile.mkdtemp(prefix="topoaware-bench-dra.")
    os.environ["TOPOAWARE_SRCDIR"] = srcdir
    os.environ["TOPOAWARE_BUILDDIR"] = os.path.abspath(args.builddir)
    os.environ["TOPOAWARE_TMP"] = work
    sys.path.insert(0, os.path.join(srcdir, "t", "lib"))
    import fake_apiserver
    import kubelet
    import nri_runtime

    try:
        for m in args.machines:
            name, _, root = m.partition("=")
            if not root:
                ap.error("not NAME=SYSFSROOT: " + m)
            bench_machine((nri_runtime, fake_apiserver, kubelet), name,
                          os.path.abspath(root), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
