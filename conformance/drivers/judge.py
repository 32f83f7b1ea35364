#!/usr/bin/env python3
"""Runs a driver harness on the corpus and writes conformance/results/DRIVER.jsonl.

    python3 conformance/drivers/judge.py DRIVER [--memory MiB] -- COMMAND [ARG...]

COMMAND reads conformance/cases.jsonl on standard input and writes one raw line per case, flushed (see
python_driver.py): "unsupported", or "decode_error", or "reencoded" / "reencode_error", and optionally
"value_encoded" / "value_error". When the harness dies (a crash, or the address-space limit of --memory
reached by a driver that allocates what hostile bytes claim), the first case it did not answer is recorded
as a crash and the harness is started again on the cases after it. The verdict, the same for every driver:
  - unsupported: the driver cannot express the case's type (or, for "value_error" starting "unsupported",
    its value);
  - a valid case passes when the driver decodes `hex`, re-encodes what it decoded as `hex` (or `canonical`,
    or one of the `equivalent` forms, or these with set elements or map entries in another order — a Go map
    has no order — or with more or fewer trailing null fields in a tuple or UDT) and, where the harness
    encodes the JSON value, writes one of those;
  - an invalid case without a value passes when the driver refuses to decode it;
  - an invalid, wire-legal case (with a value) passes when the driver refuses it or re-encodes it unchanged;
  - one rule before these, the same for every driver: a case whose value the driver cannot represent is
    unsupported, never pass, and never fail for that reason alone. That is a value the harness says it
    cannot build with the driver's types ("value_error" starting "unsupported", or saying the driver has
    "no way to write" it, as every harness says of the empty value), and a value holding the empty value
    that the driver reads as its null: it re-encodes the bytes with each empty item as a null (length -1,
    or no value at the top level), or cannot re-encode what it read because it is a null. A driver that
    refuses the bytes, or reads the empty value as another value (gocql's zero), still fails.
A failure carries `detail`, and where bytes differ the first differing byte and, with env CQLWIRE set,
what `cqlwire decode --format explain` says of the driver's bytes (its last line).
Prints a one-line summary on standard error.
"""

import json
import os
import re
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.dirname(HERE)


FIXED_SIZES = {"boolean": 1, "int": 4, "float": 4, "bigint": 8, "double": 8, "timestamp": 8, "uuid": 16,
               "timeuuid": 16}


def fixed_size(tree):
    if isinstance(tree, str):
        return FIXED_SIZES.get(tree)
    if tree[0] == "vector" and fixed_size(tree[1]):
        return fixed_size(tree[1]) * tree[2]
    return None


def unordered(tree, data):
    """The value's structure with every set and map in a fixed order and the trailing null fields of tuples
    and UDTs dropped (JSON text), or None if the bytes do not parse: two encodings of a value that differ only
    in the order of set elements or map entries (which servers sort anyway) or in how many trailing null
    fields they write give the same result."""
    position = 0

    def take(n):
        nonlocal position
        if n < 0 or position + n > len(data):
            raise ValueError("truncated")
        position += n
        return data[position - n:position]

    def framed():
        n = int.from_bytes(take(4), "big", signed=True)
        return None if n < 0 else take(n)

    def vint():
        first = take(1)[0]
        extra = 8 - len(bin(first ^ 0xff)[2:].lstrip("0")) if first != 0xff else 8
        value = first & (0xff >> extra)
        for b in take(extra):
            value = value << 8 | b
        return value

    def parse(tree, chunk):
        nonlocal data, position
        if chunk is None or isinstance(tree, str):
            return None if chunk is None else chunk.hex()
        saved = data, position
        data, position = chunk, 0
        kind = tree[0]
        if kind in ("list", "set", "map"):
            count = int.from_bytes(take(4), "big", signed=True)
            if count < 0:
                raise ValueError("negative count")
            if kind == "map":
                items = sorted(json.dumps([parse(tree[1], framed()), parse(tree[2], framed())]) for _ in range(count))
            else:
                items = [json.dumps(parse(tree[1], framed())) for _ in range(count)]
                items = sorted(items) if kind == "set" else items
        elif kind == "vector":
            size = fixed_size(tree[1])
            items = [json.dumps(parse(tree[1], take(size) if size else take(vint()))) for _ in range(tree[2])]
        else:
            types = tree[1] if kind == "tuple" else [t for _, t in tree[2]]
            items = []
            while position < len(data) and len(items) < len(types):
                items.append(json.dumps(parse(types[len(items)], framed())))
            while items and items[-1] == "null":  # missing trailing fields are null fields
                items.pop()
        if position != len(data):
            raise ValueError("trailing bytes")
        data, position = saved
        return items

    try:
        return json.dumps(parse(tree, data))
    except (ValueError, IndexError):
        return None


