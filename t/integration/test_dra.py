"""The DRA kubelet plugin of the real daemon (SPEC R-DRA, R-CLAIM, R-BAD;
protocols.md 3-6) against three independent peers: the kubelet stand-in
of t/lib/kubelet.py (Debian's python3-grpcio), the runtime simulator of
t/lib/nri_runtime.py and the fake API server of t/lib/fake_apiserver.py.

Registration and its refusal; prepare refused whole until the runtime has
synchronized; the n4c16 scenario of the upstream e2e test
test42-dra-devices (anchor-policy.md 9.5, 11) through the real gRPC path,
with the CDI specs checked against the CDI schema and the shared
containers moved off claimed CPUs and back; v1beta1; idempotence and a
restart in between; claims that are replaced, unallocated, missing or
hostile; a spec that cannot be written; a dead, a hanging and a slow API
server, and an unprepare while the claim is being read; concurrent
calls; duplicate UIDs; malformed gRPC and HTTP/2; status and metrics.

n4c16: 2 packages x 2 nodes x 2 cores x 2 threads. The expected CPUs are
derived from the sysfs tree the test generates, not from the daemon."""

import contextlib
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import kubelet  # noqa: E402
import rawh2  # noqa: E402
from apienv import API_TIMEOUT_MS, API_RETRIES, API_BACKOFF_MS  # noqa
from apienv import NODE  # noqa: E402
from draenv import CALL_TIMEOUT, RESERVED, DraEnv, dev, new_uid  # noqa
from kubelet import Claim, Kubelet, result  # noqa: E402
from nri_runtime import parse_cpuset  # noqa: E402

import grpc  # noqa: E402
import jsonschema  # noqa: E402

DRIVER = kubelet.DRIVER
# The longest a claim may wait on a failing API server: every attempt
# timing out, every backoff (doubling), and slack for a loaded machine.
API_WORST = (API_TIMEOUT_MS * (API_RETRIES + 1) +
             API_BACKOFF_MS * (2 ** API_RETRIES - 1)) / 1000.0 + 3.0
PREFACE = rawh2.PREFACE
V1 = kubelet.SERVICES["v1"]


# The CDI schema of t/data/cdi and the loader rules it does not express
# (protocols.md 6).
def cdi_validator():
    base = os.path.join(tap.srcdir(), "t", "data", "cdi")
    with open(os.path.join(base, "schema.json")) as f:
        schema = json.load(f)
    resolver = jsonschema.RefResolver("file://" + base + "/", schema)
    return jsonschema.Draft7Validator(schema, resolver=resolver)


VALIDATOR = cdi_validator()
CDI_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")


def cdi_problems(spec):
    out = [e.message for e in VALIDATOR.iter_errors(spec)]
    if out:
        return out
    if spec.get("cdiVersion") != "0.5.0":
        out.append("cdiVersion %r" % spec.get("cdiVersion"))
    out += ["unknown field %s" % k for k in
            set(spec) - {"cdiVersion", "kind", "devices", "containerEdits"}]
    for d in spec["devices"]:
        if not CDI_NAME.match(d["name"]):
            out.append("bad device name %r" % d["name"])
        if not d["containerEdits"]:
            out.append("empty containerEdits")
        out += ["unknown device field %s" % k
                for k in set(d) - {"name", "containerEdits"}]
    return out


class Env(DraEnv):
    """The daemon on n4c16 with a runtime, a fake API server and a
    kubelet, torn down together. A restart brings a new runtime."""

    def restart(self, while_down=None):
        return super().restart(while_down=while_down, new_runtime=True)

    def prepare_ok(self, claims, version="v1"):
        """Prepare; every claim must succeed. {uid: CPUs} from the CDI
        specs, which are checked on the way."""
        got = self.k.prepare(claims, version=version, timeout=CALL_TIMEOUT)
        assert set(got) == {c.uid for c in claims}, got
        held = self.held()
        out = {}
        for c in claims:
            r = got[c.uid]
            assert r["error"] == "", r
            assert [d["cdi_device_ids"] for d in r["devices"]] == [
                [kubelet.cdi_id(c.uid, i)]
                for i in range(len(r["devices"]))], r
            out[c.uid] = self.spec_cpus(c.uid, len(r["devices"]))
            # The spec and the daemon's own record agree.
            assert held.get(c.uid) == out[c.uid], (held, out)
        return out

    def spec(self, uid):
        with open(kubelet.cdi_path(self.cdi_dir, uid)) as f:
            return json.load(f)

    def spec_cpus(self, uid, ndev):
        """The claim's CPUs as its CDI spec says: the spec is valid, has
        ndev devices named claim-<uid>-<i>, each with the one variable."""
        spec = self.spec(uid)
        assert cdi_problems(spec) == [], (cdi_problems(spec), spec)
        assert spec["kind"] == DRIVER + "/device", spec
        assert [d["name"] for d in spec["devices"]] == [
            "claim-%s-%d" % (uid, i) for i in range(ndev)], spec
        envs = [d["containerEdits"]["env"] for d in spec["devices"]]
        assert all(e == envs[0] and len(e) == 1 for e in envs), spec
        key, _, value = envs[0][0].partition("=")
        assert key == "DRA_CPUSET_" + uid, spec
        return parse_cpuset(value)


