"""The Kubernetes API client (R-KUBE, R-BAD) through t/kube-probe against
the fake API server of t/lib: answers and errors as the server gave them,
the bearer token, retries with backoff for 5xx and refused connections but
none for 4xx, a hanging server cut off by the per-attempt timeout while
the loop keeps ticking, a slow server still answered, request bodies
checked by the server's validation, and cancelling."""

import base64
import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from fake_apiserver import FakeApiServer  # noqa: E402

TOKEN = "t0ken-for-tests"
CLAIM = "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/claim1"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
NRT = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"


def kubeconfig(server, user="  user:\n    token: %s\n" % TOKEN):
    path = os.path.join(tap.tmpdir(), "kubeconfig")
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\n"
                "clusters:\n- name: test\n  cluster:\n    server: %s\n"
                "contexts:\n- name: ctx\n  context:\n    cluster: test\n"
                "    user: me\ncurrent-context: ctx\n"
                "users:\n- name: me\n%s" % (server, user))
    return path


def probe(kc, *args, timeout=25):
    exe = os.path.join(tap.builddir(), "t", "kube-probe")
    p = subprocess.run([exe, "-k", kc] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("kube-probe exited %d: %s"
                             % (p.returncode, p.stderr))
    return json.loads(p.stdout)


def claim_fixture():
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"uid": "9b1c7e3e-0f43-4f39-9d52-1f6a4d3c2b10"},
            "status": {"allocation": {"devices": {"results": [
                {"request": "cpus", "driver": "cpu.example.com",
                 "pool": "node-a", "device": "numa0",
                 "consumedCapacity": {"cpu.example.com/cpu": "4"}}]}}}}


def slice_body(**spec_extra):
    spec = {"driver": "cpu.example.com", "nodeName": "node-a",
            "pool": {"name": "node-a", "generation": 1,
                     "resourceSliceCount": 1},
            "devices": [{"name": "numa0",
                         "attributes": {"numaNode": {"int": 0}},
                         "capacity": {"cpu.example.com/cpu": {
                             "value": "32", "requestPolicy": {
                                 "default": "1",
                                 "validRange": {"min": "1", "step": "1"}}}},
                         "allowMultipleAllocations": True}]}
    spec.update(spec_extra)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"generateName": "cpu.example.com-node-a-"},
            "spec": spec}


def test_get_claim_with_bearer_token():
    with FakeApiServer(token=TOKEN) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        out = probe(kubeconfig(api.url), "GET", CLAIM)
        res = out["results"][0]
        assert res["status"] == 200, res
        assert res["error"] is None
        assert res["body"]["metadata"]["name"] == "claim1"
        assert (res["body"]["status"]["allocation"]["devices"]["results"]
                [0]["device"] == "numa0")
        got = api.recorded("GET", CLAIM)
        assert len(got) == 1
        assert got[0]["headers"]["Authorization"] == "Bearer " + TOKEN
        assert got[0]["headers"]["Accept"] == "application/json"
        assert out["kube"]["server"] == api.url
        assert out["kube"]["requests"] == 1
        assert out["kube"]["failures"] == 0


def test_token_file_is_read():
    with FakeApiServer(token=TOKEN) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        kc = kubeconfig(api.url, "  user:\n    tokenFile: token\n")
        with open(os.path.join(os.path.dirname(kc), "token"), "w") as f:
            f.write(TOKEN + "\n")
        res = probe(kc, "GET", CLAIM)["results"][0]
        assert res["status"] == 200, res


def test_wrong_token_refused_not_retried():
    with FakeApiServer(token=TOKEN) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        kc = kubeconfig(api.url, "  user:\n    token: wrong\n")
        out = probe(kc, "-r", 3, "-b", 10, "GET", CLAIM)
        assert out["results"][0]["status"] == 401
        assert len(api.recorded()) == 1


def test_not_found_is_an_answer():
    with FakeApiServer(token=TOKEN) as api:
        out = probe(kubeconfig(api.url), "-r", 3, "-b", 10, "GET",
                    "/apis/resource.k8s.io/v1/namespaces/ns1/"
                    "resourceclaims/absent")
        res = out["results"][0]
        assert res["status"] == 404
        assert res["body"]["kind"] == "Status"
        assert res["body"]["reason"] == "NotFound"
        assert "absent" in res["error"]
        # 4xx is the server's verdict: asking again would not change it.
        assert len(api.recorded()) == 1
        assert out["kube"]["failures"] == 0


