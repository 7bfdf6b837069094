"""The DRA tests' node: the daemon on n4c16 with CPU 15 reserved, a
runtime, a fake API server serving the claims and the kubelet stand-in
(kubelet.py), torn down together (apienv.py).

    with DraEnv() as env:
        env.start()
        c = env.claim_on(1, 2, consumers=["pod"])   # 2 CPUs of node 1
        key, value = env.prepare_env(c)
        cid, cpus, mems = env.create("pod", env=["%s=%s" % (key, value)])
        env.stop()

The claims' CPUs are read back from their CDI specs, the one place the
kubelet learns them. A claim's consumers are pods named as env.create
names them: their UIDs (pod_uid) go into the claim's status.reservedFor,
as the scheduler puts them there.
"""

import json
import os
import uuid

import kubelet
import tap
from apienv import ApiEnv
from kubelet import Claim, Kubelet, resource_claim, result
from nri_runtime import parse_cpuset

CONFIG = {"reservedResources": {"cpu": "cpuset:15"}}
RESERVED = {15}
CALL_TIMEOUT = 20.0


def new_uid():
    return str(uuid.uuid4())


def pod_uid(name):
    """The UID of the pod env.create makes for name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "pod/" + name))


def dev(node):
    """The DRA device of a NUMA node."""
    return "cpudevnuma%03d" % node


def cdi_env(cdi_dir, uid):
    """The one variable every device of uid's CDI spec sets, as
    (name, value); the name must be DRA_CPUSET_<uid>."""
    with open(kubelet.cdi_path(cdi_dir, uid)) as f:
        spec = json.load(f)
    envs = {e for d in spec["devices"] for e in d["containerEdits"]["env"]}
    assert len(envs) == 1, spec
    key, _, value = envs.pop().partition("=")
    assert key == "DRA_CPUSET_" + uid, spec
    return key, value


class DraEnv(ApiEnv):
    """ApiEnv on n4c16 (or sysfs_root) with a kubelet: env.k, and more
    connections from env.kubelet()."""

    def __init__(self, config=None, args=(), sysfs_root=None, **kw):
        super().__init__(CONFIG if config is None else config, args,
                         sysfs_root=sysfs_root or tap.n4c16(), **kw)
        self.kdir = os.path.join(self.folder, "kubelet")
        self.k = Kubelet(self.kdir)
        self.cdi_dir = os.path.join(self.folder, "cdi")
        self.m = self.s.machine
        self.others = []
        self._claims = {}

    def start(self, serve=True, register=True):
        super().start(serve=serve)
        if register:
            self.k.register()
        return self

    def restart(self, while_down=None, new_runtime=False):
        """Stops the daemon (SIGTERM, exit 0) and starts it again on the
        same folders (state, CDI specs, sockets) with a new kubelet. The
        runtime reconnects and synchronizes with the containers it still
        runs, after while_down() if given; new_runtime: a new runtime that
        runs nothing."""
        self.k.close()
        if new_runtime:
            self.s.stop()
            self.s = self.session()
        else:
            self.rt.drop()
            assert self.d.stop() == 0, self.d.output()
        if while_down is not None:
            while_down()
        self.k = Kubelet(self.kdir)
        return self.start()

    def kubelet(self):
        """Another kubelet connection (its own HTTP/2 connection)."""
        k = Kubelet(self.kdir)
        k.connect()
        self.others.append(k)
        return k

    def close_clients(self):
        for k in self.others + [self.k]:
            k.close()

    def claim(self, results, uid=None, name=None, namespace="default",
              consumers=(), **kw):
        """Puts a claim on the API server, reserved for the pods named
        consumers; its Claim for the kubelet."""
        uid = uid or new_uid()
        name = name or "claim-" + uid[:8]
        if consumers:
            kw["pod_uids"] = [pod_uid(p) for p in consumers]
        self.api.set_claim(namespace, name,
                           resource_claim(uid, results, name=name,
                                          namespace=namespace, **kw))
        self._claims[uid] = (namespace, name, results, kw)
        return Claim(namespace, name, uid)

    def reserve(self, c, consumers):
        """The claim c is now reserved for the pods named consumers (the
        scheduler adds a pod that shares it)."""
        namespace, name, results, kw = self._claims[c.uid]
        kw = dict(kw, pod_uids=[pod_uid(p) for p in consumers])
        self.api.set_claim(namespace, name,
                           resource_claim(c.uid, results, name=name,
                                          namespace=namespace, **kw))
        self._claims[c.uid] = (namespace, name, results, kw)

    def claim_on(self, node, n, name=None, consumers=()):
        """A claim of n CPUs of NUMA node `node`."""
        return self.claim([result(dev(node), n)], name=name,
                          consumers=consumers)

    def prepare(self, c):
        """Prepares the one claim c; its answer {"error", "devices"}."""
        return self.k.prepare([c], timeout=CALL_TIMEOUT)[c.uid]

    def prepare_env(self, c):
        """Prepares c, which must succeed; the variable its CDI spec
        sets, as (name, value)."""
        got = self.prepare(c)
        assert got["error"] == "", got
        return self.cdi_env(c.uid)

    def cdi_env(self, uid):
        return cdi_env(self.cdi_dir, uid)

    def cdi_cpus(self, uid):
        return parse_cpuset(self.cdi_env(uid)[1])

    def create(self, name, qos="BestEffort", request=0, env=(),
               namespace="default"):
        """Creates a container in a pod of its own, whose UID is
        pod_uid(name) (Guaranteed: limit = request); its id and the CPUs
        and mems of the reply."""
        rt = self.rt
        p = rt.make_pod(name, qos=qos, uid=pod_uid(name),
                        namespace=namespace)
        limit = request if qos == "Guaranteed" else 0
        c = rt.make_container(p, "c", request=request, limit=limit,
                              env=list(env))
        cpu = rt.create_container(p, c).adjust.linux.resources.cpu
        return c.id, parse_cpuset(cpu.cpus), parse_cpuset(cpu.mems)