def rpc_error(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except grpc.RpcError as e:
        return e
    raise AssertionError("call answered, wanted a gRPC error")


def counters(env):
    """{(name, label value): count} of every labelled counter."""
    text = env.s.d.admin("metrics")["result"]["text"]
    out = {}
    for m in re.finditer(r'^topoaware_([a-z_]+)_total\{[a-z_]+="([^"]*)"\}'
                         r' (\d+)$', text, re.M):
        out[(m.group(1), m.group(2))] = int(m.group(3))
    return out


# -- registration ------------------------------------------------------

def test_registration():
    with Env() as env:
        env.start(register=False)
        # The DRA socket listens before the registration socket appears.
        assert kubelet.wait_socket(env.k.reg_socket, 10)
        endpoint = os.path.join(env.k.kubelet_dir, "plugins", DRIVER,
                                "dra.sock")
        assert kubelet.wait_socket(endpoint, 0)
        st = env.status()["dra"]
        assert st["registered"] is False, st
        info = env.k.register()
        # protocols.md 3.3, checked again here so a change of the stand-in
        # cannot hide it.
        assert info.type == "DRAPlugin"
        assert info.name == DRIVER
        assert info.endpoint == endpoint
        assert list(info.supported_versions) == ["v1.DRAPlugin",
                                                 "v1beta1.DRAPlugin"]
        st = env.status()["dra"]
        assert st["registered"] is True and st["error"] is None, st
        assert st["socket"] == endpoint, st
        assert st["registrationSocket"] == env.k.reg_socket, st
        assert st["prepared"] == 0, st
        # The kubelet's monitor calls GetInfo again on the same connection.
        for _ in range(3):
            assert env.k.get_info(timeout=5).name == DRIVER
        # Every bad connection is gone; the kubelet's stays, and the cut
        # request left nothing in flight.
        st = env.s.wait_status(lambda st: st["dra"]["connections"] == 1)
        assert st["dra"]["inFlight"] == 0, st["dra"]
        env.stop()
    # Both sockets go on a clean exit.
    assert not os.path.exists(env.k.reg_socket)
    assert not os.path.exists(endpoint)


def test_registration_refused():
    with Env() as env:
        env.start(register=False)
        env.k.register(refuse="no handler for DRAPlugin")
        st = env.status()["dra"]
        assert st["registered"] is False, st
        assert st["error"] == "no handler for DRAPlugin", st
        # A later success clears the error.
        env.k.notify(True)
        st = env.status()["dra"]
        assert st["registered"] is True and st["error"] is None, st
        env.stop()


def test_prepare_before_sync_unavailable():
    with Env() as env:
        env.start(serve=False)
        c = env.claim([result(dev(0), 1)])
        e = rpc_error(env.k.prepare, [c], timeout=CALL_TIMEOUT)
        assert e.code() == grpc.StatusCode.UNAVAILABLE, e
        # Nothing was taken or written.
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))
        # v1beta1 the same.
        e = rpc_error(env.k.prepare, [c], version="v1beta1",
                      timeout=CALL_TIMEOUT)
        assert e.code() == grpc.StatusCode.UNAVAILABLE, e
        env.rt.serve()
        env.s.wait_status(lambda st: st["nri"]["synchronized"])
        cpus = env.prepare_ok([c])[c.uid]
        assert len(cpus) == 1 and cpus <= env.m.nodes[0], cpus
        env.stop()


# -- the n4c16 scenario --------------------------------------------------

def test_n4c16_scenario():
    with Env() as env:
        env.start()
        m, rt = env.m, env.rt
        nodes = m.nodes
        assert sorted(nodes) == [0, 1, 2, 3], nodes
        grantable = {n: cpus - RESERVED - m.isolated
                     for n, cpus in nodes.items()}

        # pod4: a BestEffort container placed before any claim.
        pod4 = rt.make_pod("pod4", qos="BestEffort")
        ctr4 = rt.make_container(pod4, "c")
        rt.create_container(pod4, ctr4)
        be = parse_cpuset(rt.cpus(ctr4.id))
        home = [n for n in nodes if be and be <= nodes[n]]
        assert len(home) == 1, rt.cpus(ctr4.id)
        home = home[0]
        claimed = set()

        def pushed():
            return len(rt.pushed)

        def prepare(name, node, n, **kw):
            nonlocal be
            c = env.claim([result(dev(node), n)], name=name, **kw)
            before = pushed()
            cpus = env.prepare_ok([c])[c.uid]
            assert len(cpus) == n and cpus <= grantable[node], cpus
            assert not cpus & claimed, (cpus, claimed)
            claimed.update(cpus)
            want = be - cpus
            if want != be:
                # Moved off at once, by an UpdateContainers of its own.
                assert rt.wait_pushed(lambda p: len(p) > before,
                                      timeout=10), rt.pushed
                assert parse_cpuset(rt.cpus(ctr4.id)) == want, \
                    rt.cpus(ctr4.id)
            else:
                assert pushed() == before, rt.pushed[before:]
            be = want
            return c, cpus

        # pod0: every grantable CPU of node 3.
        c0, p0 = prepare("pod0", 3, 3)
        assert p0 == nodes[3] - RESERVED
        # pod1 and pod2: a thread-sibling pair of node 1 each.
        c1, p1 = prepare("pod1", 1, 2)
        assert m.is_whole_cores(p1), p1
        c2, p2 = prepare("pod2", 1, 2)
        assert m.is_whole_cores(p2) and p1 | p2 == nodes[1], (p1, p2)
        # pod3 cannot have node 1 until pod1 is gone.
        c3 = env.claim([result(dev(1), 2)], name="pod3")
        got = env.k.prepare([c3], timeout=CALL_TIMEOUT)
        err = got[c3.uid]["error"]
        assert "node #1" in err and "2 CPUs requested, only 0 free" in err, \
            got
        assert got[c3.uid]["devices"] == [], got
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c3.uid))
        assert env.k.unprepare([c1]) == {c1.uid: ""}
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c1.uid))
        claimed -= p1
        _, p3 = prepare("pod3", 1, 2, uid=c3.uid)
        assert p3 == p1, (p3, p1)

        # pod5 claims 2 CPUs of pod4's node: taken from pod4's cpuset.
        assert home not in (1, 3), home
        before_be = set(be)
        c5, p5 = prepare("pod5", home, 2)
        assert p5 <= before_be and m.is_whole_cores(p5), (p5, before_be)
        assert parse_cpuset(rt.cpus(ctr4.id)) == before_be - p5
        # Unprepare gives them back to the shared container.
        n = pushed()
        assert env.k.unprepare([c5]) == {c5.uid: ""}
        assert rt.wait_pushed(lambda p: len(p) > n, timeout=10), rt.pushed
        assert parse_cpuset(rt.cpus(ctr4.id)) == before_be
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c5.uid))

        st = env.status()["dra"]
        assert st["prepared"] == 3, st      # pod0, pod2, pod3
        env.stop()


