"""topoaware-sim SCENARIO on the n4c16 machine of the upstream e2e test
test42-dra-devices (anchor §9.5, §11): DRA claims per NUMA node
(R-CLAIM-1..5, R-CLAIM-7, R-CLAIM-10), shared containers moving off and
back on claimed CPUs (R-POOL-4), container ops, and the replies to bad
lines, in file and stdin mode.

n4c16: 2 packages x 2 nodes x 2 cores x 2 threads, siblings numbered
adjacently, so node k holds CPUs 4k..4k+3 and the cores are {4k,4k+1} and
{4k+2,4k+3}. The config reserves CPU 15, the last of node 3."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from scorer import RULES  # noqa: E402

CONFIG = {"reservedResources": {"cpu": "cpuset:15"}}
RESERVED = {15}
NODES = {k: set(range(4 * k, 4 * k + 4)) for k in range(4)}
CORES = [{c, c + 1} for c in range(0, 16, 2)]


def config_file(config=None):
    path = os.path.join(tap.tmpdir(), "config.json")
    with open(path, "w") as f:
        json.dump(CONFIG if config is None else config, f)
    return path


def sim_cmd(scenario, config=None):
    return [os.path.join(tap.builddir(), "topoaware-sim"), "--sysfs-root",
            tap.n4c16(), "--config", config_file(config), scenario]


def run_file(text, config=None):
    """Runs a scenario file; returns the process and its parsed replies."""
    path = os.path.join(tap.tmpdir(), "scenario.jsonl")
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run(sim_cmd(path, config), capture_output=True, text=True,
                       timeout=60)
    return r, [json.loads(line) for line in r.stdout.splitlines()]


class Sim:
    """The simulator on stdin ("-"), one request and one reply at a time."""

    def __init__(self, config=None):
        self.p = subprocess.Popen(sim_cmd("-", config), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def send(self, req):
        line = req if isinstance(req, str) else json.dumps(req)
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        reply = self.p.stdout.readline()
        assert reply.endswith("\n"), "no reply to %s" % line
        return json.loads(reply)

    def ok(self, req):
        reply = self.send(req)
        assert reply["ok"] is True, (req, reply)
        if isinstance(req, dict) and req.get("op") == "create":
            check_explained(self.send({"op": "explain", "id": req["id"]}))
        return reply

    def close(self):
        self.p.stdin.close()
        rest = self.p.stdout.read()
        rc = self.p.wait(timeout=30)
        self.p.stdout.close()
        return rc, rest


def check_explained(reply):
    """Every placement of every scenario here names how it was decided:
    by score, the winner first and the grant's pool, each other pool lost
    on a rule of the scorer, closest first, the deciding rule the closest
    loser's."""
    assert reply["ok"] is True, reply
    x = reply["explain"]
    d = x["decision"]
    assert d["how"] in ("scored", "kept", "root", "claims", "fallback"), d
    if d["how"] == "claims":
        assert x["allocation"]["pool"] == "claims", x
        return
    assert d["pool"] == x["allocation"]["pool"], x
    if d["how"] != "scored":
        return
    cands = d["candidates"]
    assert cands[0]["outcome"] == "chosen" and cands[0]["pool"] == d["pool"]
    ranks = []
    for c in cands[1:]:
        assert c["outcome"].startswith("lost on "), c
        ranks.append(RULES.index(c["outcome"][len("lost on "):]))
    assert ranks == sorted(ranks, reverse=True), cands
    assert d["rule"] == (RULES[ranks[0]] if ranks else "the only pool"), d
    if x["allocation"]["exclusive"]:
        assert x["allocation"]["pickedBy"], x


def cpus(text):
    """The kernel list form as a set of ids."""
    out = set()
    for part in text.split(","):
        if part == "":
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def claim(uid, node, n):
    return {"op": "claim", "uid": uid,
            "results": [{"device": "cpudevnuma%03d" % node, "cpu": str(n)}]}


def updates_of(reply):
    ids = [u["id"] for u in reply["updates"]]
    assert ids == sorted(ids) and len(set(ids)) == len(ids), reply
    return {u["id"]: u for u in reply["updates"]}


def is_core(s):
    return s in CORES


