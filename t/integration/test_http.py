"""The HTTP endpoint (instrumentation.httpEndpoint) of the real daemon,
asked by real clients: curl, and prometheus_client's text parser for
/metrics. /healthz and /readyz before and after the runtime synchronizes,
/metrics only with prometheusExport, GET and HEAD only, a reload that
moves the endpoint and one refused for a taken port, a start on a taken
port, the connection cap, and idle or dripping clients dropped."""

import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402
from nri_runtime import Session  # noqa: E402

from prometheus_client.parser import text_string_to_metric_families  # noqa

MAX_CONNS = 16          # HTTP_MAX_CONNS
TIMEOUT = 5             # HTTP_TIMEOUT_SEC
DEADLINE = 10           # HTTP_REQUEST_DEADLINE_MS / 1000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def conf(port, export=True):
    return {"instrumentation": {"httpEndpoint": "127.0.0.1:%d" % port,
                                "prometheusExport": export}}


def curl(port, path, *args):
    """(status, headers, body) of one request by curl."""
    r = subprocess.run(["curl", "-sS", "-i", "--max-time", "10"] +
                       list(args) + ["http://127.0.0.1:%d%s" % (port, path)],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    head, _, body = r.stdout.replace("\r\n", "\n").partition("\n\n")
    lines = head.split("\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def refused(port):
    r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "--max-time", "5",
                        "http://127.0.0.1:%d/healthz" % port],
                       capture_output=True, text=True, timeout=20)
    return r.returncode == 7        # could not connect


def families(port):
    status, headers, body = curl(port, "/metrics")
    assert status == 200, body
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    return {f.name: f for f in text_string_to_metric_families(body)}


def test_health_and_readiness_around_synchronize():
    port = free_port()
    with Session(conf(port)) as s:
        s.start(serve=False)
        status, _, body = curl(port, "/healthz")
        assert (status, body) == (200, "ok\n")
        status, headers, body = curl(port, "/readyz")
        assert status == 503 and "NRI" in body, (status, body)
        assert headers["content-type"] == "text/plain; charset=utf-8"
        s.rt.serve()
        s.wait_status(lambda st: st["nri"]["synchronized"])
        status, _, body = curl(port, "/readyz")
        assert (status, body) == (200, "ok\n")
        status, _, body = curl(port, "/healthz")
        assert status == 200
        s.stop()


def test_metrics_parse_and_name_every_pool():
    port = free_port()
    with Session(conf(port)) as s:
        s.start()
        pools = s.d.admin("pools")["result"]
        f = families(port)
        cap = f["nri_policy_topologyaware_zone_cpu_capacity_cores"]
        assert cap.type == "gauge"
        zones = {x.labels["zone"]: x.value for x in cap.samples}
        assert set(zones) == {p["name"] for p in pools}, zones
        assert zones["root"] == 112, zones
        for name in ("nri_policy_topologyaware_zone_cpu_shared_capacity_cores",
                     "nri_policy_topologyaware_zone_cpu_shared_assigned_cores",
                     "nri_policy_topologyaware_zone_cpu_shared_available_cores",
                     "nri_policy_topologyaware_zone_container_count",
                     "topoaware_pool_reserved_cpus",
                     "topoaware_pool_isolated_cpus",
                     "topoaware_pool_exclusive_cpus",
                     "topoaware_pool_claimed_cpus",
                     "topoaware_pool_free_cpus", "topoaware_pool_claims"):
            assert f[name].type == "gauge", name
            assert len(f[name].samples) == len(pools), name
        # Memory, now that it is accounted: per pool as Go has it, and
        # ours per pool and type, as the admin socket's pools say.
        mcap = f["nri_policy_topologyaware_zone_mem_capacity_bytes"]
        mem = {x.labels["zone"]: x.value for x in mcap.samples}
        for p in pools:
            assert mem[p["name"]] == sum(
                t["total"] for t in p["memory"].values()), (p, mem)
        free = f["topoaware_pool_memory_free_bytes"]
        got = {(x.labels["zone"], x.labels["type"]): x.value
               for x in free.samples}
        assert got == {(p["name"], t): v["free"] for p in pools
                       for t, v in p["memory"].items()}, got
        # The counters and histograms of the admin socket's metrics too.
        assert f["topoaware_nri_events"].type == "counter"
        assert f["topoaware_nri_request_seconds"].type == "histogram"
        info = f["topoaware_build_info"].samples[0]
        assert info.value == 1 and info.labels["version"], info
        # Per-container labels never appear.
        for fam in f.values():
            for x in fam.samples:
                assert not set(x.labels) & {"container", "pod", "claim",
                                            "id", "uid"}, x
        # HEAD: the headers of the GET, no body.
        status, headers, body = curl(port, "/metrics", "-I")
        assert status == 200 and body == "", (status, body)
        assert int(headers["content-length"]) > 1000, headers
        s.stop()


