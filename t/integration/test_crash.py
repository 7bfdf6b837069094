"""Crashes (SPEC R-STATE-1, R-STATE-2, R-CLAIM-10): the daemon killed by
SIGKILL after some creates and in the middle of a burst of creates sent
without waiting, restarted on the same state folder each time while the
runtime simulator reconnects and synchronizes with the containers it
really runs. After each restart no CPU is exclusive to two containers,
an exclusive container whose creation was answered keeps its CPUs, and
the saved state (the snapshot state.json and the journal after it, read
by t/lib/statedoc.py) is whole. With the debug hook TOPOAWARE_DEBUG_CRASH
a crash between the durable temp file and the rename leaves the old
state, and the temp file is never read.

The same with claims (R-CLAIM-10): prepares and unprepares through the
kubelet stand-in (t/lib/kubelet.py) interleaved with creates and removes
through the runtime simulator, the daemon killed at a random moment of
each round; with the debug hooks, some rounds die in the middle of a
journal append or of the snapshot at start, and some starts die between
the snapshot's temp file and its rename. After each restart no CPU is granted
twice (claims, exclusive containers, containers pinned to claims, shared
ones), every claim whose prepare was answered is held with the same CPUs
and its CDI spec, every answered unprepare stays done, and once the
kubelet has retried what was unanswered, the CDI specs are exactly the
held claims. Options: --seed N, --rounds N, --max-kill-ms N."""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import kubelet  # noqa: E402
from draenv import DraEnv, dev  # noqa: E402
from draenv import RESERVED as N4C16_RESERVED  # noqa: E402
from kubelet import Kubelet, resource_claim, result  # noqa: E402
from nri_runtime import CallError, Closed, Session, SimError  # noqa: E402
from nri_runtime import format_cpuset, parse_cpuset  # noqa: E402
import statedoc  # noqa: E402

import grpc  # noqa: E402

RESERVED = {3, 11}
CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"}}


def state_path(s):
    return os.path.join(s.d.state_dir, "state.json")


def read_state(s):
    """The saved state as a start reads it: the snapshot, which must be
    whole JSON of version 3, and every journal record after it."""
    doc = statedoc.read_state(s.d.state_dir)
    assert doc["version"] == 3, doc
    return doc


