"""Hostile peers against the real daemon, through its real sockets, each
attack followed by a check that everyone else is still served.

Idle peers: half-written admin requests and HTTP/2 connections that never
finish their preface, a frame or a request are closed after the daemon's
timeouts, and a full listener closes the connection idle the longest to
let topoawarectl or the kubelet in; a complete connection may stay quiet
(or only PING) for as long as it likes. NUL bytes: a string with a NUL
inside, which protobuf-c would cut short, is refused by name wherever
protobuf carries it (NRI container ids and annotations, DRA claim UIDs
and names, registration). An admin request cut off by EOF before its
newline is answered, and an over-long one gets an error. A pod that
writes thousands of our annotations and DRA_CPUSET_ variables into its
spec is capped and does not slow anyone else; one that fills many
containers with them meets the node's budget of kept metadata and cannot
push the saved state past what a restart reads. A running pod that asks
for more CPUs than the node has does not block reloads.

The runtime simulator, the grpcio kubelet stand-in and the raw HTTP/2
client are independent peers (t/lib); the limits and timeouts are those
of topoawared(8)."""

import json
import os
import select
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import kubelet  # noqa: E402
import rawh2  # noqa: E402
import statedoc  # noqa: E402
from daemon import Daemon  # noqa: E402
from draenv import CALL_TIMEOUT, DraEnv, dev  # noqa: E402
from kubelet import result  # noqa: E402
from nri_runtime import CallError, Session, parse_cpuset  # noqa: E402

import grpc  # noqa: E402

# topoawared(8), LIMITS.
ADMIN_MAX_CONNS = 16            # SERVER_MAX_ADMIN_CONNS
ADMIN_REQUEST_TIMEOUT = 5.0     # ADMIN_REQUEST_TIMEOUT_MS
H2_MAX_CONNS = 64               # per listener
H2_HANDSHAKE_TIMEOUT = 5.0      # H2_HANDSHAKE_TIMEOUT_MS
H2_PARTIAL_TIMEOUT = 5.0        # H2_PARTIAL_TIMEOUT_MS
# How late a timeout may fire on a loaded machine.
SLACK = 4.0

PREFACE = rawh2.PREFACE
V1 = kubelet.SERVICES["v1"]
V1BETA1 = kubelet.SERVICES["v1beta1"]
REG = kubelet.REG
SETTINGS, PING, HEADERS, DATA = 4, 6, 1, 0