def test_methods_and_paths():
    port = free_port()
    with Session(conf(port, export=False)) as s:
        s.start()
        for m in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
            status, headers, _ = curl(port, "/healthz", "-X", m)
            assert status == 405, (m, status)
            assert headers["allow"] == "GET, HEAD", headers
        status, _, _ = curl(port, "/metrics")
        assert status == 404
        status, _, _ = curl(port, "/nope")
        assert status == 404
        status, _, _ = curl(port, "/healthz?probe=1")
        assert status == 200
        # A body over the limit, headers over the limit: refused, and the
        # daemon still answers.
        status, _, _ = curl(port, "/healthz", "-X", "POST",
                            "--data-binary", "x" * 5000)
        assert status in (405, 413), status
        status, _, _ = curl(port, "/healthz", "-H", "X-Big: " + "y" * 9000)
        assert status in (400, 413, 431), status
        assert curl(port, "/healthz")[0] == 200
        s.stop()


def reload(d):
    r = d.admin("reload")
    return r["ok"], r.get("error", "")


def test_reload_moves_the_endpoint_and_refuses_a_taken_port():
    p1, p2 = free_port(), free_port()
    with Daemon(config=conf(p1)) as d:
        d.start()
        assert curl(p1, "/healthz")[0] == 200
        d.write_config(conf(p2))
        ok, err = reload(d)
        assert ok, err
        assert curl(p2, "/healthz")[0] == 200
        assert refused(p1)
        # Taken by someone else: refused whole, the old address stays.
        taken = socket.socket()
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        p3 = taken.getsockname()[1]
        d.write_config(dict(conf(p3), pinMemory=False))
        ok, err = reload(d)
        assert not ok
        assert "127.0.0.1:%d" % p3 in err, err
        assert "instrumentation.httpEndpoint" in err, err
        assert d.admin("config")["result"]["pinMemory"] is True
        assert curl(p2, "/healthz")[0] == 200
        # The same bytes once the port is free: accepted.
        taken.close()
        ok, err = reload(d)
        assert ok, err
        assert curl(p3, "/healthz")[0] == 200
        assert d.admin("config")["result"]["pinMemory"] is False
        # Emptied: no endpoint.
        d.write_config({})
        ok, err = reload(d)
        assert ok, err
        assert refused(p3)
        d.finish()


def test_start_on_a_taken_port_names_it():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        d = Daemon(config=conf(port))
        rc = d.start(expect_ready=False)
        out = d.output()
        d.kill()
        assert rc not in (0, None), out
        assert "cannot listen on 127.0.0.1:%d" % port in out, out
    finally:
        taken.close()
    d = Daemon(config={"instrumentation": {"httpEndpoint": "localhost:1"}})
    rc = d.start(expect_ready=False)
    out = d.output()
    d.kill()
    assert rc not in (0, None), out
    assert "instrumentation.httpEndpoint: \"localhost:1\"" in out, out


def open_conns(port, n):
    socks = []
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        socks.append(c)
    return socks


def closed_by_peer(c, timeout):
    c.settimeout(timeout)
    try:
        return c.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def test_connections_beyond_the_cap_are_closed():
    port = free_port()
    with Daemon(config=conf(port)) as d:
        d.start()
        socks = open_conns(port, MAX_CONNS + 24)
        time.sleep(0.5)
        open_ones = [c for c in socks if not closed_by_peer(c, 0.05)]
        assert len(open_ones) == MAX_CONNS, len(open_ones)
        # The admin socket and a new request once they are gone.
        assert d.admin("status")["ok"]
        for c in socks:
            c.close()
        tap.wait_for(lambda: curl(port, "/healthz")[0] == 200,
                     "the endpoint answering again")
        d.finish()


def test_idle_and_dripping_clients_are_dropped():
    port = free_port()
    with Daemon(config=conf(port)) as d:
        d.start()
        idle = socket.create_connection(("127.0.0.1", port))
        idle.sendall(b"GET /healthz HTTP/1.1\r\n")
        drip = socket.create_connection(("127.0.0.1", port))
        start = time.monotonic()
        # Never idle for the timeout, never whole: the deadline ends it.
        gone = False
        while time.monotonic() - start < DEADLINE + 5:
            try:
                drip.sendall(b"X")
            except (BrokenPipeError, ConnectionResetError):
                gone = True
                break
            if closed_by_peer(drip, 1):
                gone = True
                break
        took = time.monotonic() - start
        assert gone, "a dripping client kept its connection %.1f s" % took
        assert took < DEADLINE + 3, took
        assert closed_by_peer(idle, 1), "an idle client kept its connection"
        # The loop never stalled meanwhile.
        assert curl(port, "/healthz")[0] == 200
        d.finish()


tap.run(globals())
