"""Raw HTTP/2 on a unix socket, for the tests that send a gRPC server what
no gRPC client would: hand-made frames, garbage, truncated prefaces."""

import socket
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def connect(path, timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def frame(ftype, flags, stream, payload):
    """One HTTP/2 frame (RFC 9113 4.1)."""
    return (len(payload).to_bytes(3, "big") + bytes([ftype, flags])
            + stream.to_bytes(4, "big") + payload)


def read_until_closed(s):
    """Everything the server sends until it closes; fails on a timeout."""
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk


def until_frame(s, want, deadline):
    """Reads frames until want(ftype, flags, stream, payload) is true for
    one, and returns that frame as a tuple; None if the server closes
    first. Fails at the deadline (time.monotonic)."""
    buf = b""
    while True:
        while len(buf) >= 9:
            n = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + n:
                break
            f = (buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff,
                 buf[9:9 + n])
            buf = buf[9 + n:]
            if want(*f):
                return f
        left = deadline - time.monotonic()
        assert left > 0, "no such frame in time"
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        buf += chunk
