"""topoawarectl map through the real daemon: a claim prepared by the kubelet
stand-in, containers created through the runtime simulator, and the map
checked against what the runtime applied and the claim's CDI spec (the
daemon's grants only say when its updates have all arrived). The text
grid without a terminal has no escape codes, --color=always paints it,
and on a terminal (a pty) colour follows TERM and NO_COLOR. On the
448-CPU synthetic machine every line stays within 80 columns.

The machine: n4c16 (2 packages x 2 nodes x 2 cores x 2 threads, node n
holds CPUs 4n..4n+3, siblings adjacent) with CPUs 12-13 isolated and
CPU 15 reserved."""

import json
import os
import pty
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402
from draenv import DraEnv  # noqa: E402
from nri_runtime import format_cpuset, parse_cpuset  # noqa: E402

ISOLATED = {12, 13}
RESERVED = {15}
LETTERS = {"claim": "C", "exclusive": "X", "isolated": "I", "reserved": "R",
           "shared": "S", "free": "F", "unmanaged": "U", "offline": "O"}
CELL = re.compile(r"(\d+)([CXIRSFUO])")
ESC = re.compile(r"\x1b\[[0-9;]*m")
M448 = "packages=2,nodes=4,cores=28,threads=2"


def ctl_cmd(sock, *args):
    return [os.path.join(tap.builddir(), "topoawarectl"), "--socket",
            sock] + list(args)


def ctl(sock, *args, env=None):
    return subprocess.run(ctl_cmd(sock, *args), capture_output=True,
                          text=True, timeout=15, env=env)


