"""The Kubernetes objects in contrib/kubernetes (R-SLICE, R-DRA): every
YAML document parses, has the kind and apiVersion expected, the RBAC is
exactly the rules of protocols.md §7.6 that the daemon needs (and those of
the cluster config source), the DeviceClass carries the driver name and
selector of anchor §9.2, and the example claim asks for CPUs of that class
on one NUMA node (§9.5).

The TopologyAwarePolicy CRD is checked as the API server would: a
structural apiextensions.k8s.io/v1 schema (a type at every level, no key a
v1 CRD refuses, defaults that validate), mapped to JSON Schema for Debian's
python3-jsonschema with the API server's pruning made an error (an unknown
key would be dropped silently, so it must not validate). It must hold
every field path of the Go policy's TopologyAwarePolicy spec and status
with its type, enum and default (the data below, read from the Go types),
every key of topoawared.json(5), and the warnings of a node's status; the
two examples and an object with exactly the keys of the Go policy's sample
configuration validate, and the examples' specs pass topoawared -n."""

import copy
import datetime
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402

import jsonschema  # noqa: E402
import yaml  # noqa: E402

DRIVER = "topology-aware.nri.io"
DIR = os.path.join(tap.srcdir(), "contrib", "kubernetes")
CRD = "topologyawarepolicy-crd.yaml"
EXAMPLES = {"topologyawarepolicy-default.yaml": "default",
            "topologyawarepolicy-node.yaml": "node.node-a"}
FILES = ["deviceclass.yaml", "rbac.yaml", "example-claim.yaml", CRD] + \
    sorted(EXAMPLES)
CONFIG_NAMESPACE = "kube-system"

# (apiGroup, resource) -> verbs the daemon uses: cluster-wide ...
RULES = {
    ("", "nodes"): {"get", "list", "watch"},
    ("resource.k8s.io", "resourceslices"):
        {"get", "list", "watch", "create", "update", "delete"},
    ("resource.k8s.io", "resourceclaims"): {"get", "list"},
    ("topology.node.k8s.io", "noderesourcetopologies"):
        {"get", "create", "update"},
}
# ... and in the config namespace.
CONFIG_RULES = {
    ("config.nri", "topologyawarepolicies"): {"get", "list", "watch"},
    ("config.nri", "topologyawarepolicies/status"): {"patch"},
}

