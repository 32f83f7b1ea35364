"""cqlwire.bench against a real Cassandra: the bundled VectorDBBench folder (fixtures/bench/folder)
through every stage gives what `cqlwire bench` gives on the same server (recall, NDCG, rows, levels),
as a dict; its result file reads back through vectordb-bench's TestResult; an existing table is
refused without drop=; a label filtered case; the index made before the load, its refusals
reported. Runs when CQLWIRE_TEST_CASSANDRA names a server (see test_load.py)."""
import json
import pathlib

import pytest

import cqlwire
from test_load import KEYSPACE, SERVER, live, login, run_cli, session  # noqa: F401 (fixture)

FOLDER = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "bench" / "folder"
FILES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "bench" / "files"


@live
def test_the_case_gives_the_commands_metrics_and_a_readable_result_file(session, tmp_path,  # noqa: F811
                                                                          cqlwire_binary):
    from vectordb_bench.models import TestResult

    table = KEYSPACE + ".bench_case"
    session.execute("DROP TABLE IF EXISTS %s" % table)
    result_file = tmp_path / "result.json"
    got = cqlwire.bench(FOLDER, hosts=SERVER, table=table, k=10, concurrency=[1, 3], duration=1,
                        output=result_file, db="test", **login())
    assert got["rows"] == 300 and got["stages"] == ["drop_old", "load", "search_serial",
                                                    "search_concurrent"]
    assert got["conc_num_list"] == [1, 3] and got["serial_errors"] == 0
    assert got["insert_duration"] > 0 and got["optimize_duration"] > 0
    read = TestResult.read_file(result_file).results[0].metrics
    assert (read.recall, read.ndcg, read.qps) == (got["recall"], got["ndcg"], got["qps"])

    with pytest.raises(cqlwire.LoadError, match="exists"):
        cqlwire.bench(FOLDER, hosts=SERVER, table=table, k=10, concurrency=[1], duration=1, **login())
    assert session.execute("SELECT count(*) FROM %s" % table).one()[0] == 300

    cli = run_cli(cqlwire_binary, "bench", str(FOLDER), "--table", table, "--k", "10", "--stages",
                  "search_serial,search_concurrent", "--concurrency", "2", "--duration", "1",
                  "--format", "json", "--quiet")
    searched = json.loads(cli.stdout)
    assert (searched["recall"], searched["ndcg"]) == (got["recall"], got["ndcg"])


def test_unknown_stages_databases_and_filters_are_refused_before_connecting():
    with pytest.raises(cqlwire.LoadError, match="no stage 'indexing'"):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", stages=["indexing"])
    with pytest.raises(cqlwire.LoadError, match="db is Cassandra or test"):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", db="Milvus")
    with pytest.raises(cqlwire.LoadError, match="bad filter 'int:2'"):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", filter="int:2")
    # A filter the folder has no ground truth of.
    with pytest.raises(cqlwire.LoadFailed, match="neighbors_int_30p.parquet"):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", filter="int:0.3")


def test_dataset_files_are_all_three_or_a_folder_and_checked_before_connecting():
    files = dict(train=FILES / "train.fvecs", test=FILES / "test.fvecs",
                 ground_truth=FILES / "neighbors.ivecs")
    with pytest.raises(cqlwire.LoadError, match="a dataset folder, or train, test and ground_truth"):
        cqlwire.bench(hosts="127.0.0.1:1", table="ks.t", train=files["train"])
    with pytest.raises(cqlwire.LoadError, match="a dataset folder, or train, test and ground_truth"):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", **files)
    with pytest.raises(cqlwire.LoadFailed, match="nonexistent"):
        cqlwire.bench(hosts="127.0.0.1:1", table="ks.t", **dict(files, test="/nonexistent/q.fvecs"))
    with pytest.raises(cqlwire.LoadError, match="k can be 10 at most"):
        cqlwire.bench(hosts="127.0.0.1:1", table="ks.t", **files)


def test_an_ann_benchmarks_file_is_a_dataset_whose_distance_is_checked_before_connecting():
    with pytest.raises(cqlwire.LoadError, match="'hamming' has no similarity function"):
        cqlwire.bench(FILES / "ann-hamming.hdf5", hosts="127.0.0.1:1", table="ks.t")
    with pytest.raises(cqlwire.LoadError, match="angular distance .* not euclidean"):
        cqlwire.bench(FILES / "ann-angular.hdf5", hosts="127.0.0.1:1", table="ks.t",
                      metric="euclidean")
    with pytest.raises(cqlwire.LoadError, match="not a dataset folder or an ann-benchmarks HDF5"):
        cqlwire.bench(FILES / "train.fvecs", hosts="127.0.0.1:1", table="ks.t")


@live
def test_dataset_files_give_what_the_command_gives(session, cqlwire_binary):  # noqa: F811
    table = KEYSPACE + ".bench_files"
    session.execute("DROP TABLE IF EXISTS %s" % table)
    got = cqlwire.bench(hosts=SERVER, table=table, k=10, concurrency=[2], duration=1,
                        train=FILES / "train.fvecs", test=FILES / "test.fvecs",
                        ground_truth=FILES / "neighbors.ivecs", **login())
    assert got["rows"] == 200 and got["serial_errors"] == 0
    cli = run_cli(cqlwire_binary, "bench", "--train", str(FILES / "train.fvecs"), "--test",
                  str(FILES / "test.fvecs"), "--ground-truth", str(FILES / "neighbors.ivecs"),
                  "--table", table, "--k", "10", "--stages", "search_serial", "--format", "json",
                  "--quiet")
    summary = json.loads(cli.stdout)
    assert (summary["recall"], summary["ndcg"]) == (got["recall"], got["ndcg"])