@contextlib.contextmanager
def first_push_held(env):
    """Starts env with a shared container asking for more than a
    socket's CPUs (it shares the root pool's, which every claim and
    exclusive container takes from), holds the runtime's NRI lock as for
    an event (rt.in_one_event), and prepares a claim of one CPU of node
    0, whose push arrives and waits for the lock. Yields the container's
    id, the pushes before, and the claim's CPUs."""
    env.start()
    rt = env.rt
    pod = rt.make_pod("shared", qos="Burstable")
    ctr = rt.make_container(pod, "c", request=9000)
    rt.create_container(pod, ctr)
    assert len(parse_cpuset(rt.cpus(ctr.id))) > 8, rt.cpus(ctr.id)
    with rt.in_one_event():
        n = len(rt.received)
        yield ctr.id, n, prepare_held(env, n, "a", 0)


def held_cpus(env, cid):
    """The CPUs the daemon holds for container cid."""
    held = [g for g in env.admin("grants") if g.get("id") == cid]
    assert len(held) == 1, held
    return parse_cpuset(held[0]["cpus"])


def prepare_held(env, n, name, node):
    """Prepares a claim of one CPU of node while the runtime holds its
    NRI lock (rt.in_one_event), and waits for the push it makes to
    arrive, the (n+1)th: it waits for the lock. The claim's CPUs."""
    c = env.claim([result(dev(node), 1)], name=name)
    cpus = env.prepare_ok([c])[c.uid]
    assert env.rt.wait_pushed(lambda p: len(p) > n, timeout=10,
                              arrived=True), env.rt.received
    return cpus


def settled_on(env, cid, want):
    """Every push answered, and the last cpuset cid was given is want."""
    rt = env.rt
    assert rt.wait_pushed(lambda p: len(p) == len(rt.received),
                          timeout=10), rt.received
    last = [a[2] for a in rt.applied if a[1] == cid][-1]
    assert parse_cpuset(last) == want, (want, rt.applied)
    assert parse_cpuset(rt.cpus(cid)) == want, (want, rt.cpus(cid))


def test_a_push_applied_after_a_newer_reply_is_sent_again():
    """A claim's prepare moves a shared container by an UpdateContainers
    of its own; the runtime, busy with a CreateContainer under its NRI
    lock, applies that push only after the create, whose reply moved the
    same container again (off the new container's exclusive CPUs). The
    push's older cpuset must not be the last word: the container ends
    with what the daemon holds for it, and off the exclusive CPUs."""
    with Env() as env:
        rt = env.rt
        with first_push_held(env) as (cid, n, claimed):
            # Its push waits for the lock; this create goes on under it.
            gp = rt.make_pod("excl", qos="Guaranteed")
            g = rt.make_container(gp, "c", request=1000, limit=1000)
            resp = rt.create_container(gp, g)
            excl = parse_cpuset(resp.adjust.linux.resources.cpu.cpus)
            assert excl and not excl & claimed, (excl, claimed)
        # The create took CPUs of the container's pool, so it moved it.
        assert [u.container_id for u in resp.update].count(cid) == 1, \
            resp.update
        want = held_cpus(env, cid)
        assert not want & (excl | claimed), (want, excl, claimed)
        # The held push is applied now, after the create's reply, and
        # the container is pushed again after it.
        assert rt.wait_pushed(lambda p: len(p) > n + 1, timeout=10), \
            rt.pushed
        settled_on(env, cid, want)
        env.stop()


def test_pushes_wait_for_the_round_before():
    """While the runtime holds a push behind its NRI lock, the next
    moves of the same container wait for it to be answered: sent at
    once, the runtime could apply the two in either order. Then one
    push carries the latest cpuset."""
    with Env() as env:
        rt = env.rt
        with first_push_held(env) as (cid, n, claimed):
            claimed |= env.prepare_ok([env.claim_on(1, 1, name="b")]) \
                .popitem()[1]
            # Nothing more comes while the first is held.
            assert not rt.wait_pushed(lambda p: len(p) > n + 1,
                                      timeout=0.5, arrived=True), \
                rt.received
        assert rt.wait_pushed(lambda p: len(p) == n + 2, timeout=10), \
            rt.pushed
        want = held_cpus(env, cid)
        assert not want & claimed, (want, claimed)
        settled_on(env, cid, want)
        env.stop()


def test_an_expired_push_neither_stops_the_next_nor_wins():
    """A push the runtime leaves past its deadline (300 ms here, as its
    Configure says) ends its round: the next push goes out while the
    first is still held. The runtime may then apply the two in either
    order; the late answer sends the container again, so it ends with
    what the daemon holds."""
    with Env() as env:
        env.rt.request_timeout = 300
        rt = env.rt
        with first_push_held(env) as (cid, n, claimed):
            env.s.wait_status(lambda st: st["nri"]["failedUpdates"] >= 1)
            claimed |= prepare_held(env, n + 1, "b", 1)
        want = held_cpus(env, cid)
        assert not want & claimed, (want, claimed)
        # Both applied, in whichever order, then the container again.
        assert rt.wait_pushed(lambda p: len(p) >= n + 3, timeout=10), \
            rt.pushed
        settled_on(env, cid, want)
        env.stop()


def test_device_fields_and_cdi():
    with Env() as env:
        env.start()
        share = [new_uid(), new_uid()]
        c = env.claim([
            result(dev(0), 2, request="cpus/big", share_id=share[0]),
            result(dev(2), 1, request="other", share_id=share[1]),
            # Another driver's result: not ours, not answered.
            result("gpu0", 1, request="gpu", driver="gpu.example.com",
                   pool="elsewhere")])
        got = env.k.prepare([c], timeout=CALL_TIMEOUT)
        assert list(got) == [c.uid], got
        r = got[c.uid]
        assert r["error"] == "", r
        assert r["devices"] == [
            {"request_names": ["cpus"], "pool_name": NODE,
             "device_name": dev(0),
             "cdi_device_ids": [kubelet.cdi_id(c.uid, 0)],
             "share_id": share[0]},
            {"request_names": ["other"], "pool_name": NODE,
             "device_name": dev(2),
             "cdi_device_ids": [kubelet.cdi_id(c.uid, 1)],
             "share_id": share[1]}], r
        # The spec existed when the answer came; one device per result.
        cpus = env.spec_cpus(c.uid, 2)
        assert len(cpus & env.m.nodes[0]) == 2, cpus
        assert len(cpus & env.m.nodes[2]) == 1, cpus
        assert len(cpus) == 3 and not cpus & RESERVED, cpus
        # Only our spec files are in the folder, named for the claim.
        assert kubelet.cdi_specs(env.cdi_dir) == [
            "%s-device_%s.json" % (DRIVER, c.uid)], os.listdir(env.cdi_dir)
        env.stop()


