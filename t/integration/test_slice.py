"""The node's ResourceSlices (SPEC R-SLICE; protocols.md 4.3, 7.1, 7.5, 9.6,
9.7; anchor-policy.md 9.2) published by the real daemon to the fake API
server of t/lib, which validates them the way the real server does.

Published at start with one device per NUMA node and the Node as owner;
left alone while nothing changes; created again after they were deleted
(the kubelet wipes them); rewritten with the next pool generation after a
reload that changes the devices; taken over from a previous run (its
generation continued, surplus slices deleted, other drivers' left alone);
a failing API server retried until it recovers; a Node that appears late
added as owner; status.dra.slices.

The expected devices are derived from the recorded server's sysfs tree:
every NUMA node with CPUs that are not reserved, its package, its CPU
count and whether its cores have two threads."""

import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402
from fake_apiserver import FakeApiServer, slice_errors  # noqa: E402
from nri_runtime import parse_cpuset  # noqa: E402

DRIVER = "topology-aware.nri.io"
NODE = "testnode"                # t/lib/daemon.py passes --node-name
NODE_UID = "5d0c9a57-4a0e-4bd6-9a0e-7d1f3c0b2e11"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
RESYNC_MS = 300
API_ARGS = ["--api-timeout", "2000", "--api-retries", "0",
            "--api-backoff", "50"]
# Long enough for several resyncs and retries on a loaded machine.
WAIT = 10.0


def read(root, rel):
    with open(os.path.join(root, "sys", rel)) as f:
        return f.read()


def expected(reserved, machine="server"):
    """{device name: (node, package, smt, cpus)} from the sysfs tree."""
    root = tap.sysfs(machine)
    nodes = os.path.join(root, "sys", "devices", "system", "node")
    online = parse_cpuset(read(root, "devices/system/cpu/online"))
    out = {}
    for d in sorted(os.listdir(nodes)):
        if not d.startswith("node") or not d[4:].isdigit():
            continue
        node = int(d[4:])
        cpus = parse_cpuset(read(root, "devices/system/node/%s/cpulist" % d))
        cpus &= online
        grantable = cpus - set(reserved)
        if not grantable:
            continue
        first = min(cpus)
        pkg = int(read(root, "devices/system/cpu/cpu%d/topology/"
                       "physical_package_id" % first))
        threads = parse_cpuset(read(root, "devices/system/cpu/cpu%d/topology/"
                               "thread_siblings_list" % first))
        out["cpudevnuma%03d" % node] = (node, pkg, len(threads) > 1,
                                       len(grantable))
    return out


def config(reserved):
    return {"reservedResources": {"cpu": "cpuset:" +
                                  ",".join(str(c) for c in reserved)}}


def node_api():
    """A fake API server, started, that knows the node."""
    api = FakeApiServer().start()
    api.set_node(NODE, NODE_UID)
    return api


def start(api, reserved=(0, 1), extra=()):
    folder = tap.tmpdir()
    d = Daemon(config=config(reserved), folder=folder,
               args=["--kubeconfig", api.kubeconfig(folder),
                     "--slice-resync", str(RESYNC_MS)] + API_ARGS +
               list(extra))
    d.start()
    return d


def ours(api):
    with api.lock:
        return [json.loads(json.dumps(o)) for o in api.slices.values()
                if o["spec"].get("driver") == DRIVER and
                o["spec"].get("nodeName") == NODE]


def writes(api):
    """The requests that changed slices."""
    return [r for r in api.recorded(prefix=SLICES) if r["method"] != "GET"]


def wait_for(what, fn, timeout=WAIT, d=None):
    return tap.wait_for(fn, what, timeout,
                        d.output if d is not None else None)


def slice_status(d):
    r = d.admin("status")
    assert r["ok"], r
    return r["result"]["dra"]["slices"]


def errors_counted(d):
    """topoaware_errors_total{kind="slice_publish"} of the metrics."""
    m = d.admin("metrics")
    assert m["ok"], m
    text = m["result"]["text"]
    for line in text.splitlines():
        if line.startswith('topoaware_errors_total{kind="slice_publish"}'):
            return int(float(line.split()[-1]))
    raise AssertionError("no slice_publish errors counter:\n" + text)


