"""CDI specs written by cdi.c (R-DRA, R-CLAIM-8) through t/cdi-write,
validated by an independent checker: Debian's python3-jsonschema against
the CDI project's own schema in t/data/cdi, plus the rules of CDI's Go
loader that the schema does not express (protocols.md §6: strict fields,
name syntax, "K=V" env, unique device names, the file name). The same
checks are shown to reject hand-made invalid specs, so they can fail."""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import tap  # noqa: E402

import jsonschema  # noqa: E402

DRIVER = "topology-aware.nri.io"
UIDS = ["6f0c1e2a-0000-4c1d-9d6e-1b2c3d4e5f60",
        "0b7e4d2a-9c1f-4e3b-8a6d-5f4e3d2c1b0a",
        "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"]

# protocols.md §6.2: vendor and class start with a letter and end with a
# letter or digit; device names start and end with an alphanumeric.
VENDOR = re.compile(r"^[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
CLASS = re.compile(r"^[A-Za-z]([A-Za-z0-9_-]*[A-Za-z0-9])?$")
DEVICE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")
# The fields a 0.5.0 spec may have (CDI's loader refuses unknown ones).
TOP_FIELDS = {"cdiVersion", "kind", "devices", "containerEdits"}
DEVICE_FIELDS = {"name", "containerEdits"}
EDIT_FIELDS = {"env", "deviceNodes", "mounts", "hooks"}


def validator():
    base = os.path.join(tap.srcdir(), "t", "data", "cdi")
    with open(os.path.join(base, "schema.json")) as f:
        schema = json.load(f)
    resolver = jsonschema.RefResolver("file://" + base + "/", schema)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, resolver=resolver)


VALIDATOR = validator()


def problems(spec):
    """Everything wrong with a parsed spec, as readable lines."""
    out = [e.message for e in VALIDATOR.iter_errors(spec)]
    if out or not isinstance(spec, dict):
        return out or ["not an object"]
    out += ["unknown field %s" % k for k in set(spec) - TOP_FIELDS]
    if spec["cdiVersion"] != "0.5.0":
        out.append("cdiVersion %r, want 0.5.0" % spec["cdiVersion"])
    vendor, _, cls = spec["kind"].partition("/")
    if not VENDOR.match(vendor) or not CLASS.match(cls):
        out.append("bad kind %r" % spec["kind"])
    if not spec["devices"]:
        out.append("no devices")
    names = [d["name"] for d in spec["devices"]]
    if len(set(names)) != len(names):
        out.append("duplicate device names")
    for d in spec["devices"]:
        out += ["device %s: unknown field %s" % (d["name"], k)
                for k in set(d) - DEVICE_FIELDS]
        if not DEVICE.match(d["name"]):
            out.append("bad device name %r" % d["name"])
        edits = d["containerEdits"]
        out += ["device %s: unknown edit %s" % (d["name"], k)
                for k in set(edits) - EDIT_FIELDS]
        if not edits:
            out.append("device %s: empty containerEdits" % d["name"])
        for e in edits.get("env", []):
            if not isinstance(e, str) or "=" not in e or e.startswith("="):
                out.append("device %s: env %r is not K=V" % (d["name"], e))
    return out


def cdi_write(*args, ok=True):
    exe = os.path.join(tap.builddir(), "t", "cdi-write")
    p = subprocess.run([exe] + list(args), capture_output=True, text=True,
                       timeout=30)
    if ok and p.returncode != 0:
        raise AssertionError("cdi-write %s: exit %d: %s"
                             % (args, p.returncode, p.stderr))
    return p


def load(path):
    with open(path) as f:
        return json.load(f)


def check_dir(d):
    """Every spec file in d passes; other files there are none."""
    names = sorted(os.listdir(d))
    for name in names:
        if not name.endswith(".json"):
            raise AssertionError("%s: stray file %s" % (d, name))
        found = problems(load(os.path.join(d, name)))
        if found:
            raise AssertionError("%s: %s" % (name, "; ".join(found)))
    return names


