"""Claims through the real sockets (SPEC R-CLAIM-9, R-CLAIM-10, R-STATE-4):
a claim prepared by the kubelet stand-in (t/lib/kubelet.py) over gRPC, a
container created through the runtime simulator (t/lib/nri_runtime.py)
whose environment carries the DRA_CPUSET_<uid> its CDI spec gives, and
the pinning the runtime applies. The container runs on exactly the
claim's CPUs, also after a restart of the daemon; the claim survives the
restart and its CPUs go to nobody else; a forged variable is ignored.
containers/<id>/resources.sh is checked against values derived from the
sysfs tree and the runtime's cpusets, and goes with the container.

The machine: n4c16 (2 packages x 2 nodes x 2 cores x 2 threads, CPUs
numbered per node: node n holds 4n..4n+3) with CPUs 12-13 isolated and
CPU 15 reserved."""

import json
import os
import re
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import daemon  # noqa: E402
import tap  # noqa: E402
from draenv import CALL_TIMEOUT, DraEnv, pod_uid  # noqa: E402
import statedoc  # noqa: E402
from nri_runtime import CallError, parse_cpuset  # noqa: E402
from nri_runtime import format_cpuset as fmt  # noqa: E402

ISOLATED = {12, 13}
RESERVED = {15}
LINE = re.compile(r'^([A-Z_]+)="([^"\\$`]*)"$')


class Env(DraEnv):
    """The daemon on n4c16 with CPUs 12-13 isolated, a runtime, a fake
    API server and a kubelet."""

    def __init__(self):
        super().__init__(sysfs_root=tap.n4c16(isolated="12-13"))
        assert self.m.isolated == ISOLATED, self.m.isolated

    def prepared(self, node, n, name, consumers=()):
        """A claim of n CPUs of NUMA node `node` for the pods consumers,
        prepared: the claim, the variable its CDI spec sets and the CPUs
        it holds."""
        c = self.claim_on(node, n, name, consumers=consumers)
        key, val = self.prepare_env(c)
        cpus = parse_cpuset(val)
        assert len(cpus) == n and cpus <= self.m.nodes[node], val
        return c, key, val, cpus

    def container_grant(self, cid):
        grants = self.admin("grants")
        g = [g for g in grants if g.get("id") == cid]
        assert len(g) == 1, (cid, grants)
        return g[0]

    def resources_path(self, cid):
        return os.path.join(self.d.state_dir, "containers", cid,
                            "resources.sh")

    def resources(self, cid, want=None):
        """resources.sh as {key: value}; every line KEY="value", sorted.
        The daemon writes it after its answer: wait for the file, and
        for want when given (up to 5 s)."""
        deadline = time.monotonic() + 5
        while True:
            try:
                got = self._resources(cid)
            except FileNotFoundError:
                got = None
            if got is not None and (want is None or got == want):
                return got
            if time.monotonic() > deadline:
                if got is None:
                    raise FileNotFoundError(self.resources_path(cid))
                return got
            time.sleep(0.02)

    def gone(self, path):
        """Whether path is gone (after the answer: waits up to 5 s)."""
        deadline = time.monotonic() + 5
        while os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.02)
        return not os.path.exists(path)

    def _resources(self, cid):
        with open(self.resources_path(cid)) as f:
            text = f.read()
        assert text.endswith("\n"), text
        lines = text[:-1].split("\n")
        assert lines == sorted(lines), text
        out = {}
        for line in lines:
            m = LINE.match(line)
            assert m, (cid, line)
            assert m.group(1) not in out, text
            out[m.group(1)] = m.group(2)
        return out


def expect_pinned(env, cid, cpus, mems, want):
    """cid is claim-pinned to want, with the memory of want's NUMA nodes
    by the default memory types as mems."""
    assert cpus == want, (cid, cpus, want)
    assert mems == env.m.default_mems(want), (cid, mems, want)
    assert parse_cpuset(env.rt.cpus(cid)) == want, env.rt.cpus(cid)
    g = env.container_grant(cid)
    assert parse_cpuset(g["cpus"]) == want and g["pool"] == "claims", g
    want = dict(env.m.mem_exports(env.m.default_mems(want)),
                DRA_CPUS=fmt(want))
    assert env.resources(cid, want) == want, \
        env.resources(cid)


