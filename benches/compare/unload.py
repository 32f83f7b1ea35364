#!/usr/bin/env python3
"""Reads the same Cassandra table with `cqlwire unload` and its peers, alternately, and prints a Markdown
table of medians.

    python3 benches/compare/unload.py [--rows 100000] [--rounds 3] [--peers cqlwire,python,rust-driver,java-driver,cqlsh]

The server is the single-node Apache Cassandra 5.0 of fixtures/inspect/cassandra.sh on CASSANDRA_ADDRESS
(default 127.0.0.1): one already running there is used as it is, else one is started (and stopped by its pid
at the end). The table `cqlwire_bench.embeddings (id bigint PRIMARY KEY, emb vector<float, 768>)` is filled
once with `cqlwire load` from the Parquet file of load.py (`--rows` × 768 float32, seeded, norm 1).

Peers (`--peers`, comma-separated, default all):
  python       the Python driver paging (fetch size 5,000) into NumPy, written to Parquet with pyarrow
               (unload_python.py)
  rust-driver  the scylla crate alone paging (5,000 rows a page), rows as (i64, Vec<f32>), no output
               (crates/client/examples/bench_unload_driver.rs)
  java-driver  the Java driver 4.17 paging (5,000 rows a page), getLong and getVector of each row, no
               output (UnloadJavaDriver.java, compiled with javac; it fails unless it read every row)
  cqlsh        cqlsh (PyPI) COPY TO a CSV, its default options
  cqlwire      `cqlwire unload -o FILE.parquet` (release build), its defaults
In every round each peer runs once, in an order rotated round by round, after the server's CPU has settled.
The Parquet outputs (cqlwire, python) must hold every row once with the input's bytes (an order-free
checksum of (id, big-endian float32 bytes)); cqlsh's CSV must have one line per row. Per run: wall time, the
client's CPU time (user + system) and peak RSS from GNU time, the server's CPU time from /proc/PID/stat.
Progress goes to standard error, the table to standard output.
"""

import argparse
import os
import statistics
import subprocess
import sys

import run  # noqa: E402 (the comparison venv and GNU time are set up as run.py does)
import load  # noqa: E402 (the data, the server and the measurements of the load comparison)

ROOT = run.ROOT
HERE = run.HERE
DATA = load.DATA
ADDRESS = os.environ.get("CASSANDRA_ADDRESS", "127.0.0.1")
TABLE = f"{load.KEYSPACE}.{load.TABLE}"
PAGE = 5000
PEERS = ("python", "rust-driver", "java-driver", "cqlsh", "cqlwire")
LABELS = {
    "python": "Python driver, paging (5,000) into NumPy → Parquet",
    "rust-driver": "scylla crate alone, paging (5,000), (i64, Vec<f32>)",
    "java-driver": f"Java driver {load.JAVA_DRIVER}, paging (5,000), getLong + getVector",
    "cqlsh": "cqlsh COPY TO CSV (defaults)",
    "cqlwire": "cqlwire unload → Parquet (defaults)",
}


