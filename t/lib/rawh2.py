"""Raw HTTP/2 on a unix socket, for the tests that send a gRPC server what
no gRPC client would: hand-made frames, garbage, truncated prefaces."""

import socket

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
