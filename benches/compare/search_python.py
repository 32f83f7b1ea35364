"""The Python driver as a peer of `cqlwire search` (run by search.py, one process a run): the
query vectors of an .npy file as Python float lists, bound to a prepared
`SELECT id FROM ks.t ORDER BY emb ANN OF ? LIMIT k` and run with `execute_concurrent_with_args`, as
VectorDBBench-style clients do.

    python search_python.py QUERIES.npy HOST KS.TABLE K CONCURRENCY ANSWERS

Writes the ids returned for each query (one line per query, in query order) to ANSWERS and prints
one line: queries, seconds, queries per second, and the process CPU seconds of the queries alone
(`time.process_time`, the reading and connecting before the clock excluded). The driver's API gives
no per-query latency.
"""

import sys
import time

import numpy as np
from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args


def main() -> None:
    path, host, table, k, concurrency, answers = sys.argv[1:]
    queries = [(row,) for row in np.load(path).tolist()]
    cluster = Cluster([host])
    session = cluster.connect()
    select = session.prepare(f"SELECT id FROM {table} ORDER BY emb ANN OF ? LIMIT {int(k)}")
    cpu, started = time.process_time(), time.perf_counter()
    results = execute_concurrent_with_args(session, select, queries, concurrency=int(concurrency),
                                           raise_on_first_error=True, results_generator=False)
    ids = [[row.id for row in result] for _, result in results]
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    with open(answers, "w") as out:
        out.writelines(" ".join(map(str, row)) + "\n" for row in ids)
    print(f"{len(ids)} queries in {seconds:.3f} s: {len(ids) / seconds:.1f} qps at concurrency {concurrency}; "
          f"cpu {cpu:.3f} s")
    cluster.shutdown()


if __name__ == "__main__":
    main()
