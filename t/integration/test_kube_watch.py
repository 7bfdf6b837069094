"""List-then-watch in the Kubernetes API client (kube.h, kubewatch.c)
through t/kube-probe's watch mode against the fake API server of t/lib:
the list then each event as it happens; a stream that ends resumed from
the last resourceVersion; 410 Gone (expired versions) answered by a new
list; a bookmark moving the resourceVersion; a garbled and an oversized
event reported, then watched again; an API server down at first; the
request slots left free for ordinary requests while watches are open."""

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from fake_apiserver import FakeApiServer  # noqa: E402

NODES = "/api/v1/nodes"
POLICIES = "/apis/config.nri/v1alpha1/namespaces/ns1/topologyawarepolicies"
KUBE_MAX_CONNECTIONS = 16       # kube.h


class Probe:
    """t/kube-probe watch ...: its JSON lines, read as they come."""

    def __init__(self, kc, path, query=None, args=()):
        exe = os.path.join(tap.builddir(), "t", "kube-probe")
        argv = [exe, "-k", kc, "-t", "2000", "-r", "0", "-b", "100"]
        argv += [str(a) for a in args] + ["watch", path]
        if query is not None:
            argv.append(query)
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def next(self, pred=lambda m: True, timeout=10, what="a line"):
        """The next line that pred accepts (lines before it are kept in
        .seen)."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            try:
                m = self.lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                m = False
            if m is None or m is False or left <= 0:
                raise AssertionError("no %s in %.0f s; saw %s%s" % (
                    what, timeout, [(x.get("event"), x.get("error"))
                                    for x in self.seen[-8:]],
                    "" if m is not None else "; probe exited: " +
                    self.p.stderr.read()))
            self.seen.append(m)
            if pred(m):
                return m

    def event(self, kind, timeout=10):
        return self.next(lambda m: m.get("event") == kind, timeout,
                         what=kind)

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def close(self):
        """quit, and the final status line."""
        try:
            self.send("quit")
        except OSError:
            pass
        end = self.next(lambda m: m.get("end"), what="end")
        assert self.p.wait(10) == 0
        return end

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def watch_rvs(api, prefix):
    """The resourceVersion of every watch request the server saw."""
    return [parse_qs(urlsplit(r["path"]).query)["resourceVersion"][0]
            for r in api.recorded("GET", prefix)
            if "watch=1" in r["path"]]


def lists(api, prefix):
    return [r for r in api.recorded("GET", prefix)
            if "watch=1" not in r["path"]]


def wait_for(cond, timeout=10, what="condition"):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


def server(nodes=("node-a", "node-b")):
    api = FakeApiServer().start()
    for n in nodes:
        api.set_node(n, "uid-" + n, {"zone": "z1"})
    return api


def test_list_then_events_in_order():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES) as p:
            m = p.event("LIST")
            assert m["names"] == ["node-a", "node-b"], m
            assert m["resourceVersion"] == "102", m
            assert m["status"]["listed"] is True
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            # The watch asked from the list's version, with bookmarks.
            q = parse_qs(urlsplit([r["path"] for r in api.recorded(
                "GET", NODES) if "watch=1" in r["path"]][0]).query)
            assert q["resourceVersion"] == ["102"], q
            assert q["allowWatchBookmarks"] == ["true"], q
            assert 300 <= int(q["timeoutSeconds"][0]) < 600, q
            api.set_node_labels("node-a", {"zone": "z2"})
            api.set_node("node-c", "uid-c")
            api.set_node_labels("node-b", {"zone": "z3"})
            got = [p.next(lambda m: m.get("event") != "LIST")
                   for _ in range(3)]
            assert [(m["event"], m["name"]) for m in got] == [
                ("MODIFIED", "node-a"), ("ADDED", "node-c"),
                ("MODIFIED", "node-b")], got
            assert got[0]["object"]["metadata"]["labels"] == {"zone": "z2"}
            assert [m["resourceVersion"] for m in got] == [
                "103", "104", "105"]
            assert got[2]["status"]["resourceVersion"] == "105"
            assert got[2]["status"]["watching"] is True
            assert got[2]["status"]["events"] == 3
            assert got[2]["reentered"] == 0
            end = p.close()
            st = end["watches"][0]
            assert st["reconnects"] == 0 and st["relists"] == 0, st
            assert end["kube"]["watches"] == 1
        assert len(lists(api, NODES)) == 1


def test_policies_with_field_selector_and_delete():
    with server() as api:
        api.set_policy("ns1", "other", {"a": 1})
        api.set_policy("ns1", "default", {"a": 1})
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, POLICIES, "fieldSelector=metadata.name%3Ddefault") \
                as p:
            assert p.event("LIST")["names"] == ["default"]
            wait_for(lambda: api.watches(POLICIES) == 1, what="the watch")
            api.set_policy("ns1", "other", {"a": 2})
            obj = api.set_policy("ns1", "default", {"a": 2})
            assert obj["metadata"]["generation"] == 2
            m = p.event("MODIFIED")
            assert m["name"] == "default"
            assert m["object"]["spec"] == {"a": 2}
            assert m["object"]["metadata"]["generation"] == 2
            api.delete_policy("ns1", "default")
            m = p.event("DELETED")
            assert m["name"] == "default"
            assert int(m["resourceVersion"]) > int(
                obj["metadata"]["resourceVersion"])
            p.close()
        q = lists(api, POLICIES)[0]["path"]
        assert q.endswith("?fieldSelector=metadata.name%3Ddefault"), q


def test_resumed_from_last_rv_after_the_stream_ends():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES) as p:
            p.event("LIST")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            api.set_node_labels("node-a", {"zone": "z2"})
            rv = p.event("MODIFIED")["resourceVersion"]
            api.break_watches()
            wait_for(lambda: len(watch_rvs(api, NODES)) == 2,
                     what="the watch again")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            assert watch_rvs(api, NODES) == ["102", rv]
            # Nothing lost, nothing twice.
            api.set_node_labels("node-b", {"zone": "z9"})
            m = p.next(lambda m: m.get("event") not in (None,))
            assert (m["event"], m["name"]) == ("MODIFIED", "node-b"), m
            st = p.close()["watches"][0]
            assert st["reconnects"] == 1 and st["relists"] == 0, st
            assert st["lastError"] is None, st
        assert len(lists(api, NODES)) == 1
        assert not [m for m in p.seen if m.get("event") == "ERROR"]


def test_relisted_after_expiry():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES) as p:
            p.event("LIST")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            api.set_node_labels("node-a", {"zone": "z2"})
            old = p.event("MODIFIED")["resourceVersion"]
            api.expire_watches()
            api.break_watches()
            # The watch from the old version gets ERROR 410: a new list,
            # and a watch from its version.
            m = p.event("LIST")
            assert m["names"] == ["node-a", "node-b"], m
            assert int(m["resourceVersion"]) > int(old)
            assert m["status"]["relists"] == 1
            # The stream that said 410 may still count as open a moment
            # after the new watch's list: wait for the new watch itself.
            wait_for(lambda: len(watch_rvs(api, NODES)) == 3 and
                     api.watches(NODES) == 1, what="the new watch")
            rvs = watch_rvs(api, NODES)
            assert rvs == ["102", old, m["resourceVersion"]], (rvs, old, m)
            assert len(lists(api, NODES)) == 2, lists(api, NODES)
            api.set_node("node-c", "uid-c")
            assert p.event("ADDED")["name"] == "node-c"
            p.close()
        assert not [m for m in p.seen if m.get("event") == "ERROR"]


def test_relisted_after_http_410():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES) as p:
            p.event("LIST")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            api.fail_next(1, code=410)
            api.break_watches()
            m = p.event("LIST")
            assert m["status"]["relists"] == 1
            p.close()


def test_bookmark_moves_the_rv():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES) as p:
            p.event("LIST")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            # A change elsewhere moves the server's version; a bookmark
            # tells the watch, which then resumes from there.
            obj = api.set_policy("ns1", "x", {"a": 1})
            rv = obj["metadata"]["resourceVersion"]
            api.send_bookmarks()

            def moved():
                p.send("status")
                m = p.next(lambda m: "watches" in m and "end" not in m)
                return m["watches"][0]["resourceVersion"] == rv
            wait_for(moved, what="the bookmark")
            api.break_watches()
            wait_for(lambda: len(watch_rvs(api, NODES)) == 2,
                     what="the watch again")
            assert watch_rvs(api, NODES) == ["102", rv]
            st = p.close()["watches"][0]
            assert st["bookmarks"] >= 1 and st["events"] == 0, st
        # A bookmark is no event for the caller.
        assert [m["event"] for m in p.seen if "event" in m] == ["LIST"]


def test_garbled_event_reported_then_watched_again():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES) as p:
            p.event("LIST")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            api.garble_next_event()
            api.set_node_labels("node-a", {"zone": "z2"})
            m = p.event("ERROR")
            assert "not JSON" in m["error"], m
            assert m.get("name") is None
            # Watched again from the last good version: the event comes.
            m = p.event("MODIFIED")
            assert m["object"]["metadata"]["labels"] == {"zone": "z2"}
            assert watch_rvs(api, NODES) == ["102", "102"]
            st = p.close()["watches"][0]
            assert "not JSON" in st["lastError"], st
            assert st["reconnects"] == 1, st


def test_oversized_event_refused():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES) as p:
            p.event("LIST")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            api.oversize_next_event()
            api.set_node_labels("node-a", {"zone": "z2"})
            m = p.event("ERROR")
            assert "larger than" in m["error"], m
            m = p.event("MODIFIED")
            assert "annotations" not in m["object"]["metadata"]
            p.close()


def test_server_error_then_backoff():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES) as p:
            p.event("LIST")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            api.fail_next(2, code=500)
            api.break_watches()
            e1 = p.event("ERROR")
            assert "HTTP 500" in e1["error"] and "injected" in e1["error"]
            p.event("ERROR")
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            api.set_node_labels("node-a", {"zone": "z2"})
            assert p.event("MODIFIED")["name"] == "node-a"
            # Backoff: 100 ms, then 200 ms between the three watches.
            times = [r for r in api.recorded("GET", NODES)
                     if "watch=1" in r["path"]]
            assert len(times) == 4, times
            st = p.close()["watches"][0]
            assert st["reconnects"] == 3, st
        assert len(lists(api, NODES)) == 1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_server_down_at_first():
    port = free_port()
    api = FakeApiServer()
    folder = tap.tmpdir()
    # A kubeconfig for a server not there yet.
    with open(os.path.join(folder, "kubeconfig"), "w") as f:
        f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: t\n"
                "  cluster:\n    server: http://127.0.0.1:%d\n"
                "contexts:\n- name: c\n  context:\n    cluster: t\n"
                "    user: u\ncurrent-context: c\nusers:\n- name: u\n"
                "  user: {}\n" % port)
    with Probe(os.path.join(folder, "kubeconfig"), NODES) as p:
        e = p.event("ERROR")
        assert "list " + NODES in e["error"], e
        assert e["status"]["listed"] is False
        p.event("ERROR")
        api.start(port)
        try:
            api.set_node("node-a", "uid-a")
            m = p.event("LIST", timeout=15)
            assert m["names"] == ["node-a"]
            wait_for(lambda: api.watches(NODES) == 1, what="the watch")
            api.set_node_labels("node-a", {"x": "y"})
            assert p.event("MODIFIED")["name"] == "node-a"
            p.close()
        finally:
            api.stop()


def test_requests_answered_while_watches_hold_connections():
    n = KUBE_MAX_CONNECTIONS + 2
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        with Probe(kc, NODES, args=["-w", n]) as p:
            # In any order.
            assert {p.event("LIST")["watch"] for _ in range(n)} == \
                set(range(n))
            wait_for(lambda: api.watches(NODES) == n, what="the watches")
            p.send("get /api/v1/nodes/node-a")
            m = p.next(lambda m: "get" in m, timeout=5, what="the answer")
            assert m["status"] == 200, m
            api.set_node_labels("node-a", {"zone": "z2"})
            assert {p.event("MODIFIED")["watch"] for _ in range(n)} == \
                set(range(n))
            end = p.close()
            assert end["kube"]["watches"] == n


def test_freed_inside_the_callback():
    with server() as api:
        kc = api.kubeconfig(tap.tmpdir())
        # After 2 callbacks (LIST of each watch) every watch is freed
        # from inside a callback; the probe then ends.
        with Probe(kc, NODES, args=["-w", 2, "-n", 2, "-F"]) as p:
            p.event("LIST")
            p.event("LIST")
            end = p.next(lambda m: m.get("end"), what="end")
            assert end["kube"]["watches"] == 0, end
            assert p.p.wait(10) == 0


def test_patch_policy_status():
    """The fake server's status subresource, which the daemon patches."""
    with server() as api:
        api.set_policy("ns1", "p", {"a": 1})
        kc = api.kubeconfig(tap.tmpdir())
        exe = os.path.join(tap.builddir(), "t", "kube-probe")
        body = json.dumps({"status": {"nodes": {"n1": {"ok": True}}},
                           "spec": {"a": 9}})
        r = subprocess.run([exe, "-k", kc, "-d", body, "PATCH",
                            POLICIES + "/p/status", "PATCH",
                            POLICIES + "/absent/status"],
                           capture_output=True, text=True, timeout=20)
        out = json.loads(r.stdout)["results"]
        assert out[0]["status"] == 200, out
        assert out[1]["status"] == 404, out
        obj = api.policy("ns1", "p")
        assert obj["status"] == {"nodes": {"n1": {"ok": True}}}
        assert obj["spec"] == {"a": 1}
        assert obj["metadata"]["generation"] == 1
        rec = api.recorded("PATCH")
        assert rec[0]["headers"]["Content-Type"] == \
            "application/merge-patch+json"
        with api.lock:
            code, _ = api._route("PATCH", POLICIES + "/p/status",
                                 {"status": {}}, ctype="application/json")
        assert code == 415


if __name__ == "__main__":
    tap.run(globals())
