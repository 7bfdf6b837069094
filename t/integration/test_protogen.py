"""Python stubs from proto/ with Debian's protoc (t/lib/protogen.py): a
ttrpc Request wrapping an NRI CreateContainerRequest survives a round
trip, the field numbers are those of protocols.md 2.6, and the bytes of
the RegisterPlugin example of 2.2 come out of an independent encoder."""

import os
import struct
import sys

sys.path.insert(0, os.path.join(os.environ["TOPOAWARE_SRCDIR"], "t", "lib"))
import protogen  # noqa: E402
import tap  # noqa: E402


def pb():
    return protogen.generate()


def number(msg, field):
    return msg.DESCRIPTOR.fields_by_name[field].number


def create_request(nri):
    req = nri.CreateContainerRequest()
    req.pod.id = "pod-1"
    req.pod.name = "db-0"
    req.pod.uid = "0b6e3c2a-0000-4000-8000-000000000001"
    req.pod.namespace = "default"
    req.pod.labels["app"] = "db"
    c = req.container
    c.id = "ctr-1"
    c.pod_sandbox_id = "pod-1"
    c.name = "db"
    c.state = nri.CONTAINER_CREATED
    c.env.extend(["A=B", "CDI=1"])
    c.linux.resources.cpu.cpus = "0-3"
    c.linux.resources.cpu.mems = "0"
    c.linux.resources.memory.limit.value = 0
    return req


def test_generates_into_temp_dir():
    p = pb()
    base = os.environ["TOPOAWARE_TMP"]
    assert os.path.commonpath([p.outdir, base]) == base, p.outdir
    for name in ("ttrpc_pb2.py", "nri_pb2.py"):
        assert os.path.isfile(os.path.join(p.outdir, name)), name
    assert p.nri.DESCRIPTOR.package == "nri.pkg.api.v1alpha1"
    assert p.ttrpc.DESCRIPTOR.package == "ttrpc"
    assert protogen.generate() is p, "generated once per process"


def test_request_round_trip():
    p = pb()
    req = create_request(p.nri)
    env = p.ttrpc.Request(service="nri.pkg.api.v1alpha1.Plugin",
                          method="CreateContainer",
                          payload=req.SerializeToString(),
                          timeout_nano=2 * 10**9)
    env.metadata.add(key="k", value="v")
    wire = env.SerializeToString()

    back = p.ttrpc.Request()
    back.ParseFromString(wire)
    assert back.service == "nri.pkg.api.v1alpha1.Plugin"
    assert back.method == "CreateContainer"
    assert back.timeout_nano == 2 * 10**9
    assert [(kv.key, kv.value) for kv in back.metadata] == [("k", "v")]
    got = p.nri.CreateContainerRequest()
    got.ParseFromString(back.payload)
    assert got == req
    assert got.pod.labels["app"] == "db"
    assert list(got.container.env) == ["A=B", "CDI=1"]
    res = got.container.linux.resources
    assert res.cpu.cpus == "0-3" and res.cpu.mems == "0"
    # An Optional* wrapper holding 0 is present; an untouched one is not.
    assert res.memory.HasField("limit") and res.memory.limit.value == 0
    assert not res.cpu.HasField("shares")


def test_field_numbers_of_section_2_6():
    nri = pb().nri
    assert number(nri.Container, "linux") == 11
    assert number(nri.Container, "env") == 8
    assert number(nri.LinuxContainer, "resources") == 3
    assert number(nri.LinuxResources, "memory") == 1
    assert number(nri.LinuxResources, "cpu") == 2
    assert number(nri.LinuxCPU, "cpus") == 6
    assert number(nri.LinuxCPU, "mems") == 7
    assert number(nri.ContainerAdjustment, "linux") == 6
    assert 1 not in nri.ContainerAdjustment.DESCRIPTOR.fields_by_number
    assert number(nri.LinuxContainerAdjustment, "resources") == 2
    assert number(nri.ContainerUpdate, "linux") == 2
    assert number(nri.LinuxContainerUpdate, "resources") == 1
    assert number(nri.CreateContainerResponse, "adjust") == 1
    assert number(nri.ConfigureResponse, "events") == 2
    assert 1 not in nri.ConfigureResponse.DESCRIPTOR.fields_by_number
    assert nri.Event.Value("REMOVE_CONTAINER") == 11
    assert nri.Event.Value("UPDATE_POD_SANDBOX") == 12


def test_reply_field_path_bytes():
    # adjust(1).linux(6).resources(2).cpu(2).cpus(6), each level
    # length-delimited: tag = number << 3 | 2.
    nri = pb().nri
    resp = nri.CreateContainerResponse()
    resp.adjust.linux.resources.cpu.cpus = "4-7"
    assert resp.SerializeToString() == bytes(
        [0x0a, 11, 0x32, 9, 0x12, 7, 0x12, 5, 0x32, 3]) + b"4-7"


def test_register_plugin_example_of_section_2_2():
    p = pb()
    reg = p.nri.RegisterPluginRequest(plugin_name="cpu", plugin_idx="90")
    env = p.ttrpc.Request(service="nri.pkg.api.v1alpha1.Runtime",
                          method="RegisterPlugin",
                          payload=reg.SerializeToString(),
                          timeout_nano=5 * 10**9)
    data = env.SerializeToString()
    assert len(data) == 63
    frame = struct.pack(">IIBB", len(data), 1, 1, 0) + data
    trunk = struct.pack(">II", 2, len(frame)) + frame
    assert trunk[:18] == bytes.fromhex(
        "00000002" "00000049" "0000003f" "00000001" "01" "00")
    assert data[:2] == b"\x0a\x1c" and data[2:30] == \
        b"nri.pkg.api.v1alpha1.Runtime"
    assert data[30:32] == b"\x12\x0e" and data[32:46] == b"RegisterPlugin"
    assert data[46:57] == b"\x1a\x09\x0a\x03cpu\x12\x0290"
    assert data[57] == 0x20 and len(data[58:]) == 5


def test_error_response_status():
    t = pb().ttrpc
    resp = t.Response()
    resp.status.code = 12
    resp.status.message = "method Foo not implemented"
    back = t.Response()
    back.ParseFromString(resp.SerializeToString())
    assert back.HasField("status") and back.status.code == 12
    assert back.payload == b""
    # An OK reply to Empty is no bytes at all: a bare ttrpc header.
    assert t.Response(payload=b"").SerializeToString() == b""


if __name__ == "__main__":
    tap.run(globals())
