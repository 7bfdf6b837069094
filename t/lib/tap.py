"""A small TAP producer for the Python tests run by `make check`.

Each test module defines functions named test_*; run() calls them in file
order, prints "ok N - name" or "not ok N - name" with the failure as TAP
comments, and exits non-zero when any failed. Temporary state belongs in
the folder the harness gives each test ($TOPOAWARE_TMP).
"""

import os
import sys
import tempfile
import traceback


class Skip(Exception):
    """Raised by a test that cannot run here; reported as a TAP SKIP."""


def tmpdir():
    base = os.environ.get("TOPOAWARE_TMP") or tempfile.gettempdir()
    return tempfile.mkdtemp(dir=base)


def builddir():
    return os.environ["TOPOAWARE_BUILDDIR"]


def srcdir():
    return os.environ["TOPOAWARE_SRCDIR"]


def sysfs(machine):
    path = os.path.join(os.environ["TOPOAWARE_SYSFS"], machine)
    if not os.path.isdir(os.path.join(path, "sys")):
        raise AssertionError("no recorded machine at " + path)
    return path


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
