"""topoaware-sim --show on recorded machines: the JSON shapes of the
topology, the pool tree and the DRA devices (R-TOPO, R-POOL-1, R-SLICE),
and its refusals of bad input."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402


def sim(*args, config=None):
    cmd = [os.path.join(tap.builddir(), "topoaware-sim")]
    if config is not None:
        path = os.path.join(tap.tmpdir(), "config.json")
        with open(path, "w") as f:
            f.write(config if isinstance(config, str) else json.dumps(config))
        cmd += ["--config", path]
    return subprocess.run(cmd + list(args), capture_output=True, text=True,
                          timeout=30)


def show(machine, what, config=None):
    r = sim("--sysfs-root", tap.sysfs(machine), "--show", what, config=config)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_devices_on_server_with_reserved_cpus():
    devs = show("server", "devices",
                {"reservedResources": {"cpu": "cpuset:3,11"}})
    assert [d["name"] for d in devs] == ["cpudevnuma%03d" % i
                                         for i in range(4)], devs
    # 28 CPUs a node, isolated ones grantable, reserved 3 and 11 of node 3
    # are not.
    assert [d["cpu"] for d in devs] == [28, 28, 28, 26], devs
    assert [d["socketID"] for d in devs] == [0, 1, 0, 1], devs
    assert [d["numaNode"] for d in devs] == [0, 1, 2, 3], devs
    assert all(d["smtEnabled"] is True for d in devs), devs


def test_devices_leave_out_nodes_without_grantable_cpus():
    cfg = {"availableResources": {"cpu": "cpuset:0,8,12"},
           "reservedResources": {"cpu": "cpuset:0,8"}}
    devs = show("server", "devices", cfg)
    assert [(d["name"], d["cpu"]) for d in devs] == [("cpudevnuma000", 1)]


def test_slices_on_server_with_reserved_cpus():
    r = sim("--sysfs-root", tap.sysfs("server"), "--node-name", "node-a",
            "--show", "slices",
            config={"reservedResources": {"cpu": "cpuset:3,11"}})
    assert r.returncode == 0, r.stderr
    slices = json.loads(r.stdout)
    assert len(slices) == 1, slices
    spec = slices[0]["spec"]
    assert spec["nodeName"] == "node-a" and spec["pool"]["name"] == "node-a"
    assert spec["driver"] == "topology-aware.nri.io"
    assert spec["pool"]["resourceSliceCount"] == 1
    caps = [d["capacity"]["dra.cpu/cpu"]["value"] for d in spec["devices"]]
    assert caps == ["28", "28", "28", "26"], caps
    assert all(d["allowMultipleAllocations"] for d in spec["devices"])


def test_nrt_root_zone_counts_sharable_and_reserved_cpus():
    nrt = show("server", "nrt", {"reservedResources": {"cpu": "cpuset:3,11"}})
    zones = {z["name"]: z for z in nrt["zones"]}
    roots = [z for z in nrt["zones"] if "parent" not in z]
    assert len(roots) == 1, roots
    cpu = {r["name"]: r for r in roots[0]["resources"]}["cpu"]
    # 112 online CPUs, 8 of them isolated (4-7,60-63): not in the zone.
    assert cpu["capacity"] == cpu["allocatable"] == "104", cpu
    # Nothing granted: everything sharable (104 less the 2 reserved).
    assert cpu["available"] == "102", cpu
    assert all(z["parent"] in zones for z in nrt["zones"] if "parent" in z)


def test_topology_of_server():
    t = show("server", "topology")
    assert t["online"] == "0-111"
    assert t["isolated"] == "4-7,60-63"
    assert t["cores"] == 56 and t["threadsPerCore"] == 2
    assert [p["id"] for p in t["packages"]] == [0, 1]
    assert t["packages"][0]["cpus"] == ",".join(str(i)
                                                for i in range(0, 112, 2))
    nodes = {n["id"]: n for n in t["nodes"]}
    assert sorted(nodes) == [0, 1, 2, 3, 4, 5]
    assert nodes[4]["cpus"] == "" and nodes[5]["cpus"] == ""
    assert nodes[4]["memory"] > 100 * 2**30
    assert nodes[0]["distances"][0] == 10
    assert nodes[0]["distances"][2] == 11 and nodes[0]["distances"][1] == 21
    assert nodes[0]["distances"][4] == 17


def test_pools_of_four_socket_machine():
    pools = show("4-socket-server-nosnc", "pools")
    assert [p["id"] for p in pools] == list(range(5))
    assert [p["name"] for p in pools] == ["socket #0", "socket #1",
                                          "socket #2", "socket #3", "root"]
    assert [p["parent"] for p in pools] == [4, 4, 4, 4, None]
    assert [p["depth"] for p in pools] == [1, 1, 1, 1, 0]
    root = pools[4]
    assert root["cpus"] == "0-143"
    # The default reservation of 750m is one whole CPU, taken from socket 0.
    assert root["reserved"] != "" and "," not in root["reserved"]
    assert pools[0]["reserved"] == root["reserved"]


def test_bad_config_is_refused_naming_the_key():
    r = sim("--sysfs-root", tap.sysfs("server"), "--show", "pools",
            config={"pinCPU": "yes"})
    assert r.returncode == 1
    assert "pinCPU" in r.stderr, r.stderr


def test_unreadable_config_and_root_are_refused():
    r = sim("--sysfs-root", tap.sysfs("server"), "--show", "pools",
            config="{not json")
    assert r.returncode == 1 and "config.json" in r.stderr, r.stderr
    missing = os.path.join(tap.tmpdir(), "nothing")
    r = sim("--sysfs-root", missing, "--show", "topology")
    assert r.returncode == 1 and missing in r.stderr, r.stderr


def test_usage_errors():
    r = sim("--show", "everything")
    assert r.returncode == 2 and "usage" in r.stderr
    r = sim()
    assert r.returncode == 2


tap.run(globals())