def test_v1beta1():
    with Env() as env:
        env.start()
        c = env.claim([result(dev(1), 2, share_id=new_uid())])
        got = env.k.prepare([c], version="v1beta1", timeout=CALL_TIMEOUT)
        r = got[c.uid]
        assert r["error"] == "", r
        assert r["devices"] == [
            {"request_names": ["cpus"], "pool_name": NODE,
             "device_name": dev(1),
             "cdi_device_ids": [kubelet.cdi_id(c.uid, 0)]}], r
        cpus = env.spec_cpus(c.uid, 1)
        assert len(cpus) == 2 and env.m.is_whole_cores(cpus), cpus
        # Prepared through v1beta1, the same claim through v1: held.
        assert env.prepare_ok([c])[c.uid] == cpus
        assert env.k.unprepare([c], version="v1beta1") == {c.uid: ""}
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))
        env.stop()


def test_idempotent_prepare_and_unprepare():
    with Env() as env:
        env.start()
        c = env.claim([result(dev(2), 3)])
        first = env.prepare_ok([c])[c.uid]
        again = env.prepare_ok([c])[c.uid]
        assert first == again and len(first) == 3, (first, again)
        assert env.status()["dra"]["prepared"] == 1
        # The second prepare took nothing: the rest of node 2 is free.
        rest = env.m.nodes[2] - first
        other = env.claim([result(dev(2), len(rest))])
        assert env.prepare_ok([other])[other.uid] == rest
        assert env.k.unprepare([c]) == {c.uid: ""}
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))
        assert env.k.unprepare([c]) == {c.uid: ""}
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))
        # Never prepared at all (and not on the API server either).
        ghost = Claim("default", "ghost", new_uid())
        assert env.k.unprepare([ghost]) == {ghost.uid: ""}
        assert env.status()["dra"]["prepared"] == 1
        # The released CPUs can be claimed again.
        third = env.claim([result(dev(2), 3)])
        assert env.prepare_ok([third])[third.uid] == first
        env.stop()


def test_claims_survive_restart():
    with Env() as env:
        env.start()
        c = env.claim([result(dev(2), 2)])
        cpus = env.prepare_ok([c])[c.uid]
        env.restart()
        # Held by the new process: preparing again returns the same CPUs
        # and takes nothing, and another claim gets the rest of the node.
        assert env.status()["dra"]["prepared"] == 1
        assert env.prepare_ok([c])[c.uid] == cpus
        rest = env.claim([result(dev(2), 2)])
        assert env.prepare_ok([rest])[rest.uid] == env.m.nodes[2] - cpus
        # Unprepared by a process that did not prepare it.
        assert env.k.unprepare([c]) == {c.uid: ""}
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))
        assert env.status()["dra"]["prepared"] == 1
        env.stop()


def test_specs_of_claims_not_held_removed_at_start():
    """A spec left by a release whose removal never happened (a crash, a
    full disk) names CPUs nobody holds: it goes at the next start. The
    spec of a held claim and other drivers' files stay."""
    with Env() as env:
        env.start()
        c = env.claim([result(dev(1), 1)])
        env.prepare_ok([c])
        held = kubelet.cdi_path(env.cdi_dir, c.uid)
        with open(held) as f:
            spec = f.read()
        gone = new_uid()
        other = kubelet.cdi_path(env.cdi_dir, gone, driver="gpu.example.com")

        def leave_specs():
            with open(kubelet.cdi_path(env.cdi_dir, gone), "w") as f:
                f.write(spec.replace(c.uid, gone))
            with open(other, "w") as f:
                f.write("{}")
        env.restart(while_down=leave_specs)
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, gone))
        with open(held) as f:
            assert f.read() == spec
        assert os.path.exists(other)
        assert "removed the CDI spec of claim %s" % gone in env.d.output()
        env.stop()


def test_full_spares_emptied_at_start():
    """A crash between filling a spare and renaming it into place, or
    between keeping a removed spec as a spare and emptying it, leaves a
    spare with a spec in it. The next start empties it, before any claim
    is prepared or unprepared; what is not a plain file is left alone
    (the folder is shared)."""
    with Env() as env:
        env.start()
        c = env.claim([result(dev(1), 1)])
        cpus = env.prepare_ok([c])[c.uid]
        held = kubelet.cdi_path(env.cdi_dir, c.uid)
        with open(held) as f:
            spec = f.read()
        gone = new_uid()
        full = [os.path.join(env.cdi_dir, ".topoaware-spare.%d" % n)
                for n in (3, 12)]
        odd = os.path.join(env.cdi_dir, ".topoaware-spare.40")

        def leave_spares():
            with open(full[0], "w") as f:
                f.write(spec)
            with open(full[1], "w") as f:
                f.write(spec.replace(c.uid, gone))
            os.mkdir(odd)
        env.restart(while_down=leave_spares)
        for path in full:
            assert os.path.getsize(path) == 0, path
        inodes = {os.stat(p).st_ino for p in full}
        assert os.path.isdir(odd)
        os.rmdir(odd)
        assert kubelet.cdi_specs(env.cdi_dir) == [os.path.basename(held)]
        with open(held) as f:
            assert f.read() == spec
        # They serve with those made ahead: a new claim's spec is one of
        # them, filled.
        ready = spares(env.cdi_dir)
        assert inodes <= set(ready.values()), ready
        other = env.claim([result(dev(2), 1)])
        env.prepare_ok([other])
        path = kubelet.cdi_path(env.cdi_dir, other.uid)
        assert os.stat(path).st_ino in ready.values(), path
        assert env.spec_cpus(c.uid, 1) == cpus
        env.stop()


