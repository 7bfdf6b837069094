"""A container runtime's side of NRI, for tests of the real daemon.

The simulator listens on the NRI socket path like containerd does,
accepts the plugin's connection and speaks the connection multiplexer and
ttrpc itself, with Python framing of its own and messages from Debian's
protoc (t/lib/protogen.py): never the daemon's C codec. It answers the
Runtime service (RegisterPlugin, UpdateContainers) and calls the Plugin
service: Configure, Synchronize (whole or split with `more`), and the
container and pod events, as dedicated calls or as StateChange.

It keeps a runtime's view of pods and containers: adjustments and updates
the plugin returns are applied to each container's cpuset, mems and shares,
so a later Synchronize reports what was applied. Every adjustment, every
update in a reply and every UpdateContainers request is recorded.

Like containerd (protocols.md 9.4) it holds one lock while it waits for
the answer to an event and takes it again before it answers an
UpdateContainers: a plugin that waited for that answer inside its event
handler would hit the event's deadline. Every wait has a deadline.
"""

import contextlib
import os
import socket
import struct
import threading
import time
import zlib

import protogen

PLUGIN_CONN = 1     # the runtime calls the plugin
RUNTIME_CONN = 2    # the plugin calls the runtime
PLUGIN_SERVICE = "nri.pkg.api.v1alpha1.Plugin"
RUNTIME_SERVICE = "nri.pkg.api.v1alpha1.Runtime"
REQUEST = 1
RESPONSE = 2
MAX_DATA = 4 << 20
FIRST_MAX = 4096
UNIMPLEMENTED = 12
REGISTRATION_TIMEOUT = 5.0
REQUEST_TIMEOUT = 2.0

# Event numbers and the mask bit of each (protocols.md 2.5).
EVENTS = {
    "RUN_POD_SANDBOX": 1, "STOP_POD_SANDBOX": 2, "REMOVE_POD_SANDBOX": 3,
    "CREATE_CONTAINER": 4, "POST_CREATE_CONTAINER": 5, "START_CONTAINER": 6,
    "POST_START_CONTAINER": 7, "UPDATE_CONTAINER": 8,
    "POST_UPDATE_CONTAINER": 9, "STOP_CONTAINER": 10, "REMOVE_CONTAINER": 11,
}


def event_bit(name):
    return 1 << (EVENTS[name] - 1)


class SimError(Exception):
    pass


class Closed(SimError):
    """The plugin's connection went away."""


class CallError(SimError):
    """The plugin answered with an error status."""

    def __init__(self, method, code, message):
        super().__init__("%s: code %d: %s" % (method, code, message))
        self.method = method
        self.code = code
        self.message = message


def ttrpc_frame(stream, typ, data, flags=0):
    return struct.pack(">IIBB", len(data), stream, typ, flags) + data


def trunk_frames(conn, msg):
    """Cut one ttrpc message the way the Go writer does: a first trunk
    frame of at most 4096 bytes, the rest as one more frame."""
    first = msg[:FIRST_MAX]
    out = struct.pack(">II", conn, len(first)) + first
    rest = msg[FIRST_MAX:]
    if rest:
        out += struct.pack(">II", conn, len(rest)) + rest
    return out