def connect(path, timeout=10):
    """A blocking connect: it waits for room in the listen backlog, as
    clients do, where one with a timeout would fail at once."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(timeout)
    return s


def admin_connect(d, timeout=10):
    return connect(d.admin_socket, timeout)


def ask(s, line):
    """One request line on s; its parsed reply."""
    s.sendall(line)
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        assert chunk, "closed: %r" % buf
        buf += chunk
    return json.loads(buf.decode())


def read_all(s):
    """What the peer sends until it closes (or resets)."""
    buf = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return buf
        if not chunk:
            return buf
        buf += chunk


def closed_times(socks, deadline):
    """When each of socks was closed by the daemon (monotonic), watching
    them all at once so that one still open does not delay the reading
    of another's close; what they send is dropped. Fails if one is still
    open at the deadline."""
    at = [None] * len(socks)
    while None in at:
        left = deadline - time.monotonic()
        assert left > 0, "still open after the timeout"
        open_ = [s for s, t in zip(socks, at) if t is None]
        ready, _, _ = select.select(open_, [], [], left)
        now = time.monotonic()
        for s in ready:
            s.setblocking(False)
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                chunk = b""
            except BlockingIOError:
                continue
            if not chunk:
                at[socks.index(s)] = now
    return at


def closed_at(s, deadline):
    """When s was closed by the daemon (monotonic); see closed_times."""
    return closed_times([s], deadline)[0]


def ctl_status(d):
    r = subprocess.run([os.path.join(tap.builddir(), "topoawarectl"),
                        "--socket", d.admin_socket, "status"],
                       capture_output=True, text=True, timeout=15)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert "NRI" in r.stdout, r.stdout
    return r.stdout


def finish(d):
    rc = d.stop()
    out = d.output()
    assert rc == 0, "exit %r:\n%s" % (rc, out)
    assert "Sanitizer" not in out and "runtime error:" not in out, out


def test_half_written_admin_requests():
    with Daemon() as d:
        d.start()
        # A complete connection, answered once, then quiet.
        quiet = admin_connect(d)
        assert ask(quiet, b'{"command":"status"}\n')["ok"]
        t0 = time.monotonic()
        half = []
        for _ in range(ADMIN_MAX_CONNS + 4):
            s = admin_connect(d)
            s.sendall(b'{"command":"sta')
            half.append(s)
        # The listener is full of them: topoawarectl still gets in, at
        # once, and so does another client, each making room.
        for _ in range(3):
            ctl_status(d)
            assert d.admin("status")["ok"]
        assert time.monotonic() - t0 < ADMIN_REQUEST_TIMEOUT - 1
        # The ones closed for room were told why; the others are cut off
        # when their request has been unfinished for the timeout.
        why = {"room": 0, "timeout": 0}
        for s, at in zip(half, closed_times(
                half, t0 + ADMIN_REQUEST_TIMEOUT + SLACK)):
            s.close()
            if at - t0 < ADMIN_REQUEST_TIMEOUT - 0.5:
                why["room"] += 1
            else:
                why["timeout"] += 1
        # The quiet one was idle the longest: it made room first, then
        # the oldest half-written ones, 4 over the limit and at least one
        # for the first client (later ones may find a place left free).
        r = json.loads(read_all(quiet).decode())
        quiet.close()
        assert r["ok"] is False and "make room" in r["error"], r
        assert why["room"] >= 5 and why["timeout"] >= 1, why
        assert d.admin("status")["ok"]
        finish(d)


def test_half_written_admin_request_timeout_tells_why():
    with Daemon() as d:
        d.start()
        # A connection that only ever sent whole lines, quiet from now on.
        idle = admin_connect(d)
        assert ask(idle, b'{"command":"status"}\n')["ok"]
        s = admin_connect(d, timeout=ADMIN_REQUEST_TIMEOUT + SLACK)
        t0 = time.monotonic()
        s.sendall(b'{"command":')
        # More bytes of the same line do not buy more time.
        time.sleep(1)
        s.sendall(b'"stat')
        got = read_all(s)
        took = time.monotonic() - t0
        s.close()
        assert ADMIN_REQUEST_TIMEOUT - 0.5 <= took, took
        r = json.loads(got.decode())
        assert r["ok"] is False and "unfinished" in r["error"], r
        # The quiet one stays open past the timeout.
        assert ask(idle, b'{"command":"pools"}\n')["ok"]
        idle.close()
        finish(d)


def test_admin_busy_connections_not_evicted():
    """A connection whose answers wait for it to read is not idle: with
    all places taken by such, a newcomer is refused, as before."""
    with Daemon() as d:
        d.start()
        busy = []
        for _ in range(ADMIN_MAX_CONNS):
            s = admin_connect(d)
            s.sendall(b'{"command":"topology"}\n' * 2000)
            busy.append(s)
        # Each answers its first lines, then waits for its reader.
        for s in busy:
            assert s.recv(1)
        time.sleep(0.5)
        extra = admin_connect(d)
        r = json.loads(read_all(extra).decode())
        extra.close()
        assert r["ok"] is False and "too many" in r["error"], r
        for s in busy:
            s.close()

        def answered():
            # Until the daemon has seen the closes, a newcomer may still
            # be refused and closed before its request is sent.
            try:
                return d.admin("status")["ok"]
            except OSError:
                return False
        tap.wait_for(answered, "a free place")
        finish(d)


def test_admin_request_at_eof_answered():
    with Daemon() as d:
        d.start()
        s = admin_connect(d)
        s.sendall(b'{"command":"status"}')
        s.shutdown(socket.SHUT_WR)
        lines = read_all(s).decode().splitlines()
        s.close()
        assert len(lines) == 1, lines
        assert json.loads(lines[0])["ok"], lines
        # Two requests, the last without its newline: two answers.
        s = admin_connect(d)
        s.sendall(b'{"command":"pools"}\n{"command":"log-level"}')
        s.shutdown(socket.SHUT_WR)
        lines = read_all(s).decode().splitlines()
        s.close()
        assert [json.loads(ln)["ok"] for ln in lines] == [True, True], lines
        assert json.loads(lines[1])["result"]["level"], lines
        # Over the line limit, with or without a newline, before EOF or
        # not: an error answer, not silence.
        for tail, eof in ((b"", True), (b"\n", True), (b"\n", False)):
            s = admin_connect(d)
            # ADMINPROTO_MAX_LINE: a 1 MiB config in base64 and 64 KiB.
            s.sendall(b'{"command":"status","args":["' + b"x" * 1500000 +
                      b'"]}' + tail)
            if eof:
                s.shutdown(socket.SHUT_WR)
                got = read_all(s)
            else:
                got = b""
                while not got.endswith(b"\n"):
                    chunk = s.recv(65536)
                    assert chunk, got
                    got += chunk
            s.close()
            r = json.loads(got.decode().splitlines()[0])
            assert r["ok"] is False and "longer than" in r["error"], r
        # A half line at EOF that is not JSON is answered as such.
        s = admin_connect(d)
        s.sendall(b'{"comm')
        s.shutdown(socket.SHUT_WR)
        r = json.loads(read_all(s).decode())
        s.close()
        assert r["ok"] is False and "not valid JSON" in r["error"], r
        ctl_status(d)
        finish(d)


# Raw HTTP/2 (RFC 9113) for what no gRPC client sends.
def h2_frames(s, want, deadline):
    """Reads frames until want(ftype, flags, stream, payload) is true for
    one; False if the server closes first."""
    return rawh2.until_frame(s, want, deadline) is not None


def h2_open(path):
    """A client that has finished its preface and SETTINGS, and has seen
    and acknowledged the server's."""
    s = connect(path)
    s.sendall(PREFACE + rawh2.frame(SETTINGS, 0, 0, b""))
    assert h2_frames(s, lambda t, f, i, p: t == SETTINGS and not f & 1,
                     time.monotonic() + 10)
    s.sendall(rawh2.frame(SETTINGS, 1, 0, b""))
    return s