def pool(api):
    """The devices of the complete pool at its highest generation, or None
    while it is incomplete."""
    items = ours(api)
    if not items:
        return None
    gen = max(o["spec"]["pool"]["generation"] for o in items)
    top = [o for o in items if o["spec"]["pool"]["generation"] == gen]
    if any(o["spec"]["pool"]["resourceSliceCount"] != len(top)
           for o in top) or len(top) != len(items):
        return None
    devs = {}
    for o in top:
        for dev in o["spec"]["devices"]:
            assert dev["name"] not in devs, dev["name"]
            devs[dev["name"]] = dev
    return gen, devs


def check_device(dev, want):
    node, pkg, smt, cpus = want
    a = dev["attributes"]
    assert a["resource.kubernetes.io/numaNode"] == {"int": node}, a
    assert a["dra.cpu/socketID"] == {"int": pkg}, a
    assert a["dra.cpu/smtEnabled"] == {"bool": smt}, a
    cap = dev["capacity"]["dra.cpu/cpu"]
    assert cap["value"] == str(cpus), (dev["name"], cap, cpus)
    assert cap["requestPolicy"]["default"] == "1", cap
    assert cap["requestPolicy"]["validRange"]["min"] == "1", cap
    assert cap["requestPolicy"]["validRange"]["step"] == "1", cap
    assert dev["allowMultipleAllocations"] is True, dev


def check_pool(api, want):
    """Waits until the pool holds exactly the devices of want."""
    def right():
        p = pool(api)
        if p is None or set(p[1]) != set(want):
            return None
        if any(p[1][n]["capacity"]["dra.cpu/cpu"]["value"] !=
               str(want[n][3]) for n in want):
            return None
        return p
    gen, devs = wait_for("the pool to hold %s" % sorted(want), right)
    for name, w in want.items():
        check_device(devs[name], w)
    for o in ours(api):
        assert slice_errors(o) == [], slice_errors(o)
    return gen


def test_expected_devices_of_the_server():
    # The recorded server as anchor-policy.md 9.2 describes it, so that
    # the derivation above is itself checked.
    want = expected((0, 1))
    assert want == {"cpudevnuma000": (0, 0, True, 27),
                    "cpudevnuma001": (1, 1, True, 27),
                    "cpudevnuma002": (2, 0, True, 28),
                    "cpudevnuma003": (3, 1, True, 28)}, want


def test_published_at_start():
    with node_api() as api:
        with start(api) as d:
            gen = check_pool(api, expected((0, 1)))
            items = ours(api)
            assert len(items) == 1, items
            o = items[0]
            assert o["apiVersion"] == "resource.k8s.io/v1"
            assert o["kind"] == "ResourceSlice"
            assert o["metadata"]["name"].startswith(
                DRIVER + "-" + NODE + "-"), o["metadata"]
            assert o["metadata"]["ownerReferences"] == [
                {"apiVersion": "v1", "kind": "Node", "name": NODE,
                 "uid": NODE_UID, "controller": True}], o["metadata"]
            assert o["spec"]["pool"] == {"name": NODE, "generation": gen,
                                         "resourceSliceCount": 1}
            assert gen >= 1
            # Created, never deleted or rewritten on the way.
            posts = [r for r in writes(api) if r["method"] == "POST"]
            assert len(posts) == 1, writes(api)
            assert posts[0]["path"] == SLICES
            lists = api.recorded("GET", SLICES + "?")
            assert lists, api.recorded()
            assert lists[0]["path"] == (
                SLICES + "?fieldSelector=spec.nodeName%3D" + NODE +
                "%2Cspec.driver%3D" + DRIVER), lists[0]["path"]

            st = wait_for("status to say published",
                          lambda: (lambda s: s if s["published"] else None)(
                              slice_status(d)), d=d)
            assert st == {"published": True, "generation": gen,
                          "slices": 1, "devices": 4,
                          "lastError": None}, st
            d.finish()


def test_not_rewritten_when_unchanged():
    with node_api() as api:
        with start(api) as d:
            check_pool(api, expected((0, 1)))
            before = len(writes(api))
            lists = len(api.recorded("GET", SLICES))
            # At least three resyncs go by.
            wait_for("three more lists", lambda: len(api.recorded(
                "GET", SLICES)) >= lists + 3, d=d)
            assert len(writes(api)) == before, writes(api)[before:]
            d.finish()


