"""Load a multi-file Parquet dataset into a live Cassandra/ScyllaDB table with Dask and cqlwire.

    python python/examples/dask_load.py IN_DIR --hosts HOST[,HOST...] --table KS.TABLE
        [--row-number-column id] [--map IN=COL,...] [--consistency LEVEL] [--concurrency N]
        [--username USER] [--retries 2] [--scheduler threads|processes|synchronous|local:N|tcp://scheduler:8786]

Every ``*.parquet`` file under IN_DIR (in the order of their relative paths) is one Dask task that
reads the file with pyarrow and calls ``cqlwire.load`` on it, the engine of ``cqlwire load``
(token-aware, retried, the GIL released while it runs). Row numbers are global: a file's first row
is numbered by the rows of the files before it (counted from the Parquet footers, before any task
runs), so with ``--row-number-column`` no two tasks write the same key, and a task that Dask runs
again after a failure (a lost worker, a ``cqlwire.LoadFailed``) writes the same rows under the same
keys: harmless. A dataset with its own key column needs no row numbers.

The scheduler is Dask's: ``threads`` (default), ``processes``, ``synchronous``, ``local:N`` (a
``dask.distributed.LocalCluster`` of N worker processes) or the address of a running cluster, whose
workers need cqlwire and pyarrow installed and IN_DIR on a path they all reach. ``--retries`` (the
distributed schedulers only) is how often Dask runs a failed task again.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Dict, List, Optional

import dask
import pyarrow.parquet as pq

import cqlwire


def parquet_files(in_dir: str) -> List[pathlib.Path]:
    """The ``*.parquet`` files under ``in_dir``, by relative path."""
    root = pathlib.Path(in_dir)
    files = sorted((p for p in root.rglob("*.parquet") if p.is_file()),
                   key=lambda p: p.relative_to(root).as_posix())
    if not files:
        raise ValueError("no *.parquet file under %s" % in_dir)
    return files


def first_rows(files: List[pathlib.Path]) -> List[int]:
    """Each file's first global row number: the rows of the files before it (Parquet footers)."""
    starts, total = [], 0
    for path in files:
        starts.append(total)
        total += pq.ParquetFile(path).metadata.num_rows
    return starts


def load_file(path: str, first_row: int, hosts: str, table: str, options: dict) -> dict:
    """One Dask task: the file's rows into the table, numbered from ``first_row``. Returns what the
    load did, with the file's path and row count."""
    data = pq.read_table(path)
    report = cqlwire.load(data, hosts=hosts, table=table, first_row=first_row, **options)
    return {"file": path, "rows": data.num_rows, "written": report.written,
            "rejected": report.rejected, "retried": report.retried,
            "rejects": report.rejects[:10]}


def distributed_client():
    """The active ``dask.distributed.Client``, or None."""
    try:
        from dask.distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


def load_dataset(in_dir: str, hosts: str, table: str, retries: int = 2,
                 scheduler: Optional[str] = None, **options) -> List[dict]:
    """Loads every ``*.parquet`` file under ``in_dir`` into ``table``, one Dask task per file with
    global row numbers; ``options`` go to ``cqlwire.load`` (e.g. ``row_number_column="id"``).
    ``scheduler`` None uses the active ``dask.distributed.Client`` (which runs a failed task up to
    ``retries`` more times), else a local Dask scheduler by name. Returns one dict per file."""
    files = parquet_files(in_dir)
    task = dask.delayed(load_file, pure=False)
    tasks = [task(str(path), start, hosts, table, options)
             for path, start in zip(files, first_rows(files))]
    if scheduler is not None:
        return list(dask.compute(*tasks, scheduler=scheduler))
    client = distributed_client()
    if client is None:
        raise ValueError("no dask.distributed.Client is active: start one or name a scheduler")
    workers = client.scheduler_info()["workers"]
    if __name__ != "__main__" and not all(address.startswith("inproc://") for address in workers):
        client.upload_file(__file__)  # workers in other processes import this module by name
    return list(client.gather(client.compute(tasks, retries=retries)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("in_dir")
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--row-number-column")
    parser.add_argument("--map", help="IN=COL,... (renames input columns)")
    parser.add_argument("--consistency")
    parser.add_argument("--username", help="log in (the password comes from CQLWIRE_PASSWORD)")
    parser.add_argument("--concurrency", type=int)
    parser.add_argument("--retries", type=int, default=2)
    parser.add_argument("--scheduler", default="threads",
                        help="threads, processes, synchronous, local:N or tcp://HOST:PORT")
    args = parser.parse_args(argv)
    options: Dict[str, object] = {name: value for name, value in (
        ("row_number_column", args.row_number_column), ("map", args.map),
        ("consistency", args.consistency), ("concurrency", args.concurrency),
        ("username", args.username)) if value is not None}
    target = dict(hosts=args.hosts, table=args.table, retries=args.retries, **options)
    if args.scheduler.startswith("local:"):
        from dask.distributed import Client, LocalCluster

        with LocalCluster(n_workers=int(args.scheduler[6:]), threads_per_worker=1,
                          dashboard_address=None) as cluster, Client(cluster):
            results = load_dataset(args.in_dir, **target)
    elif args.scheduler.startswith("tcp://"):
        from dask.distributed import Client

        with Client(args.scheduler):
            results = load_dataset(args.in_dir, **target)
    else:
        results = load_dataset(args.in_dir, scheduler=args.scheduler, **target)
    written = sum(r["written"] for r in results)
    rejected = sum(r["rejected"] for r in results)
    for result in results:
        for row, key, reason in result["rejects"]:
            print("%s: rejected row %d (%s): %s" % (result["file"], row, key, reason), file=sys.stderr)
    print("loaded %d rows from %d files, %d rejected" % (written, len(results), rejected),
          file=sys.stderr)
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