def test_server_errors_retried_then_ok():
    with FakeApiServer(token=TOKEN) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        api.fail_next(2)
        out = probe(kubeconfig(api.url), "-r", 3, "-b", 20, "GET", CLAIM)
        assert out["results"][0]["status"] == 200
        assert len(api.recorded("GET", CLAIM)) == 3
        assert out["kube"]["failures"] == 2
        assert "500" in out["kube"]["lastError"]


def test_too_many_requests_retried_until_retries_run_out():
    with FakeApiServer(token=TOKEN) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        api.fail_next(10, code=429)
        out = probe(kubeconfig(api.url), "-r", 2, "-b", 10, "GET", CLAIM)
        res = out["results"][0]
        assert res["status"] == 429
        assert "429" in res["error"]
        assert len(api.recorded()) == 3      # the first and two retries


def test_refused_connection_retried():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                 # nobody listens there now
    out = probe(kubeconfig("http://127.0.0.1:%d" % port), "-r", 2, "-b", 10,
                "GET", CLAIM)
    res = out["results"][0]
    assert res["status"] == 0
    assert res["body"] is None
    assert res["error"]
    assert out["kube"]["failures"] == 3


def test_hanging_server_times_out_loop_keeps_running():
    with FakeApiServer(token=TOKEN) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        api.hang(True)
        try:
            out = probe(kubeconfig(api.url), "-t", 1500, "-r", 0, "GET",
                        CLAIM)
        finally:
            api.hang(False)
        res = out["results"][0]
        assert res["status"] == 0
        assert "timed out" in res["error"].lower(), res
        # 1.5 s at 10 ms is ~150 ticks; a blocked loop would see about one.
        assert out["ticks"] >= 10, out["ticks"]


def test_slow_server_answered():
    with FakeApiServer(token=TOKEN) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        api.delay(0.5)
        out = probe(kubeconfig(api.url), "-t", 10000, "GET", CLAIM)
        assert out["results"][0]["status"] == 200
        assert out["kube"]["failures"] == 0


def test_slice_create_update_delete():
    with FakeApiServer(token=TOKEN) as api:
        kc = kubeconfig(api.url)
        res = probe(kc, "-d", json.dumps(slice_body()), "POST",
                    SLICES)["results"][0]
        assert res["status"] == 201, res
        name = res["body"]["metadata"]["name"]
        assert name.startswith("cpu.example.com-node-a-")
        assert name in api.slices
        post = api.recorded("POST", SLICES)[0]
        assert post["headers"]["Content-Type"] == "application/json"
        assert json.loads(post["body"])["spec"]["nodeName"] == "node-a"

        obj = res["body"]
        obj["spec"]["pool"]["generation"] = 2
        res = probe(kc, "-d", json.dumps(obj), "PUT",
                    SLICES + "/" + name)["results"][0]
        assert res["status"] == 200, res
        assert api.slices[name]["spec"]["pool"]["generation"] == 2
        # The old resourceVersion is stale now.
        res = probe(kc, "-d", json.dumps(obj), "PUT",
                    SLICES + "/" + name)["results"][0]
        assert res["status"] == 409
        assert res["body"]["reason"] == "Conflict"

        lst = probe(kc, "GET", SLICES + "?fieldSelector=spec.nodeName%3D"
                    "node-a%2Cspec.driver%3Dcpu.example.com")["results"][0]
        assert [o["metadata"]["name"] for o in lst["body"]["items"]] == [name]
        lst = probe(kc, "GET", SLICES + "?fieldSelector=spec.nodeName%3D"
                    "node-b")["results"][0]
        assert lst["body"]["items"] == []

        res = probe(kc, "DELETE", SLICES + "/" + name)["results"][0]
        assert res["status"] == 200
        assert name not in api.slices
        res = probe(kc, "DELETE", SLICES + "/" + name)["results"][0]
        assert res["status"] == 404


