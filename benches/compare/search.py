#!/usr/bin/env python3
"""Runs the same ANN queries on the same Cassandra table with `cqlwire search` and its peers,
alternately, and prints a Markdown table of medians; `--exact` instead times brute-force ground
truth against NumPy.

    python3 benches/compare/search.py [--rows 10000] [--queries 1000] [--rounds 3] [--peers …]
                                      [--server-cpus LIST --client-cpus LIST]
    python3 benches/compare/search.py --exact [--train 100000] [--queries 1000] [--rounds 3]
    python3 benches/compare/search.py --index-order [--order-rows 100000] [--rounds 1]

The server is a single-node Apache Cassandra 5.0 started (and, at the end, stopped by its pid) by
fixtures/inspect/cassandra.sh on CASSANDRA_ADDRESS (default 127.0.0.1), no login (one already
running there is used and left running). The data: `--rows`
× 768 float32 (seeded, each row of norm 1: load.py's rows) loaded by `cqlwire load` into
`cqlwire_bench.ann (id bigint PRIMARY KEY, emb vector<float, 768>)`, then a cosine SAI vector index
built (its build time is reported); `--queries` query vectors from the same generator with other
seeds. Every peer runs the same prepared `SELECT id FROM cqlwire_bench.ann ORDER BY emb ANN OF ?
LIMIT 10` at LOCAL_ONE (the drivers' default, the scylla crate's set) over every query, at
concurrency 1 and 16:
  python        the Python driver's execute_concurrent_with_args, float lists (search_python.py)
  java-driver   the Java driver 4.17, executeAsync + semaphore (SearchJavaDriver.java)
  rust-driver   the scylla crate alone binding Vec<f32> (crates/client/examples/bench_search_driver.rs)
  cqlwire       `cqlwire search` (release build), --format json --results
Each round runs every peer once per concurrency, in an order rotated round by round, after the
server's CPU has settled; unmeasured runs of cqlwire and the Python driver warm the server first.
Every peer's answers (ids per query) must equal cqlwire's: the recall shown (against NumPy's exact
cosine neighbours) is then the same for all. Client CPU per 1,000 queries: for cqlwire and the scylla
crate the whole process (GNU time: start, reading the queries and connecting included); for the
Python and Java drivers the process CPU of the queries alone, as they report it (their interpreter
or JVM start excluded, in their favour). Server CPU from /proc/PID/stat over each run.
`--server-cpus 0,1 --client-cpus 2` pins every thread of the server and each measured peer to those
CPUs (taskset's lists), so that on a machine with enough cores the clients do not share the
server's.

`--index-order`: which order is faster on a fresh table of `--order-rows` × 128 float32 rows (seeded,
norm 1): `load` then CREATE INDEX (the wait until the index answers is its build), or CREATE INDEX
then `load` (CASSANDRA-21644 refusals on 5.0.9 retried by `load` at a narrower window); each order
`--rounds` times, alternating; reports load seconds, index wait, total, and recall@10 of 1,000
queries against `--exact` ground truth (the same for both orders if the index is the same).

`--exact`: `--train` × 768 training rows and `--queries` queries as .npy; the Rust brute force that
`cqlwire search --exact` runs (crates/client/examples/bench_exact.rs: reading the training file
included) against NumPy (np.load, a BLAS float32 matrix product of normalised rows, argpartition,
then the k best sorted), k = 10 cosine, alternating, medians; the answers compared.
"""

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

import load  # noqa: E402 (load.py's rows, server control and timing)
import run  # noqa: E402

HERE = run.HERE
ROOT = run.ROOT
DATA = ROOT / "bench-data" / "search"
HOST, PORT = os.environ.get("CASSANDRA_ADDRESS", "127.0.0.1"), 9042
KEYSPACE, TABLE = "cqlwire_bench", "ann"
DIMENSION, K = 768, 10
PEERS = ("python", "java-driver", "rust-driver", "cqlwire")
CONCURRENCIES = (1, 16)
LABELS = {
    "python": "Python driver, execute_concurrent_with_args, float lists",
    "java-driver": f"Java driver {load.JAVA_DRIVER}, executeAsync + semaphore",
    "rust-driver": "scylla crate alone, Vec<f32>",
    "cqlwire": "cqlwire search",
}
QUERY_SEED = 1 << 40  # query rows are load.embeddings rows from here on: never training rows
NUMBER = r"([\d.]+)"


