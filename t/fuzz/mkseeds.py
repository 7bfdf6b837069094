#!/usr/bin/env python3
"""Writes the hand-made seed inputs of the fuzz targets into
t/fuzz/corpus/NAME/: valid messages of each input, built here field by
field (protobuf wire format, HTTP/2 frames) so that no generated code is
needed. Run from anywhere: python3 t/fuzz/mkseeds.py. Inputs the fuzzer
found are kept beside these under other names and are not touched."""

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


# protobuf wire format: enough to write messages by field number.
def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def vfield(num, n):
    return varint(num << 3) + varint(n)


def lfield(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def kv(num, key, value):
    return lfield(num, lfield(1, key) + lfield(2, value))


# ttrpc and the NRI multiplexer.
def ttrpc_frame(stream, typ, data, flags=0):
    return struct.pack(">IIBB", len(data), stream, typ, flags) + data


def mux_frame(conn, data):
    return struct.pack(">II", conn, len(data)) + data


# NRI messages.
def linux_resources(shares=None, quota=None, period=None, cpus="",
                    mem_limit=None):
    mem = b""
    if mem_limit is not None:
        mem = lfield(1, lfield(1, vfield(1, mem_limit % (1 << 64))))
    cpu = b""
    if shares is not None:
        cpu += lfield(1, vfield(1, shares))
    if quota is not None:
        cpu += lfield(2, vfield(1, quota))
    if period is not None:
        cpu += lfield(3, vfield(1, period))
    if cpus:
        cpu += lfield(6, cpus)
    return mem + lfield(2, cpu)


def pod(pid, ns="default", parent="", annotations=()):
    m = lfield(1, pid) + lfield(2, "pod-" + pid) + lfield(3, "uid-" + pid)
    m += lfield(4, ns)
    for k, v in annotations:
        m += kv(6, k, v)
    if parent:
        m += lfield(8, lfield(3, parent))
    return m


def container(cid, pid, env=(), res=None, state=None, oom=None):
    m = lfield(1, cid) + lfield(2, pid) + lfield(3, "ctr-" + cid)
    if state is not None:
        m += vfield(4, state)
    for e in env:
        m += lfield(8, e)
    if res is not None:
        oomf = b"" if oom is None else lfield(4, vfield(1, oom % (1 << 64)))
        m += lfield(11, lfield(3, res) + oomf +
                    lfield(5, "kubepods-burstable-pod.slice:cri:" + cid))
    return m


GUARANTEED = "/kubepods.slice/kubepods-pod1.slice"
BURSTABLE = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2.slice"
BESTEFFORT = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod3.slice"

create_g = lfield(1, pod("p1", parent=GUARANTEED)) + lfield(2, container(
    "c1", "p1", env=["PATH=/bin", "DRA_CPUSET_0d6f3c2a=2-3"],
    res=linux_resources(2048, 200000, 100000)))
create_b = lfield(1, pod("p2", ns="kube-system", parent=BURSTABLE, annotations=[
    ("cpu.preserve.resource-policy.nri.io", "false"),
    ("prefer-isolated-cpus.resource-policy.nri.io/container.ctr-c2", "true"),
    ("resource.nri.io/cpu", "claim")])) + lfield(2, container(
        "c2", "p2", res=linux_resources(512, 150000, 100000)))
create_be = lfield(1, pod("p3", parent=BESTEFFORT)) + lfield(2, container(
    "c3", "p3", res=linux_resources(2)))
create_nopod = lfield(2, container("c4", "", env=["A", "=", "B=C=D"]))
create_mt = lfield(1, pod("p6", parent=BESTEFFORT, annotations=[
    ("memory-type.resource-policy.nri.io/container.ctr-c6", "hbm,DRAM"),
    ("memory-type.resource-policy.nri.io", "dram,flash,")])) + lfield(2, container(
        "c6", "p6", res=linux_resources(2)))
update = lfield(1, pod("p1", parent=GUARANTEED)) + lfield(2, container(
    "c1", "p1", res=linux_resources(2048, 200000, 100000))) + \
    lfield(3, linux_resources(4096, 400000, 100000))
sync = lfield(1, pod("p1", parent=GUARANTEED)) + lfield(1, pod("p2", parent=BURSTABLE)) + \
    lfield(2, container("c1", "p1", res=linux_resources(2048, 200000, 100000), state=3)) + \
    lfield(2, container("c2", "p2", res=linux_resources(512, 0, 100000), state=3)) + \
    lfield(2, container("c5", "p2", state=4)) + lfield(2, container("c1", "p1"))

put("nri", "create-guaranteed", b"\x00" + create_g)
put("nri", "create-burstable", b"\x00" + create_b)
put("nri", "create-besteffort", b"\x00" + create_be)
put("nri", "create-no-pod", b"\x00" + create_nopod)
put("nri", "create-memory-type", b"\x00" + create_mt)
put("nri", "update", b"\x01" + update)
# Memory: a limit and the kubelet's OOM score adjustment (-997 for
# Guaranteed, a request read back for Burstable), and an update's limit.
create_mem = lfield(1, pod("p7", parent=GUARANTEED)) + lfield(2, container(
    "c7", "p7", res=linux_resources(2048, 200000, 100000,
                                    mem_limit=512 << 20), oom=-997))
create_mem_b = lfield(1, pod("p8", parent=BURSTABLE)) + lfield(2, container(
    "c8", "p8", res=linux_resources(512, 0, 100000, mem_limit=-1), oom=700))
update_mem = lfield(1, pod("p7", parent=GUARANTEED)) + lfield(2, container(
    "c7", "p7", res=linux_resources(2048, 200000, 100000,
                                    mem_limit=512 << 20), oom=-997)) + \
    lfield(3, linux_resources(2048, 200000, 100000, mem_limit=1 << 30))
put("nri", "create-memory-limit", b"\x00" + create_mem)
put("nri", "create-memory-burstable", b"\x00" + create_mem_b)
put("nri", "update-memory-limit", b"\x01" + update_mem)
put("nri", "synchronize", b"\x02" + sync)

req = lfield(1, "nri.pkg.api.v1alpha1.Plugin") + lfield(2, "CreateContainer") + \
    lfield(3, create_g) + vfield(4, 2000000000) + kv(5, "k", "v")
resp_ok = lfield(2, lfield(1, lfield(1, "c1") + lfield(2, lfield(3, linux_resources(cpus="0-1")))))
resp_err = lfield(1, vfield(1, 13) + lfield(2, "boom"))
ttrpc = ttrpc_frame(1, 1, req) + ttrpc_frame(3, 1, lfield(2, "Configure")) + \
    ttrpc_frame(2, 2, resp_ok) + ttrpc_frame(5, 2, resp_err) + \
    ttrpc_frame(1, 1, req) + ttrpc_frame(7, 3, b"x") + ttrpc_frame(9, 9, b"")
put("ttrpc", "requests", b"\x00" + ttrpc)
put("ttrpc", "requests-split", b"\x07" + ttrpc)
put("ttrpc", "oversize", b"\x00" + struct.pack(">IIBB", (4 << 20) + 1, 1, 1, 0) + b"\0" * 64)

msg = ttrpc_frame(1, 1, req)
trunk = mux_frame(1, msg[:7]) + mux_frame(1, msg[7:]) + mux_frame(2, ttrpc_frame(2, 2, resp_ok)) + \
    mux_frame(5, b"dropped") + mux_frame(1, b"")
put("mux", "frames", b"\x00" + trunk)
put("mux", "frames-split", b"\x03" + trunk)
put("mux", "one-message", b"\x00" + msg)
put("mux", "reserved", b"\x00" + mux_frame(0, b"x"))

# gRPC message framing and header values.
put("grpc", "message", b"\x00" + b"\x00" + struct.pack(">I", 4) + b"abcd")
put("grpc", "message-split", b"\x02" + b"\x00" + struct.pack(">I", 11) + b"hello world")
put("grpc", "compressed", b"\x00\x01" + struct.pack(">I", 1) + b"x")
put("grpc", "timeout", b"100m")
put("grpc", "message-text", b"bad %E2%82%AC%zz claim")

# DRA requests: v1 and v1beta1, prepare and unprepare.
UID = "0d6f3c2a-1b2c-4d5e-8f90-123456789abc"
claims = lfield(1, lfield(1, "default") + lfield(2, UID) + lfield(3, "claim-a")) + \
    lfield(1, lfield(1, "ns-b") + lfield(2, "uid-2") + lfield(3, "claim-b")) + \
    lfield(1, lfield(1, "default") + lfield(2, UID) + lfield(3, "claim-a")) + \
    lfield(1, lfield(1, "x") + lfield(2, "../../etc") + lfield(3, "y"))
for i, name in enumerate(["prepare-v1", "unprepare-v1", "prepare-v1beta1", "unprepare-v1beta1"]):
    put("dra", name, bytes([i]) + claims)

# Registration: GetInfo, NotifyRegistrationStatus.
put("registration", "getinfo", b"\x00")
put("registration", "registered", b"\x01" + vfield(1, 1))
put("registration", "refused", b"\x01" + lfield(2, "version v9 not supported"))


# HTTP/2 clients, frame by frame, headers as HPACK literals.
def h2frame(typ, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([typ, flags]) + struct.pack(">I", stream) + payload


def hlit(name, value):
    return b"\x00" + bytes([len(name)]) + name.encode() + bytes([len(value)]) + value.encode()


def headers(path, method="POST", ctype="application/grpc"):
    h = hlit(":method", method) + hlit(":scheme", "http") + hlit(":path", path) + \
        hlit(":authority", "localhost") + hlit("te", "trailers")
    if ctype:
        h += hlit("content-type", ctype)
    return h


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = h2frame(4, 0, 0)


def grpc_msg(data):
    return b"\x00" + struct.pack(">I", len(data)) + data


def call(stream, path, data, **kw):
    return h2frame(1, 4, stream, headers(path, **kw)) + h2frame(0, 1, stream, grpc_msg(data))


put("h2", "echo", PREFACE + SETTINGS + call(1, "/fuzz.Test/Echo", b"hello"))
put("h2", "calls", PREFACE + SETTINGS + h2frame(4, 1, 0) +
    call(1, "/fuzz.Test/Echo", b"a") + call(3, "/fuzz.Test/Fail", b"b") +
    call(5, "/fuzz.Test/Later", b"c") + call(7, "/no.Such/Method", b"") +
    call(9, "/fuzz.Test/Echo", b"", method="GET") +
    call(11, "/fuzz.Test/Echo", b"", ctype="text/plain") +
    h2frame(6, 0, 0, b"12345678") + h2frame(8, 0, 0, struct.pack(">I", 1000)))
put("h2", "reset-midway", PREFACE + SETTINGS +
    h2frame(1, 4, 1, headers("/fuzz.Test/Echo")) + h2frame(0, 0, 1, b"\x00\x00\x00\x00\x10ab") +
    h2frame(3, 0, 1, struct.pack(">I", 8)) + h2frame(7, 0, 0, struct.pack(">II", 1, 0)))
put("h2", "trailers-only-headers", PREFACE + SETTINGS +
    h2frame(1, 5, 1, headers("/fuzz.Test/Echo")))
put("h2", "bad-preface", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")

# Admin requests (and reply lines, which the same target decodes).
put("admin", "requests", b"\x00" + b'{"command":"status"}\n\n{"command":"log-level","args":["debug"]}\r\n'
    b'{"command":"grants","args":[]}\n{"command":1}\nnot json\n{"command":"x","extra":1}\n')
put("admin", "requests-split", b"\x05" + b'{"command":"reload"}\n{"command":"pools"}\n{"command":"metrics"')
put("admin", "reload-dry-run", b"\x07" + b'{"command":"reload","args":["--dry-run"]}\n'
    b'{"command":"reload","args":["--dry-run","eyJwaW5DUFUiOmZhbHNlfQ=="]}\n'
    b'{"command":"reload","args":["--dry-run","Zh=="]}\n')
put("admin", "reply-ok", b'{"ok":true,"result":{"version":"0.1.0"}}\n')
put("admin", "reply-error", b'{"ok":false,"error":"no such command"}\n')

# ResourceClaims as the API server answers them.
def claim_doc(results, uid=UID, reserved=None):
    d = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "claim-a", "namespace": "default", "uid": uid},
         "status": {"allocation": {"devices": {"results": results}}}}
    if reserved is not None:
        d["status"]["reservedFor"] = reserved
    return json.dumps(d, indent=1)


DRV = "topology-aware.nri.io"
ours = {"request": "cpus", "driver": DRV, "pool": "node-a", "device": "cpudevnuma000",
        "consumedCapacity": {"dra.cpu/cpu": "2"}}
put("claimdoc", "one-result", claim_doc([ours], reserved=[
    {"resource": "pods", "name": "p", "uid": "pod-uid-1"}]))
put("claimdoc", "two-results", claim_doc([
    dict(ours, request="cpus/big", shareID="s-1"),
    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu0"},
    dict(ours, device="cpudevnuma001", consumedCapacity={"dra.cpu/cpu": "1500m"})],
    reserved=[{"resource": "pods", "name": "p", "uid": "pod-uid-1"},
              {"resource": "deployments", "apiGroup": "apps", "name": "d", "uid": "d-1"}]))
put("claimdoc", "no-capacity", claim_doc([dict(ours, consumedCapacity=None)]))
put("claimdoc", "other-uid", claim_doc([ours], uid="other"))

# Config documents.
with open(os.path.join(HERE, "..", "..", "contrib", "config", "config.json"), "rb") as f:
    put("config", "example", f.read())
put("config", "empty", "{}")
put("config", "cpuset-reserved", '{"reservedResources": {"cpu": "cpuset:3,7"}, '
    '"availableResources": {"cpu": "cpuset:0-7"}, "reservedPoolNamespaces": ["kube-*", "?"]}')
put("config", "exclude", '{"reservedResources": {"cpu": "1"}, "availableResources": '
    '{"cpu": "exclude-cpuset:6-7"}, "defaultCPUPriority": "high", "unlimitedBurstable": "numa", '
    '"colocatePods": true, "colocateNamespaces": true, "log": {"level": "debug"}}')
put("config", "unknown-key", '{"pinCpu": true, "nodeResourceTopology": {"refreshSeconds": 0}}')

# The cluster config source: a TopologyAwarePolicy, its spec, a Node, a
# kept config.
TAP_SPEC = {"reservedResources": {"cpu": "750m"}, "pinCPU": True,
            "agent": {"nodeResourceTopology": True},
            "controllableInterrupts": ["*"],
            "log": {"source": True, "level": "info", "klog": {"skip_headers": True}},
            "instrumentation": {"reportPeriod": "60s", "httpEndpoint": ":8891"},
            "dra": {"enabled": False}}
put("fleet", "spec", json.dumps(TAP_SPEC))
put("fleet", "object", json.dumps({
    "apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy",
    "metadata": {"name": "default", "namespace": "kube-system", "generation": 3,
                 "labels": {"config.nri/group": "g1"}},
    "spec": TAP_SPEC, "status": {"nodes": {"n1": {"status": "Success", "generation": 3}}}}))
put("fleet", "node-deprecated-label", json.dumps({
    "metadata": {"name": "n1", "labels": {"group.config.nri": "Bad_Group"}}}))
put("fleet", "kept", json.dumps({
    "version": 1, "namespace": "kube-system", "name": "node.n1", "uid": "u-1",
    "generation": 2, "resourceVersion": "17", "appliedAt": "2026-12-02T10:00:00Z",
    "config": json.dumps({"reservedResources": {"cpu": "cpuset:3"}}),
    "warnings": ["log.source: ignored"]}))

# Kubeconfigs: relative credential files only (the target's rule).
KC = """apiVersion: v1
clusters:
- cluster:
    certificate-authority: ca.crt
    server: https://192.0.2.10:6443/
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: system:node:node-a
  name: system:node:node-a@kubernetes
current-context: system:node:node-a@kubernetes
kind: Config
users:
- name: system:node:node-a
  user:
    client-certificate: kubelet.pem
    client-key: kubelet.pem
"""
put("kubeconfig", "kubelet", KC)
put("kubeconfig", "data-and-token", """apiVersion: v1
clusters:
- name: a
  cluster: {server: "http://127.0.0.1:8080", certificate-authority-data: aGVsbG8=, insecure-skip-tls-verify: true}
- name: b
  cluster: {server: "https://b:443"}
contexts:
- {name: one, context: {cluster: a, user: u}}
- {name: two, context: {cluster: b, user: v}}
current-context: one
users:
- {name: u, user: {token: abc, client-certificate-data: Y2VydA==, client-key-data: a2V5}}
- {name: v, user: {tokenFile: kubeconfig}}
""")
put("kubeconfig", "token-file", KC.replace("current-context: system:node:node-a@kubernetes",
                                           "current-context: system:node:node-a@kubernetes\n"
                                           "# token").replace(
    "    client-certificate: kubelet.pem\n    client-key: kubelet.pem\n",
    "    tokenFile: kubeconfig\n"))
put("kubeconfig", "exec", KC.replace(
    "    client-certificate: kubelet.pem\n    client-key: kubelet.pem\n",
    "    exec:\n      command: aws\n"))

# sysfs files, in fuzz-sysfs.c's order, NUL-separated.
def sysfs(*pieces):
    return b"\0".join(p.encode() for p in pieces)


put("sysfs", "two-cpus", sysfs(
    "0-1\n", "", "",
    "0\n", "0\n", "0\n", "", "0-1\n", "2400000\n",
    "1\n", "Data\n", "0\n", "32K\n", "0-1\n",
    "", "0\n", "0\n", "0-1\n", "balance_performance\n",
    "", "", "", "", "", ""))
put("sysfs", "two-nodes", sysfs(
    "0-1\n", "1\n", "1\n",
    "0\n", "", "0\n", "0\n", "0\n", "",
    "3\n", "Unified\n", "1\n", "1024K\n", "0-1\n",
    "1\n", "1\n", "0\n", "1\n", "",
    "0\n", "Node 0 MemTotal:       16384 kB\n", "10 21\n",
    "1\n", "Node 1 MemTotal:       16384 kB\nNode 1 MemFree: 1 kB\n", "21 10\n"))
put("sysfs", "offline", sysfs(
    "", "", "",
    "0\n", "", "0\n", "-1\n", "", "",
    "2\n", "Instruction\n", "", "2M\n", "",
    "0\n", "", "", "", ""))

# cpuset text and quantities.
for i, s in enumerate(["0-3,8,10-11", "0", "", "7-7,1,3-5", "0-8191", "1-0", " 1", "2,,3", "\n"]):
    put("cpuset", "%d" % i, s)
for i, s in enumerate(["1500m", "2", "1.5", "2Ki", "1e3", "0.0001", "-1", "-0", "1n",
                       "9223372036854775807", "12E", ".5", "1.", "+2"]):
    put("quantity", "%d" % i, s)

# HTTP endpoint requests: a state byte (1 live, 2 ready, 4 metrics on,
# 8 the rest is also the not-ready reason), the method, a space, the target.
for name, b, s in [("metrics", 7, "GET /metrics"), ("healthz", 3, "GET /healthz"),
                   ("readyz", 12, "HEAD /readyz?verbose=1"), ("post", 7, "POST /metrics"),
                   ("unknown", 7, "GET /nope#x"), ("absolute", 0, "GET http://host/metrics"),
                   ("reason", 8, "GET /readyz\n\x01")]:
    put("http", name, bytes([b]) + s.encode())

# Affinity annotations: both forms, the operators, joint keys, globs.
for i, s in enumerate([
        "a: [b]\nc: [a, b]\n",
        "a:\n- match: {key: name, operator: Equals, values: [b]}\n  weight: 5\n",
        "a:\n- scope: {key: namespace, operator: In, values: [x, y]}\n"
        "  match: {key: pod/labels/app, operator: MatchesAny, values: [\"d[a-c]*\", \"?b\"]}\n",
        "a:\n- match: {key: \":,-pod/qosclass,pod/name,name\", operator: Matches, values: [\"*-pod-a\"]}\n",
        "a:\n- match: {operator: AlwaysTrue}\n  weight: -3000\n",
        "a:\n- match: {key: labels/app, operator: NotIn, values: [\"*\"]}\n"
        "- match: {key: tags/x, operator: NotExist}\n",
        "x: &m [ {match: {key: name, operator: Exists}} ]\na: *m\n",
        "a: [b\n", "", "- a\n", "a: {b: c}\n"]):
    put("affinity", "%d" % i, s)

# pbcheck: the same requests, its first byte picking the descriptor
# (fuzz-pbcheck.c's table: 3 sync, 4 create, 5 update, 11-14 DRA, 15-16
# registration).
for f in sorted(os.listdir(os.path.join(HERE, "corpus", "nri"))):
    if f.startswith("seed-"):
        with open(os.path.join(HERE, "corpus", "nri", f), "rb") as fp:
            b = fp.read()
        put("pbcheck", "nri-" + f[5:], bytes([{0: 4, 1: 5, 2: 3}[b[0]]]) + b[1:])
for i, name in enumerate(["prepare-v1", "unprepare-v1", "prepare-v1beta1", "unprepare-v1beta1"]):
    put("pbcheck", "dra-" + name, bytes([11 + i]) + claims)
put("pbcheck", "dra-nul-uid", bytes([11]) + lfield(1, lfield(1, "n") + lfield(2, b"x\0y") + lfield(3, "c")))
put("pbcheck", "reg-getinfo", b"\x0f")
put("pbcheck", "reg-registered", b"\x10" + vfield(1, 1))
put("pbcheck", "ttrpc-request", b"\x00" + req)

# Watch streams: events one per line, cut into pieces at NUL bytes (how
# fuzz-watchev.c feeds them), an ERROR 410, and malformed events.
def watch_event(t, obj):
    return json.dumps({"type": t, "object": obj}).encode() + b"\n"


node = {"apiVersion": "v1", "kind": "Node", "metadata": {
    "name": "node-a", "uid": "u", "resourceVersion": "101", "labels": {"a": "b"}}}
tap = {"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy",
       "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7", "generation": 2},
       "spec": {"reservedResources": {"cpu": "750m"}, "x": ["}{", "\"\\"]}}
