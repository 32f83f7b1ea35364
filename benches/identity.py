#!/usr/bin/env python3
"""Runs every command on every fixture with two builds of cqlwire and compares what they print.

    benches/identity.py OLD/cqlwire NEW/cqlwire [COMMAND...]
    benches/identity.py OLD/cqlwire NEW/cqlwire --live HOST:PORT [COMMAND...]

(only the runs of these commands, e.g. `inspect decode`, when given). Both binaries must have the
same file name: help and usage lines print it.

Each run's standard output, standard error (its speed aside) and exit code must be byte-identical:
every command's help; inspect (every format, statistics, filters, masked, redacted under a fixed
key, secrets shown, TLS key logs) on every capture and raw stream of fixtures/, decode (cql, json, explain) of every value case,
compress/decompress of every LZ4 fixture, convert of every convert input to every output format.
Prints the commands whose outputs differ and exits 1 when one does, else prints the count.

With --live, the commands of a live server instead: load, unload and search of the sample
dataset against tables of a keyspace `cqlwire_identity` created (and dropped at the end) through
the Python driver, one run at a time, each binary's in a directory of its own: text and JSON
summaries, the files they write, refusals, a missing table, an unreachable host. Timings are
masked (seconds, rates, qps, latencies, and retry counts, which the server's load decides); Parquet and Arrow outputs are compared by value with
pyarrow (not bytes), rejects files as sorted lines, results files without their latency column,
and after each load the table's rows as the driver reads them. A login, when the server wants
one: CQLWIRE_TEST_USER and CQLWIRE_TEST_PASSWORD. Needs cassandra-driver, numpy and pyarrow.
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


KEYSPACE = "cqlwire_identity"
SAMPLE = FIXTURES / "convert" / "sample"
# A host nothing listens on.
UNREACHABLE = "127.0.0.1:1"

# The tables of the live runs: the sample's shape (1,000 rows of 128 floats), the same with
# another column name, a dimension the sample does not have, and one without an index.
TABLES = {
    "docs": "id bigint PRIMARY KEY, emb vector<float, 128>",
    "renamed": "id bigint PRIMARY KEY, embedding vector<float, 128>",
    "narrow": "id bigint PRIMARY KEY, emb vector<float, 64>",
    "unindexed": "id bigint PRIMARY KEY, emb vector<float, 128>, note text",
}


def live_commands():
    """(argv, table to empty before each run and compare after it, files written) of each run."""
    docs, parquet, npy = f"{KEYSPACE}.docs", str(SAMPLE / "train.parquet"), str(SAMPLE / "train.npy")
    loads = [
        ([parquet, "--table", docs], "docs", []),
        ([parquet, "--table", docs, "--quiet"], "docs", []),
        ([parquet, "--table", docs, "--rows", "100..200"], "docs", []),
        ([parquet, "--table", docs, "--shard", "2/4"], "docs", []),
        ([parquet, "--table", docs, "--dry-run"], "docs", []),
        ([npy, "--table", docs, "--row-number-column", "id", "--concurrency", "4"], "docs", []),
        ([parquet, "--table", f"{KEYSPACE}.renamed", "--map", "emb=embedding"], "renamed", []),
        ([parquet, "--table", docs, "--query",
          f"INSERT INTO {docs} (id, emb) VALUES (?, ?) USING TTL 86400"], "docs", []),
        ([parquet, "--table", f"{KEYSPACE}.narrow", "--rejects", "rejects.csv"], "narrow",
         ["rejects.csv"]),
        ([parquet, "--table", docs, "--rejects", parquet], None, []),
        ([parquet, "--table", docs, "--map", "emb=nothing"], None, []),
        ([parquet, "--table", f"{KEYSPACE}.missing"], None, []),
        ([npy, "--table", docs, "--hosts", UNREACHABLE], None, []),
    ]
    for argv, table, files in loads:
        yield ["load", *argv], table, files
    unloads = [
        (["-o", "out.parquet"], ["out.parquet"]),
        (["-o", "out.arrow", "--split", "1", "--concurrency", "1"], ["out.arrow"]),
        (["-o", "out.npy", "--ids", "ids.npy"], ["out.npy", "ids.npy"]),
        (["-o", "out.fbin", "--column", "emb"], ["out.fbin"]),
        (["--format", "hex", "--quiet"], []),
        (["--format", "raw", "-o", "out.bin", "--ids", "ids.csv"], ["out.bin", "ids.csv"]),
        (["--columns", "id", "-o", "ids.parquet", "--page-rows", "7"], ["ids.parquet"]),
        (["--where", "id < 100", "-o", "some.parquet"], ["some.parquet"]),
        (["--columns", "id", "-o", "x.npy"], []),
        (["-o", "x.parquet", "--ids", "x.csv"], []),
        (["-o", "same.npy", "--ids", "same.npy"], []),
        (["--format", "npy"], []),
        (["--column", "id", "-o", "x.npy"], []),
    ]
    for argv, files in unloads:
        yield ["unload", "--table", docs, *argv], None, files
    yield ["unload", "--table", f"{KEYSPACE}.missing", "-o", "x.parquet"], None, []
    yield ["unload", "--table", f"{KEYSPACE}.unindexed", "-o", "x.npy"], None, []
    yield ["unload", "--table", docs, "-o", "x.parquet", "--hosts", UNREACHABLE], None, []
    queries = [npy, "--table", docs, "--k", "5", "--queries", "0..20"]
    searches = [
        ([*queries, "--exact", npy, "--wait-for-index", "120"], []),
        ([*queries, "--exact", npy, "--format", "json"], []),
        ([*queries, "--exact", npy, "--results", "results.csv", "--concurrency", "4",
          "--warmup", "5"], ["results.csv"]),
        ([*queries, "--column", "emb", "--key", "id", "--format", "json"], []),
        ([*queries, "--where", "id < 500", "--exact", npy], []),
        ([*queries, "--results", npy], []),
        ([*queries, "--key", "emb"], []),
        ([npy, "--table", f"{KEYSPACE}.unindexed"], []),
        ([npy, "--table", f"{KEYSPACE}.narrow"], []),
        ([npy, "--table", f"{KEYSPACE}.missing"], []),
        ([*queries, "--hosts", UNREACHABLE], []),
    ]
    for argv, files in searches:
        yield ["search", *argv], None, files


def live_run(binary: str, argv, cwd: str, hosts: str):
    """One live run, its timings masked (seconds, rates, qps, latencies and JSON fields of them)."""
    if "--hosts" in argv:
        hosts = argv[argv.index("--hosts") + 1]
        argv = [a for i, a in enumerate(argv) if "--hosts" not in argv[max(i - 1, 0):i + 1]]
    login = []
    env = dict(os.environ)
    if os.environ.get("CQLWIRE_TEST_USER"):
        login = ["--username", os.environ["CQLWIRE_TEST_USER"]]
        env["CQLWIRE_PASSWORD"] = os.environ.get("CQLWIRE_TEST_PASSWORD", "")
    done = subprocess.run(
        [binary, *argv, "--hosts", hosts, *login], cwd=cwd, stdin=subprocess.DEVNULL,
        capture_output=True, timeout=600, env=env,
    )
    number = rb"[0-9]+(\.[0-9]+)?"
    stdout, stderr = done.stdout, done.stderr
    if argv[0] == "search" and b"--format" in [a.encode() for a in argv]:
        try:
            summary = json.loads(stdout)
            for field in ("qps", "latency_ms", "index_wait_s"):
                summary.pop(field, None)
            stdout = json.dumps(summary, sort_keys=True).encode()
        except ValueError:
            pass
    for pattern in (rb"(qps +)" + number, rb"(p50 |p95 |p99 |max )" + number,
                    rb"(errors, )" + number, rb"(answered after )" + number,
                    rb"( in )" + number):
        stdout = re.sub(pattern, rb"\1<n>", stdout)
        stderr = re.sub(pattern, rb"\1<n>", stderr)
    # Rates, and retries (the server's load decides them, as it decides the timings).
    stderr = re.sub(number + rb" (rows/s|MB/s|retries)", rb"<n> \2", stderr)
    return stdout, stderr, done.returncode


def file_values(path: Path):
    """What a written file holds: Parquet and Arrow by value, rejects as sorted lines, results
    without latencies, anything else its bytes (None when absent)."""
    if not path.exists():
        return None
    if path.suffix in (".parquet", ".arrow"):
        import pyarrow.ipc
        import pyarrow.parquet

        if path.suffix == ".parquet":
            table = pyarrow.parquet.read_table(path)
        else:
            with pyarrow.ipc.open_stream(path) as stream:
                table = stream.read_all()
        return table.schema.remove_metadata(), table.to_pylist()
    lines = path.read_bytes().splitlines()
    if path.name == "rejects.csv":
        return sorted(lines)
    if path.name == "results.csv":
        return [line.split(b",", 2)[::2] for line in lines]
    return path.read_bytes()


def live(old: str, new: str, hosts: str, only) -> int:
    """The live comparison (see the module's help)."""
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    host, _, port = hosts.rpartition(":")
    auth = None
    if os.environ.get("CQLWIRE_TEST_USER"):
        auth = PlainTextAuthProvider(os.environ["CQLWIRE_TEST_USER"],
                                     os.environ.get("CQLWIRE_TEST_PASSWORD", ""))
    cluster = Cluster([host], port=int(port or 9042), auth_provider=auth)
    session = cluster.connect()
    session.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}")
    session.execute(f"CREATE KEYSPACE {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    for name, columns in TABLES.items():
        session.execute(f"CREATE TABLE {KEYSPACE}.{name} ({columns})")
    session.execute(f"CREATE CUSTOM INDEX ON {KEYSPACE}.docs (emb) USING 'StorageAttachedIndex' "
                    "WITH OPTIONS = {'similarity_function': 'euclidean'}")
    session.execute(f"CREATE CUSTOM INDEX ON {KEYSPACE}.narrow (emb) USING 'StorageAttachedIndex'")

    def rows(table):
        found = session.execute(f"SELECT * FROM {KEYSPACE}.{table}")
        return sorted(tuple(map(repr, row)) for row in found)

    commands = [case for case in live_commands() if not only or case[0][0] in only]
    differ = []
    loaded = False
    with tempfile.TemporaryDirectory() as tmp:
        for argv, table, files in commands:
            if argv[0] != "load" and not loaded:
                # What unload and search read: the sample, loaded once.
                session.execute(f"TRUNCATE {KEYSPACE}.docs")
                live_run(old, ["load", str(SAMPLE / "train.parquet"), "--table",
                               f"{KEYSPACE}.docs", "--quiet"], tmp, hosts)
                loaded = True
            outcome = []
            for side, binary in (("old", old), ("new", new)):
                cwd = Path(tmp) / side
                cwd.mkdir(exist_ok=True)
                for stale in cwd.iterdir():
                    stale.unlink()
                if table:
                    session.execute(f"TRUNCATE {KEYSPACE}.{table}")
                ran = live_run(binary, argv, str(cwd), hosts)
                written = [file_values(cwd / name) for name in files]
                outcome.append((ran, written, sorted(os.listdir(cwd)),
                                rows(table) if table else None))
            if outcome[0] != outcome[1]:
                differ.append(argv)
                if os.environ.get("IDENTITY_VERBOSE"):
                    for side in outcome:
                        print(side[0], side[2], file=sys.stderr)
            loaded = loaded and argv[0] != "load"
    session.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}")
    cluster.shutdown()
    for argv in differ:
        print("differs: cqlwire " + " ".join(argv))
    print(f"{len(commands)} live commands, {len(differ)} differ")
    return 1 if differ else 0


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
    if only[:1] == ["--live"] and len(only) >= 2:
        return live(old, new, only[1], only[2:])
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