# The Go policy's TopologyAwarePolicy (pkg/apis/config/v1alpha1: the
# topologyaware Config inlined, control, log, instrumentation, agent), as
# JSON paths: "*" is any key of a map, "[]" the items of a list.
GO_SPEC = """
reservedResources object
reservedResources.* string
availableResources object
availableResources.* string
pinCPU boolean
pinMemory boolean
preferIsolatedCPUs boolean
preferSharedCPUs boolean
colocatePods boolean
colocateNamespaces boolean
reservedPoolNamespaces array
reservedPoolNamespaces[] string
defaultCPUPriority string
unlimitedBurstable string
schedulingClasses array
schedulingClasses[] object
schedulingClasses[].name string
schedulingClasses[].policy string
schedulingClasses[].priority integer
schedulingClasses[].flags array
schedulingClasses[].flags[] string
schedulingClasses[].nice integer
schedulingClasses[].runtime integer
schedulingClasses[].deadline integer
schedulingClasses[].period integer
schedulingClasses[].ioClass string
schedulingClasses[].ioPriority integer
namespaceSchedulingClasses object
namespaceSchedulingClasses.* string
podQoSSchedulingClasses object
podQoSSchedulingClasses.* string
cpuClasses array
cpuClasses[] object
cpuClasses[].name string
cpuClasses[].minFreq string
cpuClasses[].maxFreq string
cpuClasses[].uncoreMinFreq string
cpuClasses[].uncoreMaxFreq string
cpuClasses[].freqGovernor string
cpuClasses[].energyPerformancePreference integer
cpuClasses[].disabledCstates array
cpuClasses[].disabledCstates[] string
cpuClasses[].turboPriority integer
cpuClasses[].pctPriority string
cpuClasses[].pctMinFreq string
cpuClasses[].pctMaxFreq string
cpuClasses[].sstClosID integer
cpuClasses[].publishExtendedResource boolean
sharedPoolCPUClass string
reservedPoolCPUClass string
defaultExclusiveCPUClass string
controllableInterrupts array
controllableInterrupts[] string
control object
control.cpu object
control.cpu.classes object
control.cpu.classes.* object
control.cpu.classes.*.minFreq integer
control.cpu.classes.*.maxFreq integer
control.cpu.classes.*.uncoreMinFreq integer
control.cpu.classes.*.uncoreMaxFreq integer
control.cpu.classes.*.energyPerformancePreference integer
control.cpu.classes.*.freqGovernor string
control.cpu.classes.*.disabledCstates array
control.cpu.classes.*.disabledCstates[] string
control.rdt object
control.rdt.enable boolean
control.rdt.force boolean
control.rdt.usePodQoSAsDefaultClass boolean
control.rdt.options object
control.rdt.options.l2 object
control.rdt.options.l2.optional boolean
control.rdt.options.l3 object
control.rdt.options.l3.optional boolean
control.rdt.options.mb object
control.rdt.options.mb.optional boolean
control.rdt.partitions object
control.rdt.partitions.* object
control.rdt.partitions.*.l2Allocation object
control.rdt.partitions.*.l2Allocation.* object
control.rdt.partitions.*.l2Allocation.*.unified string
control.rdt.partitions.*.l2Allocation.*.code string
control.rdt.partitions.*.l2Allocation.*.data string
control.rdt.partitions.*.l3Allocation object
control.rdt.partitions.*.l3Allocation.* object
control.rdt.partitions.*.l3Allocation.*.unified string
control.rdt.partitions.*.l3Allocation.*.code string
control.rdt.partitions.*.l3Allocation.*.data string
control.rdt.partitions.*.mbAllocation object
control.rdt.partitions.*.mbAllocation.* array
control.rdt.partitions.*.mbAllocation.*[] string
control.rdt.partitions.*.classes object
control.rdt.partitions.*.classes.* object
control.rdt.partitions.*.classes.*.l2Allocation object
control.rdt.partitions.*.classes.*.l2Allocation.* object
control.rdt.partitions.*.classes.*.l2Allocation.*.unified string
control.rdt.partitions.*.classes.*.l2Allocation.*.code string
control.rdt.partitions.*.classes.*.l2Allocation.*.data string
control.rdt.partitions.*.classes.*.l3Allocation object
control.rdt.partitions.*.classes.*.l3Allocation.* object
control.rdt.partitions.*.classes.*.l3Allocation.*.unified string
control.rdt.partitions.*.classes.*.l3Allocation.*.code string
control.rdt.partitions.*.classes.*.l3Allocation.*.data string
control.rdt.partitions.*.classes.*.mbAllocation object
control.rdt.partitions.*.classes.*.mbAllocation.* array
control.rdt.partitions.*.classes.*.mbAllocation.*[] string
control.blockio object
control.blockio.enable boolean
control.blockio.usePodQoSAsDefaultClass boolean
log object
log.debug array
log.debug[] string
log.source boolean
log.klog object
log.klog.add_dir_header boolean
log.klog.alsologtostderr boolean
log.klog.alsologtostderrthreshold string
log.klog.legacy_stderr_threshold_behavior boolean
log.klog.log_backtrace_at string
log.klog.log_dir string
log.klog.log_file string
log.klog.log_file_max_size integer
log.klog.logtostderr boolean
log.klog.one_output boolean
log.klog.skip_headers boolean
log.klog.skip_log_headers boolean
log.klog.stderrthreshold string
log.klog.v integer
log.klog.vmodule string
instrumentation object
instrumentation.httpEndpoint string
instrumentation.prometheusExport boolean
instrumentation.reportPeriod string
instrumentation.samplingRatePerMillion integer
instrumentation.tracingCollector string
instrumentation.metricsExporter string
instrumentation.logExporter string
instrumentation.logExportPeriod string
instrumentation.metrics object
instrumentation.metrics.enabled array
instrumentation.metrics.enabled[] string
instrumentation.metrics.polled array
instrumentation.metrics.polled[] string
agent object
agent.nodeResourceTopology boolean
agent.podResourceAPI boolean
"""

# Its ConfigStatus and NodeStatus.
GO_STATUS = """
nodes object
nodes.* object
nodes.*.status string
nodes.*.generation integer
nodes.*.errors string
nodes.*.timestamp string
"""

