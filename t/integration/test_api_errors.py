"""An API server that answers 200 with a body that is not JSON (garbage, a
\\u0000 escape jansson refuses, a truncated object) is reported with the
parse error and where it is in the body, for a ResourceClaim the kubelet
asked to prepare and for the NodeResourceTopology object (read whole, or
written and read for its resourceVersion), never as "not a JSON object";
the daemon serves on."""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from apienv import NODE, ApiEnv  # noqa: E402
from draenv import DraEnv, dev  # noqa: E402
from fake_apiserver import NRT, RESOURCE  # noqa: E402
from kubelet import resource_claim, result  # noqa: E402
from tap import wait_for  # noqa: E402

WHERE = re.compile(r"at line (\d+), column (\d+) \(byte (\d+) of (\d+)\)")


def bodies(claim):
    """Bodies that are not JSON, each with words of jansson's error."""
    text = json.dumps(claim).encode()
    return [(b"{not json", "expected"),
            (b'{"metadata": {"name": "a\\u0000b"}}', "u0000"),
            (text[:len(text) // 2], "end of input")]


def check_error(error, body, word):
    """The error says the answer is not JSON, jansson's reason and where
    in a body of this length; never that the claim is not an object."""
    assert "is not JSON" in error, error
    assert "not a JSON object" not in error, error
    assert word in error, (word, error)
    m = WHERE.search(error)
    assert m, error
    line, column, pos, total = (int(x) for x in m.groups())
    assert total == len(body), (total, len(body), error)
    assert 1 <= line and 0 <= column and 0 <= pos <= total, error


def test_claim_answer_not_json():
    with DraEnv() as env:
        env.start()
        good = env.claim_on(1, 1)
        c = env.claim([result(dev(0), 1)])
        path = "%s/namespaces/%s/resourceclaims/%s" % (
            RESOURCE, c.namespace, c.name)
        fixture = resource_claim(c.uid, [result(dev(0), 1)], name=c.name,
                                 namespace=c.namespace)
        for body, word in bodies(fixture):
            env.api.raw_get(path, 200, body)
            got = env.prepare(c)
            assert got["devices"] == [], got
            check_error(got["error"], body, word)
        # Nothing was taken, and the daemon serves the next claim.
        assert env.s.status()["claims"] == 0
        assert env.prepare(good)["error"] == ""
        env.api.raw_get(path, 200, None)
        assert env.prepare(c)["error"] == ""
        env.stop()


def test_nrt_answer_not_json():
    cfg = {"reservedResources": {"cpu": "cpuset:3,11"},
           "nodeResourceTopology": {"enabled": True,
                                    "refreshSeconds": 1}}
    with ApiEnv(cfg, ["--nrt-debounce", "50"]) as env:
        body = b'{"metadata": {"name": "%s", "resourceVersion": "1"' % (
            NODE.encode())
        env.api.raw_get("%s/%s" % (NRT, NODE), 200, body)
        env.start()

        def failed():
            err = env.s.status()["nrt"].get("lastError") or ""
            return err if "is not JSON" in err else None
        check_error(wait_for(failed, "the NRT read refused"), body, "")
        env.api.raw_get("%s/%s" % (NRT, NODE), 200, None)
        wait_for(lambda: env.api.nrt(NODE), "the NRT object written")
        env.stop()


def test_nrt_write_answer_not_json():
    """A write's answer is read for its resourceVersion alone, but still
    as JSON: one that is not is a failure of the API server, said with
    the byte it fails at; the write itself was answered 200, so the
    object counts as written, and with no resourceVersion kept the next
    change reads the object before it writes."""
    cfg = {"reservedResources": {"cpu": "cpuset:3,11"},
           "nodeResourceTopology": {"enabled": True,
                                    "refreshSeconds": 3600}}
    with ApiEnv(cfg, ["--nrt-debounce", "50"]) as env:
        env.start()
        wait_for(lambda: env.s.status()["nrt"]["published"], "published")
        path = "%s/%s" % (NRT, NODE)

        def guaranteed(name):
            p = env.rt.make_pod(name, qos="Guaranteed")
            env.rt.create_container(p, env.rt.make_container(
                p, "c", request=2000, limit=2000))

        def requests():
            return [r["method"] for r in env.api.recorded(prefix=path)]
        before = len(requests())
        failures = env.s.status()["dra"]["api"]["failures"]
        body = b'{"metadata": {"name": "%s", "resourceVersion": "99"' % (
            NODE.encode())
        # The PUT's answer alone: the driver's slices are written too.
        env.api.raw_once("PUT", path, 200, body)
        guaranteed("db")

        def failed():
            api = env.s.status()["dra"]["api"]
            return api if api["failures"] > failures else None
        api = wait_for(failed, "the write's answer refused")
        assert "is not JSON" in api["lastError"], api
        assert "at byte %d (of %d)" % (len(body), len(body)) in \
            api["lastError"], api
        assert requests()[before:] == ["PUT"], requests()
        st = env.s.status()["nrt"]
        assert st["lastError"] is None and st["updates"] == 2, st
        # No resourceVersion kept from it: read, then written.
        guaranteed("db2")
        wait_for(lambda: requests()[before:] == ["PUT", "GET", "PUT"],
                 "read and written again")
        st = wait_for(lambda: (lambda s: s if s["updates"] == 3 else None)(
            env.s.status()["nrt"]), "the write counted")
        assert st["lastError"] is None, st
        env.stop()


if __name__ == "__main__":
    tap.run(globals())