class Cursor:
    """Bytes read from the front, never past their end."""

    def __init__(self, data):
        self.data, self.position = data, 0

    def take(self, n):
        if n < 0 or self.position + n > len(self.data):
            raise ValueError("truncated")
        self.position += n
        return self.data[self.position - n:self.position]

    def done(self):
        return self.position == len(self.data)


def sorted_collections(tree, data):
    """The bytes with every map's entries (by their keys) and every set's elements sorted by their bytes,
    or the bytes as they are if they do not parse: a Go map has no order, so a failure shows the driver's
    bytes in this one order, the same on every run."""

    def framed(tree, cursor):
        """The framed value's bytes, its length first, and (to sort on) its contents."""
        length = cursor.take(4)
        n = int.from_bytes(length, "big", signed=True)
        contents = b"" if n < 0 else rewrite(tree, cursor.take(n))
        return length + contents, contents

    def rewrite(tree, chunk):
        if isinstance(tree, str) or tree[0] not in ("list", "set", "map", "tuple", "udt"):
            return chunk
        cursor = Cursor(chunk)
        kind = tree[0]
        if kind in ("list", "set", "map"):
            count_bytes = cursor.take(4)
            count = int.from_bytes(count_bytes, "big", signed=True)
            if count < 0:
                raise ValueError("negative count")
            items = []
            for _ in range(count):
                key, key_contents = framed(tree[1], cursor)
                items.append((key_contents, key + (framed(tree[2], cursor)[0] if kind == "map" else b"")))
            if kind != "list":
                items.sort()
            out = count_bytes + b"".join(item for _, item in items)
        else:
            types = tree[1] if kind == "tuple" else [t for _, t in tree[2]]
            fields = []
            while not cursor.done() and len(fields) < len(types):
                fields.append(framed(types[len(fields)], cursor)[0])
            out = b"".join(fields)
        if not cursor.done():
            raise ValueError("trailing bytes")
        return out

    try:
        return rewrite(tree, data)
    except (ValueError, IndexError):
        return data


def first_difference(got, expected):
    for i, (a, b) in enumerate(zip(got, expected)):
        if a != b:
            return i // 2
    return min(len(got), len(expected)) // 2


def explain(case, data_hex):
    cqlwire = os.environ.get("CQLWIRE")
    if not cqlwire:
        return None
    udts = [arg for declaration in case["udts"] for arg in ("--udt", declaration)]
    result = subprocess.run([cqlwire, "decode", "--format", "explain", *udts, case["type"]],
                            input=data_hex.encode(), capture_output=True)
    lines = (result.stdout.decode() + result.stderr.decode()).strip().splitlines()
    return lines[-1][:300] if lines else None


def bytes_failure(case, what, got):
    expected = case.get("canonical", case["hex"]) if what == "value_encoded" else case["hex"]
    got = sorted_collections(case["type_tree"], bytes.fromhex(got)).hex()
    offset = first_difference(got, expected)
    verdict = {"status": "fail", "check": what,
               "detail": f"{'re-encoded' if what == 'reencoded' else 'encoded the value'} as {len(got) // 2} "
                         f"bytes, expected {len(expected) // 2}; first difference at byte {offset}",
               "got": got[:400], "expected": expected[:400]}
    explanation = explain(case, got)
    if explanation:
        verdict["explain"] = explanation
    return verdict


EMPTY = {"$empty": True}
NO_EMPTY_VALUE = {"ascii", "blob", "text", "varchar"}  # their zero bytes are '' and 0x, not the empty value


def holds_empty(value):
    if value == EMPTY:
        return True
    if isinstance(value, list):
        return any(holds_empty(x) for x in value)
    if isinstance(value, dict):
        return any(holds_empty(x) for x in value.values())
    return False