# The Go CRD's enums, defaults, formats, minimums and required keys, by
# path ("" is the spec or the status itself). Go's CRD puts the enum of
# schedulingClasses[].flags on the list; ours on its items (see the CRD).
GO_ENUMS = {
    "defaultCPUPriority": ["high", "normal", "low", "none"],
    "unlimitedBurstable": ["system", "package", "die", "numa", "l3cache"],
    "schedulingClasses[].policy":
        ["none", "other", "fifo", "rr", "batch", "iso", "idle", "deadline"],
    "schedulingClasses[].flags[]":
        ["reset-on-fork", "reclaim", "dl-overrun", "keep-policy",
         "keep-params", "util-clamp-min", "util-clamp-max"],
    "schedulingClasses[].ioClass": ["none", "rt", "be", "idle"],
    "cpuClasses[].pctPriority": ["high", "low"],
    "instrumentation.tracingCollector": ["otlp-http", "otlp-grpc"],
    "instrumentation.metricsExporter":
        ["prometheus", "otlp-http", "otlp-grpc"],
    "instrumentation.logExporter": ["otlp-http", "otlp-grpc"],
    "status:nodes.*.status": ["Success", "Failure"],
}
GO_DEFAULTS = {
    "pinCPU": True,
    "pinMemory": True,
    "preferIsolatedCPUs": True,
    "defaultCPUPriority": "none",
    "unlimitedBurstable": "package",
    "controllableInterrupts": ["*"],
    "agent": {"nodeResourceTopology": True},
    "instrumentation.reportPeriod": "30s",
    "instrumentation.metrics": {"enabled": ["policy", "buildinfo"]},
}
GO_FORMATS = {
    "schedulingClasses[].runtime": "int64",
    "schedulingClasses[].deadline": "int64",
    "schedulingClasses[].period": "int64",
    "log.klog.log_file_max_size": "int64",
    "instrumentation.reportPeriod": "duration",
    "status:nodes.*.generation": "int64",
    "status:nodes.*.timestamp": "date-time",
}
GO_MINIMUMS = {
    "cpuClasses[].energyPerformancePreference": 0,
    "cpuClasses[].turboPriority": 0,
    "cpuClasses[].sstClosID": 0,
}
GO_REQUIRED = {
    "": ["reservedResources"],
    "schedulingClasses[]": ["name"],
    "cpuClasses[]": ["name"],
    "control.cpu": ["classes"],
    "control.rdt.options.l2": ["optional"],
    "control.rdt.options.l3": ["optional"],
    "control.rdt.options.mb": ["optional"],
    "status:": ["nodes"],
    "status:nodes.*": ["status", "generation"],
}

# An object with exactly the keys of the Go policy's sample configuration
# (sample-configs/topologyaware-config.yaml), values of our own.
GO_SAMPLE = {
    "apiVersion": "config.nri/v1alpha1",
    "kind": "TopologyAwarePolicy",
    "metadata": {"name": "default", "namespace": "kube-system"},
    "spec": {
        "pinCPU": True,
        "pinMemory": False,
        "preferIsolatedCPUs": False,
        "preferSharedCPUs": True,
        "colocatePods": False,
        "colocateNamespaces": True,
        "reservedPoolNamespaces": ["ops", "ingress-*"],
        "reservedResources": {"cpu": "1500m"},
        "log": {"source": False, "klog": {"skip_headers": False}},
        "instrumentation": {"reportPeriod": "2m30s",
                            "samplingRatePerMillion": 500},
    },
}