def test_container_pinned_to_its_claim():
    with Env() as env:
        env.start()
        c1, key1, val1, p1 = env.prepared(
            1, 2, "one", consumers=["pinned", "guaranteed", "both"])
        c2, key2, val2, p2 = env.prepared(2, 1, "two", consumers=["both"])
        assert env.held() == {c1.uid: p1, c2.uid: p2}

        # A BestEffort container with the CDI edit, beside other variables.
        cid, cpus, mems = env.create("pinned", env=[
            "PATH=/bin", "%s=%s" % (key1, val1)])
        expect_pinned(env, cid, cpus, mems, p1)
        # A Guaranteed one gets the claim's CPUs and no grant of its own.
        before = env.d.admin("pools")["result"]
        gid, cpus, mems = env.create("guaranteed", qos="Guaranteed",
                                     request=1000,
                                     env=["%s=%s" % (key1, val1)])
        expect_pinned(env, gid, cpus, mems, p1)
        after = env.d.admin("pools")["result"]
        assert [(p["freeIsolated"], p["freeSharable"]) for p in after] == \
            [(p["freeIsolated"], p["freeSharable"]) for p in before], after
        # Two claims named: the union of both.
        uid_, cpus, mems = env.create("both", env=[
            "%s=%s" % (key2, val2), "%s=%s" % (key1, val1)])
        expect_pinned(env, uid_, cpus, mems, p1 | p2)
        # Removed with the container.
        env.rt.stop_container(cid)
        env.rt.remove_container(cid)
        assert env.gone(env.resources_path(cid))
        assert env.gone(os.path.dirname(env.resources_path(cid)))
        # The claim is still held after its container went.
        assert env.held() == {c1.uid: p1, c2.uid: p2}
        env.stop()


def test_forged_variables_ignored():
    with Env() as env:
        env.start()
        m = env.m
        c, key, val, held = env.prepared(0, 2, "real")
        other = (m.nodes[0] - held - RESERVED) or {8}
        ghost = str(uuid.uuid4())
        forged = [
            # A UID we never prepared, with the held claim's CPUs.
            ["DRA_CPUSET_%s=%s" % (ghost, val)],
            # The held claim's UID with CPUs that are not its own.
            ["%s=%s" % (key, fmt(other))],
            ["%s=%s" % (key, fmt(held | other))],
            ["%s=%s" % (key, fmt(set(list(held)[:1])))],
            ["%s=junk" % key],
            # The UID in another case is another UID.
            ["DRA_CPUSET_%s=%s" % (c.uid.upper(), val)],
        ]
        for i, envs in enumerate(forged):
            for qos, req in (("BestEffort", 0), ("Guaranteed", 1000)):
                cid, cpus, _ = env.create("f%d%s" % (i, qos[0]), qos=qos,
                                          request=req, env=envs)
                assert cpus and not cpus & held, (envs, cpus, held)
                g = env.container_grant(cid)
                assert g["pool"] != "claims", (envs, g)
                r = env.resources(cid)
                assert "DRA_CPUS" not in r, (envs, r)
                if qos == "Guaranteed":
                    assert len(cpus) == 1, (envs, cpus)
                    env.rt.stop_container(cid)
                    env.rt.remove_container(cid)
        out = env.d.output()
        assert "DRA_CPUSET_%s" % ghost in out and "ignored" in out, out
        # Nothing forged took the claim's CPUs or dropped the claim.
        assert env.held() == {c.uid: held}
        env.stop()