def h2_ping(s, data):
    s.sendall(rawh2.frame(PING, 0, 0, data))
    return h2_frames(s, lambda t, f, i, p: t == PING and f & 1 and
                     p == data, time.monotonic() + 10)


def request_headers(stream, path, end_stream=False):
    """A gRPC request HEADERS frame in HPACK with static-table names and
    plain literals (RFC 7541)."""
    def lit(index, value):
        return bytes([index, len(value)]) + value.encode()
    block = (bytes([0x83, 0x86])           # :method POST, :scheme http
             + lit(4, path) + lit(1, "localhost")
             + bytes([0x0f, 0x10, len("application/grpc")])
             + b"application/grpc")
    return rawh2.frame(HEADERS, 0x4 | (1 if end_stream else 0), stream,
                       block)


def test_silent_dra_connections_do_not_shut_the_kubelet_out():
    with DraEnv() as env:
        env.start()
        endpoint = env.k.endpoint
        c = env.claim([result(dev(0), 1)])
        assert env.prepare(c)["error"] == ""
        silent = [connect(endpoint) for _ in range(H2_MAX_CONNS + 6)]
        reg_silent = [connect(env.k.reg_socket)
                      for _ in range(H2_MAX_CONNS + 2)]
        # The kubelet's connection, and new ones, get through at once.
        t0 = time.monotonic()
        assert env.k.unprepare([c], timeout=CALL_TIMEOUT)[c.uid] == ""
        for _ in range(3):
            k = env.kubelet()
            c2 = env.claim([result(dev(1), 1)])
            assert k.prepare([c2], timeout=CALL_TIMEOUT)[c2.uid][
                "error"] == ""
        with kubelet.Kubelet(env.kdir) as k:
            assert k.get_info(timeout=5).endpoint == endpoint
        assert time.monotonic() - t0 < H2_HANDSHAKE_TIMEOUT - 1
        # Those never evicted are closed when their handshake is late.
        for s in silent + reg_silent:
            closed_at(s, t0 + H2_HANDSHAKE_TIMEOUT + SLACK)
            s.close()
        c3 = env.claim([result(dev(2), 1)])
        assert env.prepare(c3)["error"] == ""
        env.stop()