def test_specs_are_valid():
    d = os.path.join(tap.tmpdir(), "cdi")
    cpus = ["12-14", "4-5", "0,4,8,56,60"]
    for n, (uid, cpuset) in enumerate(zip(UIDS, cpus), 1):
        edit = "DRA_CPUSET_%s=%s" % (uid, cpuset)
        out = cdi_write(d, DRIVER, uid, *([edit] * n)).stdout.split("\n")
        path = os.path.join(d, "%s-device_%s.json" % (DRIVER, uid))
        assert out[0] == path, out
        spec = load(path)
        assert spec["kind"] == DRIVER + "/device", spec
        names = ["claim-%s-%d" % (uid, i) for i in range(n)]
        assert [dev["name"] for dev in spec["devices"]] == names, spec
        # R-CLAIM-8: every device carries the whole claim's cpuset.
        assert all(dev["containerEdits"] == {"env": [edit]}
                   for dev in spec["devices"]), spec
        # The ids handed to the kubelet are <kind>=<device name>.
        assert out[1:n + 1] == [spec["kind"] + "=" + x for x in names], out
    assert len(check_dir(d)) == 3


def test_names_unique_across_files():
    d = os.path.join(tap.tmpdir(), "cdi")
    for uid in UIDS:
        cdi_write(d, DRIVER, uid, "A=1", "A=1")
    names = [dev["name"] for f in check_dir(d)
             for dev in load(os.path.join(d, f))["devices"]]
    assert len(names) == 6 and len(set(names)) == 6, names


def test_rewrite_and_remove():
    d = os.path.join(tap.tmpdir(), "cdi")
    cdi_write(d, DRIVER, UIDS[0], "DRA_CPUSET_x=1")
    cdi_write(d, DRIVER, UIDS[0], "DRA_CPUSET_x=1-2", "DRA_CPUSET_x=1-2")
    assert check_dir(d) == ["%s-device_%s.json" % (DRIVER, UIDS[0])]
    assert len(load(os.path.join(d, check_dir(d)[0]))["devices"]) == 2
    cdi_write("-r", d, DRIVER, UIDS[0])
    assert os.listdir(d) == []
    cdi_write("-r", d, DRIVER, UIDS[0])


def test_refused_input_writes_nothing():
    d = os.path.join(tap.tmpdir(), "cdi")
    os.mkdir(d)
    for args in [(d, DRIVER, "../evil", "A=1"), (d, DRIVER, "", "A=1"),
                 (d, "Bad_Driver", UIDS[0], "A=1"), (d, DRIVER, UIDS[0]),
                 (d, DRIVER, UIDS[0], "=1")]:
        p = cdi_write(*args, ok=False)
        assert p.returncode == 1 and p.stderr, (args, p.returncode)
    assert os.listdir(d) == []
    assert os.listdir(os.path.dirname(d)) == ["cdi"]


def test_checker_rejects_invalid_specs():
    good = {"cdiVersion": "0.5.0", "kind": DRIVER + "/device",
            "devices": [{"name": "claim-u-0",
                         "containerEdits": {"env": ["A=1"]}}]}
    assert problems(good) == []
    bad = [
        {k: v for k, v in good.items() if k != "kind"},
        {k: v for k, v in good.items() if k != "devices"},
        dict(good, cdiVersion=5),
        dict(good, devices=[{"name": "claim-u-0"}]),
        dict(good, devices=[{"name": "x", "containerEdits": {"env": "A=1"}}]),
        dict(good, devices=[]),
        dict(good, devices=[{"name": "x", "containerEdits": {}}]),
        dict(good, devices=[{"name": "-x", "containerEdits": {"env": ["A"]}}]),
        dict(good, devices=good["devices"] * 2),
        dict(good, kind="topology-aware.nri.io"),
        dict(good, extra=1),
    ]
    for spec in bad:
        assert problems(spec), spec
    # The schema alone, without our extra rules, catches the first five.
    assert all(list(VALIDATOR.iter_errors(s)) for s in bad[:5])


tap.run(globals())
