"""cqlwire.unload against a real Cassandra: the pyarrow Table holds what the Python driver reads,
value by value, typed as `cqlwire unload`'s Parquet columns; a table unloaded and loaded again reads
back the same; with output= the files are byte for byte those `cqlwire unload` writes, and a run
that fails or is interrupted leaves no file. Runs when CQLWIRE_TEST_CASSANDRA names a server (see
test_load.py); the argument checks need none."""
import _thread
import datetime
import os
import threading

import numpy as np
import pyarrow as pa
import pytest

import cqlwire
from test_load import KEYSPACE, SERVER, live, login, run_cli, session  # noqa: F401 (fixture)

ROWS = 120


@pytest.fixture(scope="module")
def written(session):  # noqa: F811 (the fixture above)
    """A table written by the Python driver: keys, vectors, text with nulls, timestamps."""
    name = KEYSPACE + ".unload_source"
    session.execute("DROP TABLE IF EXISTS %s" % name)
    session.execute("CREATE TABLE %s (id bigint PRIMARY KEY, emb vector<float, 3>, note text, "
                    "at timestamp)" % name)
    insert = session.prepare("INSERT INTO %s (id, emb, note, at) VALUES (?, ?, ?, ?)" % name)
    rng = np.random.default_rng(3)
    for i in range(ROWS):
        at = datetime.datetime(2024, 1, 1) + datetime.timedelta(milliseconds=int(rng.integers(1 << 40)))
        session.execute(insert, (i * 11 - 300, rng.standard_normal(3, dtype=np.float32).tolist(),
                                 None if i % 5 == 0 else "n%d" % i, at))
    return name


def unload(table, **options):
    return cqlwire.unload(hosts=SERVER, table=table, **login(), **options)


def driver_rows(session, table):  # noqa: F811
    return {row.id: row for row in session.execute("SELECT id, emb, note, at FROM %s" % table)}


@live
def test_every_value_is_what_the_driver_reads(session, written):  # noqa: F811
    table = unload(written, page_rows=7, split=3, concurrency=2)
    assert table.schema.field("id").type == pa.int64()
    assert table.schema.field("emb").type == pa.list_(pa.float32(), 3)
    assert table.schema.field("note").type == pa.string()
    assert table.schema.field("at").type == pa.timestamp("ms", tz="UTC")
    expected = driver_rows(session, written)
    got = table.to_pylist()
    assert len(got) == ROWS and sorted(r["id"] for r in got) == sorted(expected)
    for row in got:
        want = expected[row["id"]]
        assert np.array_equal(np.asarray(row["emb"], np.float32), np.asarray(want.emb, np.float32))
        assert row["note"] == want.note
        assert row["at"].replace(tzinfo=None) == want.at


@live
def test_columns_and_a_condition_choose_what_is_read(session, written):  # noqa: F811
    table = unload(written, columns=["note", "id"], where="id > 500")
    assert table.column_names == ["note", "id"]
    expected = {key for key in driver_rows(session, written) if key > 500}
    assert set(table["id"].to_pylist()) == expected and table.num_rows == len(expected)


@live
def test_unload_then_load_reads_back_the_same(session, written):  # noqa: F811
    copy = KEYSPACE + ".unload_copy"
    session.execute("DROP TABLE IF EXISTS %s" % copy)
    session.execute("CREATE TABLE %s (id bigint PRIMARY KEY, emb vector<float, 3>, note text, "
                    "at timestamp)" % copy)
    report = cqlwire.load(unload(written), hosts=SERVER, table=copy, **login())
    assert (report.written, report.rejected) == (ROWS, 0)
    assert driver_rows(session, copy) == driver_rows(session, written)


@live
def test_an_unknown_table_raises_load_error():
    with pytest.raises(cqlwire.LoadError, match="does not exist") as error:
        unload(KEYSPACE + ".no_such_table")
    assert error.value.kind == "unknown_table"