class Workload:
    """The runtime's side: which containers are Guaranteed (exclusive),
    and the CPUs each of those was acknowledged with (a reply it got)."""

    def __init__(self, s):
        self.s = s
        self.rt = s.rt
        self.n = 0
        self.exclusive = set()
        self.acked = {}
        self.widened = 0

    def make(self, guaranteed):
        rt = self.rt
        self.n += 1
        # Memory too: 7 GiB per Guaranteed container fills a 32 GiB DRAM
        # node after four, so later ones spread (issue: accounted memory
        # survives crashes like CPUs do).
        if guaranteed:
            p = rt.make_pod("g%d" % self.n, qos="Guaranteed")
            c = rt.make_container(p, "c", request=1000, limit=1000,
                                  mem_limit=7 << 30, oom_adj=-997)
            self.exclusive.add(c.id)
        else:
            qos = "Burstable" if self.n % 2 else "BestEffort"
            p = rt.make_pod("s%d" % self.n, qos=qos)
            c = rt.make_container(p, "c", request=100 if self.n % 2 else 0,
                                  mem_limit=(1 << 30) if self.n % 2 else 0)
        return p, c

    def create(self, guaranteed):
        p, c = self.make(guaranteed)
        resp = self.rt.create_container(p, c)
        self.acknowledged(c, guaranteed, resp)
        return c.id

    def acknowledged(self, c, guaranteed, resp):
        cpus = parse_cpuset(resp.adjust.linux.resources.cpu.cpus)
        assert cpus, (c.id, resp)
        if guaranteed:
            self.acked[c.id] = cpus

    def remove(self, cid):
        self.rt.stop_container(cid)
        self.rt.remove_container(cid)
        self.exclusive.discard(cid)
        self.acked.pop(cid, None)

    def burst(self, count, kill_after):
        """Sends count creates at once, without waiting for the replies
        (not under the simulator's NRI lock), and kills the daemon once
        kill_after replies came back. An answered container runs; of the
        unanswered ones the runtime runs every other one without a
        pinning, as if it had given up on the plugin."""
        rt, nri = self.rt, self.rt.pb.nri
        conn = rt.conn
        cond = threading.Condition()
        done = {"replies": 0, "ended": 0}
        results = {}

        def one(k, p, c, guaranteed):
            try:
                resp = conn.call("CreateContainer",
                                 nri.CreateContainerRequest(pod=p,
                                                            container=c),
                                 nri.CreateContainerResponse, timeout=10)
            except (Closed, SimError) as e:
                results[k] = e
                resp = None
            with cond:
                if resp is not None:
                    results[k] = resp
                    done["replies"] += 1
                done["ended"] += 1
                cond.notify_all()

        work = []
        for k in range(count):
            guaranteed = k % 3 != 2
            p, c = self.make(guaranteed)
            rt.pods[p.id] = p
            work.append((k, p, c, guaranteed))
        threads = [threading.Thread(target=one, args=w, daemon=True)
                   for w in work]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        with cond:
            while done["replies"] < kill_after and done["ended"] < count:
                left = deadline - time.monotonic()
                assert left > 0, "no %d replies in the burst" % kill_after
                cond.wait(left)
        self.s.d.kill()
        for t in threads:
            t.join(15)
            assert not t.is_alive()
        unanswered = 0
        for k, p, c, guaranteed in work:
            resp = results[k]
            if isinstance(resp, Exception):
                unanswered += 1
                if unanswered % 2:
                    rt.add(p, c)
                else:
                    self.exclusive.discard(c.id)
                continue
            rt.add(p, c)
            rt._set_cpu(c.linux.resources.cpu,
                        resp.adjust.linux.resources.cpu)
            self.acknowledged(c, guaranteed, resp)
        return unanswered


def crash_and_restart(s, w):
    """SIGKILL, then the same state folder again; checks what the runtime
    and the daemon hold afterwards."""
    s.d.kill()
    s.rt.drop()
    read_state(s)
    s.d.start()
    s.rt.serve()
    check(s, w)


def grants_of(s):
    r = s.d.admin("grants")
    assert r["ok"], r
    return {g["id"]: parse_cpuset(g["cpus"]) for g in r["result"]
            if "id" in g}


def check_memory(s):
    """Every container's memory is accounted: a Guaranteed one's limit,
    a Burstable one's limit (no request to read), on the nodes the
    runtime pins it to; and no set of nodes a container has holds more
    than the memory of those nodes."""
    rt, m = s.rt, s.machine
    r = s.d.admin("grants")
    assert r["ok"], r
    zones = {}
    for g in r["result"]:
        if "id" not in g:
            continue
        mem = g.get("memory")
        assert mem is not None, g
        ctr = rt.containers[g["id"]]
        want = ctr.linux.resources.memory.limit.value
        assert mem["bytes"] == want, (g, want)
        nodes = frozenset(parse_cpuset(mem["nodes"]))
        assert nodes == parse_cpuset(
            ctr.linux.resources.cpu.mems), (g, ctr.linux.resources.cpu.mems)
        zones.setdefault(nodes, 0)
        zones[nodes] += mem["bytes"]
    for z in zones:
        used = sum(b for y, b in zones.items() if y <= z)
        have = sum(m.memory.get(n, 0) for n in z)
        assert used <= have, (sorted(z), used, have)
    return zones


