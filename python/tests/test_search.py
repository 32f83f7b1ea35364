"""cqlwire.search against a real Cassandra: each query returns the keys the Python driver's own ANN
query returns, and recall@k is what NumPy computes from those keys and a brute-force ground truth
(given as an array, computed by the engine with exact=, or an HDF5 file's neighbors dataset written
by h5py); the same files through `cqlwire search` give the same answers, recall and CSV. Runs when
CQLWIRE_TEST_CASSANDRA names a server (see test_load.py); the argument checks need none."""
import csv
import json

import h5py
import numpy as np
import pytest

import cqlwire
from test_load import KEYSPACE, SERVER, live, login, run_cli, session  # noqa: F401 (fixture)

ROWS, QUERIES, K = 300, 12, 5


@pytest.fixture(scope="module")
def indexed(session):  # noqa: F811 (the fixture above)
    """A table with a vector index, loaded by cqlwire.load, and its vectors."""
    name = KEYSPACE + ".search_source"
    session.execute("DROP TABLE IF EXISTS %s" % name)
    session.execute("CREATE TABLE %s (id bigint PRIMARY KEY, emb vector<float, 8>)" % name)
    session.execute("CREATE CUSTOM INDEX ON %s (emb) USING 'StorageAttachedIndex' "
                    "WITH OPTIONS = {'similarity_function': 'euclidean'}" % name)
    data = np.random.default_rng(5).standard_normal((ROWS, 8), dtype=np.float32)
    cqlwire.load(data, hosts=SERVER, table=name, row_number_column="id", **login())
    return name, data


@live
def test_answers_and_recall_match_the_driver_and_numpy(session, indexed):  # noqa: F811
    name, data = indexed
    queries = np.random.default_rng(6).standard_normal((QUERIES, 8), dtype=np.float32)
    distances = ((queries[:, None, :] - data[None, :, :]) ** 2).sum(axis=2)
    truth = np.argsort(distances, axis=1, kind="stable")[:, :K]
    report = cqlwire.search(queries, hosts=SERVER, table=name, k=K, ground_truth=truth,
                            wait_for_index=60, concurrency=4, **login())
    assert (report.queries, report.k, report.errors) == (QUERIES, K, 0)
    assert "ANN OF" in report.statement and set(report.latency_ms) == {"p50", "p95", "p99", "max"}
    select = session.prepare("SELECT id FROM %s ORDER BY emb ANN OF ? LIMIT %d" % (name, K))
    recalls = []
    for (number, latency, keys, recall, error), query in zip(report.results, queries):
        driver_keys = [row.id for row in session.execute(select, [query.tolist()])]
        assert error is None and latency > 0
        assert keys == driver_keys
        recalls.append(len(set(driver_keys) & set(truth[number].tolist())) / K)
        assert recall == recalls[-1]
    assert report.recall == pytest.approx(np.mean(recalls))
    assert report.recall_min == min(recalls)
    assert report.warnings == []


@live
def test_a_consistency_the_server_lowers_is_reported_with_its_warning(indexed):
    name, data = indexed
    report = cqlwire.search(data[:4], hosts=SERVER, table=name, k=2, wait_for_index=60,
                            consistency="QUORUM", warmup=3, **login())
    assert report.errors == 0
    [(message, count)] = report.warnings
    assert count == 4, report.warnings
    assert "Consistency level QUORUM was requested" in message, message


@live
def test_a_query_file_and_its_dimension_check(session, indexed, tmp_path):  # noqa: F811
    name, data = indexed
    np.save(tmp_path / "queries.npy", data[:3])
    report = cqlwire.search(tmp_path / "queries.npy", hosts=SERVER, table=name, k=2,
                            wait_for_index=60, **login())
    select = session.prepare("SELECT id FROM %s ORDER BY emb ANN OF ? LIMIT 2" % name)
    expected = [[row.id for row in session.execute(select, [query.tolist()])] for query in data[:3]]
    assert [keys for _, _, keys, _, _ in report.results] == expected
    assert report.recall is None
    with pytest.raises(cqlwire.LoadError, match="elements") as error:
        cqlwire.search(data[:2, :4], hosts=SERVER, table=name, **login())
    assert error.value.kind == "mapping"
    with pytest.raises(cqlwire.LoadError, match="the queries 1..9 were asked, but the input ends at row 3"):
        cqlwire.search(tmp_path / "queries.npy", hosts=SERVER, table=name, query_rows=(1, 9), **login())