def test_one_request_after_another_leaves_nothing_behind():
    """Requests one after the other (kube-probe -s) reuse the client's
    handles: each goes out with its own method, body and headers, none
    of the one before."""
    with FakeApiServer(token=TOKEN) as api:
        kc = kubeconfig(api.url)
        body = json.dumps(slice_body())
        out = probe(kc, "-s", "-d", body, "POST", SLICES, "GET", SLICES,
                    "PATCH", SLICES + "/none", "GET", SLICES + "?limit=1",
                    "DELETE", SLICES + "/none", "GET", SLICES)
        got = [r["status"] for r in out["results"]]
        assert got == [201, 200, 405, 200, 404, 200], out
        seen = [(r["method"], r["path"]) for r in api.recorded()
                if r["path"].startswith(SLICES)]
        assert seen == [("POST", SLICES), ("GET", SLICES),
                        ("PATCH", SLICES + "/none"),
                        ("GET", SLICES + "?limit=1"),
                        ("DELETE", SLICES + "/none"),
                        ("GET", SLICES)], seen
        for r in api.recorded(prefix=SLICES):
            if r["method"] in ("GET", "DELETE"):
                assert not r["body"], r
                assert "Content-Type" not in r["headers"], r
            else:
                assert json.loads(r["body"]) == json.loads(body), r
            assert r["headers"]["Authorization"] == "Bearer " + TOKEN, r
        patch = api.recorded("PATCH")[0]
        assert patch["headers"]["Content-Type"] == \
            "application/merge-patch+json", patch


def test_malformed_slice_rejected_422():
    with FakeApiServer(token=TOKEN) as api:
        kc = kubeconfig(api.url)
        # Exactly one of nodeName, nodeSelector, allNodes (7.1).
        bad = slice_body(allNodes=True)
        out = probe(kc, "-r", 3, "-b", 10, "-d", json.dumps(bad), "POST",
                    SLICES)
        res = out["results"][0]
        assert res["status"] == 422
        assert res["body"]["reason"] == "Invalid"
        assert len(api.recorded()) == 1
        assert api.slices == {}
        # requestPolicy needs allowMultipleAllocations (7.1).
        bad = slice_body()
        del bad["spec"]["devices"][0]["allowMultipleAllocations"]
        res = probe(kc, "-d", json.dumps(bad), "POST", SLICES)["results"][0]
        assert res["status"] == 422


def test_nrt_create_get_update():
    with FakeApiServer(token=TOKEN) as api:
        kc = kubeconfig(api.url)
        nrt = {"apiVersion": "topology.node.k8s.io/v1alpha2",
               "kind": "NodeResourceTopology",
               "metadata": {"name": "node-a"},
               "zones": [{"name": "node-0", "type": "Node",
                          "costs": [{"name": "node-0", "value": 10}],
                          "resources": [{"name": "cpu", "capacity": "32",
                                         "allocatable": "30",
                                         "available": "22"}]}]}
        res = probe(kc, "-d", json.dumps(nrt), "POST", NRT)["results"][0]
        assert res["status"] == 201, res
        res = probe(kc, "-d", json.dumps(nrt), "POST", NRT)["results"][0]
        assert res["status"] == 409
        assert res["body"]["reason"] == "AlreadyExists"
        got = probe(kc, "GET", NRT + "/node-a")["results"][0]
        assert got["status"] == 200
        got["body"]["zones"][0]["resources"][0]["available"] = "20"
        res = probe(kc, "-d", json.dumps(got["body"]), "PUT",
                    NRT + "/node-a")["results"][0]
        assert res["status"] == 200, res
        assert (api.nrts["node-a"]["zones"][0]["resources"][0]["available"]
                == "20")
        # ResourceInfo needs all of name, capacity, allocatable, available.
        del nrt["zones"][0]["resources"][0]["available"]
        nrt["metadata"]["name"] = "node-b"
        res = probe(kc, "-d", json.dumps(nrt), "POST", NRT)["results"][0]
        assert res["status"] == 422


def test_cancelled_request_never_answers():
    with FakeApiServer(token=TOKEN) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        out = probe(kubeconfig(api.url), "-c", "GET", CLAIM, "GET", CLAIM)
        assert out["results"][0] == "cancelled"
        assert out["results"][1]["status"] == 200
        # Cancelled before the loop ran: it never reached the server.
        assert len(api.recorded()) == 1


