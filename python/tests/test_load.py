"""cqlwire.load against a real Cassandra: every row read back with the Python driver equals the
NumPy/pyarrow input; rejected rows come back with their reasons; usage errors raise LoadError and a
damaged input LoadFailed with a true resume point. The live tests run when CQLWIRE_TEST_CASSANDRA
names a server (HOST:PORT; fixtures/load/live-tests.sh sets it, with CQLWIRE_TEST_USER and
CQLWIRE_TEST_PASSWORD for its login); the checks of the arguments need no server."""
import os
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import cqlwire

SERVER = os.environ.get("CQLWIRE_TEST_CASSANDRA")
KEYSPACE = "cqlwire_python"
live = pytest.mark.skipif(not SERVER, reason="CQLWIRE_TEST_CASSANDRA names no server")


def login():
    """The keywords of the test login, when the server wants one."""
    user = os.environ.get("CQLWIRE_TEST_USER")
    return {"username": user, "password": os.environ["CQLWIRE_TEST_PASSWORD"]} if user else {}


def run_cli(binary, *args):
    """`cqlwire ARGS --hosts SERVER` with the test login; the finished process (checked: exit 0)."""
    import subprocess

    credentials = login()
    command = [binary, *map(str, args), "--hosts", SERVER]
    env = dict(os.environ)
    if credentials:
        command += ["--username", credentials["username"]]
        env["CQLWIRE_PASSWORD"] = credentials["password"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def session():
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    host, _, port = SERVER.rpartition(":")
    credentials = login()
    auth = PlainTextAuthProvider(credentials["username"], credentials["password"]) if credentials else None
    cluster = Cluster([host], port=int(port), auth_provider=auth, protocol_version=5)
    session = cluster.connect()
    session.execute("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}" % KEYSPACE)
    yield session
    cluster.shutdown()


@pytest.fixture
def table(session, request):
    """A fresh table named after the test: id bigint key, emb vector<float, 4>, note text."""
    name = "%s.%s" % (KEYSPACE, request.node.name.replace("[", "_").replace("]", "")[:40])
    session.execute("DROP TABLE IF EXISTS %s" % name)
    session.execute("CREATE TABLE %s (id bigint PRIMARY KEY, emb vector<float, 4>, note text)" % name)
    return name


def load(source, table, **options):
    return cqlwire.load(source, hosts=SERVER, table=table, **login(), **options)


def read_back(session, table):
    """{id: (emb as float32 array, note)} as the Python driver reads the table."""
    rows = session.execute("SELECT id, emb, note FROM %s" % table)
    return {row.id: (np.asarray(row.emb, dtype=np.float32), row.note) for row in rows}


def vectors(rows, seed=7):
    return np.random.default_rng(seed).standard_normal((rows, 4), dtype=np.float32)


@live
def test_numpy_rows_get_global_row_numbers(session, table):
    data = vectors(300)
    report = load(data, table, row_number_column="id", first_row=1000)
    assert (report.written, report.rejected, report.resume_from) == (300, 0, None)
    assert report.bytes == 300 * (4 * 4 + 8)  # the vector and the bigint key of each row
    back = read_back(session, table)
    assert sorted(back) == list(range(1000, 1300))
    for i, row in enumerate(data):
        assert np.array_equal(back[1000 + i][0], row)


@live
def test_numpy_rows_with_ids_in_any_layout(session, table):
    data = np.asfortranarray(vectors(50).astype(">f8"))
    ids = np.arange(50, dtype=np.int32) * 3 + 1
    report = load(data, table, ids=ids)
    assert report.written == 50
    back = read_back(session, table)
    assert sorted(back) == sorted(ids.tolist())
    for key, row in zip(ids.tolist(), data):
        assert np.array_equal(back[key][0], row.astype(np.float32))


@live
@pytest.mark.parametrize("shape", ["table", "record_batch"])
def test_pyarrow_columns_map_by_name(session, table, shape):
    data = vectors(20)
    columns = {"key": pa.array(np.arange(20, dtype=np.int64)),
               "emb": pa.FixedSizeListArray.from_arrays(pa.array(data.ravel()), 4),
               "note": pa.array(["row %d" % i for i in range(20)])}
    source = pa.table(columns) if shape == "table" else pa.RecordBatch.from_pydict(columns)
    report = load(source, table, map={"key": "id"}, concurrency=4, consistency="ONE")
    assert (report.written, report.rejected) == (20, 0)
    back = read_back(session, table)
    assert sorted(back) == list(range(20))
    for i in range(20):
        assert np.array_equal(back[i][0], data[i]) and back[i][1] == "row %d" % i


@live
def test_batches_leave_the_table_single_rows_leave(session, table):
    # Rows 300.. write the ids of rows 0.. again: the later row wins in batches as row by row.
    data = vectors(500)
    ids = np.arange(500, dtype=np.int64) % 300
    report = load(data, table, ids=ids, batch=16)
    assert (report.written, report.rejected, report.resume_from) == (500, 0, None)
    batched = read_back(session, table)
    session.execute("TRUNCATE %s" % table)
    load(data, table, ids=ids)
    single = read_back(session, table)
    assert sorted(batched) == sorted(single) == list(range(300))
    for key, (emb, note) in single.items():
        assert np.array_equal(emb, data[key + 300 if key < 200 else key])
        assert np.array_equal(batched[key][0], emb) and batched[key][1] == note


@live
def test_a_file_in_part_keeps_its_row_numbers(session, table, tmp_path):
    data = vectors(10)
    np.save(tmp_path / "base.npy", data)
    report = load(str(tmp_path / "base.npy"), table, row_number_column="id", rows="2..5")
    assert report.written == 3
    assert sorted(read_back(session, table)) == [2, 3, 4]
    report = load(tmp_path / "base.npy", table, row_number_column="id", shard=(2, 2))
    assert sorted(read_back(session, table)) == [2, 3, 4, 5, 6, 7, 8, 9]


@live
def test_rejected_rows_come_back_with_their_reasons(session, table, tmp_path):
    source = pa.table({"id": pa.array([1, None, 3], pa.int64()),
                       "emb": pa.array([[1, 2, 3, 4]] * 3, pa.list_(pa.float32()))})
    report = load(source, table, rejects=tmp_path / "rejects.csv")
    assert (report.written, report.rejected, report.resume_from) == (2, 1, None)
    [(row, key, reason)] = report.rejects
    assert (row, key) == (1, "id=null") and "null" in reason
    lines = (tmp_path / "rejects.csv").read_text().splitlines()
    assert lines[0] == "row,key,error" and lines[1].startswith("1,id=null,")
    assert sorted(read_back(session, table)) == [1, 3]


@live
def test_usage_errors_raise_load_error(session, table):
    with pytest.raises(cqlwire.LoadError, match="does not exist") as error:
        load(vectors(2), KEYSPACE + ".no_such_table", row_number_column="id")
    assert error.value.kind == "unknown_table" and error.value.report is None
    with pytest.raises(cqlwire.LoadError) as error:
        load(vectors(2), table, row_number_column="nope")
    assert isinstance(error.value, ValueError)
    # The setting that fixes an error is named as Python spells it, never as a flag.
    with pytest.raises(cqlwire.LoadError, match=r"\(map=\)$") as error:
        load(pa.table({"id": pa.array([1], pa.int64()),
                       "emb": pa.array([[1.0, 2.0, 3.0, 4.0]], pa.list_(pa.float32(), 4))}),
             table, map={"nope": "id"})
    assert "--" not in str(error.value)
    assert session.execute("SELECT count(*) FROM %s" % table).one()[0] == 0


@live
def test_a_damaged_input_stops_with_a_true_resume_point(session, table):
    # Row 2500 is ragged: the rows before it load, the run stops there and says so.
    data = vectors(3000).tolist()
    data[2500] = data[2500][:3]
    source = pa.table({"id": pa.array(np.arange(3000, dtype=np.int64)),
                       "emb": pa.array(data, pa.list_(pa.float32()))})
    with pytest.raises(cqlwire.LoadFailed, match="row 2500") as error:
        load(source, table)
    report = error.value.report
    assert error.value.kind == "input" and report.resume_from is not None
    loaded = sorted(read_back(session, table))
    assert loaded[:report.resume_from] == list(range(report.resume_from))
    assert report.written == len(loaded) and report.resume_from <= 2500


@live
def test_the_gil_is_released_while_loading(session, table):
    data = vectors(20000)
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    started = time.perf_counter()
    try:
        report = load(data, table, row_number_column="id")
    finally:
        done.set()
        ticker.join()
    elapsed = time.perf_counter() - started
    assert report.written == 20000
    during = [t for t in ticks if started < t < started + elapsed]
    # A thread that held the GIL throughout would let the ticker run only at its start and end.
    assert len(during) > elapsed * 100, (len(during), elapsed)


def test_options_are_checked_before_connecting():
    # Nothing listens on port 9 of 127.0.0.1: each error must come before any connection attempt.
    target = {"hosts": "127.0.0.1:9", "table": "ks.t"}
    with pytest.raises(cqlwire.LoadError, match="file source") as error:
        cqlwire.load(vectors(2), rows="0..1", **target)
    assert error.value.kind == "invalid_option"
    with pytest.raises(cqlwire.LoadError, match="consistency"):
        cqlwire.load(vectors(2), consistency="MOST", **target)
    with pytest.raises(cqlwire.LoadError, match="KEYSPACE.TABLE"):
        cqlwire.load(vectors(2), hosts="127.0.0.1:9", table="t")
    with pytest.raises(cqlwire.LoadError, match="ids"):
        cqlwire.load("x.npy", ids=[1], **target)
    with pytest.raises(ValueError, match="1 ids for 2 rows"):
        cqlwire.load(vectors(2), ids=[1], **target)
    with pytest.raises(ValueError, match="START..END"):
        cqlwire.load("x.npy", rows="5", **target)
    with pytest.raises(TypeError, match="source must be"):
        cqlwire.load(3.5, **target)
    with pytest.raises(TypeError):
        cqlwire.load(vectors(2), row_number="id", **target)
    with pytest.raises(ValueError, match="past 2\\*\\*64 - 1"):
        cqlwire.load(vectors(2), first_row=2**64 - 1, **target)
    with pytest.raises(ValueError, match="must not be negative"):
        cqlwire.load("x.npy", rows=range(-5, 3), **target)
    with pytest.raises(TypeError, match="ids must be integers or whole floats"):
        cqlwire.load(vectors(2), ids=["a", "b"], **target)
    with pytest.raises(ValueError, match="one-dimensional"):
        cqlwire.load(vectors(2), ids=[[1], [2]], **target)
    with pytest.raises(cqlwire.LoadError, match=r"1 to 1024 rows, not 0 \(batch=\)$"):
        cqlwire.load(vectors(2), batch=0, **target)
    with pytest.raises(cqlwire.LoadError, match=r"\(batch_bytes=\)$"):
        cqlwire.load(vectors(2), batch=16, batch_bytes=0, **target)


@live
def test_an_empty_table_loads_no_row_as_an_empty_array_does(session, table):
    empty = pa.table({"id": pa.array([], pa.int64()),
                      "emb": pa.array([], pa.list_(pa.float32(), 4))})
    report = load(empty, table)
    assert (report.written, report.rejected, report.resume_from) == (0, 0, None)
    report = load(np.zeros((0, 4), np.float32), table, row_number_column="id")
    assert (report.written, report.rejected) == (0, 0)


@live
def test_a_table_without_vectors_loads_its_columns_and_adds_to_counters(session, table):
    ids = pa.array(np.arange(-2, 8, dtype=np.int64))
    report = load(pa.table({"id": ids, "note": pa.array(["n%d" % i for i in ids.to_pylist()])}), table)
    assert (report.written, report.rejected) == (10, 0)
    back = read_back(session, table)
    assert {key: note for key, (_, note) in back.items()} == {i: "n%d" % i for i in range(-2, 8)}
    counters = table + "_hits"
    session.execute("DROP TABLE IF EXISTS %s" % counters)
    session.execute("CREATE TABLE %s (id bigint PRIMARY KEY, hits counter)" % counters)
    adds = pa.table({"id": ids, "hits": pa.array(np.arange(10, dtype=np.int64) * 5)})
    for _ in range(2):
        report = load(adds, counters, query="UPDATE %s SET hits = hits + ? WHERE id = ?" % counters)
        assert (report.written, report.rejected) == (10, 0)
    got = {row.id: row.hits for row in session.execute("SELECT id, hits FROM %s" % counters)}
    assert got == {i - 2: 10 * i for i in range(10)}


@live
def test_ids_the_key_cannot_hold_are_rejected_never_rounded_or_wrapped(session, table):
    data = vectors(6)
    floats = np.array([0.0, 0.5, 1e30, -1e30, np.nan, 5.0])
    report = load(data, table, ids=floats)
    assert (report.written, report.rejected) == (2, 4)
    assert sorted(report.rejects)[0][0] == 1
    unsigned = np.array([2**64 - 1, 2**63, 7], dtype=np.uint64)
    report = load(data[:3], table, ids=unsigned)
    assert (report.written, report.rejected) == (1, 2)
    back = read_back(session, table)
    assert sorted(back) == [0, 5, 7]
    assert np.array_equal(back[5][0], data[5]) and np.array_equal(back[7][0], data[2])


@live
def test_ctrl_c_drains_the_run_and_raises_keyboard_interrupt(session, table):
    import _thread

    data = vectors(200000)
    timer = threading.Timer(1.5, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt) as interrupt:
        load(data, table, row_number_column="id")
    timer.join()
    loaded = session.execute("SELECT count(*) FROM %s" % table).one()[0]
    assert 0 < loaded < 200000
    report = interrupt.value.report
    assert report.resume_from is not None and report.resume_from <= report.written == loaded
    assert interrupt.value.args == ('interrupted; resume with rows="%d.."' % report.resume_from,)
    # The rows below the resume point are all in the table.
    below = session.execute("SELECT count(*) FROM %s WHERE id < %d ALLOW FILTERING"
                            % (table, report.resume_from)).one()[0]
    assert below == report.resume_from
