"""The NRI plugin against a runtime simulator (t/lib/nri_runtime.py) that
speaks the multiplexer and ttrpc with its own Python framing (SPEC R-NRI,
R-POOL-2, R-POOL-3, R-POOL-4): registration and the event mask, pinning
by QoS class on the recorded server (reserved CPUs 3 and 11), the shared
containers moved when an exclusive one comes and goes, the events as
StateChange, updates of a container's resources, refusals, and methods
the plugin does not implement."""

import os
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import nri_runtime  # noqa: E402
import tap  # noqa: E402
from nri_runtime import CallError, Session, event_bit, parse_cpuset  # noqa

RESERVED = {3, 11}
CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"}}
# Burstable without a limit on the root pool: it shares every shared CPU,
# so an exclusive grant anywhere must move it.
CONFIG_ROOT = {"reservedResources": {"cpu": "cpuset:3,11"},
               "unlimitedBurstable": "system"}


def adjusted(resp):
    return resp.adjust.linux.resources.cpu


def cpus_of(cpu):
    return parse_cpuset(cpu.cpus)


def test_registers_and_subscribes():
    with Session(CONFIG) as s:
        s.start()
        reg = s.rt.conn.register_request
        assert reg.plugin_name == "topoaware", reg
        assert reg.plugin_idx == "90", reg
        mask = s.rt.configure_response.events
        # protocols.md 2.5: within 0x7FF, and the events a policy needs.
        assert mask != 0 and mask & ~0x7FF == 0, hex(mask)
        for ev in ("CREATE_CONTAINER", "UPDATE_CONTAINER", "STOP_CONTAINER",
                   "REMOVE_CONTAINER", "REMOVE_POD_SANDBOX"):
            assert mask & event_bit(ev), (ev, hex(mask))
        nri = s.wait_status(lambda st: st["nri"]["synchronized"])["nri"]
        assert nri["connected"] and nri["registered"], nri
        assert nri["error"] is None, nri
        s.stop()


def test_pinning_by_qos():
    with Session(CONFIG) as s:
        s.start()
        m, rt = s.machine, s.rt
        shareable = m.online - RESERVED - m.isolated

        g = rt.make_pod("db", qos="Guaranteed")
        gc = rt.make_container(g, "db", request=2000, limit=2000)
        cpu = adjusted(rt.create_container(g, gc))
        excl = cpus_of(cpu)
        # Two whole CPUs from an idle machine: the two threads of one core.
        assert len(excl) == 2 and m.is_whole_cores(excl), cpu.cpus
        assert not excl & RESERVED and not excl & m.isolated, cpu.cpus
        assert parse_cpuset(cpu.mems) == m.default_mems(excl), cpu.mems
        assert cpu.shares.value == 2048, cpu

        be = rt.make_pod("web", qos="BestEffort")
        bc = rt.make_container(be, "web")
        cpu = adjusted(rt.create_container(be, bc))
        shared = cpus_of(cpu)
        assert shared and shared <= shareable, cpu.cpus
        assert not shared & excl, (cpu.cpus, excl)
        assert parse_cpuset(cpu.mems) == m.default_mems(shared), cpu.mems
        assert cpu.shares.value == 2, cpu

        bu = rt.make_pod("api", qos="Burstable")
        uc = rt.make_container(bu, "api", request=500, limit=1000)
        cpu = adjusted(rt.create_container(bu, uc))
        shared = cpus_of(cpu)
        assert shared and shared <= shareable and not shared & excl, cpu.cpus
        assert cpu.shares.value == 500 * 1024 // 1000, cpu

        ks = rt.make_pod("coredns", namespace="kube-system", qos="Burstable")
        kc = rt.make_container(ks, "coredns", request=100)
        cpu = adjusted(rt.create_container(ks, kc))
        assert cpus_of(cpu) == RESERVED, cpu.cpus
        # Reserved CPUs belong to the root pool: every node with CPUs and,
        # by the Go policy's default memory types (DRAM and PMEM), the
        # CPU-less PMEM nodes 4 and 5 of this machine.
        assert parse_cpuset(cpu.mems) == m.default_mems(m.online), cpu.mems
        assert m.default_mems(m.online) > set(m.nodes), m.mem_type

        # The applied cpusets are what the daemon reports as grants.
        grants = {gr["id"]: gr for gr in s.d.admin("grants")["result"]
                  if "id" in gr}
        for c in (gc, bc, uc, kc):
            assert parse_cpuset(grants[c.id]["cpus"]) == \
                parse_cpuset(rt.cpus(c.id)), (c.id, grants[c.id])
        s.stop()


