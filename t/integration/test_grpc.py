"""The daemon's gRPC plumbing (h2.c, registration.c) through t/h2-probe,
driven by Debian's python3-grpcio as the kubelet's stand-in (R-DRA, R-BAD;
protocols.md 3 and 5): GetInfo and NotifyRegistrationStatus, unknown
methods, the request size cap, compressed requests, error text encoding,
concurrent and asynchronous calls, cancelled calls, dropped connections,
garbage and truncated HTTP/2, stale sockets, and a clean stop."""

import importlib
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import protogen  # noqa: E402
import rawh2  # noqa: E402

import grpc  # noqa: E402

DRIVER = "probe.example.com"
MAX_REQUEST = 4 << 20           # GRPC_MAX_REQUEST, topoawared(8)
REG = "/pluginregistration.Registration/"
PREFACE = rawh2.PREFACE

_pb = None


def pb():
    """pluginregistration_pb2 from proto/ by Debian's protoc."""
    global _pb
    if _pb is None:
        out = tempfile.mkdtemp(prefix="proto.", dir=tap.tmpdir())
        src = protogen.proto_dir()
        subprocess.run([protogen.protoc(), "-I" + src, "--python_out=" + out,
                        os.path.join(src, "pluginregistration.proto")],
                       check=True, timeout=60)
        sys.path.insert(0, out)
        try:
            _pb = importlib.import_module("pluginregistration_pb2")
        finally:
            sys.path.remove(out)
    return _pb


class Probe:
    def __init__(self, root=None):
        self.root = root or tempfile.mkdtemp(dir=tap.tmpdir())
        self.kdir = os.path.join(self.root, "kubelet")
        os.makedirs(self.kdir, exist_ok=True)
        self.sock = os.path.join(self.root, "dra.sock")
        self.reg = os.path.join(self.kdir, "plugins_registry",
                                DRIVER + "-reg.sock")
        self.errpath = os.path.join(self.root, "stderr")
        self.err = open(self.errpath, "ab")
        self.proc = subprocess.Popen(
            [os.path.join(tap.builddir(), "t", "h2-probe"), self.kdir,
             self.sock], stdout=subprocess.PIPE, stderr=self.err)
        r, _, _ = select.select([self.proc.stdout], [], [], 15)
        line = self.proc.stdout.readline() if r else b""
        if line.strip() != b"ready":
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("probe did not start: " + self.output())

    def output(self):
        with open(self.errpath, "rb") as f:
            return f.read().decode(errors="replace")

    def channel(self, path=None):
        # A private subchannel pool: one channel, one connection.
        return grpc.insecure_channel(
            "unix://" + (path or self.sock),
            options=[("grpc.use_local_subchannel_pool", 1),
                     ("grpc.max_receive_message_length", 16 << 20)])

    def status(self):
        with self.channel() as ch:
            text = ch.unary_unary("/probe.Test/Status")(b"", timeout=10)
        out = {}
        for part in text.decode().split(" "):
            k, _, v = part.partition("=")
            out[k] = v
        return out

    def wait_connections(self, n):
        """The probe's own status call is one connection: wait until only
        n others remain (n=0: every test connection was closed)."""
        deadline = time.monotonic() + 10
        while True:
            got = int(self.status()["connections"])
            if got == n + 1:
                return
            if time.monotonic() > deadline:
                raise AssertionError("connections: %d, want %d"
                                     % (got - 1, n))
            time.sleep(0.05)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=15)
        self.err.close()
        out = self.output()
        assert rc == 0, "exit %r:\n%s" % (rc, out)
        assert "Sanitizer" not in out, out
        assert "runtime error:" not in out, out




def request_headers(stream, path):
    """A gRPC request HEADERS frame without END_STREAM, in HPACK with
    static-table names and plain literals (RFC 7541)."""
    def lit(index, value):
        return bytes([0x00 | index, len(value)]) + value.encode()
    block = (bytes([0x83, 0x86])           # :method POST, :scheme http
             + lit(4, path) + lit(1, "localhost")
             # content-type is static entry 31: 15 + 16 in two bytes
             + bytes([0x0f, 0x10, len("application/grpc")])
             + b"application/grpc")
    return rawh2.frame(1, 0x4, stream, block)


def read_frames_until_data(s, stream):
    """Frames from the server until a DATA frame on stream; its payload."""
    f = rawh2.until_frame(s, lambda t, fl, sid, p: t == 0 and sid == stream,
                          time.monotonic() + 10)
    if f is None:
        raise AssertionError("closed before DATA on stream %d" % stream)
    return f[3]


def get_info(ch):
    return ch.unary_unary(REG + "GetInfo",
                          request_serializer=lambda m: m.SerializeToString(),
                          response_deserializer=pb().PluginInfo.FromString)