def test_h2_incomplete_connections_time_out():
    with DraEnv() as env:
        env.start()
        endpoint = env.k.endpoint
        conns = {}
        t0 = time.monotonic()
        s = connect(endpoint)
        s.sendall(PREFACE[:10])
        conns["half a preface"] = s
        s = connect(endpoint)
        s.sendall(PREFACE)
        conns["a preface without SETTINGS"] = s
        s = h2_open(endpoint)
        s.sendall(rawh2.frame(PING, 0, 0, b"12345678")[:12])
        conns["half a PING frame"] = s
        s = h2_open(endpoint)
        s.sendall(request_headers(1, V1 + "NodePrepareResources"))
        conns["a request without its body"] = s
        s = h2_open(endpoint)
        s.sendall(request_headers(1, V1 + "NodePrepareResources"))
        s.sendall(rawh2.frame(DATA, 0, 1, b"\0\0\0\0\x10part"))
        conns["half a gRPC message"] = s
        # Meanwhile the kubelet is served.
        c = env.claim([result(dev(0), 1)])
        assert env.prepare(c)["error"] == ""
        for what, s in conns.items():
            at = closed_at(s, t0 + H2_PARTIAL_TIMEOUT + SLACK)
            assert at - t0 >= min(H2_HANDSHAKE_TIMEOUT,
                                  H2_PARTIAL_TIMEOUT) - 0.5, (what, at - t0)
            s.close()
        assert env.k.unprepare([c], timeout=CALL_TIMEOUT)[c.uid] == ""
        env.stop()


def test_h2_complete_idle_connection_stays_open():
    with DraEnv() as env:
        env.start()
        endpoint = env.k.endpoint
        pinger = h2_open(endpoint)
        quiet = h2_open(endpoint)
        t0 = time.monotonic()
        i = 0
        while time.monotonic() - t0 < H2_PARTIAL_TIMEOUT + 1.5:
            assert h2_ping(pinger, b"ping%04d" % i), "closed at ping %d" % i
            i += 1
            time.sleep(0.5)
        assert h2_ping(quiet, b"stillhere"[:8])
        # And a complete request on the pinging connection is served.
        c = env.claim([result(dev(0), 1)])
        body = (b"\x0a" + bytes([len(c.namespace) + len(c.uid) +
                                 len(c.name) + 6]) +
                b"\x0a" + bytes([len(c.namespace)]) + c.namespace.encode() +
                b"\x12" + bytes([len(c.uid)]) + c.uid.encode() +
                b"\x1a" + bytes([len(c.name)]) + c.name.encode())
        pinger.sendall(request_headers(1, V1 + "NodePrepareResources"))
        pinger.sendall(rawh2.frame(DATA, 1, 1, b"\0" +
                                   len(body).to_bytes(4, "big") + body))
        assert h2_frames(pinger, lambda t, f, sid, p: t == DATA and
                         sid == 1 and c.uid.encode() in p,
                         time.monotonic() + CALL_TIMEOUT)
        assert env.held().keys() == {c.uid}
        pinger.close()
        quiet.close()
        env.stop()


def test_nul_in_container_ids_refused():
    with Session({"reservedResources": {"cpu": "cpuset:3,11"}}) as s:
        s.start()
        rt = s.rt
        for name, cid in (("one", "ab\0cd"), ("two", "ab\0ef")):
            p = rt.make_pod(name, qos="Guaranteed")
            c = rt.make_container(p, "c", request=1000, limit=1000, cid=cid)
            req = rt.pb.nri.CreateContainerRequest(pod=p, container=c)
            assert b"ab\0" in req.SerializeToString()
            try:
                rt.create_container(p, c)
            except CallError as e:
                assert "container.id has a NUL byte" in e.message, e
            else:
                raise AssertionError("%r was taken" % cid)
        # A NUL in a pod annotation (a map entry) as well.
        p = rt.make_pod("three", qos="Guaranteed",
                        annotations={"cpu.x\0y": "v"})
        c = rt.make_container(p, "c", request=1000, limit=1000)
        try:
            rt.create_container(p, c)
        except CallError as e:
            assert "pod.annotations[0].key has a NUL byte" in e.message, e
        else:
            raise AssertionError("the annotation was taken")
        grants = s.d.admin("grants")["result"]
        assert not [g for g in grants if g.get("id", "").startswith("ab")], \
            grants
        # And in the ttrpc envelope: a method name cut at its NUL would
        # be CreateContainer.
        p = rt.make_pod("five", qos="Guaranteed")
        c = rt.make_container(p, "c", request=1000, limit=1000)
        req = rt.pb.nri.CreateContainerRequest(pod=p, container=c)
        try:
            rt._event("CreateContainer\0x", req,
                      rt.pb.nri.CreateContainerResponse, 2.0)
        except CallError as e:
            assert "Request.method has a NUL byte" in e.message, e
        else:
            raise AssertionError("the method was taken")
        assert not [g for g in s.d.admin("grants")["result"]
                    if g.get("id") == c.id]
        # The runtime's connection is fine, and an "ab" of its own gets
        # its own CPU.
        p = rt.make_pod("four", qos="Guaranteed")
        c = rt.make_container(p, "c", request=1000, limit=1000, cid="ab")
        cpus = rt.create_container(p, c).adjust.linux.resources.cpu.cpus
        assert cpus, "no exclusive CPU"
        grants = [g for g in s.d.admin("grants")["result"]
                  if g.get("id", "").startswith("ab")]
        assert [g["id"] for g in grants] == ["ab"], grants
        assert "NUL byte" in s.d.output()
        s.stop()