def shared_set(s, n):
    """BestEffort containers plus one unlimited Burstable one (which
    shares the root pool); returns {id: cpus}."""
    rt = s.rt
    ids = []
    for i in range(n):
        p = rt.make_pod("be%d" % i, qos="BestEffort")
        c = rt.make_container(p, "c")
        rt.create_container(p, c)
        ids.append(c.id)
    p = rt.make_pod("burst", qos="Burstable")
    c = rt.make_container(p, "c", request=250)
    rt.create_container(p, c)
    ids.append(c.id)
    return {i: parse_cpuset(rt.cpus(i)) for i in ids}


def test_shared_moved_by_exclusive():
    with Session(CONFIG_ROOT) as s:
        s.start()
        rt = s.rt
        before = shared_set(s, 4)

        g = rt.make_pod("db", qos="Guaranteed")
        gc = rt.make_container(g, "db", request=2000, limit=2000)
        resp = rt.create_container(g, gc)
        excl = cpus_of(adjusted(resp))
        hit = {i for i, cpus in before.items() if cpus & excl}
        assert hit, ("an unlimited Burstable on the root shares every "
                     "CPU", before, excl)
        # R-POOL-4: exactly one update for each container that moved.
        got = [u.container_id for u in resp.update]
        assert sorted(got) == sorted(hit), (got, hit)
        for u in resp.update:
            cpus = parse_cpuset(u.linux.resources.cpu.cpus)
            assert cpus == before[u.container_id] - excl, (u, excl)
        assert not rt.pushed, "updates belong in the reply"

        # Leaving gives the CPUs back, in the StopContainer reply.
        resp = rt.stop_container(gc.id)
        got = sorted(u.container_id for u in resp.update)
        assert got == sorted(hit), (got, hit)
        for i, cpus in before.items():
            assert parse_cpuset(rt.cpus(i)) == cpus, (i, rt.cpus(i), cpus)
        # Removing the stopped container changes nothing more.
        rt.remove_container(gc.id)
        rt.remove_pod(g.id)
        assert s.wait_status(lambda st: st["containers"] == len(before))
        assert not rt.pushed, rt.pushed
        s.stop()


def test_events_as_state_change():
    with Session(CONFIG_ROOT) as s:
        s.start()
        rt = s.rt
        before = shared_set(s, 2)
        pods = []
        for name in ("a", "b"):
            g = rt.make_pod(name, qos="Guaranteed")
            gc = rt.make_container(g, "c", request=2000, limit=2000)
            rt.create_container(g, gc)
            pods.append((g, gc, cpus_of(rt.adjustments[-1][1].linux
                                        .resources.cpu)))

        # A pre-v0.12 runtime: StopContainer's sibling events arrive as
        # StateChange, whose reply is empty: the moves are pushed.
        g, gc, excl = pods[0]
        rt.stop_container(gc.id, state_change=True)
        rt.remove_container(gc.id, state_change=True)
        want = {i for i, cpus in before.items() if cpus & excl}
        assert rt.wait_pushed(lambda p: {u.container_id for r in p
                                         for u in r.update} >= want), \
            (rt.pushed, want)
        # RemovePodSandbox as StateChange releases what the pod still had.
        g, gc, excl = pods[1]
        n = len(rt.pushed)
        rt.remove_pod(g.id, state_change=True)
        assert rt.wait_pushed(lambda p: len(p) > n), rt.pushed
        assert s.wait_status(lambda st: st["containers"] == len(before))
        for i, cpus in before.items():
            assert rt.wait_pushed(
                lambda p: parse_cpuset(rt.cpus(i)) == cpus), \
                (i, rt.cpus(i), cpus)
        s.stop()


def test_remove_pod_sandbox_dedicated():
    with Session(CONFIG_ROOT) as s:
        s.start()
        rt = s.rt
        before = shared_set(s, 1)
        g = rt.make_pod("pair", qos="Guaranteed")
        for name in ("x", "y"):
            rt.create_container(g, rt.make_container(
                g, name, request=1000, limit=1000))
        assert s.status()["containers"] == len(before) + 2
        rt.remove_pod(g.id)
        st = s.wait_status(lambda st: st["containers"] == len(before))
        assert st["nri"]["connected"], st
        for i, cpus in before.items():
            assert rt.wait_pushed(
                lambda p: parse_cpuset(rt.cpus(i)) == cpus), \
                (i, rt.cpus(i), cpus)
        s.stop()