def spares(cdi_dir):
    """{name: inode} of the CDI spares (plain files) in cdi_dir."""
    out = {}
    for name in os.listdir(cdi_dir):
        st = os.lstat(os.path.join(cdi_dir, name))
        if name.startswith(".topoaware-spare.") and stat.S_ISREG(st.st_mode):
            out[name] = st.st_ino
    return out


def test_cdi_spares_made_ahead():
    """With DRA, 8 empty spares (mode 0644) wait in the CDI folder from
    the start, so a prepare's spec is written into one: no inode is made
    before its answer. The one used is made again after the answer. When
    that fails (a folder of someone else's at the spare's name), the
    failure is logged once and counted, and the prepares go on. A CDI
    folder removed while the daemon runs is made again by the next
    prepare."""
    with Env() as env:
        env.start()
        ready = spares(env.cdi_dir)
        assert len(ready) == 8, ready
        for name in ready:
            st = os.stat(os.path.join(env.cdi_dir, name))
            assert st.st_size == 0 and st.st_mode & 0o7777 == 0o644, name
        c = env.claim([result(dev(1), 1)])
        env.prepare_ok([c])
        path = kubelet.cdi_path(env.cdi_dir, c.uid)
        assert os.stat(path).st_ino in ready.values()
        tap.wait_for(lambda: len(spares(env.cdi_dir)) == 8,
                     "the spare used made again")
        assert not set(spares(env.cdi_dir).values()) & \
            {os.stat(path).st_ino}

        # The next name the daemon will give is taken.
        last = max(int(n.rsplit(".", 1)[1]) for n in spares(env.cdi_dir))
        os.mkdir(os.path.join(env.cdi_dir, ".topoaware-spare.%d" %
                              (last + 1)))
        for node in (2, 3):
            other = env.claim([result(dev(node), 1)])
            env.prepare_ok([other])
        tap.wait_for(lambda: env.d.errors("cdi_spare") == 1,
                     "the failure counted")
        assert env.d.output().count("make a spare in") == 1, \
            env.d.output()
        assert len(spares(env.cdi_dir)) == 6

        shutil.rmtree(env.cdi_dir)
        gone = env.claim([result(dev(0), 1)])
        cpus = env.prepare_ok([gone])[gone.uid]
        assert len(cpus) == 1
        assert kubelet.cdi_specs(env.cdi_dir) == [
            os.path.basename(kubelet.cdi_path(env.cdi_dir, gone.uid))]
        env.stop()


def test_lost_specs_written_again_at_start():
    """Specs are not synced when a claim is prepared: the journal holds
    the claim, and every held claim's spec is written again at start. A
    spec lost (deleted) or torn (emptied) while the daemon was down comes
    back whole, with one device per allocation result."""
    with Env() as env:
        env.start()
        two = env.claim([result(dev(1), 1), result(dev(1), 1)])
        one = env.claim([result(dev(2), 1)])
        cpus = env.prepare_ok([two, one])
        specs = {}
        for c in (two, one):
            with open(kubelet.cdi_path(env.cdi_dir, c.uid)) as f:
                specs[c.uid] = f.read()

        def lose_specs():
            os.unlink(kubelet.cdi_path(env.cdi_dir, two.uid))
            open(kubelet.cdi_path(env.cdi_dir, one.uid), "w").close()
        env.restart(while_down=lose_specs)
        for c, ndev in ((two, 2), (one, 1)):
            with open(kubelet.cdi_path(env.cdi_dir, c.uid)) as f:
                assert f.read() == specs[c.uid], c.uid
            assert env.spec_cpus(c.uid, ndev) == cpus[c.uid]
        env.stop()


def test_bad_claims_per_claim_errors():
    with Env() as env:
        env.start()
        good = env.claim([result(dev(0), 1)])
        # The API server has a claim of that name with another UID: it
        # was replaced.
        replaced = env.claim([result(dev(0), 1)])
        wrong = Claim(replaced.namespace, replaced.name, new_uid())
        unallocated = env.claim([], allocated=False)
        foreign = env.claim([result("gpu0", 1, driver="gpu.example.com")])
        missing = Claim("default", "nowhere", new_uid())
        claims = [wrong, good, unallocated, foreign, missing]
        got = env.k.prepare(claims, timeout=CALL_TIMEOUT)
        assert set(got) == {c.uid for c in claims}, got
        assert got[good.uid]["error"] == "", got
        assert len(got[good.uid]["devices"]) == 1, got
        e = got[wrong.uid]["error"]
        assert "UID" in e and wrong.uid in e, e
        e = got[unallocated.uid]["error"]
        assert "allocat" in e, e
        assert "no allocation results" in got[foreign.uid]["error"], got
        assert "not found" in got[missing.uid]["error"], got
        for c in claims:
            if c is not good:
                assert got[c.uid]["devices"] == [], got[c.uid]
                assert not os.path.exists(
                    kubelet.cdi_path(env.cdi_dir, c.uid)), c
        assert len(env.spec_cpus(good.uid, 1)) == 1
        assert env.status()["dra"]["prepared"] == 1
        # Hostile results are refused with the policy's texts, and one of
        # two results refused refuses the claim whole (R-CLAIM-3).
        hostile = {
            "which offers 3": [result(dev(3), 4)],
            'unknown device "cpudevnuma009"': [result(dev(9), 1)],
            "not a positive whole number": [result(dev(0), "1500m")],
            "othernode": [result(dev(0), 1, pool="othernode")],
            "node #2": [result(dev(1), 1), result(dev(2), 5)],
        }
        bad = {text: env.claim(res) for text, res in hostile.items()}
        got = env.k.prepare(list(bad.values()), timeout=CALL_TIMEOUT)
        for text, c in bad.items():
            assert text in got[c.uid]["error"], (text, got[c.uid])
            assert got[c.uid]["devices"] == [], got[c.uid]
            assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))
        assert env.status()["dra"]["prepared"] == 1
        # Nothing of node 1 was kept by the refused two-result claim.
        whole = env.claim([result(dev(1), 4)])
        assert env.prepare_ok([whole])[whole.uid] == env.m.nodes[1]
        env.stop()