def write_data(rows: int, queries: int):
    """The training rows and the queries as float32 .npy files (made once)."""
    import numpy as np

    DATA.mkdir(parents=True, exist_ok=True)
    train, query = DATA / f"train-{rows}.npy", DATA / f"queries-{queries}.npy"
    if not train.exists():
        out = np.lib.format.open_memmap(train, mode="w+", dtype="<f4", shape=(rows, DIMENSION))
        for start in range(0, rows, 10_000):
            out[start:min(rows, start + 10_000)] = load.embeddings(start, min(rows, start + 10_000))
        out.flush()
        del out
    if not query.exists():
        np.save(query, load.embeddings(QUERY_SEED, QUERY_SEED + queries).astype("<f4"))
    return train, query


def numpy_neighbours(train, queries, k: int):
    """NumPy's exact cosine neighbours: BLAS product of normalised rows, argpartition, sort."""
    import numpy as np

    t, q = np.load(train), np.load(queries)
    t = t / np.linalg.norm(t, axis=1, keepdims=True)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    scores = q @ t.T
    best = np.argpartition(-scores, k, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, best, axis=1), axis=1, kind="stable")
    return np.take_along_axis(best, order, axis=1)


def answers(path: pathlib.Path):
    return [[int(i) for i in line.split()] for line in path.read_text().splitlines()]


def cqlwire_answers(path: pathlib.Path):
    import csv

    with open(path, newline="") as f:
        return [[int(i) for i in row["keys"].split()] for row in csv.DictReader(f)]


def recall(found, truth) -> float:
    return sum(len(set(f) & set(int(i) for i in t[:K])) / K for f, t in zip(found, truth)) / len(truth)


def commands(queries: pathlib.Path, concurrency: int, out: pathlib.Path, cpus=None):
    """Each peer's command line, under `taskset -c CPUS` when `cpus` is given."""
    table = f"{KEYSPACE}.{TABLE}"
    pin = ["taskset", "-c", cpus] if cpus else []
    return {peer: pin + command for peer, command in peer_commands(queries, concurrency, out, table).items()}


def peer_commands(queries: pathlib.Path, concurrency: int, out: pathlib.Path, table: str):
    return {
        "python": [sys.executable, str(HERE / "search_python.py"), str(queries), HOST, table, str(K),
                   str(concurrency), str(out)],
        "java-driver": ["java", "-cp", java_classpath(), "SearchJavaDriver", str(queries), HOST, str(PORT), table,
                        str(K), str(concurrency), str(out)],
        "rust-driver": [str(run.TARGET / "release" / "examples" / "bench_search_driver"), str(queries),
                        f"{HOST}:{PORT}", table, str(K), str(concurrency), str(out)],
        "cqlwire": [str(run.BINARY), "search", str(queries), "--hosts", f"{HOST}:{PORT}", "--table", table,
                    "--k", str(K), "--concurrency", str(concurrency), "--format", "json", "--results", str(out),
                    "--quiet"],
    }


_CLASSPATH = []


def java_classpath() -> str:
    """load.py's Java driver, with SearchJavaDriver compiled beside LoadJavaDriver."""
    if not _CLASSPATH:
        classpath = load.java_classpath()
        classes = classpath.split(":")[0]
        subprocess.run(["javac", "-d", classes, "-cp", classpath, str(HERE / "SearchJavaDriver.java")], check=True)
        _CLASSPATH.append(classpath)
    return _CLASSPATH[0]


def parse(peer: str, output: str, out: pathlib.Path, queries: int, client_cpu: float):
    """(qps, p50, p95, p99, max in ms or None, client CPU seconds, answers) of one run."""
    import json

    if peer == "cqlwire":
        summary = json.loads(output[output.index("{"):output.rindex("}") + 1])
        if summary["errors"] or summary["queries"] != queries:
            raise SystemExit(f"cqlwire search: {summary}")
        latency = summary["latency_ms"]
        return (summary["qps"], latency["p50"], latency["p95"], latency["p99"], latency["max"], client_cpu,
                cqlwire_answers(out))
    qps = float(re.search(rf"{NUMBER} qps", output).group(1))
    latency = re.search(rf"p50 {NUMBER} p95 {NUMBER} p99 {NUMBER} max {NUMBER}", output)
    percentiles = tuple(float(x) for x in latency.groups()) if latency else (None,) * 4
    cpu = re.search(rf"cpu {NUMBER} s", output)
    return (qps, *percentiles, float(cpu.group(1)) if cpu else client_cpu, answers(out))


