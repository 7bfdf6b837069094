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
import subprocess
import sys
import uuid

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
import kubelet  # noqa: E402
from fake_apiserver import FakeApiServer  # noqa: E402
from kubelet import Kubelet, resource_claim, result  # noqa: E402
from nri_runtime import CallError, Machine, Session, parse_cpuset  # noqa

NODE = "testnode"               # t/lib/daemon.py passes --node-name
ISOLATED = {12, 13}
RESERVED = {15}
CONFIG = {"reservedResources": {"cpu": "cpuset:15"}}
API_ARGS = ["--api-timeout", "1000", "--api-retries", "1",
            "--api-backoff", "100"]
CALL_TIMEOUT = 20.0
LINE = re.compile(r'^([A-Z_]+)="([^"\\$`]*)"$')

_machine = []


def machine():
    """The n4c16 sysfs tree with two isolated CPUs, made once."""
    if not _machine:
        d = os.path.join(tap.tmpdir(), "n4c16i")
        r = subprocess.run(
            [os.path.join(tap.builddir(), "topoaware-mksysfs"),
             "packages=2,nodes=2,cores=2,threads=2,numbering=adjacent,"
             "mem=2G,isolated=12-13", d],
            capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        _machine.append(d)
    return _machine[0]


def dev(node):
    return "cpudevnuma%03d" % node


def fmt(cpus):
    """The kernel's list form of a set of CPUs, written here: runs of two
    or more as a-b."""
    out = []
    run = []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(run)
        run = [c]
    if run:
        out.append(run)
    return ",".join(str(r[0]) if len(r) == 1 else "%d-%d" % (r[0], r[-1])
                    for r in out)


class Env:
    """The daemon on n4c16, a runtime, a fake API server and a kubelet."""

    def __init__(self):
        self.folder = tap.tmpdir()
        self.api = FakeApiServer().start()
        self.api.set_node(NODE, str(uuid.uuid4()))
        kc = self.api.kubeconfig(self.folder)
        self.s = Session(CONFIG, sysfs_root=machine(), folder=self.folder,
                         args=["--kubeconfig", kc] + API_ARGS)
        self.k = Kubelet(os.path.join(self.folder, "kubelet"))
        self.cdi_dir = os.path.join(self.folder, "cdi")
        self.m = Machine(machine())
        assert self.m.isolated == ISOLATED, self.m.isolated

    @property
    def rt(self):
        return self.s.rt

    @property
    def d(self):
        return self.s.d

    def start(self):
        self.s.start()
        self.s.wait_status(lambda st: st["nri"]["synchronized"])
        self.k.register()
        return self

    def restart(self):
        """SIGTERM, then the same folders again; the runtime reconnects
        and synchronizes with the containers it still runs."""
        self.k.close()
        self.rt.drop()
        assert self.d.stop() == 0, self.d.output()
        self.d.start()
        self.rt.serve()
        self.s.wait_status(lambda st: st["nri"]["synchronized"])
        self.k = Kubelet(self.k.kubelet_dir)
        self.k.register()

    def claim(self, node, n, name):
        uid = str(uuid.uuid4())
        self.api.set_claim("default", name, resource_claim(
            uid, [result(dev(node), n)], name=name))
        return kubelet.Claim("default", name, uid)

    def prepare(self, c):
        """Prepares c; the variable its CDI spec sets, as (name, value)."""
        got = self.k.prepare([c], timeout=CALL_TIMEOUT)
        assert got[c.uid]["error"] == "", got
        return self.cdi_env(c.uid)

    def cdi_env(self, uid):
        with open(kubelet.cdi_path(self.cdi_dir, uid)) as f:
            spec = json.load(f)
        envs = {e for d in spec["devices"] for e in d["containerEdits"]["env"]}
        assert len(envs) == 1, spec
        key, _, value = envs.pop().partition("=")
        assert key == "DRA_CPUSET_" + uid, spec
        return key, value

    def create(self, name, qos="BestEffort", request=0, env=()):
        """Creates a container; the CPUs and mems of the reply."""
        rt = self.rt
        p = rt.make_pod(name, qos=qos)
        limit = request if qos == "Guaranteed" else 0
        c = rt.make_container(p, "c", request=request, limit=limit,
                              env=list(env))
        cpu = rt.create_container(p, c).adjust.linux.resources.cpu
        return c.id, parse_cpuset(cpu.cpus), parse_cpuset(cpu.mems)

    def grants(self):
        r = self.d.admin("grants")
        assert r["ok"], r
        return r["result"]

    def container_grant(self, cid):
        g = [g for g in self.grants() if g.get("id") == cid]
        assert len(g) == 1, (cid, self.grants())
        return g[0]

    def claims(self):
        r = self.d.admin("claims")
        assert r["ok"], r
        return {g["claim"]: parse_cpuset(g["cpus"]) for g in r["result"]}

    def resources_path(self, cid):
        return os.path.join(self.d.state_dir, "containers", cid,
                            "resources.sh")

    def resources(self, cid):
        """resources.sh as {key: value}; every line KEY="value", sorted."""
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

    def stop(self):
        self.k.close()
        try:
            self.s.stop()
        finally:
            self.api.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.k.close()
        self.s.__exit__(*exc)
        self.api.stop()
        return False


def expect_pinned(env, cid, cpus, mems, want):
    """cid is claim-pinned to want, with want's NUMA nodes as mems."""
    assert cpus == want, (cid, cpus, want)
    assert mems == env.m.nodes_of(want), (cid, mems, want)
    assert parse_cpuset(env.rt.cpus(cid)) == want, env.rt.cpus(cid)
    g = env.container_grant(cid)
    assert parse_cpuset(g["cpus"]) == want and g["pool"] == "claims", g
    assert env.resources(cid) == {"ALL_MEMS": fmt(env.m.nodes_of(want)),
                                  "DRA_CPUS": fmt(want)}, \
        env.resources(cid)


def test_container_pinned_to_its_claim():
    with Env() as env:
        env.start()
        m = env.m
        c1 = env.claim(1, 2, "one")
        key1, val1 = env.prepare(c1)
        p1 = parse_cpuset(val1)
        assert len(p1) == 2 and p1 <= m.nodes[1], val1
        c2 = env.claim(2, 1, "two")
        key2, val2 = env.prepare(c2)
        p2 = parse_cpuset(val2)
        assert len(p2) == 1 and p2 <= m.nodes[2], val2
        assert env.claims() == {c1.uid: p1, c2.uid: p2}

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
        assert not os.path.exists(env.resources_path(cid))
        assert not os.path.exists(os.path.dirname(env.resources_path(cid)))
        # The claim is still held after its container went.
        assert env.claims() == {c1.uid: p1, c2.uid: p2}
        env.stop()


def test_forged_variables_ignored():
    with Env() as env:
        env.start()
        m = env.m
        c = env.claim(0, 2, "real")
        key, val = env.prepare(c)
        held = parse_cpuset(val)
        assert len(held) == 2 and held <= m.nodes[0], val
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
        assert env.claims() == {c.uid: held}
        env.stop()


def test_pinning_survives_a_restart():
    with Env() as env:
        env.start()
        m, rt = env.m, env.rt
        c = env.claim(1, 2, "kept")
        key, val = env.prepare(c)
        held = parse_cpuset(val)
        assert len(held) == 2 and held <= m.nodes[1], val
        cid, cpus, mems = env.create("pinned", env=["%s=%s" % (key, val)])
        expect_pinned(env, cid, cpus, mems, held)
        xid, xcpus, _ = env.create("excl", qos="Guaranteed", request=1000)
        assert len(xcpus) == 1 and not xcpus & held, xcpus

        env.restart()
        assert env.claims() == {c.uid: held}
        expect_pinned(env, cid, parse_cpuset(rt.cpus(cid)),
                      parse_cpuset(rt.mems(cid)), held)
        assert parse_cpuset(env.container_grant(xid)["cpus"]) == xcpus
        # The same claim prepared again: the same CPUs, nothing taken.
        assert env.prepare(c) == (key, val)
        assert env.claims() == {c.uid: held}
        # Node 1 has 4 CPUs, 2 of them claimed: a claim for 3 falls short.
        short = env.claim(1, 3, "short")
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
        assert env.resources(iso) == {"ALL_MEMS": fmt(m.nodes_of(cpus)),
                                      "ISOLATED_CPUS": fmt(cpus)}, \
            env.resources(iso)
        # Two whole CPUs: a core of a normal node.
        ex, cpus, _ = env.create("excl", qos="Guaranteed", request=2000)
        assert len(cpus) == 2 and cpus <= shareable, cpus
        assert env.resources(ex) == {"ALL_MEMS": fmt(m.nodes_of(cpus)),
                                     "EXCLUSIVE_CPUS": fmt(cpus)}, \
            env.resources(ex)
        # One and a half: one exclusive CPU and a share of the rest.
        mix, cpus, _ = env.create("mix", qos="Guaranteed", request=1500)
        # Its exclusive CPU is listed as isolated or not by what it is.
        r = env.resources(mix)
        sh = parse_cpuset(r.get("SHARED_CPUS", ""))
        own = cpus - sh
        assert len(own) == 1 and sh and sh <= shareable, (r, cpus)
        want = {"ALL_MEMS": fmt(m.nodes_of(cpus)), "SHARED_CPUS": fmt(sh)}
        want["ISOLATED_CPUS" if own <= ISOLATED else "EXCLUSIVE_CPUS"] = \
            fmt(own)
        assert r == want, (r, want)
        # BestEffort: the shared CPUs only.
        be, cpus, _ = env.create("be")
        assert cpus and cpus <= shareable, cpus
        assert env.resources(be) == {"ALL_MEMS": fmt(m.nodes_of(cpus)),
                                     "SHARED_CPUS": fmt(cpus)}, \
            env.resources(be)
        for cid in (iso, ex, mix, be):
            assert oct(os.stat(env.resources_path(cid)).st_mode & 0o777) == \
                "0o644", cid

        # A claim that takes CPUs from the BestEffort container moves it,
        # and its resources.sh follows.
        node = [n for n, c in m.nodes.items() if c & cpus][0]
        n_pushed = len(rt.pushed)
        free = [x for x in cpus if x not in RESERVED]
        c = env.claim(node, 1 if len(free) > 1 else len(free), "moves")
        _, val = env.prepare(c)
        claimed = parse_cpuset(val)
        if claimed & cpus:
            assert rt.wait_pushed(lambda p: len(p) > n_pushed), rt.pushed
        now = parse_cpuset(rt.cpus(be))
        assert not now & claimed, (now, claimed)
        assert env.resources(be) == {"ALL_MEMS": fmt(m.nodes_of(now)),
                                     "SHARED_CPUS": fmt(now)}, \
            env.resources(be)

        # Removed with the container, by RemoveContainer or with its pod.
        rt.stop_container(ex)
        rt.remove_container(ex)
        assert not os.path.exists(env.resources_path(ex))
        rt.remove_pod(rt.containers[iso].pod_sandbox_id)
        assert not os.path.exists(env.resources_path(iso))
        assert sorted(os.listdir(os.path.join(env.d.state_dir,
                                              "containers"))) == \
            sorted([mix, be])
        env.stop()


def test_resources_sh_of_a_container_gone_while_down():
    with Env() as env:
        env.start()
        rt = env.rt
        c = env.claim(2, 1, "c")
        key, val = env.prepare(c)
        kept, _, _ = env.create("kept")
        gone, _, _ = env.create("gone", qos="Guaranteed", request=1000)
        pinned, _, _ = env.create("pinned", env=["%s=%s" % (key, val)])
        for cid in (kept, gone, pinned):
            assert os.path.exists(env.resources_path(cid)), cid
        # Two containers end while the daemon is down; the Synchronize
        # that no longer reports them is their removal.
        env.k.close()
        rt.drop()
        assert env.d.stop() == 0, env.d.output()
        del rt.containers[gone]
        del rt.containers[pinned]
        env.d.start()
        rt.serve()
        env.s.wait_status(lambda st: st["nri"]["synchronized"])
        assert {g["id"] for g in env.grants() if "id" in g} == {kept}
        assert os.path.exists(env.resources_path(kept))
        left = sorted(os.listdir(os.path.join(env.d.state_dir,
                                              "containers")))
        assert left == [kept], \
            "resources.sh of containers gone during the restart stayed: %r" \
            % left
        env.stop()


if __name__ == "__main__":
    tap.run(globals())
