"""Fleet configuration through the API server (--config-source cluster):
the real daemon against the fake API server of t/lib, with the Go
policy's TopologyAwarePolicy objects. The scopes and their precedence
(node.<node> over group.<G> over default), a label change moving the node
between groups, a Node it may not read (no group until it can), the
entry on the status following the chosen object, a
refused object (status says why, the old config stays), Go's keys we lack
ignored with warnings (and still refused from a local file), a watch
interrupted and a 410 Gone, the status patch retried, an API server down
at start (the kept config serves), a damaged kept config, one that cannot
be written (the change still applies, status says why), SIGHUP and
`topoawarectl reload` reading the objects again, the dry run of the
chosen object, and the options' checks."""

import json
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from apienv import NODE, ApiEnv  # noqa: E402
from daemon import Daemon  # noqa: E402
from fake_apiserver import FakeApiServer  # noqa: E402
from tap import wait_for  # noqa: E402

NS = "kube-system"
ARGS = ["--config-source", "cluster"]
LABEL = "config.nri/group"


def spec(cpus, **extra):
    s = {"reservedResources": {"cpu": "cpuset:%s" % cpus}}
    s.update(extra)
    return s


def reserved(env):
    return env.admin("config")["reservedResources"]["cpu"]


def source(env):
    return env.status()["config"]


def entry(env, name):
    obj = env.api.policy(NS, name)
    if obj is None:
        return None
    return (obj.get("status") or {}).get("nodes", {}).get(NODE)


def wait_applied(env, name, cpus, generation=None):
    """Waits until the object name's config is in force and this node's
    entry on its status says so; returns the entry."""
    def done():
        st = source(env)
        e = entry(env, name)
        return (st["object"] == name and st["from"] == "api" and
                reserved(env) == "cpuset:%s" % cpus and e is not None and
                e["status"] == "Success" and
                (generation is None or e["generation"] == generation) and
                e)
    return wait_for(done, "%s (cpuset:%s) in force" % (name, cpus),
                    about=lambda: json.dumps(source(env)) + "\n" +
                    env.d.output()[-3000:])


def cluster_env(**kw):
    return ApiEnv(args=ARGS + list(kw.pop("args", ())), **kw)


def test_scopes_and_their_precedence():
    with cluster_env() as env:
        env.api.set_policy(NS, "default", spec("3"))
        env.start()
        e = wait_applied(env, "default", "3", generation=1)
        assert e["errors"] == "" and "timestamp" in e, e
        gen = env.status()["configGeneration"]

        # A group object applies once the node carries its label.
        env.api.set_policy(NS, "group.g1", spec("5"))
        env.api.set_node_labels(NODE, {LABEL: "g1"})
        wait_applied(env, "group.g1", "5")
        wait_for(lambda: entry(env, "default") is None,
                 "the entry off the default object")
        assert source(env)["group"] == "g1"

        env.api.set_policy(NS, "node." + NODE, spec("7"))
        wait_applied(env, "node." + NODE, "7")
        wait_for(lambda: entry(env, "group.g1") is None,
                 "the entry off the group object")

        # Deleted: the next scope applies again.
        env.api.delete_policy(NS, "node." + NODE)
        wait_applied(env, "group.g1", "5")
        # Another node's object is no business of ours.
        env.api.set_policy(NS, "node.othernode", spec("9"))
        # The label goes: the default applies.
        env.api.set_node_labels(NODE, {})
        wait_applied(env, "default", "3")
        assert entry(env, "node.othernode") is None
        assert env.status()["configGeneration"] == gen + 4

        # None left: the config in force stays, status says so.
        env.api.delete_policy(NS, "default")
        wait_for(lambda: source(env)["noObject"], "no object")
        assert reserved(env) == "cpuset:3"
        dry = env.admin("reload", "--dry-run")
        assert dry["refused"] and "no TopologyAwarePolicy" in \
            dry["refused"] and not dry["unchanged"], dry
        assert env.status()["configGeneration"] == gen + 4
        env.stop()


