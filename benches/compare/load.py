#!/usr/bin/env python3
"""Loads the same rows into the same Cassandra table with `cqlwire load` and its peers, alternately,
and prints a Markdown table of medians.

    python3 benches/compare/load.py [--rows 100000] [--rounds 3] [--peers python,cqlwire,...]
    python3 benches/compare/load.py --cluster [--rows 50000] [--peers python,rust-driver,cqlwire]
    python3 benches/compare/load.py --big 1000000 [--row-group 10000]

The server is a single-node Apache Cassandra 5.0 started (and, at the end, stopped by its pid) by
scripts/cassandra.sh with its minimal configuration (no login; `auto_snapshot: false`, so
that TRUNCATE between runs does not keep every earlier run on disk). The data: `--rows` × 768 float32
(seeded, each row of norm 1) in a Parquet file (`id int64`, `emb list<float>`, snappy), plus the same
rows as .npy (the Java peer) and CSV (cqlsh), under bench-data/load/. With `--cluster`, three nodes
on 127.0.0.1–3 (scripts/cassandra-cluster.sh, all on this machine) and replication factor 3: every row
is written three times, and the server CPU is that of all three; the peers are given the first node and
find the others. The table:
`cqlwire_bench.embeddings (id bigint PRIMARY KEY, emb vector<float, 768>)`, truncated before every run.

Peers (`--peers`, comma-separated, default all):
  python        the Python driver's execute_concurrent_with_args, prepared INSERT, Python float lists,
                concurrency 100 (load_python.py)
  python-numpy  the same after cqlwire.driver.install(), NumPy rows
  cqlsh         cqlsh (PyPI) COPY FROM the CSV, its default options
  rust-driver   the scylla crate alone binding Vec<f32>, concurrency 100 (crates/client/examples/bench_load_driver.rs)
  java-driver   the Java driver 4.17 (Maven Central, into ~/.cache/cqlwire-java-driver), executeAsync with a
                semaphore of 100 permits (LoadJavaDriver.java, compiled here with javac)
  cqlwire       `cqlwire load` (release build), its default adaptive concurrency
  cqlwire-100   `cqlwire load --concurrency 100`
  cqlwire-batch `cqlwire load --batch 16`: UNLOGGED batches of rows sharing their replicas (16 rows of
                768 floats: the server's 50 KiB batch_size_fail_threshold), adaptive concurrency
Before the first round, unmeasured runs of `cqlwire load` and of the Python driver warm the server up. In every round each peer
runs once, in an order rotated round by round, each run into an empty table after the server's CPU
has settled; after each run the table must hold exactly --rows rows (SELECT COUNT(*)) and a sample
of rows, read back with the Python driver as the value bytes the server holds, must equal the
input's big-endian float32 bytes. Per run: wall time and the client's CPU time (user + system, its
children included) and peak RSS from GNU time, the server's CPU time from /proc/PID/stat, the load
average; the table shows medians and ratios to the plain Python driver. Progress goes to standard
error, the table to standard output.

`--big ROWS` instead writes a ROWS-row Parquet file in row groups of `--row-group` rows, loads it
once with `cqlwire load` under GNU time (peak RSS) and reads every row back with the Python driver
(paging), comparing the count and an order-free checksum of (id, value bytes) with the file's.
"""

import argparse
import hashlib
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

import run  # noqa: E402 (the comparison venv, the cqlwire module and GNU time are set up as run.py does)

HERE = run.HERE
ROOT = run.ROOT
DATA = ROOT / "bench-data" / "load"
CASSANDRA = ROOT / "scripts" / "cassandra.sh"
CLUSTER = ROOT / "scripts" / "cassandra-cluster.sh"
# The nodes of --cluster (env CQLWIRE_BENCH_CLUSTER: comma-separated loopback addresses).
CLUSTER_ADDRESSES = tuple(os.environ.get("CQLWIRE_BENCH_CLUSTER", "127.0.0.1,127.0.0.2,127.0.0.3").split(","))
# The single node's address (env CASSANDRA_ADDRESS, as scripts/cassandra.sh reads it).
HOST, PORT = os.environ.get("CASSANDRA_ADDRESS", "127.0.0.1"), 9042
KEYSPACE, TABLE = "cqlwire_bench", "embeddings"
DIMENSION = 768
ROW_BYTES = 8 + 4 * DIMENSION  # the values of one row: id bigint + vector<float, 768>
CONCURRENCY = 100
SAMPLE = 200  # rows read back after each run
JAVA_DRIVER = "4.17.0"
JAVA_HOME_DIR = pathlib.Path(os.environ.get("CQLWIRE_JAVA_DRIVER_HOME",
                                            pathlib.Path.home() / ".cache" / "cqlwire-java-driver"))
