#!/usr/bin/env bash
# Seeds every fuzz target's corpus (fuzz/corpus/<target>/, git-ignored) from the committed fixtures:
# type strings, driver payloads and literals, malformed payloads, LZ4 bodies and frame streams, and the
# convert inputs, TLS captures and key logs, and captures of hostile shapes made from the pcap fixtures
# by fuzz/shapes.py. Each seed file is named by the SHA-1 of its bytes, as libFuzzer names its own.
# Usage: fuzz/seed.sh   (from anywhere; needs python3)
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - <<'PY'
import hashlib, json, pathlib, re, sys

sys.path.insert(0, "fuzz")
import shapes

root = pathlib.Path(".")
corpus = root / "fuzz" / "corpus"
checks = (root / "fuzz" / "src" / "checks" / "values.rs").read_text()

def type_list(name):
    """The quoted type strings of a `const NAME: [&str; N] = [...]` list in checks/values.rs."""
    body = re.search(name + r": \[&str; \d+\] = \[(.*?)\];", checks, re.S).group(1)
    return re.findall(r'"([^"]*)"', body)

def normal(type_text):
    """A type string without spaces and frozen<...>, lowercase, to match the fixture types."""
    t = type_text.replace(" ", "").lower()
    while "frozen<" in t:
        start = t.index("frozen<")
        depth, end = 0, start + len("frozen")
        for end in range(start + len("frozen"), len(t)):
            depth += {"<": 1, ">": -1}.get(t[end], 0)
            if depth == 0:
                break
        t = t[:start] + t[start + len("frozen<"):end] + t[end + 1:]
    return t

def selector(types, type_text):
    """Index of the type in a target's list: the same type, else one with the same outer keyword."""
    wanted = normal(type_text)
    normals = [normal(t) for t in types]
    if wanted in normals:
        return normals.index(wanted)
    outer = wanted.split("<")[0]
    for i, t in enumerate(normals):
        if t.split("<")[0] == outer:
            return i
    return None

counts = {}
def seed(target, data, max_len):
    data = data[:max_len]
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / hashlib.sha1(data).hexdigest()
    if not path.exists():
        path.write_bytes(data)
        counts[target] = counts.get(target, 0) + 1

def cases(path):
    p = root / path
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()] if p.exists() else []

decoder_types = type_list("DECODER_TYPES")
literal_types = type_list("LITERAL_TYPES")
value_cases = cases("fixtures/driver/cases.jsonl") + cases("fixtures/malformed/cases.jsonl") \
    + cases("fixtures/vector/cases.jsonl")

for case in value_cases:
    type_text, udts = case["type"], case.get("udts", [])
    seed("type_parser", "\n".join(udts + [type_text]).encode(), 4096)
    if "hex" in case:
        index = selector(decoder_types, type_text)
        if index is not None:
            seed("value_decoder", bytes([index]) + bytes.fromhex(case["hex"]), 4096)
    index = selector(literal_types, type_text)
    if index is not None:
        if "cql" in case:
            seed("literal_parser", bytes([index << 1]) + case["cql"].encode(), 4096)
        if "json" in case:
            seed("literal_parser", bytes([index << 1 | 1]) + json.dumps(case["json"]).encode(), 4096)
for type_text in decoder_types + literal_types + [
    "org.apache.cassandra.db.marshal.UserType(ks,61646472,737472656574:UTF8Type,7a6970:Int32Type)",
    "FrozenType(ReversedType(SetType(TimeUUIDType)))",
    "org.apache.cassandra.db.marshal.TupleType(BytesType,DecimalType,DurationType)",
]:
    seed("type_parser", type_text.encode(), 4096)

for body in sorted((root / "fixtures/lz4/bodies").glob("*.lz4")):
    seed("lz4_body", body.read_bytes(), 65536)
for stream in sorted((root / "fixtures/lz4/frames").glob("*.bin")):
    data = stream.read_bytes()
    seed("frame_stream", data, 65536)
    seed("frame_stream", data, 2048)  # a few whole frames and a truncated one
for stream in sorted((root / "fixtures/segments").glob("*.bin")):
    data = stream.read_bytes()
    for control in (0x00, 0x40, 0xf0):  # client side, chunks of 1, 5 and 16 bytes
        seed("protocol_stream", bytes([control]) + data[:65539], 65540)
for stream in sorted((root / "fixtures/segments").glob("requests-v4-*.bin")):
    for control in (0x0a, 0x6e):  # the frames wrapped in uncompressed / LZ4 segments
        seed("protocol_stream", bytes([control]) + stream.read_bytes(), 65540)

vecs_formats = ["fvecs", "ivecs", "bvecs", "fbin", "ibin", "u8bin", "i8bin"]
for path in sorted((root / "fixtures/convert/inputs").iterdir()):
    data = path.read_bytes()
    if data.startswith(b"\x93NUMPY"):
        seed("npy_header", data, 8192)
    extension = path.suffix.lstrip(".")
    if extension in vecs_formats:
        index = vecs_formats.index(extension)
        for high_bits in (0x00, 0x18, 0x80, 0xC8):  # all rows in batches of 1 and 4, a range, a shard
            seed("vecs_readers", bytes([index | high_bits]) + data, 8192)

for path, selector in (("neighbors_cosine.ivecs", 0), ("neighbors_euclidean.npy", 1),
                       ("neighbors_euclidean.bin", 2)):
    seed("neighbors", bytes([selector]) + (root / "fixtures/search" / path).read_bytes()[:8191], 8192)

