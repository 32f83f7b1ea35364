"""python/examples/dask_load.py against a real Cassandra: a three-file Parquet dataset loaded by a
LocalCluster of two worker processes fills the table with every row exactly once under its global
row number, values equal to the files' as the Python driver reads them; a task that fails after
writing is run again by Dask and the table is the same. Runs when CQLWIRE_TEST_CASSANDRA names a
server (see test_load.py)."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cqlwire
from test_load import KEYSPACE, SERVER, live, login, session  # noqa: F401 (fixture)

distributed = pytest.importorskip("dask.distributed")

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "dask_load.py"
SPEC = importlib.util.spec_from_file_location("dask_load", EXAMPLE)
example = sys.modules[SPEC.name] = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(example)

# Relative path → (rows, rows per row group).
FILES = {"part-0.parquet": (700, 256), "part-1.parquet": (45, 45), "year=2024/part-2.parquet": (300, 100)}
TOTAL = sum(rows for rows, _ in FILES.values())


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """The files (emb list<float>, note string) and all their vectors in global row order."""
    root = tmp_path_factory.mktemp("dataset")
    rng = np.random.default_rng(21)
    vectors = []
    for name, (rows, group) in sorted(FILES.items()):
        data = rng.standard_normal((rows, 4), dtype=np.float32)
        vectors.append(data)
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"emb": pa.array(data.tolist(), pa.list_(pa.float32())),
                                 "note": pa.array(["%s:%d" % (name, i) for i in range(rows)])}),
                       path, row_group_size=group)
    return root, np.concatenate(vectors)


@pytest.fixture
def table(session):  # noqa: F811 (the fixture above)
    name = KEYSPACE + ".dask_load"
    session.execute("DROP TABLE IF EXISTS %s" % name)
    session.execute("CREATE TABLE %s (id bigint PRIMARY KEY, emb vector<float, 4>, note text)" % name)
    return name


def check_table(session, name, root, vectors):  # noqa: F811
    """Every row once, under its global row number, with the file's values."""
    rows = list(session.execute("SELECT id, emb, note FROM %s" % name))
    assert len(rows) == TOTAL and sorted(row.id for row in rows) == list(range(TOTAL))
    for row in rows:
        assert np.array_equal(np.asarray(row.emb, np.float32), vectors[row.id])
    starts = dict(zip(sorted(FILES), example.first_rows(example.parquet_files(str(root)))))
    for row in rows:
        name_, index = row.note.rsplit(":", 1)
        assert row.id == starts[name_] + int(index)



@live
def test_a_local_cluster_of_processes_loads_every_row_once(session, dataset, table):
    root, vectors = dataset
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        results = example.load_dataset(str(root), SERVER, table, row_number_column="id", **login())
    assert sorted(r["written"] for r in results) == sorted(rows for rows, _ in FILES.values())
    assert all(r["rejected"] == 0 for r in results)
    check_table(session, table, root, vectors)


@live
def test_a_task_run_again_after_a_failure_rewrites_the_same_rows(session, dataset, table, monkeypatch):
    root, vectors = dataset
    failed = []
    load = cqlwire.load

    def load_then_fail_once(source, **options):
        report = load(source, **options)
        if options["first_row"] == FILES["part-0.parquet"][0] and not failed:
            failed.append(report.written)
            raise cqlwire.LoadFailed("the worker was lost after writing")
        return report

    monkeypatch.setattr(cqlwire, "load", load_then_fail_once)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        results = example.load_dataset(str(root), SERVER, table, retries=1,
                                       row_number_column="id", **login())
    assert failed == [FILES["part-1.parquet"][0]]  # the whole file was written, then it failed
    assert sum(r["written"] for r in results) == TOTAL
    check_table(session, table, root, vectors)


@live
def test_the_script_with_the_threaded_scheduler(session, dataset, table):
    root, vectors = dataset
    credentials = login()
    command = [sys.executable, str(EXAMPLE), str(root), "--hosts", SERVER, "--table", table,
               "--row-number-column", "id", "--scheduler", "threads"]
    env = None
    if credentials:  # the password goes through the environment, as for the command line
        command += ["--username", credentials["username"]]
        env = dict(os.environ, CQLWIRE_PASSWORD=credentials["password"])
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "loaded %d rows from 3 files, 0 rejected" % TOTAL in done.stderr
    check_table(session, table, root, vectors)


@live
def test_a_task_of_a_process_cluster_returns_the_load_report(session, dataset, table):
    root, vectors = dataset
    files = example.parquet_files(str(root))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        futures = [client.submit(cqlwire.load, pq.read_table(path), hosts=SERVER, table=table,
                                 row_number_column="id", first_row=start, **login())
                   for path, start in zip(files, example.first_rows(files))]
        reports = client.gather(futures)
    assert all(type(report) is cqlwire.LoadReport for report in reports)
    assert sorted(report.written for report in reports) == sorted(rows for rows, _ in FILES.values())
    assert all(report.rejected == 0 and report.resume_from is None for report in reports)
    check_table(session, table, root, vectors)