def parquet_digest(path):
    """(rows, distinct ids, order-free checksum of (id, big-endian float32 bytes)) of a Parquet output."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    rows, ids, total = 0, set(), 0
    for group in range(file.num_row_groups):
        table = file.read_row_group(group)
        emb = table.column("emb").combine_chunks()
        matrix = emb.values.to_numpy().reshape(len(emb), load.DIMENSION).astype(">f4")
        for row_id, row in zip(table.column("id").to_pylist(), matrix):
            total += load.row_digest(row_id, row.tobytes())
            ids.add(row_id)
            rows += 1
    return rows, len(ids), total % 2**64


def input_digest(parquet):
    total, rows = 0, 0
    for ids, matrix in load.row_groups(parquet):
        for row_id, row in zip(ids.tolist(), matrix.astype(">f4")):
            total += load.row_digest(row_id, row.tobytes())
            rows += 1
    return rows, rows, total % 2**64


def commands(peers, out, rows):
    binary = run.TARGET / "release" / "cqlwire"
    result = {}
    for peer in peers:
        if peer == "python":
            result[peer] = [sys.executable, str(HERE / "unload_python.py"), ADDRESS, TABLE, str(PAGE),
                            str(out / "python.parquet")]
        elif peer == "rust-driver":
            subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "cqlwire-client", "--example",
                            "bench_unload_driver"], cwd=ROOT, check=True)
            result[peer] = [str(run.TARGET / "release" / "examples" / "bench_unload_driver"), f"{ADDRESS}:9042",
                            TABLE, str(PAGE)]
        elif peer == "java-driver":
            result[peer] = ["java", "-cp", load.java_classpath("UnloadJavaDriver.java"), "UnloadJavaDriver",
                            ADDRESS, "9042", TABLE, str(PAGE), str(rows)]
        elif peer == "cqlsh":
            result[peer] = [str(run.VENV / "bin" / "cqlsh"), ADDRESS, "9042", "-e",
                            f"COPY {TABLE} (id, emb) TO '{out / 'cqlsh.csv'}'"]
        elif peer == "cqlwire":
            result[peer] = [str(binary), "unload", "--hosts", ADDRESS, "--table", TABLE, "-o",
                            str(out / "cqlwire.parquet")]
        else:
            raise SystemExit(f"unknown peer {peer!r}: one of {', '.join(PEERS)}")
    return result


def check(peer, out, expected):
    if peer in ("python", "cqlwire"):
        got = parquet_digest(out / f"{peer}.parquet")
        if got != expected:
            raise SystemExit(f"{peer}: output {got} (rows, distinct ids, checksum), the input {expected}")
    elif peer == "cqlsh":
        with open(out / "cqlsh.csv") as csv:
            lines = sum(1 for _ in csv)
        if lines != expected[0]:
            raise SystemExit(f"cqlsh: {lines} lines, not {expected[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peers", default=",".join(PEERS))
    args = parser.parse_args()
    run.ensure_venv(__file__)
    run.ensure_gnu_time()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "cqlwire"], cwd=ROOT, check=True)
    load.HOST = ADDRESS
    peers = [p for p in args.peers.split(",") if p]
    parquet = load.write_parquet(args.rows, 10_000)
    expected = input_digest(parquet)
    out = DATA / "unload"
    out.mkdir(parents=True, exist_ok=True)
    peer_commands = commands(peers, out, args.rows)
    started_here = not load.server_running()
    pid = load.start_server() if started_here else [load.node_pid(ADDRESS)]
    results = {peer: [] for peer in peers}
    try:
        cluster, session = load.connect()
        load.create_table(session)
        loading = [str(run.TARGET / "release" / "cqlwire"), "load", str(parquet), "--hosts", ADDRESS, "--table",
                   TABLE, "--quiet"]
        # (No COUNT(*): it fails on a small heap; every output is checked against the input instead.)
        subprocess.run(loading, check=True)
        for round_ in range(args.rounds):
            order = peers[round_ % len(peers):] + peers[:round_ % len(peers)]
            print(f"round {round_ + 1} of {args.rounds}", file=sys.stderr, flush=True)
            for peer in order:
                load.settle(pid)
                before = load.cpu_seconds(pid)
                wall, client, rss, output = load.timed(peer_commands[peer])
                server = load.cpu_seconds(pid) - before
                check(peer, out, expected)
                print(f"{peer:12} {args.rows / wall:8.0f} rows/s  {wall:6.1f} s  client CPU {client:6.1f} s  "
                      f"server CPU {server:6.1f} s  RSS {rss:7.1f} MiB  load average {os.getloadavg()[0]:.1f}",
                      file=sys.stderr, flush=True)
                results[peer].append({"wall": wall, "client": client, "server": server, "rss": rss})
        cluster.shutdown()
    finally:
        if started_here:
            load.stop_server()
    per_100k = 100_000 / args.rows
    medians = {peer: {key: statistics.median(r[key] for r in runs) for key in ("wall", "client", "server", "rss")}
               for peer, runs in results.items()}
    base = medians.get("python")
    print(f"\nMachine: {run.cpu_name()}, {os.cpu_count()} cores; Apache Cassandra 5.0.9 on the same machine; "
          f"{args.rows} rows × vector<float, {load.DIMENSION}>, medians of {args.rounds} rounds\n")
    print("| reader | rows/s | MB/s | client CPU per 100k rows | server CPU per 100k rows | peak RSS "
          "| rows/s vs Python driver | client CPU vs Python driver |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for peer, m in medians.items():
        rate = args.rows / m["wall"]
        versus = (f"{rate / (args.rows / base['wall']):.2f}×", f"{m['client'] / base['client']:.3f}×") if base \
            else ("—", "—")
        print(f"| {LABELS[peer]} | {rate:,.0f} | {rate * load.ROW_BYTES / 1e6:.1f} | {m['client'] * per_100k:.1f} s "
              f"| {m['server'] * per_100k:.1f} s | {m['rss']:.0f} MiB | {versus[0]} | {versus[1]} |")


if __name__ == "__main__":
    main()