def test_label_moves_between_groups():
    with cluster_env() as env:
        env.api.set_policy(NS, "default", spec("3"))
        env.api.set_policy(NS, "group.a", spec("5"))
        env.api.set_policy(NS, "group.b", spec("7"))
        env.api.set_node_labels(NODE, {LABEL: "a"})
        env.start()
        wait_applied(env, "group.a", "5")
        env.api.set_node_labels(NODE, {LABEL: "b"})
        wait_applied(env, "group.b", "7")
        wait_for(lambda: entry(env, "group.a") is None, "off group.a")
        # A group without its object: the default.
        env.api.set_node_labels(NODE, {LABEL: "c"})
        wait_applied(env, "default", "3")
        # A value that cannot name an object: no group, said so.
        env.api.set_node_labels(NODE, {LABEL: "a"})
        wait_applied(env, "group.a", "5")
        env.api.set_node_labels(NODE, {LABEL: "-bad-"})
        wait_applied(env, "default", "3")
        assert source(env)["invalidGroup"] == "-bad-", source(env)
        env.stop()


def test_node_unreadable_takes_no_group():
    with cluster_env() as env:
        # No right to read Nodes: the objects still apply, with no group.
        env.api.raw_get("/api/v1/nodes", 403, json.dumps({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": "Forbidden", "code": 403,
            "message": "nodes is forbidden"}).encode())
        env.api.set_node_labels(NODE, {LABEL: "g1"})
        env.api.set_policy(NS, "default", spec("3"))
        env.api.set_policy(NS, "group.g1", spec("5"))
        env.start()
        wait_applied(env, "default", "3")
        assert source(env)["group"] is None
        # Readable again: the group's object takes over.
        env.api.raw_get("/api/v1/nodes", 0, None)
        wait_for(lambda: source(env)["object"] == "group.g1",
                 "the group object once the Node is read", timeout=30)
        wait_applied(env, "group.g1", "5")
        env.stop()


def test_refused_object_keeps_the_config():
    with cluster_env() as env:
        env.api.set_policy(NS, "default", spec("3"))
        env.start()
        wait_applied(env, "default", "3", generation=1)
        gen = env.status()["configGeneration"]

        env.api.set_policy(NS, "default", spec("3", bogusKey=True))
        e = wait_for(lambda: (entry(env, "default") or {}).get(
            "status") == "Failure" and entry(env, "default"),
            "a Failure entry")
        assert e["generation"] == 2 and "bogusKey" in e["errors"] and \
            "unknown key" in e["errors"], e
        st = source(env)
        assert st["object"] == "default" and st["generation"] == 1, st
        assert st["refused"]["generation"] == 2 and \
            "bogusKey" in st["refused"]["error"], st
        assert reserved(env) == "cpuset:3"
        assert env.status()["configGeneration"] == gen

        # A CPU this machine does not have.
        env.api.set_policy(NS, "default", spec("999"))
        e = wait_for(lambda: (entry(env, "default") or {}).get(
            "generation") == 3 and entry(env, "default"), "generation 3")
        assert e["status"] == "Failure" and "999" in e["errors"], e

        # The dry run of the chosen object says the same.
        dry = env.admin("reload", "--dry-run")
        assert dry["refused"] and "999" in dry["refused"], dry

        env.api.set_policy(NS, "default", spec("5"))
        e = wait_applied(env, "default", "5", generation=4)
        assert e["errors"] == "" and source(env)["refused"] is None
        assert env.status()["configGeneration"] == gen + 1
        # topoawarectl status says where the config came from.
        p = subprocess.run([os.path.join(tap.builddir(), "topoawarectl"),
                            "--socket", env.d.admin_socket, "status"],
                           capture_output=True, text=True, timeout=15)
        assert p.returncode == 0, p
        assert "cluster: TopologyAwarePolicy kube-system/default " \
            "generation 4, from the API server since" in p.stdout, p.stdout
        env.stop()


