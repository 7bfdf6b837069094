"""A fake Kubernetes API server for the tests (protocols.md section 7).

It serves ResourceClaims and Nodes from fixtures, keeps ResourceSlices and
NodeResourceTopologies the client creates, updates and deletes, serves
TopologyAwarePolicies the tests set (with their status subresource, which
clients merge-patch), checks
their shape the way the real server's validation would (a malformed object
gets 422 and a Status body), keeps resourceVersion and answers 404 and 409
like the real one. Tests can make it fail (fail_next), hang until released
(hang), answer slowly (delay) or with any bytes (raw_next, or raw_get for
the GETs of one path), serve https with client certificates (tls), and read
every request it saw (recorded).

Nodes and TopologyAwarePolicies can be listed (with a resourceVersion,
fieldSelector metadata.name=X and a simple labelSelector key=value) and
watched: GET ...?watch=1&resourceVersion=RV streams, chunked, the events
after RV from the collection's event log, then new ones as they happen,
until timeoutSeconds, break_watches() or stop(); with allowWatchBookmarks,
a BOOKMARK now and then (bookmark_interval, or send_bookmarks()). Watch
tests can expire old resourceVersions (410, as after a compaction) and
garble or oversize the next event.

    api = FakeApiServer(token="secret")
    api.start()            # port 0: the kernel chooses; see api.url
    api.set_claim("ns", "claim", {...})
    ...
    api.stop()

Python standard library only; the server runs in its own threads.
"""

import json
import os
import random
import re
import ssl
import string
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

RESOURCE = "/apis/resource.k8s.io/v1"
POLICY = "/apis/config.nri/v1alpha1"
NRT = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)"
                      r"(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+)?$")
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
                    r"(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


def dns_subdomain(s, limit=253):
    return (isinstance(s, str) and 0 < len(s) <= limit and
            all(DNS_LABEL.match(p) for p in s.split(".")))


def qualified_name(s):
    if not isinstance(s, str):
        return False
    if "/" in s:
        domain, _, ident = s.partition("/")
        return (dns_subdomain(domain, 63) and C_IDENT.match(ident) is not None
                and len(ident) <= 32)
    return C_IDENT.match(s) is not None and len(s) <= 32


def quantity(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, str) and QUANTITY.match(v) is not None


def status(code, reason, message, **details):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success" if code < 300 else "Failure",
            "message": message, "reason": reason, "details": details,
            "code": code}


def merge_patch(target, patch):
    """RFC 7386: patch applied to target (neither is changed)."""
    if not isinstance(patch, dict):
        return json.loads(json.dumps(patch))
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _selected(obj, query):
    """Whether obj passes the fieldSelector and labelSelector of a query
    (terms k=v or k==v, comma-separated)."""
    def terms(key):
        out = []
        for sel in query.get(key, []):
            for term in sel.split(","):
                if not term:
                    continue
                k, _, v = term.partition("=")
                out.append((k, v[1:] if v.startswith("=") else v))
        return out

    def field(dotted):
        o = obj
        for part in dotted.split("."):
            o = o.get(part) if isinstance(o, dict) else None
        return o

    labels = (obj.get("metadata") or {}).get("labels") or {}
    return (all(field(k) == v for k, v in terms("fieldSelector")) and
            all(labels.get(k) == v for k, v in terms("labelSelector")))


def _copy(obj):
    return json.loads(json.dumps(obj))


def _meta_errors(obj, api_version, kind, errs, generate=False):
    if obj.get("apiVersion") != api_version:
        errs.append("apiVersion: must be %s" % api_version)
    if obj.get("kind") != kind:
        errs.append("kind: must be %s" % kind)
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        errs.append("metadata: required")
        return
    name = meta.get("name")
    if name is None and generate and "generateName" in meta:
        name = meta["generateName"] + "x"
    if not dns_subdomain(name):
        errs.append("metadata.name: must be a DNS subdomain")