# Unmeasured runs before the first round, so that the server has compiled the paths of protocol v4
# (cqlwire, the scylla crate) and of v5 with LZ4 segments (the Python driver).
WARM_UP = ("cqlwire", "python-numpy")
BATCH = 16  # rows of the batched peer: the most the server's 50 KiB batch bound takes of these rows
PEERS = ("python", "python-numpy", "cqlsh", "rust-driver", "java-driver", "cqlwire", "cqlwire-100", "cqlwire-batch")
LABELS = {
    "python": "Python driver, execute_concurrent_with_args, float lists (concurrency 100)",
    "python-numpy": "Python driver + cqlwire.driver.install(), NumPy rows (concurrency 100)",
    "cqlsh": "cqlsh COPY FROM CSV (defaults)",
    "rust-driver": "scylla crate alone, Vec<f32> (concurrency 100)",
    "java-driver": f"Java driver {JAVA_DRIVER}, executeAsync + semaphore (100)",
    "cqlwire": "cqlwire load (adaptive concurrency)",
    "cqlwire-100": "cqlwire load --concurrency 100",
    "cqlwire-batch": f"cqlwire load --batch {BATCH} (UNLOGGED batches, adaptive concurrency)",
}
# "N rows in S s" (the peers) and "loaded N rows (… MB) in S s" (cqlwire): the inserts alone.
INSERT_TIME = re.compile(r"(\d+) rows(?: \([^)]*\))? in ([\d.]+) s")
# cqlsh: "N rows imported from 1 files in 0 day, 0 hour, 1 minute, and 2.345 seconds (0 skipped)."
CQLSH_TIME = re.compile(r"(\d+) rows imported from \d+ files? in (\d+) days?, (\d+) hours?, (\d+) minutes?, "
                        r"and ([\d.]+) seconds")


# --- data -------------------------------------------------------------------------------------

