"""The admin socket and topoawarectl against the real daemon (R-ADMIN,
R-BAD, R-SYSTEMD): the status fields, every command, the client's text and
JSON output, the socket's mode and peer credential check, the stale socket
rules, bad input and too many connections closing only the connection at
fault, and a clean stop under the sanitizers."""

import json
import os
import socket
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402

MAX_CONNS = 16          # SERVER_MAX_ADMIN_CONNS, topoawared(8)
# ADMINPROTO_MAX_LINE, topoawared(8): a 1 MiB config in base64 and 64 KiB.
MAX_LINE = (1024 * 1024 + 2) // 3 * 4 + 64 * 1024


def cpulist(text):
    """The kernel's list form as a set of CPU ids."""
    out = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def machine_online(machine):
    path = os.path.join(tap.sysfs(machine), "sys", "devices", "system",
                        "cpu", "online")
    with open(path) as f:
        return cpulist(f.read())


def human(n):
    """Bytes in 1024-based k, M, G, T with one decimal when not whole."""
    u = -1
    x = float(n)
    while x >= 1024 and u < 3:
        x /= 1024
        u += 1
    if u < 0:
        return "%d" % n
    if x == int(x):
        return "%d%s" % (x, "kMGT"[u])
    return "%.1f%s" % (x, "kMGT"[u])


def ctl(d, *args, timeout=15):
    cmd = [os.path.join(tap.builddir(), "topoawarectl"),
           "--socket", d.admin_socket] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout)


def finish(d):
    """Stops the daemon: SIGTERM ends it with 0 and nothing from ASan."""
    rc = d.stop()
    out = d.output()
    assert rc == 0, "exit %r:\n%s" % (rc, out)
    assert "Sanitizer" not in out, out
    assert "runtime error:" not in out, out