# VectorDBBench's files: ground truths (selector 0), labels (2), queries (3).
for path in sorted((root / "fixtures/bench/folder").glob("*.parquet")):
    name = path.name
    selector = 0 if name.startswith("neighbors") else 2 if name.startswith("scalar") else 3
    seed("bench_readers", bytes([selector]) + path.read_bytes(), 16384)

# Parquet (selector bit 0) and Arrow IPC inputs with text nested in lists, structs, maps and
# dictionaries, one value not UTF-8; bits 1-3 pick the batch size.
for name, parquet in (("small.parquet", 1), ("small.arrows", 0)):
    data = (root / "fixtures/damaged_text" / name).read_bytes()
    for batch_bits in (0, 2 << 1, 7 << 1):
        seed("columnar_readers", bytes([parquet | batch_bits]) + data, 16384)
for path in sorted((root / "fixtures/hdf5").glob("*.hdf5")) + [root / "fixtures/hdf5/userblock.bin"]:
    data = path.read_bytes()
    if len(data) < 16384:
        # Each dataset (low 2 bits), all rows in batches of 1 and 3, a row range, a shard.
        for selector in (0x00, 0x01, 0x02, 0x03, 0x21, 0x09, 0x0d):
            seed("hdf5_reader", bytes([selector]) + data, 16384)

for name in ("cases", "v4-none", "v5-none"):
    for line in (root / f"fixtures/messages/{name}.jsonl").read_text().splitlines():
        message = json.loads(line)
        header = bytes([(message["version"] - 3) | 0x80, message["flags"], message["opcode"]])
        seed("message_body", header + bytes.fromhex(message["body"]), 4096)

def tls_input(key_log, chunks):
    """The tls target's input (fuzz/src/tls.rs): key log length and text, then chunks of at most
    127 bytes, each behind a byte holding its direction (bit 7: server) and length."""
    out = bytearray(b"\x00") + len(key_log).to_bytes(2, "little") + key_log
    for side, data in chunks:
        for i in range(0, len(data), 127):
            piece = data[i:i + 127]
            out += bytes([(0x80 if side == "server" else 0) | len(piece)]) + piece
    return bytes(out)

tls = root / "fixtures" / "tls"
trace = json.loads((tls / "rfc8448.json").read_text())
rfc_key_log = (tls / "rfc8448.keylog").read_bytes()
seed("tls", tls_input(rfc_key_log, [(r["from"], bytes.fromhex(r["record"])) for r in trace["records"]]), 65540)
seed("tls", b"\x01" + rfc_key_log, 65540)
for capture in sorted((tls / "captures").iterdir()):
    facts = json.loads((capture / "capture.json").read_text())
    streams = {side: (capture / f"{side}.bin").read_bytes() for side in ("client", "server")}
    offsets, chunks = {"client": 0, "server": 0}, []
    for side, n in facts["order"]:
        chunks.append((side, streams[side][offsets[side]:offsets[side] + n]))
        offsets[side] += n
    key_log = (capture / "keylog").read_bytes()
    seed("tls", tls_input(key_log, chunks), 65540)  # cut at 64 KiB: the handshake and some data
    seed("tls", b"\x01" + key_log, 65540)

# inspect (fuzz/src/checks/inspect.rs): control bit 0 a capture, 1 port 9042 watched, 2 TLS decrypted with
# the key logs checks/inspect.rs includes, 3 several files of a rotated capture, 4 tight reassembly limits.
# capture (fuzz/src/capture.rs): bit 0 tight limits, bit 1 several files.
# The pcaps are cut to what -max_len (65540 for capture) holds: the handshakes and first messages.
for pcap in sorted((root / "fixtures" / "tls" / "pcaps").glob("*.pcap")):
    for control in (0b101, 0b111, 0b011):
        seed("inspect", bytes([control]) + pcap.read_bytes(), 65537)
fixtures = sorted((root / "fixtures" / "inspect").glob("*.pcap"))
for path in fixtures + sorted((root / "fixtures" / "inspect" / "hostile").glob("*.pcap")):
    pcap = shapes.Pcap(path.read_bytes())
    records = pcap.prefix(60000)
    tls = path.name.startswith("tls")
    plain = 0b111 if tls else 0b011
    files = {
        "whole": pcap.write(records),
        "snaplen": shapes.snaplen_truncated(pcap, records),
        "rst": shapes.rst_outside(pcap, records),
        "pcapng": shapes.pcapng_overrun(pcap, records),
    }
    for name, data in files.items():
        seed("inspect", bytes([plain]) + data, 65540)
        seed("inspect", bytes([plain | 0b10000]) + data, 65540)
        seed("capture", b"\x00" + data, 65540)
        seed("capture", b"\x01" + data, 65540)
    seed("inspect", bytes([plain | 0b1000]) + shapes.rotated(pcap, records), 65540)
    seed("capture", b"\x02" + shapes.rotated(pcap, records), 65540)
    if path in fixtures:
        client, server = shapes.directions(pcap, records)
        client, server = client[:30000], server[:30000]
        raw = len(client).to_bytes(2, "little") + client + server
        seed("inspect", bytes([0b100 if tls else 0]) + raw, 65540)
for path in sorted((root / "fixtures" / "fuzz-regressions" / "inspect").iterdir()):
    seed("inspect", path.read_bytes(), 131072)
for path in sorted((root / "fixtures" / "capture").glob("*/*.pcap*")):
    for control in (b"\x00", b"\x01"):
        seed("capture", control + path.read_bytes(), 65540)

for target, count in sorted(counts.items()):
    print(f"{target}: {count} seeds")
PY
