"""The kubelet's side of a DRA driver, for tests of the real daemon.

An independent peer: Debian's python3-grpcio, with messages generated from
the project's proto/ files by Debian's protoc (protocols.md 3 and 4),
never the daemon's own codec. It registers the way the kubelet does: waits
for <kubelet-dir>/plugins_registry/<driver>-reg.sock, calls GetInfo with
the kubelet's 1 s deadline, checks the answer, connects to the endpoint it
names and tells the plugin with NotifyRegistrationStatus. Then it calls
NodePrepareResources and NodeUnprepareResources in v1 or v1beta1 and hands
back the response maps as plain dicts.

    k = Kubelet(os.path.join(folder, "kubelet"))
    k.register()
    got = k.prepare([Claim("ns", "c0", uid)])
    got[uid]["error"], got[uid]["devices"][0]["cdi_device_ids"]
    k.unprepare([Claim("ns", "c0", uid)])
    k.close()

resource_claim() builds the ResourceClaim objects the fake API server
(t/lib/fake_apiserver.py) serves for them (protocols.md 7.3).
"""

import collections
import importlib
import os
import re
import stat
import subprocess
import sys
import tempfile
import time

import grpc

import protogen

DRIVER = "topology-aware.nri.io"
NODE = "testnode"
CAPACITY = "dra.cpu/cpu"
PLUGIN_TYPE = "DRAPlugin"
VERSIONS = ["v1.DRAPlugin", "v1beta1.DRAPlugin"]
REG = "/pluginregistration.Registration/"
SERVICES = {
    "v1": "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/",
    "v1beta1": "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/",
}
# The kubelet's deadlines (protocols.md 4.3); tests pass shorter ones.
GETINFO_TIMEOUT = 1.0
NOTIFY_TIMEOUT = 5.0
CALL_TIMEOUT = 45.0

PROTOS = ("pluginregistration", "dra_v1", "dra_v1beta1")

Claim = collections.namedtuple("Claim", "namespace name uid")

_pb = None


class RegistrationError(Exception):
    """The plugin's GetInfo answer is not one the kubelet accepts."""


