"""Every result object of the module survives pickle (what Dask, multiprocessing and
concurrent.futures do with a task's result): the copy is of the same class with every field equal,
and a LoadFailed keeps its kind and its report. Needs no server: the reports are built from their
fields, as unpickling builds them; test_dask_load.py pickles a real load's report across processes."""
import pathlib
import pickle

import pytest

import cqlwire


def fields(report):
    """Every public attribute of a report, properties included."""
    return {name: getattr(report, name) for name in dir(report) if not name.startswith("_")}


REPORTS = {
    "load": lambda: cqlwire.LoadReport(1000, 2, 3, 16000, 0.25, 998, [(5, "5", "too long"),
                                                                      (7, "7", "refused")]),
    "load_finished": lambda: cqlwire.LoadReport(10, 0, 0, 80, 0.0, None, []),
    "search": lambda: cqlwire.SearchReport(
        2, 10, 0.95, 0.9, 120.5, {"p50": 1.5, "p95": 2.0, "p99": 2.5, "max": 3.0}, 4, 1, 0.0166,
        [("the consistency was lowered", 2)], 0, 1.25, "SELECT id FROM ks.t ORDER BY emb ANN OF ? LIMIT 10",
        [(0, 1.5, [3, 1, 2], 0.9, None), (1, 2.0, ["'a'", "'b'"], None, "timed out")]),
    "unload": lambda: cqlwire.UnloadReport(100, 1, 3200, 17, 0, 0.5, pathlib.Path("out.parquet"), None,
                                           "parquet"),
    "unload_ids": lambda: cqlwire.UnloadReport(5, 0, 40, 1, 2, 0.1, pathlib.Path("v.npy"),
                                               pathlib.Path("ids.npy"), "npy"),
}


@pytest.mark.parametrize("name", sorted(REPORTS))
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_report_pickles_to_an_equal_copy(name, protocol):
    report = REPORTS[name]()
    copy = pickle.loads(pickle.dumps(report, protocol=protocol))
    assert type(copy) is type(report)
    assert fields(copy) == fields(report)
    assert repr(copy) == repr(report)


def test_the_fields_are_the_ones_given():
    report = REPORTS["load"]()
    assert (report.written, report.rejected, report.retried, report.bytes, report.resume_from) == (
        1000, 2, 3, 16000, 998)
    assert report.rejects[1] == (7, "7", "refused")
    assert report.rows_per_second == 4000.0
    search = REPORTS["search"]()
    assert search.results[0][2] == [3, 1, 2] and search.results[1][2] == ["'a'", "'b'"]
    assert search.latency_ms["p99"] == 2.5


def test_a_load_failure_pickles_with_its_kind_and_report():
    error = cqlwire.LoadFailed("the cluster is gone")
    error.kind = "server_gone"
    error.report = REPORTS["load"]()
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cqlwire.LoadFailed and str(copy) == "the cluster is gone"
    assert copy.kind == "server_gone" and fields(copy.report) == fields(error.report)
