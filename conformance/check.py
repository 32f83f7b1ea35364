#!/usr/bin/env python3
"""cqlwire against the conformance corpus (cases.jsonl), no server needed.

Run with env CQLWIRE (the binary). For every case:
  - a case with a `value`: `cqlwire decode --format json` of `hex` prints `value`, and `cqlwire encode --json`
    of `value` writes `canonical` (or `hex`);
  - a case with a `literal` that is a plain literal (no function call): `cqlwire encode` of it writes `hex`
    (cqlwire reads the literal as Apache Cassandra does);
  - a case without a `value` (bytes no decoder may accept): `cqlwire decode` exits 1 with one error line;
  - a case with a `value` that the server refuses (`valid` false: wire-legal bytes Apache Cassandra refuses,
    as its recorded answer says): `cqlwire decode` still prints the value and exits 0, with one or more
    "cqlwire: warning: Apache Cassandra refuses …" lines on standard error, and `decode --strict` exits 1
    with them as "cqlwire: error: …" lines; a valid case gets no such line and `--strict` exits 0.
Prints every mismatch and exits 1 if there is any.
"""

import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CQLWIRE = os.environ["CQLWIRE"]


def load_cases(path=os.path.join(HERE, "cases.jsonl")):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def run(case, command, *args, data):
    udts = [arg for declaration in case["udts"] for arg in ("--udt", declaration)]
    return subprocess.run([CQLWIRE, command, *udts, case["type"], *args], input=data.encode(),
                          capture_output=True)


def same_json(a, b):
    """Equal JSON, numbers by value (Python writes 1e-05 where cqlwire writes 0.00001)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b) if isinstance(a, float) or isinstance(b, float) else a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    return a == b


def output(result):
    return result.stdout.decode().strip()


REFUSES = "Apache Cassandra refuses "


def refusal_problems(case, decoded):
    """What is wrong with what `decode` (already run, as `decoded`) and `decode --strict` say of bytes the
    server refuses (or of a valid case, where they must say nothing)."""
    problems = []
    refused = not case["valid"]
    lines = decoded.stderr.decode().splitlines()
    warnings = [line for line in lines if line.startswith("cqlwire: warning: " + REFUSES)]
    if refused and (not warnings or len(warnings) != len(lines)):
        problems.append(f"decode of bytes the server refuses gave no warning line each: {lines[:3]}")
    if not refused and lines:
        problems.append(f"decode of a valid case wrote to standard error: {lines[:3]}")
    strict = run(case, "decode", "--strict", data=case["hex"])
    errors = [line for line in strict.stderr.decode().splitlines() if line.startswith("cqlwire: error: " + REFUSES)]
    if refused and (strict.returncode != 1 or len(errors) != len(warnings) or not strict.stdout.strip()):
        problems.append(f"decode --strict of bytes the server refuses exited {strict.returncode} with "
                        f"{len(errors)} error lines for {len(warnings)} warnings")
    if not refused and strict.returncode != 0:
        problems.append(f"decode --strict of a valid case exited {strict.returncode}: "
                        f"{strict.stderr.decode().strip()[:200]}")
    return problems


def check(case):
    """The mismatches of one case, as lines."""
    problems = []
    if "value" in case:
        decoded = run(case, "decode", "--format", "json", data=case["hex"])
        if decoded.returncode != 0:
            problems.append(f"decode exited {decoded.returncode}: {decoded.stderr.decode().strip()}")
        elif not same_json(json.loads(decoded.stdout), case["value"]):
            problems.append(f"decode printed {output(decoded)[:200]}, expected {json.dumps(case['value'])[:200]}")
        problems += refusal_problems(case, decoded)
        encoded = run(case, "encode", "--json", data=json.dumps(case["value"], ensure_ascii=False))
        expected = "0x" + case.get("canonical", case["hex"])
        if encoded.returncode != 0:
            problems.append(f"encode --json exited {encoded.returncode}: {encoded.stderr.decode().strip()}")
        elif output(encoded) != expected:
            problems.append(f"encode --json wrote {output(encoded)[:200]}, expected {expected[:200]}")
    else:
        decoded = run(case, "decode", data=case["hex"])
        stderr = decoded.stderr.decode()
        if decoded.returncode != 1 or not stderr.startswith("cqlwire: error: ") or stderr.count("\n") != 1:
            problems.append(f"decode of invalid bytes exited {decoded.returncode}: {output(decoded)[:200]} "
                            f"{stderr.strip()[:200]}")
    literal = case.get("literal")
    if literal is not None and "blobAs" not in literal:
        encoded = run(case, "encode", data=literal)
        if encoded.returncode != 0:
            problems.append(f"encode of the literal exited {encoded.returncode}: {encoded.stderr.decode().strip()}")
        elif output(encoded) != "0x" + case["hex"]:
            problems.append(f"encode of the literal wrote {output(encoded)[:200]}, expected 0x{case['hex'][:200]}")
    return problems


def main():
    cases = load_cases()
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(check, cases))
    failures = 0
    for case, problems in zip(cases, results):
        for problem in problems:
            failures += 1
            print(f"FAIL {case['id']} ({case['type']}): {problem}")
    refused = sum(1 for case in cases if "value" in case and not case["valid"])
    print(f"conformance: {len(cases)} cases ({refused} wire-legal ones the server refuses, each flagged and "
          f"refused by --strict), {failures} mismatches between cqlwire and the corpus")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
