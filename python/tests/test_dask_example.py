"""python/examples/dask_parquet.py in Dask's local modes: every output file equals what the
command line's `convert --format parquet` writes for the same input file, and its values are the
driver's own `VectorType.serialize` bytes."""
import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cassandra.cqltypes import lookup_casstype

dask = pytest.importorskip("dask")

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "dask_parquet.py"
SPEC = importlib.util.spec_from_file_location("dask_parquet", EXAMPLE)
example = sys.modules[SPEC.name] = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(example)

DIMENSION = 8
CQL_TYPE = "vector<float, %d>" % DIMENSION
# Relative path → (rows, rows per row group, every n-th vector null or 0).
FILES = {"part-0.parquet": (300, 128, 0), "part-1.parquet": (57, 57, 0),
         "year=2024/part-2.parquet": (200, 50, 7)}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A small multi-file dataset (a hive-style sub-directory, several row groups, null vectors in
    one file): id int64, name string, emb list<float>."""
    root = tmp_path_factory.mktemp("dataset")
    rng = np.random.default_rng(11)
    for index, (name, (rows, group, every)) in enumerate(sorted(FILES.items())):
        data = rng.standard_normal((rows, DIMENSION), dtype=np.float32)
        emb = [None if every and i % every == 3 else row for i, row in enumerate(data.tolist())]
        table = pa.table({
            "id": pa.array(np.arange(rows, dtype=np.int64) + 1000 * index),
            "name": pa.array(["row %d" % i for i in range(rows)]),
            "emb": pa.array(emb, type=pa.list_(pa.float32())),
        })
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path, row_group_size=group)
    return root


def cli_output(binary, source, target, on_null):
    """The command line's conversion of one file."""
    subprocess.run([binary, "convert", str(source), "--format", "parquet", "--column", "emb",
                    "--type", CQL_TYPE, "--on-null", on_null, "--quiet", "-o", str(target)],
                   check=True)
    return pq.read_table(target)


def check_against_cli(dataset, out, binary, on_null, counts):
    assert sorted(counts) == sorted(FILES)
    vector = lookup_casstype("org.apache.cassandra.db.marshal.VectorType("
                             "org.apache.cassandra.db.marshal.FloatType, %d)" % DIMENSION)
    for name in FILES:
        ours = pq.read_table(out / name)
        theirs = cli_output(binary, dataset / name, out.parent / (name.replace("/", "_") + ".cli"), on_null)
        assert ours.schema.names == ["id", "name", "emb_cql"]
        assert ours.schema.names == theirs.schema.names
        assert ours.schema.field("emb_cql").type == pa.binary()
        assert counts[name] == ours.num_rows == theirs.num_rows
        for column in ours.schema.names:
            assert ours.column(column).to_pylist() == theirs.column(column).to_pylist(), (name, column)
        source = pq.read_table(dataset / name)
        if on_null == "skip":
            source = source.filter(source.column("emb").is_valid())
        values, emb = ours.column("emb_cql").to_pylist(), source.column("emb").to_pylist()
        for i in (0, 1, len(values) // 2, len(values) - 1):
            expected = None if emb[i] is None else vector.serialize(emb[i], 4)
            assert values[i] == expected, (name, i)


@pytest.mark.parametrize("on_null", ["null", "skip"])
def test_threaded_scheduler_matches_cli(dataset, tmp_path, cqlwire_binary, on_null):
    out = tmp_path / "out"
    counts = example.convert_dataset(str(dataset), str(out), "emb", CQL_TYPE, on_null=on_null,
                                     batch_rows=64, scheduler="threads")
    check_against_cli(dataset, out, cqlwire_binary, on_null, counts)


def test_local_cluster_of_two_processes_matches_cli(dataset, tmp_path, cqlwire_binary):
    distributed = pytest.importorskip("dask.distributed")
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        counts = example.convert_dataset(str(dataset), str(out), "emb", CQL_TYPE, on_null="null",
                                         batch_rows=64)
    check_against_cli(dataset, out, cqlwire_binary, "null", counts)


def test_null_vector_is_refused_by_default(dataset, tmp_path):
    with pytest.raises(ValueError, match=r"part-2\.parquet: null vector at row 3 "):
        example.convert_dataset(str(dataset), str(tmp_path / "out"), "emb", CQL_TYPE,
                                scheduler="synchronous")
    assert not list((tmp_path / "out").rglob("part-2.parquet*"))  # nothing half-written


def test_a_wrong_type_names_the_file(dataset, tmp_path):
    with pytest.raises(ValueError, match=r"part-\d\.parquet: the target type vector<float, 9> has dimension 9"):
        example.convert_dataset(str(dataset), str(tmp_path / "out"), "emb", "vector<float, 9>",
                                on_null="null", scheduler="synchronous")


def test_the_script_runs_with_the_process_pool(dataset, tmp_path, cqlwire_binary):
    out = tmp_path / "out"
    subprocess.run([sys.executable, str(EXAMPLE), str(dataset), str(out), "--column", "emb", "--type",
                    CQL_TYPE, "--on-null", "null", "--scheduler", "processes"], check=True)
    check_against_cli(dataset, out, cqlwire_binary, "null",
                      {name: pq.read_metadata(out / name).num_rows for name in FILES})
