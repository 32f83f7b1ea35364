#!/usr/bin/env python3
"""Runs every command on every fixture with two builds of cqlwire and compares what they print.

    benches/identity.py OLD/cqlwire NEW/cqlwire [COMMAND...]

(only the runs of these commands, e.g. `inspect decode`, when given). Both binaries must have the
same file name: help and usage lines print it.

Each run's standard output, standard error (its speed aside) and exit code must be byte-identical:
every command's help; inspect (every format, statistics, filters, masked, redacted under a fixed
key, secrets shown, TLS key logs) on every capture and raw stream of fixtures/, decode (cql, json, explain) of every value case,
compress/decompress of every LZ4 fixture, convert of every convert input to every output format.
Prints the commands whose outputs differ and exits 1 when one does, else prints the count.
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def inspect_commands(key: str):
    """inspect on every capture and raw stream, in every form."""
    variants = [
        [],
        ["--format", "explain"],
        ["--format", "json"],
        ["--stats"],
        ["--stats", "--format", "json"],
        ["--redact", "--redact-key", key],
        ["--redact", "--redact-key", key, "--format", "json"],
        ["--redact", "--redact-key", key, "--format", "explain"],
        ["--redact", "--redact-key", key, "--stats"],
        ["--show-secrets", "--format", "json"],
        ["--show-secrets", "--format", "explain"],
        ["--opcode", "QUERY", "--opcode", "EXECUTE"],
        ["--opcode", "RESULT", "--format", "json"],
        ["--slower-than", "1ms"],
        ["--slower-than", "100us", "--format", "json"],
        ["--stream", "7", "--conn", "1"],
    ]
    captures = sorted(FIXTURES.rglob("*.pcap")) + sorted(FIXTURES.rglob("*.pcapng"))
    for capture in captures:
        keylogs = []
        if capture.with_suffix(".keylog").exists():
            keylogs = ["--tls-keylog", str(capture.with_suffix(".keylog"))]
        elif capture.parent.name == "pcaps":
            keylogs = [
                arg
                for log in sorted((capture.parent.parent / "captures").glob("*/keylog"))
                for arg in ("--tls-keylog", str(log))
            ]
        for variant in variants:
            yield ["inspect", str(capture), *variant]
            if keylogs:
                yield ["inspect", str(capture), *keylogs, *variant]
    raws = sorted((FIXTURES / "segments").glob("*.bin")) + sorted(
        (FIXTURES / "lz4" / "frames").glob("*.bin")
    )
    for raw in raws:
        for variant in variants[:5]:
            yield ["inspect", "--raw", str(raw), *variant]
    for capture in sorted((FIXTURES / "tls" / "captures").iterdir()):
        # The decrypted streams, and the encrypted ones (reported as TLS).
        for suffix in ("plain", "bin"):
            for variant in variants[:3]:
                yield [
                    "inspect",
                    "--client",
                    str(capture / f"client.{suffix}"),
                    "--server",
                    str(capture / f"server.{suffix}"),
                    *variant,
                ]


def decode_commands():
    """decode of every value case, in every format."""
    for name in ("driver", "vector", "malformed"):
        for line in (FIXTURES / name / "cases.jsonl").read_text().splitlines():
            case = json.loads(line)
            if "type" not in case or "hex" not in case:
                continue
            udts = [arg for udt in case.get("udts", []) for arg in ("--udt", udt)]
            for form in ("cql", "json", "explain"):
                yield ["decode", *udts, "--format", form, case["type"], case["hex"] or "-"]


def lz4_commands():
    """compress/decompress of the LZ4 fixtures, bodies and frames."""
    for body in sorted((FIXTURES / "lz4" / "bodies").iterdir()):
        yield ["decompress", str(body)]
    for payload in sorted((FIXTURES / "lz4" / "payloads").iterdir()):
        yield ["compress", str(payload)]
    for frames in sorted((FIXTURES / "lz4" / "frames").glob("*.bin")):
        yield ["decompress", "--frames", str(frames)]
        yield ["compress", "--frames", str(frames)]


def convert_commands():
    """convert of every input to every output format."""
    formats = ["raw", "framed", "hex", "npy", "parquet", "arrow"]
    inputs = sorted((FIXTURES / "convert" / "inputs").iterdir()) + sorted(
        (FIXTURES / "convert" / "sample").glob("train.*")
    )
    for source in inputs:
        if source.suffix == ".bin":
            continue
        for form in formats:
            yield ["convert", str(source), "--format", form]


def help_commands():
    """Every command's help, short and long."""
    for command in ("", "decode", "encode", "compress", "decompress", "convert", "inspect", "load"):
        for flag in ("-h", "--help"):
            yield [command, flag] if command else [flag]


def run(binary: str, argv, cwd: str):
    """Standard output, standard error and exit code of one run (stdin empty)."""
    done = subprocess.run(
        [binary, *argv], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=600
    )
    # A run's speed is the one thing that may change: `in 0.17 s (3.0 MB/s)`.
    stderr = re.sub(rb" in [0-9.]+ \S*s( \([^)]*/s\))?", b" in <time>", done.stderr)
    return done.stdout, stderr, done.returncode


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = (str(Path(b).resolve()) for b in sys.argv[1:3])
    only = sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "key"
        key.write_bytes(bytes(range(32)))
        commands = [
            *help_commands(),
            *inspect_commands(str(key)),
            *decode_commands(),
            *lz4_commands(),
            *convert_commands(),
        ]
        commands = [argv for argv in commands if not only or argv[0] in only]
        differ = []

        def compare(argv):
            return argv, run(old, argv, tmp) == run(new, argv, tmp)

        workers = max(1, (os.cpu_count() or 2))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for argv, same in pool.map(compare, commands):
                if not same:
                    differ.append(argv)
    for argv in differ:
        print("differs: cqlwire " + " ".join(argv))
    print(f"{len(commands)} commands, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
