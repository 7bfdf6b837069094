"""topoawarectl explain through the real daemon: a Guaranteed and a
BestEffort container created over NRI are explained with the rule that
decided, as text and as JSON; a container of the reserved namespace comes
from the root; unknown ids and a missing argument are errors of their
own; a restart keeps placements but says their reasons are gone."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from scorer import RULES  # noqa: E402
from draenv import DraEnv  # noqa: E402
from nri_runtime import Session, parse_cpuset  # noqa: E402

CONFIG = {"reservedResources": {"cpu": "cpuset:15"}}


def ctl(s, *args):
    return subprocess.run([os.path.join(tap.builddir(), "topoawarectl"),
                           "--socket", s.d.admin_socket] + list(args),
                          capture_output=True, text=True, timeout=15)


def create(s, name, qos, cpu, ns="default"):
    rt = s.rt
    p = rt.make_pod(name, namespace=ns, qos=qos)
    c = rt.make_container(p, "c", request=cpu,
                          limit=cpu if qos == "Guaranteed" else 0)
    rt.create_container(p, c)
    return c.id


def explain_json(s, cid):
    r = ctl(s, "--json", "explain", cid)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_explain_says_the_rule_and_the_pick():
    with Session(CONFIG, sysfs_root=tap.n4c16()) as s:
        s.start()
        g = create(s, "g", "Guaranteed", 2000)
        be = create(s, "be", "BestEffort", 0)
        x = explain_json(s, g)
        d = x["decision"]
        assert d["how"] == "scored", d
        cands = d["candidates"]
        assert cands[0]["outcome"] == "chosen"
        # Node 3 holds the reserved CPU 15: one CPU less to slice.
        lost = {c["pool"]: c["outcome"] for c in cands[1:]}
        assert lost["NUMA node #3"] == "lost on sliceable capacity", lost
        assert d["rule"] == cands[1]["outcome"][len("lost on "):]
        assert d["rule"] in RULES
        # The CPUs it holds are those the runtime was given.
        held = s.rt.containers[g].linux.resources.cpu.cpus
        assert x["allocation"]["exclusive"] == held == x["pinned"]["cpus"]
        assert x["allocation"]["pickedBy"] == ["idle cores"], x
        assert x["request"]["qos"] == "Guaranteed"
        assert x["request"]["exclusiveCPUs"] == 2
        # The text says the same.
        r = ctl(s, "explain", g)
        assert r.returncode == 0, r.stderr
        assert "decided by \"%s\"" % d["rule"] in r.stdout, r.stdout
        assert "lost on sliceable capacity" in r.stdout
        assert "picked by idle cores" in r.stdout
        assert "Guaranteed, 2 exclusive CPUs" in r.stdout, r.stdout
        # A BestEffort container: by score, no exclusive CPU picked.
        x = explain_json(s, be)
        assert x["decision"]["how"] == "scored"
        assert x["allocation"]["exclusive"] == ""
        assert x["allocation"]["pickedBy"] == []
        s.stop()


def test_reserved_unknown_and_restart():
    with Session(CONFIG, sysfs_root=tap.n4c16()) as s:
        s.start()
        k = create(s, "dns", "Burstable", 100, ns="kube-system")
        g = create(s, "g", "Guaranteed", 1000)
        x = explain_json(s, k)
        assert x["decision"]["how"] == "root", x
        assert x["request"]["type"] == "reserved"
        r = ctl(s, "explain", "no-such-container")
        assert r.returncode == 1
        assert "no container \"no-such-container\"" in r.stderr, r.stderr
        r = ctl(s, "explain", "claim:nope")
        assert r.returncode == 1 and "no claim" in r.stderr, r.stderr
        r = ctl(s, "explain")
        assert r.returncode == 2 and "container id" in r.stderr, r.stderr
        before = explain_json(s, g)["allocation"]
        s.d.stop()
        s.rt.drop()
        s.d.start()
        s.rt.serve()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        x = explain_json(s, g)
        assert x["allocation"]["exclusive"] == before["exclusive"]
        # Kept where it was, by a Synchronize, or not known at all.
        assert x["decision"]["how"] in ("unknown", "kept"), x
        if x["decision"]["how"] == "kept":
            assert x["decision"]["first"] is None, x
        r = ctl(s, "explain", g)
        assert "before the daemon's last start" in r.stdout, r.stdout
        s.stop()


def test_a_claim_and_its_container():
    """A claim prepared by the kubelet stand-in and the container the
    claim names: the claim's CPUs, node pool, the allocator's steps and
    consumers; the container pinned to them."""
    with DraEnv() as env:
        env.start()
        c = env.claim_on(1, 2, consumers=["claimer"])
        key, value = env.prepare_env(c)
        cid, cpus, _ = env.create("claimer", env=["%s=%s" % (key, value)])
        x = explain_json(env.s, "claim:" + c.uid)
        assert x["kind"] == "claim" and x["uid"] == c.uid, x
        assert parse_cpuset(x["cpus"]) == parse_cpuset(value) == cpus
        assert x["pool"] == "NUMA node #1", x
        assert x["pickedBy"] == ["idle cores"], x
        assert x["decision"]["how"] == "claim", x
        x = explain_json(env.s, cid)
        assert x["decision"]["how"] == "claims", x
        assert x["claims"] == [c.uid], x
        r = ctl(env.s, "explain", "claim:" + c.uid)
        assert r.returncode == 0, r.stderr
        assert "picked by idle cores" in r.stdout, r.stdout
        env.stop()


tap.run(globals())
