"""Write errors (SPEC R-STATE-1, R-BAD; issue: disk-full and write errors):
the tests run as root, so permission bits cannot make a write fail;
instead a regular file stands where a folder is expected, or the daemon's
RLIMIT_FSIZE is lowered (prlimit, at start or on the running process) so
that state.json cannot be written in full.

A state folder that is a file refuses the start with a clear message. A
state file that cannot be saved refuses the start; while running it
refuses the change that needed the save: a create over NRI is answered
with an error and nothing is granted, a prepare gets a per-claim error
and the claim is not held, the saved state stays whole and what it held
is not lost, status shows lastError, and everything works again once
writes succeed. A CDI folder that is a file fails a prepare with an error
naming the CDI spec; the claim is let go and the shared containers it
moved come back.

A FIFO or a folder where the kubeconfig, its token file, a sysfs file or
state.json should be is named and never blocks the daemon in open().

The daemon's stderr goes through a pipe here (a FIFO in place of the log
file) so that the file-size limit bites the files it saves, not its log.

The machine: n4c16 (2 packages x 2 nodes x 2 cores x 2 threads, CPUs
numbered per node: node n holds 4n..4n+3), CPU 15 reserved."""

import functools
import json
import os
import resource
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import daemon  # noqa: E402
import kubelet  # noqa: E402
import statedoc  # noqa: E402
from daemon import no_sanitizer  # noqa: E402
from draenv import CALL_TIMEOUT, CONFIG, RESERVED, DraEnv  # noqa: E402
from nri_runtime import CallError, SimError, parse_cpuset  # noqa: E402

import grpc  # noqa: E402


class PipedDaemon(daemon.Daemon):
    """The daemon with its output through a FIFO that a thread copies to
    the real log, and optionally a file-size limit from its start."""

    def __init__(self, fsize=None, **kw):
        super().__init__(**kw)
        self.fsize = fsize
        self.out_path = os.path.join(self.folder, "daemon.out")
        self.output_path = self.out_path
        self.drain = None

    def command(self):
        cmd = super().command()
        if self.fsize is None:
            return cmd
        # prlimit execs the daemon: the pid is the daemon's.
        return ["prlimit", "--fsize=%d" % self.fsize, "--"] + cmd

    def _copy(self):
        with open(self.log_path, "rb") as r, open(self.out_path, "ab") as w:
            while True:
                data = r.read1(65536)
                if not data:
                    return
                w.write(data)
                w.flush()

    def start(self, *a, **kw):
        if not os.path.exists(self.log_path):
            os.mkfifo(self.log_path)
        if self.drain is not None:
            self.drain.join(10)
        self.drain = threading.Thread(target=self._copy, daemon=True)
        self.drain.start()
        return super().start(*a, **kw)

    def output(self):
        # All of it once the daemon is gone and our end is closed.
        if self.drain is not None and self.log is None:
            self.drain.join(10)
        return super().output()

    def limit(self, size):
        """The running daemon's RLIMIT_FSIZE (None: unlimited)."""
        _, hard = resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE)
        soft = resource.RLIM_INFINITY if size is None else size
        resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE, (soft, hard))


class Env(DraEnv):
    """The daemon (a PipedDaemon) on n4c16, a runtime, a fake API server
    and a kubelet."""

    def __init__(self, fsize=None):
        super().__init__(daemon_class=functools.partial(PipedDaemon,
                                                        fsize=fsize))

    @property
    def state(self):
        return os.path.join(self.d.state_dir, "state.json")

    def free(self):
        return [(p["name"], p["freeIsolated"], p["freeSharable"],
                 p["grantedShared"]) for p in self.admin("pools")]


def alive(d, wait=0):
    """The daemon still runs (after wait seconds); one killed by SIGXFSZ
    is named as such."""
    try:
        rc = d.proc.wait(wait) if wait else d.proc.poll()
    except subprocess.TimeoutExpired:
        rc = None
    assert rc != -signal.SIGXFSZ, (
        "the daemon was killed by SIGXFSZ at the file-size limit: it must "
        "ignore SIGXFSZ so that the write fails with EFBIG:\n" + d.output())
    assert rc is None, (rc, d.output())


def piped(folder, **kw):
    """A PipedDaemon on n4c16 in folder."""
    return PipedDaemon(config=CONFIG, folder=folder, sysfs_root=tap.n4c16(),
                       **kw)


def start_refused(d):
    """Starts d, which must not get ready; its exit status and output."""
    try:
        rc = d.start(expect_ready=False)
    finally:
        d.kill()
    return rc, d.output()


def saved(env):
    """What a start would restore: the snapshot and its journal."""
    return statedoc.read_state(env.d.state_dir)


# -- folders that are files ----------------------------------------------