def compare(args) -> None:
    train, queries = write_data(args.rows, args.queries)
    peers = args.peers.split(",")
    truth = numpy_neighbours(train, queries, K)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "cqlwire"], cwd=ROOT, check=True)
    if "rust-driver" in peers:
        subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "cqlwire-client", "--example",
                        "bench_search_driver"], cwd=ROOT, check=True)
    load.HOST = HOST
    load.DATA.mkdir(parents=True, exist_ok=True)
    # A server already running on the address (started by cassandra.sh) is used and left running.
    started_here = not load.server_running()
    pid = load.start_server() if started_here else [load.node_pid(HOST)]
    try:
        if args.server_cpus:
            for process in pid:  # every thread the JVM has now; later ones inherit the mask
                subprocess.run(["taskset", "-a", "-p", "-c", args.server_cpus, str(process)], check=True,
                               stdout=subprocess.DEVNULL)
        cluster, session = load.connect()
        if not args.reuse_table:
            prepare_table(session, train)
        waited = subprocess.run([str(run.BINARY), "search", str(queries), "--hosts", f"{HOST}:{PORT}", "--table",
                                 f"{KEYSPACE}.{TABLE}", "--queries", "0..1", "--wait-for-index", "3600",
                                 "--format", "json", "--quiet"], check=True, capture_output=True, text=True)
        index_wait = __import__("json").loads(waited.stdout)["index_wait_s"]
        print(f"{args.rows} rows loaded; the index answered after {index_wait:.1f} s", file=sys.stderr, flush=True)
        cluster.shutdown()
        for peer in ("cqlwire", "python"):  # warm-up, unmeasured
            load.timed(commands(queries, 16, DATA / "warm.txt")[peer])
        results = {(peer, c): [] for peer in peers for c in CONCURRENCIES}
        reference = None
        for round_number in range(args.rounds):
            for c in CONCURRENCIES:
                order = peers[round_number % len(peers):] + peers[:round_number % len(peers)]
                for peer in order:
                    load.settle(pid)
                    out = DATA / f"answers-{peer}-{c}.txt"
                    server_before = load.cpu_seconds(pid)
                    wall, client_cpu, _, output = load.timed(commands(queries, c, out, args.client_cpus)[peer])
                    server_cpu = load.cpu_seconds(pid) - server_before
                    *numbers, found = parse(peer, output, out, args.queries, client_cpu)
                    if reference is None and peer == "cqlwire":
                        reference = found
                    same = None if reference is None else sum(a == b for a, b in zip(found, reference))
                    results[(peer, c)].append((*numbers, server_cpu, recall(found, truth), same))
                    print(f"round {round_number + 1} c={c} {peer}: {numbers[0]:.1f} qps, client CPU "
                          f"{numbers[-1]:.2f} s, server CPU {server_cpu:.2f} s, same answers as cqlwire: "
                          f"{same}/{args.queries}", file=sys.stderr, flush=True)
    finally:
        if started_here:
            load.stop_server()
    print_table(results, peers, args, index_wait)


def prepare_table(session, train: pathlib.Path) -> None:
    """The table, loaded by `cqlwire load`, then its cosine vector index (loading into an indexed
    table fails on Cassandra 5.0.9, CASSANDRA-21644)."""
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{TABLE}", timeout=120)
    session.execute(f"CREATE TABLE {KEYSPACE}.{TABLE} (id bigint PRIMARY KEY, emb vector<float, {DIMENSION}>)")
    subprocess.run([str(run.BINARY), "load", str(train), "--hosts", f"{HOST}:{PORT}", "--table",
                    f"{KEYSPACE}.{TABLE}", "--row-number-column", "id", "--quiet"], check=True)
    session.execute(f"CREATE CUSTOM INDEX ON {KEYSPACE}.{TABLE}(emb) USING 'StorageAttachedIndex' "
                    "WITH OPTIONS = {'similarity_function': 'cosine'}")


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def pinned(args) -> str:
    """The CPUs the server and the peers were pinned to, as a clause of the table's caption."""
    parts = [f"{who} on CPUs {cpus}" for who, cpus in (("server", args.server_cpus), ("peers", args.client_cpus))
             if cpus]
    return "; " + ", ".join(parts) if parts else ""