def test_pinning_survives_a_restart():
    with Env() as env:
        env.start()
        m, rt = env.m, env.rt
        c, key, val, held = env.prepared(1, 2, "kept", consumers=["pinned"])
        cid, cpus, mems = env.create("pinned", env=["%s=%s" % (key, val)])
        expect_pinned(env, cid, cpus, mems, held)
        xid, xcpus, _ = env.create("excl", qos="Guaranteed", request=1000)
        assert len(xcpus) == 1 and not xcpus & held, xcpus

        env.restart()
        assert env.held() == {c.uid: held}
        expect_pinned(env, cid, parse_cpuset(rt.cpus(cid)),
                      parse_cpuset(rt.mems(cid)), held)
        assert parse_cpuset(env.container_grant(xid)["cpus"]) == xcpus
        # The same claim prepared again: the same CPUs, nothing taken.
        assert env.prepare_env(c) == (key, val)
        assert env.held() == {c.uid: held}
        # Node 1 has 4 CPUs, 2 of them claimed: a claim for 3 falls short.
        short = env.claim_on(1, 3, "short")
        got = env.k.prepare([short], timeout=CALL_TIMEOUT)
        assert "3 CPUs requested, only 2 free" in got[short.uid]["error"], got
        # Exclusive containers until the machine refuses: never a claimed
        # CPU, never one given twice.
        taken = set(xcpus)
        n = 0
        while True:
            try:
                _, got_cpus, _ = env.create("g%d" % n, qos="Guaranteed",
                                            request=1000)
            except CallError:
                break
            n += 1
            assert len(got_cpus) == 1, got_cpus
            assert not got_cpus & held and not got_cpus & taken, \
                (got_cpus, held, taken)
            taken |= got_cpus
            assert n < 16, taken
        assert taken <= m.online - RESERVED - held, taken
        # The pinned container did not move meanwhile.
        assert parse_cpuset(rt.cpus(cid)) == held
        env.stop()


def test_resources_sh_contents():
    with Env() as env:
        env.start()
        m, rt = env.m, env.rt
        shareable = m.online - RESERVED - m.isolated

        # One whole CPU: isolated ones are preferred (R-POOL-2).
        iso, cpus, mems = env.create("iso", qos="Guaranteed", request=1000)
        assert len(cpus) == 1 and cpus <= ISOLATED, cpus
        want = dict(m.mem_exports(m.default_mems(cpus)),
                    ISOLATED_CPUS=fmt(cpus))
        assert env.resources(iso, want) == want, \
            env.resources(iso)
        # Two whole CPUs: a core of a normal node.
        ex, cpus, _ = env.create("excl", qos="Guaranteed", request=2000)
        assert len(cpus) == 2 and cpus <= shareable, cpus
        want = dict(m.mem_exports(m.default_mems(cpus)),
                    EXCLUSIVE_CPUS=fmt(cpus))
        assert env.resources(ex, want) == want, \
            env.resources(ex)
        # One and a half: one exclusive CPU and a share of the rest.
        mix, cpus, _ = env.create("mix", qos="Guaranteed", request=1500)
        # Its exclusive CPU is listed as isolated or not by what it is.
        r = env.resources(mix)
        sh = parse_cpuset(r.get("SHARED_CPUS", ""))
        own = cpus - sh
        assert len(own) == 1 and sh and sh <= shareable, (r, cpus)
        want = dict(m.mem_exports(m.default_mems(cpus)),
                    SHARED_CPUS=fmt(sh))
        want["ISOLATED_CPUS" if own <= ISOLATED else "EXCLUSIVE_CPUS"] = \
            fmt(own)
        assert r == want, (r, want)
        # BestEffort: the shared CPUs only.
        be, cpus, _ = env.create("be")
        assert cpus and cpus <= shareable, cpus
        want = dict(m.mem_exports(m.default_mems(cpus)),
                    SHARED_CPUS=fmt(cpus))
        assert env.resources(be, want) == want, \
            env.resources(be)
        for cid in (iso, ex, mix, be):
            assert oct(os.stat(env.resources_path(cid)).st_mode & 0o777) == \
                "0o644", cid
        # A container with CPUs of its own has its own file; a shared one
        # reads its pool's, through a link inside the state folder.
        for cid in (iso, ex, mix):
            assert not os.path.islink(
                os.path.dirname(env.resources_path(cid))), cid
        folder = os.path.dirname(env.resources_path(be))
        link = os.readlink(folder)
        assert link.startswith("../pools/"), link
        assert os.path.dirname(os.path.normpath(os.path.join(
            os.path.dirname(folder), link))) == \
            os.path.join(env.d.state_dir, "pools"), link

        # A claim that takes CPUs from the BestEffort container moves it,
        # and its resources.sh follows.
        node = [n for n, c in m.nodes.items() if c & cpus][0]
        n_pushed = len(rt.pushed)
        free = [x for x in cpus if x not in RESERVED]
        c = env.claim_on(node, 1 if len(free) > 1 else len(free), "moves")
        _, val = env.prepare_env(c)
        claimed = parse_cpuset(val)
        if claimed & cpus:
            assert rt.wait_pushed(lambda p: len(p) > n_pushed), rt.pushed
        now = parse_cpuset(rt.cpus(be))
        assert not now & claimed, (now, claimed)
        want = dict(m.mem_exports(m.default_mems(now)),
                    SHARED_CPUS=fmt(now))
        assert env.resources(be, want) == want, \
            env.resources(be)
        # The pool's file moved it; its link stayed.
        assert os.readlink(folder) == link
        # A container with a file of its own says its share as it is now,
        # whether the claim moved it or not.
        r = env.resources(mix)
        now = parse_cpuset(rt.cpus(mix))
        assert parse_cpuset(r.get("SHARED_CPUS", "")) == now - own, \
            (r, now, own)

        # Removed with the container, by RemoveContainer or with its pod.
        rt.stop_container(ex)
        rt.remove_container(ex)
        assert env.gone(os.path.dirname(env.resources_path(ex)))
        rt.remove_pod(rt.containers[iso].pod_sandbox_id)
        assert env.gone(os.path.dirname(env.resources_path(iso)))
        assert daemon.container_folders(env.d.state_dir) == \
            sorted([mix, be])
        env.stop()