def test_state_dir_is_a_file():
    folder = tap.tmpdir()
    d = piped(folder)
    with open(d.state_dir, "w") as f:
        f.write("not a folder\n")
    rc, out = start_refused(d)
    assert rc == 1, (rc, out)
    assert "state directory %s: not a directory" % d.state_dir in out, out
    no_sanitizer(out)
    with open(d.state_dir) as f:
        assert f.read() == "not a folder\n"
    assert not os.path.exists(d.admin_socket)

    # A file where a parent of the state folder should be.
    d = piped(folder, args=["--state-dir", os.path.join(d.state_dir, "x")])
    rc, out = start_refused(d)
    assert rc == 1, (rc, out)
    assert os.path.join(d.state_dir, "x") in out and \
        "Not a directory" in out, out
    no_sanitizer(out)


# -- FIFOs and folders where files should be ---------------------------

def test_fifo_kubeconfig_and_token_do_not_block():
    """A blocking open of a FIFO would wait for a writer forever, the
    daemon's loop with it: the API client is off, and says why."""
    folder = tap.tmpdir()
    fifo = os.path.join(folder, "kubeconfig")
    os.mkfifo(fifo)
    with daemon.Daemon(config=CONFIG, folder=folder,
                       sysfs_root=tap.n4c16(),
                       args=["--kubeconfig", fifo]) as d:
        d.start()
        err = d.admin("status")["result"]["dra"]["error"]
        assert "kubeconfig %s is a FIFO, not a regular file" % fifo in err
        d.finish()

    folder = tap.tmpdir()
    token = os.path.join(folder, "token")
    os.mkfifo(token)
    kc = os.path.join(folder, "kc.yaml")
    with open(kc, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                "clusters: [{name: k, cluster: {server: "
                "'https://127.0.0.1:1'}}]\n"
                "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                "users: [{name: u, user: {tokenFile: %s}}]\n" % token)
    with daemon.Daemon(config=CONFIG, folder=folder,
                       sysfs_root=tap.n4c16(),
                       args=["--kubeconfig", kc]) as d:
        d.start()
        err = d.admin("status")["result"]["dra"]["error"]
        assert "token file %s is a FIFO" % token in err, err
        d.finish()


def test_fifo_or_folder_in_sysfs_and_state():
    # A tree of our own: the shared ones are read-only.
    root = tap.mksysfs("packages=1,nodes=1,cores=2,threads=1", "fifo-sysfs")
    online = os.path.join(root, "sys", "devices", "system", "cpu", "online")
    os.unlink(online)
    os.mkfifo(online)
    d = daemon.Daemon(config={}, sysfs_root=root)
    rc, out = start_refused(d)
    assert rc == 1, (rc, out)
    assert "%s is a FIFO, not a regular file" % online in out, out

    # state.json as a FIFO or a folder is moved aside like a bad file.
    for make in (os.mkfifo, os.mkdir):
        folder = tap.tmpdir()
        state = os.path.join(folder, "state")
        os.mkdir(state, 0o700)
        make(os.path.join(state, "state.json"))
        with daemon.Daemon(config=CONFIG, folder=folder,
                           sysfs_root=tap.n4c16()) as d:
            d.start()
            out = d.output()
            kind = "a FIFO" if make is os.mkfifo else "a directory"
            assert "state file %s is %s, not a regular file" % (
                os.path.join(state, "state.json"), kind) in out, out
            assert "moved aside" in out, out
            with open(os.path.join(state, "state.json")) as f:
                assert json.load(f)["grants"] == {}
            d.finish()


def test_cdi_dir_is_a_file():
    with Env() as env:
        with open(env.cdi_dir, "w") as f:
            f.write("not a folder\n")
        env.start()
        rt = env.rt
        be, shared, _ = env.create("be")
        free = env.free()
        before = env.d.errors("cdi_write")

        # Two CPUs of the BestEffort container's node: it must move.
        node = [n for n, c in env.m.nodes.items() if c & shared][0]
        assert shared == env.m.nodes[node] - RESERVED, (shared, node)
        c = env.claim_on(node, 2)
        got = env.prepare(c)
        assert "CDI spec" in got["error"], got
        assert env.cdi_dir in got["error"], got
        assert got["devices"] == [], got
        # Not held, not saved, counted, visible.
        assert env.held() == {}
        assert not [k for k in saved(env)["grants"]
                    if k.startswith("claim:")], saved(env)
        assert env.d.errors("cdi_write") == before + 1
        st = env.s.status()
        assert st["claims"] == 0, st
        assert env.free() == free, (env.free(), free)
        # Shared containers moved off the claim's CPUs come back.
        assert rt.wait_pushed(lambda p: parse_cpuset(rt.cpus(be)) == shared)
        assert env.grants()[be] == shared
        with open(env.cdi_dir) as f:
            assert f.read() == "not a folder\n"

        # The daemon keeps serving: NRI, and DRA once the folder is one.
        ex, cpus, _ = env.create("ex", qos="Guaranteed", request=1000)
        assert len(cpus) == 1 and not cpus & RESERVED, cpus
        # Checked last: releasing a claim that is not held succeeds
        # (R-CLAIM-5), even with no CDI folder to remove a spec from.
        unprepared = env.k.unprepare([c], timeout=CALL_TIMEOUT)
        assert env.held() == {}
        os.unlink(env.cdi_dir)
        os.mkdir(env.cdi_dir)
        got = env.prepare(c)
        assert got["error"] == "", got
        cpus = env.cdi_cpus(c.uid)
        assert env.held() == {c.uid: cpus}
        assert not cpus & env.grants()[ex], (cpus, env.grants())
        env.stop()
        assert unprepared == {c.uid: ""}, unprepared
        # The failed write was visible to the operator in status.
        assert "CDI" in (st["lastError"] or ""), \
            "status lastError after the CDI write failed: %r" % \
            st["lastError"]


# -- the state file cannot be written ------------------------------------

def test_start_refused_when_the_state_cannot_be_saved():
    folder = tap.tmpdir()
    d = piped(folder)
    d.start()
    assert d.stop() == 0, d.output()
    with open(os.path.join(d.state_dir, "state.json"), "rb") as f:
        old = f.read()
    # Not even the document of an empty node fits in 8 bytes.
    assert len(old) > 8, old
    d = piped(folder, fsize=8)
    rc, out = start_refused(d)
    assert rc != -signal.SIGXFSZ, (
        "killed by SIGXFSZ at the file-size limit: the daemon must ignore "
        "SIGXFSZ so that the write fails with EFBIG:\n" + out)
    assert rc == 1, (rc, out)
    assert "state.json" in out and "File too large" in out, out
    no_sanitizer(out)
    with open(os.path.join(d.state_dir, "state.json"), "rb") as f:
        assert f.read() == old
    assert not os.path.exists(os.path.join(d.state_dir, "state.json.tmp"))


def test_state_cannot_be_saved_while_running():
    with Env() as env:
        env.start()
        rt = env.rt
        # What the node holds before writes start failing.
        ex, ex_cpus, _ = env.create("ex", qos="Guaranteed", request=1000)
        be, be_cpus, _ = env.create("be")
        c1 = env.claim_on(1, 2)
        assert env.prepare(c1)["error"] == ""
        c1_cpus = env.cdi_cpus(c1.uid)
        # The claim may have moved the BestEffort container.
        assert rt.wait_pushed(
            lambda p: parse_cpuset(rt.cpus(be)) == env.grants()[be])
        be_cpus = parse_cpuset(rt.cpus(be))
        assert not be_cpus & c1_cpus, (be_cpus, c1_cpus)
        with open(env.state, "rb") as f:
            old = f.read()
        journal = os.path.join(env.d.state_dir, "journal")
        with open(journal, "rb") as f:
            old_journal = f.read()
        assert old_journal, "no change was journaled"
        grants, claims, free = env.grants(), env.held(), env.free()
        pushed = len(rt.pushed)
        before = env.d.errors("state_write")

        # The journal cannot grow: no record can be appended.
        env.d.limit(statedoc.records_size(journal))
        p = rt.make_pod("refused", qos="Guaranteed")
        c = rt.make_container(p, "c", request=1000, limit=1000)
        try:
            rt.create_container(p, c)
        except CallError as e:
            assert "cannot save the state" in e.message, e
        except SimError:
            alive(env.d, wait=5)
            raise
        else:
            raise AssertionError("a create that was not saved was answered")
        alive(env.d)
        assert c.id not in rt.containers
        st = env.s.status()
        assert "cannot save the state" in (st["lastError"] or ""), st
        assert "File too large" in st["lastError"], st
        assert env.grants() == grants, (env.grants(), grants)
        assert env.free() == free, (env.free(), free)
        assert not os.path.exists(os.path.join(env.d.state_dir, "containers",
                                               c.id))

        c2 = env.claim_on(2, 2)
        got = env.prepare(c2)
        assert "cannot save the state" in got["error"], got
        assert got["devices"] == [], got
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c2.uid))
        assert env.held() == claims, (env.held(), claims)
        assert env.free() == free, (env.free(), free)
        # Nobody was moved for a change that did not happen.
        assert len(rt.pushed) == pushed, rt.pushed[pushed:]
        assert parse_cpuset(rt.cpus(be)) == be_cpus
        assert env.d.errors("state_write") >= before + 2
        # The saved state is the old one, whole: no part of a record
        # stays in the journal, and no temp file stays.
        with open(env.state, "rb") as f:
            assert f.read() == old
        with open(journal, "rb") as f:
            assert f.read() == old_journal
        assert not os.path.exists(env.state + ".tmp")
        # A prepare of a held claim changes nothing and still answers.
        got = env.prepare(c1)
        assert got["error"] == "" and env.cdi_cpus(c1.uid) == c1_cpus, got

        # Writes work again: the same requests go through.
        env.d.limit(None)
        _, cpus, _ = env.create("later", qos="Guaranteed", request=1000)
        assert len(cpus) == 1 and not cpus & (ex_cpus | c1_cpus), cpus
        assert env.prepare(c2)["error"] == ""
        c2_cpus = env.cdi_cpus(c2.uid)
        assert not c2_cpus & (ex_cpus | c1_cpus | cpus), c2_cpus

        # And a restart finds all of it.
        env.restart()
        assert env.held() == {c1.uid: c1_cpus, c2.uid: c2_cpus}
        assert env.grants()[ex] == ex_cpus
        env.stop()
        no_sanitizer(env.d.output())


