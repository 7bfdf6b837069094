"""`make install DESTDIR=...` puts the programs, the systemd unit, the
tmpfiles snippet, the example config and the man pages in place, and the
installed unit passes systemd-analyze verify once its ExecStart points at
the DESTDIR binary."""

import os
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402

DEST = None


def install():
    global DEST
    if DEST is not None:
        return DEST
    DEST = tap.tmpdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    r = subprocess.run(["make", "-s", "-C", tap.builddir(), "install",
                        "DESTDIR=" + DEST], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return DEST


def find(name):
    for root, _dirs, files in os.walk(install()):
        if name in files:
            return os.path.join(root, name)
    raise AssertionError("%s was not installed" % name)


def test_files_in_place():
    for name in ("topoawared", "topoawarectl", "topoaware-sim",
                 "topoaware-mksysfs"):
        path = find(name)
        assert os.access(path, os.X_OK), path
    assert find("topoawared.service").endswith(
        "/lib/systemd/system/topoawared.service")
    assert find("topoaware.conf").endswith("/lib/tmpfiles.d/topoaware.conf")
    for page in ("topoawared.8", "topoawarectl.8", "topoawared.json.5",
                 "topoaware-sim.1", "topoaware-mksysfs.1"):
        find(page)


def test_example_config_is_valid():
    daemon = find("topoawared")
    r = subprocess.run([daemon, "-n", "--sysfs-root", tap.sysfs("server"),
                        "--config", find("config.json")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "configuration OK" in r.stdout


def test_tmpfiles_snippet_makes_every_folder_the_unit_writes():
    if os.geteuid() != 0:
        raise tap.Skip("systemd-tmpfiles --root chowns to root")
    root = os.path.join(tap.tmpdir(), "tmpfiles-root")
    os.mkdir(root)
    r = subprocess.run(["systemd-tmpfiles", "--create", "--root", root,
                        find("topoaware.conf")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    want = {"var/lib/topoaware": 0o700, "run/topoaware": 0o700,
            "run/cdi": 0o755, "var/lib/kubelet/plugins": 0o750,
            "var/lib/kubelet/plugins_registry": 0o750}
    for path, mode in want.items():
        st = os.stat(os.path.join(root, path))
        assert stat.S_ISDIR(st.st_mode), path
        assert stat.S_IMODE(st.st_mode) == mode, (path, oct(st.st_mode))
    # Every folder the unit may write is made, so none is left out of
    # its read-only file system.
    rw = [line.split("=", 1)[1].split() for line in unit_text().splitlines()
          if line.startswith("ReadWritePaths=")][0]
    for path in rw:
        path = path.lstrip("-").lstrip("/").replace("var/run/", "run/")
        assert os.path.isdir(os.path.join(root, path)), path


def unit_text():
    with open(find("topoawared.service")) as f:
        return f.read()


def test_unit_says_what_an_operator_needs():
    text = unit_text()
    lines = [line.strip() for line in text.splitlines()]
    for want in ("Type=notify", "ExecReload=/bin/kill -HUP $MAINPID",
                 "Restart=on-failure", "StateDirectory=topoaware",
                 "RuntimeDirectory=topoaware"):
        assert want in lines, want
    assert any(line.startswith("WatchdogSec=") for line in lines)
    assert "@sbindir@" not in text


def verify(text):
    folder = tap.tmpdir()
    path = os.path.join(folder, "topoawared.service")
    with open(path, "w") as f:
        f.write(text)
    return subprocess.run(["systemd-analyze", "verify", "--man=no", path],
                          capture_output=True, text=True, timeout=60)


def test_unit_verifies():
    if shutil.which("systemd-analyze") is None:
        print("# systemd-analyze is not installed")
        raise AssertionError("systemd-analyze missing")
    sbin = os.path.dirname(find("topoawared"))
    installed_sbin = sbin[len(install()):]
    text = unit_text().replace(installed_sbin + "/", sbin + "/")
    r = verify(text)
    assert r.returncode == 0, r.stdout + r.stderr
    # The check can fail: a binary that is not there is caught.
    r = verify(text.replace(sbin + "/topoawared ", "/nonexistent/topoawared "))
    assert r.returncode != 0, "systemd-analyze accepted a missing binary"


tap.run(globals())