def test_hostile_requests():
    with Env() as env:
        env.start()
        good = env.claim([result(dev(0), 1)])
        evil = [Claim("default", "c", "../../../etc/passwd"),
                Claim("default", "c", ""),
                Claim("Bad_Namespace", "c", new_uid()),
                Claim("default", "a/b", new_uid())]
        got = env.k.prepare(evil + [good], timeout=CALL_TIMEOUT)
        assert set(got) == {c.uid for c in evil + [good]}, got
        assert got[good.uid]["error"] == "", got
        for c in evil[:2]:
            assert "UID" in got[c.uid]["error"], got[c.uid]
        for c in evil[2:]:
            assert "namespace or name" in got[c.uid]["error"], got[c.uid]
        # Nothing was asked of the API server for them, and no file was
        # written anywhere but the spec of the good claim.
        paths = [r["path"] for r in env.api.recorded("GET")]
        assert not [p for p in paths if "Bad_Namespace" in p or
                    "passwd" in p or "a/b" in p], paths
        assert kubelet.cdi_specs(env.cdi_dir) == [
            os.path.basename(kubelet.cdi_path(env.cdi_dir, good.uid))]
        gone = env.k.unprepare(evil[:1], timeout=CALL_TIMEOUT)
        assert "UID" in gone[evil[0].uid], gone
        # DRA_MAX_CLAIMS (topoawared(8)): 64 claims in a call at most.
        many = [Claim("default", "m%d" % i, new_uid()) for i in range(65)]
        e = rpc_error(env.k.prepare, many, timeout=CALL_TIMEOUT)
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
        got = env.k.prepare(many[:64], timeout=CALL_TIMEOUT)
        assert len(got) == 64 and all(
            "not found" in r["error"] for r in got.values()), got
        e = rpc_error(env.k.unprepare, many, timeout=CALL_TIMEOUT)
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
        assert env.held().keys() == {good.uid}
        env.stop()


def test_cdi_write_failure_takes_nothing():
    with Env() as env:
        env.start()
        # The spec folder cannot be written: a file stands in its way.
        if os.path.isdir(env.cdi_dir):
            shutil.rmtree(env.cdi_dir)
        with open(env.cdi_dir, "w") as f:
            f.write("in the way\n")
        c = env.claim([result(dev(1), 4)])
        got = env.k.prepare([c], timeout=CALL_TIMEOUT)
        assert "CDI" in got[c.uid]["error"], got
        assert got[c.uid]["devices"] == [], got
        # The CPUs were given back: the whole node can be claimed once
        # the folder can be written.
        assert env.held() == {}
        assert env.status()["dra"]["prepared"] == 0
        os.unlink(env.cdi_dir)
        assert env.prepare_ok([c])[c.uid] == env.m.nodes[1]
        env.stop()


# -- the API server misbehaving -------------------------------------------

def test_dead_api_server():
    with Env(api=False) as env:
        env.start()
        c = Claim("default", "c", new_uid())
        t0 = time.monotonic()
        got = env.k.prepare([c], timeout=CALL_TIMEOUT)
        took = time.monotonic() - t0
        assert "cannot read ResourceClaim" in got[c.uid]["error"], got
        assert got[c.uid]["devices"] == [], got
        assert took < API_WORST, took
        assert env.status()["dra"]["prepared"] == 0
        # Unprepare needs no API server.
        assert env.k.unprepare([c]) == {c.uid: ""}
        env.stop()


def test_hanging_api_server():
    with Env() as env:
        env.start()
        c = env.claim([result(dev(0), 1)])
        env.api.hang(True)
        t0 = time.monotonic()
        fut = env.k.prepare_future([c], timeout=CALL_TIMEOUT)
        # The loop keeps serving while the claim waits.
        time.sleep(0.2)
        assert not fut.done()
        st = env.status()
        assert st["nri"]["synchronized"], st
        resp = fut.result()
        took = time.monotonic() - t0
        env.api.hang(False)
        assert "cannot read ResourceClaim" in resp.claims[c.uid].error, resp
        assert took < API_WORST, took
        # Once the server answers again, so does the claim.
        assert len(env.prepare_ok([c])[c.uid]) == 1
        env.stop()


def test_one_slow_claim_does_not_hold_another_pod():
    with Env(args=["--api-timeout", "8000"]) as env:
        env.start()
        slow = env.claim([result(dev(0), 1)], name="slow")
        fast = env.claim([result(dev(2), 1)], name="fast")
        hang = env.api.hold_claims(["slow"])
        try:
            fut = env.k.prepare_future([slow], timeout=CALL_TIMEOUT)
            time.sleep(0.2)
            # Another pod, on another connection, goes through meanwhile.
            other = env.kubelet()
            got = other.prepare([fast], timeout=CALL_TIMEOUT)
            assert got[fast.uid]["error"] == "", got
            assert not fut.done(), "the slow claim should still wait"
            assert env.status()["dra"]["prepared"] == 1
        finally:
            hang.release.set()
        resp = fut.result()
        assert resp.claims[slow.uid].error == "", resp
        assert not (env.spec_cpus(slow.uid, 1) & env.spec_cpus(fast.uid, 1))
        env.stop()


def test_unprepare_while_preparing():
    with Env(args=["--api-timeout", "8000"]) as env:
        env.start()
        c = env.claim([result(dev(0), 1)], name="slow")
        hang = env.api.hold_claims(["slow"])
        try:
            fut = env.k.prepare_future([c], timeout=CALL_TIMEOUT)
            assert hang.seen.wait(10), "the claim was never read"
            # The kubelet gives up on the pod while the claim is read.
            assert env.kubelet().unprepare([c], timeout=CALL_TIMEOUT) == \
                {c.uid: ""}
        finally:
            hang.release.set()
        err = fut.result().claims[c.uid].error
        assert "unprepared" in err, err
        # Nothing is held and no spec is left behind.
        assert not os.path.exists(kubelet.cdi_path(env.cdi_dir, c.uid))
        assert env.status()["dra"]["prepared"] == 0
        # A prepare after that takes the claim as usual.
        assert len(env.prepare_ok([c])[c.uid]) == 1
        env.stop()