def pb():
    """The generated modules as .pluginregistration, .v1 and .v1beta1.
    A module already imported by the test (e.g. pluginregistration_pb2) is
    reused: protobuf's default pool takes each file once per process."""
    global _pb
    if _pb is not None:
        return _pb
    missing = [n for n in PROTOS if n + "_pb2" not in sys.modules]
    if missing:
        base = os.environ.get("TOPOAWARE_TMP") or tempfile.gettempdir()
        out = tempfile.mkdtemp(prefix="proto.", dir=base)
        src = protogen.proto_dir()
        r = subprocess.run([protogen.protoc(), "-I" + src,
                            "--python_out=" + out] +
                           [os.path.join(src, n + ".proto") for n in missing],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("protoc failed: " + r.stderr.strip())
        sys.path.insert(0, out)
        try:
            for n in missing:
                importlib.import_module(n + "_pb2")
        finally:
            sys.path.remove(out)
    mods = {n: sys.modules[n + "_pb2"] for n in PROTOS}

    class NS:
        pluginregistration = mods["pluginregistration"]
        v1 = mods["dra_v1"]
        v1beta1 = mods["dra_v1beta1"]
    _pb = NS
    return _pb


def channel(path):
    """A channel of its own (a private subchannel pool: one connection per
    channel, never shared with another Kubelet of the same test)."""
    return grpc.insecure_channel("unix:" + path,
                                 options=[("grpc.use_local_subchannel_pool",
                                           1)])


def _unary(ch, path, resp_cls):
    return ch.unary_unary(path,
                          request_serializer=lambda m: m.SerializeToString(),
                          response_deserializer=resp_cls.FromString)


def wait_socket(path, timeout):
    """Wait until path is a unix socket; False on the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                return True
        except FileNotFoundError:
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def _claim_msg(mod, c):
    if isinstance(c, dict):
        return mod.Claim(namespace=c.get("namespace", ""),
                         name=c.get("name", ""), uid=c.get("uid", ""))
    return mod.Claim(namespace=c[0], name=c[1], uid=c[2])


def device_dict(d, version):
    out = {"request_names": list(d.request_names),
           "pool_name": d.pool_name,
           "device_name": d.device_name,
           "cdi_device_ids": list(d.cdi_device_ids)}
    if version == "v1":
        out["share_id"] = d.share_id
    return out


class Kubelet:
    def __init__(self, kubelet_dir, driver=DRIVER):
        self.kubelet_dir = kubelet_dir
        self.driver = driver
        self.reg_socket = os.path.join(kubelet_dir, "plugins_registry",
                                       driver + "-reg.sock")
        self.endpoint = None
        self.info = None
        self.reg_channel = None
        self.dra_channel = None

    # Registration (protocols.md 3.2).
    def get_info(self, timeout=GETINFO_TIMEOUT):
        if self.reg_channel is None:
            self.reg_channel = channel(self.reg_socket)
        m = pb().pluginregistration
        return _unary(self.reg_channel, REG + "GetInfo",
                      m.PluginInfo)(m.InfoRequest(), timeout=timeout)

    def check_info(self, info):
        """What the kubelet validates before it registers the plugin."""
        if info.type != PLUGIN_TYPE:
            raise RegistrationError("type %r, want %r"
                                    % (info.type, PLUGIN_TYPE))
        if info.name != self.driver:
            raise RegistrationError("name %r, want %r"
                                    % (info.name, self.driver))
        if not info.endpoint or not os.path.isabs(info.endpoint):
            raise RegistrationError("endpoint %r is not an absolute path"
                                    % info.endpoint)
        want = os.path.join(self.kubelet_dir, "plugins", self.driver,
                            "dra.sock")
        if info.endpoint != want:
            raise RegistrationError("endpoint %r, want %r"
                                    % (info.endpoint, want))
        if list(info.supported_versions) != VERSIONS:
            raise RegistrationError("supported_versions %r, want %r"
                                    % (list(info.supported_versions),
                                       VERSIONS))

    def notify(self, registered, error="", timeout=NOTIFY_TIMEOUT):
        m = pb().pluginregistration
        if self.reg_channel is None:
            self.reg_channel = channel(self.reg_socket)
        return _unary(self.reg_channel, REG + "NotifyRegistrationStatus",
                      m.RegistrationStatusResponse)(
            m.RegistrationStatus(plugin_registered=registered, error=error),
            timeout=timeout)

    def register(self, timeout=10.0, refuse=None):
        """Register like the kubelet; refuse="text" answers with a failed
        registration carrying that error instead. Returns the PluginInfo."""
        if not wait_socket(self.reg_socket, timeout):
            raise RegistrationError("no registration socket %s within %.1f s"
                                    % (self.reg_socket, timeout))
        info = self.get_info()
        try:
            self.check_info(info)
        except RegistrationError as e:
            self.notify(False, str(e))
            raise
        self.info = info
        if refuse is not None:
            self.notify(False, refuse)
            return info
        self.endpoint = info.endpoint
        self.connect(timeout)
        self.notify(True)
        return info

    def connect(self, timeout=10.0):
        """Open the DRA channel and wait until it is connected."""
        if self.endpoint is None:
            self.endpoint = os.path.join(self.kubelet_dir, "plugins",
                                         self.driver, "dra.sock")
        if self.dra_channel is None:
            self.dra_channel = channel(self.endpoint)
        grpc.channel_ready_future(self.dra_channel).result(timeout=timeout)

    # The DRA service (protocols.md 4).
    def _mod(self, version):
        if version not in SERVICES:
            raise ValueError("unknown DRA version %r" % version)
        return getattr(pb(), version)

    def _dra(self):
        if self.dra_channel is None:
            self.connect()
        return self.dra_channel

    def _prepare_call(self, claims, version):
        """The NodePrepareResources stub and its request."""
        mod = self._mod(version)
        req = mod.NodePrepareResourcesRequest(
            claims=[_claim_msg(mod, c) for c in claims])
        return _unary(self._dra(),
                      SERVICES[version] + "NodePrepareResources",
                      mod.NodePrepareResourcesResponse), req

    def prepare_message(self, claims, version="v1", timeout=CALL_TIMEOUT):
        """NodePrepareResources; the response message itself."""
        call, req = self._prepare_call(claims, version)
        return call(req, timeout=timeout)

    def prepare(self, claims, version="v1", timeout=CALL_TIMEOUT):
        """{uid: {"error": text, "devices": [dict]}}. claims are Claim
        tuples (namespace, name, uid) or dicts. A gRPC status error is
        raised as grpc.RpcError."""
        resp = self.prepare_message(claims, version, timeout)
        return {uid: {"error": r.error,
                      "devices": [device_dict(d, version)
                                  for d in r.devices]}
                for uid, r in resp.claims.items()}

    def prepare_future(self, claims, version="v1", timeout=CALL_TIMEOUT):
        """A prepare in flight; .result() is the response message."""
        call, req = self._prepare_call(claims, version)
        return call.future(req, timeout=timeout)

    def unprepare(self, claims, version="v1", timeout=CALL_TIMEOUT):
        """{uid: error text} (empty text: success)."""
        mod = self._mod(version)
        req = mod.NodeUnprepareResourcesRequest(
            claims=[_claim_msg(mod, c) for c in claims])
        resp = _unary(self._dra(),
                      SERVICES[version] + "NodeUnprepareResources",
                      mod.NodeUnprepareResourcesResponse)(req,
                                                          timeout=timeout)
        return {uid: r.error for uid, r in resp.claims.items()}

    def raw(self, path, data, timeout=10.0, socket_path=None):
        """Any method with any request bytes; the response bytes. On the
        DRA channel unless socket_path names another socket."""
        if socket_path is None:
            ch = self._dra()
            return ch.unary_unary(path)(data, timeout=timeout)
        with channel(socket_path) as ch:
            return ch.unary_unary(path)(data, timeout=timeout)

    def close(self):
        for ch in (self.reg_channel, self.dra_channel):
            if ch is not None:
                ch.close()
        self.reg_channel = self.dra_channel = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# ResourceClaims as the API server shows them (protocols.md 7.3).
def result(device, cpus, request="cpus", driver=DRIVER, pool=NODE,
           share_id=None):
    """One allocation result: cpus CPUs (a count, or any quantity string)
    of device, e.g. result("cpudevnuma003", 3)."""
    r = {"request": request, "driver": driver, "pool": pool,
         "device": device, "consumedCapacity": {CAPACITY: str(cpus)}}
    if share_id is not None:
        r["shareID"] = share_id
    return r


def resource_claim(uid, results=None, name="claim", namespace="default",
                   allocated=True, pod_uid=None, pod_uids=()):
    """A ResourceClaim object for FakeApiServer.set_claim(). results is a
    list of result() dicts; allocated=False leaves status.allocation out."""
    requests = sorted({r["request"].split("/")[0] for r in results or []})
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": namespace, "uid": uid},
           "spec": {"devices": {"requests": [
               {"name": q, "exactly": {"deviceClassName": DRIVER}}
               for q in requests]}},
           "status": {}}
    if allocated:
        obj["status"]["allocation"] = {
            "devices": {"results": list(results or []), "config": []},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In",
                 "values": [NODE]}]}]}}
        uids = list(pod_uids) + ([pod_uid] if pod_uid is not None else [])
        if uids:
            obj["status"]["reservedFor"] = [
                {"resource": "pods", "name": "pod-%d" % i, "uid": u}
                for i, u in enumerate(uids)]
    return obj


def cdi_path(cdi_dir, uid, driver=DRIVER):
    """Where the spec of a claim lives (protocols.md 6.3, SPEC R-DRA)."""
    return os.path.join(cdi_dir, "%s-device_%s.json" % (driver, uid))


def cdi_specs(cdi_dir):
    """The files of cdi_dir a CDI reader loads (.json and .yaml), sorted.
    Anything else there must be one of the daemon's spares: hidden,
    empty, named .topoaware-spare.<n> (never a temporary file left)."""
    specs = []
    for name in os.listdir(cdi_dir):
        if name.endswith((".json", ".yaml")):
            specs.append(name)
            continue
        assert re.fullmatch(r"\.topoaware-spare\.[0-9]+", name), name
        assert os.path.getsize(os.path.join(cdi_dir, name)) == 0, name
    return sorted(specs)


def cdi_id(uid, i, driver=DRIVER):
    return "%s/device=claim-%s-%d" % (driver, uid, i)
