"""The group commit (issue: one commit path; topoawared(8), FILES): the
changes of one loop turn share one fdatasync of the journal, and no peer
hears of them before it. A runtime that sends several creates in one
write gets them all answered after one sync; when that sync fails (the
debug hook TOPOAWARE_DEBUG_FAIL=journal-sync:/PATH, an I/O error while
PATH exists) every change of the turn is undone, cut off the journal,
and the runtime's connection, which held the answers, is closed: after it
reconnects and synchronizes, the daemon holds what it held before and
works on. A reload, synced at once, is answered with the error. A
prepare whose sync fails closes the kubelet's connection only: the
updates its claim pushes to the runtime are made after the turn's
answers, so the runtime's connection held nothing.

The machine: the recorded server, CPUs 3 and 11 reserved (n4c16, CPU 15
reserved, for the prepare)."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import statedoc  # noqa: E402
from draenv import CALL_TIMEOUT, DraEnv  # noqa: E402
from nri_runtime import Closed, Session  # noqa: E402

import grpc  # noqa: E402

CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"}}
N = 6


def metric(s, name):
    text = s.d.admin("metrics")["result"]["text"]
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else 0.0


def syncs(s):
    return metric(s, "topoaware_journal_sync_seconds_count")


def records(s):
    return metric(s, "topoaware_journal_records_total")


def creates(rt, tag, n=N):
    """n CreateContainer requests in one write; (containers, results)."""
    nri = rt.pb.nri
    ctrs, reqs = [], []
    for i in range(n):
        pod = rt.make_pod("%s%d" % (tag, i),
                          qos="Guaranteed" if i % 2 else "BestEffort")
        ctr = rt.make_container(pod, "c", request=1000 if i % 2 else 0,
                                limit=1000 if i % 2 else 0)
        rt.pods[pod.id] = pod
        ctrs.append(ctr)
        reqs.append(nri.CreateContainerRequest(pod=pod, container=ctr))
    return ctrs, rt.conn.call_many("CreateContainer", reqs,
                                   nri.CreateContainerResponse)


def test_one_sync_for_a_turn():
    with Session(CONFIG) as s:
        s.start()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        rt = s.rt
        s0, r0 = syncs(s), records(s)
        ctrs, got = creates(rt, "burst")
        for c, r in zip(ctrs, got):
            assert not isinstance(r, Exception), (c.id, r)
            assert r.adjust.linux.resources.cpu.cpus, (c.id, r)
        assert records(s) - r0 == N, (records(s), r0)
        # One read, one turn: one sync (two, should the socket split
        # the write), never one per change.
        assert syncs(s) - s0 <= 2, (syncs(s), s0)
        assert s.status()["containers"] == N
        s.stop()


def failing_session():
    """A started, synchronized daemon whose syncs fail while the file
    (the second value) exists."""
    if not tap.debug_hooks():
        raise tap.Skip("built without --enable-debug-hooks")
    fail = os.path.join(tap.tmpdir(), "fail-sync")
    s = Session(CONFIG)
    s.d.env = {"TOPOAWARE_DEBUG_FAIL": "journal-sync:" + fail}
    try:
        s.start()
        s.wait_status(lambda st: st["nri"]["synchronized"])
    except BaseException:
        s.__exit__(None, None, None)
        raise
    return s, fail


def test_a_failed_sync_undoes_the_turn():
    s, fail = failing_session()
    with s:
        rt = s.rt
        kept = rt.make_pod("kept", qos="Guaranteed")
        kc = rt.make_container(kept, "c", request=2000, limit=2000)
        rt.create_container(kept, kc)
        grants = s.d.admin("grants")["result"]
        journal = os.path.join(s.d.state_dir, "journal")
        size = statedoc.records_size(journal)

        open(fail, "w").close()
        ctrs, got = creates(rt, "lost")
        # Their answers were withdrawn with the connection.
        for c, r in zip(ctrs, got):
            assert isinstance(r, Closed), (c.id, r)
        assert rt.conn.wait_closed(10)
        assert s.d.proc.poll() is None, s.d.output()
        os.unlink(fail)
        assert statedoc.records_size(journal) == size, \
            "undone records stayed"
        st = s.status()
        assert "durable" in (st.get("lastError") or st.get("error") or
                             str(st)), st
        # Back, synchronized with what the runtime runs: as before.
        rt.drop()
        rt.serve(timeout=10)
        s.wait_status(lambda st: st["nri"]["synchronized"])
        assert s.d.admin("grants")["result"] == grants
        # And it works on: the next change writes a snapshot first.
        again, _ = creates(rt, "again", 2)
        assert s.status()["containers"] == 3
        s.stop()


def test_a_prepare_whose_sync_fails_keeps_the_runtime():
    """A claim moves the shared containers, and the updates for them go to
    the runtime in UpdateContainers. They are made once the turn's answers
    are out, not before its sync: when the sync fails, the kubelet's
    connection, which held the answer, is closed, and the runtime's,
    which held nothing, stays; what it runs is where it was."""
    if not tap.debug_hooks():
        raise tap.Skip("built without --enable-debug-hooks")
    fail = os.path.join(tap.tmpdir(), "fail-sync")
    with DraEnv() as env:
        env.d.env = {"TOPOAWARE_DEBUG_FAIL": "journal-sync:" + fail}
        env.start()
        rt = env.rt
        ids = rt.create_shared(4)
        before = {i: rt.cpus(i) for i in ids}
        c = env.claim_on(1, 2)
        # Without the failure the same claim pushes updates: it would
        # have something to hold.
        n0 = len(rt.received)
        assert env.prepare(c)["error"] == ""
        assert rt.wait_pushed(lambda p: len(p) > n0, arrived=True), \
            "the claim moved no shared container"
        n0 = len(rt.received)
        assert env.k.unprepare([c], timeout=CALL_TIMEOUT) == {c.uid: ""}
        assert rt.wait_pushed(lambda p: len(p) > n0, arrived=True)
        assert rt.wait_pushed(lambda p: len(p) == len(rt.received))
        assert {i: rt.cpus(i) for i in ids} == before, \
            ({i: rt.cpus(i) for i in ids}, before)

        open(fail, "w").close()
        try:
            got = env.k.prepare([c], timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            got = e
        assert not isinstance(got, dict) or got[c.uid]["error"], got
        os.unlink(fail)
        assert env.held() == {}, env.held()
        assert not rt.conn.closed.is_set(), rt.conn.close_reason
        assert rt.wait_pushed(lambda p: len(p) == len(rt.received))
        assert {i: rt.cpus(i) for i in ids} == before, \
            ({i: rt.cpus(i) for i in ids}, before)
        assert env.status()["nri"]["connects"] == 1, env.status()["nri"]
        # And it works on.
        env.close_clients()
        assert env.prepare(c)["error"] == ""
        env.stop()


def test_a_reload_whose_sync_fails_is_refused():
    s, fail = failing_session()
    with s:
        gen = s.status()["configGeneration"]
        s.d.write_config({"reservedResources": {"cpu": "cpuset:3,11,15"}})
        open(fail, "w").close()
        r = s.d.admin("reload")
        assert not r.get("ok"), r
        assert "cannot save the state" in r.get("error", ""), r
        os.unlink(fail)
        assert s.status()["configGeneration"] == gen
        r = s.d.admin("reload")
        assert r.get("ok"), r
        assert s.status()["configGeneration"] == gen + 1
        s.stop()


tap.run(globals())