def slice_errors(obj):
    """What the real server's validation would say about a ResourceSlice
    (protocols.md 7.1); an empty list when it is fine."""
    errs = []
    if not isinstance(obj, dict):
        return ["body: must be an object"]
    _meta_errors(obj, "resource.k8s.io/v1", "ResourceSlice", errs, True)
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return errs + ["spec: required"]
    if not dns_subdomain(spec.get("driver"), 63):
        errs.append("spec.driver: must be a lower-case DNS subdomain of "
                    "at most 63 characters")
    nodes = [k for k in ("nodeName", "nodeSelector", "allNodes",
                         "perDeviceNodeSelection")
             if spec.get(k) not in (None, False, "")]
    if len(nodes) != 1:
        errs.append("spec: exactly one of nodeName, nodeSelector, allNodes, "
                    "perDeviceNodeSelection is required")
    pool = spec.get("pool")
    if not isinstance(pool, dict):
        errs.append("spec.pool: required")
    else:
        name = pool.get("name")
        if (not isinstance(name, str) or not name or len(name) > 253 or
                not all(dns_subdomain(p) for p in name.split("/"))):
            errs.append("spec.pool.name: invalid")
        gen = pool.get("generation")
        if not isinstance(gen, int) or isinstance(gen, bool) or gen < 0:
            errs.append("spec.pool.generation: must be an integer >= 0")
        cnt = pool.get("resourceSliceCount")
        if not isinstance(cnt, int) or isinstance(cnt, bool) or cnt <= 0:
            errs.append("spec.pool.resourceSliceCount: must be > 0")
    devices = spec.get("devices", [])
    if not isinstance(devices, list):
        return errs + ["spec.devices: must be a list"]
    advanced = any(isinstance(d, dict) and (
        d.get("taints") or d.get("consumesCounters") or
        any(isinstance(a, dict) and
            any(k in a for k in ("ints", "bools", "strings", "versions"))
            for a in (d.get("attributes") or {}).values()))
        for d in devices)
    limit = 64 if advanced else 128
    if len(devices) > limit:
        errs.append("spec.devices: must have at most %d items" % limit)
    seen = set()
    for i, d in enumerate(devices):
        errs.extend(_device_errors(d, "spec.devices[%d]" % i, seen))
    return errs


def _device_errors(d, where, seen):
    errs = []
    if not isinstance(d, dict):
        return [where + ": must be an object"]
    name = d.get("name")
    if not isinstance(name, str) or len(name) > 63 or not DNS_LABEL.match(name):
        errs.append(where + ".name: must be a DNS label")
    elif name in seen:
        errs.append(where + ".name: duplicate")
    seen.add(name)
    attrs = d.get("attributes") or {}
    caps = d.get("capacity") or {}
    if not isinstance(attrs, dict) or not isinstance(caps, dict):
        return errs + [where + ": attributes and capacity must be maps"]
    if len(attrs) + len(caps) > 32:
        errs.append(where + ": at most 32 attributes and capacities")
    for k, v in attrs.items():
        w = "%s.attributes[%s]" % (where, k)
        if not qualified_name(k):
            errs.append(w + ": invalid qualified name")
        kinds = [t for t in ("int", "bool", "string", "version")
                 if isinstance(v, dict) and t in v]
        if len(kinds) != 1 or len(v) != 1:
            errs.append(w + ": exactly one of int, bool, string, version")
            continue
        val = v[kinds[0]]
        if kinds[0] == "int" and (not isinstance(val, int) or
                                  isinstance(val, bool)):
            errs.append(w + ".int: must be an integer")
        if kinds[0] == "bool" and not isinstance(val, bool):
            errs.append(w + ".bool: must be a boolean")
        if kinds[0] == "string" and (not isinstance(val, str) or
                                     len(val) > 64):
            errs.append(w + ".string: at most 64 characters")
        if kinds[0] == "version" and (not isinstance(val, str) or
                                      not SEMVER.match(val)):
            errs.append(w + ".version: must be a semantic version")
    multi = d.get("allowMultipleAllocations") is True
    for k, c in caps.items():
        w = "%s.capacity[%s]" % (where, k)
        if not qualified_name(k):
            errs.append(w + ": invalid qualified name")
        if not isinstance(c, dict) or not quantity(c.get("value")):
            errs.append(w + ".value: must be a quantity")
            continue
        rp = c.get("requestPolicy")
        if rp is None:
            continue
        if not multi:
            errs.append(w + ".requestPolicy: only with "
                        "allowMultipleAllocations")
        if not isinstance(rp, dict):
            errs.append(w + ".requestPolicy: must be an object")
            continue
        if rp.get("default") is not None and not quantity(rp["default"]):
            errs.append(w + ".requestPolicy.default: must be a quantity")
        if ("validValues" in rp) == ("validRange" in rp):
            errs.append(w + ".requestPolicy: exactly one of validValues, "
                        "validRange")
        vr = rp.get("validRange")
        if vr is not None and (not isinstance(vr, dict) or
                               not quantity(vr.get("min"))):
            errs.append(w + ".requestPolicy.validRange.min: required")
        vv = rp.get("validValues")
        if vv is not None and (not isinstance(vv, list) or len(vv) > 10 or
                               not all(quantity(x) for x in vv)):
            errs.append(w + ".requestPolicy.validValues: at most 10 "
                        "quantities")
    return errs