# The keys of the Go policy's own sample configuration, as its users
# write them; the ones topoaware lacks are ignored with a warning.
GO_SAMPLE = {
    "pinCPU": True, "pinMemory": True, "preferIsolatedCPUs": True,
    "preferSharedCPUs": False, "colocatePods": True,
    "colocateNamespaces": False,
    "reservedPoolNamespaces": ["special-namespace",
                               "extra-reserved-namespace"],
    "reservedResources": {"cpu": "750m"},
    "log": {"source": True, "klog": {"skip_headers": True}},
    "instrumentation": {"reportPeriod": "60s",
                        "samplingRatePerMillion": 1000000},
    "agent": {"nodeResourceTopology": True},
}
# agent holds the value Go's CRD writes into every object: no warning.
GO_IGNORED = ["log.source", "log.klog", "instrumentation.reportPeriod",
              "instrumentation.samplingRatePerMillion"]


def test_go_policy_object_loads_with_warnings():
    with cluster_env() as env:
        env.api.set_policy(NS, "default", GO_SAMPLE)
        env.start()

        def applied():
            e = entry(env, "default")
            return e is not None and e["status"] == "Success" and e
        e = wait_for(applied, "the Go policy's object applied",
                     about=lambda: env.d.output()[-3000:])
        for key in GO_IGNORED:
            assert any(w.startswith(key + ":") for w in e["warnings"]), \
                (key, e)
        assert len(e["warnings"]) == len(GO_IGNORED), e
        cfg = env.admin("config")
        assert cfg["reservedResources"]["cpu"] == "750m"
        assert cfg["reservedPoolNamespaces"] == \
            GO_SAMPLE["reservedPoolNamespaces"]
        assert len(source(env)["warnings"]) == len(GO_IGNORED)
        env.stop()
        # From a local file the same keys are refused.
        path = os.path.join(env.folder, "go.json")
        with open(path, "w") as f:
            json.dump(GO_SAMPLE, f)
        p = subprocess.run([os.path.join(tap.builddir(), "topoawared"),
                            "-n", "--sysfs-root", tap.sysfs("server"),
                            "--config", path], capture_output=True,
                           text=True, timeout=30)
        assert p.returncode != 0 and "not supported" in p.stderr, p


def test_watch_interrupted_and_gone():
    with cluster_env() as env:
        env.api.set_policy(NS, "default", spec("3"))
        env.start()
        wait_applied(env, "default", "3")
        env.api.break_watches()
        env.api.set_policy(NS, "default", spec("5"))
        wait_applied(env, "default", "5", generation=2)

        env.api.expire_watches()
        env.api.break_watches()
        env.api.set_policy(NS, "default", spec("7"))
        wait_applied(env, "default", "7", generation=3)
        w = source(env)["watches"]["objects"]
        assert w["relists"] >= 1 and w["reconnects"] >= 1, w
        env.stop()


def test_status_patch_retried():
    with cluster_env() as env:
        env.api.set_policy(NS, "default", spec("3"))
        env.start()
        wait_applied(env, "default", "3")
        before = len(env.api.recorded("PATCH"))
        # More failures than the client's own retries (one).
        env.api.fail_next(3, 503, method="PATCH")
        env.api.set_policy(NS, "default", spec("5"))
        wait_applied(env, "default", "5", generation=2)
        assert len(env.api.recorded("PATCH")) - before >= 3
        assert source(env)["statusPatches"]["failed"] >= 1
        env.stop()


