"""The pod annotations of the Go policy through NRI (one case each): what
the runtime is told when a pod asks for an unlimited-burstable level, to
have its CPUs left alone, for high-priority CPUs on a hybrid machine, or
for isolated CPUs at two scopes. The expected values come from the
machines' layouts, not from the daemon."""

import os
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from nri_runtime import Session, parse_cpuset  # noqa: E402

NS = "resource-policy.nri.io"
RESERVED = {3, 11}
CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"}}


def cpu_of(resp):
    return resp.adjust.linux.resources.cpu


def grant(s, cid):
    r = s.d.admin("grants")
    assert r.get("ok"), r
    for g in r["result"]:
        if g.get("id") == cid:
            return g
    raise AssertionError("no grant of %s in %r" % (cid, r))


def test_unlimited_burstable_by_container():
    """Burstable without a limit goes to the config's level (a socket on
    server, by default); the container-scoped annotation asks for a NUMA
    node instead, for that container only."""
    with Session(CONFIG) as s:
        s.start()
        m, rt = s.machine, s.rt
        pod = rt.make_pod("ub", qos="Burstable", annotations={
            "unlimited-burstable.%s/container.narrow" % NS: "numa"})
        narrow = cpu_of(rt.create_container(
            pod, rt.make_container(pod, "narrow", request=100)))
        wide = cpu_of(rt.create_container(
            pod, rt.make_container(pod, "wide", request=100)))
        assert len(m.nodes_of(parse_cpuset(narrow.cpus))) == 1, narrow.cpus
        assert len(m.nodes_of(parse_cpuset(wide.cpus))) > 1, wide.cpus
        assert grant(s, "pod-ub-narrow")["pool"].startswith("NUMA node")
        s.stop()


def test_cpu_preserve_leaves_the_cpus_alone():
    with Session(CONFIG) as s:
        s.start()
        rt = s.rt
        pod = rt.make_pod("keep", qos="Guaranteed",
                          annotations={"cpu.preserve.%s" % NS: "true"})
        ctr = rt.make_container(pod, "keep", request=2000, limit=2000)
        cpu = cpu_of(rt.create_container(pod, ctr))
        assert cpu.cpus == "", "told CPUs %r" % cpu.cpus
        g = grant(s, ctr.id)
        assert g["cpus"] is None, g
        # It took nothing: a 2-CPU container after it gets a whole core
        # of CPUs nobody else holds, and the preserved one is not moved.
        other = rt.make_pod("other", qos="Guaranteed")
        oc = rt.make_container(other, "other", request=2000, limit=2000)
        assert len(parse_cpuset(cpu_of(rt.create_container(other, oc)).cpus)) \
            == 2
        assert grant(s, ctr.id)["cpus"] is None
        s.stop()


def test_high_priority_on_a_hybrid_machine():
    """n4c16 with P-cores {0,1} and {4,5}, the rest E-cores, 750m reserved
    (CPU 0): the containers of one pod asking for high priority get
    P-cores."""
    root = tap.mksysfs("packages=2,nodes=2,cores=2,threads=2,"
                       "numbering=adjacent,mem=2G,ecpus=2-3,6-15", "hybrid")
    config = {"reservedResources": {"cpu": "750m"},
              "preferIsolatedCPUs": False}
    with Session(config, sysfs_root=root) as s:
        s.start()
        rt = s.rt
        pod = rt.make_pod("h", qos="Guaranteed", annotations={
            "prefer-cpu-priority.%s/container.c0" % NS: "high",
            "prefer-cpu-priority.%s/container.c2" % NS: "high"})
        got = {}
        for name in ("c0", "c1", "c2"):
            ctr = rt.make_container(pod, name, request=1000, limit=1000)
            got[name] = parse_cpuset(cpu_of(rt.create_container(pod,
                                                                ctr)).cpus)
            assert len(got[name]) == 1, got
        perf = {0, 1, 4, 5}
        assert got["c0"] <= perf and got["c2"] <= perf, got
        s.stop()


def test_isolation_by_scope():
    """No isolated CPUs: a pod-wide require would refuse the container,
    but the container-scoped prefer is narrower and wins."""
    root = tap.n4c16()
    with Session({"reservedResources": {"cpu": "cpuset:15"}},
                 sysfs_root=root) as s:
        s.start()
        rt = s.rt
        pod = rt.make_pod("iso", qos="Guaranteed", annotations={
            "require-isolated-cpus.%s/pod" % NS: "true",
            "prefer-isolated-cpus.%s/container.soft" % NS: "true"})
        soft = rt.make_container(pod, "soft", request=1000, limit=1000)
        assert len(parse_cpuset(cpu_of(rt.create_container(pod,
                                                           soft)).cpus)) == 1
        hard = rt.make_container(pod, "hard", request=1000, limit=1000)
        try:
            rt.create_container(pod, hard)
        except Exception as e:  # the refusal comes back as a call error
            assert "isolated" in str(e), e
        else:
            raise AssertionError("a required isolated CPU was granted on a "
                                 "machine without any")
        s.stop()


tap.run(globals())