added, modified = watch_event("ADDED", node), watch_event("MODIFIED", tap)
put("watchev", "stream", added + modified +
    watch_event("BOOKMARK", {"kind": "Node", "metadata": {"resourceVersion": "200"}}) +
    watch_event("DELETED", node))
put("watchev", "pieces", added[:20] + b"\0" + added[20:] + b"\0\0" + modified[:-5] + b"\0" +
    modified[-5:])
put("watchev", "gone", watch_event("ERROR", {
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
    "message": "too old resource version: 5 (9)", "reason": "Expired", "code": 410}))
put("watchev", "not-json", b'{"type": MODIFIED, "object": {}}\n')
put("watchev", "unknown-type", b'{"type":"NOPE","object":{}}\n')
put("watchev", "no-rv", b'{"type":"ADDED","object":{"metadata":{}}}\n')
put("watchev", "array", b"  \r\n\t[1]")
put("watchev", "no-newlines", modified.strip() + added.strip())


# fuzz-jsonpick: answers to a NodeResourceTopology write, and the kinds of
# text jansson refuses.
nrt_answer = {
    "apiVersion": "topology.node.k8s.io/v1alpha2",
    "kind": "NodeResourceTopology",
    "metadata": {"name": "node-1", "resourceVersion": "123456",
                 "uid": "0b6f2c1e-8d1a-4c55-9a6e-3d1f5f0e9a11",
                 "managedFields": [{"manager": "topoawared",
                                    "operation": "Update"}]},
    "attributes": [{"name": "topologyManagerPolicy", "value": "none"}],
    "zones": [{"name": "node-%d" % i, "type": "Node",
               "costs": [{"name": "node-%d" % k, "value": 10 + 11 * (i != k)}
                         for k in range(2)],
               "resources": [{"name": "cpu", "capacity": "28",
                              "allocatable": "26", "available": "20"}]}
              for i in range(2)],
}
put("jsonpick", "nrt", json.dumps(nrt_answer, indent=1))
put("jsonpick", "nrt-compact", json.dumps(nrt_answer, separators=(",", ":")))
put("jsonpick", "escaped",
    '{"meta\\u0064ata":{"resourceVersion":"\\u00e9\\ud83d\\ude00\\n"}}')
put("jsonpick", "utf8", '{"metadata":{"resourceVersion":"é€😀"}}')
put("jsonpick", "twice", '{"metadata":{},"metadata":{}}')
put("jsonpick", "numbers", "[0,-0.5e+10,1E-7,12345678901234567890,1e999]")
put("jsonpick", "literals", '[true,false,null,"",{},[]]')
put("jsonpick", "deep", "[" * 40 + "]" * 40)
put("jsonpick", "bad", '{"metadata":{"resourceVersion":"\\ud800"}}')