def test_api_down_at_start_uses_the_kept_config():
    env = cluster_env()
    try:
        env.api.set_policy(NS, "node." + NODE, spec("7"))
        env.start()
        wait_applied(env, "node." + NODE, "7")
        kept = os.path.join(env.d.state_dir, "cluster-config.json")
        assert os.path.exists(kept)
        env.s.stop()
        port = env.api.port
        env.api.stop()

        # No API server: the kept config, and status says so.
        env.s = env.session()
        env.start()
        st = source(env)
        assert st["from"] == "kept" and st["object"] == "node." + NODE, st
        assert reserved(env) == "cpuset:7"

        # It comes back (a new server on the same address).
        env.api = FakeApiServer().start(port)
        env.api.set_node(NODE, "uid-1")
        env.api.set_policy(NS, "node." + NODE, spec("7"))
        wait_applied(env, "node." + NODE, "7")
        env.stop()
    finally:
        env.__exit__(None, None, None)


def test_damaged_kept_config():
    with cluster_env() as env:
        os.makedirs(env.d.state_dir, exist_ok=True)
        with open(os.path.join(env.d.state_dir, "cluster-config.json"),
                  "w") as f:
            f.write("{not json")
        # -n checks the kept config with the cluster source, not the file.
        exe = os.path.join(tap.builddir(), "topoawared")
        p = subprocess.run([exe, "-n", "--config-source", "cluster",
                            "--sysfs-root", tap.sysfs("server"),
                            "--state-dir", env.d.state_dir],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 1 and "kept cluster config" in p.stderr, p
        env.api.set_policy(NS, "default", spec("3"))
        env.start()
        wait_applied(env, "default", "3")
        assert "kept cluster config" in env.d.output()
        env.stop()


def test_kept_config_that_cannot_be_written():
    with cluster_env() as env:
        env.api.set_policy(NS, "default", spec("3"))
        # A folder where the kept file is staged: its write fails.
        os.makedirs(os.path.join(env.d.state_dir, "cluster-config.json.tmp"))
        env.start()
        wait_applied(env, "default", "3")
        st = wait_for(lambda: source(env)["keptError"] and source(env),
                      "the kept config's error in status")
        assert "cluster-config.json" in st["keptError"], st
        assert not os.path.exists(os.path.join(env.d.state_dir,
                                               "cluster-config.json"))
        env.stop()


def test_reload_reads_the_objects_again():
    with cluster_env() as env:
        env.api.set_policy(NS, "default", spec("3"))
        env.start()
        wait_applied(env, "default", "3")
        gets = len(env.api.recorded("GET", "/apis/config.nri"))
        r = env.admin("reload")
        assert r["source"] == "cluster" and r["object"] == "default" and \
            r["unchanged"], r
        assert len(env.api.recorded("GET", "/apis/config.nri")) > gets
        # SIGHUP the same way.
        gets = len(env.api.recorded("GET", "/apis/config.nri"))
        env.d.signal(signal.SIGHUP)
        wait_for(lambda: len(env.api.recorded(
            "GET", "/apis/config.nri")) > gets, "a GET after SIGHUP")
        # The file is not watched: writing one changes nothing.
        env.d.write_config(spec("9"))
        r = env.admin("reload")
        assert reserved(env) == "cpuset:3", r
        # The API server gone: the reload says why, the config stays.
        env.api.stop()
        r = env.d.admin("reload", timeout=30)
        assert not r["ok"] and "cannot read" in r["error"], r
        assert reserved(env) == "cpuset:3"
        env.stop()


def test_options_checked():
    exe = os.path.join(tap.builddir(), "topoawared")
    for args, what in ((["--config-source", "etcd"], "file or cluster"),
                       (["--config-namespace", "Kube_System"], "namespace"),
                       (["--config-group-label", "a/b/c"], "label")):
        p = subprocess.run([exe, "-f"] + args, capture_output=True,
                           text=True, timeout=30)
        assert p.returncode == 2 and what in p.stderr, (args, p)
    # No way to reach an API server: a person must say how.
    env = dict(os.environ)
    env.pop("KUBERNETES_SERVICE_HOST", None)
    with Daemon(args=ARGS, env=env) as d:
        rc = d.start(expect_ready=False)
        assert rc == 78 and "--config-source cluster" in d.output(), \
            (rc, d.output())


tap.run(globals())