@live
def test_a_label_filtered_case_restricts_the_labels_column(session):  # noqa: F811
    table = KEYSPACE + ".bench_label"
    session.execute("DROP TABLE IF EXISTS %s" % table)
    got = cqlwire.bench(FOLDER, hosts=SERVER, table=table, k=10, concurrency=[1], duration=1,
                        filter="label:0.2", **login())
    assert got["filter"] == "labels = 'label_20p'" and got["serial_errors"] == 0
    rows = session.execute("SELECT labels FROM %s" % table)
    assert sum(1 for row in rows if row.labels == "label_20p") > 0


@live
def test_the_index_made_before_the_load_reports_what_the_server_refused(session):  # noqa: F811
    table = KEYSPACE + ".bench_first"
    session.execute("DROP TABLE IF EXISTS %s" % table)
    got = cqlwire.bench(FOLDER, hosts=SERVER, table=table, k=10, stages=["table", "index", "load"],
                        index_first=True, **login())
    assert got["stages"] == ["drop_old", "load"]
    assert got["rows"] + got["rejected"] == 300 and got["retried"] >= 0
    assert "CASSANDRA-21644" in got["rejected_reason"]
    assert session.execute("SELECT count(*) FROM %s" % table).one()[0] == got["rows"]


@pytest.mark.parametrize("keywords, message", [
    (dict(concurrency=[2**40]), "more than 100000"),
    (dict(concurrency=[10**6]), "more than 100000"),
    (dict(concurrency=[]), "no concurrency level"),
    (dict(duration=0), "duration of a level"),
    (dict(duration=10**12), "duration of a level"),
    (dict(index_wait=0), "index wait"),
    (dict(k=0), "k must be 1 to 1000"),
    (dict(index_options={"similarity_function": "euclidean"}), "choose it as the metric"),
    (dict(plot="c.svg", stages=["search_serial"]), "the stages run none"),
    (dict(label="a/b"), "names a file"),
])
def test_every_numeric_keyword_and_option_is_bounded_as_the_command_line_bounds_it(keywords, message):
    with pytest.raises(cqlwire.LoadError, match=message):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", **keywords)


def test_an_output_naming_a_dataset_file_or_the_other_output_is_refused(tmp_path):
    before = (FOLDER / "test.parquet").read_bytes()
    with pytest.raises(cqlwire.LoadError, match="write the output to another file"):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", output=FOLDER / "test.parquet")
    assert (FOLDER / "test.parquet").read_bytes() == before
    same = tmp_path / "r.json"
    with pytest.raises(cqlwire.LoadError, match="are one file"):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", output=same, plot=same)


@live
def test_progress_reports_each_stage_and_level(session):  # noqa: F811
    seen = []
    cqlwire.bench(FOLDER, hosts=SERVER, table=f"{KEYSPACE}.bench_progress", k=10, concurrency=[1, 2],
                  duration=1, drop=True, progress=seen.append, **login())
    started = [e["stage"] for e in seen if e["event"] == "started"]
    assert started == ["table", "load", "index", "optimize", "serial", "concurrent"]
    assert [e["concurrency"] for e in seen if e["event"] == "level"] == [1, 2]
    assert all(e["seconds"] >= 0 for e in seen if e["event"] == "finished")


@pytest.mark.parametrize("keywords, message", [
    (dict(insert_rate=500), "pass streaming=True"),
    (dict(search_stages=[50]), "pass streaming=True"),
    (dict(optimize_after_write=False), "pass streaming=True"),
    (dict(streaming=True, insert_rate=150), "a multiple of 100"),
    (dict(streaming=True, insert_rate=2**40), "a multiple of 100"),
    (dict(streaming=True, search_stages=[50, 100]), "0 to 99, not 100"),
    (dict(streaming=True, search_stages=[50, 50]), "50 is given twice"),
    (dict(streaming=True, read_duration=0), "read duration"),
    (dict(streaming=True, duration=5), "read_duration after the write"),
    (dict(streaming=True, rounds=2), "runs once"),
    (dict(streaming=True, stages=["search_serial"]), "its own stages"),
    (dict(streaming=True, plot="c.svg"), "Streaming page"),
])
def test_streaming_keywords_are_refused_as_the_command_line_refuses_them(keywords, message):
    with pytest.raises(cqlwire.LoadError, match=message):
        cqlwire.bench(FOLDER, hosts="127.0.0.1:1", table="ks.t", **keywords)


@live
def test_the_streaming_case_gives_one_entry_per_search_stage(session):  # noqa: F811
    table = KEYSPACE + ".bench_streaming"
    session.execute("DROP TABLE IF EXISTS %s" % table)
    got = cqlwire.bench(FOLDER, hosts=SERVER, table=table, k=10, streaming=True, insert_rate=300,
                        search_stages=[50], read_duration=1, concurrency=[1, 2], **login())
    assert got["st_search_stage_list"] == [50, 100, 110]
    assert len(got["st_recall_list"]) == len(got["st_conc_num_list_list"]) == 3
    assert got["st_ideal_insert_duration"] == 1
    assert got["streaming"]["written"] + got["streaming"]["rejected"] == 300
    assert got["streaming"]["insert_rate"] == 300 and got["streaming"]["achieved_rate"] > 0
