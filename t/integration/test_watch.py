"""Reload on change of the config file (R-CONF-2, issue 6 item 1) against
the real daemon: its folder is watched, so a rename over the file and a
write in place both reload; a burst of writes within the quiet period is
one reload; a refused reload keeps the config in force and says why in
status; a removed file is refused, and bytes already loaded are
"unchanged" (server_reload's rules, test_reload_rules.py); other files of
the folder do not count. Every reload ends with READY=1 on the notify
socket, which is what the tests wait for, each with a deadline."""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402

DEBOUNCE_MS = 100
ARGS = ["--config-debounce", str(DEBOUNCE_MS)]
QUIET = 3 * DEBOUNCE_MS / 1000.0


def finish(d):
    rc = d.stop()
    out = d.output()
    assert rc == 0, "exit %r:\n%s" % (rc, out)
    assert "Sanitizer" not in out, out
    assert "runtime error:" not in out, out


def wait_ready(s, timeout=10):
    """A reload ends with READY=1, accepted or refused."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "no READY=1 after the change"
        s.settimeout(left)
        msg = s.recv(4096).decode()
        if "READY=1" in msg.split("\n"):
            return


def readies_within(s, seconds):
    """How many READY=1 arrive in the next `seconds`: a quiet period."""
    n = 0
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return n
        s.settimeout(left)
        try:
            msg = s.recv(4096).decode()
        except OSError:
            return n
        if "READY=1" in msg.split("\n"):
            n += 1


def wait_log(d, text, timeout=10):
    deadline = time.monotonic() + timeout
    while text not in d.output():
        assert time.monotonic() < deadline, \
            "%r not logged:\n%s" % (text, d.output())
        time.sleep(0.05)


def status(d):
    r = d.admin("status")
    assert r["ok"], r
    return r["result"]


def config(d):
    r = d.admin("config")
    assert r["ok"], r
    return r["result"]


def write_in_place(d, doc):
    """Open, truncate, write: the inode stays, as `cat > file` does."""
    with open(d.config_path, "r+") as f:
        f.truncate(0)
        f.write(json.dumps(doc))


def test_rename_over_the_file_reloads():
    with Daemon(config={}, args=ARGS) as d:
        d.start()
        assert config(d)["pinMemory"] is True
        ns = d.listen_notify()
        try:
            d.write_config({"pinMemory": False})
            wait_ready(ns)
        finally:
            ns.close()
        st = status(d)
        assert st["configGeneration"] == 2, st
        assert st["lastReload"]["ok"] is True, st
        assert st["lastReload"]["generation"] == 2, st
        assert config(d)["pinMemory"] is False
        assert "reloaded (file change)" in d.output()
        finish(d)


def test_configmap_symlink_swap_reloads():
    """A ConfigMap volume: config.json -> ..data/config.json, ..data ->
    a timestamped folder, updated by renaming a new ..data symlink."""
    d = Daemon(args=ARGS)
    folder = os.path.dirname(d.config_path)

    def version(name, doc):
        os.mkdir(os.path.join(folder, name))
        with open(os.path.join(folder, name, "config.json"), "w") as f:
            f.write(json.dumps(doc))
        tmp = os.path.join(folder, "..data_tmp")
        os.symlink(name, tmp)
        os.rename(tmp, os.path.join(folder, "..data"))

    version("..2026_11_29_1", {"pinMemory": True})
    os.symlink("..data/config.json", d.config_path)
    with d:
        d.start()
        assert config(d)["pinMemory"] is True
        ns = d.listen_notify()
        try:
            version("..2026_11_29_2", {"pinMemory": False})
            wait_ready(ns)
        finally:
            ns.close()
        st = status(d)
        assert st["configGeneration"] == 2, st
        assert config(d)["pinMemory"] is False
        finish(d)


def test_write_in_place_reloads():
    with Daemon(config={}, args=ARGS) as d:
        d.start()
        ino = os.stat(d.config_path).st_ino
        ns = d.listen_notify()
        try:
            write_in_place(d, {"preferSharedCPUs": True})
            wait_ready(ns)
        finally:
            ns.close()
        assert os.stat(d.config_path).st_ino == ino
        st = status(d)
        assert st["configGeneration"] == 2, st
        assert st["lastReload"]["ok"] is True, st
        assert config(d)["preferSharedCPUs"] is True
        finish(d)


def test_a_burst_of_writes_is_one_reload():
    with Daemon(config={}, args=ARGS) as d:
        d.start()
        ns = d.listen_notify()
        conclusive = False
        try:
            # A round whose writes were not all within the quiet period
            # (a descheduled test) proves nothing; it is tried again.
            for _ in range(3):
                before = status(d)["configGeneration"]
                t0 = time.monotonic()
                d.write_config({"pinCPU": False})
                write_in_place(d, {"pinCPU": True})
                d.write_config({"pinCPU": False, "pinMemory": False})
                took = time.monotonic() - t0
                wait_ready(ns)
                extra = readies_within(ns, QUIET)
                if took >= DEBOUNCE_MS / 1000.0:
                    continue
                st = status(d)
                assert extra == 0, st
                assert st["configGeneration"] == before + 1, st
                assert st["lastReload"]["ok"] is True, st
                cfg = config(d)
                assert cfg["pinCPU"] is False and cfg["pinMemory"] is False
                conclusive = True
                break
        finally:
            ns.close()
        assert conclusive, "no round of writes fit in the quiet period"
        finish(d)


def test_bad_json_through_the_file_is_refused():
    with Daemon(config={"pinCPU": False}, args=ARGS) as d:
        d.start()
        ns = d.listen_notify()
        try:
            d.write_config('{"pinCPU": true,')
            wait_ready(ns)
            st = status(d)
            assert st["configGeneration"] == 1, st
            assert st["lastReload"]["ok"] is False, st
            assert st["lastReload"]["generation"] == 1, st
            assert d.config_path in st["lastReload"]["error"], st
            assert config(d)["pinCPU"] is False
            assert "reload (file change) refused" in d.output()

            # Still watched after a refusal: the fixed file goes through.
            d.write_config({"pinCPU": True})
            wait_ready(ns)
        finally:
            ns.close()
        st = status(d)
        assert st["configGeneration"] == 2, st
        assert st["lastReload"]["ok"] is True, st
        assert st["lastReload"]["error"] is None, st
        assert config(d)["pinCPU"] is True
        finish(d)


def test_driver_name_change_through_the_file_needs_a_restart():
    with Daemon(config={}, args=ARGS) as d:
        d.start()
        ns = d.listen_notify()
        try:
            d.write_config({"dra": {"driverName": "other.example.com"},
                            "pinMemory": False})
            wait_ready(ns)
        finally:
            ns.close()
        st = status(d)
        assert st["configGeneration"] == 1, st
        assert st["lastReload"]["ok"] is False, st
        assert "dra.driverName" in st["lastReload"]["error"], st
        assert "restart" in st["lastReload"]["error"], st
        cfg = config(d)
        assert cfg["dra"]["driverName"] == "topology-aware.nri.io"
        assert cfg["pinMemory"] is True
        finish(d)


def test_a_removed_file_keeps_the_config_in_force():
    with Daemon(config={"pinMemory": False}, args=ARGS) as d:
        d.start()
        ns = d.listen_notify()
        try:
            os.unlink(d.config_path)
            # Absent means the defaults at start, never at a reload: the
            # reload is refused, and status says why.
            wait_ready(ns)
            st = status(d)
            assert st["configGeneration"] == 1, st
            assert st["lastReload"]["ok"] is False, st
            assert "is gone" in st["lastReload"]["error"], st
            assert d.config_path in st["lastReload"]["error"], st
            assert config(d)["pinMemory"] is False

            # Back, it is reloaded.
            d.write_config({"pinMemory": False, "pinCPU": False})
            wait_ready(ns)
        finally:
            ns.close()
        st = status(d)
        assert st["configGeneration"] == 2, st
        assert st["lastReload"]["ok"] is True, st
        cfg = config(d)
        assert cfg["pinCPU"] is False and cfg["pinMemory"] is False
        finish(d)


def test_a_file_created_after_start_is_loaded():
    with Daemon(args=ARGS) as d:
        assert not os.path.exists(d.config_path)
        d.start()
        assert config(d)["preferIsolatedCPUs"] is True
        ns = d.listen_notify()
        try:
            d.write_config({"preferIsolatedCPUs": False})
            wait_ready(ns)
        finally:
            ns.close()
        assert status(d)["configGeneration"] == 2
        assert config(d)["preferIsolatedCPUs"] is False
        finish(d)


def test_other_files_of_the_folder_do_not_reload():
    with Daemon(config={}, args=ARGS) as d:
        d.start()
        ns = d.listen_notify()
        try:
            other = os.path.join(d.folder, "other.json")
            with open(other, "w") as f:
                f.write('{"pinCPU": false}')
            os.rename(other, other + ".new")
            os.unlink(other + ".new")
            # The config's name as a prefix is still another name.
            with open(d.config_path + ".bak", "w") as f:
                f.write("{}")
            assert readies_within(ns, QUIET) == 0
            st = status(d)
            assert st["configGeneration"] == 1, st
            assert "file change" not in d.output()

            # The watch is alive: the config's own change does reload.
            d.write_config({"pinCPU": False})
            wait_ready(ns)
        finally:
            ns.close()
        assert status(d)["configGeneration"] == 2
        finish(d)


def test_content_already_loaded_is_not_reloaded_again():
    with Daemon(config={}, args=ARGS) as d:
        d.start()
        ns = d.listen_notify()
        try:
            # `reload` reads the new file before the quiet period ends;
            # the change event that follows finds it unchanged.
            d.write_config({"pinCPU": False})
            r = d.admin("reload")
            assert r["ok"], r
            wait_ready(ns)
            wait_ready(ns)
            st = status(d)
            assert st["configGeneration"] == 2, st
            assert st["lastReload"]["unchanged"] is True, st
            assert "config %s unchanged" % d.config_path in d.output()

            # The same bytes written again are no change either.
            write_in_place(d, {"pinCPU": False})
            wait_ready(ns)
            assert status(d)["configGeneration"] == 2

            # A refusal by SIGHUP is answered again by the watch, without
            # loading the same bytes a second time.
            d.write_config("{")
            d.signal(signal.SIGHUP)
            wait_ready(ns)
            wait_ready(ns)
            assert readies_within(ns, QUIET) == 0
        finally:
            ns.close()
        st = status(d)
        assert st["configGeneration"] == 2, st
        assert st["lastReload"]["ok"] is False, st
        assert d.config_path in st["lastReload"]["error"], st
        m = d.admin("metrics")["result"]["text"]
        assert 'topoaware_reloads_total{result="refused"} 1\n' in m, m
        assert 'topoaware_reloads_total{result="ok"} 1\n' in m, m
        assert 'topoaware_reloads_total{result="unchanged"} 3\n' in m, m
        # Whichever came first loaded it; the other only answered.
        assert d.output().count(") refused, generation") == 1
        finish(d)


def test_a_missing_folder_is_not_watched():
    with Daemon(args=ARGS) as d:
        d.config_path = os.path.join(d.folder, "absent", "config.json")
        d.start()
        assert "not watching the config file" in d.output()
        assert status(d)["configGeneration"] == 1
        finish(d)


if __name__ == "__main__":
    tap.run(globals())
