"""The Python driver's bulk path as a peer of `cqlwire load` (run by load.py, one process a run):
reads the Parquet file (id int64, emb list<float>) with pyarrow and inserts every row with
`execute_concurrent_with_args` and a prepared INSERT, as VectorDBBench-style loaders do.

    python load_python.py FILE.parquet HOST KS.TABLE CONCURRENCY lists|numpy

`lists`: each vector as a Python list of floats, serialized by the driver's own VectorType code.
`numpy`: after `cqlwire.driver.install()`, each vector as a float32 NumPy row.
Prints one line: rows, seconds and rows per second of the inserts alone (the rows made before the
clock starts), the protocol version and the compression the connection negotiated.
"""

import sys
import time

import pyarrow.parquet as pq
from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args


def main() -> None:
    path, host, table, concurrency, rows_as = sys.argv[1:]
    if rows_as == "numpy":
        import cqlwire.driver

        cqlwire.driver.install()
    elif rows_as != "lists":
        sys.exit(f"rows as {rows_as!r}: lists or numpy")
    data = pq.read_table(path, columns=["id", "emb"])
    ids = data.column("id").to_numpy().tolist()
    emb = data.column("emb").combine_chunks()
    matrix = emb.values.to_numpy().reshape(len(emb), -1)
    vectors = matrix.tolist() if rows_as == "lists" else list(matrix)

    cluster = Cluster([host])
    session = cluster.connect()
    insert = session.prepare(f"INSERT INTO {table} (id, emb) VALUES (?, ?)")
    started = time.perf_counter()
    results = execute_concurrent_with_args(session, insert, zip(ids, vectors), concurrency=int(concurrency),
                                           raise_on_first_error=True)
    seconds = time.perf_counter() - started
    failed = sum(1 for success, _ in results if not success)
    if failed:
        sys.exit(f"{failed} inserts failed")
    connection = next(iter(session.get_pools()))._connection
    compressor = connection.compressor
    compression = f"{compressor.__module__}.{compressor.__qualname__}" if compressor else "none"
    print(f"{len(results)} rows in {seconds:.2f} s: {len(results) / seconds:.0f} rows/s at concurrency "
          f"{concurrency}; protocol v{cluster.protocol_version}, compression {compression}")
    cluster.shutdown()


if __name__ == "__main__":
    main()
