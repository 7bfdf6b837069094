"""The pod annotations of the Go policy through NRI (one case each): what
the runtime is told when a pod asks for an unlimited-burstable level, to
have its CPUs left alone, for high-priority CPUs on a hybrid machine, or
for isolated CPUs at two scopes, or to be near the containers of another
pod (affinity, across a restart) and what a bad affinity gets. The
expected values come from the machines' layouts, not from the daemon."""

import os
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from nri_runtime import CallError, Session, parse_cpuset  # noqa: E402

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


WEB_AFFINITY = """web:
- scope: {operator: AlwaysTrue}
  match: {key: pod/labels/app, operator: In, values: [db]}
  weight: 5
"""


def node_of(s, resp):
    nodes = s.machine.nodes_of(parse_cpuset(cpu_of(resp).cpus))
    assert len(nodes) == 1, nodes
    return nodes.pop()


def test_affinity_to_another_pods_label_survives_a_restart():
    """web is drawn to the NUMA node of the pod labelled app=db, where a
    container without the annotation would not go; after a SIGKILL and a
    restart (the labels come back from the saved state, not from a
    create), a second web is drawn there too."""
    with Session(CONFIG) as s:
        s.start()
        rt = s.rt
        db = rt.make_pod("db", qos="Guaranteed", labels={"app": "db"})
        dbc = rt.make_container(db, "db", request=2000, limit=2000)
        home = node_of(s, rt.create_container(db, dbc))
        # Where a 2-CPU container without affinity goes now: elsewhere.
        plain = rt.make_pod("plain", qos="Guaranteed")
        pc = rt.make_container(plain, "web", request=2000, limit=2000)
        assert node_of(s, rt.create_container(plain, pc)) != home
        rt.remove_container(pc.id)
        web = rt.make_pod("web", qos="Guaranteed", annotations={
            "%s/affinity" % NS: WEB_AFFINITY})
        wc = rt.make_container(web, "web", request=2000, limit=2000)
        assert node_of(s, rt.create_container(web, wc)) == home
        s.d.kill()
        s.rt.drop()
        s.d.start()
        s.rt.serve()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        # The plain one shows the pull still matters...
        pc2 = rt.make_container(plain, "web2", request=2000, limit=2000)
        assert node_of(s, rt.create_container(plain, pc2)) != home
        rt.remove_container(pc2.id)
        # ...and it is still there after the restart.
        wc2 = rt.make_container(web, "web", request=2000, limit=2000,
                                cid="pod-web-web-2")
        assert node_of(s, rt.create_container(web, wc2)) == home
        s.stop()


def test_bad_affinity_is_refused_with_its_position():
    with Session(CONFIG) as s:
        s.start()
        rt = s.rt
        pod = rt.make_pod("bad", annotations={
            "%s/anti-affinity" % NS: "c:\n- match: {key: name, "
                                     "operator: Equal, values: [x]}\n"})
        try:
            rt.create_container(pod, rt.make_container(pod, "c"))
        except CallError as e:
            assert "line 2, column 32" in e.message, e.message
            assert "unknown operator" in e.message, e.message
        else:
            raise AssertionError("a bad anti-affinity was accepted")
        assert grant_of(s, "pod-bad-c") is None
        s.stop()


def grant_of(s, cid):
    r = s.d.admin("grants")
    assert r.get("ok"), r
    return next((g for g in r["result"] if g.get("id") == cid), None)


tap.run(globals())