def test_get_info():
    p = Probe()
    try:
        st = os.lstat(p.reg)
        assert stat.S_ISSOCK(st.st_mode)
        with p.channel(p.reg) as ch:
            info = get_info(ch)(pb().InfoRequest(), timeout=1)
        # protocols.md 3.3: the type constant, the driver, the DRA socket,
        # and v1 before v1beta1 because the kubelet takes the first match.
        assert info.type == "DRAPlugin"
        assert info.name == DRIVER
        assert info.endpoint == p.sock
        assert list(info.supported_versions) == ["v1.DRAPlugin",
                                                 "v1beta1.DRAPlugin"]
    finally:
        p.stop()
    assert not os.path.exists(p.reg)
    assert not os.path.exists(p.sock)


def test_repeated_get_info_one_channel():
    p = Probe()
    try:
        with p.channel(p.reg) as ch:
            call = get_info(ch)
            for _ in range(20):
                assert call(pb().InfoRequest(), timeout=10).name == DRIVER
        p.wait_connections(0)
    finally:
        p.stop()


def test_notify_registration_status():
    p = Probe()
    try:
        assert p.status()["registered"] == "0"
        with p.channel(p.reg) as ch:
            notify = ch.unary_unary(
                REG + "NotifyRegistrationStatus",
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=(
                    pb().RegistrationStatusResponse.FromString))
            notify(pb().RegistrationStatus(plugin_registered=False,
                                           error="no handler"), timeout=5)
            st = p.status()
            assert st["registered"] == "0"
            assert st["error"] == "no"      # the text splits at spaces
            notify(pb().RegistrationStatus(plugin_registered=True),
                   timeout=5)
            st = p.status()
            assert st["registered"] == "1"
            assert st["error"] == ""
    finally:
        p.stop()


def test_unknown_method_unimplemented():
    p = Probe()
    try:
        for path in (p.sock, p.reg):
            with p.channel(path) as ch:
                try:
                    ch.unary_unary("/pluginregistration.Registration/Nope")(
                        b"", timeout=10)
                except grpc.RpcError as e:
                    assert e.code() == grpc.StatusCode.UNIMPLEMENTED
                else:
                    raise AssertionError("unknown method answered")
    finally:
        p.stop()


def test_large_request_resource_exhausted():
    p = Probe()
    try:
        with p.channel() as ch:
            echo = ch.unary_unary("/probe.Test/Echo")
            # At the cap: fine; one byte over: refused, channel still fine.
            assert len(echo(b"a" * MAX_REQUEST, timeout=20)) == MAX_REQUEST
            try:
                echo(b"b" * (MAX_REQUEST + 1), timeout=20)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            else:
                raise AssertionError("oversized request answered")
            assert echo(b"after", timeout=10) == b"after"
    finally:
        p.stop()


def test_connection_buffer_cap():
    """Many large uploads at once on one connection: each is answered or
    refused with RESOURCE_EXHAUSTED, never more than the cap is held, and
    the connection goes on serving."""
    p = Probe()
    try:
        with p.channel() as ch:
            echo = ch.unary_unary("/probe.Test/Echo")
            size = MAX_REQUEST - 1024
            futs = [echo.future(bytes([65 + i]) * size, timeout=25)
                    for i in range(8)]
            refused = 0
            for i, f in enumerate(futs):
                try:
                    got = f.result()
                except grpc.RpcError as e:
                    assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, \
                        e.code()
                    refused += 1
                else:
                    assert got == bytes([65 + i]) * size
            print("# %d of 8 refused" % refused)
            assert echo(b"after", timeout=10) == b"after"
        p.wait_connections(0)
    finally:
        p.stop()


def test_compressed_request_refused():
    p = Probe()
    try:
        with p.channel() as ch:
            echo = ch.unary_unary("/probe.Test/Echo")
            try:
                echo(b"z" * 1000, timeout=10,
                     compression=grpc.Compression.Gzip)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNIMPLEMENTED
            else:
                raise AssertionError("compressed request answered")
            assert echo(b"plain", timeout=10) == b"plain"
    finally:
        p.stop()


def test_error_message_encoding():
    p = Probe()
    try:
        with p.channel() as ch:
            fail = ch.unary_unary("/probe.Test/Fail")
            text = 'text "bad" is not allowed: 100% \u2717\nnext line'
            try:
                fail(text.encode(), timeout=10)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert e.details() == text
            else:
                raise AssertionError("Fail answered")
            # A long message is cut to about 1 KiB, not refused by the
            # client's 8 KiB header limit.
            try:
                fail(b"%" * 20000, timeout=10)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert 0 < len(e.details()) <= 1024
                assert set(e.details()) == {"%"}
            else:
                raise AssertionError("Fail answered")
    finally:
        p.stop()