# One object with every section of the Go spec that the sample leaves out.
GO_FULL_SPEC = {
    "pinCPU": False,
    "pinMemory": False,
    "preferIsolatedCPUs": False,
    "preferSharedCPUs": False,
    "colocatePods": True,
    "colocateNamespaces": True,
    "reservedPoolNamespaces": ["ops"],
    "reservedResources": {"cpu": "cpuset:0-1", "memory": "1Gi"},
    "availableResources": {"cpu": "exclude-cpuset:63"},
    "defaultCPUPriority": "high",
    "unlimitedBurstable": "numa",
    "schedulingClasses": [{
        "name": "rt", "policy": "fifo", "priority": 42,
        "flags": ["reset-on-fork", "util-clamp-max"], "nice": -5,
        "runtime": 1000, "deadline": 2000, "period": 4000,
        "ioClass": "be", "ioPriority": 3}],
    "namespaceSchedulingClasses": {"media": "rt"},
    "podQoSSchedulingClasses": {"guaranteed": "rt"},
    "cpuClasses": [{
        "name": "fast", "minFreq": "base", "maxFreq": "3.2GHz",
        "uncoreMinFreq": "1GHz", "uncoreMaxFreq": "2GHz",
        "freqGovernor": "performance", "energyPerformancePreference": 0,
        "disabledCstates": ["C6"], "turboPriority": 2, "pctPriority": "high",
        "pctMinFreq": "base", "pctMaxFreq": "turbo", "sstClosID": 1,
        "publishExtendedResource": True}, {"name": "slow"}],
    "sharedPoolCPUClass": "slow",
    "reservedPoolCPUClass": "slow",
    "defaultExclusiveCPUClass": "fast",
    "controllableInterrupts": ["eth*", "nvme*"],
    "control": {
        "cpu": {"classes": {"fast": {
            "minFreq": 2000000, "maxFreq": 3200000, "uncoreMinFreq": 1,
            "uncoreMaxFreq": 2, "energyPerformancePreference": 1,
            "freqGovernor": "performance", "disabledCstates": ["C6"]}}},
        "rdt": {
            "enable": True, "force": False, "usePodQoSAsDefaultClass": True,
            "options": {"l2": {"optional": True}, "l3": {"optional": True},
                        "mb": {"optional": False}},
            "partitions": {"default": {
                "l2Allocation": {"all": {"unified": "100%"},
                                 "1": {"code": "0-3", "data": "4-7"}},
                "l3Allocation": {"all": {"unified": "100%"},
                                 "1": {"code": "0-3", "data": "4-7"}},
                "mbAllocation": {"all": ["100%", "1000MBps"]},
                "classes": {"Guaranteed": {
                    "l2Allocation": {"0": {"unified": "0xff0"},
                                     "1": {"code": "2,3", "data": "0-1"}},
                    "l3Allocation": {"all": {"unified": "50-60%"},
                                     "1": {"code": "50%", "data": "50%"}},
                    "mbAllocation": {"all": ["80%"]}}}}}},
        "blockio": {"enable": True, "usePodQoSAsDefaultClass": False}},
    "log": {"debug": ["*"], "source": True, "klog": {
        "add_dir_header": True, "alsologtostderr": False,
        "alsologtostderrthreshold": "INFO",
        "legacy_stderr_threshold_behavior": True, "log_backtrace_at": "",
        "log_dir": "/var/log", "log_file": "x.log",
        "log_file_max_size": 1800, "logtostderr": True, "one_output": False,
        "skip_headers": True, "skip_log_headers": False,
        "stderrthreshold": "ERROR", "v": 4, "vmodule": "agent=5"}},
    "instrumentation": {
        "httpEndpoint": ":8891", "prometheusExport": True,
        "reportPeriod": "30s", "samplingRatePerMillion": 1000000,
        "tracingCollector": "otlp-grpc", "metricsExporter": "prometheus",
        "logExporter": "otlp-http", "logExportPeriod": "10s",
        "metrics": {"enabled": ["*"], "polled": ["cpu*"]}},
    "agent": {"nodeResourceTopology": False, "podResourceAPI": True},
}

# Keys of the CRD's schema object a v1 CRD accepts and this file uses;
# anything else (a misspelt "tpye", or $ref, which v1 refuses) fails.
SCHEMA_KEYWORDS = {
    "type", "description", "properties", "additionalProperties", "items",
    "required", "enum", "default", "format", "minimum", "maximum",
    "minLength", "maxLength", "pattern", "nullable",
    "x-kubernetes-preserve-unknown-fields",
}
# Formats the API server knows, of those a CRD like this may use.
K8S_FORMATS = {"int32", "int64", "float", "double", "byte", "date",
               "date-time", "duration", "uri", "uuid", "hostname"}


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
    for word in FILES + ["DRAConsumableCapacity", "DynamicResourceAllocation",
                         "--config-source cluster"]:
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


def rules_of(role):
    """(apiGroup, resource) -> verbs; each granted once."""
    rules = {}
    for r in role["rules"]:
        assert set(r) == {"apiGroups", "resources", "verbs"}, r
        for g in r["apiGroups"]:
            for res in r["resources"]:
                key = (g, res)
                assert key not in rules, "%s granted twice" % (key,)
                assert len(set(r["verbs"])) == len(r["verbs"]), r
                rules[key] = set(r["verbs"])
    return rules


