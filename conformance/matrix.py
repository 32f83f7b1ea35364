#!/usr/bin/env python3
"""Writes the driver matrix of docs/conformance.md from conformance/results/*.jsonl.

Replaces the text between the `<!-- matrix -->` and `<!-- /matrix -->` lines: per driver and case family
the pass / fail / unsupported counts, then each driver's failures grouped by what went wrong (check and
message with numbers and values left out), with a count and a first case. Deterministic.
"""

import collections
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "docs", "conformance.md")
FAMILIES = ["native", "collection", "collection-nested", "tuple", "udt", "vector", "vector-nested"]
NATIVES = ["ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "duration", "float", "inet",
           "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "uuid", "varchar", "varint"]
ORDER = ["python-driver", "scylla-driver", "java-driver", "node-driver", "gocql", "scylla-rust"]


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def kind(detail, case, mask=True):
    """A failure message without its values (`mask`: numbers and type names left out): what to group by.
    For bytes a driver should have refused, or wire-legal bytes it changed, the case's note says what the
    bytes are."""
    if detail.startswith(("accepted invalid bytes", "read wire-legal bytes")):
        note = case.get("note", "").split(";")[0]
        if mask:
            note = re.sub(r"<[^>]*>+", "<…>", note)
        note = re.sub(r"\s*\(.*?\)", "", note).split(", ")[0]
        if mask:
            note = re.sub(r"^(" + "|".join(NATIVES) + r")\b:?", "T", note)
            note = re.sub(r"(?<![\w-])\d+", "#", note)
        what = "accepted invalid bytes" if detail.startswith("accepted") else "changed wire-legal bytes"
        return f"{what}: {note}"
    text = re.split(r", read as | as \d+ bytes|: \(|got |observed ", detail)[0]
    if mask:
        text = re.sub(r"0x[0-9a-f]+|\d+", "#", text)
    return text[:110].rstrip()


def main():
    cases = {case["id"]: case for case in load(os.path.join(HERE, "cases.jsonl"))}
    results = {os.path.basename(p)[:-6]: load(p) for p in glob.glob(os.path.join(HERE, "results", "*.jsonl"))}
    drivers = [d for d in ORDER if d in results] + sorted(d for d in results if d not in ORDER)
    lines = ["| driver | " + " | ".join(FAMILIES) + " | all |", "|---" * (len(FAMILIES) + 2) + "|"]
    for driver in drivers:
        counts = collections.defaultdict(collections.Counter)
        for entry in results[driver]:
            family = cases[entry["case"]]["family"]
            counts[family][entry["status"]] += 1
            counts["all"][entry["status"]] += 1
        cells = [f"{c['pass']} / {c['fail']} / {c['unsupported']}" for c in (counts[f] for f in FAMILIES + ["all"])]
        lines.append(f"| {driver} | " + " | ".join(cells) + " |")
    lines += ["", "Cells: pass / fail / unsupported.", ""]
    for driver in drivers:
        groups = collections.OrderedDict()
        for entry in results[driver]:
            if entry["status"] != "fail":
                continue
            case = cases[entry["case"]]
            key = (entry.get("check", ""), kind(entry["detail"], case))
            groups.setdefault(key, []).append((case, entry))
        versions = sorted({e.get("driver") for e in results[driver] if e.get("driver")})
        lines.append(f"### {driver}" + (f" ({', '.join(versions)})" if versions else ""))
        lines.append("")
        if not groups:
            lines += ["No failure.", ""]
            continue
        lines += ["| cases | check | what went wrong | first case |", "|---|---|---|---|"]
        for (check, what), members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            case, entry = members[0]
            # A group whose members all say the same shows it with its numbers.
            plain = {kind(e["detail"], c, mask=False) for c, e in members}
            what = plain.pop() if len(plain) == 1 else what
            types = sorted({c["type"] for c, _ in members})
            shown = ", ".join(f"`{t}`" for t in types[:4]) + (", …" if len(types) > 4 else "")
            what = what.replace("|", "\\|")
            lines.append(f"| {len(members)} | {check} | {what} ({shown}) | `{case['id']}` |")
        lines.append("")
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    start, end = text.index("<!-- matrix -->\n"), text.index("<!-- /matrix -->")
    text = text[:start] + "<!-- matrix -->\n" + "\n".join(lines) + "\n" + text[end:]
    with open(DOC, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"docs/conformance.md: the matrix of {len(drivers)} drivers")


if __name__ == "__main__":
    main()