def check(s, w):
    rt, m = s.rt, s.machine
    s.wait_status(lambda st: st["nri"]["synchronized"])
    running = set(rt.containers)
    # Pushed updates may still be on their way: wait until the runtime's
    # pinnings are what the daemon granted.
    deadline = time.monotonic() + 10
    while True:
        grants = grants_of(s)
        with rt.state:
            pins = {cid: parse_cpuset(rt.containers[cid].linux.resources
                                      .cpu.cpus) for cid in running}
        if set(grants) == running and all(
                pins[c] == grants[c] for c in running):
            break
        assert time.monotonic() < deadline, (sorted(grants), pins)
        time.sleep(0.05)
    # Gone containers are released, running ones all hold a grant.
    assert set(grants) == running, (sorted(grants), sorted(running))
    taken = {}
    for cid in running & w.exclusive:
        cpus = grants[cid]
        assert len(cpus) == 1 and cpus <= m.online - RESERVED, (cid, cpus)
        for cpu in cpus:
            assert cpu not in taken, (cpu, cid, taken[cpu])
            taken[cpu] = cid
        if cid in w.acked:
            assert cpus == w.acked[cid], (cid, cpus, w.acked[cid])
    for cid in running - w.exclusive:
        assert grants[cid] and not grants[cid] & set(taken), \
            (cid, grants[cid], taken)
    # Containers unanswered before the crash were pinned by the
    # Synchronize reply: that is their acknowledgement from now on.
    for cid in running & w.exclusive:
        w.acked.setdefault(cid, grants[cid])
    doc = read_state(s)
    assert set(running) <= set(doc["grants"]), (sorted(doc["grants"]),
                                                sorted(running))
    # The runtime's memory nodes are what the daemon accounted.
    deadline = time.monotonic() + 10
    while True:
        try:
            zones = check_memory(s)
            break
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    w.widened = max(w.widened, sum(len(z) > 1 for z in zones))


def test_sigkill_during_a_workload():
    with Session(CONFIG) as s:
        s.start()
        w = Workload(s)
        created = []
        # Killed after 1, 3 and 5 more creates, with removals between.
        for n in (1, 3, 5):
            for i in range(n):
                created.append(w.create(guaranteed=i % 2 == 0))
            crash_and_restart(s, w)
            w.remove(created.pop(0))
        assert len(w.acked) >= 3, w.acked
        # Killed while a burst is in flight, twice.
        for kill_after in (2, 5):
            lost = w.burst(9, kill_after)
            print("# burst of 9 killed after %d replies: %d unanswered"
                  % (kill_after, lost), flush=True)
            s.rt.drop()
            read_state(s)
            s.d.start()
            s.rt.serve()
            check(s, w)
        # Removed after the crashes, and one more create still works.
        for cid in sorted(w.exclusive & set(s.rt.containers))[:3]:
            w.remove(cid)
        w.create(guaranteed=True)
        crash_and_restart(s, w)
        # Some memory outgrew its node and was spread, and survived.
        assert w.widened > 0
        s.stop()


def test_crash_before_the_rename_keeps_the_old_state():
    if not tap.debug_hooks():
        raise tap.Skip("built without --enable-debug-hooks")
    with Session(CONFIG) as s:
        s.start()
        w = Workload(s)
        cid = w.create(guaranteed=True)
        s.stop()
        with open(state_path(s), "rb") as f:
            old = f.read()
        assert cid in json.loads(old)["grants"], old

        # The first save, at start, dies between the synced temp file
        # and the rename.
        # The runtime listens only afterwards: a dead daemon's connection
        # must not wait in its backlog.
        s.d.env = {"TOPOAWARE_DEBUG_CRASH": "before-rename"}
        s.d.start(expect_ready=False)
        s.d.proc.wait(10)
        assert s.d.proc.returncode == -signal.SIGKILL, s.d.output()
        s.d.kill()
        with open(state_path(s), "rb") as f:
            assert f.read() == old
        tmp = state_path(s) + ".tmp"
        with open(tmp) as f:
            assert json.load(f)["version"] == 3
        # A temp file that would move the container if it were trusted.
        moved = next(iter(s.machine.online - RESERVED - w.acked[cid]))
        with open(tmp, "w") as f:
            json.dump({"version": 1, "grants": {
                cid: {"kind": "container", "cpus": str(moved)},
                "claim:bogus": {"kind": "claim", "cpus": str(moved)}}}, f)

        s.d.env = None
        s.rt.listen()
        s.d.start()
        s.rt.serve()
        check(s, w)
        assert s.status()["claims"] == 0
        assert not os.path.exists(tmp), "the leftover temp file stayed"
        assert "claim:bogus" not in read_state(s)["grants"]
        s.stop()


