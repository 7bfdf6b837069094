"""Python messages for the project's proto/ files, made at test time.

The tests speak to the daemon with an independent codec: Debian's protoc
(protobuf-compiler) and python3-protobuf, never our protobuf-c code.
generate() runs `protoc --python_out` over proto/ into a folder of the
test's own and imports the result:

    pb = protogen.generate()
    req = pb.nri.CreateContainerRequest()
    env = pb.ttrpc.Request(service=..., payload=req.SerializeToString())

The modules register their files in protobuf's default descriptor pool,
which allows each file once per process, so the first result is kept and
handed out again.
"""

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import types

PROTOS = ("ttrpc", "nri")

_cache = None


def proto_dir():
    """The proto/ folder of the source tree."""
    src = os.environ.get("TOPOAWARE_SRCDIR")
    if src is None:
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           os.pardir, os.pardir)
    return os.path.join(src, "proto")


def protoc():
    """Debian's protoc, or $PROTOC; an error that says what to install."""
    path = os.environ.get("PROTOC") or shutil.which("protoc")
    if path is None:
        raise RuntimeError("protoc not found: install protobuf-compiler")
    return path


def generate(outdir=None):
    """Generate and import ttrpc_pb2 and nri_pb2; returns a namespace with
    the modules as .ttrpc and .nri. outdir defaults to a fresh folder
    under the test's temporary folder ($TOPOAWARE_TMP)."""
    global _cache
    if _cache is not None:
        return _cache
    if outdir is None:
        base = os.environ.get("TOPOAWARE_TMP") or tempfile.gettempdir()
        outdir = tempfile.mkdtemp(prefix="proto.", dir=base)
    src = proto_dir()
    files = [os.path.join(src, name + ".proto") for name in PROTOS]
    r = subprocess.run([protoc(), "-I" + src, "--python_out=" + outdir]
                       + files, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("protoc failed: " + r.stderr.strip())
    sys.path.insert(0, outdir)
    try:
        mods = {name: importlib.import_module(name + "_pb2")
                for name in PROTOS}
    finally:
        sys.path.remove(outdir)
    _cache = types.SimpleNamespace(outdir=outdir, **mods)
    return _cache
