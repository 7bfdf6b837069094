"""Start the real topoawared for an integration test and talk to it.

The daemon runs in the foreground on a private folder (state, sockets,
config) with a recorded sysfs tree. Start-up is awaited the way systemd
does it: the daemon's READY=1 on a NOTIFY_SOCKET the test owns, with a
deadline. stop() ends it with SIGTERM and reaps it; a test that forgets is
covered by the context manager and an atexit hook, so no process outlives
its test.
"""

import atexit
import json
import os
import re
import signal
import socket
import subprocess
import time

import tap

_running = []
# What a sanitizer build writes on a finding; never in a clean run's output.
SANITIZER = ("Sanitizer", "runtime error:")


def _reap_all():
    for d in list(_running):
        d.kill()


atexit.register(_reap_all)


class DaemonError(Exception):
    pass


def no_sanitizer(text):
    for bad in SANITIZER:
        assert bad not in text, text


class Daemon:
    def __init__(self, machine="server", config=None, args=(), folder=None,
                 sysfs_root=None, env=None):
        self.folder = folder or tap.tmpdir()
        self.state_dir = os.path.join(self.folder, "state")
        self.admin_socket = os.path.join(self.folder, "admin.sock")
        self.nri_socket = os.path.join(self.folder, "nri.sock")
        self.config_path = os.path.join(self.folder, "config.json")
        self.sysfs_root = sysfs_root or tap.sysfs(machine)
        self.args = list(args)
        self.env = env
        self.proc = None
        self.log_path = os.path.join(self.folder, "daemon.log")
        # Where output() reads what the daemon wrote.
        self.output_path = self.log_path
        if config is not None:
            self.write_config(config)

    def write_config(self, config):
        text = config if isinstance(config, str) else json.dumps(config)
        tmp = self.config_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, self.config_path)

    def command(self):
        return [os.path.join(tap.builddir(), "topoawared"), "-f",
                "--sysfs-root", self.sysfs_root,
                "--config", self.config_path,
                "--state-dir", self.state_dir,
                "--admin-socket", self.admin_socket,
                "--nri-socket", self.nri_socket,
                "--kubelet-dir", os.path.join(self.folder, "kubelet"),
                "--cdi-dir", os.path.join(self.folder, "cdi"),
                "--node-name", "testnode"] + self.args

    def start(self, timeout=15, expect_ready=True):
        notify = os.path.join(self.folder, "notify.sock")
        if os.path.exists(notify):
            os.unlink(notify)
        ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ns.bind(notify)
        env = dict(os.environ)
        env["NOTIFY_SOCKET"] = notify
        env.pop("WATCHDOG_USEC", None)
        env.pop("WATCHDOG_PID", None)
        if self.env:
            env.update(self.env)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log,
                                     env=env)
        _running.append(self)
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DaemonError("no READY=1 within %ss:\n%s"
                                      % (timeout, self.output()))
                ns.settimeout(min(left, 0.2))
                try:
                    msg = ns.recv(4096).decode()
                except socket.timeout:
                    if self.proc.poll() is not None:
                        if expect_ready:
                            raise DaemonError("exited with %d:\n%s" % (
                                self.proc.returncode, self.output()))
                        return self.proc.returncode
                    continue
                if "READY=1" in msg.split("\n"):
                    return 0
        finally:
            ns.close()

    def listen_notify(self):
        """Takes over the NOTIFY_SOCKET start() let go of, to hear later
        READY=1 (after a reload) or WATCHDOG=1 messages."""
        path = os.path.join(self.folder, "notify.sock")
        if os.path.exists(path):
            os.unlink(path)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(path)
        return s

    def output(self):
        try:
            with open(self.output_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=10):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise DaemonError("did not stop on SIGTERM:\n" +
                                  self.output())
        self._forget()
        return self.proc.returncode

    def finish(self):
        """stop(); the daemon must exit 0 with no sanitizer report."""
        rc = self.stop()
        out = self.output()
        assert rc == 0, "exit %r:\n%s" % (rc, out)
        no_sanitizer(out)

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._forget()

    def _forget(self):
        if self in _running:
            _running.remove(self)
        if getattr(self, "log", None):
            self.log.close()
            self.log = None

    def admin(self, command, *args, timeout=10):
        """One request on a fresh admin connection; the parsed reply."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(self.admin_socket)
            req = {"command": command, "args": list(args)}
            s.sendall((json.dumps(req) + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        finally:
            s.close()
        return json.loads(buf.decode())

    def histogram(self, name):
        """(count, sum in seconds) of the histogram
        topoaware_NAME_seconds in the metrics."""
        text = self.admin("metrics")["result"]["text"]
        got = [re.search(r"^topoaware_%s_seconds_%s (\S+)$" % (name, what),
                         text, re.M) for what in ("count", "sum")]
        if not all(got):
            raise DaemonError("no histogram %s in the metrics" % name)
        return int(got[0].group(1)), float(got[1].group(1))

    def errors(self, kind):
        """topoaware_errors_total{kind=KIND} of the metrics; 0 before the
        first."""
        text = self.admin("metrics")["result"]["text"]
        m = re.search(r'^topoaware_errors_total\{kind="%s"\} (\d+)$' % kind,
                      text, re.M)
        return int(m.group(1)) if m else 0

    def buckets(self, name):
        """{upper bound in seconds: observations at or below it} of the
        histogram topoaware_NAME_seconds (cumulative, as exposed; +Inf is
        float("inf"))."""
        text = self.admin("metrics")["result"]["text"]
        got = {float(m.group(1)): int(m.group(2)) for m in re.finditer(
            r'^topoaware_%s_seconds_bucket\{le="([^"]+)"\} (\d+)$' % name,
            text, re.M)}
        if not got:
            raise DaemonError("no histogram %s in the metrics" % name)
        return got

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
        return False


def container_folders(state_dir):
    """The names in <state_dir>/containers that are containers' (sorted);
    anything else there must be the daemon's own: a spare folder
    (.spare.<n>) or a pool's link (.pool.<pool>, to ../pools/<pool>)."""
    d = os.path.join(state_dir, "containers")
    names = []
    for name in os.listdir(d):
        path = os.path.join(d, name)
        spare = re.fullmatch(r"\.spare\.[0-9]+", name)
        pool = re.fullmatch(r"\.pool\.(.+)", name)
        if spare:
            assert os.path.isdir(path) and not os.path.islink(path), name
        elif pool:
            assert os.readlink(path) == "../pools/" + pool.group(1), name
        else:
            names.append(name)
    return sorted(names)