def euclidean_truth(queries, train):
    """The training rows of each query, nearest first (NumPy, float64, ties by row number)."""
    distances = ((queries[:, None, :].astype(np.float64) - train[None, :, :]) ** 2).sum(axis=2)
    return np.argsort(distances, axis=1, kind="stable")


def answers(path):
    """(query, recall, keys, error) of each line of a per-query CSV."""
    with open(path, newline="", encoding="utf-8") as lines:
        return [(r["query"], r["recall"], r["keys"], r["error"]) for r in csv.DictReader(lines)]


def same_as_the_command_line(report, binary, table, tmp_path, *args):
    """`cqlwire search ARGS` on `table` reports what `report` holds, and writes the same CSV."""
    done = run_cli(binary, "search", *args, "--table", table, "--k", K, "--quiet", "--format",
                   "json", "--results", tmp_path / "cli.csv")
    summary = json.loads(done.stdout)
    assert (summary["queries"], summary["errors"]) == (report.queries, report.errors)
    assert (summary["recall"], summary["recall_min"]) == (report.recall, report.recall_min)
    assert answers(tmp_path / "cli.csv") == answers(tmp_path / "python.csv")


@live
def test_exact_truth_of_a_query_range_is_numpy_s_and_the_command_line_s(indexed, tmp_path,
                                                                        cqlwire_binary):
    name, data = indexed
    queries = np.random.default_rng(7).standard_normal((QUERIES, 8), dtype=np.float32)
    np.save(tmp_path / "train.npy", data)
    np.save(tmp_path / "queries.npy", queries)
    truth = euclidean_truth(queries, data)
    report = cqlwire.search(tmp_path / "queries.npy", hosts=SERVER, table=name, k=K,
                            exact=tmp_path / "train.npy", query_rows=(3, 10),
                            results=tmp_path / "python.csv", wait_for_index=60, **login())
    assert [number for number, *_ in report.results] == list(range(3, 10))
    for number, _, keys, recall, error in report.results:
        assert error is None and recall == len(set(keys) & set(truth[number, :K].tolist())) / K
    assert report.recall == pytest.approx(np.mean([r[3] for r in report.results]))
    same_as_the_command_line(report, cqlwire_binary, name, tmp_path, tmp_path / "queries.npy",
                             "--exact", tmp_path / "train.npy", "--queries", "3..10")
    assert cqlwire.search(tmp_path / "queries.npy", hosts=SERVER, table=name, k=K,
                          exact=tmp_path / "train.npy", query_rows=range(3, 10),
                          **login()).recall == report.recall


@live
def test_an_hdf5_query_file_brings_its_own_neighbors(indexed, tmp_path, cqlwire_binary):
    name, data = indexed
    queries = np.random.default_rng(8).standard_normal((QUERIES, 8), dtype=np.float32)
    truth = euclidean_truth(queries, data)[:, :20]
    # Every other list is another query's: recall must follow the file, not a computation.
    lists = np.where((np.arange(QUERIES) % 2 == 0)[:, None], truth, np.roll(truth, 1, axis=0))
    path = tmp_path / "ann.hdf5"
    with h5py.File(path, "w") as ann:
        ann["train"] = data
        ann["test"] = queries
        ann["neighbors"] = lists.astype(np.int32)
        ann["distances"] = np.zeros(lists.shape, np.float32)
    report = cqlwire.search(path, hosts=SERVER, table=name, k=K, results=tmp_path / "python.csv",
                            wait_for_index=60, **login())
    assert report.queries == QUERIES
    for number, _, keys, recall, error in report.results:
        assert error is None and recall == len(set(keys) & set(lists[number, :K].tolist())) / K
    same_as_the_command_line(report, cqlwire_binary, name, tmp_path, path)
    # The same lists as ground_truth= for queries in another file.
    np.save(tmp_path / "queries.npy", queries)
    other = cqlwire.search(tmp_path / "queries.npy", hosts=SERVER, table=name, k=K,
                           ground_truth=path, **login())
    assert [r[3] for r in other.results] == [r[3] for r in report.results]


