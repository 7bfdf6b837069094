"""One reload path, one rule book (issue 11): the file watch, SIGHUP and
`reload` on the admin socket give the same answer to the same file: a
deleted config is refused (absent means the defaults only at start), bytes
already in force are "unchanged", a FIFO or a folder in the config's place
is refused by kind without blocking the loop, bad JSON is refused with the
place of the error, and a good change is applied. Every trigger ends with
READY=1, which the watch and SIGHUP cases wait for. Also at start and with
-n: a FIFO or folder as config is a clear error, and a CPU list with a
stray space is refused as the Go policy would."""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402
from daemon import Daemon  # noqa: E402

# The watch reacts quickly for its own runs; for the others it waits far
# longer than a test lasts, so that only the trigger under test reloads.
FAST = ["--config-debounce", "300"]
NEVER = ["--config-debounce", "60000"]

A = {"pinMemory": False}
B = {"pinMemory": False, "pinCPU": False}


def wait_ready(s, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "no READY=1 after the reload"
        s.settimeout(left)
        if "READY=1" in s.recv(4096).decode().split("\n"):
            return


def status(d):
    r = d.admin("status")
    assert r["ok"], r
    return r["result"]


def config(d):
    r = d.admin("config")
    assert r["ok"], r
    return r["result"]


def metric(d, result):
    text = d.admin("metrics")["result"]["text"]
    key = 'topoaware_reloads_total{result="%s"} ' % result
    for line in text.splitlines():
        if line.startswith(key):
            return int(line[len(key):])
    return 0


def remove(path):
    """Whatever stands at path goes: file, FIFO or folder."""
    if os.path.isdir(path) and not os.path.islink(path):
        os.rmdir(path)
    elif os.path.lexists(path):
        os.unlink(path)


def write_in_place(path, doc):
    with open(path, "w") as f:
        f.write(json.dumps(doc))


# Each case changes the file (the watch sees that) and says what any
# trigger must answer: accepted or not, and words of the refusal.
def case_unchanged(d):
    write_in_place(d.config_path, A)
    return True, None


def case_deleted(d):
    remove(d.config_path)
    return False, ["is gone", d.config_path]


def case_fifo(d):
    remove(d.config_path)
    os.mkfifo(d.config_path)
    return False, ["is a FIFO, not a regular file", d.config_path]


def case_directory(d):
    remove(d.config_path)
    os.mkdir(d.config_path)
    return False, ["is a directory, not a regular file", d.config_path]


def case_bad_json(d):
    remove(d.config_path)
    d.write_config('{"pinCPU": true,')
    return False, [d.config_path, "line 1"]


def case_good(d):
    d.write_config(B)
    return True, None


CASES = [case_unchanged, case_deleted, case_fifo, case_directory,
         case_bad_json, case_good]


def run_trigger(how):
    """Runs every case through one trigger; what each gave, as the
    status shows it."""
    seen = []
    with Daemon(config=A, args=FAST if how == "watch" else NEVER) as d:
        d.start()
        ns = d.listen_notify()
        try:
            for case in CASES:
                ok, words = case(d)
                if how == "admin":
                    # Answered at once: a FIFO must not hold the loop.
                    r = d.admin("reload")
                    wait_ready(ns)
                    assert r["ok"] is ok, (case.__name__, r)
                elif how == "sighup":
                    d.signal(signal.SIGHUP)
                    wait_ready(ns)
                else:
                    wait_ready(ns)
                st = status(d)
                lr = st["lastReload"]
                assert lr["ok"] is ok, (how, case.__name__, st)
                if how == "admin" and not ok:
                    assert r["error"] == lr["error"], (r, lr)
                for w in words or []:
                    assert w in lr["error"], (how, case.__name__, w, lr)
                seen.append((case.__name__, lr["ok"], lr["unchanged"],
                             st["configGeneration"]))
                if case is not case_good:
                    # The config in force is still A, not the defaults.
                    assert config(d)["pinMemory"] is False, case.__name__
                    assert config(d)["pinCPU"] is True, case.__name__
            assert config(d)["pinCPU"] is False
            counts = {r: metric(d, r) for r in ("ok", "unchanged",
                                                 "refused")}
        finally:
            ns.close()
        d.finish()
    return seen, counts


def test_three_triggers_agree():
    results = {how: run_trigger(how) for how in ("admin", "sighup", "watch")}
    seen, counts = results["admin"]
    assert seen == [("case_unchanged", True, True, 1),
                    ("case_deleted", False, False, 1),
                    ("case_fifo", False, False, 1),
                    ("case_directory", False, False, 1),
                    ("case_bad_json", False, False, 1),
                    ("case_good", True, False, 2)], seen
    assert counts == {"ok": 1, "unchanged": 1, "refused": 4}, counts
    for how in ("sighup", "watch"):
        assert results[how] == results["admin"], (how, results)


def test_absent_at_start_is_the_defaults_and_stays_unchanged():
    with Daemon(args=NEVER) as d:
        assert not os.path.exists(d.config_path)
        d.start()
        assert config(d)["pinMemory"] is True
        r = d.admin("reload")
        assert r["ok"], r
        st = status(d)
        assert st["configGeneration"] == 1, st
        assert st["lastReload"]["ok"] and st["lastReload"]["unchanged"], st
        assert "unchanged" in d.output()
        # Created, it is loaded; deleted again, it is refused.
        d.write_config(A)
        assert d.admin("reload")["ok"]
        os.unlink(d.config_path)
        r = d.admin("reload")
        assert r["ok"] is False and "is gone" in r["error"], r
        assert config(d)["pinMemory"] is False
        d.finish()


def test_refused_bytes_are_answered_again_without_a_second_load():
    with Daemon(config=A, args=NEVER) as d:
        d.start()
        d.write_config('{"pinCPU": ')
        first = d.admin("reload")
        assert first["ok"] is False, first
        again = d.admin("reload")
        assert again == first, (first, again)
        assert metric(d, "refused") == 1
        assert metric(d, "unchanged") == 1
        assert d.output().count("reload (admin) refused") == 1
        d.finish()


def topoawared(*args):
    return subprocess.run([os.path.join(tap.builddir(), "topoawared")] +
                          list(args), capture_output=True, text=True,
                          timeout=20)


def check_args(path):
    return ["-n", "--sysfs-root", tap.sysfs("server"), "--config", path]


def test_fifo_or_folder_as_config_at_start():
    folder = tap.tmpdir()
    fifo = os.path.join(folder, "fifo.json")
    os.mkfifo(fifo)
    r = topoawared(*check_args(fifo))
    assert r.returncode == 1, r
    assert "config %s is a FIFO, not a regular file" % fifo in r.stderr, r
    folder_cfg = os.path.join(folder, "dir.json")
    os.mkdir(folder_cfg)
    r = topoawared(*check_args(folder_cfg))
    assert r.returncode == 1, r
    assert ("config %s is a directory, not a regular file" % folder_cfg
            in r.stderr), r
    assert "expected near end of file" not in r.stderr, r

    # The daemon itself says so and exits; it does not hang in open().
    d = Daemon()
    d.config_path = fifo
    rc = d.start(expect_ready=False)
    assert rc == 1, (rc, d.output())
    assert "is a FIFO, not a regular file" in d.output()
    d.kill()


def test_cpuset_with_a_stray_space_is_refused():
    folder = tap.tmpdir()
    path = os.path.join(folder, "config.json")
    for key, value in (("reservedResources", "cpuset: 1"),
                       ("reservedResources", "cpuset:1, 2"),
                       ("availableResources", "exclude-cpuset:0 ")):
        with open(path, "w") as f:
            json.dump({key: {"cpu": value}}, f)
        r = topoawared(*check_args(path))
        assert r.returncode == 1, (value, r)
        assert "%s.cpu" % key in r.stderr, (value, r.stderr)
        assert "blanks" in r.stderr, (value, r.stderr)
        assert json.dumps(value) in r.stderr, (value, r.stderr)
    with open(path, "w") as f:
        json.dump({"reservedResources": {"cpu": "cpuset:1,2"}}, f)
    r = topoawared(*check_args(path))
    assert r.returncode == 0, r


if __name__ == "__main__":
    tap.run(globals())