def test_kubelet_gone_while_preparing():
    with Env(args=["--api-timeout", "8000"]) as env:
        env.start()
        a = env.claim([result(dev(0), 1)], name="slow-a")
        b = env.claim([result(dev(2), 1)], name="slow-b")
        hang = env.api.hold_claims(["slow-a", "slow-b"])
        try:
            # One call cancelled (RST_STREAM), one whose connection goes.
            fa = env.k.prepare_future([a], timeout=CALL_TIMEOUT)
            gone = Kubelet(env.k.kubelet_dir)
            gone.connect()
            fb = gone.prepare_future([b], timeout=CALL_TIMEOUT)
            assert hang.seen.wait(10), "the claims were never read"
            fa.cancel()
            gone.close()
            assert fa.cancelled() or fa.done()
            env.s.wait_status(lambda st: st["dra"]["connections"] == 1)
        finally:
            hang.release.set()
        del fb
        # Whether or not the daemon finished them for nobody, the
        # kubelet's retry gets what is held, and nothing else is held.
        env.s.wait_status(lambda st: st["dra"]["inFlight"] == 0)
        held = env.held()
        assert set(held) <= {a.uid, b.uid}, held
        got = env.prepare_ok([a, b])
        assert all(held[u] == got[u] for u in held), (held, got)
        assert env.held() == got
        env.stop()


def test_slow_api_server_still_answered():
    with Env() as env:
        env.start()
        c = env.claim([result(dev(1), 1)])
        # Slower than a loop tick, well within the per-attempt timeout.
        env.api.delay(API_TIMEOUT_MS / 1000.0 / 3)
        cpus = env.prepare_ok([c])[c.uid]
        env.api.delay(0)
        assert len(cpus) == 1 and cpus <= env.m.nodes[1], cpus
        env.stop()


# -- concurrency and batching -----------------------------------------

def test_concurrent_prepares():
    with Env() as env:
        env.start()
        claims = [env.claim([result(dev(n % 4), 1)], name="pod%d" % n)
                  for n in range(8)]
        # Four on separate streams of one connection, four on connections
        # of their own.
        futs = [env.k.prepare_future([c], timeout=CALL_TIMEOUT)
                for c in claims[:4]]
        others = [env.kubelet() for _ in range(4)]
        futs += [k.prepare_future([c], timeout=CALL_TIMEOUT)
                 for k, c in zip(others, claims[4:])]
        seen = set()
        for n, (c, f) in enumerate(zip(claims, futs)):
            resp = f.result()
            assert list(resp.claims) == [c.uid], resp
            assert resp.claims[c.uid].error == "", resp
            cpus = env.spec_cpus(c.uid, 1)
            assert len(cpus) == 1 and cpus <= env.m.nodes[n % 4], cpus
            assert not cpus & seen, (cpus, seen)
            seen |= cpus
        assert env.status()["dra"]["prepared"] == 8
        # And all released at once.
        futs = [k.unprepare for k in others]
        threads = [threading.Thread(target=fn, args=([c],))
                   for fn, c in zip(futs, claims[4:])]
        for t in threads:
            t.start()
        assert env.k.unprepare(claims[:4]) == {c.uid: "" for c in claims[:4]}
        for t in threads:
            t.join(CALL_TIMEOUT)
        env.s.wait_status(lambda st: st["dra"]["prepared"] == 0)
        assert kubelet.cdi_specs(env.cdi_dir) == []
        env.stop()


def wire_entries(data):
    """The keys of every field-1 entry of a response message, read from
    the wire (a map that names a UID twice would hide one when parsed)."""
    def varint(b, i):
        shift = v = 0
        while True:
            x = b[i]
            i += 1
            v |= (x & 0x7f) << shift
            shift += 7
            if not x & 0x80:
                return v, i
    keys = []
    i = 0
    while i < len(data):
        tag, i = varint(data, i)
        assert tag & 7 == 2, "unexpected wire type %d" % (tag & 7)
        n, i = varint(data, i)
        entry = data[i:i + n]
        i += n
        if tag >> 3 != 1:
            continue
        j = 0
        while j < len(entry):
            t, j = varint(entry, j)
            ln, j = varint(entry, j)
            if t >> 3 == 1:
                keys.append(entry[j:j + ln].decode())
            j += ln
    return keys


def test_duplicate_uids_one_answer():
    with Env() as env:
        env.start()
        c = env.claim([result(dev(0), 1)])
        pb = kubelet.pb().v1
        req = pb.NodePrepareResourcesRequest(claims=[
            pb.Claim(namespace=c.namespace, name=c.name, uid=c.uid)] * 3)
        data = env.k.raw(V1 + "NodePrepareResources",
                         req.SerializeToString(), timeout=CALL_TIMEOUT)
        assert wire_entries(data) == [c.uid], data
        resp = pb.NodePrepareResourcesResponse.FromString(data)
        assert resp.claims[c.uid].error == "", resp
        cpus = env.spec_cpus(c.uid, 1)
        assert len(cpus) == 1
        assert env.status()["dra"]["prepared"] == 1
        ureq = pb.NodeUnprepareResourcesRequest(claims=req.claims)
        data = env.k.raw(V1 + "NodeUnprepareResources",
                         ureq.SerializeToString(), timeout=CALL_TIMEOUT)
        assert wire_entries(data) == [c.uid], data
        # An empty request has an empty answer.
        assert env.k.prepare([], timeout=CALL_TIMEOUT) == {}
        assert env.k.unprepare([], timeout=CALL_TIMEOUT) == {}
        env.stop()


# -- malformed input ---------------------------------------------------

def test_malformed_grpc():
    with Env() as env:
        env.start()
        for path in (V1, kubelet.SERVICES["v1beta1"]):
            for method in ("NodePrepareResources", "NodeUnprepareResources"):
                # A truncated length-delimited field, and a wrong wire type.
                for junk in (b"\x0a\xff\xff\xff\x0f", b"\x0f\x01\x02"):
                    e = rpc_error(env.k.raw, path + method, junk)
                    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, \
                        (path, method, junk, e)
        for path in (V1 + "NodeWatchResources",
                     "/k8s.io.kubelet.pkg.apis.dra.v1.Nope/NodePrepare"
                     "Resources", "/x"):
            e = rpc_error(env.k.raw, path, b"")
            assert e.code() == grpc.StatusCode.UNIMPLEMENTED, (path, e)
        # The channel is fine after all that.
        c = env.claim([result(dev(0), 1)])
        assert len(env.prepare_ok([c])[c.uid]) == 1
        env.stop()