@live
def test_the_vector_column_is_named_by_vector_column_or_column(indexed, tmp_path, cqlwire_binary):
    name, data = indexed
    queries = data[:4]
    np.save(tmp_path / "queries.npy", queries)
    keys = []
    for keyword in ("vector_column", "column"):
        report = cqlwire.search(queries, hosts=SERVER, table=name, k=K, wait_for_index=60,
                                **{keyword: "emb"}, **login())
        assert report.errors == 0 and "ORDER BY emb ANN OF" in report.statement
        keys.append([r[2] for r in report.results])
        with pytest.raises(cqlwire.LoadError, match="column id is bigint, not a vector"):
            cqlwire.search(queries, hosts=SERVER, table=name, **{keyword: "id"}, **login())
    for flag in ("--vector-column", "--column"):
        done = run_cli(cqlwire_binary, "search", tmp_path / "queries.npy", "--table", name,
                       "--k", K, flag, "emb", "--results", tmp_path / "cli.csv", "--quiet")
        assert "ORDER BY emb ANN OF" in done.stdout
        with open(tmp_path / "cli.csv", newline="") as answers:
            rows = list(csv.DictReader(answers))
        keys.append([[int(key) for key in row["keys"].split()] for row in rows])
    assert keys[1:] == keys[:-1]
    with pytest.raises(cqlwire.LoadError, match="same keyword: give one"):
        cqlwire.search(queries, hosts=SERVER, table=name, vector_column="emb", column="emb")


def test_ground_truth_keywords_are_checked_before_connecting(tmp_path):
    queries = np.zeros((2, 8), np.float32)
    with pytest.raises(cqlwire.LoadError, match="give one"):
        cqlwire.search(queries, hosts="127.0.0.1:1", table="ks.t", ground_truth=tmp_path / "a",
                       exact=tmp_path / "b")
    with pytest.raises(cqlwire.LoadError, match="query_rows goes with a query file"):
        cqlwire.search(queries, hosts="127.0.0.1:1", table="ks.t", query_rows=(0, 1))
    np.save(tmp_path / "queries.npy", queries)
    with pytest.raises(TypeError, match="query_rows must be"):
        cqlwire.search(tmp_path / "queries.npy", hosts="127.0.0.1:1", table="ks.t", query_rows=3)
    with pytest.raises(cqlwire.LoadError, match="both the input and the output"):
        cqlwire.search(tmp_path / "queries.npy", hosts="127.0.0.1:1", table="ks.t",
                       results=tmp_path / "queries.npy")
    with pytest.raises(ValueError, match="must not be negative"):
        cqlwire.search(tmp_path / "queries.npy", hosts="127.0.0.1:1", table="ks.t",
                       query_rows=range(-5, 5))
    with pytest.raises(cqlwire.LoadError, match="integer ids .* not dtype float64"):
        cqlwire.search(queries, hosts="127.0.0.1:1", table="ks.t",
                       ground_truth=np.array([[0.5], [1.5]]))
    with pytest.raises(cqlwire.LoadError, match="above 2\\*\\*63 - 1"):
        cqlwire.search(queries, hosts="127.0.0.1:1", table="ks.t",
                       ground_truth=np.array([[2**64 - 1], [1]], dtype=np.uint64))


def test_a_wait_for_the_index_is_logged_before_it_starts(caplog):
    queries = np.zeros((2, 8), np.float32)
    with caplog.at_level("INFO", logger="cqlwire"):
        with pytest.raises(cqlwire.LoadFailed):
            cqlwire.search(queries, hosts="127.0.0.1:1", table="ks.t", wait_for_index=5)
    assert "waiting up to 5 s for the vector index of ks.t to answer" in caplog.text