def test_devices_offer_4_4_4_3():
    r, replies = run_file('{"op":"show","what":"devices"}\n')
    assert r.returncode == 0, r.stderr
    devs = replies[0]["devices"]
    assert [d["name"] for d in devs] == ["cpudevnuma%03d" % k
                                         for k in range(4)]
    # Every CPU of a node is grantable but the reserved one.
    assert [d["cpu"] for d in devs] == [len(NODES[k] - RESERVED)
                                        for k in range(4)] == [4, 4, 4, 3]
    assert [d["socketID"] for d in devs] == [0, 0, 1, 1]


def test_claims_of_test42():
    sim = Sim()
    # A BestEffort container placed before any claim.
    be = sim.ok({"op": "create", "id": "pod4-ctr", "pod": "pod4",
                 "namespace": "default", "qos": "BestEffort"})
    be_cpus = cpus(be["cpus"])
    home = [k for k in NODES if be_cpus and be_cpus <= NODES[k]]
    assert len(home) == 1, be  # shared CPUs of one NUMA pool
    home = home[0]
    assert be_cpus == NODES[home] - RESERVED, be
    claimed = set()

    def claim_ok(uid, node, n):
        nonlocal be_cpus
        reply = sim.ok(claim(uid, node, n))
        got = cpus(reply["cpus"])
        assert len(got) == n and got <= NODES[node] - RESERVED, reply
        assert not got & claimed, reply  # never granted twice
        assert reply["edits"] == ["DRA_CPUSET_%s=%s" % (uid, reply["cpus"])]
        # The shared container moves off the claimed CPUs, with one
        # update exactly when its cpuset changed.
        want = be_cpus - got
        ups = updates_of(reply)
        if want != be_cpus:
            assert set(ups) == {"pod4-ctr"}, reply
            assert cpus(ups["pod4-ctr"]["cpus"]) == want, reply
        else:
            assert ups == {}, reply
        be_cpus = want
        claimed.update(got)
        return got

    # pod0: all grantable CPUs of node 3.
    assert claim_ok("pod0", 3, 3) == NODES[3] - RESERVED == {12, 13, 14}
    # pod1, pod2: a thread-sibling pair of node 1 each, together the node.
    p1 = claim_ok("pod1", 1, 2)
    assert p1 == {4, 5} and is_core(p1)
    p2 = claim_ok("pod2", 1, 2)
    assert p2 == {6, 7} and p1 | p2 == NODES[1]
    # pod3 waits until pod1 is gone, then gets its CPUs.
    refused = sim.send(claim("pod3", 1, 2))
    assert refused["ok"] is False and "node #1" in refused["error"], refused
    assert "2 CPUs requested, only 0 free" in refused["error"], refused
    # pod4 cannot live on node 1 or 3: a pool with a BestEffort container
    # never gives away its last sharable CPU (anchor pitfall 8), and both
    # nodes were claimed whole.
    assert home not in (1, 3), be
    assert sim.ok({"op": "release", "uid": "pod1"})["updates"] == []
    claimed -= p1
    assert claim_ok("pod3", 1, 2) == p1

    # pod5 claims 2 CPUs of pod4's node: taken from pod4's cpuset.
    before = set(be_cpus)
    p5 = claim_ok("pod5", home, 2)
    assert p5 <= before and be_cpus == before - p5 and is_core(p5)
    grants = sim.ok({"op": "show", "what": "grants"})["grants"]
    ctr = [g for g in grants if g.get("id") == "pod4-ctr"]
    assert len(ctr) == 1 and cpus(ctr[0]["cpus"]) == be_cpus, grants
    assert not be_cpus & claimed
    # Deleting pod5 gives them back.
    rel = sim.ok({"op": "release", "uid": "pod5"})
    assert cpus(updates_of(rel)["pod4-ctr"]["cpus"]) == before, rel
    claimed -= p5
    # Releasing an unknown claim succeeds and changes nothing.
    assert sim.ok({"op": "release", "uid": "pod5"})["updates"] == []

    held = {"pod0": {12, 13, 14}, "pod2": {6, 7}, "pod3": {4, 5}}
    restart = sim.ok({"op": "restart"})
    assert restart["claims"] == 3 and restart["containers"] == 1, restart
    grants = sim.ok({"op": "show", "what": "grants"})["grants"]
    after = {g["claim"]: cpus(g["cpus"]) for g in grants if "claim" in g}
    assert after == held, grants
    # Still held: node 1 has nothing left, preparing again takes nothing.
    again = sim.send(claim("pod6", 1, 1))
    assert again["ok"] is False and "node #1" in again["error"], again
    same = sim.ok(claim("pod3", 1, 2))
    assert cpus(same["cpus"]) == held["pod3"], same
    rc, rest = sim.close()
    assert rc == 0 and rest == "", rest


