"""The NRI connection when the runtime goes away or misbehaves (SPEC R-NRI,
R-BAD, R-STATE-2): a runtime restart is followed by a new registration
and Synchronize; garbage trunk and ttrpc frames, oversized messages and
undecodable protobuf close that connection only (the admin socket keeps
answering) and the daemon comes back; grants survive a clean restart of
the daemon and the next Synchronize releases containers the runtime no
longer has."""

import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import statedoc  # noqa: E402
from nri_runtime import (PLUGIN_CONN, REQUEST, Session,  # noqa: E402
                         parse_cpuset, trunk_frames, ttrpc_frame)

CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"},
          "unlimitedBurstable": "system"}


def populate(rt):
    """A shared container on the root pool and an exclusive one."""
    p = rt.make_pod("web", qos="Burstable")
    shared = rt.make_container(p, "web", request=200)
    rt.create_container(p, shared)
    g = rt.make_pod("db", qos="Guaranteed")
    excl = rt.make_container(g, "db", request=2000, limit=2000)
    rt.create_container(g, excl)
    return shared, excl


def test_runtime_restart():
    with Session(CONFIG) as s:
        s.start()
        rt = s.rt
        shared, excl = populate(rt)
        applied = {c.id: rt.cpus(c.id) for c in (shared, excl)}

        # containerd restarts: the socket goes, then comes back.
        rt.close()
        st = s.wait_status(lambda st: not st["nri"]["connected"])
        assert not st["nri"]["synchronized"], st
        assert st["nri"]["error"], st
        # Meanwhile the runtime started a container the plugin never saw.
        p = rt.make_pod("late", qos="BestEffort")
        late = rt.make_container(p, "late")
        rt.add(p, late)
        rt.listen()
        replies = rt.serve(timeout=10)
        assert rt.conn.register_request.plugin_name == "topoaware"
        st = s.wait_status(lambda st: st["nri"]["synchronized"])
        assert st["nri"]["connected"] and st["nri"]["registered"], st
        assert st["nri"]["connects"] >= 2, st
        # Unchanged containers need no update; the new one gets its
        # pinning in the Synchronize reply.
        got = {u.container_id: u for u in replies[-1].update}
        assert late.id in got, replies[-1]
        assert got[late.id].linux.resources.cpu.cpus, got[late.id]
        for cid, cpus in applied.items():
            assert parse_cpuset(rt.cpus(cid)) == parse_cpuset(cpus), cid
            if cid == excl.id:
                assert cid not in got, got[cid]
        assert st["containers"] == 3, st
        s.stop()


def expect_reconnect(s, what):
    """The daemon closed the connection: it is alive, the admin socket
    answers, and it comes back and synchronizes."""
    rt = s.rt
    assert rt.conn.wait_closed(10), what + ": the connection stayed open"
    assert s.d.proc.poll() is None, what + ": the daemon died\n" + \
        s.d.output()
    st = s.status()
    assert st["version"], st
    rt.drop()
    rt.serve(timeout=10)
    s.wait_status(lambda st: st["nri"]["synchronized"])


def request_envelope(s, method, payload):
    env = s.rt.pb.ttrpc.Request(service="nri.pkg.api.v1alpha1.Plugin",
                                method=method, payload=payload)
    return env.SerializeToString()