def test_resources_sh_of_a_container_gone_while_down():
    with Env() as env:
        env.start()
        rt = env.rt
        c = env.claim_on(2, 1, "c", consumers=["pinned"])
        key, val = env.prepare_env(c)
        kept, _, _ = env.create("kept")
        gone, _, _ = env.create("gone", qos="Guaranteed", request=1000)
        pinned, _, _ = env.create("pinned", env=["%s=%s" % (key, val)])
        for cid in (kept, gone, pinned):
            assert env.resources(cid), cid
        # Two containers end while the daemon is down; the Synchronize
        # that no longer reports them is their removal.
        def end_two():
            del rt.containers[gone]
            del rt.containers[pinned]
        env.restart(while_down=end_two)
        assert set(env.grants()) == {kept}
        assert os.path.exists(env.resources_path(kept))
        left = daemon.container_folders(env.d.state_dir)
        assert left == [kept], \
            "resources.sh of containers gone during the restart stayed: %r" \
            % left
        env.stop()


# -- who may run on a claim's CPUs ------------------------------------------

def metric(env, name):
    """An unlabelled counter, or the sum of a labelled one."""
    text = env.d.admin("metrics")["result"]["text"]
    return sum(int(m.group(1)) for m in re.finditer(
        r"^topoaware_%s_total(?:\{[^}]*\})? (\d+)$" % name, text, re.M))


def claim_reads(env, c):
    return [r for r in env.api.recorded("GET")
            if r["path"].endswith("/resourceclaims/" + c.name)]


def test_forging_pods_are_not_pinned():
    """The exact variable of a held claim, written into its own spec by a
    pod the claim does not name, in another namespace or the same one:
    the claim is read again, the pod is not among its consumers, and it
    runs on the shared CPUs. The owner keeps the claim to itself."""
    with Env() as env:
        env.start()
        c, key, val, held = env.prepared(1, 2, "owned", consumers=["owner"])
        reads = len(claim_reads(env, c))
        cid, cpus, mems = env.create("owner", env=["%s=%s" % (key, val)])
        expect_pinned(env, cid, cpus, mems, held)
        # The owner's create needed no read: prepare told who consumes.
        assert len(claim_reads(env, c)) == reads
        for name, ns in (("thief", "other"), ("neighbour", "default")):
            tid, tcpus, _ = env.create(name, env=["%s=%s" % (key, val)],
                                       namespace=ns)
            assert tcpus and not tcpus & held, (name, tcpus, held)
            assert env.container_grant(tid)["pool"] != "claims"
            assert "DRA_CPUS" not in env.resources(tid)
            assert not parse_cpuset(env.rt.cpus(tid)) & held
        # Each was checked against the API server, not only the cache.
        assert len(claim_reads(env, c)) > reads
        out = env.d.output()
        assert "does not consume" in out and "thief" in out, out
        assert metric(env, "claim_pins_refused") == 2
        # A Guaranteed forger gets its own CPUs, never the claim's.
        gid, gcpus, _ = env.create("greedy", qos="Guaranteed", request=1000,
                                   env=["%s=%s" % (key, val)],
                                   namespace="other")
        assert len(gcpus) == 1 and not gcpus & held, gcpus
        # Nothing moved the owner; the claim is held as it was.
        assert parse_cpuset(env.rt.cpus(cid)) == held
        assert env.held() == {c.uid: held}
        assert env.admin("status")["nri"]["connected"]
        env.stop()