def empty_as_null(tree, data):
    """The bytes with every empty item of a collection, tuple or UDT (a zero-length native value of a type
    that has the empty value) written as a null (length -1) instead: what a driver that reads the empty value
    as its null writes back. None for an empty value at the top level (a null has no bytes there), or if the
    bytes do not parse."""
    def framed(tree, cursor):
        length = cursor.take(4)
        n = int.from_bytes(length, "big", signed=True)
        if n < 0:
            return length
        if n == 0 and isinstance(tree, str) and tree not in NO_EMPTY_VALUE:
            return b"\xff\xff\xff\xff"
        return n.to_bytes(4, "big", signed=True) if n == 0 else length + rewrite(tree, cursor.take(n))

    def rewrite(tree, chunk):
        if isinstance(tree, str) or tree[0] == "vector":
            return chunk  # a vector's elements are never empty
        cursor = Cursor(chunk)
        kind = tree[0]
        if kind in ("list", "set", "map"):
            count_bytes = cursor.take(4)
            count = int.from_bytes(count_bytes, "big", signed=True)
            if count < 0:
                raise ValueError("negative count")
            types = [tree[1], tree[2]] if kind == "map" else [tree[1]]
            out = count_bytes + b"".join(framed(t, cursor) for _ in range(count) for t in types)
        else:
            types = tree[1] if kind == "tuple" else [t for _, t in tree[2]]
            fields = []
            while not cursor.done() and len(fields) < len(types):
                fields.append(framed(types[len(fields)], cursor))
            out = b"".join(fields)
        if not cursor.done():
            raise ValueError("trailing bytes")
        return out

    if not data:
        return None
    try:
        return rewrite(tree, data).hex()
    except (ValueError, IndexError):
        return None


def unrepresentable(case, raw, accepted):
    """Why the driver cannot represent the case's value (the one rule of the header), or None."""
    value_error = raw.get("value_error", "")
    cannot_write = value_error.startswith("unsupported") or "no way to write" in value_error
    if "value" not in case or "decode_error" in raw:
        return None
    if holds_empty(case["value"]):
        reencoded, error = raw.get("reencoded"), raw.get("reencode_error", "")
        as_null = empty_as_null(case["type_tree"], bytes.fromhex(case["hex"]))
        if "reencoded" in raw and reencoded == as_null:
            return "reads the empty value as null and writes a null back (" + raw.get("decoded", "?")[:80] + ")"
        if error and re.search(r"\bnull\b|\bNone\b|\bnil\b", error):
            return "reads the empty value as null and cannot write it back: " + error[:150]
        if reencoded == "" and case["hex"] == "" and raw.get("decoded") in ("None", "null", "<nil>"):
            return "reads the empty value as null (" + raw["decoded"] + "); its null re-encodes as zero bytes"
        if cannot_write and (reencoded in accepted or same_but_order(case, reencoded or "")):
            return ("re-encodes the bytes it read unchanged, read as " + raw.get("decoded", "?")[:80]
                    + ", but cannot write the value: " + value_error[:120])
        return None
    if cannot_write and (raw.get("reencoded") in accepted or same_but_order(case, raw.get("reencoded", ""))):
        return "decoded and re-encoded; the value cannot be expressed: " + value_error[:200]
    return None


def judge(case, raw):
    if "crash" in raw:
        return {"status": "fail", "check": "decode", "detail": raw["crash"][:300]}
    if "unsupported" in raw:
        return {"status": "unsupported", "detail": raw["unsupported"][:300]}
    accepted = {case["hex"], case.get("canonical", case["hex"]), *case.get("equivalent", [])}
    why = unrepresentable(case, raw, accepted)
    if why:
        return {"status": "unsupported", "detail": why}
    if not case["valid"]:
        if "decode_error" in raw:
            return {"status": "pass", "detail": "refused: " + raw["decode_error"][:200]}
        if "value" in case and raw.get("reencoded") == case["hex"]:
            return {"status": "pass", "detail": "read and re-encoded unchanged"}
        if "value" in case:
            if "reencoded" in raw:
                verdict = bytes_failure(case, "reencoded", raw["reencoded"])
                verdict["detail"] = ("read wire-legal bytes Cassandra refuses as " + raw.get("decoded", "?")[:100]
                                     + ", and " + verdict["detail"])
                return verdict
            return {"status": "fail", "check": "reencoded", "detail": raw.get("reencode_error", "?")[:300]}
        return {"status": "fail", "check": "decode",
                "detail": "accepted invalid bytes, read as " + raw.get("decoded", "?")[:200]}
    if "decode_error" in raw:
        return {"status": "fail", "check": "decode", "detail": "refused valid bytes: " + raw["decode_error"][:300]}
    if "reencode_error" in raw:
        return {"status": "fail", "check": "reencoded",
                "detail": "could not re-encode what it decoded: " + raw["reencode_error"][:300]}
    if raw.get("reencoded") not in accepted:
        if not same_but_order(case, raw.get("reencoded", "")):
            return bytes_failure(case, "reencoded", raw.get("reencoded", ""))
    if "value_error" in raw:
        return {"status": "fail", "check": "value_encoded", "detail": "could not encode the value: "
                                                                     + raw["value_error"][:300]}
    if "value_encoded" in raw and raw["value_encoded"] not in accepted:
        if not same_but_order(case, raw["value_encoded"]):
            return bytes_failure(case, "value_encoded", raw["value_encoded"])
    # No detail for an order that differs: a Go map's order changes from run to run.
    return {"status": "pass"}


