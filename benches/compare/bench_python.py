"""The Python driver as a peer of `cqlwire bench` on the search stages (run by bench.py, one
process a run): VectorDBBench's concurrent levels, then its serial pass, with one prepared
`SELECT id FROM ks.t ORDER BY emb ANN OF ? LIMIT k` and the query vectors as Python float lists.

    python bench_python.py TEST.parquet HOST KS.TABLE K CONCURRENCY,... SECONDS ANSWERS.json|-

Each level keeps CONCURRENCY queries in flight for SECONDS with `execute_async` (each in-flight
slot cycling through the queries from a random start, as VectorDBBench's workers do) and reports
qps = answered / seconds and NumPy's p99, p95 and mean of the answered queries' latencies; the
serial pass runs every query once, one in flight, and writes the ids it returned (a list per query,
in the test file's order) to ANSWERS.json (`-`: no serial pass, the levels alone). Prints one JSON object: the levels, the serial p99 and
p95 (seconds, rounded to 4 places as VectorDBBench does), the queries run and the process CPU
seconds of the searches alone (`time.process_time`; reading and connecting excluded).
"""

import json
import sys
import threading
import time

import numpy as np
import pyarrow.parquet as pq
from cassandra.cluster import Cluster


def level(session, select, queries, concurrency: int, seconds: float) -> dict:
    """`concurrency` queries in flight for `seconds`; latencies of the answered ones."""
    latencies, errors = [], [0]
    lock, done = threading.Lock(), threading.Event()
    running = [concurrency]
    starts = np.random.default_rng(concurrency).integers(0, len(queries), concurrency)
    deadline = time.perf_counter() + seconds

    def launch(position: int) -> None:
        started = time.perf_counter()
        future = session.execute_async(select, queries[position % len(queries)])
        future.add_callbacks(answered, failed, callback_args=(position, started), errback_args=(position, started))

    def answered(_rows, position, started) -> None:
        now = time.perf_counter()
        latencies.append(now - started)
        following(position, now)

    def failed(_error, position, _started) -> None:
        errors[0] += 1
        following(position, time.perf_counter())

    def following(position: int, now: float) -> None:
        if now < deadline:
            launch(position + 1)
            return
        with lock:
            running[0] -= 1
            if running[0] == 0:
                done.set()

    began = time.perf_counter()
    for start in starts:
        launch(int(start))
    done.wait()
    elapsed = time.perf_counter() - began
    return {"concurrency": concurrency, "queries": len(latencies), "errors": errors[0],
            "qps": round(len(latencies) / elapsed, 4), "p99": float(np.percentile(latencies, 99)),
            "p95": float(np.percentile(latencies, 95)), "avg": float(np.mean(latencies))}


def main() -> None:
    path, host, table, k, concurrencies, seconds, answers = sys.argv[1:]
    emb = pq.read_table(path, columns=["emb"]).column("emb").combine_chunks()
    queries = [(row,) for row in emb.values.to_numpy().reshape(len(emb), -1).tolist()]
    cluster = Cluster([host])
    session = cluster.connect()
    select = session.prepare(f"SELECT id FROM {table} ORDER BY emb ANN OF ? LIMIT {int(k)}")
    cpu = time.process_time()
    levels = [level(session, select, queries, int(c), float(seconds)) for c in concurrencies.split(",")]
    found, latencies = [], []
    for query in queries if answers != "-" else []:
        started = time.perf_counter()
        rows = session.execute(select, query)
        latencies.append(time.perf_counter() - started)
        found.append([row.id for row in rows])
    cpu = time.process_time() - cpu
    if answers != "-":
        with open(answers, "w") as out:
            json.dump(found, out)
    serial = {f"serial_latency_p{q}": round(float(np.percentile(latencies, q)), 4) if latencies else None
              for q in (99, 95)}
    print(json.dumps({"levels": levels, **serial,
                      "queries": len(found) + sum(lv["queries"] + lv["errors"] for lv in levels),
                      "cpu_s": cpu}))
    cluster.shutdown()


if __name__ == "__main__":
    main()