def connect(d, timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(d.admin_socket)
    return s


def read_line(s):
    """One reply line, or what came before the peer hung up."""
    buf = b""
    while not buf.endswith(b"\n"):
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        buf += chunk
    return buf


def ask(s, command, *args):
    s.sendall((json.dumps({"command": command, "args": list(args)}) +
               "\n").encode())
    line = read_line(s)
    assert line.endswith(b"\n"), line
    return json.loads(line)


def test_status_has_the_fields_of_r_admin():
    with Daemon() as d:
        d.start()
        r = d.admin("status")
        assert r["ok"] is True, r
        st = r["result"]
        v = subprocess.run([os.path.join(tap.builddir(), "topoawared"),
                            "--version"], capture_output=True, text=True,
                           timeout=10)
            # A test build says "(debug hooks)" after the version.
        assert v.stdout.split()[:2] == ["topoawared", st["version"]], \
            v.stdout
        assert isinstance(st["uptimeSeconds"], int)
        assert st["uptimeSeconds"] >= 0
        assert st["configGeneration"] == 1
        assert st["lastReload"] == {"ok": True, "unchanged": False,
                                    "error": None, "generation": 1}, st
        # No runtime listens on the test's NRI socket.
        assert st["nri"]["connected"] is False
        assert isinstance(st["dra"]["registered"], bool)
        assert "error" in st["dra"]
        assert st["containers"] == 0
        assert st["claims"] == 0
        assert "lastError" in st
        finish(d)


def test_every_command_answers():
    online = machine_online("server")
    with Daemon() as d:
        d.start()
        topo = d.admin("topology")
        assert topo["ok"], topo
        assert cpulist(topo["result"]["online"]) == online

        pools = d.admin("pools")
        assert pools["ok"], pools
        roots = [p for p in pools["result"] if p["parent"] is None]
        assert len(roots) == 1, pools
        assert cpulist(roots[0]["cpus"]) == online

        for command in ("grants", "claims"):
            r = d.admin(command)
            assert r == {"ok": True, "result": []}, r

        cfg = d.admin("config")
        assert cfg["ok"], cfg
        # The embedded defaults of R-CONF-1.
        assert cfg["result"]["reservedResources"]["cpu"] == "750m"
        assert cfg["result"]["dra"]["driverName"] == "topology-aware.nri.io"

        d.write_config({})      # absent, a reload would be "unchanged"
        r = d.admin("reload")
        assert r == {"ok": True, "result": {"generation": 2,
                                            "unchanged": False}}, r

        m = d.admin("metrics")
        assert m["ok"], m
        text = m["result"]["text"]
        assert "# TYPE topoaware_admin_requests_total counter\n" in text
        # The status, grants and claims asked above were counted.
        assert 'topoaware_admin_requests_total{command="grants"} 1\n' in text
        assert 'topoaware_reloads_total{result="ok"} 1\n' in text

        assert d.admin("log-level") == {"ok": True,
                                        "result": {"level": "info"}}
        r = d.admin("log-level", "debug")
        assert r == {"ok": True, "result": {"level": "debug",
                                            "previous": "info"}}, r
        assert d.admin("log-level")["result"]["level"] == "debug"
        r = d.admin("log-level", "loud")
        assert r["ok"] is False and "loud" in r["error"], r
        r = d.admin("log-level", "info", "debug")
        assert r["ok"] is False, r

        r = d.admin("frobnicate")
        assert r == {"ok": False, "error": 'unknown command "frobnicate"'}, r
        # A peer's string comes back escaped, never raw.
        r = d.admin('x"\n\x1b')
        assert r["ok"] is False, r
        assert "\n" not in r["error"] and "\x1b" not in r["error"], r
        assert r["error"].startswith('unknown command "x'), r

        r = d.admin("status", "extra")
        assert r["ok"] is False and "no arguments" in r["error"], r
        finish(d)


def test_topoawarectl_text_and_json():
    with Daemon() as d:
        d.start()
        # status: readable lines, and --json gives the result itself.
        r = ctl(d, "status")
        assert r.returncode == 0, r.stderr
        lines = {ln.split("  ")[0]: ln for ln in r.stdout.splitlines()}
        st = d.admin("status")["result"]
        for name in ("version", "uptime", "config generation",
                     "last reload", "NRI", "DRA", "containers", "claims",
                     "last error"):
            assert name in lines, r.stdout
        assert lines["version"].split()[-1] == st["version"]
        assert lines["config generation"].split()[-1] == "1"
        assert "ok" in lines["last reload"]
        assert lines["NRI"].split(None, 1)[1].strip() == "not connected"

        r = ctl(d, "--json", "status")
        assert r.returncode == 0, r.stderr
        js = json.loads(r.stdout)
        assert set(js) == set(st), js
        assert js["configGeneration"] == 1

        # pools: a heading and one row per pool, id and name as in JSON.
        pools = d.admin("pools")["result"]
        r = ctl(d, "pools")
        assert r.returncode == 0, r.stderr
        rows = r.stdout.splitlines()
        assert rows[0].split() == ["ID", "NAME", "CPUS", "FREE", "MEMORY",
                                   "FREE/TOTAL"], rows[0]
        assert len(rows) == len(pools) + 1, r.stdout
        for p, row in zip(pools, rows[1:]):
            assert row.split()[0] == str(p["id"]), (p, row)
            assert " %s " % p["name"] in row, (p, row)
            # Memory by type, free/total, 1024-based as Go prints it.
            for ty in ("dram", "pmem", "hbm"):
                if ty in p["memory"]:
                    m = p["memory"][ty]
                    assert m["free"] == m["total"] > 0, p
                    assert " %s %s/%s" % (ty, human(m["free"]),
                                          human(m["total"])) in row, (p, row)
        r = ctl(d, "--json", "pools")
        assert json.loads(r.stdout) == pools

        # grants: none yet.
        r = ctl(d, "grants")
        assert r.returncode == 0 and r.stdout == "no grants\n", r
        r = ctl(d, "--json", "grants")
        assert json.loads(r.stdout) == []

        r = ctl(d, "metrics")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("# HELP topoaware_"), r.stdout[:200]

        r = ctl(d, "log-level", "warn")
        assert r.returncode == 0 and "warn" in r.stdout, r
        r = ctl(d, "--json", "log-level")
        assert json.loads(r.stdout) == {"level": "warn"}

        # Errors: 1 with the daemon's text; usage: 2.
        r = ctl(d, "log-level", "shout")
        assert r.returncode == 1 and "shout" in r.stderr, r
        assert r.stdout == ""
        r = ctl(d, "frobnicate")
        assert r.returncode == 2, r
        r = ctl(d, "status", "extra")
        assert r.returncode == 2, r
        finish(d)

    # No daemon: a clear message, exit 1.
    r = ctl(d, "status")
    assert r.returncode == 1, r
    assert d.admin_socket in r.stderr, r.stderr
    assert "no such socket" in r.stderr, r.stderr


def test_topoawarectl_without_an_answer():
    """A socket nobody serves, or a server that never replies: exit 1 with
    a message, within the timeout."""
    folder = tap.tmpdir()
    path = os.path.join(folder, "admin.sock")
    cmd = [os.path.join(tap.builddir(), "topoawarectl"), "--socket", path]

    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)
    dead.close()
    r = subprocess.run(cmd + ["status"], capture_output=True, text=True,
                       timeout=15)
    assert r.returncode == 1 and "refused" in r.stderr, r
    os.unlink(path)

    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(path)
    mute.listen(1)
    try:
        # Options may follow the command.
        r = subprocess.run(cmd + ["status", "--timeout", "0.2", "--json"],
                           capture_output=True, text=True, timeout=15)
    finally:
        mute.close()
    assert r.returncode == 1, r
    assert "no reply within 0.2 seconds" in r.stderr, r.stderr
    assert r.stdout == ""

    r = subprocess.run(cmd + ["--timeout", "soon", "status"],
                       capture_output=True, text=True, timeout=15)
    assert r.returncode == 2, r