def nrt_errors(obj):
    """The CRD schema of NodeResourceTopology v1alpha2 (protocols.md 7.4)."""
    errs = []
    if not isinstance(obj, dict):
        return ["body: must be an object"]
    _meta_errors(obj, "topology.node.k8s.io/v1alpha2",
                 "NodeResourceTopology", errs)
    if "spec" in obj or "status" in obj:
        errs.append("spec, status: unknown fields (they sit at the top)")
    zones = obj.get("zones")
    if not isinstance(zones, list):
        return errs + ["zones: required"]
    for i, z in enumerate(zones):
        w = "zones[%d]" % i
        if not isinstance(z, dict):
            errs.append(w + ": must be an object")
            continue
        for k in ("name", "type"):
            if not isinstance(z.get(k), str) or not z.get(k):
                errs.append("%s.%s: required" % (w, k))
        for j, r in enumerate(z.get("resources") or []):
            for k in ("name", "capacity", "allocatable", "available"):
                if k not in r or (k != "name" and not quantity(r[k])) or (
                        k == "name" and not isinstance(r[k], str)):
                    errs.append("%s.resources[%d].%s: required" % (w, j, k))
        for j, c in enumerate(z.get("costs") or []):
            if (not isinstance(c.get("name"), str) or
                    not isinstance(c.get("value"), int)):
                errs.append("%s.costs[%d]: name and integer value" % (w, j))
        errs.extend(_attr_errors(z.get("attributes") or [], w + ".attributes"))
    errs.extend(_attr_errors(obj.get("attributes") or [], "attributes"))
    return errs


def _attr_errors(attrs, where):
    errs = []
    for j, a in enumerate(attrs):
        if (not isinstance(a, dict) or not isinstance(a.get("name"), str) or
                not isinstance(a.get("value"), str)):
            errs.append("%s[%d]: name and string value" % (where, j))
    return errs


