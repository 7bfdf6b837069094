"""Placement on a loaded node (issue "placement under load"), through
topoaware-sim on the recorded server machine: 112 CPUs, nodes 0-3 with
CPUs n, n+4, n+8, ... (core siblings 56 apart), PMEM node 4 next to node 0
and PMEM node 5 next to node 2, kernel-isolated 4-7,60-63, and CPUs 3,11
reserved.

The load is the one run side by side with the Go policy (v0.12.2): 500
pods of 2 containers; pods 0, 10, 20, ... Guaranteed with 1 CPU; the other
odd pods BestEffort; the other even pods Burstable (10m request, 100m
limit). The Go policy's pool choice prefers the tighter memory offer of
its default memory types (DRAM and PMEM): nodes 0 and 2 hold their PMEM
node, nodes 1 and 3 are offered both PMEM nodes. So shared containers
gather on nodes 0 and 2, and 1 and 3 keep room for exclusive CPUs.

The property every case asserts, derived from the pools the simulator
shows just before the request, never from its answer: a Guaranteed
request that one NUMA node can take (enough free sharable CPUs, and
sliceable capacity left after the shared requests placed there) lands
within one NUMA node, on whole cores when its size is even and the node
has that many free whole cores."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402

CONFIG = {"reservedResources": {"cpu": "cpuset:3,11"}}


def cpus(text):
    """The kernel list form as a set of ids."""
    out = set()
    for part in (text or "").split(","):
        if part == "":
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def machine():
    """Node CPU sets and the core of every CPU, read from the recording."""
    root = os.path.join(tap.sysfs("server"), "sys", "devices", "system")
    nodes, core = {}, {}
    for n in range(4):
        with open(os.path.join(root, "node", "node%d" % n, "cpulist")) as f:
            nodes[n] = cpus(f.read().strip())
    for c in set().union(*nodes.values()):
        path = os.path.join(root, "cpu", "cpu%d" % c, "topology",
                            "thread_siblings_list")
        with open(path) as f:
            core[c] = frozenset(cpus(f.read().strip()))
    return nodes, core


NODES, CORE = machine()


class Sim:
    """The simulator on stdin, one request and one reply at a time."""

    def __init__(self, config=None):
        path = os.path.join(tap.tmpdir(), "config.json")
        with open(path, "w") as f:
            json.dump(CONFIG if config is None else config, f)
        self.p = subprocess.Popen(
            [os.path.join(tap.builddir(), "topoaware-sim"), "--sysfs-root",
             tap.sysfs("server"), "--config", path, "-"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        reply = self.p.stdout.readline()
        assert reply.endswith("\n"), "no reply to %s" % req
        return json.loads(reply)

    def ok(self, req):
        reply = self.send(req)
        assert reply["ok"] is True, (req, reply)
        return reply

    def pools(self):
        return {p["name"]: p for p in self.ok({"op": "show",
                                               "what": "pools"})["pools"]}

    def grants(self):
        return self.ok({"op": "show", "what": "grants"})["grants"]

    def close(self):
        self.p.stdin.close()
        self.p.stdout.read()
        self.p.stdout.close()
        assert self.p.wait(timeout=30) == 0


def kind(pod):
    if pod % 10 == 0:
        return "G"
    return "BE" if pod % 2 else "B"


def create(sim, pod, ctr, burstable=("10m", "100m")):
    spec = {"op": "create", "id": "p%d-c%d" % (pod, ctr),
            "name": "c%d" % ctr, "pod": "p%d" % pod, "podUID": "u%d" % pod,
            "namespace": "default"}
    k = kind(pod)
    if k == "G":
        spec.update(qos="Guaranteed", cpuRequest="1", cpuLimit="1")
    elif k == "BE":
        spec.update(qos="BestEffort")
    else:
        spec.update(qos="Burstable", cpuRequest=burstable[0],
                    cpuLimit=burstable[1])
    return sim.ok(spec)


def loaded(pods=500, burstable=("10m", "100m")):
    sim = Sim()
    for pod in range(pods):
        for ctr in range(2):
            create(sim, pod, ctr, burstable)
    return sim


def node_of(pool):
    """The NUMA node id of a pool name, None for any other pool."""
    if pool.startswith("NUMA node #"):
        return int(pool[len("NUMA node #"):])
    return None


def whole_cores(s):
    return all(CORE[c] <= s for c in s)


def takers(pools, n):
    """NUMA nodes able to take n exclusive CPUs, each with the number of
    whole cores it has free."""
    out = {}
    for name, p in pools.items():
        node = node_of(name)
        if node is None:
            continue
        free = cpus(p["freeSharable"])
        if len(free) >= n and p["allocatableShared"] >= 1000 * n:
            out[node] = sum(1 for c in free if CORE[c] <= free) // 2
    return out


def guaranteed(sim, ident, n):
    """Creates a Guaranteed n-CPU container and checks the property."""
    able = takers(sim.pools(), n)
    reply = sim.send({"op": "create", "id": ident, "name": ident,
                      "pod": ident, "podUID": "u-" + ident,
                      "namespace": "default", "qos": "Guaranteed",
                      "cpuRequest": str(n), "cpuLimit": str(n)})
    if not able:
        return reply, able
    assert reply["ok"] is True, reply
    got = cpus(reply["cpus"])
    assert len(got) == n, reply
    home = [k for k, s in NODES.items() if got <= s]
    assert len(home) == 1, ("%d CPUs split over nodes although %s could "
                            "take them" % (n, sorted(able)), reply)
    assert home[0] in able, (home, able, reply)
    assert node_of(reply["pool"]) == home[0], reply
    if n % 2 == 0 and able[home[0]] >= n // 2:
        assert whole_cores(got), ("not whole cores", reply)
    return reply, able


def per_node(sim):
    """Shared containers per node and kind: {(node, kind): count}."""
    out = {}
    for g in sim.grants():
        node = node_of(g.get("pool") or "")
        if node is None or not g["id"].startswith("p"):
            continue
        k = kind(int(g["id"][1:].split("-")[0]))
        out[(node, k)] = out.get((node, k), 0) + 1
    return out


def test_shared_containers_placed_as_go_places_them():
    """The counts recorded from the Go policy after the same load."""
    sim = loaded()
    counts = per_node(sim)
    assert [counts.get((n, "BE"), 0) for n in range(4)] == [250, 0, 250, 0]
    assert [counts.get((n, "B"), 0) for n in range(4)] == [190, 9, 190, 11]
    pools = sim.pools()
    assert [pools["NUMA node #%d" % n]["grantedShared"]
            for n in range(4)] == [1900, 90, 1900, 110]
    # Every Guaranteed 1-CPU container is exclusive and within its node.
    for g in sim.grants():
        if g["id"].startswith("p") and kind(int(g["id"][1:].split("-")[0])) \
                == "G":
            assert len(cpus(g["cpus"])) == 1, g
    sim.close()


def test_two_cpus_get_a_whole_core_on_one_node():
    sim = loaded()
    reply, able = guaranteed(sim, "big", 2)
    assert able, "the load leaves no node able to take 2 CPUs"
    assert reply["pool"] in ("NUMA node #1", "NUMA node #3"), reply
    assert "warnings" not in reply, reply
    sim.close()


def test_three_and_four_cpus():
    """On the full load no node has 3 free CPUs; with 400 pods (80
    exclusive CPUs) every size up to 4 has a node to go to."""
    for n in (3, 4):
        sim = loaded(pods=400)
        reply, able = guaranteed(sim, "big%d" % n, n)
        assert able, n
        sim.close()
    sim = loaded()
    reply, able = guaranteed(sim, "big3", 3)
    assert not able and reply["ok"] and node_of(reply["pool"]) is None, \
        reply
    sim.close()


def test_requests_in_a_row_until_the_nodes_are_full():
    """2-CPU requests one after another: each one a node can take lands
    in one node; the first no node can take climbs, and its warning names
    the rule that refused every node."""
    sim = loaded()
    climbed = None
    for i in range(12):
        reply, able = guaranteed(sim, "row%d" % i, 2)
        if not able:
            climbed = reply
            break
    assert climbed is not None, "the nodes never filled"
    if climbed["ok"]:
        assert node_of(climbed["pool"]) is None, climbed
        warning = [w for w in climbed.get("warnings", [])
                   if "not from a NUMA node" in w]
        assert len(warning) == 1, climbed
        for n in range(4):
            assert "NUMA node #%d:" % n in warning[0], warning
    sim.close()


def test_more_burstable_load():
    """Burstable 20m/200m: twice the shared requests."""
    sim = loaded(burstable=("20m", "200m"))
    for n in (2, 4):
        guaranteed(sim, "big%d" % n, n)
    sim.close()


def test_after_removals():
    """Guaranteed containers of nodes 1 and 3 go away: their CPUs come
    back, and a 4-CPU request stays within one node on whole cores."""
    sim = loaded()
    gone = 0
    for g in sim.grants():
        node = node_of(g.get("pool") or "")
        if node in (1, 3) and g["id"].startswith("p") and \
                kind(int(g["id"][1:].split("-")[0])) == "G" and gone < 8:
            sim.ok({"op": "remove", "id": g["id"]})
            gone += 1
    assert gone == 8
    reply, able = guaranteed(sim, "big", 4)
    assert able, "removals freed no node"
    sim.close()


def test_smaller_load_keeps_guaranteed_on_one_node():
    """A lighter node (200 pods): larger requests still fit one node."""
    sim = loaded(pods=200)
    for n in (2, 3, 4, 6):
        guaranteed(sim, "big%d" % n, n)
    sim.close()


tap.run(globals())