def shares_of(milli):
    """The kubelet's cpu.shares for a CPU request."""
    if not milli:
        return 2
    return max(2, min(262144, milli * 1024 // 1000))


def cgroup_parent(qos, uid):
    """The systemd cgroup parent the kubelet gives a pod of a QoS class."""
    u = uid.replace("-", "_")
    if qos == "Guaranteed":
        return "kubepods-pod%s.slice" % u
    return "kubepods-%s-pod%s.slice" % (qos.lower(), u)


class Conn:
    """One accepted plugin connection: the trunk, its two logical ttrpc
    connections, our client on 1 and our server on 2."""

    def __init__(self, rt, sock):
        self.rt = rt
        self.pb = rt.pb
        self.sock = sock
        self.wlock = threading.Lock()
        self.plock = threading.Lock()
        self.next_id = 1
        self.pending = {}
        self.closed = threading.Event()
        self.registered = threading.Event()
        self.register_request = None
        self.close_reason = None
        # time.perf_counter() when call() last had its answer, before the
        # caller applies it: where a round trip ends for the bench.
        self.answered = 0.0
        # and when its request went, built: where a round trip starts.
        self.sent = 0.0
        self.streams = {PLUGIN_CONN: bytearray(), RUNTIME_CONN: bytearray()}
        # Per logical connection: bytes left of the message being cut
        # into trunk frames, and how many frames it took so far.
        self.left = {PLUGIN_CONN: 0, RUNTIME_CONN: 0}
        self.pieces = {PLUGIN_CONN: 0, RUNTIME_CONN: 0}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # Writing.
    def send_raw(self, data, timeout=30.0):
        """All of data. The socket's timeout is the reader's short poll
        (it is one socket), so a large write that waits on a slow reader
        (a sanitizer build on a loaded machine) goes on until timeout."""
        deadline = time.monotonic() + timeout
        view = memoryview(data)
        with self.wlock:
            while view:
                try:
                    n = self.sock.send(view)
                except socket.timeout:
                    if time.monotonic() > deadline:
                        raise
                    continue
                view = view[n:]

    def send_message(self, conn, msg):
        self.send_raw(trunk_frames(conn, msg))

    # Reading: one thread per connection.
    def _read(self):
        buf = bytearray()
        try:
            self.sock.settimeout(0.2)
            while not self.closed.is_set():
                try:
                    data = self.sock.recv(1 << 20)
                except socket.timeout:
                    continue
                if not data:
                    self.close_reason = "EOF"
                    break
                buf += data
                while len(buf) >= 8:
                    cid, n = struct.unpack(">II", buf[:8])
                    if len(buf) < 8 + n:
                        break
                    payload = bytes(buf[8:8 + n])
                    del buf[:8 + n]
                    if cid in self.streams:
                        self._check_trunk(cid, payload)
                        self.streams[cid] += payload
                        self._frames(cid)
        except OSError as e:
            self.close_reason = str(e)
        finally:
            self.closed.set()
            with self.plock:
                for slot in self.pending.values():
                    slot[0].set()

    def _violation(self, what):
        with self.rt.state:
            self.rt.violations.append(what)

    def _check_trunk(self, cid, payload):
        """The rules the Go reader imposes (protocols.md 2.2): a frame
        that starts a message holds its whole header and at most 4096
        bytes, no frame holds bytes of two messages, a message takes at
        most two frames, and a message is at most 4 MiB."""
        if self.left[cid] == 0:
            if len(payload) < 10:
                self._violation("conn %d: header split" % cid)
                return
            length = struct.unpack(">I", payload[:4])[0]
            if length > MAX_DATA:
                self._violation("conn %d: message of %d bytes" %
                                (cid, length))
            if len(payload) > FIRST_MAX:
                self._violation("conn %d: first frame of %d bytes" %
                                (cid, len(payload)))
            self.left[cid] = 10 + length
            self.pieces[cid] = 0
        if len(payload) > self.left[cid]:
            self._violation("conn %d: two messages in one frame" % cid)
            self.left[cid] = 0
            return
        self.left[cid] -= len(payload)
        self.pieces[cid] += 1
        if self.pieces[cid] > 2:
            self._violation("conn %d: a message in %d frames" %
                            (cid, self.pieces[cid]))

    def _frames(self, cid):
        s = self.streams[cid]
        while len(s) >= 10:
            length, sid, typ, _flags = struct.unpack(">IIBB", s[:10])
            if len(s) < 10 + length:
                break
            data = bytes(s[10:10 + length])
            del s[:10 + length]
            if cid == PLUGIN_CONN and typ == RESPONSE:
                with self.plock:
                    slot = self.pending.get(sid)
                if slot is not None:
                    slot[1] = data
                    slot[0].set()
            elif cid == RUNTIME_CONN and typ == REQUEST:
                self._serve(sid, data)

    # The Runtime service.
    def _reply(self, sid, msg=None, code=0, message=""):
        resp = self.pb.ttrpc.Response()
        if code:
            resp.status.code = code
            resp.status.message = message
        elif msg is not None:
            resp.payload = msg.SerializeToString()
        self.send_message(RUNTIME_CONN,
                          ttrpc_frame(sid, RESPONSE, resp.SerializeToString()))

    def _serve(self, sid, data):
        nri = self.pb.nri
        req = self.pb.ttrpc.Request()
        req.ParseFromString(data)
        if req.service != RUNTIME_SERVICE:
            self._reply(sid, code=UNIMPLEMENTED, message="no such service")
        elif req.method == "RegisterPlugin":
            r = nri.RegisterPluginRequest()
            r.ParseFromString(req.payload)
            self.register_request = r
            self._reply(sid, nri.Empty())
            self.registered.set()
        elif req.method == "UpdateContainers":
            r = nri.UpdateContainersRequest()
            r.ParseFromString(req.payload)
            with self.rt.state:
                self.rt.received.append(r)
                self.rt.state.notify_all()
            # Not from the reader: it must go on reading event replies.
            threading.Thread(target=self.rt._update_containers,
                             args=(self, sid, r), daemon=True).start()
        else:
            self._reply(sid, code=UNIMPLEMENTED,
                        message="%s not implemented" % req.method)

    # Our client on connection 1.
    def next_stream(self):
        """Take a stream id for a request sent by hand."""
        with self.plock:
            sid = self.next_id
            self.next_id += 2
            return sid

    def call(self, method, req, resp_cls, timeout=REQUEST_TIMEOUT):
        sid = self.next_stream()
        with self.plock:
            slot = [threading.Event(), None]
            self.pending[sid] = slot
        env = self.pb.ttrpc.Request(service=PLUGIN_SERVICE, method=method,
                                    payload=req.SerializeToString(),
                                    timeout_nano=int(timeout * 1e9))
        frame = ttrpc_frame(sid, REQUEST, env.SerializeToString())
        self.sent = time.perf_counter()
        try:
            self.send_message(PLUGIN_CONN, frame)
        except OSError as e:
            raise Closed("%s: %s" % (method, e))
        ok = slot[0].wait(timeout)
        self.answered = time.perf_counter()
        with self.plock:
            self.pending.pop(sid, None)
        if slot[1] is None:
            if self.closed.is_set():
                raise Closed("%s: the plugin closed the connection (%s)"
                             % (method, self.close_reason))
            if not ok:
                raise SimError("%s: no answer within %.1f s"
                               % (method, timeout))
        resp = self.pb.ttrpc.Response()
        resp.ParseFromString(slot[1])
        if resp.HasField("status") and resp.status.code != 0:
            raise CallError(method, resp.status.code, resp.status.message)
        out = resp_cls()
        out.ParseFromString(resp.payload)
        return out

    def call_many(self, method, reqs, resp_cls, timeout=REQUEST_TIMEOUT):
        """Several requests in one write, so that the plugin reads them at
        once (one loop turn); their answers, or the CallError or Closed
        each ended with, in order."""
        slots, data = [], b""
        for req in reqs:
            sid = self.next_stream()
            slot = [threading.Event(), None]
            with self.plock:
                self.pending[sid] = slot
            env = self.pb.ttrpc.Request(service=PLUGIN_SERVICE,
                                        method=method,
                                        payload=req.SerializeToString(),
                                        timeout_nano=int(timeout * 1e9))
            data += trunk_frames(PLUGIN_CONN, ttrpc_frame(
                sid, REQUEST, env.SerializeToString()))
            slots.append((sid, slot))
        self.send_raw(data)
        out = []
        for sid, slot in slots:
            slot[0].wait(timeout)
            with self.plock:
                self.pending.pop(sid, None)
            if slot[1] is None:
                out.append(Closed("%s: no answer (%s)" %
                                  (method, self.close_reason)))
                continue
            resp = self.pb.ttrpc.Response()
            resp.ParseFromString(slot[1])
            if resp.HasField("status") and resp.status.code != 0:
                out.append(CallError(method, resp.status.code,
                                     resp.status.message))
                continue
            r = resp_cls()
            r.ParseFromString(resp.payload)
            out.append(r)
        return out

    def close(self):
        self.closed.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.reader.join(5)
        self.sock.close()

    def wait_closed(self, timeout):
        return self.closed.wait(timeout)


class Runtime:
    """The runtime: a listener, the current plugin connection, and pods
    and containers as the runtime knows them."""

    def __init__(self, path, pb=None):
        self.path = path
        self.pb = pb or protogen.generate()
        self.lsock = None
        self.conn = None
        self.events = 0
        self.pods = {}
        self.containers = {}
        self.lock = threading.Lock()        # containerd's NRI lock
        self.holding = False      # held by the caller (in_one_event)
        self.state = threading.Condition()  # guards the records below
        self.adjustments = []     # (container id, ContainerAdjustment)
        self.reply_updates = []   # (method, [ContainerUpdate])
        self.received = []        # UpdateContainersRequest, on arrival
        self.pushed = []          # the same, once answered (under lock)
        self.applied = []         # (method or "pushed", id, cpus), in order
        self.dropped = []         # pushed, not applied: their plugin went
        self.fail_updates = set() # ids UpdateContainers reports failed
        self.violations = []      # framing rules the plugin broke
        self.configure_response = None
        self.request_timeout = 2000  # ms, told in Configure

    # The socket.
    def listen(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(self.path)
        s.listen(4)
        self.lsock = s

    def stop_listening(self):
        if self.lsock is not None:
            self.lsock.close()
            self.lsock = None
        if os.path.exists(self.path):
            os.unlink(self.path)

    def accept(self, timeout=10.0):
        self.lsock.settimeout(timeout)
        try:
            sock, _ = self.lsock.accept()
        except socket.timeout:
            raise SimError("the plugin did not connect within %.1f s"
                           % timeout)
        sock.settimeout(None)
        self.conn = Conn(self, sock)
        return self.conn

    def drop(self):
        """Close the plugin's connection, as a runtime going away does."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def close(self):
        self.drop()
        self.stop_listening()

    # The session (protocols.md 2.3).
    def serve(self, timeout=10.0, split=None, sync_timeout=REQUEST_TIMEOUT):
        """Accept the plugin, wait for its registration, configure it and
        synchronize; returns the Synchronize replies."""
        c = self.accept(timeout)
        if not c.registered.wait(REGISTRATION_TIMEOUT):
            self.drop()
            raise SimError("no RegisterPlugin within %.1f s"
                           % REGISTRATION_TIMEOUT)
        self.configure()
        return self.synchronize(split=split, timeout=sync_timeout)

    def configure(self):
        nri = self.pb.nri
        req = nri.ConfigureRequest(runtime_name="nri-runtime-sim",
                                   runtime_version="0.1",
                                   registration_timeout=5000,
                                   request_timeout=self.request_timeout,
                                   NRI_version="v0.12.0")
        resp = self.conn.call("Configure", req, nri.ConfigureResponse)
        if resp.events & ~0x7FF:
            raise SimError("invalid plugin events: 0x%x" % resp.events)
        self.configure_response = resp
        self.events = resp.events or 0x7FF
        return resp

    def subscribed(self, name):
        return bool(self.events & event_bit(name))

    def synchronize(self, split=None, timeout=REQUEST_TIMEOUT):
        """Send every pod and container; split=N cuts the lists into
        messages of at most N containers (and N pods), `more` set on all
        but the last. The deadline is one for all parts, as containerd
        has it. Returns the replies."""
        nri = self.pb.nri
        pods = list(self.pods.values())
        ctrs = list(self.containers.values())
        if split is None:
            parts = [(pods, ctrs)]
        else:
            parts = []
            i = j = 0
            while i < len(pods) or j < len(ctrs) or not parts:
                parts.append((pods[i:i + split], ctrs[j:j + split]))
                i += split
                j += split
        deadline = time.monotonic() + timeout
        replies = []
        with self.lock:
            for k, (p, c) in enumerate(parts):
                more = k < len(parts) - 1
                req = nri.SynchronizeRequest(pods=p, containers=c, more=more)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SimError("Synchronize: deadline passed")
                resp = self.conn.call("Synchronize", req,
                                      nri.SynchronizeResponse, timeout=left)
                if more and (not resp.more or len(resp.update)):
                    raise SimError("plugin does not handle split sync "
                                   "requests")
                replies.append(resp)
            # Under the lock, as containerd applies them: an update the
            # plugin pushes right after must not be overwritten by these.
            self._apply_updates("Synchronize", replies[-1].update)
        return replies

    # Pods and containers, as the kubelet would describe them.
    def make_pod(self, name, namespace="default", qos="BestEffort",
                 annotations=None, uid=None, labels=None):
        nri = self.pb.nri
        uid = uid or "%08x-0000-4000-8000-%012x" % (
            zlib.crc32(name.encode()), len(self.pods))
        pod = nri.PodSandbox(id="pod-" + name, name=name, uid=uid,
                             namespace=namespace)
        for k, v in (annotations or {}).items():
            pod.annotations[k] = v
        for k, v in (labels or {}).items():
            pod.labels[k] = v
        pod.linux.cgroup_parent = cgroup_parent(qos, uid)
        return pod

    def make_container(self, pod, name, request=0, limit=0, env=(),
                       cid=None, labels=None, mem_limit=0, oom_adj=None):
        """A container of pod, with the labels the kubelet gives every
        container through CRI and, over them, those given; mem_limit in
        bytes and the OOM score adjustment the kubelet sets (see
        kubelet_oom_adj), when given."""
        nri = self.pb.nri
        c = nri.Container(id=cid or "%s-%s" % (pod.id, name),
                          pod_sandbox_id=pod.id, name=name,
                          state=nri.CONTAINER_CREATED)
        c.env.extend(env)
        cri = {
            "io.kubernetes.container.name": name,
            "io.kubernetes.pod.name": pod.name,
            "io.kubernetes.pod.namespace": pod.namespace,
            "io.kubernetes.pod.uid": pod.uid,
        }
        cri.update(labels or {})
        for k, v in cri.items():
            c.labels[k] = v
        cpu = c.linux.resources.cpu
        cpu.shares.value = shares_of(request)
        if limit:
            cpu.quota.value = limit * 100000 // 1000
            cpu.period.value = 100000
        if mem_limit:
            c.linux.resources.memory.limit.value = mem_limit
        if oom_adj is not None:
            c.linux.oom_score_adj.value = oom_adj
        return c

    def add(self, pod, ctr=None):
        """Add to the runtime's lists without telling the plugin (it
        learns at the next Synchronize)."""
        self.pods[pod.id] = pod
        if ctr is not None:
            ctr.state = self.pb.nri.CONTAINER_RUNNING
            self.containers[ctr.id] = ctr

    # Applying what the plugin says.
    @staticmethod
    def _set_cpu(dst, src):
        if src.cpus:
            dst.cpus = src.cpus
        if src.mems:
            dst.mems = src.mems
        if src.HasField("shares"):
            dst.shares.value = src.shares.value

    def _apply_updates(self, method, updates):
        with self.state:
            if method is not None:
                self.reply_updates.append((method, list(updates)))
            for u in updates:
                c = self.containers.get(u.container_id)
                if c is not None and u.linux.resources.HasField("cpu"):
                    self._set_cpu(c.linux.resources.cpu,
                                  u.linux.resources.cpu)
                    self.applied.append((method or "pushed", u.container_id,
                                         u.linux.resources.cpu.cpus))
            self.state.notify_all()

    def _update_containers(self, conn, sid, req):
        # containerd takes its NRI lock for an unsolicited update.
        if not self.lock.acquire(timeout=30):
            return
        try:
            # The plugin that sent it went while it waited for the lock:
            # containerd's handler context ends with the connection, and
            # the update fails. Applied, it would undo what the next
            # plugin's Synchronize set meanwhile.
            if conn.closed.is_set():
                with self.state:
                    self.dropped.append(req)
                return
            # Applied and recorded at once: a test that sees the request
            # must also see its cpusets.
            with self.state:
                self._apply_updates(None, req.update)
                self.pushed.append(req)
                self.state.notify_all()
            resp = self.pb.nri.UpdateContainersResponse()
            for u in req.update:
                if u.container_id in self.fail_updates:
                    resp.failed.append(u)
            try:
                conn._reply(sid, resp)
            except OSError:
                pass
        finally:
            self.lock.release()

    def cpus(self, cid):
        """The cpuset the runtime applied to a container."""
        with self.state:
            return self.containers[cid].linux.resources.cpu.cpus

    def mems(self, cid):
        with self.state:
            return self.containers[cid].linux.resources.cpu.mems

    def wait_pushed(self, predicate, timeout=10.0, arrived=False):
        """Wait until predicate(list of pushed requests) holds: those
        answered, or with arrived those received (answered or not)."""
        deadline = time.monotonic() + timeout
        with self.state:
            while not predicate(self.received if arrived else
                                self.pushed):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.state.wait(min(left, 0.2))
            return True

    # Events.
    def _event(self, method, req, resp_cls, timeout):
        if self.holding:
            return self.conn.call(method, req, resp_cls, timeout=timeout)
        with self.lock:
            return self.conn.call(method, req, resp_cls, timeout=timeout)

    @contextlib.contextmanager
    def in_one_event(self):
        """Holds the NRI lock as containerd does while it handles an
        event, the caller's events going on under it: an UpdateContainers
        the plugin sends meanwhile waits for the lock, and is applied
        after them."""
        self.lock.acquire()
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            self.lock.release()

    def create_shared(self, n, prefix="w"):
        """n shared containers, each in a pod of its own named prefix<i>:
        Burstable (100m) and BestEffort by turns; their ids."""
        ids = []
        for i in range(n):
            p = self.make_pod("%s%d" % (prefix, i),
                              qos="BestEffort" if i % 2 else "Burstable")
            c = self.make_container(p, "c", request=0 if i % 2 else 100)
            self.create_container(p, c)
            ids.append(c.id)
        return ids

    def create_container(self, pod, ctr, timeout=REQUEST_TIMEOUT):
        nri = self.pb.nri
        self.pods[pod.id] = pod
        resp = self._event("CreateContainer", nri.CreateContainerRequest(
            pod=pod, container=ctr), nri.CreateContainerResponse, timeout)
        ctr.state = nri.CONTAINER_RUNNING
        with self.state:
            self.containers[ctr.id] = ctr
            self.adjustments.append((ctr.id, resp.adjust))
            if resp.adjust.linux.resources.HasField("cpu"):
                self._set_cpu(ctr.linux.resources.cpu,
                              resp.adjust.linux.resources.cpu)
        self._apply_updates("CreateContainer", resp.update)
        return resp

    def update_container(self, cid, request, limit=0, mem_limit=None,
                         timeout=REQUEST_TIMEOUT):
        nri = self.pb.nri
        ctr = self.containers[cid]
        res = nri.LinuxResources()
        res.cpu.shares.value = shares_of(request)
        if limit:
            res.cpu.quota.value = limit * 100000 // 1000
            res.cpu.period.value = 100000
        if mem_limit is not None:
            res.memory.limit.value = mem_limit
        req = nri.UpdateContainerRequest(pod=self.pods[ctr.pod_sandbox_id],
                                         container=ctr, linux_resources=res)
        resp = self._event("UpdateContainer", req,
                           nri.UpdateContainerResponse, timeout)
        self._apply_updates("UpdateContainer", resp.update)
        return resp

    def _state_change(self, event, pod, ctr, timeout):
        nri = self.pb.nri
        req = nri.StateChangeEvent(event=EVENTS[event], pod=pod)
        if ctr is not None:
            req.container.CopyFrom(ctr)
        return self._event("StateChange", req, nri.Empty, timeout)

    def start_container(self, cid, timeout=REQUEST_TIMEOUT):
        """The container runs: told as a StateChange START_CONTAINER, as
        runtimes before v0.12 do and later ones do for a plugin that
        does not implement StartContainer."""
        nri = self.pb.nri
        ctr = self.containers[cid]
        ctr.state = nri.CONTAINER_RUNNING
        pod = self.pods.get(ctr.pod_sandbox_id)
        if not self.subscribed("START_CONTAINER"):
            return None
        return self._state_change("START_CONTAINER", pod, ctr, timeout)

    def stop_container(self, cid, state_change=False,
                       timeout=REQUEST_TIMEOUT):
        nri = self.pb.nri
        ctr = self.containers[cid]
        ctr.state = nri.CONTAINER_STOPPED
        pod = self.pods.get(ctr.pod_sandbox_id)
        if not self.subscribed("STOP_CONTAINER"):
            return None
        if state_change:
            return self._state_change("STOP_CONTAINER", pod, ctr, timeout)
        resp = self._event("StopContainer", nri.StopContainerRequest(
            pod=pod, container=ctr), nri.StopContainerResponse, timeout)
        self._apply_updates("StopContainer", resp.update)
        return resp

    def remove_container(self, cid, state_change=False,
                         timeout=REQUEST_TIMEOUT):
        """RemoveContainer as an NRI v0.12 runtime sends it: the dedicated
        call, falling back to StateChange when it is not implemented."""
        nri = self.pb.nri
        ctr = self.containers.pop(cid)
        pod = self.pods.get(ctr.pod_sandbox_id)
        if not self.subscribed("REMOVE_CONTAINER"):
            return None
        if not state_change:
            try:
                return self._event("RemoveContainer",
                                   nri.RemoveContainerRequest(
                                       pod=pod, container=ctr),
                                   nri.RemoveContainerResponse, timeout)
            except CallError as e:
                if e.code != UNIMPLEMENTED:
                    raise
        return self._state_change("REMOVE_CONTAINER", pod, ctr, timeout)

    def remove_pod(self, pid, state_change=False, timeout=REQUEST_TIMEOUT):
        nri = self.pb.nri
        pod = self.pods.pop(pid)
        for cid in [c.id for c in self.containers.values()
                    if c.pod_sandbox_id == pid]:
            del self.containers[cid]
        if not self.subscribed("REMOVE_POD_SANDBOX"):
            return None
        if not state_change:
            try:
                return self._event("RemovePodSandbox",
                                   nri.RemovePodSandboxRequest(pod=pod),
                                   nri.RemovePodSandboxResponse, timeout)
            except CallError as e:
                if e.code != UNIMPLEMENTED:
                    raise
        return self._state_change("REMOVE_POD_SANDBOX", pod, None, timeout)

    def call(self, method, req, resp_cls, timeout=REQUEST_TIMEOUT):
        """Any Plugin method, under the NRI lock."""
        return self._event(method, req, resp_cls, timeout)


# Facts of a recorded machine, for assertions derived from the hardware.
def kubelet_oom_adj(qos, mem_request, capacity):
    """The OOM score adjustment the kubelet gives a container: -997 for
    Guaranteed, 1000 for BestEffort, and for Burstable 1000 less the
    thousandths of the machine's memory it requests, within 3 to 999."""
    if qos == "Guaranteed":
        return -997
    if qos == "BestEffort":
        return 1000
    adj = 1000 - (1000 * mem_request) // capacity
    return min(max(adj, 3), 999)


def parse_cpuset(text):
    """The kernel's list form ("0-3,8") as a set of ints."""
    out = set()
    for part in text.strip().split(","):
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-")
            out.update(range(int(lo), int(hi) + 1))
        else:
            out.add(int(part))
    return out


def format_cpuset(cpus):
    """The kernel's list form of a set of CPUs, written here: runs of two
    or more as a-b."""
    out, run = [], []
    for c in sorted(cpus) + [None]:
        if run and c is not None and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1
                       else "%d-%d" % (run[0], run[-1]))
        run = [c]
    return ",".join(out)


class Machine:
    """Online and isolated CPUs, thread siblings and NUMA nodes, read from
    a sysfs tree (the folder that holds sys/)."""

    def __init__(self, root):
        base = os.path.join(root, "sys", "devices", "system")

        def read(*path):
            with open(os.path.join(base, *path)) as f:
                return f.read()

        self.online = parse_cpuset(read("cpu", "online"))
        try:
            self.isolated = parse_cpuset(read("cpu", "isolated"))
        except FileNotFoundError:
            self.isolated = set()
        self.siblings = {
            cpu: frozenset(parse_cpuset(read(
                "cpu", "cpu%d" % cpu, "topology", "thread_siblings_list")))
            for cpu in self.online}
        self.nodes = {}
        self.memory = {}        # node: bytes
        self.distance = {}      # node: [distance to node 0, 1, ...]
        for name in os.listdir(os.path.join(base, "node")):
            if name.startswith("node") and name[4:].isdigit():
                n = int(name[4:])
                cpus = parse_cpuset(read("node", name, "cpulist"))
                if cpus:
                    self.nodes[n] = cpus
                self.distance[n] = [int(d) for d in
                                    read("node", name, "distance").split()]
                for line in read("node", name, "meminfo").splitlines():
                    if "MemTotal:" in line:
                        self.memory[n] = int(line.split()[-2]) * 1024
        # Memory types as the Go policy tells them: nodes with CPUs are
        # DRAM; a CPU-less one is HBM when smaller than the average DRAM
        # node, else PMEM.
        dram = [self.memory.get(n, 0) for n in self.nodes
                if self.memory.get(n, 0) > 0]
        avg = sum(dram) // len(dram) if dram else 0
        self.mem_type = {}
        for n, size in self.memory.items():
            if size <= 0:
                continue
            if n in self.nodes:
                self.mem_type[n] = "DRAM"
            else:
                self.mem_type[n] = "HBM" if size < avg else "PMEM"

    def nodes_of(self, cpus):
        return {n for n, c in self.nodes.items() if c & set(cpus)}

    def default_mems(self, cpus):
        """The memory of a container on cpus with the default types (DRAM
        and PMEM): the DRAM nodes of the CPUs and the PMEM nodes nearest
        to them."""
        zone = self.nodes_of(cpus)
        pmem = [n for n, t in self.mem_type.items() if t == "PMEM"]
        if pmem and zone:
            near = min(self.distance[z][p] for z in zone for p in pmem)
            zone |= {p for p in pmem
                     if any(self.distance[z][p] == near for z in zone)}
        return zone

    def mem_exports(self, nodes):
        """What resources.sh says of memory on nodes: ALL_MEMS, and the
        same split by type where a type has any."""
        out = {"ALL_MEMS": format_cpuset(nodes)}
        for t in ("DRAM", "PMEM", "HBM"):
            of = {n for n in nodes if self.mem_type.get(n) == t}
            if of:
                out[t + "_MEMS"] = format_cpuset(of)
        return out

    def is_whole_cores(self, cpus):
        """cpus is a union of complete thread-sibling groups."""
        return all(self.siblings[c] <= set(cpus) for c in cpus)


class Session:
    """The real daemon (t/lib/daemon.py) and a runtime for it, torn down
    together. The reconnect backoff is capped low so tests are quick."""

    def __init__(self, config=None, machine="server", args=(), folder=None,
                 sysfs_root=None, daemon_class=None):
        import daemon
        cls = daemon_class or daemon.Daemon
        self.d = cls(machine=machine, config=config, folder=folder,
                     sysfs_root=sysfs_root,
                     args=["--nri-reconnect-max", "400"] + list(args))
        self.rt = Runtime(self.d.nri_socket)
        self.machine = Machine(self.d.sysfs_root)

    def start(self, serve=True, **kw):
        if self.rt.lsock is None:
            self.rt.listen()
        self.d.start()
        if serve:
            return self.rt.serve(**kw)
        return None

    def status(self):
        r = self.d.admin("status")
        if not r.get("ok"):
            raise SimError("status: %r" % r)
        return r["result"]

    def wait_status(self, predicate, timeout=10.0):
        """Poll the admin status until predicate(status) holds."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.status()
            if predicate(st):
                return st
            if time.monotonic() > deadline:
                raise SimError("status never matched: %r" % st)
            time.sleep(0.05)

    def stop(self):
        """Stop both; the daemon must exit 0 with no sanitizer report."""
        import daemon
        self.rt.close()
        rc = self.d.stop()
        out = self.d.output()
        if self.rt.violations:
            raise SimError("the daemon broke framing rules: %r" %
                           self.rt.violations[:10])
        for bad in daemon.SANITIZER:
            if bad in out:
                raise SimError("the daemon reported %r:\n%s" % (bad, out))
        if rc != 0:
            raise SimError("the daemon exited with %s:\n%s" % (rc, out))
        return rc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.rt.close()
        self.d.kill()
        return False