def same_but_order(case, got):
    ours = unordered(case["type_tree"], bytes.fromhex(got))
    return ours is not None and ours == unordered(case["type_tree"], bytes.fromhex(case["hex"]))


def crash_reason(stderr):
    """Why a harness died, in words that do not depend on the machine: ": out of memory" when it ran out of
    address space (how many bytes it held by then depends on the machine's core count), else its first line
    of standard error with every number replaced by N."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    if not lines:
        return ""
    if any(re.search(r"out of memory|memory allocation of|cannot allocate memory", line, re.I) for line in lines):
        return ": out of memory"
    return ": " + re.sub(r"[0-9]+", "N", lines[0][:200])


def run_harness(command, cases, memory):
    """The raw line of every case, restarting the harness after a case it dies on."""
    def limit():
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory << 20, memory << 20))

    raws = {}
    remaining = cases
    while remaining:
        data = "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in remaining).encode()
        result = subprocess.run(command, input=data, capture_output=True, preexec_fn=limit)
        for line in result.stdout.decode(errors="replace").splitlines():
            try:
                raw = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash
            raws[raw["case"]] = raw
        unanswered = [i for i, case in enumerate(remaining) if case["id"] not in raws]
        if not unanswered:
            break
        first = remaining[unanswered[0]]
        why = (f"killed by signal {-result.returncode}" if result.returncode < 0
               else f"exit status {result.returncode}")
        raws[first["id"]] = {"case": first["id"],
                             "crash": f"the driver's process died on these bytes ({why}{crash_reason(result.stderr)})"}
        remaining = remaining[unanswered[0] + 1:]
    return raws


def main():
    args = sys.argv[1:]
    if "--" not in args:
        sys.exit("usage: judge.py DRIVER [--memory MiB] -- COMMAND [ARG...]")
    split = args.index("--")
    options, command = args[:split], args[split + 1:]
    driver = options[0]
    memory = int(options[options.index("--memory") + 1]) if "--memory" in options else 0
    with open(os.path.join(CONFORMANCE, "cases.jsonl"), encoding="utf-8") as f:
        cases = [json.loads(line) for line in f]
    raws = run_harness(command, cases, memory)
    counts = {}
    os.makedirs(os.path.join(CONFORMANCE, "results"), exist_ok=True)
    with open(os.path.join(CONFORMANCE, "results", driver + ".jsonl"), "w", encoding="utf-8", newline="\n") as out:
        for case in cases:
            raw = raws.get(case["id"])
            verdict = judge(case, raw) if raw else {"status": "fail", "detail": "no answer from the harness"}
            entry = {"case": case["id"], "status": verdict.pop("status")}
            if raw and raw.get("driver"):
                entry["driver"] = raw["driver"]
            entry.update(verdict)
            counts[entry["status"]] = counts.get(entry["status"], 0) + 1
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    drivers = sorted({raw["driver"] for raw in raws.values() if raw.get("driver")})
    print(f"{driver} ({', '.join(drivers)}): "
          + ", ".join(f"{counts.get(s, 0)} {s}" for s in ("pass", "fail", "unsupported")), file=sys.stderr)


if __name__ == "__main__":
    main()