def test_malformed_http2_closes_that_connection_only():
    with Env() as env:
        env.start()
        endpoint = env.k.endpoint
        c = env.claim([result(dev(0), 1)])
        assert len(env.prepare_ok([c])[c.uid]) == 1
        cases = [
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + os.urandom(128),
            PREFACE + b"\xff" * 64,
            # A DATA frame on stream 0 after a proper SETTINGS.
            PREFACE + rawh2.frame(4, 0, 0, b"") +
            rawh2.frame(0, 1, 0, b"\0" * 5),
        ]
        for data in cases:
            s = rawh2.connect(endpoint)
            s.sendall(data)
            rawh2.read_until_closed(s)
            s.close()
        # A preface cut short, then the client's end of the stream.
        s = rawh2.connect(endpoint)
        s.sendall(PREFACE[:10])
        s.shutdown(socket.SHUT_WR)
        rawh2.read_until_closed(s)
        s.close()
        # A request cut off in the middle of its message, then gone.
        s = rawh2.connect(endpoint)
        s.sendall(PREFACE + rawh2.frame(4, 0, 0, b"") +
                  rawh2.frame(1, 0x4, 1, bytes([0x83, 0x86]) +
                        bytes([0x04, len(V1 + "NodePrepareResources")]) +
                        (V1 + "NodePrepareResources").encode() +
                        bytes([0x01, 9]) + b"localhost" +
                        bytes([0x0f, 0x10, 16]) + b"application/grpc") +
                  rawh2.frame(0, 0, 1, b"\0\0\0\0\x40\x0a"))
        time.sleep(0.1)
        s.close()
        # The kubelet's own connection kept working throughout.
        again = env.claim([result(dev(1), 1)])
        assert len(env.prepare_ok([again])[again.uid]) == 1
        assert env.k.get_info(timeout=5).name == DRIVER
        # Every bad connection is gone; the kubelet's stays, and the cut
        # request left nothing in flight.
        st = env.s.wait_status(lambda st: st["dra"]["connections"] == 1)
        assert st["dra"]["inFlight"] == 0, st["dra"]
        env.stop()


# -- status and metrics ------------------------------------------------

def test_status_and_metrics():
    with Env() as env:
        env.start()
        before = counters(env)
        good = env.claim([result(dev(0), 1)])
        bad = Claim("default", "missing", new_uid())
        got = env.k.prepare([good, bad], timeout=CALL_TIMEOUT)
        assert got[good.uid]["error"] == "" and got[bad.uid]["error"], got
        st = env.status()["dra"]
        assert st["prepared"] == 1, st
        env.k.prepare([good], version="v1beta1", timeout=CALL_TIMEOUT)
        env.k.unprepare([good], timeout=CALL_TIMEOUT)
        rpc_error(env.k.raw, V1 + "NodePrepareResources", b"\x0f")
        rpc_error(env.k.raw, V1 + "NodeWatchResources", b"")
        st = env.status()["dra"]
        assert st["registered"] is True and st["error"] is None, st
        assert st["prepared"] == 0, st
        assert isinstance(st["slices"], dict), st
        after = counters(env)
        # The DRA families; the API client's and the admin socket's own
        # counters are not this test's business.
        grew = {k: v - before.get(k, 0) for k, v in after.items()
                if v != before.get(k, 0) and (
                    k[0] in ("dra_requests", "dra_claims", "allocations",
                             "releases") or
                    (k[0] == "errors" and k[1] in ("dra_protocol",
                                                   "cdi_write")))}
        # Three prepare calls (one undecodable), one unprepare; per claim:
        # the good one twice, the missing one once, one unprepared.
        assert grew == {
            ("dra_requests", "NodePrepareResources"): 3,
            ("dra_requests", "NodeUnprepareResources"): 1,
            ("dra_claims", "prepared"): 2,
            ("dra_claims", "failed"): 1,
            ("dra_claims", "unprepared"): 1,
            ("errors", "dra_protocol"): 1,
            ("allocations", "claim"): 1,
            ("releases", "claim"): 1}, grew
        env.stop()


def test_api_request_latency():
    """Each request to the API server is timed, answered or not: the read
    of a claim that a prepare waits for, made slow, shows in
    topoaware_api_request_seconds."""
    with Env() as env:
        env.start()
        n0, s0 = env.s.d.histogram("api_request")
        good = env.claim([result(dev(0), 1)])
        env.api.delay(0.3)
        try:
            got = env.k.prepare([good], timeout=CALL_TIMEOUT)
        finally:
            env.api.delay(0)
        assert got[good.uid]["error"] == "", got
        n1, s1 = env.s.d.histogram("api_request")
        assert n1 > n0 and s1 - s0 >= 0.3, (n0, s0, n1, s1)
        env.stop()


def test_topoawarectl_status_lines():
    """What an operator reads: registration, slices and the API server."""
    with Env() as env:
        env.start()
        tap.wait_for(lambda: env.status()["dra"]["slices"]["published"],
                     "the slices published")
        r = subprocess.run([os.path.join(tap.builddir(), "topoawarectl"),
                            "--socket", env.d.admin_socket, "status"],
                           capture_output=True, text=True, timeout=15)
        assert r.returncode == 0, r.stderr
        lines = {ln[:19].strip(): ln[20:] for ln in r.stdout.splitlines()}
        assert lines["DRA"] == "registered", r.stdout
        # n4c16 with CPU 15 reserved: four NUMA nodes, four devices.
        assert lines["ResourceSlices"].startswith(
            "published (generation "), r.stdout
        assert lines["ResourceSlices"].endswith(", 4 devices)"), r.stdout
        assert lines["API server"].startswith(env.api.url + ": "), r.stdout
        assert "0 failed" in lines["API server"], r.stdout
        assert lines["NRT object"] in ("published", "not published yet"), \
            r.stdout
        env.stop()


if __name__ == "__main__":
    tap.run(globals())