def test_recreated_after_deletion():
    with node_api() as api:
        with start(api) as d:
            gen = check_pool(api, expected((0, 1)))
            assert api.delete_slices(DRIVER) == 1
            again = check_pool(api, expected((0, 1)))
            assert again >= gen, (again, gen)
            assert len(ours(api)) == 1
            # And once more: every time they vanish.
            assert api.delete_slices(DRIVER) == 1
            check_pool(api, expected((0, 1)))
            st = slice_status(d)
            assert st["published"] is True and st["lastError"] is None, st
            d.finish()


def test_reload_bumps_generation():
    with node_api() as api:
        with start(api) as d:
            gen = check_pool(api, expected((0, 1)))
            name = ours(api)[0]["metadata"]["name"]
            d.write_config(config((0, 1, 2)))
            r = d.admin("reload")
            assert r["ok"], r
            want = expected((0, 1, 2))
            assert want["cpudevnuma002"][3] == 27, want
            new = check_pool(api, want)
            assert new == gen + 1, (new, gen)
            items = ours(api)
            assert len(items) == 1, items
            # The same object, updated in place.
            assert items[0]["metadata"]["name"] == name
            assert [r for r in writes(api) if r["method"] == "PUT"]
            st = wait_for("status of the new generation",
                          lambda: (lambda s: s if s["generation"] == new
                                   else None)(slice_status(d)), d=d)
            assert st["published"] is True and st["devices"] == 4, st

            # Fewer nodes: only node 0 keeps CPUs.
            before = len(writes(api))
            d.write_config({"availableResources": {"cpu": "cpuset:0,8,12"},
                            "reservedResources": {"cpu": "cpuset:0,8"}})
            assert d.admin("reload")["ok"]
            newer = check_pool(api, {"cpudevnuma000": (0, 0, True, 1)})
            assert newer == new + 1, (newer, new)

            # A reload that changes nothing else writes nothing.
            wait_for("status of that generation",
                     lambda: slice_status(d)["generation"] == newer, d=d)
            before = len(writes(api))
            lists = len(api.recorded("GET", SLICES))
            d.write_config({"availableResources": {"cpu": "cpuset:0,8,12"},
                            "reservedResources": {"cpu": "cpuset:0,8"},
                            "pinMemory": False})
            assert d.admin("reload")["ok"]
            wait_for("two more lists", lambda: len(api.recorded(
                "GET", SLICES)) >= lists + 2, d=d)
            assert len(writes(api)) == before, writes(api)[before:]
            d.finish()


def stale(name, gen, devices, driver=DRIVER, node=NODE):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": gen,
                              "resourceSliceCount": 2},
                     "devices": devices}}