def on_a_terminal(sock, *args, **env_over):
    """topoawarectl with its standard output a pty: (exit, output)."""
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.update(env_over)
    for k, v in list(env.items()):
        if v is None:
            del env[k]
    master, slave = pty.openpty()
    p = subprocess.Popen(ctl_cmd(sock, *args), stdout=slave,
                         stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:         # EIO: the other side is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    rc = p.wait(timeout=15)
    return rc, out.decode().replace("\r\n", "\n")


def grid_cells(text):
    """{CPU: letter} of the grid (the lines above the legend)."""
    grid = text.split("\n\n")[0]
    cells = {}
    for cpu, letter in CELL.findall(grid):
        assert int(cpu) not in cells, (cpu, grid)
        cells[int(cpu)] = letter
    return cells


class Env(DraEnv):
    def __init__(self):
        super().__init__(sysfs_root=tap.n4c16(isolated="12-13"))
        assert self.m.isolated == ISOLATED, self.m.isolated

    def map(self):
        r = ctl(self.d.admin_socket, "--json", "map")
        assert r.returncode == 0, r.stderr
        return {c["cpu"]: c for c in json.loads(r.stdout)["cpus"]}

    def settled(self, ids):
        """Waits until the runtime runs every container where the daemon
        put it (updates of moved shared containers come after the
        answer); the runtime's view {id: CPUs}."""
        def same():
            g = self.grants()
            got = {c: parse_cpuset(self.rt.cpus(c)) for c in ids}
            return got if all(g.get(c) == got[c] for c in ids) else None
        return tap.wait_for(same, "the runtime's cpusets")


def populate(env):
    """A claim of 2 CPUs of node 1 with a container on it, a Guaranteed
    container of 1 CPU (an isolated one) and one of 2, two BestEffort
    and a kube-system one. Returns (claim uid, its CPUs, {name: id})."""
    c = env.claim_on(1, 2, consumers=["claimer"])
    key, value = env.prepare_env(c)
    claim_cpus = parse_cpuset(value)
    ids = {}
    ids["claimer"], cpus, _ = env.create("claimer",
                                         env=["%s=%s" % (key, value)])
    assert cpus == claim_cpus, (cpus, claim_cpus)
    ids["g1"], _, _ = env.create("g1", qos="Guaranteed", request=1000)
    ids["g2"], _, _ = env.create("g2", qos="Guaranteed", request=2000)
    ids["be1"], _, _ = env.create("be1")
    ids["be2"], _, _ = env.create("be2")
    ids["ks"], _, _ = env.create("ks", namespace="kube-system")
    return c.uid, claim_cpus, ids


def test_map_marks_what_holds_each_cpu():
    with Env() as env:
        env.start()
        uid, claim_cpus, ids = populate(env)
        applied = env.settled(list(ids.values()))
        m = env.map()
        assert sorted(m) == list(range(16)), m

        # Where each CPU sits, from the machine's numbering.
        for cpu, c in m.items():
            assert (c["package"], c["node"], c["thread"]) == \
                (cpu // 8, cpu // 4, cpu % 2), c

        for cpu in claim_cpus:
            assert m[cpu]["kind"] == "claim", m[cpu]
            assert m[cpu]["claim"] == uid
            assert m[cpu]["containers"] == 1, m[cpu]
        for name in ("g1", "g2"):
            for cpu in applied[ids[name]]:
                assert m[cpu]["kind"] == "exclusive", m[cpu]
                assert m[cpu]["container"] == ids[name]
        # One whole CPU goes to the isolated ones.
        assert applied[ids["g1"]] <= ISOLATED, applied
        assert m[min(applied[ids["g1"]])]["isolated"] is True
        assert applied[ids["ks"]] == RESERVED, applied
        assert m[15]["kind"] == "reserved"
        assert m[15]["containers"] == 1

        # Shared: the CPUs the BestEffort containers run on, counted.
        shared = applied[ids["be1"]] | applied[ids["be2"]]
        assert shared, applied
        for cpu, c in m.items():
            n = sum(cpu in applied[ids[k]] for k in ("be1", "be2"))
            if cpu in shared:
                assert c["kind"] == "shared", c
                assert c["containers"] == n, (c, n)
                assert c["pool"].startswith(("NUMA node", "socket")), c
            elif c["kind"] not in ("claim", "exclusive", "reserved"):
                assert c["kind"] in ("free", "isolated"), c
        env.stop()


def test_text_grid_and_colour():
    with Env() as env:
        env.start()
        uid, claim_cpus, ids = populate(env)
        env.settled(list(ids.values()))
        m = env.map()
        sock = env.d.admin_socket

        plain = ctl(sock, "map")
        assert plain.returncode == 0, plain.stderr
        assert "\x1b" not in plain.stdout, plain.stdout
        cells = grid_cells(plain.stdout)
        assert cells == {cpu: LETTERS[c["kind"]] for cpu, c in m.items()}
        lines = plain.stdout.splitlines()
        assert lines[0] == "package 0" and lines[1] == "  node 0", lines
        # Threads of a core side by side: node 0's two cores on one row.
        assert lines[2] == "    [%2d%s %2d%s] [%2d%s %2d%s]" % tuple(
            x for cpu in range(4) for x in (cpu, cells[cpu])), lines[2]
        assert "C claim" in plain.stdout and "X exclusive" in plain.stdout
        # The holders: the claim's CPUs with the containers on them.
        row = [ln.split() for ln in lines if ln.startswith("claim ")]
        assert row == [["claim", format_cpuset(claim_cpus),
                        "NUMA", "node", "#1", "1", "claim:" + uid]], row
        row = [ln.split() for ln in lines if ln.startswith("reserved ")]
        assert row == [["reserved", "15", "-", "1", "-"]], row

        forced = ctl(sock, "--color=always", "map")
        assert forced.returncode == 0, forced.stderr
        assert "\x1b[1;35m" in forced.stdout, forced.stdout   # claim
        assert "\x1b[33m15R\x1b[0m" in forced.stdout, forced.stdout
        assert ESC.sub("", forced.stdout) == plain.stdout

        never = ctl(sock, "map", "--color=never")
        assert never.stdout == plain.stdout

        # A terminal gets colour unless TERM is dumb or NO_COLOR is set.
        rc, out = on_a_terminal(sock, "map", TERM="xterm")
        assert rc == 0 and "\x1b[" in out, out
        assert ESC.sub("", out) == plain.stdout
        for over in ({"TERM": "dumb"}, {"TERM": None},
                     {"TERM": "xterm", "NO_COLOR": "1"}):
            rc, out = on_a_terminal(sock, "map", **over)
            assert rc == 0 and "\x1b" not in out, (over, out)
        rc, out = on_a_terminal(sock, "--color=never", "map", TERM="xterm")
        assert "\x1b" not in out, out

        bad = ctl(sock, "--color=loud", "map")
        assert bad.returncode == 2 and "--color" in bad.stderr, bad
        extra = ctl(sock, "map", "all")
        assert extra.returncode == 2, extra
        env.stop()


def test_a_448_cpu_machine_fits_80_columns():
    with Daemon(sysfs_root=tap.mksysfs(M448, "m448")) as d:
        d.start()
        r = ctl(d.admin_socket, "map")
        assert r.returncode == 0, r.stderr
        width = max(len(ln) for ln in r.stdout.splitlines())
        assert width <= 80, width
        cells = grid_cells(r.stdout)
        assert sorted(cells) == list(range(448))
        # Intel numbering: core c's threads are c and c + 224, side by
        # side; the default 750m reserves CPU 0.
        assert "\n    [  0R 224F] [  1F 225F] [  2F 226F]" in r.stdout, \
            r.stdout[:400]
        j = ctl(d.admin_socket, "--json", "map")
        assert len(json.loads(j.stdout)["cpus"]) == 448
        assert d.stop() == 0, d.output()


if __name__ == "__main__":
    tap.run(globals())