def embeddings(start: int, end: int):
    """Rows start..end of the test data: float32 standard normal rows of norm 1, seeded by `start`."""
    import numpy as np

    rows = np.random.default_rng([42, start]).standard_normal((end - start, DIMENSION), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def write_parquet(rows: int, row_group: int) -> pathlib.Path:
    """The Parquet file (id int64, emb list<float>, snappy), written a row group at a time."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = DATA / f"emb-{rows}-rg{row_group}.parquet"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("id", pa.int64()), ("emb", pa.list_(pa.float32()))])
    partial = path.with_suffix(".partial")
    with pq.ParquetWriter(partial, schema, compression="snappy") as writer:
        for start in range(0, rows, row_group):
            block = embeddings(start, min(rows, start + row_group))
            offsets = pa.array(np.arange(0, (len(block) + 1) * DIMENSION, DIMENSION, dtype=np.int32))
            emb = pa.ListArray.from_arrays(offsets, pa.array(block.reshape(-1)))
            ids = pa.array(np.arange(start, start + len(block), dtype=np.int64))
            writer.write_table(pa.Table.from_arrays([ids, emb], schema=schema), row_group_size=row_group)
    partial.rename(path)
    return path


def row_groups(parquet: pathlib.Path):
    """(ids, float32 matrix) of each row group of the Parquet file."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(parquet)
    for group in range(file.num_row_groups):
        table = file.read_row_group(group)
        emb = table.column("emb").combine_chunks()
        yield table.column("id").to_numpy(), emb.values.to_numpy().reshape(len(emb), DIMENSION)


def write_npy(parquet: pathlib.Path) -> pathlib.Path:
    """The same rows as a little-endian float32 .npy (row n has id n)."""
    import numpy as np

    path = parquet.with_suffix(".npy")
    if path.exists():
        return path
    partial = path.with_suffix(".partial.npy")
    rows = sum(len(ids) for ids, _ in row_groups(parquet))
    out = np.lib.format.open_memmap(partial, mode="w+", dtype="<f4", shape=(rows, DIMENSION))
    for ids, matrix in row_groups(parquet):
        if not (ids == range(ids[0], ids[0] + len(ids))).all():
            raise SystemExit("the .npy peer needs ids 0..N-1 in order")
        out[ids[0]:ids[0] + len(ids)] = matrix
    out.flush()
    del out
    partial.rename(path)
    return path


def write_csv(parquet: pathlib.Path) -> pathlib.Path:
    """The same rows as CSV for cqlsh: `id,"[x, y, …]"`, each float32 in its shortest round-trip text
    (Arrow's float-to-string cast, checked to parse back to the same float32)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    path = parquet.with_suffix(".csv")
    if path.exists():
        return path
    partial = path.with_suffix(".partial")
    with open(partial, "w") as out:
        for ids, matrix in row_groups(parquet):
            text = pc.cast(pa.array(matrix.reshape(-1)), pa.string())
            if not (np.asarray(text.to_numpy(zero_copy_only=False)[:DIMENSION * 8], dtype=np.float32)
                    == matrix[:8].reshape(-1)).all():
                raise SystemExit("Arrow's float text does not parse back to the same float32")
            lists = pc.binary_join(pa.ListArray.from_arrays(
                pa.array(np.arange(0, (len(ids) + 1) * DIMENSION, DIMENSION, dtype=np.int32)), text), ", ")
            out.writelines(f'{i},"[{v}]"\n' for i, v in zip(ids.tolist(), lists.to_pylist()))
    partial.rename(path)
    return path


# --- server -----------------------------------------------------------------------------------

def server_running() -> bool:
    return subprocess.run([str(CASSANDRA), "status"], capture_output=True).returncode == 0


def node_pid(address: str) -> int:
    """The pid of the scripts/cassandra.sh server on `address`."""
    env = dict(os.environ, CASSANDRA_ADDRESS=address)
    status = subprocess.run([str(CASSANDRA), "status"], check=True, capture_output=True, text=True,
                            env=env).stdout
    return int(re.search(r"pid (\d+)", status).group(1))


def start_server(cluster: bool = False) -> list:
    """Starts the single-node server, or the three-node cluster; returns the pids of its nodes."""
    if server_running():
        raise SystemExit("a Cassandra started by scripts/cassandra.sh is already running: stop it first")
    env = dict(os.environ, CASSANDRA_YAML_EXTRA="auto_snapshot: false\n")
    if cluster:
        env["CASSANDRA_CLUSTER_ADDRESSES"] = ",".join(CLUSTER_ADDRESSES)
        subprocess.run([str(CLUSTER), "start"], check=True, env=env, stdout=sys.stderr)
        return [node_pid(address) for address in CLUSTER_ADDRESSES]
    subprocess.run([str(CASSANDRA), "start"], check=True, env=env, stdout=sys.stderr)
    return [node_pid(HOST)]


def stop_server(cluster: bool = False) -> None:
    if cluster:
        env = dict(os.environ, CASSANDRA_CLUSTER_ADDRESSES=",".join(CLUSTER_ADDRESSES))
        subprocess.run([str(CLUSTER), "stop"], stdout=sys.stderr, env=env)
    else:
        subprocess.run([str(CASSANDRA), "stop"], stdout=sys.stderr)


def cpu_seconds(pids) -> float:
    """User + system CPU seconds of the processes so far, from /proc/PID/stat."""
    total = 0
    for pid in pids:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def settle(pids, longest: float = 30.0) -> None:
    """Waits (at most `longest` seconds) until the server uses less than 0.1 core over a second."""
    deadline = time.monotonic() + longest
    while time.monotonic() < deadline:
        before = cpu_seconds(pids)
        time.sleep(1)
        if cpu_seconds(pids) - before < 0.1:
            return


def connect():
    """A Python driver session to the server, retried while it finishes starting; vector values are
    read as the bytes the server sends (no float decoding), so checks compare bytes."""
    from cassandra import cqltypes
    from cassandra.cluster import Cluster

    cqltypes.VectorType.deserialize = classmethod(lambda cls, value, protocol_version: bytes(value))
    deadline = time.monotonic() + 90
    while True:
        try:
            cluster = Cluster([HOST], port=PORT)
            return cluster, cluster.connect()
        except Exception:  # the port opens before the server takes requests
            if time.monotonic() > deadline:
                raise
            time.sleep(2)


def create_table(session, replicas: int = 1, index: bool = False) -> None:
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    f"{{'class': 'SimpleStrategy', 'replication_factor': {replicas}}}")
    session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{TABLE}", timeout=120)
    session.execute(f"CREATE TABLE {KEYSPACE}.{TABLE} (id bigint PRIMARY KEY, emb vector<float, {DIMENSION}>)",
                    timeout=120)
    if index:
        session.execute(f"CREATE CUSTOM INDEX IF NOT EXISTS {TABLE}_emb ON {KEYSPACE}.{TABLE} (emb) "
                        "USING 'StorageAttachedIndex' WITH OPTIONS = {'similarity_function': 'cosine'}",
                        timeout=120)


def count_rows(session) -> int:
    """SELECT COUNT(*); if the server times it out (large tables), the ids counted page by page."""
    from cassandra import ReadTimeout
    from cassandra.query import SimpleStatement

    try:
        return session.execute(f"SELECT COUNT(*) FROM {KEYSPACE}.{TABLE}", timeout=600).one()[0]
    except ReadTimeout:
        ids = SimpleStatement(f"SELECT id FROM {KEYSPACE}.{TABLE}", fetch_size=5000)
        return sum(1 for _ in session.execute(ids, timeout=600))


def check_sample(session, parquet: pathlib.Path, rows: int, seed: int) -> None:
    """Reads SAMPLE random rows back and compares their value bytes with the input's."""
    import numpy as np
    from cassandra.concurrent import execute_concurrent_with_args

    wanted = sorted(np.random.default_rng(seed).choice(rows, size=min(SAMPLE, rows), replace=False).tolist())
    expected = {}
    for ids, matrix in row_groups(parquet):
        for i in np.searchsorted(ids, wanted):
            if i < len(ids) and ids[i] in wanted:
                expected[int(ids[i])] = matrix[i].astype(">f4").tobytes()
    select = session.prepare(f"SELECT id, emb FROM {KEYSPACE}.{TABLE} WHERE id = ?")
    for row_id, (success, result) in zip(wanted, execute_concurrent_with_args(session, select,
                                                                             [(i,) for i in wanted])):
        if not success:
            raise SystemExit(f"read back: row {row_id}: {result}")
        row = result.one()
        if row is None or expected[row_id] != row.emb:
            raise SystemExit(f"read back: row {row_id} is {'missing' if row is None else 'not the input'}")


# --- peers ------------------------------------------------------------------------------------

def java_classpath(source: str = "LoadJavaDriver.java") -> str:
    """Fetches the Java driver (mvn dependency:copy-dependencies) once and compiles the peer `source`."""
    lib = JAVA_HOME_DIR / JAVA_DRIVER / "lib"
    if not (lib / f"java-driver-core-{JAVA_DRIVER}.jar").exists():
        pom = JAVA_HOME_DIR / "pom.xml"
        pom.parent.mkdir(parents=True, exist_ok=True)
        pom.write_text(f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cqlwire</groupId><artifactId>java-driver-peer</artifactId><version>1</version>
  <dependencies>
    <dependency>
      <groupId>com.datastax.oss</groupId><artifactId>java-driver-core</artifactId><version>{JAVA_DRIVER}</version>
    </dependency>
  </dependencies>
</project>
""")
        subprocess.run(["mvn", "-q", "-B", "-f", str(pom), "dependency:copy-dependencies",
                        "-DincludeScope=runtime", f"-DoutputDirectory={lib}"], check=True, stdout=sys.stderr)
    classes = JAVA_HOME_DIR / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-d", str(classes), "-cp", f"{lib}/*", str(HERE / source)], check=True)
    return f"{classes}:{lib}/*"


def peer_commands(peers, parquet: pathlib.Path):
    """The command line of each peer (building, fetching and writing what it needs)."""
    table = f"{KEYSPACE}.{TABLE}"
    binary = run.TARGET / "release" / "cqlwire"
    commands = {}
    for peer in peers:
        if peer in ("python", "python-numpy"):
            commands[peer] = [sys.executable, str(HERE / "load_python.py"), str(parquet), HOST, table,
                              str(CONCURRENCY), "lists" if peer == "python" else "numpy"]
        elif peer == "cqlsh":
            csv = write_csv(parquet)
            commands[peer] = [str(run.VENV / "bin" / "cqlsh"), HOST, str(PORT), "-e",
                              f"COPY {table} (id, emb) FROM '{csv}'"]
        elif peer == "rust-driver":
            subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "cqlwire-client", "--example",
                            "bench_load_driver"], cwd=ROOT, check=True)
            commands[peer] = [str(run.TARGET / "release" / "examples" / "bench_load_driver"), str(parquet),
                              f"{HOST}:{PORT}", table, str(CONCURRENCY)]
        elif peer == "java-driver":
            commands[peer] = ["java", "-cp", java_classpath(), "LoadJavaDriver", str(write_npy(parquet)), HOST,
                              str(PORT), table, str(CONCURRENCY)]
        elif peer in ("cqlwire", "cqlwire-100", "cqlwire-batch"):
            extra = {"cqlwire": [], "cqlwire-100": ["--concurrency", str(CONCURRENCY)],
                     "cqlwire-batch": ["--batch", str(BATCH)]}[peer]
            commands[peer] = [str(binary), "load", str(parquet), "--hosts", f"{HOST}:{PORT}", "--table", table,
                              *extra]
        else:
            raise SystemExit(f"unknown peer {peer!r}: one of {', '.join(PEERS)}")
    return commands


def timed(command):
    """Runs one command under GNU time: (wall s, CPU s user + system, peak RSS MiB, its output)."""
    report = DATA / "time.txt"
    started = time.perf_counter()
    child = subprocess.run([run.TIME, "-f", "%U %S %M", "-o", str(report), *command],
                           capture_output=True, text=True)
    wall = time.perf_counter() - started
    output = child.stdout + child.stderr
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}:\n{output[-3000:]}")
    user, system, kib = report.read_text().split()[-3:]
    return wall, float(user) + float(system), int(kib) / 1024, output


def insert_seconds(output: str, rows: int):
    """The seconds of the inserts alone that a peer printed, checked against the rows it reports."""
    match = CQLSH_TIME.search(output)
    if match:
        count = int(match[1])
        seconds = 86400 * int(match[2]) + 3600 * int(match[3]) + 60 * int(match[4]) + float(match[5])
    else:
        match = INSERT_TIME.search(output)
        if not match:
            return None
        count, seconds = int(match[1]), float(match[2])
    if count != rows:
        raise SystemExit(f"the peer reports {count} rows, not {rows}:\n{output[-2000:]}")
    return seconds


def measure_run(peer, command, pids, session, parquet, rows, seed):
    """One run of one peer into the emptied table, then the checks; returns its numbers."""
    session.execute(f"TRUNCATE {KEYSPACE}.{TABLE}", timeout=300)
    settle(pids)
    server_before = cpu_seconds(pids)
    wall, client_cpu, rss, output = timed(command)
    server_cpu = cpu_seconds(pids) - server_before
    load = os.getloadavg()[0]
    inserts = insert_seconds(output, rows)
    counted = count_rows(session)
    if counted != rows:
        raise SystemExit(f"{peer}: the table holds {counted} rows, not {rows}:\n{output[-2000:]}")
    check_sample(session, parquet, rows, seed)
    print(f"{peer:12} {rows / wall:8.0f} rows/s  {wall:6.1f} s wall  client CPU {client_cpu:6.1f} s  "
          f"server CPU {server_cpu:6.1f} s  RSS {rss:7.1f} MiB  inserts "
          f"{'—' if inserts is None else f'{inserts:.1f} s'}  load average {load:.1f}  "
          f"[{output.strip().splitlines()[-1][:110] if output.strip() else ''}]", file=sys.stderr, flush=True)
    return {"wall": wall, "client": client_cpu, "server": server_cpu, "rss": rss, "inserts": inserts,
            "load": load}


def compare(args) -> None:
    global HOST
    if args.cluster:
        HOST = CLUSTER_ADDRESSES[0]
    peers = [p for p in args.peers.split(",") if p]
    parquet = write_parquet(args.rows, args.row_group)
    commands = peer_commands(peers, parquet)
    pids = start_server(args.cluster)
    results = {peer: [] for peer in peers}
    try:
        cluster, session = connect()
        create_table(session, len(pids), args.index)
        # The Python driver's plain peer warms up v5 just as well when the module's is not compared.
        warm_up = [p if p != "python-numpy" or p in peers else "python" for p in WARM_UP]
        for warm in peer_commands(warm_up, parquet).values():
            print(f"warm-up: {' '.join(warm)}", file=sys.stderr, flush=True)
            session.execute(f"TRUNCATE {KEYSPACE}.{TABLE}", timeout=300)
            timed(warm)
        for round_ in range(args.rounds):
            order = peers[round_ % len(peers):] + peers[:round_ % len(peers)]
            print(f"round {round_ + 1} of {args.rounds}", file=sys.stderr, flush=True)
            for peer in order:
                results[peer].append(measure_run(peer, commands[peer], pids, session, parquet, args.rows,
                                                 seed=round_ * 100 + len(results[peer])))
        cluster.shutdown()
    finally:
        stop_server(args.cluster)
    print_table(results, args)


def median(runs, key):
    values = [run_[key] for run_ in runs if run_[key] is not None]
    return statistics.median(values) if values else None


def print_table(results, args) -> None:
    rows = args.rows
    per_100k = 100_000 / rows
    medians = {peer: {key: median(runs, key) for key in ("wall", "client", "server", "rss", "inserts")}
               for peer, runs in results.items()}
    loads = [run_["load"] for runs in results.values() for run_ in runs]
    base = medians.get("python")
    server = ("a three-node Apache Cassandra 5.0.9 cluster (replication factor 3)" if args.cluster
              else "Apache Cassandra 5.0.9")
    if args.index:
        server += ", a vector index (SAI, cosine) on the column during the loads"
    print(f"\nMachine: {run.cpu_name()}, {os.cpu_count()} cores; {server} on the same machine; "
          f"{rows} rows × vector<float, {DIMENSION}> ({ROW_BYTES} value bytes a row), {args.rounds} rounds; "
          f"load average during the runs {min(loads):.1f}–{max(loads):.1f}\n")
    print("| loader | rows/s | MB/s | wall | inserts alone | client CPU per 100k rows | server CPU per 100k rows "
          "| CPU busy (client + server) / wall | peak RSS | rows/s vs Python driver | client CPU vs Python driver |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for peer, m in medians.items():
        rate = rows / m["wall"]
        inserts = "—" if m["inserts"] is None else f"{rows / m['inserts']:,.0f} rows/s"
        versus = cpu_versus = "—"
        if base and peer != "python":
            versus = f"{base['wall'] / m['wall']:.2f}×"
            cpu_versus = f"{m['client'] / base['client']:.3f}×"
        print(f"| {LABELS[peer]} | {rate:,.0f} | {rate * ROW_BYTES / 1e6:.1f} | {m['wall']:.1f} s | {inserts} "
              f"| {m['client'] * per_100k:.1f} s | {m['server'] * per_100k:.1f} s "
              f"| {(m['client'] + m['server']) / m['wall']:.2f} cores | {m['rss']:.0f} MiB | {versus} | {cpu_versus} |")
    for ours in ("cqlwire", "cqlwire-100", "cqlwire-batch"):
        if ours not in medians:
            continue
        m = medians[ours]
        verdicts = []
        if base:
            verdicts.append(f"{base['wall'] / m['wall']:.2f}× the Python driver's rows/s (target ≥ 3×)")
            verdicts.append(f"{m['client'] / base['client']:.3f}× its client CPU (target ≤ 0.1×)")
        others = [p for p in medians if p not in ("python", "cqlwire", "cqlwire-100", "cqlwire-batch")]
        if others:
            slowest = min(medians[p]["wall"] / m["wall"] for p in others)
            verdicts.append(f"≥ {slowest:.2f}× every other peer (target ≥ 1.0×)")
        print(f"\n{LABELS[ours]}: " + "; ".join(verdicts))
    if "cqlwire" in medians and "cqlwire-batch" in medians:
        single, batch = medians["cqlwire"], medians["cqlwire-batch"]
        print(f"\nBatches vs single rows (both adaptive): {single['wall'] / batch['wall']:.2f}× the rows/s "
              f"(the default at ≥ 1.2×), {batch['server'] / single['server']:.2f}× the server CPU per row "
              f"(target ≤ 0.8×), {batch['client'] / single['client']:.2f}× the client CPU per row")


# --- one large file, once ---------------------------------------------------------------------

def row_digest(row_id: int, value: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(row_id.to_bytes(8, "big", signed=True) + value, digest_size=8).digest(),
                          "big")


def big(args) -> None:
    """--big: one large file through `cqlwire load` (peak RSS), every row read back and compared."""
    from cassandra.query import SimpleStatement

    parquet = write_parquet(args.big, args.row_group)
    expected_sum, expected_rows = 0, 0
    for ids, matrix in row_groups(parquet):
        values = matrix.astype(">f4")
        for row_id, row in zip(ids.tolist(), values):
            expected_sum += row_digest(row_id, row.tobytes())
        expected_rows += len(ids)
    command = peer_commands(["cqlwire"], parquet)["cqlwire"]
    pids = start_server()
    try:
        cluster, session = connect()
        create_table(session)
        server_before = cpu_seconds(pids)
        wall, client_cpu, rss, output = timed(command)
        server_cpu = cpu_seconds(pids) - server_before
        print(f"{' '.join(command)}\n  {output.strip()}\n  {wall:.1f} s wall, {args.big / wall:.0f} rows/s, client CPU "
              f"{client_cpu:.1f} s, server CPU {server_cpu:.1f} s, peak RSS {rss:.1f} MiB (target ≤ 256 MiB)",
              flush=True)
        # (SELECT COUNT(*) over a million rows outlives the server's range read timeout: the rows
        # are counted as they are read back.)
        started = time.perf_counter()
        seen, total, read = set(), 0, 0
        for row in session.execute(SimpleStatement(f"SELECT id, emb FROM {KEYSPACE}.{TABLE}", fetch_size=1000),
                                   timeout=600):
            seen.add(row.id)
            total += row_digest(row.id, row.emb)
            read += 1
        print(f"  read back (paging): {read} rows, {len(seen)} distinct ids, in {time.perf_counter() - started:.0f} s; "
              f"checksum {total % 2**64:016x}, the file's {expected_sum % 2**64:016x} over {expected_rows} rows",
              flush=True)
        cluster.shutdown()
        if not (read == len(seen) == expected_rows and total % 2**64 == expected_sum % 2**64):
            raise SystemExit("the rows read back differ from the file")
        print("  every row read back equals the file's bytes")
    finally:
        stop_server()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows × 768 float32 to load (default 100000)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each peer, alternating (default 3)")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, from {','.join(PEERS)}")
    parser.add_argument("--row-group", type=int, default=10_000, help="rows per Parquet row group (default 10000)")
    parser.add_argument("--cluster", action="store_true",
                        help="three nodes on 127.0.0.1-3 or CQLWIRE_BENCH_CLUSTER (scripts/cassandra-cluster.sh), "
                             "replication factor 3; "
                             "server CPU is the three nodes'")
    parser.add_argument("--index", action="store_true",
                        help="a vector index (SAI, cosine) on emb during the loads (Apache Cassandra 5.0.9 may "
                             "refuse writes under it: CASSANDRA-21644)")
    parser.add_argument("--big", type=int, metavar="ROWS",
                        help="load one ROWS-row file with cqlwire alone: peak RSS and every row read back")
    parser.add_argument("--no-module-build", action="store_true",
                        help="use the cqlwire Python module already installed in the venv")
    args = parser.parse_args()
    run.ensure_venv(__file__)
    if not args.no_module_build:
        run.install_module()
    run.ensure_gnu_time()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    if args.big:
        big(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
