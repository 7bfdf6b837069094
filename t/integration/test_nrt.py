"""The NodeResourceTopology object (SPEC R-NRT, anchor 8, protocols.md 7.4
and 7.5) of the real daemon on the recorded server (CPUs 3 and 11
reserved) against the fake API server of t/lib: created at start with one
zone per pool, updated after containers and DRA claims take CPUs and after
they give them back, a burst of changes published once, a failing or
hanging API server only delaying it, the refresh timer restoring what
someone else changed, disabling by reload, and the status fields. The
expected numbers are counted from the recorded sysfs tree."""

import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from apienv import NODE, ApiEnv  # noqa: E402
from fake_apiserver import nrt_errors  # noqa: E402
from nri_runtime import parse_cpuset  # noqa: E402
from tap import wait_for  # noqa: E402

NRT = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"
RESERVED = {3, 11}
DEBOUNCE_MS = 100
# The pools of this machine in post-order (anchor 1.1) with their type,
# parent and NUMA nodes.
POOLS = [("NUMA node #0", "numa node", "socket #0", {0}),
         ("NUMA node #2", "numa node", "socket #0", {2}),
         ("socket #0", "socket", "root", {0, 2}),
         ("NUMA node #1", "numa node", "socket #1", {1}),
         ("NUMA node #3", "numa node", "socket #1", {3}),
         ("socket #1", "socket", "root", {1, 3}),
         ("root", "virtual node", None, {0, 1, 2, 3})]


def config(refresh=60, enabled=True):
    return {"reservedResources": {"cpu": "cpuset:3,11"},
            "nodeResourceTopology": {"enabled": enabled,
                                     "refreshSeconds": refresh}}


def milli(q):
    return int(q[:-1]) if q.endswith("m") else int(q) * 1000


def cpu(obj, zone, field="available"):
    for z in obj["zones"]:
        if z["name"] == zone:
            for r in z["resources"]:
                if r["name"] == "cpu":
                    return r[field]
    raise AssertionError("no cpu of zone %s" % zone)


class Env(ApiEnv):
    """The daemon with a runtime and a fake API server, torn down
    together."""

    def __init__(self, cfg=None, debounce=DEBOUNCE_MS, args=()):
        super().__init__(config() if cfg is None else cfg,
                         ["--nrt-debounce", str(debounce)] + list(args))
        self.m = self.s.machine

    def obj(self):
        return self.api.nrt(NODE)

    def requests(self, method=None):
        return self.api.recorded(method, NRT)

    def nrt_status(self):
        return self.s.status()["nrt"]

    def free_milli(self, nodes, taken=()):
        """1000 x the CPUs of the nodes that are neither isolated,
        reserved nor taken."""
        cpus = set()
        for n in nodes:
            cpus |= self.m.nodes[n]
        return 1000 * len(cpus - self.m.isolated - RESERVED - set(taken))

    def wait_root(self, want_milli, what):
        """Waits until the object's root zone has want_milli available."""
        def ok():
            o = self.obj()
            return o if o and milli(cpu(o, "root")) == want_milli else None
        return wait_for(ok, what)

    def guaranteed(self, name, cpus):
        """A Guaranteed container of whole CPUs; its exclusive CPUs."""
        p = self.rt.make_pod(name, qos="Guaranteed")
        c = self.rt.make_container(p, "c", request=1000 * cpus,
                                   limit=1000 * cpus)
        resp = self.rt.create_container(p, c)
        got = parse_cpuset(resp.adjust.linux.resources.cpu.cpus)
        assert len(got) == cpus, got
        return got