def test_restart_with_a_config_changed_while_down():
    """A restart may bring the config the daemon starts with. A saved
    container that config cannot place shares the root pool's CPUs, and
    the reply warns of it, as topoawared's log does; a claim that would
    lose a CPU refuses the restart, and the policy stays as it was."""
    sim = Sim()
    big = sim.ok({"op": "create", "id": "big", "pod": "pb",
                  "qos": "Guaranteed", "cpuRequest": 6, "cpuLimit": 6})
    assert len(cpus(big["cpus"])) == 6, big
    sim.ok({"op": "create", "id": "s", "pod": "ps", "qos": "BestEffort"})
    same = sim.ok({"op": "restart"})
    assert same["containers"] == 2 and "warnings" not in same, same
    # Only node 0's CPUs left: 6 exclusive CPUs fit nowhere.
    left = {"reservedResources": {"cpu": "cpuset:4-15"}}
    r = sim.ok({"op": "restart", "config": left})
    assert r["containers"] == 2 and r["claims"] == 0, r
    assert len(r["warnings"]) == 1, r
    assert r["warnings"][0].startswith("container big: "), r
    assert r["warnings"][0].endswith("it shares the root pool's CPUs"), r
    grants = sim.ok({"op": "show", "what": "grants"})["grants"]
    g = [g for g in grants if g.get("id") == "big"]
    assert len(g) == 1 and g[0]["pool"] == "root", grants
    # A claim on node 2 that the next config reserves.
    sim2 = Sim()
    sim2.ok({"op": "claim", "uid": "u", "results": [
        {"device": "cpudevnuma002", "cpu": 2}]})
    bad = sim2.send({"op": "restart", "config": left})
    assert bad["ok"] is False and bad["error"].startswith("restart: "), bad
    held = sim2.ok({"op": "show", "what": "grants"})["grants"]
    assert [g["claim"] for g in held if "claim" in g] == ["u"], held
    for line in ('{"op": "restart", "config": []}',
                 '{"op": "restart", "config": {"colour": 1}}'):
        reply = sim2.send(line)
        assert reply["ok"] is False, reply
        assert reply["error"].startswith("restart: "), reply
    for s in (sim, sim2):
        rc, rest = s.close()
        assert rc == 0 and rest == "", rest


