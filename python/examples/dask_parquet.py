"""Convert a multi-file Parquet dataset of embeddings to CQL vector values with Dask.

    python python/examples/dask_parquet.py IN_DIR OUT_DIR --column emb --type 'vector<float, 768>'
        [--on-null error|null|skip] [--batch-rows 16384]
        [--scheduler threads|processes|synchronous|local:N|tcp://scheduler:8786]

Every ``*.parquet`` file under IN_DIR becomes one Dask task that writes OUT_DIR/<same relative
path>: the file is read batch by batch with pyarrow, each batch's vector column goes through
``cqlwire.serialize_vectors`` (the Arrow C data interface, no Python loop over elements), and the
batch is written with the other columns as they were and a binary ``<column>_cql`` column in place
of the vector column, in the input's row order — what ``cqlwire convert FILE --format parquet``
writes for that file (snappy, no dictionary or statistics on the value column).

The scheduler is Dask's: ``threads`` (default; the conversion releases the GIL), ``processes``,
``synchronous``, ``local:N`` (a ``dask.distributed.LocalCluster`` of N worker processes) or the
address of a running cluster, whose workers need cqlwire and pyarrow installed (this module's code is
shipped to them with the tasks).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Dict, Optional

import dask
import pyarrow as pa
import pyarrow.parquet as pq

import cqlwire

ON_NULL = ("error", "null", "skip")


def output_schema(schema: pa.Schema, column: str) -> pa.Schema:
    """The input's fields without the vector column, then a nullable binary ``<column>_cql``."""
    value_column = column + "_cql"
    if value_column in schema.names:
        raise ValueError("the input already has a column named %s" % value_column)
    if column not in schema.names:
        raise ValueError("no column %r (columns: %s)" % (column, ", ".join(schema.names)))
    fields = [field for field in schema if field.name != column]
    return pa.schema(fields + [pa.field(value_column, pa.binary(), nullable=True)])


def convert_batch(batch: pa.RecordBatch, column: str, cql_type: Optional[str], on_null: str,
                  first_row: int, schema: pa.Schema) -> pa.RecordBatch:
    """One batch with its vector column serialized by cqlwire into ``<column>_cql``."""
    vectors = batch.column(column)
    if vectors.null_count:
        if on_null == "error":
            row = first_row + vectors.is_null().to_pylist().index(True)
            raise ValueError("null vector at row %d (use --on-null null or skip)" % row)
        if on_null == "skip":
            batch = batch.filter(vectors.is_valid())
            vectors = batch.column(column)
    values = pa.array(cqlwire.serialize_vectors(vectors, cql_type), type=pa.binary())
    columns = [batch.column(name) for name in schema.names[:-1]]
    return pa.RecordBatch.from_arrays(columns + [values], schema=schema)


def convert_file(source: str, destination: str, column: str, cql_type: Optional[str] = None,
                 on_null: str = "error", batch_rows: int = 16384) -> int:
    """Converts one Parquet file (one Dask task); returns the rows written."""
    reader = pq.ParquetFile(source)
    schema = output_schema(reader.schema_arrow, column)
    target = pathlib.Path(destination)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    rows = 0
    try:
        with pq.ParquetWriter(partial, schema, compression="snappy",
                              use_dictionary=schema.names[:-1],
                              write_statistics=schema.names[:-1]) as writer:
            first_row = 0
            for batch in reader.iter_batches(batch_size=batch_rows):
                converted = convert_batch(batch, column, cql_type, on_null, first_row, schema)
                first_row += batch.num_rows
                rows += converted.num_rows
                writer.write_batch(converted)
            if rows == 0:
                writer.write_table(schema.empty_table())
    except BaseException as error:
        partial.unlink(missing_ok=True)  # no half-written output
        if isinstance(error, (ValueError, TypeError)):
            raise type(error)("%s: %s" % (source, error)) from error
        raise
    partial.replace(target)
    return rows


def ship_to_workers() -> None:
    """Uploads this file to the workers of the active ``dask.distributed.Client``, if any, so that
    they can run its functions without having it installed (run as a script, Dask ships the
    functions of ``__main__`` by value anyway)."""
    if __name__ == "__main__":
        return
    try:
        from dask.distributed import default_client

        client = default_client()
    except (ImportError, ValueError):
        return
    client.upload_file(__file__)


def convert_dataset(in_dir: str, out_dir: str, column: str, cql_type: Optional[str] = None,
                    on_null: str = "error", batch_rows: int = 16384, **compute) -> Dict[str, int]:
    """Converts every ``*.parquet`` under ``in_dir`` into ``out_dir`` (same relative paths), one
    Dask task per file; ``compute`` goes to ``dask.compute`` (e.g. ``scheduler="threads"``; none
    uses the active ``dask.distributed.Client``). Returns the rows written per relative path."""
    if on_null not in ON_NULL:
        raise ValueError("on_null must be one of %s" % ", ".join(ON_NULL))
    root, out = pathlib.Path(in_dir), pathlib.Path(out_dir)
    files = sorted(path.relative_to(root) for path in root.rglob("*.parquet") if path.is_file())
    if not files:
        raise ValueError("no *.parquet file under %s" % in_dir)
    if "scheduler" not in compute:
        ship_to_workers()
    task = dask.delayed(convert_file, pure=False)
    tasks = [task(str(root / name), str(out / name), column, cql_type, on_null, batch_rows)
             for name in files]
    counts = dask.compute(*tasks, **compute)
    return {str(name): count for name, count in zip(files, counts)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("in_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--column", default="emb", help="the vector column (default emb)")
    parser.add_argument("--type", dest="cql_type", help="e.g. 'vector<float, 768>' (default: from the data)")
    parser.add_argument("--on-null", choices=ON_NULL, default="error")
    parser.add_argument("--batch-rows", type=int, default=16384)
    parser.add_argument("--scheduler", default="threads",
                        help="threads, processes, synchronous, local:N or tcp://HOST:PORT")
    args = parser.parse_args(argv)
    options = dict(column=args.column, cql_type=args.cql_type, on_null=args.on_null,
                   batch_rows=args.batch_rows)
    if args.scheduler.startswith(("tcp://", "local:")):
        from dask.distributed import Client, LocalCluster

        if args.scheduler.startswith("local:"):
            cluster = LocalCluster(n_workers=int(args.scheduler[6:]), threads_per_worker=1,
                                   dashboard_address=None)
            client = Client(cluster)
        else:
            cluster, client = None, Client(args.scheduler)
        with client:
            counts = convert_dataset(args.in_dir, args.out_dir, **options)
        if cluster is not None:
            cluster.close()
    else:
        counts = convert_dataset(args.in_dir, args.out_dir, scheduler=args.scheduler, **options)
    print("converted %d rows in %d files" % (sum(counts.values()), len(counts)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
