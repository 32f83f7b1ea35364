"""cqlwire.search against a real Cassandra: each query returns the keys the Python driver's own ANN
query returns, and recall@k is what NumPy computes from those keys and a brute-force ground truth.
Runs when CQLWIRE_TEST_CASSANDRA names a server (see test_load.py)."""
import numpy as np
import pytest

import cqlwire
from test_load import KEYSPACE, SERVER, live, login, session  # noqa: F401 (fixture)

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