def test_bad_lines_are_answered_and_the_run_goes_on():
    lines = [
        "this is not json",
        "[1, 2]",
        '{"op": "dance"}',
        '{"uid": "a"}',
        '{"op": 7}',
        '{"op": "claim", "results": []}',
        '{"op": "claim", "uid": "a", "results": "x"}',
        '{"op": "claim", "uid": "a", "results": [{"cpu": "1"}]}',
        '{"op": "claim", "uid": "a", "results": [], "colour": 1, "size": 2}',
        '{"op": "claim", "uid": "a", "results": []}',
        '{"op": "claim", "uid": "a", "results": [{"device": "cpudevnuma000",'
        ' "cpu": "1500m"}]}',
        '{"op": "claim", "uid": "a", "results": [{"device": "cpudevnuma009",'
        ' "cpu": 1}]}',
        '{"op": "claim", "uid": "a", "results": [{"device": "cpudevnuma000"}]}',
        '{"op": "claim", "uid": "a", "results": [{"device": "cpudevnuma003",'
        ' "cpu": 4}]}',
        '{"op": "create", "id": "c", "qos": "Gold"}',
        '{"op": "create", "id": "c", "qos": "Burstable", "cpuRequest": 0.5}',
        '{"op": "create", "id": "c", "qos": "Burstable", "cpuRequest": "x"}',
        '{"op": "show", "what": "everything"}',
        '',
        '   ',
        '{"op": "claim", "uid": "a", "results": [{"device": "cpudevnuma000",'
        ' "cpu": 2}]}',
    ]
    r, replies = run_file("\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    want = [line for line in lines if line.strip()]
    assert len(replies) == len(want), r.stdout
    for reply in replies[:-1]:
        assert reply["ok"] is False and reply["error"], reply
        assert set(reply) <= {"ok", "error", "warnings"}, reply
    errors = [reply["error"] for reply in replies[:-1]]
    assert "JSON" in errors[0]
    assert "object" in errors[1]
    assert '"dance"' in errors[2]
    assert '"op"' in errors[3] and '"op"' in errors[4]
    assert '"uid"' in errors[5]
    assert '"results"' in errors[6]
    assert '"device"' in errors[7]
    assert '"colour"' in errors[8] and '"size"' in errors[8]
    # The policy's own refusals (anchor §9.4).
    assert errors[9] == "no allocation results"
    assert "not a positive whole number" in errors[10]
    assert errors[11] == 'result 0: unknown device "cpudevnuma009"'
    assert errors[12] == "result 0 consumed no dra.cpu/cpu"
    assert "which offers 3" in errors[13]
    assert '"qos"' in errors[14] and "Gold" in errors[14]
    assert '"cpuRequest"' in errors[15] and '"cpuRequest"' in errors[16]
    assert '"what"' in errors[17]
    # None of the refusals took anything: a whole core of node 0.
    last = replies[-1]
    assert last["ok"] is True and is_core(cpus(last["cpus"])), last
    assert cpus(last["cpus"]) <= NODES[0]


def test_containers():
    sim = Sim()
    be = sim.ok({"op": "create", "id": "be", "qos": "BestEffort"})
    shared = cpus(be["cpus"])
    # A Guaranteed container with 2 whole CPUs: exclusive, one core, taken
    # from the shared set of its pool if it lands there.
    g = sim.ok({"op": "create", "id": "g", "name": "app", "pod": "p",
                "namespace": "default", "qos": "Guaranteed",
                "cpuRequest": 2, "cpuLimit": "2"})
    gc = cpus(g["cpus"])
    assert is_core(gc), g
    node = [k for k in NODES if gc <= NODES[k]][0]
    assert g["mems"] == str(node), g
    ups = updates_of(g)
    if gc & shared:
        assert cpus(ups["be"]["cpus"]) == shared - gc, g
        shared -= gc
    else:
        assert ups == {}, g
    # Growing to 3 CPUs keeps the container in its node.
    up = sim.ok({"op": "update", "id": "g", "cpuRequest": "3",
                 "cpuLimit": "3000m"})
    assert len(cpus(up["cpus"])) == 3 and cpus(up["cpus"]) <= NODES[node], up
    # A container named by a claim's variable runs on the claim's CPUs
    # when its pod is among the claim's consumers.
    c = sim.ok(dict(claim("u", 2, 2), consumers=["pod-a"]))
    p = sim.ok({"op": "create", "id": "pinned", "qos": "BestEffort",
                "podUID": "pod-a",
                "env": {"DRA_CPUSET_u": c["cpus"], "PATH": "/bin"}})
    assert p["cpus"] == c["cpus"] and p["mems"] == "2", p
    assert "warnings" not in p and "refused" not in p, p
    # Another pod with the same variable is refused, and said so.
    t = sim.ok({"op": "create", "id": "thief", "qos": "BestEffort",
                "podUID": "pod-b", "env": {"DRA_CPUSET_u": c["cpus"]}})
    assert not cpus(t["cpus"]) & cpus(c["cpus"]), t
    assert len(t["refused"]) == 1 and "thief" in t["refused"][0], t
    # Until the claim is read again and names its pod too.
    r = sim.ok({"op": "consumers", "uid": "u",
                "consumers": ["pod-a", "pod-b"]})
    assert updates_of(r)["thief"]["cpus"] == c["cpus"], r
    bad = sim.send({"op": "consumers", "uid": "nope", "consumers": []})
    assert bad["ok"] is False and "not held" in bad["error"], bad
    w = sim.ok({"op": "create", "id": "liar", "qos": "BestEffort",
                "env": {"DRA_CPUSET_u": "0-15"}})
    assert cpus(w["cpus"]) != cpus(c["cpus"]), w
    assert len(w["warnings"]) == 1 and "DRA_CPUSET_u" in w["warnings"][0], w
    # Removing the Guaranteed one gives its CPUs back to its pool.
    rm = sim.ok({"op": "remove", "id": "g"})
    assert "updates" in rm
    unknown = sim.send({"op": "update", "id": "nobody", "cpuRequest": 1})
    assert unknown["ok"] is False and "nobody" in unknown["error"], unknown
    # Sync drops what the runtime no longer runs.
    sync = sim.ok({"op": "sync", "containers": [
        {"id": "be", "qos": "BestEffort"},
        {"id": "new", "qos": "Burstable", "cpuRequest": "500m"}]})
    assert "updates" in sync
    ids = [gr["id"] for gr in sim.ok({"op": "show",
                                      "what": "grants"})["grants"]
           if "id" in gr]
    assert ids == ["be", "new"], ids
    bad = sim.send({"op": "sync", "containers": [{"id": "x"}]})
    assert bad["ok"] is False and '"qos"' in bad["error"], bad
    rc, _ = sim.close()
    assert rc == 0


def test_updates_are_listed_by_id():
    """The policy names the containers an operation moved in no order;
    the scenario's reply lists them sorted by id, whatever order they
    came in."""
    sim = Sim()
    names = ["be%02d" % ((i * 7) % 48) for i in range(48)]
    for n in names:
        sim.ok({"op": "create", "id": n, "qos": "BestEffort"})
    g = sim.ok({"op": "create", "id": "g", "qos": "Guaranteed",
                "cpuRequest": 2, "cpuLimit": "2"})
    ups = updates_of(g)             # sorted, each once
    # Those of its pool, spread over the nodes: a dozen.
    assert len(ups) >= 8 and set(ups) <= set(names), g


def test_pod_name_and_labels():
    """What affinities match: the pod's name, the container's labels and
    the pod's, in create and sync, through a restart; of the wrong type,
    refused with the field named; past the cap, dropped with a warning."""
    sim = Sim()
    labels = {"app": "web", "io.kubernetes.container.name": "c",
              "io.kubernetes.pod.name": "web-0"}
    c = sim.ok({"op": "create", "id": "web", "name": "c", "pod": "p",
                "podName": "web-0", "namespace": "default",
                "qos": "Burstable", "cpuRequest": "500m",
                "labels": labels, "podLabels": {"app": "web", "x": ""}})
    assert "warnings" not in c, c
    sim.ok({"op": "sync", "containers": [
        {"id": "web", "qos": "Burstable", "cpuRequest": "500m",
         "podName": "web-0", "labels": labels, "podLabels": {"app": "web"}},
        {"id": "db", "qos": "BestEffort", "podLabels": {"tier": "db"}}]})
    r = sim.ok({"op": "restart"})
    assert r["containers"] == 2, r
    refused = [
        ({"labels": 3}, '"labels"'),
        ({"labels": {"app": 1}}, '"labels"'),
        ({"podLabels": ["app"]}, '"podLabels"'),
        ({"podLabels": {"app": None}}, '"podLabels"'),
        ({"podName": 3}, '"podName"'),
    ]
    for extra, named in refused:
        bad = sim.send(dict({"op": "create", "id": "bad",
                             "qos": "BestEffort"}, **extra))
        assert bad["ok"] is False and named in bad["error"], (extra, bad)
        bad = sim.send({"op": "sync", "containers": [
            dict({"id": "bad", "qos": "BestEffort"}, **extra)]})
        assert bad["ok"] is False and named in bad["error"], (extra, bad)
        assert "containers[0]" in bad["error"], bad
    many = sim.ok({"op": "create", "id": "many", "qos": "BestEffort",
                   "labels": {"k%d" % i: "v" for i in range(70)}})
    assert len(many["warnings"]) == 1, many
    assert "many" in many["warnings"][0] and ": 6 " in many["warnings"][0], \
        many
    ids = [gr["id"] for gr in sim.ok({"op": "show",
                                      "what": "grants"})["grants"]
           if "id" in gr]
    assert sorted(ids) == ["db", "many", "web"], ids
    rc, _ = sim.close()
    assert rc == 0


def node_of(reply):
    got = [k for k in NODES if cpus(reply["cpus"]) <= NODES[k]]
    assert len(got) == 1, reply
    return got[0]


def test_affinity_scenario():
    """A container drawn by its pod's affinity annotation to another pod's
    labels, and pushed away by the short-form anti-affinity from its pod
    mate: placements checked against n4c16's nodes."""
    sim = Sim()
    ann = "resource-policy.nri.io/affinity"
    anti = "resource-policy.nri.io/anti-affinity"
    g2 = {"qos": "Guaranteed", "cpuRequest": 2, "cpuLimit": 2}
    db = sim.ok(dict(g2, op="create", id="db", name="db", pod="dbp",
                     podName="db", podLabels={"app": "db"}))
    home = node_of(db)
    plain = sim.ok(dict(g2, op="create", id="q", name="web", pod="qp"))
    assert node_of(plain) != home, plain
    sim.ok({"op": "remove", "id": "q"})
    rule = ("web:\n- scope: {operator: AlwaysTrue}\n"
            "  match: {key: pod/labels/app, operator: Equals, "
            "values: [db]}\n")
    web = sim.ok(dict(g2, op="create", id="w", name="web", pod="wp",
                      annotations={ann: rule, anti: "side: [web]"}))
    assert node_of(web) == home, web
    side = sim.ok(dict(g2, op="create", id="s", name="side", pod="wp",
                       annotations={ann: rule, anti: "side: [web]"}))
    assert node_of(side) != home, side
    bad = sim.send(dict(g2, op="create", id="b", name="web", pod="bp",
                        annotations={ann: "web: [x"}))
    assert bad["ok"] is False and "line 2, column 1" in bad["error"], bad
    rc, _ = sim.close()
    assert rc == 0


def test_kube_labels_as_the_journal_writes_them():
    """kubeLabels bits stand for the kubelet's labels: an affinity matching
    io.kubernetes.container.name finds a container given only the bit."""
    sim = Sim()
    g2 = {"qos": "Guaranteed", "cpuRequest": 2, "cpuLimit": 2}
    db = sim.ok(dict(g2, op="create", id="db", name="db", pod="dbp",
                     kubeLabels=1))
    home = node_of(db)
    plain = sim.ok(dict(g2, op="create", id="q", name="web", pod="qp"))
    assert node_of(plain) != home, plain
    sim.ok({"op": "remove", "id": "q"})
    rule = ("web:\n- scope: {operator: AlwaysTrue}\n"
            "  match: {key: labels/io.kubernetes.container.name, "
            "operator: Equals, values: [db]}\n")
    web = sim.ok(dict(g2, op="create", id="w", name="web", pod="wp",
                      annotations={"resource-policy.nri.io/affinity": rule}))
    assert node_of(web) == home, web
    for bits, why in ((16, "from 0 to 15"), ("1", "from 0 to 15"),
                      (2, "io.kubernetes.pod.name copies a field")):
        bad = sim.send({"op": "create", "id": "b", "qos": "BestEffort",
                        "name": "b", "kubeLabels": bits})
        assert bad["ok"] is False and why in bad["error"], bad
    rc, _ = sim.close()
    assert rc == 0


def test_reconfigure():
    sim = Sim()
    sim.ok(claim("u", 3, 3))
    # Reserving a claimed CPU is refused whole (R-CONF-3).
    r = sim.send({"op": "reconfigure",
                  "config": {"reservedResources": {"cpu": "cpuset:14"}}})
    assert r["ok"] is False and "u" in r["error"], r
    r = sim.send({"op": "reconfigure", "config": {"pinCPU": "yes"}})
    assert r["ok"] is False and "pinCPU" in r["error"], r
    r = sim.send({"op": "reconfigure",
                  "config": {"dra": {"driverName": "other.example.com"}}})
    assert r["ok"] is False and "dra.driverName" in r["error"], r
    r = sim.ok({"op": "reconfigure",
                "config": {"reservedResources": {"cpu": "cpuset:0"}}})
    assert r["updates"] == []
    devs = sim.ok({"op": "show", "what": "devices"})["devices"]
    assert [d["cpu"] for d in devs] == [3, 4, 4, 4], devs
    pools = sim.ok({"op": "show", "what": "pools"})["pools"]
    root = [p for p in pools if p["parent"] is None]
    assert len(root) == 1 and root[0]["reserved"] == "0", root
    grants = sim.ok({"op": "show", "what": "grants"})["grants"]
    assert grants == [{"claim": "u", "cpus": "12-14", "mems": "",
                       "pool": grants[0]["pool"]}], grants
    rc, _ = sim.close()
    assert rc == 0


def test_exit_status():
    missing = os.path.join(tap.tmpdir(), "no-such-scenario")
    r = subprocess.run(sim_cmd(missing), capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1 and missing in r.stderr, r.stderr
    assert r.stdout == ""
    folder = tap.tmpdir()
    r = subprocess.run(sim_cmd(folder), capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1 and folder in r.stderr, r.stderr
    r = subprocess.run([os.path.join(tap.builddir(), "topoaware-sim"),
                        "--sysfs-root", os.path.join(tap.tmpdir(), "none"),
                        "-"], input="", capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1, r.stderr
    r = subprocess.run(sim_cmd("-", {"reservedResources": {"cpu": "x"}}),
                       input="", capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "reservedResources.cpu" in r.stderr, r.stderr
    # A scenario and --show, or two scenarios, are usage errors.
    r = subprocess.run(sim_cmd("-") + ["--show", "pools"], input="",
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "usage" in r.stderr, r.stderr
    r = subprocess.run(sim_cmd("-") + ["-"], input="", capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2, r.stderr
    # An empty scenario is a successful run with nothing to say.
    r = subprocess.run(sim_cmd("-"), input="\n\n", capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == "", (r.stdout, r.stderr)


# The Go e2e machine n6: a DRAM node per package, and near each an HBM
# (1G) and a PMEM (4G) node, with its distances.
N6 = ("packages=2,cores=2,threads=2,mem=2G,memnodes=4,"
      "memnodesize=1G/1G/4G/4G,distances=10:21:15:30:60:70/"
      "21:10:30:15:70:60/15:30:10:35:62:72/30:15:35:10:72:62/"
      "60:70:62:72:10:75/70:60:72:62:75:10")


def test_memory_types_on_n6():
    """A scenario's memory-type annotations pin memory by type, as the
    Go suite's n6 test01 expects before any node fills: DRAM and PMEM by
    default, else the types asked for, the default with a warning for a
    type Go does not know."""
    root = tap.mksysfs(N6, "n6")
    lines = []
    for name, value in (("c0", None), ("c1", "dram"), ("c2", "hbm"),
                        ("c3", "pmem"), ("c4", "hbm,dram"),
                        ("c5", "dram,flash")):
        ann = {} if value is None else {
            "memory-type.resource-policy.nri.io/container." + name: value}
        lines.append(json.dumps({"op": "create", "id": name, "name": name,
                                 "pod": "pod0", "namespace": "default",
                                 "qos": "Guaranteed", "cpuRequest": "100m",
                                 "cpuLimit": "100m", "annotations": ann}))
    r = subprocess.run([os.path.join(tap.builddir(), "topoaware-sim"),
                        "--sysfs-root", root, "-"],
                       input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=60)
    replies = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 0 and len(replies) == 6, (r.stdout, r.stderr)
    # Node k is package k's DRAM, 2 + k its HBM, 4 + k its PMEM.
    want = {"c0": {0, 4}, "c1": {0}, "c2": {2}, "c3": {4}, "c4": {0, 2},
            "c5": {0, 4}}
    for name, reply in zip(sorted(want), replies):
        assert reply["ok"], reply
        pkg = 0 if cpus(reply["cpus"]) <= {0, 1, 4, 5} else 1
        assert cpus(reply["mems"]) == {n + pkg for n in want[name]}, \
            (name, reply)
    assert any("flash" in w for w in replies[5].get("warnings", [])), \
        replies[5]



def test_memory_accounting_on_n6():
    """The Go suite's n6 test01 to its end through topoaware-sim: pod1's
    four containers of 2816M (hbm,dram twice, pmem twice) take one zone
    each, one per package; pod2c0's 2G of PMEM then fits no single PMEM
    node, and libmem spreads the smaller, newer request over both. The
    grants show each container's bytes and nodes; a memory-less
    scenario's fields are refused by name."""
    root = tap.mksysfs(N6, "n6")
    lines = []

    def create(name, types, mem):
        ann = {"memory-type.resource-policy.nri.io/container." + name:
               types}
        lines.append(json.dumps({"op": "create", "id": name, "name": name,
                                 "pod": name, "namespace": "default",
                                 "qos": "Guaranteed", "cpuRequest": "100m",
                                 "cpuLimit": "100m", "memLimit": mem,
                                 "annotations": ann}))
    for name, types in (("pod1c0", "hbm,dram"), ("pod1c1", "hbm,dram"),
                        ("pod1c2", "pmem"), ("pod1c3", "pmem")):
        create(name, types, "2816M")
    create("pod2c0", "pmem", "2G")
    lines.append(json.dumps({"op": "show", "what": "grants"}))
    lines.append(json.dumps({"op": "create", "id": "x", "qos": "BestEffort",
                             "memRequest": "1G"}))
    lines.append(json.dumps({"op": "create", "id": "y", "qos": "Burstable",
                             "memRequest": "1G", "oomScoreAdj": 500}))
    r = subprocess.run([os.path.join(tap.builddir(), "topoaware-sim"),
                        "--sysfs-root", root, "-"],
                       input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=60)
    replies = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(replies) == len(lines), (r.stdout, r.stderr)
    assert all(x["ok"] for x in replies[:6]), replies
    pkg = {}
    for name, reply in zip(("pod1c0", "pod1c1", "pod1c2", "pod1c3"),
                           replies):
        pkg[name] = 0 if cpus(reply["cpus"]) <= {0, 1, 4, 5} else 1
    want = {"pod1c0": {0, 2}, "pod1c1": {0, 2}, "pod1c2": {4},
            "pod1c3": {4}}
    assert pkg["pod1c0"] != pkg["pod1c1"] and pkg["pod1c2"] != pkg["pod1c3"]
    assert cpus(replies[4]["mems"]) == {4, 5}, replies[4]
    assert not replies[4]["updates"], replies[4]
    grants = {g["id"]: g for g in replies[5]["grants"] if "id" in g}
    for name, nodes in want.items():
        got = grants[name]["memory"]
        assert cpus(got["nodes"]) == {n + pkg[name] for n in nodes}, got
        assert got["bytes"] == 2816 * 10 ** 6, got
    assert grants["pod2c0"]["memory"] == {"bytes": 2 * 10 ** 9,
                                          "nodes": "4-5"}
    assert not replies[6]["ok"] and "memRequest" in replies[6]["error"]
    assert not replies[7]["ok"] and "oomScoreAdj" in replies[7]["error"]



def test_cold_start_scenario():
    """The Go coldstart_test machine through topoaware-sim: PMEM until
    the container has run its second, then DRAM too, as an update; the
    deadline is told, and bad values are refused by name."""
    root = tap.mksysfs("packages=1,cores=2,mem=2G,memnodes=1,"
                       "memnodesize=8G", "cold")
    ann = {"memory-type.resource-policy.nri.io/container.c": "pmem,dram",
           "cold-start.resource-policy.nri.io/container.c":
           "duration: 1s"}
    lines = [
        {"op": "create", "id": "c", "name": "c", "pod": "p",
         "qos": "Guaranteed", "cpuRequest": "1", "cpuLimit": "1",
         "memLimit": "256Mi", "annotations": ann},
        {"op": "time", "at": 10 ** 9},
        {"op": "start", "id": "c", "at": 1000},
        {"op": "time", "at": 1999},
        {"op": "time", "at": 2000},
        {"op": "start", "id": "nope", "at": 1},
        {"op": "time", "at": -1},
    ]
    r = subprocess.run([os.path.join(tap.builddir(), "topoaware-sim"),
                        "--sysfs-root", root, "-"],
                       input="\n".join(json.dumps(x) for x in lines) + "\n",
                       capture_output=True, text=True, timeout=60)
    replies = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(replies) == len(lines), (r.stdout, r.stderr)
    assert replies[0]["ok"] and cpus(replies[0]["mems"]) == {1}, replies[0]
    assert replies[1]["coldStarts"] == 0 and "coldNext" not in replies[1]
    assert replies[2]["coldNext"] == 2000, replies[2]
    assert replies[3]["coldStarts"] == 0 and not replies[3]["updates"]
    assert replies[4]["coldStarts"] == 1, replies[4]
    assert [(u["id"], cpus(u["mems"])) for u in replies[4]["updates"]] == \
        [("c", {0, 1})], replies[4]
    assert "coldNext" not in replies[4]
    assert not replies[5]["ok"] and "nope" in replies[5]["error"]
    assert not replies[6]["ok"] and '"at"' in replies[6]["error"]


tap.run(globals())