def test_remove_pod_sandbox_after_a_resync():
    """RemovePodSandbox releases the containers of that pod and no other's,
    those a Synchronize told of and one created since alike."""
    with Session(CONFIG_ROOT) as s:
        s.start()
        rt = s.rt
        before = shared_set(s, 1)
        pods = {}
        for name in ("a", "b"):
            g = rt.make_pod(name, qos="Guaranteed")
            c = rt.make_container(g, "x", request=1000, limit=1000)
            rt.create_container(g, c)
            pods[name] = (g, [c.id])
        # The runtime comes back: its Synchronize tells what runs.
        rt.drop()
        rt.serve()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        g, ids = pods["a"]
        c = rt.make_container(g, "y", request=1000, limit=1000)
        rt.create_container(g, c)
        ids.append(c.id)
        rt.remove_pod(g.id)
        s.wait_status(lambda st: st["containers"] == len(before) + 1)
        r = s.d.admin("grants")
        assert r.get("ok"), r
        held = {x.get("id") for x in r["result"]}
        assert held >= set(pods["b"][1]) | set(before), held
        assert not held & set(ids), held
        s.stop()


def test_update_container():
    with Session(CONFIG) as s:
        s.start()
        rt, m = s.rt, s.machine
        g = rt.make_pod("db", qos="Guaranteed")
        gc = rt.make_container(g, "db", request=2000, limit=2000)
        rt.create_container(g, gc)
        resp = rt.update_container(gc.id, 4000, 4000)
        mine = [u for u in resp.update if u.container_id == gc.id]
        assert len(mine) == 1, resp
        cpus = parse_cpuset(mine[0].linux.resources.cpu.cpus)
        assert len(cpus) == 4 and m.is_whole_cores(cpus), cpus
        assert not cpus & RESERVED, cpus
        assert mine[0].linux.resources.cpu.shares.value == 4096, mine
        s.stop()


def test_qos_guessed_and_environment_passed():
    with Session(CONFIG) as s:
        s.start()
        rt, m = s.rt, s.machine
        # No cgroup parent: the class comes from the CPU request and
        # limit (shares 2048, quota/period 2 CPUs: Guaranteed).
        g = rt.make_pod("bare", qos="Guaranteed")
        g.linux.ClearField("cgroup_parent")
        gc = rt.make_container(g, "c", request=2000, limit=2000,
                               env=["PATH=/bin", "DRA_CPUSET_nosuch=1-2",
                                    "NOEQUALS"])
        cpu = adjusted(rt.create_container(g, gc))
        assert len(cpus_of(cpu)) == 2 and m.is_whole_cores(cpus_of(cpu)), \
            cpu.cpus
        # The environment reaches the policy: a DRA_CPUSET_ variable of a
        # claim nobody holds is ignored and said so (R-CLAIM-9).
        assert "DRA_CPUSET_nosuch" in s.d.output(), s.d.output()
        # A request without a limit and no cgroup parent is Burstable.
        b = rt.make_pod("bare2", qos="Burstable")
        b.linux.ClearField("cgroup_parent")
        bc = rt.make_container(b, "c", request=1500)
        cpu = adjusted(rt.create_container(b, bc))
        assert not cpus_of(cpu) & m.isolated, cpu.cpus
        assert cpu.shares.value == 1500 * 1024 // 1000, cpu
        s.stop()


def test_refusal_and_unimplemented():
    with Session(CONFIG) as s:
        s.start()
        rt, nri = s.rt, s.rt.pb.nri
        # More exclusive CPUs than the machine has: creation fails.
        g = rt.make_pod("huge", qos="Guaranteed")
        n = len(s.machine.online) + 8
        try:
            rt.create_container(g, rt.make_container(
                g, "c", request=1000 * n, limit=1000 * n))
        except CallError as e:
            assert e.code != 0 and e.message, e
        else:
            raise AssertionError("a container larger than the machine "
                                 "was accepted")
        # Methods we do not serve: Unimplemented (12), the code a v0.12
        # runtime falls back to StateChange on.
        for method in ("RunPodSandbox", "StartContainer",
                       "ValidateContainerAdjustment", "NoSuchMethod"):
            try:
                rt.call(method, nri.RunPodSandboxRequest(pod=g), nri.Empty)
            except CallError as e:
                assert e.code == nri_runtime.UNIMPLEMENTED, e
            else:
                raise AssertionError(method + " answered")
        # The connection is still good.
        be = rt.make_pod("be", qos="BestEffort")
        resp = rt.create_container(be, rt.make_container(be, "c"))
        assert resp.adjust.linux.resources.cpu.cpus, resp
        assert s.status()["nri"]["connected"]
        s.stop()


tap.run(globals())
