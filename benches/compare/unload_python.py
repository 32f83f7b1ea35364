"""The Python driver as a peer of `cqlwire unload` (run by unload.py, one process a run): pages through
`SELECT id, emb FROM KS.TABLE` with fetch size PAGE, stacks each page into NumPy (int64 ids, float32
matrix) and writes the same Parquet file as `cqlwire unload` (id int64, emb fixed_size_list<float32, N>,
snappy), as an exporter built on the driver would.

    python unload_python.py HOST KS.TABLE PAGE OUTPUT.parquet

Prints one line: rows, seconds and rows per second from the first request to the closed file.
"""

import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement


def main() -> None:
    host, table, page, output = sys.argv[1:]
    cluster = Cluster([host])
    session = cluster.connect()
    started = time.perf_counter()
    result = session.execute(SimpleStatement(f"SELECT id, emb FROM {table}", fetch_size=int(page)))
    writer = None
    rows = 0
    while True:
        current = result.current_rows
        if current:
            ids = np.fromiter((row.id for row in current), np.int64, len(current))
            matrix = np.array([row.emb for row in current], np.float32)
            emb = pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])
            batch = pa.record_batch([pa.array(ids), emb], names=["id", "emb"])
            if writer is None:
                writer = pq.ParquetWriter(output, batch.schema, compression="snappy")
            writer.write_batch(batch)
            rows += len(current)
        if not result.has_more_pages:
            break
        result.fetch_next_page()
    if writer is not None:
        writer.close()
    seconds = time.perf_counter() - started
    print(f"{rows} rows in {seconds:.2f} s: {rows / seconds:.0f} rows/s")
    cluster.shutdown()


if __name__ == "__main__":
    main()