def print_table(results, peers, args, index_wait) -> None:
    index = ("built before this run" if args.reuse_table
             else f"answered {index_wait:.0f} s after creation")
    print(f"\n{args.rows:,} × {DIMENSION} float32 rows (norm 1), cosine SAI index ({index}), "
          f"{args.queries:,} queries, LIMIT {K}; medians of {args.rounds} rounds; load average "
          f"{os.getloadavg()[0]:.1f} at the end{pinned(args)}.\n")
    print("| peer | concurrency | queries/s | p50 ms | p95 ms | p99 ms | max ms | client CPU s / 1k queries "
          "| server CPU s / 1k queries | recall@10 | answers = cqlwire's |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cell = lambda v, f="{:.2f}": "—" if v is None else f.format(v)  # noqa: E731
    for c in CONCURRENCIES:
        for peer in peers:
            rows = results[(peer, c)]
            qps, p50, p95, p99, top, cpu, server, rec = (median([r[i] for r in rows]) for i in range(8))
            same = min((r[8] for r in rows if r[8] is not None), default=None)
            print(f"| {LABELS[peer]} | {c} | {cell(qps, '{:.0f}')} | {cell(p50)} | {cell(p95)} | {cell(p99)} | "
                  f"{cell(top)} | {cell(cpu * 1000 / args.queries, '{:.3f}')} | "
                  f"{cell(server * 1000 / args.queries, '{:.2f}')} | {cell(rec, '{:.4f}')} | "
                  f"{'—' if same is None else f'{same}/{args.queries}'} |")
    if "cqlwire" not in peers:
        return
    # Each round runs every peer close together in time: the ratio within a round is steadier than a
    # ratio of medians when the server's speed drifts from round to round.
    print("\ncqlwire against each peer, median of the per-round ratios (queries/s: higher is better for "
          "cqlwire; client CPU per query: lower is):\n")
    print("| peer | concurrency | queries/s ratio | client CPU ratio | rounds cqlwire faster |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for c in CONCURRENCIES:
        ours = results[("cqlwire", c)]
        for peer in peers:
            if peer == "cqlwire":
                continue
            theirs = results[(peer, c)]
            qps = [a[0] / b[0] for a, b in zip(ours, theirs)]
            cpu = [a[5] / b[5] for a, b in zip(ours, theirs)]
            faster = sum(r >= 1 for r in qps)
            print(f"| {LABELS[peer]} | {c} | {median(qps):.2f}× | {median(cpu):.3f}× | {faster}/{len(qps)} |")


def exact(args) -> None:
    """--exact: the Rust brute force against NumPy, alternating."""
    train, queries = write_data(args.train, args.queries)
    load.DATA.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "cqlwire-client", "--example", "bench_exact"],
                   cwd=ROOT, check=True)
    binary = run.TARGET / "release" / "examples" / "bench_exact"
    ours, theirs, ours_cpu, theirs_cpu, same = [], [], [], [], None
    report = DATA / "time.txt"
    for _ in range(args.rounds):
        out = DATA / "exact.txt"
        result = subprocess.run([run.TIME, "-f", "%U %S", "-o", str(report), str(binary), str(train),
                                 str(queries), str(K), "cosine", str(out)], check=True, capture_output=True, text=True)
        ours.append(float(re.search(rf"in {NUMBER} s", result.stdout).group(1)))
        ours_cpu.append(sum(float(x) for x in report.read_text().split()[-2:]))
        started, cpu = time.perf_counter(), time.process_time()
        truth = numpy_neighbours(train, queries, K)
        theirs.append(time.perf_counter() - started)
        theirs_cpu.append(time.process_time() - cpu)
        found = answers(out)
        same = sum(list(map(int, t)) == f for t, f in zip(truth, found))
        print(f"cqlwire {ours[-1]:.3f} s (CPU {ours_cpu[-1]:.2f} s), NumPy {theirs[-1]:.3f} s (CPU "
              f"{theirs_cpu[-1]:.2f} s), same lists {same}/{len(found)}", file=sys.stderr, flush=True)
    load_average = os.getloadavg()[0]
    print(f"\n{args.train:,} × {DIMENSION} train, {args.queries:,} queries, k = {K}, cosine; medians of "
          f"{args.rounds} alternating rounds; load average {load_average:.1f} at the end.\n")
    print("| brute force | seconds | CPU seconds | ratio (seconds) |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| NumPy: np.load, BLAS float32 product, argpartition, sort | {statistics.median(theirs):.3f} | "
          f"{statistics.median(theirs_cpu):.2f} | 1.00 |")
    print(f"| cqlwire (`search --exact`'s code, training file read included) | {statistics.median(ours):.3f} | "
          f"{statistics.median(ours_cpu):.2f} | {statistics.median(theirs) / statistics.median(ours):.2f} × faster |")
    print(f"\nSame neighbour lists as NumPy: {same} of {args.queries} queries.")


ORDER_TABLE, ORDER_DIMENSION = "ann_order", 128


def order_data(rows: int, queries: int):
    """`rows` training and `queries` query rows × 128 float32 of norm 1 as .npy files (made once)."""
    import numpy as np

    DATA.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, count, seed in (("order-train", rows, 7), ("order-queries", queries, 8)):
        path = DATA / f"{name}-{count}.npy"
        if not path.exists():
            data = np.random.default_rng(seed).standard_normal((count, ORDER_DIMENSION), dtype=np.float32)
            data /= np.linalg.norm(data, axis=1, keepdims=True)
            np.save(path, data)
        paths.append(path)
    return paths