def test_release_that_cannot_be_saved():
    with Env() as env:
        env.start()
        c = env.claim_on(1, 2)
        assert env.prepare(c)["error"] == ""
        cpus = env.cdi_cpus(c.uid)
        with open(env.state, "rb") as f:
            old = f.read()
        # No write at all succeeds, not even of a smaller document. An
        # unprepare answered with success must be on disk: the kubelet
        # never asks again, and a claim back after a restart would have
        # nobody left to release it.
        env.d.limit(1)
        for attempt in (1, 2):
            try:
                got = env.k.unprepare([c], timeout=CALL_TIMEOUT)
            except grpc.RpcError:
                alive(env.d, wait=5)
                raise
            alive(env.d)
            with open(env.state, "rb") as f:
                assert f.read() == old
            assert got != {c.uid: ""}, (
                "unprepare %d answered success while state.json still "
                "holds the claim" % attempt)
            assert "cannot save the state" in got[c.uid], got
            st = env.s.status()
            assert "cannot save the state" in (st["lastError"] or ""), st
        assert env.held() == {c.uid: cpus}, env.held()
        assert os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))

        env.d.limit(None)
        assert env.k.unprepare([c], timeout=CALL_TIMEOUT) == {c.uid: ""}
        assert "claim:" + c.uid not in saved(env)["grants"], saved(env)
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))
        env.restart()
        assert env.held() == {}
        env.stop()