def check_zones(env, obj, taken=()):
    """Every zone as anchor 8 says, with taken CPUs not available and no
    shared grant anywhere."""
    assert nrt_errors(obj) == [], nrt_errors(obj)
    assert [z["name"] for z in obj["zones"]] == [p[0] for p in POOLS], obj
    for z, (name, typ, parent, nodes) in zip(obj["zones"], POOLS):
        assert z["type"] == typ, z
        assert z.get("parent") == parent, z
        cpus = set()
        for n in nodes:
            cpus |= env.m.nodes[n]
        # Isolated CPUs are left out of the capacity, reserved ones not.
        cap = 1000 * len(cpus - env.m.isolated)
        assert milli(cpu(obj, name, "capacity")) == cap, (name, z)
        assert milli(cpu(obj, name, "allocatable")) == cap, (name, z)
        assert milli(cpu(obj, name)) == env.free_milli(nodes, taken), \
            (name, z, sorted(taken))
        mem = [r for r in z["resources"] if r["name"] == "memory"]
        assert len(mem) == 1 and int(mem[0]["capacity"]) > 0, z
        attrs = {a["name"]: a["value"] for a in z["attributes"]}
        shared = cpus - env.m.isolated - RESERVED - set(taken)
        assert parse_cpuset(attrs["shared cpuset"]) == shared, (name, attrs)


def test_created_at_start():
    with Env() as env:
        env.start()
        obj = wait_for(env.obj, "the object")
        assert obj["apiVersion"] == "topology.node.k8s.io/v1alpha2", obj
        assert obj["kind"] == "NodeResourceTopology", obj
        assert obj["metadata"]["name"] == NODE, obj
        assert {"name": "TopologyPolicy", "value": "topology-aware"} in \
            obj["attributes"], obj
        check_zones(env, obj)
        assert cpu(obj, "root") == "102" and \
            cpu(obj, "root", "capacity") == "104", obj
        # Read first, then created under the node's name.
        reqs = env.requests()
        assert [r["method"] for r in reqs[:2]] == ["GET", "POST"], reqs
        assert reqs[0]["path"] == NRT + "/" + NODE, reqs[0]
        assert reqs[1]["path"] == NRT, reqs[1]
        st = wait_for(lambda: (lambda s: s if s["published"] else None)(
            env.nrt_status()), "published in status")
        assert st["enabled"] is True, st
        assert st["updates"] == 1, st
        assert st["lastError"] is None, st
        assert abs(st["lastPublished"] - time.time()) < 30, st
        env.stop()


def test_updated_after_containers():
    with Env() as env:
        env.start()
        wait_for(env.obj, "the object")
        excl = env.guaranteed("db", 2)
        obj = env.wait_root(env.free_milli(range(4), excl), "2 CPUs taken")
        check_zones(env, obj, excl)
        # A shared grant of one and a half CPUs: written in milli-CPUs.
        p = env.rt.make_pod("api", qos="Burstable")
        env.rt.create_container(p, env.rt.make_container(p, "c",
                                                         request=1500))
        want = env.free_milli(range(4), excl) - 1500
        obj = env.wait_root(want, "1500m shared")
        assert cpu(obj, "root") == "%dm" % want, obj
        assert nrt_errors(obj) == [], nrt_errors(obj)
        # Every write went through and is counted, none failed.
        writes = env.requests("PUT") + env.requests("POST")
        st = wait_for(lambda: (lambda s: s if s["updates"] == len(writes)
                               else None)(env.nrt_status()), "updates")
        assert st["lastError"] is None, st
        # Each PUT carried the resourceVersion the server had.
        for r in env.requests("PUT"):
            assert json.loads(r["body"])["metadata"]["resourceVersion"], r
        env.stop()


def test_burst_published_once():
    with Env(debounce=1500) as env:
        env.start()
        wait_for(lambda: env.nrt_status()["published"], "first publish")
        before = len(env.requests("PUT"))
        taken = set()
        # Two CPUs each: a single one would come from the isolated ones,
        # which are not in the object's CPUs.
        for i in range(3):
            taken |= env.guaranteed("g%d" % i, 2)
        assert not taken & env.m.isolated, taken
        env.wait_root(env.free_milli(range(4), taken), "6 CPUs taken")
        time.sleep(0.5)
        assert len(env.requests("PUT")) == before + 1, env.requests("PUT")
        env.stop()