def test_nul_in_a_running_pods_annotation_does_not_stop_the_synchronize():
    """Kubernetes lets an annotation's value hold a NUL byte. A create
    with one is refused (above); but a pod that runs already, when the
    daemon starts, is in the runtime's Synchronize, and refusing that
    refused every container of the node, at every attempt. Its NUL bytes
    are read as '?' instead, said in the log: everyone is synchronized and
    pinned, that pod included, and no key of ours is forged by one."""
    with Session({"reservedResources": {"cpu": "cpuset:3,11"}}) as s:
        rt = s.rt
        bad = rt.make_pod("bad", qos="Guaranteed", annotations={
            "note": "a\0b",
            "prefer-isolated-cpus.resource-policy.nri.io\0x": "false"})
        bc = rt.make_container(bad, "c", request=1000, limit=1000)
        rt.add(bad, bc)
        good = rt.make_pod("good", qos="Guaranteed")
        gc = rt.make_container(good, "c", request=1000, limit=1000)
        rt.add(good, gc)
        s.start()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        out = s.d.output()
        assert "SynchronizeRequest.pods[" in out and \
            "2 strings with a NUL byte read with '?'" in out, out[-2000:]
        # Unpacked whole by protobuf-c, its NULs read as '?' first.
        metrics = s.d.admin("metrics")["result"]["text"]
        assert "topoaware_nri_syncs_unpacked_whole_total 1\n" in metrics, \
            metrics
        assert rt.cpus(gc.id) and rt.cpus(bc.id), "not pinned"
        grants = {g["id"]: g for g in s.d.admin("grants")["result"]
                  if "id" in g}
        assert bc.id in grants and gc.id in grants, grants
        # The key cut at its NUL would be ours and turn the isolated CPU
        # a one-CPU Guaranteed container gets off: read whole, it is not.
        isolated = s.machine.isolated
        assert parse_cpuset(rt.cpus(gc.id)) <= isolated, rt.cpus(gc.id)
        assert parse_cpuset(rt.cpus(bc.id)) <= isolated, rt.cpus(bc.id)
        s.stop()


def test_hostile_metadata_does_not_stall_others():
    """One pod with 9,000 of our annotations and a container with 50,000
    DRA_CPUSET_ variables: it is placed, what is kept of it is capped
    (topoawared(8), LIMITS: container metadata), it costs one warning,
    not one per entry, and every other container's events are answered
    well within the runtime's deadline afterwards. (A pod copying a held
    claim's variable is test_claim_pinning.py's.)"""
    with Session({"reservedResources": {"cpu": "cpuset:3,11"}}) as s:
        s.start()
        rt = s.rt
        ann = {"k%d.resource-policy.nri.io" % i: "v" for i in range(9000)}
        p = rt.make_pod("hostile", annotations=ann)
        env = ["DRA_CPUSET_u%05d=1" % i for i in range(50000)]
        c = rt.make_container(p, "c", env=env)
        t0 = time.monotonic()
        cpus = rt.create_container(p, c).adjust.linux.resources.cpu.cpus
        assert cpus, "the hostile container was not placed"
        assert time.monotonic() - t0 < 2.0
        doc = statedoc.read_state(s.d.state_dir)
        spec = doc["grants"][c.id]["container"]
        assert len(spec["env"]) == 32, len(spec["env"])
        assert len(spec["annotations"]) == 128, len(spec["annotations"])
        out = s.d.output()
        assert "past the limits" in out, out[-2000:]
        assert out.count("DRA_CPUSET_u") < 5, out.count("DRA_CPUSET_u")
        # Everyone else: creates, updates and removals, each answered
        # in a fraction of the runtime's 2 s deadline.
        worst = 0
        for i in range(20):
            q = rt.make_pod("other%d" % i, qos="Guaranteed" if i % 4 == 0
                            else "BestEffort")
            d = rt.make_container(q, "c", request=1000 if i % 4 == 0 else 0,
                                  limit=1000 if i % 4 == 0 else 0)
            t0 = time.monotonic()
            rt.create_container(q, d)
            worst = max(worst, time.monotonic() - t0)
            if i % 5 == 4:
                t0 = time.monotonic()
                rt.stop_container(d.id)
                rt.remove_container(d.id)
                worst = max(worst, time.monotonic() - t0)
        assert worst < 1.0, worst
        ctl_status(s.d)
        s.stop()