@live
@pytest.mark.parametrize("name, ids, options", [
    ("table.parquet", None, ["--page-rows", "7"]),
    ("vectors.npy", "ids.npy", []),
    ("vectors.bin", "ids.csv", ["--format", "raw"]),
    ("vectors.hex", None, ["--format", "hex", "--vector-column", "emb"]),
    ("vectors.hex", None, ["--format", "hex", "--column", "emb"]),
])
def test_files_are_the_command_line_s_byte_for_byte(written, tmp_path, cqlwire_binary, name, ids,
                                                    options):
    python, cli = tmp_path / "python", tmp_path / "cli"
    python.mkdir()
    cli.mkdir()
    keywords = {"page_rows": 7} if "--page-rows" in options else {}
    if "--format" in options:
        keywords["format"] = options[options.index("--format") + 1]
    for flag in ("--vector-column", "--column"):
        if flag in options:
            keywords[flag[2:].replace("-", "_")] = options[options.index(flag) + 1]
    if ids:
        keywords["ids"] = python / ids
    report = unload(written, output=python / name, **keywords)
    run_cli(cqlwire_binary, "unload", "--table", written, "-o", cli / name, "--quiet", *options,
            *(["--ids", cli / ids] if ids else []))
    assert (python / name).read_bytes() == (cli / name).read_bytes()
    if ids:
        assert (python / ids).read_bytes() == (cli / ids).read_bytes()
    assert sorted(os.listdir(python)) == sorted(os.listdir(cli))
    assert (report.rows, report.skipped, report.retried) == (ROWS, 0, 0)
    assert report.format == keywords.get("format", os.path.splitext(name)[1][1:])
    assert report.output == python / name and report.bytes > 0 and report.ranges > 0
    assert report.rows_per_second > 0


@live
def test_a_failed_unload_leaves_the_file_as_it_was(written, tmp_path):
    target = tmp_path / "vectors.npy"
    target.write_bytes(b"before")
    # The writer refuses a column that is no vector once the temporary file exists.
    for keyword in ("vector_column", "column"):
        with pytest.raises(cqlwire.LoadError, match="not a vector") as error:
            unload(written, output=target, **{keyword: "note"})
        assert error.value.kind == "unsupported_type"
    assert target.read_bytes() == b"before" and os.listdir(tmp_path) == ["vectors.npy"]


@live
def test_ctrl_c_stops_the_unload_and_leaves_no_file(session, tmp_path):  # noqa: F811
    name = KEYSPACE + ".unload_many"
    session.execute("DROP TABLE IF EXISTS %s" % name)
    session.execute("CREATE TABLE %s (id bigint PRIMARY KEY, emb vector<float, 3>)" % name)
    data = np.random.default_rng(4).standard_normal((5000, 3), dtype=np.float32)
    cqlwire.load(data, hosts=SERVER, table=name, row_number_column="id", **login())
    started = threading.Event()

    def interrupt_once_writing():
        # The temporary file appears once the scan is connected and about to start.
        while not os.listdir(tmp_path):
            if started.wait(0.005):
                return
        _thread.interrupt_main()

    watcher = threading.Thread(target=interrupt_once_writing)
    watcher.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            unload(name, output=tmp_path / "many.parquet", page_rows=1, concurrency=1, split=1)
    finally:
        started.set()
        watcher.join()
    assert os.listdir(tmp_path) == []


def test_file_keywords_are_checked_before_connecting(tmp_path):
    def refused(message, **keywords):
        with pytest.raises(cqlwire.LoadError, match=message):
            cqlwire.unload(hosts="127.0.0.1:1", table="ks.t", **keywords)

    refused("go with output=", format="npy")
    refused("go with output=", ids=tmp_path / "ids.npy")
    refused("format must be", output=tmp_path / "a.npy", format="csv")
    refused("vector_column and ids go with", output=tmp_path / "a.parquet", column="emb")
    refused("vector_column and ids go with", output=tmp_path / "a.parquet", vector_column="emb")
    refused("format, vector_column and ids go with output=", vector_column="emb")
    refused("same keyword: give one", output=tmp_path / "a.npy", vector_column="emb", column="emb")
    refused("columns goes with", output=tmp_path / "a.npy", columns=["id"])
    refused("same file", output=tmp_path / "a.npy", ids=tmp_path / "a.npy")
    refused("same file", output=tmp_path / "a.npy", ids=f"{tmp_path}/./a.npy")
    refused("output must name a file", output="-")
    assert os.listdir(tmp_path) == []


def test_scan_sizes_are_bounded_before_connecting():
    def refused(message, **keywords):
        with pytest.raises(cqlwire.LoadError, match=message):
            cqlwire.unload(hosts="127.0.0.1:1", table="ks.t", **keywords)

    refused("split count must be between 1 and 100000, not 1000000000", split=10**9)
    refused("concurrency must be between 1 and 4096, not 1099511627776", concurrency=2**40)
    refused("page row count must be between 1 and 1000000", page_rows=10**12)
    refused("split count must be between 1 and 100000, not 0", split=0)
