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

import os
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import main, report_latencies  # noqa: E402

ROUNDS = 200
WARMUP = 10



def bench_machine(name, root, work):
    import fake_apiserver
    import kubelet
    import nri_runtime

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
        report_latencies("dra_prepare", name, lat)
        k.close()
        s.stop()
    finally:
        k.close()
        s.rt.close()
        s.d.kill()
        api.stop()


if __name__ == "__main__":
    main(__doc__.split("\n")[0], "dra", bench_machine)