class HostnameDaemon(Daemon):
    """The daemon in a UTS namespace of its own with this host name and
    no --node-name, so that it names the node as the kubelet would."""

    hostname = "Node-A.Example"

    def command(self):
        cmd = super().command()
        i = cmd.index("--node-name")
        del cmd[i:i + 2]
        return ["unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', self.hostname] + cmd


def test_default_node_name_is_the_lower_case_host_name():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise tap.Skip("a UTS namespace needs root and unshare")
    node = HostnameDaemon.hostname.lower()
    with FakeApiServer().start() as api:
        api.set_node(node, NODE_UID)
        folder = tap.tmpdir()
        d = HostnameDaemon(config=config((0, 1)), folder=folder,
                           args=["--kubeconfig", api.kubeconfig(folder)] +
                           API_ARGS,
                           env={"NODE_NAME": ""})
        with d:
            d.start()
            wait_for("the slice", lambda: api.slices, d=d)
            with api.lock:
                specs = [o["spec"] for o in api.slices.values()]
            assert [sp["nodeName"] for sp in specs] == [node], specs
            assert specs[0]["pool"]["name"] == node, specs
            d.finish()


def test_previous_slices_taken_over():
    old = [{"name": "cpudevnuma000", "attributes": {
        "resource.kubernetes.io/numaNode": {"int": 0}},
        "capacity": {"dra.cpu/cpu": {"value": "99"}}}]
    with node_api() as api:
        api.put_slice("old-a", stale("old-a", 41, old))
        api.put_slice("old-b", stale("old-b", 41, []))
        other = stale("other-driver", 7, [], driver="cpu.example.com")
        api.put_slice("other-driver", other)
        elsewhere = stale("elsewhere", 3, [], node="node-b")
        api.put_slice("elsewhere", elsewhere)
        with start(api) as d:
            gen = check_pool(api, expected((0, 1)))
            assert gen == 42, gen
            items = ours(api)
            assert [o["metadata"]["name"] for o in items] == ["old-a"], items
            dels = [r for r in writes(api) if r["method"] == "DELETE"]
            assert [r["path"] for r in dels] == [SLICES + "/old-b"], dels
            assert api.slices["other-driver"]["spec"] == other["spec"]
            assert api.slices["elsewhere"]["spec"] == elsewhere["spec"]
            d.finish()


def test_failing_api_server_recovers():
    with node_api() as api:
        api.fail_next(1000000)
        with start(api) as d:
            st = wait_for("a failure in status", lambda: (
                lambda s: s if s["lastError"] else None)(slice_status(d)),
                d=d)
            assert st["published"] is False, st
            assert "500" in st["lastError"], st
            assert not api.slices
            # Counted, and retried rather than given up.
            first = errors_counted(d)
            assert first >= 1, first
            wait_for("another failed attempt",
                     lambda: errors_counted(d) > first, d=d)
            api.fail_next(0)
            check_pool(api, expected((0, 1)))
            st = wait_for("status to recover", lambda: (
                lambda s: s if s["published"] else None)(slice_status(d)),
                d=d)
            assert st["lastError"] is None, st
            assert st["devices"] == 4 and st["slices"] == 1, st
            # The Node failed too at first; its uid arrives as the owner.
            wait_for("the owner", lambda: all(
                o["metadata"].get("ownerReferences") for o in ours(api)),
                d=d)
            d.finish()


def test_conflicts_listed_again():
    with node_api() as api:
        with start(api) as d:
            gen = check_pool(api, expected((0, 1)))
            puts = len([r for r in writes(api) if r["method"] == "PUT"])
            api.conflict_slice_puts(2)
            d.write_config(config((0, 1, 2)))
            assert d.admin("reload")["ok"]
            new = check_pool(api, expected((0, 1, 2)))
            assert new == gen + 1, (new, gen)
            # Two refused, each followed by a fresh list, then the third.
            got = [r for r in writes(api) if r["method"] == "PUT"]
            assert len(got) == puts + 3, got
            st = wait_for("published", lambda: (
                lambda s: s if s["published"] and s["generation"] == new
                else None)(slice_status(d)), d=d)
            assert st["lastError"] is None, st
            assert errors_counted(d) == 0

            # Conflicts without end: given up for a while, then retried.
            api.conflict_slice_puts(1000)
            d.write_config(config((0, 1)))
            assert d.admin("reload")["ok"]
            st = wait_for("a conflict in status", lambda: (
                lambda s: s if s["lastError"] else None)(slice_status(d)),
                d=d)
            assert "409" in st["lastError"], st
            assert st["published"] is False, st
            api.conflict_slice_puts(0)
            newest = check_pool(api, expected((0, 1)))
            assert newest == new + 1, (newest, new)
            wait_for("published", lambda: slice_status(d)["published"],
                     d=d)
            d.finish()


def test_checked_when_the_kubelet_registers():
    import kubelet      # python3-grpcio, only this test needs it
    with node_api() as api:
        # No resync within the test: only the registration can do it.
        with start(api, extra=["--slice-resync", "600000"]) as d:
            check_pool(api, expected((0, 1)))
            lists = len(api.recorded("GET", SLICES))
            time.sleep(0.5)
            assert len(api.recorded("GET", SLICES)) == lists
            assert api.delete_slices(DRIVER) == 1
            with kubelet.Kubelet(os.path.join(d.folder, "kubelet")) as k:
                k.register()
                check_pool(api, expected((0, 1)))
            d.finish()


def test_owner_added_when_node_appears():
    with FakeApiServer() as api:
        with start(api) as d:
            check_pool(api, expected((0, 1)))
            assert all("ownerReferences" not in o["metadata"]
                       for o in ours(api)), ours(api)
            st = slice_status(d)
            assert st["lastError"] is None, st
            api.set_node(NODE, NODE_UID)
            refs = wait_for("the owner", lambda: [
                o["metadata"].get("ownerReferences") for o in ours(api)
                if o["metadata"].get("ownerReferences")], d=d)
            assert refs[0][0]["uid"] == NODE_UID, refs
            check_pool(api, expected((0, 1)))
            d.finish()


if __name__ == "__main__":
    tap.run(globals())
