"""What the bench scripts share: their command line (--srcdir, --builddir,
NAME=SYSFSROOT...), the environment the test helpers of t/lib expect, and
the `name{machine="NAME"} value unit` lines they print."""

import argparse
import os
import shutil
import sys
import tempfile


def report(metric, machine, value, unit):
    digits = 0 if value >= 100 else 3
    print('%s{machine="%s"} %.*f %s' % (metric, machine, digits, value,
                                         unit), flush=True)


def report_latencies(prefix, machine, lat):
    """prefix_p50_us and prefix_p99_us of lat, in seconds."""
    lat = sorted(lat)
    report(prefix + "_p50_us", machine, lat[len(lat) // 2] * 1e6, "us")
    report(prefix + "_p99_us", machine,
           lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6, "us")


def file_system(path):
    """The type and mount point of the file system path is on."""
    best = ("?", "")
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            mnt = fields[1].replace("\\040", " ")
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) \
                    and len(mnt) > len(best[1]):
                best = (fields[2], mnt)
    return best


def main(description, name, bench_machine):
    """Parses the command line, makes t/lib importable, and calls
    bench_machine(name, sysfs_root, work_folder) for each machine."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--srcdir", required=True)
    ap.add_argument("--builddir", required=True)
    ap.add_argument("machines", nargs="+", metavar="NAME=SYSFSROOT")
    args = ap.parse_args()

    srcdir = os.path.abspath(args.srcdir)
    work = tempfile.mkdtemp(prefix="topoaware-bench-%s." % name)
    os.environ["TOPOAWARE_SRCDIR"] = srcdir
    os.environ["TOPOAWARE_BUILDDIR"] = os.path.abspath(args.builddir)
    os.environ["TOPOAWARE_TMP"] = work
    sys.path.insert(0, os.path.join(srcdir, "t", "lib"))
    print("# state folders under %s: %s file system mounted at %s" %
          ((os.path.dirname(work),) + file_system(os.path.realpath(work))),
          flush=True)
    try:
        for m in args.machines:
            mname, _, root = m.partition("=")
            if not root:
                ap.error("not NAME=SYSFSROOT: " + m)
            bench_machine(mname, os.path.abspath(root), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