def test_change_written_without_reading():
    """A change is written against what the server answered last, without
    reading the object first; another writer's change in between costs a
    conflict and a read, and nothing is lost."""
    with Env() as env:
        env.start()
        wait_for(lambda: env.nrt_status()["published"], "first publish")
        gets = len(env.requests("GET"))
        puts = len(env.requests("PUT"))
        excl = env.guaranteed("db", 2)
        env.wait_root(env.free_milli(range(4), excl), "2 CPUs taken")
        wait_for(lambda: len(env.requests("PUT")) == puts + 1, "its PUT")
        assert len(env.requests("GET")) == gets, env.requests()[-3:]
        st = wait_for(lambda: (lambda s: s if not s["lastError"] and
                               s["updates"] == 2 else None)(
            env.nrt_status()), "the write counted")

        # Another writer: our resourceVersion is stale, the server says
        # so, and the next change reads the object and writes again.
        other = dict(env.obj(), attributes=[{"name": "x", "value": "y"}])
        env.api.set_nrt(NODE, other)
        more = env.guaranteed("db2", 2)
        obj = env.wait_root(env.free_milli(range(4), excl | more),
                            "2 more CPUs taken")
        assert {"name": "TopologyPolicy", "value": "topology-aware"} in \
            obj["attributes"], obj
        reqs = [r["method"] for r in env.requests()]
        assert reqs[-3:] == ["PUT", "GET", "PUT"], reqs
        st = env.nrt_status()
        assert st["lastError"] is None, st

        # Deleted behind our back: the write finds nothing, reads, and
        # creates it again.
        env.api.set_nrt(NODE, None)
        posts = len(env.requests("POST"))
        third = env.guaranteed("db3", 2)
        env.wait_root(env.free_milli(range(4), excl | more | third),
                      "the object created again")
        assert len(env.requests("POST")) == posts + 1, env.requests()
        # Neither was a failure.
        st = env.nrt_status()
        assert st["lastError"] is None, st
        env.stop()


def test_unchanged_content_neither_read_nor_written():
    """Changes that leave the object as it was (a container created and
    removed in one debounce window) cost no request at all: the content
    is compared with what the last write sent."""
    with Env(debounce=1500) as env:
        env.start()
        wait_for(lambda: env.nrt_status()["published"], "first publish")
        time.sleep(2.0)
        n = len(env.requests())
        p = env.rt.make_pod("idle", qos="Burstable")
        c = env.rt.make_container(p, "c", request=500)
        env.rt.create_container(p, c)
        env.rt.remove_container(c.id)
        time.sleep(2.5)
        assert env.requests()[n:] == [], env.requests()[n:]
        # A change that shows is still written, and only written.
        p = env.rt.make_pod("busy", qos="Burstable")
        env.rt.create_container(p, env.rt.make_container(p, "c",
                                                         request=500))
        wait_for(lambda: len(env.requests()) > n, "the write", timeout=5)
        time.sleep(0.5)
        assert [r["method"] for r in env.requests()[n:]] == ["PUT"], \
            env.requests()[n:]
        st = env.nrt_status()
        assert st["lastError"] is None, st
        env.stop()


def test_failing_api_server_delays_it():
    with Env() as env:
        env.start()
        wait_for(lambda: env.nrt_status()["published"], "first publish")
        old = env.obj()
        env.api.fail_next(10000)
        excl = env.guaranteed("db", 2)
        st = wait_for(lambda: (lambda s: s if s["lastError"] else None)(
            env.nrt_status()), "the failure in status")
        assert NODE in st["lastError"], st
        first = st["lastError"]
        assert env.obj() == old
        env.api.fail_next(0)
        env.wait_root(env.free_milli(range(4), excl), "catching up")

        # A hanging server: the loop goes on, the newest content wins.
        env.api.hang(True)
        try:
            more = env.guaranteed("db2", 2)
            t0 = time.monotonic()
            assert env.s.status()["containers"] == 2
            assert time.monotonic() - t0 < 2.0, "the loop was blocked"
            more |= env.guaranteed("db3", 2)
            # Longer than both attempts of a request: the chain fails.
            time.sleep(2.5)
            st = env.nrt_status()
            assert st["lastError"] and st["lastError"] != first, st
        finally:
            env.api.hang(False)
        obj = env.wait_root(env.free_milli(range(4), excl | more),
                            "catching up after the hang")
        check_zones(env, obj, excl | more)
        # Each failed publication is counted once.
        text = env.s.d.admin("metrics")["result"]["text"]
        m = re.search(r'^topoaware_errors_total\{kind="nrt"\} (\d+)$', text,
                      re.M)
        assert m and int(m.group(1)) >= 2, text
        env.stop()


