"""Crashes (SPEC R-STATE-1, R-STATE-2, R-CLAIM-10): the daemon killed by
SIGKILL after some creates and in the middle of a burst of creates sent
without waiting, restarted on the same state folder each time while the
runtime simulator reconnects and synchronizes with the containers it
really runs. After each restart no CPU is exclusive to two containers,
an exclusive container whose creation was answered keeps its CPUs, and
state.json is whole. With the debug hook TOPOAWARE_DEBUG_CRASH a crash
between the durable temp file and the rename leaves the old state, and
the temp file is never read."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from nri_runtime import Closed, Session, SimError, parse_cpuset  # noqa

RESERVED = {3, 11}
CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"}}


def debug_hooks():
    out = subprocess.run([os.path.join(tap.builddir(), "topoawared"), "-V"],
                         capture_output=True, text=True, timeout=10).stdout
    return "(debug hooks)" in out


def state_path(s):
    return os.path.join(s.d.state_dir, "state.json")


def read_state(s):
    """The saved document, which must be whole JSON of version 1."""
    with open(state_path(s)) as f:
        doc = json.load(f)
    assert doc["version"] == 1, doc
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

    def make(self, guaranteed):
        rt = self.rt
        self.n += 1
        if guaranteed:
            p = rt.make_pod("g%d" % self.n, qos="Guaranteed")
            c = rt.make_container(p, "c", request=1000, limit=1000)
            self.exclusive.add(c.id)
        else:
            qos = "Burstable" if self.n % 2 else "BestEffort"
            p = rt.make_pod("s%d" % self.n, qos=qos)
            c = rt.make_container(p, "c", request=100 if self.n % 2 else 0)
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
        s.stop()


def test_crash_before_the_rename_keeps_the_old_state():
    if not debug_hooks():
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
            assert json.load(f)["version"] == 1
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


if __name__ == "__main__":
    tap.run(globals())