# topoawared(8), LIMITS: container metadata.
META_BUDGET = 4 << 20           # POLICY_META_BUDGET, bytes of state text


def test_hostile_metadata_cannot_lose_the_node_state():
    """One pod fills its containers with our annotations full of control
    characters (6 bytes of state text each): before the node's budget of
    kept metadata, some 175 of them pushed state.json past what a restart
    read, and every pod's pinning was lost. Now the pod's creates are
    refused once the budget is used, naming it; a container without
    metadata is still placed, one with labels only keeps none; the state
    stays within the budget; and after a restart another pod's exclusive
    CPUs are its own as before."""
    with Session({"reservedResources": {"cpu": "cpuset:3,11"}}) as s:
        s.start()
        rt = s.rt
        vp = rt.make_pod("victim", qos="Guaranteed")
        victim = rt.make_container(vp, "c", request=2000, limit=2000)
        rt.create_container(vp, victim)
        victim_cpus = rt.cpus(victim.id)
        assert victim_cpus, "the victim has no CPUs"
        # 32 KiB of annotations of ours per pod: the per-container cap.
        ann = {"k%02d.resource-policy.nri.io" % i: "\x01" * 1000
               for i in range(32)}
        refused = None
        held = 0
        for i in range(200):
            p = rt.make_pod("hostile%03d" % i, annotations=ann)
            c = rt.make_container(p, "c")
            try:
                rt.create_container(p, c)
            except CallError as e:
                refused = e
                break
            held += 1
        assert refused is not None, "never refused: no budget"
        assert "POLICY_META_BUDGET" in refused.message, refused.message
        # 183 KiB of text each: the budget holds 22 of them.
        assert held == META_BUDGET // (183 << 10), held
        size = os.path.getsize(os.path.join(s.d.state_dir, "state.json"))
        journal = os.path.join(s.d.state_dir, "journal")
        size = max(size, os.path.getsize(journal))
        assert size < META_BUDGET + (1 << 20), size
        # Smaller ones fill what is left, to less than one of them.
        small = {"k.resource-policy.nri.io": "\x01" * 1000}
        for i in range(100):
            p = rt.make_pod("filler%03d" % i, annotations=small)
            c = rt.make_container(p, "c")
            try:
                rt.create_container(p, c)
            except CallError:
                break
            held += 1
        # Everyone else is still placed: plain pods as ever, labelled
        # ones without their labels.
        q = rt.make_pod("plain")
        d = rt.make_container(q, "c")
        rt.create_container(q, d)
        lp = rt.make_pod("labelled")
        lc = rt.make_container(lp, "c", labels={"app": "\x01" * 2000})
        rt.create_container(lp, lc)
        out = s.d.output()
        assert "kept without its labels" in out, out[-2000:]
        grants = statedoc.read_state(s.d.state_dir)["grants"]
        assert grants[lc.id]["container"].get("trimmed") is True
        assert "app" not in grants[lc.id]["container"].get("labels", {})

        # A restart reads it all back: the victim keeps its CPUs.
        s.d.stop()
        assert rt.conn.wait_closed(10)
        rt.drop()
        s.d.start()
        out = s.d.output()
        assert "restored %d containers" % (held + 3) in out, out[-2000:]
        # Within the runtime's deadline, the budget's worth and all.
        rt.serve(timeout=10)
        s.wait_status(lambda st: st["nri"]["synchronized"])
        grants = {g["id"]: g for g in s.d.admin("grants")["result"]
                  if "id" in g}
        assert grants[victim.id]["cpus"] == victim_cpus, grants[victim.id]
        assert rt.cpus(victim.id) == victim_cpus
        s.stop()