def test_fifty_concurrent_calls_one_channel():
    p = Probe()
    try:
        with p.channel() as ch:
            echo = ch.unary_unary("/probe.Test/Echo")
            later = ch.unary_unary("/probe.Test/Later")
            futs = []
            for i in range(50):
                fn = later if i % 2 else echo
                futs.append((b"call %d" % i, fn.future(b"call %d" % i,
                                                       timeout=20)))
            for want, f in futs:
                assert f.result() == want
        p.wait_connections(0)
    finally:
        p.stop()


def test_cancelled_call_and_dropped_connection():
    p = Probe()
    try:
        ch = p.channel()
        later = ch.unary_unary("/probe.Test/Later")
        echo = ch.unary_unary("/probe.Test/Echo")
        # Cancelled while the handler still holds its reply handle, and
        # while uploading a large request.
        f = later.future(b"never seen", timeout=20)
        big = echo.future(b"u" * (3 << 20), timeout=20)
        time.sleep(0.05)
        f.cancel()
        big.cancel()
        assert echo(b"next", timeout=10) == b"next"
        # The connection dropped with a deferred answer pending.
        later.future(b"orphan", timeout=20)
        time.sleep(0.05)
        ch.close()
        time.sleep(0.4)             # the probe answers Later after 200 ms
        p.wait_connections(0)
        # A raw client that opens a stream and vanishes mid-request.
        # First, that these hand-made frames make a real request.
        s = rawh2.connect(p.sock)
        s.sendall(PREFACE + rawh2.frame(4, 0, 0, b""))
        s.sendall(request_headers(1, "/probe.Test/Echo"))
        s.sendall(rawh2.frame(0, 1, 1, b"\0\0\0\0\2hi"))
        assert read_frames_until_data(s, 1) == b"\0\0\0\0\2hi"
        s.close()
        for body_end in (False, True):
            s = rawh2.connect(p.sock)
            s.sendall(PREFACE + rawh2.frame(4, 0, 0, b""))
            s.sendall(request_headers(1, "/probe.Test/Later"))
            if body_end:
                s.sendall(rawh2.frame(0, 1, 1, b"\0\0\0\0\2hi"))
            else:
                s.sendall(rawh2.frame(0, 0, 1, b"\0\0\0\0\xffpart"))
            time.sleep(0.05)
            s.close()
        p.wait_connections(0)
        with p.channel() as ch2:
            assert ch2.unary_unary("/probe.Test/Echo")(b"ok",
                                                      timeout=10) == b"ok"
    finally:
        p.stop()


def test_garbage_closes_only_that_connection():
    p = Probe()
    try:
        with p.channel() as ch:
            echo = ch.unary_unary("/probe.Test/Echo")
            assert echo(b"before", timeout=10) == b"before"
            s = rawh2.connect(p.sock)
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + os.urandom(256))
            rawh2.read_until_closed(s)
            s.close()
            # A preface cut short, then the client's end of the stream.
            s = rawh2.connect(p.reg)
            s.sendall(PREFACE[:10])
            s.shutdown(socket.SHUT_WR)
            rawh2.read_until_closed(s)
            s.close()
            # A valid preface followed by a frame of nonsense.
            s = rawh2.connect(p.sock)
            s.sendall(PREFACE + b"\xff" * 64)
            rawh2.read_until_closed(s)
            s.close()
            assert echo(b"after", timeout=10) == b"after"
        p.wait_connections(0)
    finally:
        p.stop()


def test_stale_socket_replaced_live_one_refused():
    p = Probe()
    root = p.root
    try:
        # A second server must not take over a live socket.
        r = subprocess.run([os.path.join(tap.builddir(), "t", "h2-probe"),
                            p.kdir, p.sock], capture_output=True,
                           timeout=15)
        assert r.returncode != 0
        assert b"answering" in r.stderr, r.stderr
        with p.channel() as ch:
            assert ch.unary_unary("/probe.Test/Echo")(b"x", timeout=10) \
                == b"x"
    finally:
        p.proc.kill()
        p.proc.wait()
        p.err.close()
    # Killed: both sockets are left behind, stale.
    assert stat.S_ISSOCK(os.lstat(p.reg).st_mode)
    q = Probe(root)
    try:
        with q.channel(q.reg) as ch:
            assert get_info(ch)(pb().InfoRequest(), timeout=5).name == DRIVER
        assert not [n for n in os.listdir(os.path.dirname(q.reg))
                    if n.startswith(".")]
    finally:
        q.stop()


if __name__ == "__main__":
    tap.run(globals())