def test_answers_go_out_before_the_files():
    """R-STATE-4: the resources.sh files of a loop turn are written after
    its answers are sent, not only after they are made. The debug hook
    TOPOAWARE_DEBUG_CRASH=exports:/PATH kills the daemon as a write of
    those files begins while PATH exists: a create and a prepare whose
    turns have files to write were answered all the same."""
    if not tap.debug_hooks():
        raise tap.Skip("built without --enable-debug-hooks")
    for what in ("create", "prepare"):
        with DraEnv() as env:
            flag = os.path.join(env.folder, "die-at-exports")
            env.d.env = {"TOPOAWARE_DEBUG_CRASH": "exports:" + flag}
            env.start()
            shared, _, mems = env.create("shared")
            assert len(mems) == 1, mems
            link = os.path.join(env.d.state_dir, "containers", shared)
            deadline = time.monotonic() + 10
            while not os.path.exists(link) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert os.path.exists(link), link
            open(flag, "w").close()
            if what == "create":
                cid, cpus, _ = env.create("mine", qos="Guaranteed",
                                          request=2000)
                assert len(cpus) == 2, cpus
                mine = os.path.join(env.d.state_dir, "containers", cid)
            else:
                # On the shared container's node: its pool's file changes.
                c = env.claim_on(min(mems), 2)
                got = env.prepare(c)
                assert got["error"] == "", got
                assert len(got["devices"]) == 1, got
                mine = None
            env.d.proc.wait(10)
            assert env.d.proc.returncode == -signal.SIGKILL, \
                env.d.output()
            # It died before writing this turn's files.
            if mine is not None:
                assert not os.path.exists(mine), mine
            env.d.kill()


# -- claims and containers together ------------------------------------