def test_an_oversized_pod_does_not_block_reloads():
    """A pod the runtime already runs that asks for more CPUs than the
    node has is placed on the root pool's shared CPUs at the Synchronize.
    It used to make every later reload fail with its error, leaving the
    node's configuration stuck; a reload is refused only for a claim now
    (R-CONF-3): the pod stays where it is, with a warning, and the rest
    of the reload is done."""
    with Session({"reservedResources": {"cpu": "cpuset:3,11"}}) as s:
        rt = s.rt
        hp = rt.make_pod("huge", qos="Guaranteed")
        huge = rt.make_container(hp, "c", request=400000, limit=400000)
        rt.add(hp, huge)
        bp = rt.make_pod("plain")
        plain = rt.make_container(bp, "c")
        rt.add(bp, plain)
        s.start()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        assert "it shares the root pool's CPUs" in s.d.output()
        shared = rt.cpus(huge.id)
        assert shared and rt.cpus(plain.id), "not pinned"
        gen = s.status()["configGeneration"]
        s.d.write_config({"reservedResources": {"cpu": "cpuset:3,11"},
                          "pinMemory": False})
        r = s.d.admin("reload")
        assert r["ok"], r
        st = s.status()
        assert st["configGeneration"] == gen + 1, st
        assert st["lastReload"]["ok"] is True, st["lastReload"]
        assert rt.cpus(huge.id) == shared
        out = s.d.output()
        assert out.count("container %s: " % huge.id) >= 2, out[-2000:]
        # Everyone else is still served.
        q = rt.make_pod("after")
        c = rt.make_container(q, "c")
        rt.create_container(q, c)
        assert rt.cpus(c.id)
        s.stop()


def raw_claim(namespace, uid, name):
    """A Claim's bytes, by hand: protobuf encodes what it is given."""
    out = b""
    for tag, v in ((0x0a, namespace), (0x12, uid), (0x1a, name)):
        out += bytes([tag, len(v)]) + v
    return b"\x0a" + bytes([len(out)]) + out


def rpc_error(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except grpc.RpcError as e:
        return e
    raise AssertionError("the call succeeded")


def test_nul_in_claims_refused():
    with DraEnv() as env:
        env.start()
        # Claims "x" and "a" exist: a cut string would find them.
        a = env.claim([result(dev(0), 1)], uid="x", name="a")
        good = env.claim([result(dev(1), 1)])
        cases = [
            (raw_claim(b"default", b"x\0tail", b"a"),
             "claims[0].uid has a NUL byte"),
            (raw_claim(b"default", b"x", b"a\0b"),
             "claims[0].name has a NUL byte"),
            (raw_claim(b"default", good.uid.encode(), good.name.encode()) +
             raw_claim(b"def\0ault", b"x", b"a"),
             "claims[1].namespace has a NUL byte"),
        ]
        for svc in (V1, V1BETA1):
            for method in ("NodePrepareResources", "NodeUnprepareResources"):
                for body, why in cases:
                    e = rpc_error(env.k.raw, svc + method, body,
                                  timeout=CALL_TIMEOUT)
                    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
                    assert why in e.details(), (why, e.details())
        assert not [r for r in env.api.recorded("GET")
                    if r["path"].endswith("/resourceclaims/a")], \
            env.api.recorded("GET")
        assert env.held() == {}
        # Registration too.
        msg = b"\x08\x00\x12\x04a\0bc"      # registered false, error "a\0bc"
        e = rpc_error(env.k.raw, REG + "NotifyRegistrationStatus", msg,
                      socket_path=env.k.reg_socket)
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
        assert "RegistrationStatus.error has a NUL byte" in e.details(), e
        assert env.status()["dra"]["registered"], env.status()["dra"]
        # The kubelet is served as before.
        assert env.prepare(good)["error"] == ""
        assert env.prepare(a)["error"] == ""
        assert env.held().keys() == {"x", good.uid}
        env.stop()


if __name__ == "__main__":
    tap.run(globals())
