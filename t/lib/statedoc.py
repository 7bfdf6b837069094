"""The daemon's saved state as a start would read it, written here from
the format (topoawared(8), FILES) and not from the daemon's code: the
snapshot state.json, then the records of journal.prev and journal with a
sequence number after the snapshot's, in order, each checked.

A record is "J <seq> <len> <crc>\\n<payload>\\n", crc being the CRC-32C of
"<seq> <len> " and the payload, as 8 lowercase hex digits; its payload is
{"event": ..., "set": {key: grant}, "del": [key]} or, for a change of the
whole state, {"event": ..., "grants": {...}}.
"""

import json
import os

_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


class Damage(Exception):
    pass


def records(data):
    """[(seq, payload bytes)] of a journal's bytes, and what follows the
    last good one: None (nothing, or NUL bytes: room the writer keeps for
    the next records), "torn" (an unfinished last record) or "damaged"
    (a bad record followed by good ones)."""
    out = []
    off = 0
    while off < len(data):
        nl = data.find(b"\n", off)
        head = data[off:nl].split(b" ") if nl >= 0 else []
        ok = (len(head) == 4 and head[0] == b"J" and head[1].isdigit() and
              head[2].isdigit() and len(head[3]) == 8)
        if ok:
            seq, n = int(head[1]), int(head[2])
            body = data[nl + 1:nl + 1 + n]
            tail = data[nl + 1 + n:nl + 2 + n]
            want = crc32c(body, crc32c(b"%d %d " % (seq, n)))
            ok = (len(body) == n and tail == b"\n" and
                  head[3] == b"%08x" % want)
        if not ok:
            if data[off:].count(0) == len(data) - off:
                break                   # the writer's room, no record
            rest = data[off + 1:]
            later = [i for i in range(len(rest)) if rest.startswith(b"\nJ ", i)]
            for i in later:
                sub = records(rest[i + 1:])[0]
                if sub:
                    return out, "damaged"
            return out, "torn"
        out.append((seq, body))
        off = nl + 2 + n
    return out, None


def records_size(path):
    """The bytes of a journal's records: its length without the NUL room
    after them."""
    with open(path, "rb") as f:
        return len(f.read().rstrip(b"\0"))


def read_state(state_dir, strict=True):
    """The state document a start would build; strict: damage raises."""
    path = os.path.join(state_dir, "state.json")
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    else:
        doc = {"version": 3, "grants": {}}
    expect = doc.get("seq", 0) + 1
    for name in ("journal.prev", "journal"):
        p = os.path.join(state_dir, name)
        if not os.path.exists(p):
            continue
        with open(p, "rb") as f:
            recs, end = records(f.read())
        if end == "damaged" and strict:
            raise Damage("%s is damaged" % p)
        for seq, body in recs:
            if seq < expect:
                continue
            if seq > expect:
                raise Damage("%s: record %d after %d" % (p, seq, expect - 1))
            rec = json.loads(body)
            if "grants" in rec:
                doc["grants"] = rec["grants"]
            else:
                doc["grants"].update(rec["set"])
                for k in rec["del"]:
                    doc["grants"].pop(k, None)
            expect += 1
    doc["seq"] = expect - 1
    return doc


def journal_events(state_dir):
    """The events of the records in journal.prev and journal, in order."""
    out = []
    for name in ("journal.prev", "journal"):
        p = os.path.join(state_dir, name)
        if os.path.exists(p):
            with open(p, "rb") as f:
                out += [(seq, json.loads(b)["event"])
                        for seq, b in records(f.read())[0]]
    return out