def test_every_operation_undone_when_not_saved():
    """One commit path (issue: one commit path): whatever the change, when
    its journal record cannot be written it is undone and answered with
    the error, and the saved state is byte for byte what it was; a
    removal the runtime has made is kept and saved with the next change
    that can be."""
    with Env() as env:
        env.start()
        rt = env.rt
        g, g_cpus, _ = env.create("g", qos="Guaranteed", request=1000)
        be, _, _ = env.create("be")
        gone, _, _ = env.create("gone")
        c = env.claim_on(2, 1)
        assert env.prepare(c)["error"] == ""
        journal = os.path.join(env.d.state_dir, "journal")

        def files():
            out = {}
            for name in ("state.json", "journal"):
                with open(os.path.join(env.d.state_dir, name), "rb") as f:
                    out[name] = f.read()
            return out

        def held():
            return (env.grants(), env.held(), env.free(),
                    env.s.status()["configGeneration"])

        before, was = files(), held()
        env.d.limit(statedoc.records_size(journal))
        # An update.
        try:
            rt.update_container(g, 2000, 2000)
        except CallError as e:
            assert "cannot save the state" in e.message, e
        else:
            raise AssertionError("an update that was not saved was "
                                 "answered")
        assert parse_cpuset(rt.cpus(g)) == g_cpus
        # A release.
        got = env.k.unprepare([c], timeout=CALL_TIMEOUT)
        assert "cannot save the state" in got[c.uid], got
        # A reload.
        env.d.write_config({"reservedResources": {"cpu": "cpuset:14-15"}})
        r = env.d.admin("reload")
        assert not r["ok"] and "cannot save the state" in r["error"], r
        alive(env.d)
        assert files() == before
        assert held() == was, (held(), was)
        # A removal the runtime made is kept, and said so.
        rt.stop_container(gone)
        rt.remove_container(gone)
        st = env.s.status()
        assert st["journal"]["unsaved"] is True, st
        assert gone not in env.grants()
        assert files() == before
        # Writes work again: the next change saves all of it.
        env.d.limit(None)
        env.create("after")
        st = env.s.status()
        assert st["journal"]["unsaved"] is False, st
        grants = statedoc.read_state(env.d.state_dir)["grants"]
        assert gone not in grants and g in grants, sorted(grants)
        env.restart()
        assert gone not in env.grants() and g in env.grants()
        assert env.held() == was[1]
        env.stop()


if __name__ == "__main__":
    tap.run(globals())