def test_rbac_is_exact():
    got = by_kind("rbac.yaml")
    rbac = "rbac.authorization.k8s.io/v1"
    assert sorted(got) == [
        (rbac, "ClusterRole"), (rbac, "ClusterRoleBinding"),
        (rbac, "Role"), (rbac, "RoleBinding"),
        ("v1", "ServiceAccount")], sorted(got)
    sa = got[("v1", "ServiceAccount")]["metadata"]
    assert sa["namespace"] == "kube-system", sa
    subject = [{"kind": "ServiceAccount", "name": sa["name"],
                "namespace": "kube-system"}]

    role = got[(rbac, "ClusterRole")]
    assert rules_of(role) == RULES, rules_of(role)
    binding = got[(rbac, "ClusterRoleBinding")]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
        "name": role["metadata"]["name"]}, binding["roleRef"]
    assert binding["subjects"] == subject, binding["subjects"]

    # The policies are namespaced: a Role in the config namespace, bound
    # there to the same ServiceAccount.
    role = got[(rbac, "Role")]
    assert role["metadata"]["namespace"] == CONFIG_NAMESPACE, role
    assert rules_of(role) == CONFIG_RULES, rules_of(role)
    binding = got[(rbac, "RoleBinding")]
    assert binding["metadata"]["namespace"] == CONFIG_NAMESPACE, binding
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
        "name": role["metadata"]["name"]}, binding["roleRef"]
    assert binding["subjects"] == subject, binding["subjects"]


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


# The TopologyAwarePolicy CRD.

def crd():
    got = by_kind(CRD)
    assert list(got) == [("apiextensions.k8s.io/v1",
                          "CustomResourceDefinition")], list(got)
    return got[("apiextensions.k8s.io/v1", "CustomResourceDefinition")]


def root():
    """The openAPIV3Schema of the one version."""
    versions = crd()["spec"]["versions"]
    assert len(versions) == 1, versions
    return versions[0]["schema"]["openAPIV3Schema"]


def walk(schema, path=""):
    """(path, schema) of every level, paths as in GO_SPEC."""
    yield path, schema
    for k, v in schema.get("properties", {}).items():
        yield from walk(v, path + "." + k if path else k)
    if isinstance(schema.get("additionalProperties"), dict):
        yield from walk(schema["additionalProperties"],
                        path + ".*" if path else "*")
    if "items" in schema:
        yield from walk(schema["items"], path + "[]")


def levels(part):
    """path -> schema of the spec or the status."""
    return dict(walk(root()["properties"][part]))


def go_paths(text):
    out = {}
    for line in text.strip().splitlines():
        path, typ = line.split()
        assert path not in out, path
        out[path] = typ
    return out


def to_jsonschema(s):
    """A Draft 7 schema that accepts what the API server stores unchanged.
    The API server prunes a key its structural schema does not name
    (unless x-kubernetes-preserve-unknown-fields): here such a key is an
    error, as it would be lost. nullable admits null."""
    out = {}
    for k in ("type", "enum", "required", "format", "minimum", "maximum",
              "minLength", "maxLength", "pattern"):
        if k in s:
            out[k] = s[k]
    if s.get("nullable"):
        out["type"] = [s["type"], "null"]
        if "enum" in out:
            out["enum"] = out["enum"] + [None]
    if "properties" in s:
        out["properties"] = {k: to_jsonschema(v)
                             for k, v in s["properties"].items()}
    if isinstance(s.get("additionalProperties"), dict):
        out["additionalProperties"] = to_jsonschema(s["additionalProperties"])
    elif (s.get("type") == "object" and "properties" in s and
          not s.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    if "items" in s:
        out["items"] = to_jsonschema(s["items"])
    return out


FORMATS = jsonschema.FormatChecker(formats=())


@FORMATS.checks("int64")
def _int64(v):
    return not isinstance(v, int) or -2**63 <= v < 2**63


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(v):
    if not isinstance(v, str):
        return True
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?"
                        r"(Z|[+-]\d\d:\d\d)", v):
        return False
    datetime.datetime.fromisoformat(v[:19])
    return True


@FORMATS.checks("duration")
def _duration(v):
    return not isinstance(v, str) or v == "0" or bool(re.fullmatch(
        r"[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+", v))


def validator():
    schema = to_jsonschema(root())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=FORMATS)


def errors(obj):
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message)
            for e in validator().iter_errors(obj)]