def test_refresh_restores_the_object():
    with Env(config(refresh=1)) as env:
        env.start()
        wait_for(lambda: env.nrt_status()["published"], "first publish")
        good = env.obj()
        # Nothing changed: the refresh reads but does not write.
        writes = len(env.requests("PUT")) + len(env.requests("POST"))
        gets = len(env.requests("GET"))
        time.sleep(2.5)
        assert len(env.requests("PUT")) + len(env.requests("POST")) == \
            writes, env.requests()
        assert len(env.requests("GET")) >= gets + 1, env.requests()

        # Someone else's change is overwritten by the next refresh.
        bad = dict(good, zones=[])
        env.api.set_nrt(NODE, bad)
        obj = wait_for(lambda: (lambda o: o if o and o["zones"] else None)(
            env.obj()), "the zones back", timeout=5)
        assert obj["zones"] == good["zones"], obj
        # Deleted: created again.
        posts = len(env.requests("POST"))
        env.api.set_nrt(NODE, None)
        obj = wait_for(env.obj, "the object back", timeout=5)
        assert obj["zones"] == good["zones"], obj
        assert len(env.requests("POST")) == posts + 1
        env.stop()


def test_disabled_by_reload():
    with Env(config(refresh=1)) as env:
        env.start()
        wait_for(lambda: env.nrt_status()["published"], "first publish")
        env.s.d.write_config(config(refresh=1, enabled=False))
        assert env.s.d.admin("reload")["ok"]
        wait_for(lambda: env.nrt_status()["enabled"] is False, "disabled")
        time.sleep(0.3)
        n = len(env.requests())
        old = env.obj()
        excl = env.guaranteed("db", 2)
        time.sleep(1.5)         # past the debounce and the refresh
        assert len(env.requests()) == n, env.requests()[n:]
        assert env.obj() == old
        # Enabled again: the newest content goes out.
        env.s.d.write_config(config(refresh=1))
        assert env.s.d.admin("reload")["ok"]
        env.wait_root(env.free_milli(range(4), excl), "enabled again")
        assert env.nrt_status()["enabled"] is True
        env.stop()


def test_claim_and_release():
    try:
        import kubelet
        from draenv import cdi_env, dev, new_uid
    except ImportError as e:
        raise tap.Skip("no kubelet stand-in: %s" % e)
    with Env() as env:
        env.start()
        wait_for(lambda: env.nrt_status()["published"], "first publish")
        k = kubelet.Kubelet(os.path.join(env.folder, "kubelet"))
        try:
            k.register()
            uid = new_uid()
            env.api.set_claim("default", "c1", kubelet.resource_claim(
                uid, [kubelet.result(dev(1), 2)], name="c1"))
            c = kubelet.Claim("default", "c1", uid)
            got = k.prepare([c], timeout=20)
            assert got[uid]["error"] == "", got
            _, value = cdi_env(os.path.join(env.folder, "cdi"), uid)
            held = parse_cpuset(value)
            assert len(held) == 2 and held <= env.m.nodes[1], held
            obj = env.wait_root(env.free_milli(range(4), held),
                                "the claim's CPUs taken")
            check_zones(env, obj, held)
            assert milli(cpu(obj, "NUMA node #1")) == \
                env.free_milli([1]) - 2000, obj
            k.unprepare([c], timeout=20)
            obj = env.wait_root(env.free_milli(range(4)), "given back")
            check_zones(env, obj)
        finally:
            k.close()
        env.stop()


tap.run(globals())