def options(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--max-kill-ms", type=int, default=250)
    return p.parse_args(argv)


OPTS = options(sys.argv[1:])
CALL_TIMEOUT = 10.0
MAX_CLAIMS = 4          # of 1 or 2 CPUs: at most half the machine
MAX_EXCLUSIVE = 4
MAX_CONTAINERS = 10


class Mixed(DraEnv):
    """Both peers of the daemon and what each was told. Claims and
    containers move between these records under self.lock as answers
    come back; an operation whose answer never came stays pending."""

    def __init__(self, seed):
        super().__init__(node_uid=str(uuid.UUID(int=seed)))
        self.seed = seed
        # A GET cut by the kill is expected, not worth a traceback.
        self.api._httpd.handle_error = lambda *a: None
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.errors = []
        self.n = 0
        self.ops = 0
        self.claims = {}            # uid: Claim, all ever made
        self.acked = {}             # uid: CPUs of an answered prepare
        self.refused = set()        # prepare answered with an error
        self.released = set()       # unprepare answered
        self.pending_prepare = set()
        self.pending_unprepare = set()
        self.in_use = {}            # uid: containers naming it
        self.claim_results = {}     # uid: its allocation results
        self.claim_pods = {}        # uid: the pod UIDs reserving it
        self.kind = {}              # cid: "excl", "shared" or claim uid
        self.excl_acked = {}        # cid: CPUs of an answered create

    def register(self):
        self.k = Kubelet(self.kdir)
        self.k.register()

    def fail(self, what):
        with self.lock:
            self.errors.append(what)

    def worker(self, op, what, rnd):
        """Calls op(rnd) until told to stop or op says the daemon is gone."""
        try:
            while not self.stopping.is_set():
                if not op(rnd):
                    return
        except Exception as e:  # reported by the main thread
            self.fail("%s worker: %r" % (what, e))

    # The kubelet.
    def dra_op(self, rnd):
        with self.lock:
            free = sorted(u for u in self.acked if not self.in_use.get(u))
            grow = len(self.acked) < MAX_CLAIMS and (
                not free or rnd.random() < 0.6)
            if grow:
                self.n += 1
                uid = str(uuid.UUID(int=rnd.getrandbits(128)))
                name = "claim%d" % self.n
                c = kubelet.Claim("default", name, uid)
                self.claims[uid] = c
                self.claim_results[uid] = [result(dev(rnd.randrange(4)),
                                                  rnd.choice((1, 1, 2)))]
                self.claim_pods[uid] = []
                self.api.set_claim("default", name, resource_claim(
                    uid, self.claim_results[uid], name=name))
                self.pending_prepare.add(uid)
            elif free:
                uid = rnd.choice(free)
                c = self.claims[uid]
                # No container may name it from now on.
                del self.acked[uid]
                self.pending_unprepare.add(uid)
            else:
                time.sleep(0.005)
                return True
        try:
            if grow:
                got = self.k.prepare([c], timeout=CALL_TIMEOUT)
            else:
                got = self.k.unprepare([c], timeout=CALL_TIMEOUT)
        except grpc.RpcError:
            return False
        if grow:
            err = got[uid]["error"]
            cpus = self.cdi_cpus(uid) if err == "" else None
        elif got != {uid: ""}:
            self.fail("unprepare %s: %r" % (uid, got))
        with self.lock:
            self.ops += 1
            if grow:
                self.pending_prepare.discard(uid)
                if cpus is not None:
                    self.acked[uid] = cpus
                else:
                    self.refused.add(uid)
            else:
                self.pending_unprepare.discard(uid)
                self.released.add(uid)
        return True

    # The runtime.
    def forget(self, cid):
        """cid no longer runs (self.lock held)."""
        kind = self.kind.pop(cid)
        self.excl_acked.pop(cid, None)
        if kind not in ("excl", "shared"):
            self.in_use[kind] -= 1

    def nri_op(self, rnd):
        rt = self.rt
        with self.lock:
            running = sorted(c for c in self.kind if c in rt.containers)
            nexcl = sum(1 for c in running if self.kind[c] == "excl")
            create = len(running) < MAX_CONTAINERS and (
                not running or rnd.random() < 0.6)
            if create:
                self.n += 1
                kinds = ["shared"]
                if nexcl < MAX_EXCLUSIVE:
                    kinds.append("excl")
                if self.acked:
                    kinds.append(rnd.choice(sorted(self.acked)))
                kind = rnd.choice(kinds)
                env = ["PATH=/bin"]
                if kind == "excl":
                    p = rt.make_pod("x%d" % self.n, qos="Guaranteed")
                    c = rt.make_container(p, "c", request=1000, limit=1000)
                else:
                    pod_uid = str(uuid.UUID(int=rnd.getrandbits(128)))
                    if kind != "shared":
                        self.in_use[kind] = self.in_use.get(kind, 0) + 1
                        env.append("DRA_CPUSET_%s=%s" % (
                            kind, format_cpuset(self.acked[kind])))
                        # The scheduler reserves the claim for the pod
                        # before the pod reaches the node.
                        self.claim_pods[kind].append(pod_uid)
                        self.api.set_claim("default", self.claims[kind].name,
                                           resource_claim(
                                               kind, self.claim_results[kind],
                                               name=self.claims[kind].name,
                                               pod_uids=self.claim_pods[kind]))
                    p = rt.make_pod("s%d" % self.n, qos="BestEffort",
                                    uid=pod_uid)
                    c = rt.make_container(p, "c", env=env)
                self.kind[c.id] = kind
            else:
                cid = rnd.choice(running)
        if create:
            try:
                resp = rt.create_container(p, c)
            except CallError as e:
                # A refusal: the runtime does not run it.
                with self.lock:
                    self.forget(c.id)
                    self.ops += 1
                if kind != "excl":
                    self.fail("create %s refused: %s" % (c.id, e))
                return True
            except SimError:
                # Unanswered: the runtime runs it unpinned, or gives up.
                with self.lock:
                    if rnd.random() < 0.5:
                        rt.add(p, c)
                    else:
                        self.forget(c.id)
                return False
            cpus = parse_cpuset(resp.adjust.linux.resources.cpu.cpus)
            with self.lock:
                self.ops += 1
                if kind == "excl":
                    self.excl_acked[c.id] = cpus
            return True
        try:
            rt.stop_container(cid)
            rt.remove_container(cid)
        except SimError:
            # The runtime removes it all the same.
            with self.lock:
                rt.containers.pop(cid, None)
                self.forget(cid)
            return False
        with self.lock:
            self.ops += 1
            self.forget(cid)
        return True

    # A round: both peers busy, the daemon killed at a random moment.
    def round(self, rnd, delay):
        self.stopping.clear()
        threads = [threading.Thread(target=self.worker, daemon=True,
                                    args=(op, what,
                                          random.Random(rnd.random())))
                   for op, what in ((self.dra_op, "DRA"),
                                    (self.nri_op, "NRI"))]
        before = self.ops
        for t in threads:
            t.start()
        time.sleep(delay)
        # Unless the debug hook of restart(crash_at) killed it first.
        hooked = self.d.proc.poll() is not None
        self.d.kill()
        self.stopping.set()
        for t in threads:
            t.join(CALL_TIMEOUT + 5)
            assert not t.is_alive(), "a worker hangs"
        assert not self.errors, self.errors
        self.k.close()
        self.rt.drop()
        if hooked:
            assert self.d.proc.returncode == -signal.SIGKILL, \
                self.d.output()
        return self.ops - before, hooked

    def start_dying(self, crash_at):
        """A start the debug hook crash_at kills; the runtime does not
        listen meanwhile (its connection must not wait in the backlog)."""
        self.rt.stop_listening()
        self.d.env = {"TOPOAWARE_DEBUG_CRASH": crash_at}
        try:
            self.d.start(expect_ready=False)
            self.d.proc.wait(10)
            assert self.d.proc.returncode == -signal.SIGKILL, \
                self.d.output()
        finally:
            self.d.env = None
            self.d.kill()
        self.rt.listen()

    def crash_at_start(self):
        """A start that dies between the synced temp file and the rename
        leaves state.json as it was."""
        with open(os.path.join(self.d.state_dir, "state.json"), "rb") as f:
            old = f.read()
        self.start_dying("before-rename")
        with open(os.path.join(self.d.state_dir, "state.json"), "rb") as f:
            assert f.read() == old

    def crash_in_start_snapshot(self):
        """A start that dies after moving the journal to journal.prev and
        before writing its snapshot loses nothing: the next start reads
        the old snapshot and journal.prev, and a start after a start that
        died so keeps journal.prev."""
        before = read_state(self.s)
        self.start_dying("compact:1")
        # The journal went to journal.prev, unless it was empty.
        j = os.path.join(self.d.state_dir, "journal")
        assert not os.path.exists(j) or os.path.getsize(j) == 0, j
        after = read_state(self.s)
        assert after["grants"] == before["grants"], (before, after)

    def restart(self, crash_at=None):
        """Starts again; with crash_at (a TOPOAWARE_DEBUG_CRASH value) the
        debug hook kills the daemon at that point later on."""
        # Small journals are compacted often, so that crashes find
        # compactions to die in.
        self.d.env = {"TOPOAWARE_DEBUG_JOURNAL_MIN": "2048"}
        if crash_at is not None:
            self.d.env["TOPOAWARE_DEBUG_CRASH"] = crash_at
        try:
            self.d.start()
        finally:
            self.d.env = None
        # The temp file a crash left is never read, and goes.
        assert not os.path.exists(os.path.join(self.d.state_dir,
                                               "state.json.tmp"))
        try:
            self.rt.serve()
            self.s.wait_status(lambda st: st["nri"]["synchronized"])
            self.register()
        except Exception:
            # The hook may fire at the Synchronize already: a crash
            # like any other, then a start without it.
            if crash_at is None:
                raise
            try:
                self.d.proc.wait(5)
            except subprocess.TimeoutExpired:
                raise
            if self.d.proc.returncode != -signal.SIGKILL:
                raise
            print("# the hook fired at the start", flush=True)
            self.d.kill()
            self.k.close()
            self.rt.drop()
            self.restart()

    def check_claims(self):
        """What the kubelet was told stands; then it retries what it was
        not told, as the kubelet does."""
        held = self.held()
        for uid, cpus in self.acked.items():
            assert held.get(uid) == cpus, (uid, held.get(uid), cpus)
            assert self.cdi_cpus(uid) == cpus, uid
        for uid in self.released | self.refused:
            assert uid not in held, (uid, held[uid])
        assert set(held) <= (set(self.acked) | self.pending_prepare |
                             self.pending_unprepare), \
            (sorted(held), sorted(self.acked))
        for uid in sorted(self.pending_prepare):
            got = self.k.prepare([self.claims[uid]], timeout=CALL_TIMEOUT)
            if got[uid]["error"] == "":
                cpus = self.cdi_cpus(uid)
                if uid in held:
                    assert cpus == held[uid], (uid, cpus, held[uid])
                self.acked[uid] = cpus
            else:
                assert uid not in held, (uid, got)
                self.refused.add(uid)
        for uid in sorted(self.pending_unprepare):
            got = self.k.unprepare([self.claims[uid]], timeout=CALL_TIMEOUT)
            assert got == {uid: ""}, got
            self.released.add(uid)
        self.pending_prepare.clear()
        self.pending_unprepare.clear()
        held = self.held()
        assert held == self.acked, (held, self.acked)
        specs = kubelet.cdi_specs(self.cdi_dir)
        assert specs == sorted(os.path.basename(
            kubelet.cdi_path(self.cdi_dir, u)) for u in held), specs
        # No CPU in two claims, none reserved.
        seen = {}
        for uid, cpus in held.items():
            assert cpus and not cpus & N4C16_RESERVED, (uid, cpus)
            for cpu in cpus:
                assert cpu not in seen, (cpu, uid, seen[cpu])
                seen[cpu] = uid
        return seen

    def check_containers(self, claimed):
        rt = self.rt
        running = set(rt.containers)
        assert running <= set(self.kind), running - set(self.kind)
        # Pushed updates may still be on their way.
        deadline = time.monotonic() + 10
        while True:
            r = self.d.admin("grants")
            assert r["ok"], r
            grants = {g["id"]: g for g in r["result"] if "id" in g}
            with rt.state:
                pins = {c: parse_cpuset(rt.containers[c].linux.resources
                                        .cpu.cpus) for c in running}
            # A pod that joined a claim after its prepare is pinned by
            # an update once the claim is read again.
            wrong = self.not_pinned(running, pins, grants)
            if set(grants) == running and not wrong:
                break
            assert time.monotonic() < deadline, self.pins_told(
                wrong, pins, grants)
            time.sleep(0.05)
        excl = {}
        for cid in sorted(running):
            cpus = pins[cid]
            kind = self.kind[cid]
            if kind == "excl":
                assert len(cpus) == 1, (cid, cpus)
                assert not cpus & N4C16_RESERVED, (cid, cpus)
                cpu = next(iter(cpus))
                assert cpu not in claimed, (cid, cpu, claimed[cpu])
                assert cpu not in excl, (cid, cpu, excl[cpu])
                excl[cpu] = cid
                if cid in self.excl_acked:
                    assert cpus == self.excl_acked[cid], \
                        (cid, cpus, self.excl_acked[cid])
                # Answered by the Synchronize reply if not before.
                self.excl_acked.setdefault(cid, cpus)
            elif kind != "shared":
                assert cpus == self.acked[kind], (cid, cpus, kind)
                assert grants[cid]["pool"] == "claims", grants[cid]
        for cid in sorted(running):
            if self.kind[cid] == "shared":
                cpus = pins[cid]
                assert cpus and not cpus & (set(claimed) | set(excl)), \
                    (cid, cpus, claimed, excl)
        doc = read_state(self.s)
        want = running | {"claim:" + u for u in self.acked}
        assert want <= set(doc["grants"]), (sorted(doc["grants"]),
                                            sorted(want))

    def not_pinned(self, running, pins, grants):
        """The running containers the runtime does not pin as the daemon
        grants them, or, for a container of an answered claim, to the
        claim's CPUs."""
        return [c for c in sorted(running)
                if c not in grants or
                pins[c] != parse_cpuset(grants[c]["cpus"]) or
                self.acked.get(self.kind[c], pins[c]) != pins[c]]

    def pins_told(self, wrong, pins, grants):
        """What the runtime and the daemon say of the containers wrong,
        and what the runtime was told of them (the last updates it
        applied, in order, and the last it dropped), with the daemon
        log's tail."""
        rt = self.rt
        bad = {}
        for c in wrong:
            with rt.state:
                applied = [(m, cpus) for m, cid, cpus in rt.applied
                           if cid == c]
                dropped = [u.linux.resources.cpu.cpus for r in rt.dropped
                           for u in r.update if u.container_id == c]
            bad[c] = {"kind": self.kind[c], "runtime": pins[c],
                      "daemon": grants.get(c),
                      "claim": self.acked.get(self.kind[c]),
                      "applied": applied[-6:], "dropped": dropped[-6:]}
        log = self.d.output().splitlines()
        return "containers not pinned as granted: %r\ndaemon log:\n%s" % (
            bad, "\n".join(log[-40:]))

    def check(self):
        self.check_containers(self.check_claims())


def test_sigkill_during_claims_and_containers():
    seed = OPTS.seed if OPTS.seed is not None else random.randrange(1 << 30)
    print("# seed %d (rerun with --seed %d)" % (seed, seed), flush=True)
    rnd = random.Random(seed)
    hooks = tap.debug_hooks()
    with Mixed(seed) as w:
        w.start()
        total = hooked_rounds = 0
        for r in range(OPTS.rounds):
            delay = rnd.uniform(0, OPTS.max_kill_ms / 1000.0)
            done, hooked = w.round(rnd, delay)
            total += done
            hooked_rounds += hooked
            inflight = (len(w.pending_prepare), len(w.pending_unprepare))
            read_state(w.s)
            if hooks and r % 4 == 0:
                w.crash_in_start_snapshot()
            if hooks and r % 4 == 3:
                w.crash_at_start()
            # Killed in the middle of an append (its record torn), or
            # of the snapshot written at the next start (the journal
            # moved aside, the new snapshot not there yet). The
            # Synchronize and the kubelet's retries are the first three
            # appends.
            crash_at = None
            if hooks and r % 4 == 1:
                crash_at = "journal-append:%d" % rnd.randrange(4, 40)
            elif hooks and r % 4 == 2:
                crash_at = "compact:%d" % rnd.randrange(2, 5)
            w.restart(crash_at=crash_at)
            w.check()
            print("# round %d: %s after %.0f ms, %d answered, %d "
                  "prepare and %d unprepare unanswered; %d claims, %d "
                  "containers" % ((r, "died before a rename" if hooked
                                   else "killed", delay * 1000, done) +
                                  inflight + (len(w.acked),
                                              len(w.rt.containers))),
                  flush=True)
        assert total >= OPTS.rounds, total
        print("# %d rounds ended by a debug hook" % hooked_rounds)
        # Everything goes; the daemon is left with nothing.
        for cid in sorted(w.rt.containers):
            w.rt.stop_container(cid)
            w.rt.remove_container(cid)
        for uid in sorted(w.acked):
            assert w.k.unprepare([w.claims[uid]]) == {uid: ""}
        st = w.s.status()
        assert st["claims"] == 0 and st["containers"] == 0, st
        assert kubelet.cdi_specs(w.cdi_dir) == []
        w.stop()


if __name__ == "__main__":
    tap.run(globals())
