"""The watchdog (R-SYSTEMD): under a WATCHDOG_USEC the loop sends
WATCHDOG=1 at half the interval, and a stalled loop stops sending it. The
stall comes from the admin command debug-stall, built only with
--enable-debug-hooks; without it the test says so and skips."""

import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402


def pings(s, until):
    """The arrival times of WATCHDOG=1 until a monotonic deadline."""
    times = []
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return times
        s.settimeout(left)
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            return times
        if "WATCHDOG=1" in msg.split("\n"):
            times.append(time.monotonic())


def test_pings_stop_while_the_loop_is_stalled():
    if not tap.debug_hooks():
        raise tap.Skip("built without --enable-debug-hooks")
    # 0.4 s: the loop should ping every 0.2 s.
    with Daemon(config={"reservedResources": {"cpu": "cpuset:3,11"}},
                env={"WATCHDOG_USEC": "400000"}) as d:
        d.start()
        s = d.listen_notify()
        before = pings(s, time.monotonic() + 1.5)
        assert len(before) >= 2, "no watchdog pings: %r" % before

        reply = {}
        t = threading.Thread(target=lambda: reply.update(
            d.admin("debug-stall", "2", timeout=20)))
        t.start()
        during = pings(s, time.monotonic() + 4.5)
        t.join(20)
        assert reply.get("ok"), reply
        assert len(during) >= 2, "pings did not come back: %r" % during
        # The longest silence covers the 2 s stall.
        stamps = [before[-1]] + during
        gaps = [b - a for a, b in zip(stamps, stamps[1:])]
        assert max(gaps) >= 1.8, "no silence during the stall: %r" % gaps
        s.close()
        assert d.stop() == 0
        assert "Sanitizer" not in d.output()


def test_bad_stall_arguments_are_refused():
    if not tap.debug_hooks():
        raise tap.Skip("built without --enable-debug-hooks")
    with Daemon(config={"reservedResources": {"cpu": "cpuset:3,11"}}) as d:
        d.start()
        for args in ((), ("0",), ("121",), ("x",), ("1", "2")):
            r = d.admin("debug-stall", *args)
            assert not r["ok"] and "1-120" in r["error"], (args, r)
        assert d.stop() == 0


tap.run(globals())