def with_defaults(schema, value):
    """value with the schema's defaults filled in where absent, as the API
    server stores it."""
    value = copy.deepcopy(value)
    if isinstance(value, dict) and schema.get("type") == "object":
        for k, sub in schema.get("properties", {}).items():
            if k not in value and "default" in sub:
                value[k] = copy.deepcopy(sub["default"])
        for k in value:
            sub = schema.get("properties", {}).get(k)
            if sub is None and isinstance(
                    schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None:
                value[k] = with_defaults(sub, value[k])
    elif isinstance(value, list) and "items" in schema:
        value = [with_defaults(schema["items"], v) for v in value]
    return value


def policy(name, spec):
    return {"apiVersion": "config.nri/v1alpha1",
            "kind": "TopologyAwarePolicy",
            "metadata": {"name": name, "namespace": CONFIG_NAMESPACE},
            "spec": spec}


def test_crd_names_and_comment():
    c = crd()
    with open(os.path.join(DIR, CRD)) as f:
        text = f.read()
    head = text[:text.index("apiVersion:")]
    assert "replaces" in head and "topologyawarepolicies.config.nri" in head \
        and "Go" in head, head
    assert c["metadata"]["name"] == "topologyawarepolicies.config.nri"
    spec = c["spec"]
    assert spec["group"] == "config.nri", spec["group"]
    assert spec["scope"] == "Namespaced", spec["scope"]
    # As Go's: no shortNames or categories.
    assert spec["names"] == {"kind": "TopologyAwarePolicy",
                             "listKind": "TopologyAwarePolicyList",
                             "plural": "topologyawarepolicies",
                             "singular": "topologyawarepolicy"}, spec["names"]
    v = spec["versions"][0]
    assert (v["name"], v["served"], v["storage"]) == ("v1alpha1", True, True)
    assert v["subresources"] == {"status": {}}, v["subresources"]
    r = root()
    assert r["type"] == "object" and r["required"] == ["spec"], r
    assert set(r["properties"]) == {"apiVersion", "kind", "metadata", "spec",
                                    "status"}, set(r["properties"])
    assert r["properties"]["metadata"] == {"type": "object"}


def test_crd_is_structural():
    v = validator()  # the mapped schema is a valid Draft 7 schema
    assert v is not None
    for path, s in walk(root()):
        where = path or "(root)"
        assert set(s) <= SCHEMA_KEYWORDS, (where, set(s) - SCHEMA_KEYWORDS)
        assert s.get("type") in ("object", "array", "string", "integer",
                                 "number", "boolean"), where
        assert "x-kubernetes-preserve-unknown-fields" not in s, where
        if s["type"] == "object":
            assert not ("properties" in s and "additionalProperties" in s), \
                "%s: properties and additionalProperties" % where
            for name in s.get("required", []):
                assert name in s.get("properties", {}), (where, name)
        else:
            assert not {"properties", "additionalProperties",
                        "required"} & set(s), where
        assert (s["type"] == "array") == ("items" in s), where
        if "format" in s:
            assert s["format"] in K8S_FORMATS, (where, s["format"])
        for e in s.get("enum", []):
            assert jsonschema.Draft7Validator(to_jsonschema(
                {k: x for k, x in s.items() if k != "enum"})).is_valid(e), \
                (where, e)
        if "default" in s:
            # The API server refuses a default its schema would refuse or
            # prune.
            d = jsonschema.Draft7Validator(to_jsonschema(s),
                                           format_checker=FORMATS)
            assert d.is_valid(s["default"]), (where, s["default"])
    # Every level but metadata says what it is, apart from the Go policy's
    # own controllers and klog's flags.
    for part in ("spec", "status"):
        for path, s in walk(root()["properties"][part]):
            if path.startswith(("control.", "log.klog.")) or \
                    path.endswith("*") or path.endswith("[]"):
                continue
            assert s.get("description"), "%s.%s: no description" % (part,
                                                                     path)


def test_crd_holds_every_go_field():
    for part, text in (("spec", GO_SPEC), ("status", GO_STATUS)):
        have = levels(part)
        for path, typ in go_paths(text).items():
            assert path in have, "%s.%s missing" % (part, path)
            assert have[path]["type"] == typ, (part, path, have[path]["type"])
    for key, want in GO_ENUMS.items():
        part, path = key.split(":") if ":" in key else ("spec", key)
        assert levels(part)[path].get("enum") == want, key
    for key, want in GO_DEFAULTS.items():
        assert levels("spec")[key].get("default") == want, key
    for key, want in GO_FORMATS.items():
        part, path = key.split(":") if ":" in key else ("spec", key)
        assert levels(part)[path].get("format") == want, key
    for key, want in GO_MINIMUMS.items():
        assert levels("spec")[key].get("minimum") == want, key
    for key, want in GO_REQUIRED.items():
        part, path = key.split(":") if ":" in key else ("spec", key)
        assert sorted(levels(part)[path].get("required", [])) == \
            sorted(want), key
    # Nothing else is required, defaulted or enumerated for Go's keys.
    go = go_paths(GO_SPEC)
    for path, s in levels("spec").items():
        if path in go:
            assert ("default" in s) == (path in GO_DEFAULTS), path
            assert ("enum" in s) == (path in GO_ENUMS), path
            assert bool(s.get("required")) == (path in GO_REQUIRED), path


def our_keys():
    """path -> JSON type of every key of topoawared.json(5)."""
    with open(os.path.join(tap.srcdir(), "man", "topoawared.json.5")) as f:
        text = f.read()
    keys = text[text.index(".SH KEYS"):text.index(".SH UNSUPPORTED")]
    got = {}
    for path, typ, rng in re.findall(
            r"\.TP\n\.B (\S+)\nType: ([^\n]+)\n\.br\nDefault: [^\n]*"
            r"\n\.br\nRange: ([^\n]+)\n", keys):
        got[path] = ({"list of strings": "array"}.get(typ, typ), rng)
    assert len(got) >= 20 and "log.level" in got, got
    return got


def test_crd_holds_our_keys():
    have = levels("spec")
    for path, (typ, rng) in our_keys().items():
        # reservedResources.cpu is a key of Go's map of resources.
        at = path if path in have else re.sub(r"\.[^.]+$", ".*", path)
        assert at in have, "spec.%s missing" % path
        s = have[at]
        assert s["type"] == typ, (path, s["type"], typ)
        if path in go_paths(GO_SPEC):
            continue
        # Our own keys carry our ranges, and no default the daemon's
        # schema table would not give anyway: none at all.
        assert "default" not in s, path
        if typ == "string" and re.fullmatch(r"[a-z0-9]+(\|[a-z0-9]+)+", rng):
            assert s.get("enum") == rng.split("|"), (path, s.get("enum"))
        m = re.fullmatch(r"(\d+)\.\.(\d+)", rng)
        if m:
            assert (s.get("minimum"), s.get("maximum")) == \
                (int(m.group(1)), int(m.group(2))), path
    for path in ("dra", "dra.enabled", "dra.driverName",
                 "nodeResourceTopology", "nodeResourceTopology.enabled",
                 "nodeResourceTopology.refreshSeconds", "log.level"):
        assert path in have, path
    st = levels("status")
    assert st["nodes.*.warnings"]["type"] == "array"
    assert st["nodes.*.warnings[]"]["type"] == "string"


def test_examples_validate_and_are_configs():
    machine = tap.mksysfs("packages=2,nodes=2,cores=8,threads=2,mem=2G",
                          "p2n4c32")
    for name, objname in EXAMPLES.items():
        got = by_kind(name)
        assert list(got) == [("config.nri/v1alpha1",
                              "TopologyAwarePolicy")], (name, list(got))
        obj = got[("config.nri/v1alpha1", "TopologyAwarePolicy")]
        assert obj["metadata"] == {"name": objname,
                                   "namespace": CONFIG_NAMESPACE}, obj
        assert "status" not in obj, name
        assert errors(obj) == [], (name, errors(obj))
        # Only keys topoawared reads, so no warnings: each spec is a
        # config file topoawared -n takes on a 32-CPU machine.
        path = os.path.join(tap.tmpdir(), objname + ".json")
        with open(path, "w") as f:
            json.dump(obj["spec"], f)
        r = subprocess.run(
            [os.path.join(tap.builddir(), "topoawared"), "-n",
             "--sysfs-root", machine, "--config", path],
            capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, (name, r.stdout, r.stderr)
    spec = by_kind("topologyawarepolicy-default.yaml")[
        ("config.nri/v1alpha1", "TopologyAwarePolicy")]["spec"]
    for key in ("dra", "nodeResourceTopology", "log"):
        assert key in spec, key
    # Saying every key of the config file aloud is allowed too.
    with open(os.path.join(tap.srcdir(), "contrib", "config",
                           "config.json")) as f:
        assert errors(policy("default", json.load(f))) == []


def test_go_objects_validate():
    assert errors(GO_SAMPLE) == [], errors(GO_SAMPLE)
    full = policy("group.big", GO_FULL_SPEC)
    assert errors(full) == [], errors(full)
    # Every Go path is in the full object (so it tests them all).
    seen = set(value_paths(root()["properties"]["spec"], full["spec"]))
    assert seen == set(go_paths(GO_SPEC)), \
        set(go_paths(GO_SPEC)) ^ seen


def value_paths(schema, v, path=""):
    """The paths (as in GO_SPEC) a value sets, keys of maps as "*"."""
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(schema.get("additionalProperties"), dict):
                sub, seg = schema["additionalProperties"], "*"
            else:
                sub, seg = schema.get("properties", {}).get(k, {}), k
            p = path + "." + seg if path else seg
            yield p
            yield from value_paths(sub, x, p)
    elif isinstance(v, list):
        for x in v:
            yield path + "[]"
            yield from value_paths(schema.get("items", {}), x, path + "[]")


def test_bad_objects_fail():
    """The checks can fail: what the API server would refuse or drop."""
    base = policy("default", {"reservedResources": {"cpu": "1"}})
    assert errors(base) == []
    bad = [
        ({"reservedResources": {"cpu": 1}}, "not of type 'string'"),
        ({}, "'reservedResources' is a required property"),
        ({"reservedResources": {}, "pinCPUs": True},  # pruned: lost
         "'pinCPUs' was unexpected"),
        ({"reservedResources": {}, "log": {"level": "trace"}},
         "is not one of"),
        ({"reservedResources": {}, "dra": {"driverName": "Topo_Aware"}},
         "does not match"),
        ({"reservedResources": {},
          "nodeResourceTopology": {"refreshSeconds": 0}},
         "less than the minimum"),
        ({"reservedResources": {}, "schedulingClasses": [{"policy": "rr"}]},
         "'name' is a required property"),
        ({"reservedResources": {},
          "schedulingClasses": [{"name": "x", "flags": ["fast"]}]},
         "is not one of"),
        ({"reservedResources": {},
          "instrumentation": {"reportPeriod": "soon"}},
         "is not a 'duration'"),
    ]
    for spec, why in bad:
        got = errors(policy("default", spec))
        assert len(got) == 1 and why in got[0], (spec, got)


def test_status_entries():
    obj = policy("default", {"reservedResources": {"cpu": "750m"}})
    obj["status"] = {"nodes": {
        "node-a": {"status": "Success", "generation": 7, "errors": "",
                   "timestamp": "2026-11-02T10:04:05Z",
                   "warnings": ["agent: ignored, only the Go policy reads it",
                                "log.klog: ignored"]},
        "node-b": {"status": "Failure", "generation": 6,
                   "errors": "reservedResources.cpu: cpuset:99 is offline",
                   "timestamp": "2026-11-02T10:04:06.5+02:00",
                   "warnings": []},
        # A node of the Go policy writes no warnings.
        "node-c": {"status": "Success", "generation": 7, "errors": "",
                   "timestamp": "2026-11-02T10:04:07Z"},
    }}
    assert errors(obj) == [], errors(obj)
    # A node that moved to another object removed its entry: none left.
    obj["status"] = {"nodes": {}}
    assert errors(obj) == []
    for entry in ({"status": "Ok", "generation": 7},
                  {"status": "Success"},
                  {"status": "Success", "generation": 7, "warnings": "x"},
                  {"status": "Success", "generation": 7,
                   "timestamp": "yesterday"},
                  {"status": "Success", "generation": 7,
                   "timestamp": "2026-13-02T10:04:05Z"},
                  {"status": "Success", "generation": 7, "reason": "x"}):
        obj["status"] = {"nodes": {"node-a": entry}}
        assert errors(obj) != [], entry


def test_defaults_the_api_server_fills():
    """What every stored object holds though nobody wrote it, so that the
    daemon can tell it from what a person wrote."""
    spec = root()["properties"]["spec"]
    got = with_defaults(spec, {"reservedResources": {"cpu": "750m"}})
    top = {k: v for k, v in GO_DEFAULTS.items() if "." not in k}
    assert got == dict(top, reservedResources={"cpu": "750m"}), got
    got = with_defaults(spec, {"reservedResources": {},
                               "instrumentation": {"httpEndpoint": ":8891"}})
    assert got["instrumentation"] == {
        "httpEndpoint": ":8891", "reportPeriod": "30s",
        "metrics": {"enabled": ["policy", "buildinfo"]}}, got
    for name in EXAMPLES:
        obj = by_kind(name)[("config.nri/v1alpha1", "TopologyAwarePolicy")]
        full = dict(obj, spec=with_defaults(spec, obj["spec"]))
        assert errors(full) == [], (name, errors(full))


tap.run(globals())