def test_bad_input_closes_only_that_connection():
    with Session(CONFIG) as s:
        s.start()
        rt = s.rt
        shared, excl = populate(rt)
        # A trunk frame for the reserved connection id 0.
        rt.conn.send_raw(struct.pack(">II", 0, 4) + b"junk")
        expect_reconnect(s, "conn 0")
        # A ttrpc header whose length is garbage (reserved byte set).
        rt.conn.send_raw(struct.pack(">II", PLUGIN_CONN, 10) +
                         struct.pack(">IIBB", 0xff000000, 1, REQUEST, 0))
        expect_reconnect(s, "garbage length")
        # A trunk frame longer than any the multiplexer allows.
        rt.conn.send_raw(struct.pack(">II", PLUGIN_CONN, 64 << 20) +
                         b"\0" * 1024)
        expect_reconnect(s, "oversized trunk frame")
        # A ttrpc message over 4 MiB, sent whole in two trunk frames.
        big = ttrpc_frame(rt.conn.next_stream(), REQUEST,
                          b"\0" * ((4 << 20) + 1))
        rt.conn.send_raw(trunk_frames(PLUGIN_CONN, big))
        expect_reconnect(s, "oversized message")
        # An envelope that is not protobuf.
        rt.conn.send_message(PLUGIN_CONN, ttrpc_frame(
            rt.conn.next_stream(), REQUEST, b"\xff\xff\xff\xff\x0f"))
        expect_reconnect(s, "undecodable envelope")
        # A good envelope with a payload that is not a CreateContainer.
        rt.conn.send_message(PLUGIN_CONN, ttrpc_frame(
            rt.conn.next_stream(), REQUEST,
            request_envelope(s, "CreateContainer", b"\x12\xff\xff\xff")))
        expect_reconnect(s, "undecodable payload")
        # A frame cut short by the runtime going away.
        rt.conn.send_raw(struct.pack(">II", PLUGIN_CONN, 100) + b"\0" * 10)
        rt.drop()
        rt.serve(timeout=10)
        st = s.wait_status(lambda st: st["nri"]["synchronized"])
        # Through all of it the grants stayed.
        assert st["containers"] == 2, st
        for c in (shared, excl):
            assert rt.cpus(c.id), c.id
        s.stop()


def test_reused_stream_id_is_refused():
    with Session(CONFIG) as s:
        s.start()
        rt, nri = s.rt, s.rt.pb.nri
        # The simulator's client used ids 1 and 3 (Configure,
        # Synchronize): a request on 3 again is answered InvalidArgument
        # and the connection lives on.
        env = request_envelope(s, "Shutdown", b"")
        rt.conn.send_message(PLUGIN_CONN, ttrpc_frame(3, REQUEST, env))
        time.sleep(0.2)
        p = rt.make_pod("be", qos="BestEffort")
        resp = rt.create_container(p, rt.make_container(p, "c"))
        assert resp.adjust.linux.resources.cpu.cpus, resp
        assert not rt.conn.closed.is_set()
        # Shutdown: answered, then the connection is closed and the
        # plugin comes back.
        rt.call("Shutdown", nri.Empty(), nri.Empty)
        expect_reconnect(s, "shutdown")
        s.stop()


def test_state_across_daemon_restart():
    with Session(CONFIG) as s:
        s.start()
        rt = s.rt
        shared, excl = populate(rt)
        excl_cpus = parse_cpuset(rt.cpus(excl.id))
        shared_cpus = parse_cpuset(rt.cpus(shared.id))
        assert not shared_cpus & excl_cpus
        s.d.stop()
        assert rt.conn.wait_closed(10)
        rt.drop()

        # While the daemon was down the exclusive container went away.
        del rt.containers[excl.id]
        del rt.pods[excl.pod_sandbox_id]
        s.d.start()
        assert "restored 2 containers" in s.d.output(), s.d.output()
        replies = rt.serve(timeout=10)
        st = s.wait_status(lambda st: st["nri"]["synchronized"])
        assert st["containers"] == 1, st
        grants = [g["id"] for g in s.d.admin("grants")["result"]
                  if "id" in g]
        assert grants == [shared.id], grants
        # The shared container gets the released CPUs back.
        got = {u.container_id: u for u in replies[-1].update}
        assert shared.id in got, replies[-1]
        now = parse_cpuset(rt.cpus(shared.id))
        assert now == shared_cpus | excl_cpus, (now, shared_cpus, excl_cpus)
        grants = statedoc.read_state(s.d.state_dir)["grants"]
        assert excl.id not in grants and shared.id in grants, grants
        s.stop()


tap.run(globals())
