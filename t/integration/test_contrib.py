"""The Kubernetes objects in contrib/kubernetes (R-SLICE, R-DRA): every
YAML document parses, has the kind and apiVersion expected, the RBAC is
exactly the rules of protocols.md §7.6 that the daemon needs, the
DeviceClass carries the driver name and selector of anchor §9.2, and the
example claim asks for CPUs of that class on one NUMA node (§9.5)."""

import os
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402

import yaml  # noqa: E402

DRIVER = "topology-aware.nri.io"
DIR = os.path.join(tap.srcdir(), "contrib", "kubernetes")
FILES = ["deviceclass.yaml", "rbac.yaml", "example-claim.yaml"]

# (apiGroup, resource) -> verbs the daemon uses.
RULES = {
    ("", "nodes"): {"get"},
    ("resource.k8s.io", "resourceslices"):
        {"get", "list", "watch", "create", "update", "delete"},
    ("resource.k8s.io", "resourceclaims"): {"get", "list"},
    ("topology.node.k8s.io", "noderesourcetopologies"):
        {"get", "create", "update"},
}


def docs(name):
    with open(os.path.join(DIR, name)) as f:
        out = [d for d in yaml.safe_load_all(f) if d is not None]
    for d in out:
        assert isinstance(d, dict), (name, d)
        assert set(d) >= {"apiVersion", "kind", "metadata"}, (name, d)
        assert d["metadata"].get("name"), (name, d)
    return out


def by_kind(name):
    return {(d["apiVersion"], d["kind"]): d for d in docs(name)}


def test_every_file_parses_and_is_shipped():
    listed = sorted(f for f in os.listdir(DIR) if f.endswith(".yaml"))
    assert listed == sorted(FILES), listed
    with open(os.path.join(tap.srcdir(), "Makefile.am")) as f:
        am = f.read()
    for name in FILES + ["README.md"]:
        assert "contrib/kubernetes/" + name in am, name
        assert docs(name) if name != "README.md" else True
    with open(os.path.join(DIR, "README.md")) as f:
        readme = f.read()
    for word in FILES + ["DRAConsumableCapacity", "DynamicResourceAllocation"]:
        assert word in readme, word


def test_deviceclass():
    got = by_kind("deviceclass.yaml")
    assert list(got) == [("resource.k8s.io/v1", "DeviceClass")], list(got)
    dc = got[("resource.k8s.io/v1", "DeviceClass")]
    assert dc["metadata"]["name"] == DRIVER
    assert "namespace" not in dc["metadata"]  # cluster-scoped
    sel = dc["spec"]["selectors"]
    assert sel == [{"cel": {"expression":
                            'device.driver == "%s"' % DRIVER}}], sel


def test_rbac_is_exact():
    got = by_kind("rbac.yaml")
    assert sorted(got) == [
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ("v1", "ServiceAccount")], sorted(got)
    sa = got[("v1", "ServiceAccount")]["metadata"]
    assert sa["namespace"] == "kube-system", sa
    role = got[("rbac.authorization.k8s.io/v1", "ClusterRole")]
    rules = {}
    for r in role["rules"]:
        assert set(r) == {"apiGroups", "resources", "verbs"}, r
        for g in r["apiGroups"]:
            for res in r["resources"]:
                key = (g, res)
                assert key not in rules, "%s granted twice" % (key,)
                assert len(set(r["verbs"])) == len(r["verbs"]), r
                rules[key] = set(r["verbs"])
    assert rules == RULES, rules
    binding = got[("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
        "name": role["metadata"]["name"]}, binding["roleRef"]
    assert binding["subjects"] == [{
        "kind": "ServiceAccount", "name": sa["name"],
        "namespace": "kube-system"}], binding["subjects"]


def test_example_claim():
    got = by_kind("example-claim.yaml")
    assert sorted(got) == [("resource.k8s.io/v1", "ResourceClaimTemplate"),
                           ("v1", "Pod")], sorted(got)
    tmpl = got[("resource.k8s.io/v1", "ResourceClaimTemplate")]
    reqs = tmpl["spec"]["spec"]["devices"]["requests"]
    assert len(reqs) == 1, reqs
    ex = reqs[0]["exactly"]
    assert ex["deviceClassName"] == DRIVER, ex
    assert ex["selectors"] == [{"cel": {"expression":
        'device.attributes["resource.kubernetes.io"].numaNode == 1'}}], ex
    # A quantity is a string; "2" and not 2 (the API takes both).
    assert ex["capacity"] == {"requests": {"dra.cpu/cpu": "2"}}, ex
    pod = got[("v1", "Pod")]
    claims = pod["spec"]["resourceClaims"]
    assert len(claims) == 1, claims
    assert claims[0]["resourceClaimTemplateName"] == \
        tmpl["metadata"]["name"], claims
    used = [c["name"] for ctr in pod["spec"]["containers"]
            for c in ctr.get("resources", {}).get("claims", [])]
    assert used == [claims[0]["name"]], used
    assert pod["metadata"]["namespace"] == tmpl["metadata"]["namespace"]


tap.run(globals())
