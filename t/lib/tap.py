"""A small TAP producer for the Python tests run by `make check`.

Each test module defines functions named test_*; run() calls them in file
order, prints "ok N - name" or "not ok N - name" with the failure as TAP
comments, and exits non-zero when any failed. Temporary state belongs in
the folder the harness gives each test ($TOPOAWARE_TMP).
"""

import os
import subprocess
import sys
import tempfile
import time
import traceback


class Skip(Exception):
    """Raised by a test that cannot run here; reported as a TAP SKIP."""


def tmpdir():
    base = os.environ.get("TOPOAWARE_TMP") or tempfile.gettempdir()
    return tempfile.mkdtemp(dir=base)


def builddir():
    return os.environ["TOPOAWARE_BUILDDIR"]


def debug_hooks():
    """Whether the daemon was built with --enable-debug-hooks."""
    out = subprocess.run([os.path.join(builddir(), "topoawared"), "-V"],
                         capture_output=True, text=True, timeout=10).stdout
    return "(debug hooks)" in out


def srcdir():
    return os.environ["TOPOAWARE_SRCDIR"]


def sysfs(machine):
    path = os.path.join(os.environ["TOPOAWARE_SYSFS"], machine)
    if not os.path.isdir(os.path.join(path, "sys")):
        raise AssertionError("no recorded machine at " + path)
    return path


_made = {}


def mksysfs(spec, name="machine"):
    """A sysfs tree made by topoaware-mksysfs from spec, once per test
    process and spec; the folder that holds sys/."""
    if spec not in _made:
        d = os.path.join(tmpdir(), name)
        r = subprocess.run([os.path.join(builddir(), "topoaware-mksysfs"),
                            spec, d], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 0, r.stderr
        _made[spec] = d
    return _made[spec]


def n4c16(isolated=None):
    """The machine of the upstream e2e test test42-dra-devices: 2 packages
    x 2 nodes x 2 cores x 2 threads, siblings numbered adjacently (node n
    holds CPUs 4n..4n+3), 2G per node; isolated is a cpulist or None."""
    spec = ("packages=2,nodes=2,cores=2,threads=2,numbering=adjacent,"
            "mem=2G")
    if isolated:
        spec += ",isolated=" + isolated
    return mksysfs(spec, "n4c16i" if isolated else "n4c16")


def wait_for(fn, what, timeout=10.0, about=None):
    """Polls fn until it returns something true, and returns that; on
    timeout fails naming what, with about() appended when given."""
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for %s%s" % (
                what, "\n" + about() if about is not None else ""))
        time.sleep(0.05)


def run(module_globals):
    tests = [(name, fn) for name, fn in module_globals.items()
             if name.startswith("test_") and callable(fn)]
    print("1..%d" % len(tests))
    failed = 0
    for i, (name, fn) in enumerate(tests, 1):
        try:
            fn()
        except Skip as why:
            print("ok %d - %s # SKIP %s" % (i, name, why))
            sys.stdout.flush()
            continue
        except Exception:  # any failure of a test is reported, not raised
            failed += 1
            print("not ok %d - %s" % (i, name))
            for line in traceback.format_exc().splitlines():
                print("# " + line)
        else:
            print("ok %d - %s" % (i, name))
        sys.stdout.flush()
    sys.exit(1 if failed else 0)
