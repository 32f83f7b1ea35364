"""cqlwire.unload against a real Cassandra: the pyarrow Table holds what the Python driver reads,
value by value, typed as `cqlwire unload`'s Parquet columns; a table unloaded and loaded again reads
back the same. Runs when CQLWIRE_TEST_CASSANDRA names a server (see test_load.py)."""
import datetime

import numpy as np
import pyarrow as pa
import pytest

import cqlwire
from test_load import KEYSPACE, SERVER, live, login, session  # noqa: F401 (fixture)

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