def test_second_consumer_added_after_prepare():
    """The kubelet prepares a claim once; a pod that comes to share it
    later is found when its container names the claim: the claim is read
    again and the container is pinned in the create's own answer."""
    with Env() as env:
        env.start()
        c, key, val, held = env.prepared(2, 1, "shared", consumers=["first"])
        fid, cpus, mems = env.create("first", env=["%s=%s" % (key, val)])
        expect_pinned(env, fid, cpus, mems, held)
        env.reserve(c, ["first", "second"])
        sid, cpus, mems = env.create("second", env=["%s=%s" % (key, val)])
        expect_pinned(env, sid, cpus, mems, held)
        # What was read is kept: after a restart both stay pinned.
        env.restart()
        for cid in (fid, sid):
            assert parse_cpuset(env.rt.cpus(cid)) == held, cid
        doc = statedoc.read_state(env.d.state_dir)
        claim = doc["grants"]["claim:" + c.uid]
        assert sorted(claim["consumers"]) == sorted(
            [pod_uid("first"), pod_uid("second")]), claim
        assert (claim["namespace"], claim["name"]) == ("default", "shared")
        env.stop()


def test_slow_api_pins_by_update_later():
    """No answer from the API server within a second: the container is
    created on the shared CPUs, said so, and pinned by an update when the
    answer comes and names its pod."""
    with Env() as env:
        env.start()
        rt = env.rt
        c, key, val, held = env.prepared(1, 1, "slow", consumers=["first"])
        env.reserve(c, ["first", "late"])
        env.api.delay(2.5)
        t0 = time.monotonic()
        lid, cpus, _ = env.create("late", env=["%s=%s" % (key, val)])
        took = time.monotonic() - t0
        assert took < 2.0, took
        assert cpus and not cpus & held, cpus
        env.api.delay(0)
        assert rt.wait_pushed(lambda p: parse_cpuset(rt.cpus(lid)) == held,
                              timeout=15), (rt.cpus(lid), held)
        assert env.container_grant(lid)["pool"] == "claims"
        assert "no answer from the API server" in env.d.output()
        env.stop()


def test_claims_saved_without_consumers_are_read_at_start():
    """A state written by an older version has no consumers: they are
    learnt from one list of the ResourceClaims at start; a container
    pinned then stays pinned."""
    with Env() as env:
        env.start()
        c, key, val, held = env.prepared(0, 1, "old", consumers=["owner"])
        cid, cpus, mems = env.create("owner", env=["%s=%s" % (key, val)])
        expect_pinned(env, cid, cpus, mems, held)

        def downgrade():
            # What an older version left: state.json of version 1 only.
            path = os.path.join(env.d.state_dir, "state.json")
            doc = statedoc.read_state(env.d.state_dir)
            for name in ("journal", "journal.prev", "state.json.prev"):
                if os.path.exists(os.path.join(env.d.state_dir, name)):
                    os.unlink(os.path.join(env.d.state_dir, name))
            doc = {"version": 1, "grants": doc["grants"]}
            g = doc["grants"]["claim:" + c.uid]
            for k in ("consumers", "namespace", "name"):
                del g[k]
            for g in doc["grants"].values():
                g.get("container", {}).pop("podUID", None)
            with open(path, "w") as f:
                json.dump(doc, f)
        env.restart(while_down=downgrade)
        assert parse_cpuset(env.rt.cpus(cid)) == held
        lists = [r for r in env.api.recorded("GET") if r["path"] ==
                 "/apis/resource.k8s.io/v1/resourceclaims"]
        assert len(lists) == 1, env.api.recorded("GET")
        deadline = time.monotonic() + 10
        while True:
            doc = statedoc.read_state(env.d.state_dir)
            g = doc["grants"]["claim:" + c.uid]
            if "consumers" in g:
                break
            assert time.monotonic() < deadline, g
            time.sleep(0.05)
        assert g["consumers"] == [pod_uid("owner")], g
        tid, tcpus, _ = env.create("thief", env=["%s=%s" % (key, val)])
        assert not tcpus & held, tcpus
        env.stop()


if __name__ == "__main__":
    tap.run(globals())