def index_order(args) -> None:
    """--index-order: load then index against index then load, on a fresh table each time."""
    import json

    train, queries = order_data(args.order_rows, args.queries)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "cqlwire"], cwd=ROOT, check=True)
    load.HOST = HOST
    load.DATA.mkdir(parents=True, exist_ok=True)
    started_here = not load.server_running()
    pid = load.start_server() if started_here else [load.node_pid(HOST)]
    table = f"{KEYSPACE}.{ORDER_TABLE}"
    hosts = ["--hosts", f"{HOST}:{PORT}", "--table", table]
    index = (f"CREATE CUSTOM INDEX ON {table}(emb) USING 'StorageAttachedIndex' "
             "WITH OPTIONS = {'similarity_function': 'cosine'}")
    results = {"load-then-index": [], "index-then-load": []}
    try:
        cluster, session = load.connect()
        session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        for round_number in range(args.rounds):
            orders = list(results)
            for order in orders[round_number % 2:] + orders[:round_number % 2]:
                session.execute(f"DROP TABLE IF EXISTS {table}", timeout=300)
                session.execute(f"CREATE TABLE {table} (id bigint PRIMARY KEY, emb vector<float, "
                                f"{ORDER_DIMENSION}>)", timeout=120)
                load.settle(pid)
                if order == "index-then-load":
                    session.execute(index, timeout=120)
                started = time.perf_counter()
                loaded = subprocess.run([str(run.BINARY), "load", str(train), *hosts, "--row-number-column", "id"],
                                        check=True, capture_output=True, text=True)
                load_seconds = time.perf_counter() - started
                if order == "load-then-index":
                    session.execute(index, timeout=120)
                searched = subprocess.run([str(run.BINARY), "search", str(queries), *hosts, "--exact", str(train),
                                           "--wait-for-index", "3600", "--concurrency", "16", "--format", "json",
                                           "--quiet"], check=True, capture_output=True, text=True)
                summary = json.loads(searched.stdout)
                summary_line = loaded.stderr.strip().splitlines()[-1] if loaded.stderr.strip() else ""
                results[order].append((load_seconds, summary["index_wait_s"], summary["recall"]))
                print(f"round {round_number + 1} {order}: load {load_seconds:.1f} s, index answered after "
                      f"{summary['index_wait_s']:.1f} s, recall@10 {summary['recall']:.4f}; load: {summary_line}",
                      file=sys.stderr, flush=True)
        session.execute(f"DROP TABLE IF EXISTS {table}", timeout=300)
        cluster.shutdown()
    finally:
        if started_here:
            load.stop_server()
    print(f"\n{args.order_rows:,} × {ORDER_DIMENSION} float32 rows (norm 1), cosine SAI index, {args.queries:,} "
          f"queries at concurrency 16, recall@10 against exact cosine; medians of {args.rounds} round(s).\n")
    print("| order | load s | index answered after s | total s | recall@10 |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for order, runs in results.items():
        load_s, wait_s, rec = (statistics.median(r[i] for r in runs) for i in range(3))
        print(f"| {order} | {load_s:.1f} | {wait_s:.1f} | {load_s + wait_s:.1f} | {rec:.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000, help="rows × 768 float32 in the table (default 10000)")
    parser.add_argument("--queries", type=int, default=1000, help="query vectors (default 1000)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each peer, alternating (default 3)")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, from {','.join(PEERS)}")
    parser.add_argument("--reuse-table", action="store_true",
                        help="keep the table of an earlier run (it must hold the --rows rows and the index)")
    parser.add_argument("--server-cpus", help="pin the server's threads to these CPUs (taskset list, e.g. 0,1)")
    parser.add_argument("--client-cpus", help="pin each measured peer to these CPUs (taskset list, e.g. 2,3)")
    parser.add_argument("--exact", action="store_true", help="time brute-force ground truth against NumPy")
    parser.add_argument("--train", type=int, default=100_000, help="training rows of --exact (default 100000)")
    parser.add_argument("--index-order", action="store_true",
                        help="time load-then-index against index-then-load on a fresh table")
    parser.add_argument("--order-rows", type=int, default=100_000,
                        help="rows × 128 float32 of --index-order (default 100000)")
    args = parser.parse_args()
    run.ensure_venv(__file__)
    run.ensure_gnu_time()
    if args.exact:
        exact(args)
    elif args.index_order:
        index_order(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