def test_bad_requests_answered_later():
    with FakeApiServer(token=TOKEN) as api:
        out = probe(kubeconfig(api.url), "BREW", CLAIM, "GET", "no-slash")
        assert "method" in out["results"][0]["error"]
        assert "path" in out["results"][1]["error"]
        assert out["results"][0]["status"] == 0
        # kube.h: the callback never runs inside kube_request().
        assert out["reentered"] == 0
        assert api.recorded() == []


def test_free_with_requests_pending():
    with FakeApiServer(token=TOKEN) as api:
        api.hang(True)
        try:
            out = probe(kubeconfig(api.url), "-t", 10000, "-q", 300,
                        "GET", CLAIM, "GET", CLAIM)
        finally:
            api.hang(False)
        # No callback after kube_free; the sanitizer build checks leaks.
        assert out["results"] == [None, None]


def test_oversized_and_garbage_answers():
    with FakeApiServer(token=TOKEN) as api:
        kc = kubeconfig(api.url)
        # One byte over the 16 MiB cap of topoawared(8) (KUBE_MAX_BODY).
        api.raw_next(200, b"[" + b" " * (16 * 1024 * 1024) + b"]")
        res = probe(kc, "-r", 2, "-b", 10, "GET", CLAIM)["results"][0]
        assert res["status"] == 0
        assert res["body"] is None
        assert "larger" in res["error"]
        assert len(api.recorded()) == 1      # not retried: it would recur
        api.raw_next(200, b"{not json")
        out = probe(kc, "GET", CLAIM)
        res = out["results"][0]
        assert res["status"] == 200
        assert res["body"] is None
        assert "not JSON" in res["error"]
        assert out["kube"]["failures"] == 1


def test_pick_one_string_of_the_answer():
    """kube_request_pick: the string at a path of keys, unescaped, without
    a tree of the rest; an absent one is no error; an answer that is not
    JSON is a failure with the byte it fails at; a body goes as given."""
    with FakeApiServer(token=TOKEN) as api:
        kc = kubeconfig(api.url)
        fixture = claim_fixture()
        api.set_claim("ns1", "claim1", fixture)
        out = probe(kc, "-p", "metadata/uid", "GET", CLAIM,
                    "GET", CLAIM + "-missing")
        res, missing = out["results"]
        assert res == {"status": 200, "value": fixture["metadata"]["uid"],
                       "error": None}, res
        assert missing["status"] == 404, missing
        assert missing["value"] is None and "404" in missing["error"], \
            missing
        assert out["kube"]["failures"] == 0
        # Not there, or not a string: nothing picked, and no error.
        for path in ("metadata/nope", "status/allocation", "x/y/z"):
            res = probe(kc, "-p", path, "GET", CLAIM)["results"][0]
            assert res == {"status": 200, "value": None, "error": None}, \
                (path, res)
        api.raw_next(200, b'{"metadata": {"uid": "a\\u00e9\\n"}}')
        res = probe(kc, "-p", "metadata/uid", "GET", CLAIM)["results"][0]
        assert res == {"status": 200, "value": "a\u00e9\n", "error": None}, \
            res
        for bad, at in ((b'{"metadata": {"uid": "x"', 24),
                        (b'{"metadata": {}, "metadata": {"uid": "x"}}', 17),
                        (b'{"metadata": {"uid": "x\\u0000"}}', 23)):
            api.raw_next(200, bad)
            out = probe(kc, "-p", "metadata/uid", "GET", CLAIM)
            res = out["results"][0]
            assert res["status"] == 200 and res["value"] is None, res
            assert "the answer is not JSON" in res["error"], res
            assert "at byte %d (of %d)" % (at, len(bad)) in res["error"], \
                (res, at)
            assert out["kube"]["failures"] == 1, out["kube"]
        body = {"metadata": {"name": "n", "note": "\u00e9"}, "spec": [1, 2]}
        before = len(api.recorded("POST"))
        out = probe(kc, "-p", "metadata/name", "-d", json.dumps(body),
                    "POST", "/apis/example/v1/things")
        sent = api.recorded("POST")[before:]
        assert len(sent) == 1 and json.loads(sent[0]["body"]) == body, sent


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   capture_output=True, timeout=25)