def _peer_cn(conn):
    """The common name of a TLS client's certificate, or None."""
    try:
        cert = conn.getpeercert()
    except (AttributeError, ValueError):
        return None
    for rdn in (cert or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return value
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are written apart: without TCP_NODELAY each answer
    # would wait for the client's delayed ACK (about 40 ms).
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _dispatch(self):
        api = self.server.api
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        rec = {"method": self.command, "path": self.path,
               "headers": dict(self.headers.items()),
               "body": raw.decode("utf-8", "replace"),
               "client_cn": _peer_cn(self.connection)}
        with api.lock:
            api.requests.append(rec)
            failing = api._fail > 0 and api._fail_method in (
                None, self.command)
            if failing:
                api._fail -= 1
            delay = api._delay
            raw_answer = api._raw.pop(0) if api._raw else None
            path = urlsplit(self.path).path
            for i, (method, want, answer) in enumerate(api._raw_once):
                if raw_answer is None and method == self.command and \
                        want == path:
                    raw_answer = api._raw_once.pop(i)[2]
                    break
            if raw_answer is None and self.command == "GET":
                raw_answer = api._raw_gets.get(urlsplit(self.path).path)
        api._released.wait()
        held = api._held
        if held is not None and self.command == "GET" and any(
                self.path.endswith("/resourceclaims/" + n)
                for n in held.names):
            held.seen.set()
            held.release.wait(30)
        if api._stopping:
            self.close_connection = True
            return
        if delay:
            time.sleep(delay)
        if raw_answer is not None:
            self._send(raw_answer[0], raw_answer[1])
            return
        if failing:
            code, body = api._fail_code, status(
                api._fail_code, "InternalError", "injected failure")
        elif api.token is not None and self.headers.get(
                "Authorization") != "Bearer " + api.token:
            code, body = 401, status(401, "Unauthorized", "Unauthorized")
        else:
            try:
                data = json.loads(raw) if raw else None
            except ValueError as e:
                data = None
                code, body = 400, status(400, "BadRequest",
                                         "invalid JSON: %s" % e)
            else:
                if self.command == "GET" and _is_watch(self.path):
                    self._watch()
                    return
                with api.lock:
                    code, body = api._route(
                        self.command, self.path, data,
                        ctype=self.headers.get("Content-Type"))
        self._send(code, json.dumps(body).encode())

    def _send(self, code, out):
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        except OSError:
            pass

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _dispatch

    # -- watch streams ----------------------------------------------------

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _event(self, etype, obj):
        self._chunk(json.dumps({"type": etype, "object": obj}).encode() +
                    b"\n")

    def _watch(self):
        api = self.server.api
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        coll = api._collection(url.path)
        if coll is None:
            self._send(404, json.dumps(status(
                404, "NotFound", "no watch for " + url.path)).encode())
            return
        rv = query.get("resourceVersion", [""])[0]
        try:
            rv = int(rv) if rv not in ("", "0") else None
        except ValueError:
            self._send(400, json.dumps(status(
                400, "BadRequest", "invalid resourceVersion")).encode())
            return
        try:
            timeout = min(float(query.get("timeoutSeconds", ["1800"])[0]),
                          3600)
        except ValueError:
            timeout = 1800
        bookmarks = query.get("allowWatchBookmarks", [""])[0] == "true"
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._stream(api, url.path, coll, query, rv, timeout, bookmarks)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass

    def _stream(self, api, path, coll, query, rv, timeout, bookmarks):
        kind, api_version = coll[2], coll[3]
        deadline = time.monotonic() + timeout
        sid = object()
        with api.lock:
            if rv is not None and rv < api._expired_rv:
                out = [("ERROR", status(
                    410, "Expired", "too old resource version: %d (%d)"
                    % (rv, api._expired_rv)))]
                stop = True
            else:
                out, stop = [], False
                if rv is None:
                    out = [("ADDED", _copy(o)) for o in api._store(coll)
                           if _selected(o, query)]
                    rv = api._rv
            gen = api._break_gen
            bgen = api._bookmark_gen
            api._streams[sid] = path
        last_bookmark = time.monotonic()
        try:
            while True:
                for etype, obj in out:
                    if etype != "BOOKMARK" and etype != "ERROR":
                        with api.lock:
                            garble, api._garble = api._garble, False
                            pad, api._oversize = api._oversize, 0
                        if garble:
                            # Framed right, but not JSON.
                            self._chunk(b'{"type": %s, "object": {}}\n'
                                        % etype.encode())
                            return
                        if pad:
                            obj = _copy(obj)
                            obj["metadata"].setdefault("annotations", {})[
                                "test/padding"] = "x" * pad
                            self._event(etype, obj)
                            return
                    self._event(etype, obj)
                if stop:
                    return
                with api.lock:
                    while True:
                        now = time.monotonic()
                        if (api._stopping or api._break_gen != gen or
                                now >= deadline):
                            return
                        out = [(e["type"], e["obj"]) for e in api._events
                               if e["rv"] > rv and e["coll"] == coll[0] and
                               (coll[1] is None or e["ns"] == coll[1]) and
                               _selected(e["obj"], query)]
                        if api._events:
                            rv = max(rv, api._events[-1]["rv"])
                        if bookmarks and (
                                bgen != api._bookmark_gen or
                                now - last_bookmark >= api.bookmark_interval):
                            bgen = api._bookmark_gen
                            last_bookmark = now
                            rv = max(rv, api._rv)
                            out.append(("BOOKMARK", {
                                "kind": kind, "apiVersion": api_version,
                                "metadata": {"resourceVersion": str(rv)}}))
                        if out:
                            break
                        wait = min(deadline - now, 0.5)
                        if bookmarks:
                            wait = min(wait, max(0.01, api.bookmark_interval -
                                                 (now - last_bookmark)))
                        api._cond.wait(wait)
        finally:
            with api.lock:
                api._streams.pop(sid, None)
                api._cond.notify_all()


class _Held:
    def __init__(self, names):
        self.names = set(names)
        self.seen = threading.Event()
        self.release = threading.Event()


def _is_watch(target):
    return parse_qs(urlsplit(target).query).get("watch", [""])[0] in (
        "1", "true")


class FakeApiServer:
    def __init__(self, token=None, tls=None):
        """tls: (certfile, keyfile, client_ca or None) serves https and,
        with client_ca, demands a client certificate signed by it."""
        self.token = token
        self.tls = tls
        self._raw = []
        self._raw_gets = {}
        self._raw_once = []
        self.lock = threading.Lock()
        self.requests = []
        self.claims = {}
        self.nodes = {}
        self.slices = {}
        self.nrts = {}
        self._rv = 100
        self._fail = 0
        self._fail_code = 500
        self._fail_method = None
        self._delay = 0
        self._released = threading.Event()
        self._released.set()
        self._stopping = False
        self._httpd = None
        self._thread = None
        self._held = None
        self.policies = {}
        # The watchable collections' history: {"rv", "coll", "ns", "type",
        # "obj"} in resourceVersion order.
        self._events = []
        self._cond = threading.Condition(self.lock)
        self._streams = {}
        self._break_gen = 0
        self._bookmark_gen = 0
        self._expired_rv = 0
        self._garble = False
        self._oversize = 0
        self.bookmark_interval = 5.0

    # -- control --------------------------------------------------------

    def start(self, port=0):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.api = self
        # socketserver's backlog of 5 would drop the SYNs of a client
        # reading many claims at once.
        self._httpd.socket.listen(128)
        plain = self._httpd.handle_error

        def handle_error(request, address):
            # A client dropping a kept-alive connection is no news.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                plain(request, address)
        self._httpd.handle_error = handle_error
        if self.tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.tls[0], self.tls[1])
            if self.tls[2] is not None:
                ctx.load_verify_locations(self.tls[2])
                ctx.verify_mode = ssl.CERT_REQUIRED
            self._httpd.socket = ctx.wrap_socket(self._httpd.socket,
                                                 server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        daemon=True)
        self._thread.start()
        return self

    @property
    def port(self):
        return self._httpd.server_address[1]

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http",
                                      self.port)

    def stop(self):
        self._stopping = True
        self._released.set()
        with self.lock:
            self._cond.notify_all()
            # Every stream thread ends within its next wait.
            end = time.monotonic() + 5
            while self._streams and time.monotonic() < end:
                self._cond.wait(0.1)
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc):
        self.stop()

    def kubeconfig(self, folder):
        """Writes a kubeconfig for this server (its token, if any) into
        folder and returns its path."""
        path = os.path.join(folder, "kubeconfig")
        user = "  user:\n    token: %s\n" % self.token if self.token \
            else "  user: {}\n"
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: Config\n"
                    "clusters:\n- name: test\n  cluster:\n    server: %s\n"
                    "contexts:\n- name: ctx\n  context:\n    cluster: test\n"
                    "    user: me\ncurrent-context: ctx\n"
                    "users:\n- name: me\n%s" % (self.url, user))
        return path

    def set_claim(self, namespace, name, obj):
        with self.lock:
            obj = json.loads(json.dumps(obj))
            meta = obj.setdefault("metadata", {})
            meta.setdefault("name", name)
            meta.setdefault("namespace", namespace)
            meta["resourceVersion"] = self._next_rv()
            self.claims[(namespace, name)] = obj

    def set_node(self, name, uid, labels=None):
        """Stores the Node (ADDED or MODIFIED for watches); labels None
        keeps those it had."""
        with self.lock:
            old = self.nodes.get(name)
            meta = {"name": name, "uid": uid,
                    "resourceVersion": self._next_rv()}
            if labels is None and old is not None:
                labels = old["metadata"].get("labels")
            if labels is not None:
                meta["labels"] = dict(labels)
            self.nodes[name] = {"apiVersion": "v1", "kind": "Node",
                                "metadata": meta}
            self._emit("nodes", None, "ADDED" if old is None else "MODIFIED",
                       self.nodes[name])

    def set_node_labels(self, name, labels):
        """New labels on a stored Node (MODIFIED for watches)."""
        with self.lock:
            obj = self.nodes[name]
            obj["metadata"]["labels"] = dict(labels)
            obj["metadata"]["resourceVersion"] = self._next_rv()
            self._emit("nodes", None, "MODIFIED", obj)

    # -- TopologyAwarePolicies and watches --------------------------------

    def set_policy(self, namespace, name, spec):
        """Creates (a new uid, generation 1) or updates (generation + 1
        when the spec changes, as the real server) a TopologyAwarePolicy;
        returns a copy."""
        with self.lock:
            old = self.policies.get((namespace, name))
            if old is None:
                obj = {"apiVersion": "config.nri/v1alpha1",
                       "kind": "TopologyAwarePolicy",
                       "metadata": {
                           "name": name, "namespace": namespace,
                           "uid": "%08x-0000-4000-8000-%012x" % (
                               random.getrandbits(32),
                               random.getrandbits(48)),
                           "generation": 1,
                           "creationTimestamp": time.strftime(
                               "%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                       "spec": _copy(spec)}
            else:
                obj = old
                if obj.get("spec") != spec:
                    obj["metadata"]["generation"] += 1
                obj["spec"] = _copy(spec)
            obj["metadata"]["resourceVersion"] = self._next_rv()
            self.policies[(namespace, name)] = obj
            self._emit("policies", namespace,
                       "ADDED" if old is None else "MODIFIED", obj)
            return _copy(obj)

    def delete_policy(self, namespace, name):
        """Deletes a TopologyAwarePolicy (DELETED for watches); whether it
        was there."""
        with self.lock:
            obj = self.policies.pop((namespace, name), None)
            if obj is None:
                return False
            obj["metadata"]["resourceVersion"] = self._next_rv()
            self._emit("policies", namespace, "DELETED", obj)
            return True

    def policy(self, namespace, name):
        """A copy of the stored TopologyAwarePolicy (status included), or
        None."""
        with self.lock:
            obj = self.policies.get((namespace, name))
            return _copy(obj) if obj is not None else None

    def break_watches(self):
        """Ends every open watch stream (the clients see its end)."""
        with self.lock:
            self._break_gen += 1
            self._cond.notify_all()

    def expire_watches(self):
        """From now on, a watch from a resourceVersion older than now gets
        a 200 stream with one ERROR event, Status code 410, then its end.
        Open streams go on: break_watches() ends them."""
        with self.lock:
            self._expired_rv = int(self._next_rv())

    def send_bookmarks(self):
        """A BOOKMARK now on every watch that allows them."""
        with self.lock:
            self._bookmark_gen += 1
            self._cond.notify_all()

    def garble_next_event(self):
        """The next event written to a watch is not JSON (its stream ends
        after it); the event itself stays in the history."""
        with self.lock:
            self._garble = True

    def oversize_next_event(self, nbytes=6 << 20):
        """The next event written to a watch carries an annotation of
        nbytes (its stream ends after it)."""
        with self.lock:
            self._oversize = nbytes

    def watches(self, prefix=""):
        """How many watch streams are open (on paths under prefix)."""
        with self.lock:
            return sum(1 for p in self._streams.values()
                       if p.startswith(prefix))

    def _emit(self, coll, namespace, etype, obj):
        # Under self.lock.
        self._events.append({"rv": int(obj["metadata"]["resourceVersion"]),
                             "coll": coll, "ns": namespace, "type": etype,
                             "obj": _copy(obj)})
        self._cond.notify_all()

    def _collection(self, path):
        """(store name, namespace or None, kind, apiVersion) of a watchable
        collection path, or None."""
        if path == "/api/v1/nodes":
            return ("nodes", None, "Node", "v1")
        if path == POLICY + "/topologyawarepolicies":
            return ("policies", None, "TopologyAwarePolicy",
                    "config.nri/v1alpha1")
        m = re.match(r"^%s/namespaces/([^/]+)/topologyawarepolicies$"
                     % POLICY, path)
        if m:
            return ("policies", m.group(1), "TopologyAwarePolicy",
                    "config.nri/v1alpha1")
        return None

    def _store(self, coll):
        if coll[0] == "nodes":
            return [self.nodes[k] for k in sorted(self.nodes)]
        return [o for k, o in sorted(self.policies.items())
                if coll[1] is None or k[0] == coll[1]]

    def _list(self, coll, query):
        return {"apiVersion": coll[3], "kind": coll[2] + "List",
                "metadata": {"resourceVersion": str(self._rv)},
                "items": [o for o in self._store(coll)
                          if _selected(o, query)]}

    def fail_next(self, n, code=500, method=None):
        """The next n requests (of method only, when given) fail."""
        with self.lock:
            self._fail = n
            self._fail_code = code
            self._fail_method = method

    def hang(self, on):
        """While on, requests are held unanswered until hang(False)."""
        if on:
            self._released.clear()
        else:
            self._released.set()

    def raw_next(self, code, data):
        """Answer the next request with these bytes, whatever they are."""
        with self.lock:
            self._raw.append((code, data))

    def raw_once(self, method, path, code, data):
        """Answer the next METHOD request of path with these bytes;
        requests to other paths, or of other methods, go on as usual."""
        with self.lock:
            self._raw_once.append((method, path, (code, data)))

    def raw_get(self, path, code, data):
        """Answer every GET of path with these bytes (None: as before);
        requests to other paths go on as usual."""
        with self.lock:
            if data is None:
                self._raw_gets.pop(path, None)
            else:
                self._raw_gets[path] = (code, data)

    def hold_claims(self, names):
        """Hold the GETs of these claims (by name) until .release is set;
        .seen is set when one arrived. Other requests go on."""
        held = _Held(names)
        self._held = held
        return held

    def delay(self, seconds):
        with self.lock:
            self._delay = seconds

    def recorded(self, method=None, prefix=""):
        with self.lock:
            return [r for r in self.requests
                    if (method is None or r["method"] == method) and
                    r["path"].startswith(prefix)]

    # -- the API --------------------------------------------------------

    def _next_rv(self):
        self._rv += 1
        return str(self._rv)

    def _route(self, method, target, data, ctype=None):
        url = urlsplit(target)
        path, query = url.path, parse_qs(url.query)
        coll = self._collection(path)
        if coll is not None and method == "GET":
            return 200, self._list(coll, query)
        m = re.match(r"^%s/namespaces/([^/]+)/topologyawarepolicies/([^/]+)"
                     r"(/status)?$" % POLICY, path)
        if m:
            return self._policy_item(m.group(1), m.group(2),
                                     m.group(3) is not None, method, data,
                                     ctype)
        m = re.match(r"^%s/namespaces/([^/]+)/resourceclaims/([^/]+)$"
                     % RESOURCE, path)
        if m:
            if method != "GET":
                return 405, status(405, "MethodNotAllowed", "not here")
            obj = self.claims.get((m.group(1), m.group(2)))
            if obj is None:
                return self._not_found("resourceclaims", m.group(2))
            return 200, obj
        if path == RESOURCE + "/resourceclaims" and method == "GET":
            return 200, {"apiVersion": "resource.k8s.io/v1",
                         "kind": "ResourceClaimList",
                         "metadata": {"resourceVersion": str(self._rv)},
                         "items": [self.claims[k]
                                   for k in sorted(self.claims)]}
        m = re.match(r"^/api/v1/nodes/([^/]+)$", path)
        if m and method == "GET":
            obj = self.nodes.get(m.group(1))
            if obj is None:
                return self._not_found("nodes", m.group(1))
            return 200, obj
        if path == RESOURCE + "/resourceslices":
            if method == "GET":
                return 200, self._list_slices(query)
            if method == "POST":
                return self._create(self.slices, "resourceslices", data,
                                    slice_errors, "ResourceSlice")
        m = re.match(r"^%s/resourceslices/([^/]+)$" % RESOURCE, path)
        if m:
            return self._item(self.slices, "resourceslices", m.group(1),
                              method, data, slice_errors, "ResourceSlice")
        if path == NRT and method == "POST":
            return self._create(self.nrts, "noderesourcetopologies", data,
                                nrt_errors, "NodeResourceTopology")
        if path == NRT and method == "GET":
            return 200, {"apiVersion": "topology.node.k8s.io/v1alpha2",
                         "kind": "NodeResourceTopologyList",
                         "metadata": {"resourceVersion": str(self._rv)},
                         "items": list(self.nrts.values())}
        m = re.match(r"^%s/([^/]+)$" % NRT, path)
        if m and method in ("GET", "PUT"):
            return self._item(self.nrts, "noderesourcetopologies",
                              m.group(1), method, data, nrt_errors,
                              "NodeResourceTopology")
        return 404, status(404, "NotFound", "the server could not find "
                           "the requested resource")

    def _policy_item(self, namespace, name, sub, method, data, ctype):
        obj = self.policies.get((namespace, name))
        if method == "GET":
            if obj is None:
                return self._not_found("topologyawarepolicies", name)
            return 200, obj
        if method != "PATCH" or not sub:
            return 405, status(405, "MethodNotAllowed", "method not allowed")
        if (ctype or "").split(";")[0].strip() != \
                "application/merge-patch+json":
            return 415, status(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown "
                               "format - accepted media types include: "
                               "application/merge-patch+json")
        if obj is None:
            return self._not_found("topologyawarepolicies", name)
        if not isinstance(data, dict):
            return 400, status(400, "BadRequest", "a merge patch must be "
                               "a JSON object")
        # The status subresource: only status changes, no new generation.
        new = merge_patch(obj, data)
        if new.get("status") is None:
            obj.pop("status", None)
        else:
            obj["status"] = new["status"]
        obj["metadata"]["resourceVersion"] = self._next_rv()
        self._emit("policies", namespace, "MODIFIED", obj)
        return 200, obj

    def _not_found(self, kind, name):
        return 404, status(404, "NotFound", '%s "%s" not found'
                           % (kind, name), name=name, kind=kind)

    def _invalid(self, kind, name, errs):
        return 422, status(422, "Invalid", '%s "%s" is invalid: %s'
                           % (kind, name, "; ".join(errs)),
                           name=name, kind=kind,
                           causes=[{"reason": "FieldValueInvalid",
                                    "message": e} for e in errs])

    def _create(self, store, kind, data, check, kindname):
        errs = check(data)
        meta = data.get("metadata", {}) if isinstance(data, dict) else {}
        name = meta.get("name") if isinstance(meta, dict) else None
        if errs:
            return self._invalid(kindname, name or "", errs)
        if not name:
            name = meta["generateName"] + "".join(
                random.choice(string.ascii_lowercase + string.digits)
                for _ in range(5))
        if name in store:
            return 409, status(409, "AlreadyExists", '%s "%s" already '
                               'exists' % (kind, name), name=name, kind=kind)
        if meta.get("resourceVersion"):
            return 400, status(400, "BadRequest", "resourceVersion should "
                               "not be set on objects to be created")
        obj = json.loads(json.dumps(data))
        obj["metadata"]["name"] = name
        obj["metadata"]["uid"] = "%08x-0000-4000-8000-%012x" % (
            random.getrandbits(32), random.getrandbits(48))
        obj["metadata"]["resourceVersion"] = self._next_rv()
        store[name] = obj
        return 201, obj

    def _item(self, store, kind, name, method, data, check, kindname):
        obj = store.get(name)
        if method == "GET":
            if obj is None:
                return self._not_found(kind, name)
            return 200, obj
        if method == "DELETE":
            if obj is None:
                return self._not_found(kind, name)
            pre = ((data or {}).get("preconditions") or {}) if isinstance(
                data, dict) else {}
            rv = pre.get("resourceVersion")
            if rv is not None and rv != obj["metadata"]["resourceVersion"]:
                return self._conflict(kind, name)
            del store[name]
            return 200, status(200, "", "", name=name, kind=kind)
        if method == "PUT":
            errs = check(data)
            if errs:
                return self._invalid(kindname, name, errs)
            if data["metadata"].get("name") != name:
                return 400, status(400, "BadRequest", "the name of the "
                                   "object does not match the name on the "
                                   "URL")
            if obj is None:
                return self._not_found(kind, name)
            rv = data["metadata"].get("resourceVersion")
            if not rv:
                return 422, status(422, "Invalid", "metadata."
                                   "resourceVersion: must be specified "
                                   "for an update")
            if rv != obj["metadata"]["resourceVersion"]:
                return self._conflict(kind, name)
            new = json.loads(json.dumps(data))
            new["metadata"]["uid"] = obj["metadata"]["uid"]
            new["metadata"]["resourceVersion"] = self._next_rv()
            store[name] = new
            return 200, new
        return 405, status(405, "MethodNotAllowed", "method not allowed")

    def _conflict(self, kind, name):
        return 409, status(409, "Conflict", 'Operation cannot be fulfilled '
                           'on %s "%s": the object has been modified; '
                           'please apply your changes to the latest version '
                           'and try again' % (kind, name),
                           name=name, kind=kind)

    def _list_slices(self, query):
        want = {}
        for sel in query.get("fieldSelector", []):
            for term in sel.split(","):
                k, _, v = term.partition("=")
                want[k] = v

        def field(obj, dotted):
            for part in dotted.split("."):
                obj = obj.get(part) if isinstance(obj, dict) else None
            return obj

        items = [o for o in self.slices.values()
                 if all(field(o, k) == v for k, v in want.items())]
        return {"apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSliceList",
                "metadata": {"resourceVersion": str(self._rv)},
                "items": items}

    # -- NodeResourceTopology helpers for the tests ------------------------

    def nrt(self, name):
        """A copy of the stored NodeResourceTopology, or None."""
        with self.lock:
            obj = self.nrts.get(name)
            return json.loads(json.dumps(obj)) if obj is not None else None

    def set_nrt(self, name, obj):
        """Another writer's object (a new resourceVersion); None deletes."""
        with self.lock:
            if obj is None:
                self.nrts.pop(name, None)
                return
            obj = json.loads(json.dumps(obj))
            obj.setdefault("metadata", {})["name"] = name
            obj["metadata"]["resourceVersion"] = self._next_rv()
            self.nrts[name] = obj

    # -- slices from a test ---------------------------------------------

    def put_slice(self, name, obj):
        """Stores a ResourceSlice as if a client had created it (a fresh
        uid and resourceVersion), without validating it."""
        with self.lock:
            obj = json.loads(json.dumps(obj))
            meta = obj.setdefault("metadata", {})
            meta["name"] = name
            meta["uid"] = "%08x-0000-4000-8000-%012x" % (
                random.getrandbits(32), random.getrandbits(48))
            meta["resourceVersion"] = self._next_rv()
            self.slices[name] = obj

    def delete_slices(self, driver=None):
        """Deletes the stored slices (of one driver), as the kubelet does
        when it starts; returns how many went."""
        with self.lock:
            names = [n for n, o in self.slices.items()
                     if driver is None or
                     (o.get("spec") or {}).get("driver") == driver]
            for n in names:
                del self.slices[n]
            return len(names)

    def conflict_slice_puts(self, n):
        """The next n PUTs of ResourceSlices are answered 409 Conflict, as
        when another client wrote the object in between."""
        with self.lock:
            self._slice_put_conflicts = n
            if "_item" in self.__dict__:
                return
            plain = self._item

            def item(store, kind, name, method, data, check, kindname):
                # _route runs under self.lock already.
                if (method == "PUT" and kind == "resourceslices" and
                        self._slice_put_conflicts > 0):
                    self._slice_put_conflicts -= 1
                    return self._conflict(kind, name)
                return plain(store, kind, name, method, data, check,
                             kindname)
            self._item = item