def test_socket_is_0600_and_removed_on_stop():
    with Daemon() as d:
        d.start()
        sb = os.lstat(d.admin_socket)
        assert stat.S_ISSOCK(sb.st_mode)
        assert stat.S_IMODE(sb.st_mode) == 0o600, oct(sb.st_mode)
        assert sb.st_uid == os.geteuid()
        finish(d)
        assert not os.path.exists(d.admin_socket)


def test_parent_folder_is_created_0700():
    d = Daemon()
    d.admin_socket = os.path.join(d.folder, "run", "admin.sock")
    with d:
        d.start()
        sb = os.stat(os.path.dirname(d.admin_socket))
        assert stat.S_IMODE(sb.st_mode) == 0o700, oct(sb.st_mode)
        assert d.admin("status")["ok"]
        finish(d)


CLIENT = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"command":"status"}\n')
except (BrokenPipeError, ConnectionResetError):
    pass    # refused at once: the reason is still there to read
buf = b""
while not buf.endswith(b"\n"):
    try:
        c = s.recv(65536)
    except ConnectionResetError:
        break
    if not c:
        break
    buf += c
sys.stdout.write(buf.decode())
"""


def test_other_uid_is_refused_by_credentials():
    if os.geteuid() != 0:
        print("# skipped: changing uid needs root")
        return
    with Daemon() as d:
        d.start()
        # Let uid 65534 reach the socket, so that only the peer credential
        # check stands in its way.
        for folder in (os.environ["TOPOAWARE_TMP"], d.folder):
            os.chmod(folder, 0o711)
        os.chmod(d.admin_socket, 0o666)
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                            "--clear-groups", "/usr/bin/python3", "-c",
                            CLIENT, d.admin_socket],
                           capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, r.stderr
        reply = json.loads(r.stdout)
        assert reply["ok"] is False, reply
        assert "permission denied" in reply["error"], reply
        assert "uid 65534" in d.output()
        # Root is still served, and the refusal was counted.
        m = d.admin("metrics")["result"]["text"]
        assert 'topoaware_errors_total{kind="admin_peer"} 1\n' in m, m
        finish(d)


def test_stale_socket_is_replaced():
    d = Daemon()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(d.admin_socket)
    stale.close()      # the file stays, nobody answers
    with d:
        d.start()
        assert d.admin("status")["ok"]
        finish(d)


def test_refuses_a_path_that_is_not_a_socket():
    d = Daemon()
    with open(d.admin_socket, "w") as f:
        f.write("precious\n")
    with d:
        rc = d.start(expect_ready=False)
        assert rc == 1, d.output()
        assert "not a socket" in d.output(), d.output()
    with open(d.admin_socket) as f:
        assert f.read() == "precious\n"


def test_refuses_when_a_live_daemon_answers():
    d = Daemon()
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(d.admin_socket)
    live.listen(4)
    try:
        with d:
            rc = d.start(expect_ready=False)
            assert rc == 1, d.output()
            assert "answering" in d.output(), d.output()
        assert stat.S_ISSOCK(os.lstat(d.admin_socket).st_mode)
    finally:
        live.close()


def test_bad_input_is_answered_on_its_own_connection():
    with Daemon() as d:
        d.start()
        good = connect(d)
        assert ask(good, "status")["ok"]

        # Garbage: an error line, and the connection still works.
        junk = connect(d)
        junk.sendall(b"this is not json\n")
        r = json.loads(read_line(junk))
        assert r["ok"] is False and "not valid JSON" in r["error"], r
        junk.sendall(b'{"command": 7}\n')
        r = json.loads(read_line(junk))
        assert r["ok"] is False and "command" in r["error"], r
        junk.sendall(b"\x00\xff\xfe garbage \x1b[2J\n")
        r = json.loads(read_line(junk))
        assert r["ok"] is False, r
        assert ask(junk, "status")["ok"]

        # A line over the limit is refused once, then skipped whole.
        big = connect(d)
        big.sendall(b'{"command":"status","args":["' +
                    b"x" * (MAX_LINE + 100) + b'"]}\n')
        r = json.loads(read_line(big))
        assert r["ok"] is False and "longer than" in r["error"], r
        assert ask(big, "status")["ok"]

        # A client that goes away in the middle of a line.
        half = connect(d)
        half.sendall(b'{"command":"sta')
        half.close()

        # A client that asks and leaves before reading the reply.
        rude = connect(d)
        rude.sendall(b'{"command":"topology"}\n' * 50)
        rude.close()

        # Everyone else is still served, on old and new connections.
        assert ask(good, "status")["ok"]
        assert d.admin("status")["ok"]
        for s in (good, junk, big):
            s.close()
        finish(d)


def test_pipelined_requests_all_get_answers_in_order():
    with Daemon() as d:
        d.start()
        s = connect(d)
        n = 200     # well over the per-wakeup cap
        s.sendall(b"".join(
            (json.dumps({"command": "log-level"}) + "\n").encode()
            if i % 2 else b'{"command":"grants"}\n' for i in range(n)))
        s.shutdown(socket.SHUT_WR)
        buf = b""
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
        s.close()
        replies = [json.loads(ln) for ln in buf.splitlines()]
        assert len(replies) == n
        for i, r in enumerate(replies):
            want = {"level": "info"} if i % 2 else []
            assert r == {"ok": True, "result": want}, (i, r)
        finish(d)


def test_too_many_connections():
    with Daemon() as d:
        d.start()
        held = [connect(d) for _ in range(MAX_CONNS)]
        # Each answered, so each was accepted and counts.
        for s in held:
            assert ask(s, "status")["ok"]
        # A newcomer gets in: the connection idle the longest makes room
        # and is told why (test_hostile.py has the refusal when none is
        # idle).
        extra = connect(d)
        assert ask(extra, "status")["ok"]
        r = json.loads(read_line(held[0]))
        assert r["ok"] is False and "make room" in r["error"], r
        held.pop(0).close()
        for s in held[1:]:
            assert ask(s, "status")["ok"]

        # One leaves; its EOF is handled before the reply on another
        # connection is written, so a place is free afterwards.
        held.pop().close()
        assert ask(held[0], "status")["ok"]
        again = connect(d)
        assert ask(again, "status")["ok"]
        m = ask(again, "metrics")["result"]["text"]
        assert 'topoaware_errors_total{kind="admin_limit"} 1\n' in m, m
        again.close()
        extra.close()
        for s in held:
            s.close()
        finish(d)


def test_large_replies_beyond_the_high_water_mark():
    """Replies pile up beyond the output high-water mark while the client
    reads slowly; all arrive whole and in order."""
    with Daemon() as d:
        d.start()
        s = connect(d)
        n = 1000
        s.sendall(b'{"command":"metrics"}\n' * n)
        s.shutdown(socket.SHUT_WR)
        buf = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
        s.close()
        assert len(buf) > 4 * 256 * 1024, len(buf)
        replies = [json.loads(ln) for ln in buf.splitlines()]
        assert len(replies) == n
        for i, r in enumerate(replies):
            # Each reply counts the requests handled so far, itself too.
            assert ('topoaware_admin_requests_total{command="metrics"} %d\n'
                    % (i + 1)) in r["result"]["text"], (i, r)
        finish(d)


if __name__ == "__main__":
    tap.run(globals())