def make_pki(d):
    """A CA, a server certificate for 127.0.0.1 and a client one, all
    signed by the CA, in folder d."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
           "-nodes"]
    openssl("req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt",
            "-subj", "/CN=test-ca", "-days", "2", cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    for who, cn, ext in (("server", "127.0.0.1", ["-extfile", "san.ext"]),
                         ("client", "system:node:node-a", [])):
        openssl("req", "-new", *key, "-keyout", who + ".key", "-out",
                who + ".csr", "-subj", "/CN=" + cn, cwd=d)
        openssl("x509", "-req", "-in", who + ".csr", "-CA", "ca.crt",
                "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
                "-out", who + ".crt", *ext, cwd=d)
    # The kubelet keeps its client certificate and key in one file.
    with open(os.path.join(d, "client.pem"), "w") as out:
        for name in ("client.crt", "client.key"):
            with open(os.path.join(d, name)) as f:
                out.write(f.read())


def b64(d, name):
    with open(os.path.join(d, name), "rb") as f:
        return base64.b64encode(f.read()).decode()


def tls_kubeconfig(d, server, cluster, user):
    path = os.path.join(d, "kubeconfig-%d" % len(os.listdir(d)))
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                "clusters:\n- name: k\n  cluster:\n    server: %s\n%s"
                "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
                "users:\n- name: u\n  user:\n%s"
                % (server, cluster, user or "    {}\n"))
    return path


def test_https_client_certificates():
    d = tap.tmpdir()
    make_pki(d)
    tls = (os.path.join(d, "server.crt"), os.path.join(d, "server.key"),
           os.path.join(d, "ca.crt"))
    with FakeApiServer(tls=tls) as api:
        api.set_claim("ns1", "claim1", claim_fixture())
        # Inline -data form.
        kc = tls_kubeconfig(
            d, api.url,
            "    certificate-authority-data: %s\n" % b64(d, "ca.crt"),
            "    client-certificate-data: %s\n"
            "    client-key-data: %s\n" % (b64(d, "client.crt"),
                                          b64(d, "client.key")))
        res = probe(kc, "GET", CLAIM)["results"][0]
        assert res["status"] == 200, res
        assert api.recorded()[-1]["client_cn"] == "system:node:node-a"
        # The kubelet's form: relative CA path, one file for cert and key.
        kc = tls_kubeconfig(d, api.url,
                            "    certificate-authority: ca.crt\n",
                            "    client-certificate: client.pem\n"
                            "    client-key: client.pem\n")
        res = probe(kc, "GET", CLAIM)["results"][0]
        assert res["status"] == 200, res
        assert api.recorded()[-1]["client_cn"] == "system:node:node-a"
        n = len(api.recorded())
        # Without the CA the server is not trusted: no answer, no retry.
        kc = tls_kubeconfig(d, api.url, "",
                            "    client-certificate: client.pem\n"
                            "    client-key: client.pem\n")
        out = probe(kc, "-r", 2, "-b", 10, "GET", CLAIM)
        assert out["results"][0]["status"] == 0
        assert out["kube"]["failures"] == 1
        assert len(api.recorded()) == n
        # insecure-skip-tls-verify trusts it anyway.
        kc = tls_kubeconfig(d, api.url,
                            "    insecure-skip-tls-verify: true\n",
                            "    client-certificate: client.pem\n"
                            "    client-key: client.pem\n")
        res = probe(kc, "GET", CLAIM)["results"][0]
        assert res["status"] == 200, res


def test_bad_kubeconfig_named_in_error():
    path = os.path.join(tap.tmpdir(), "broken-kubeconfig")
    with open(path, "w") as f:
        f.write("current-context: [unclosed\n")
    exe = os.path.join(tap.builddir(), "t", "kube-probe")
    p = subprocess.run([exe, "-k", path, "GET", CLAIM], capture_output=True,
                       text=True, timeout=25)
    assert p.returncode == 1
    assert path in p.stderr


tap.run(globals())
