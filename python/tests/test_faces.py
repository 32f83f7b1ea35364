"""Every job refuses the same bad inputs with one answer through both faces: what the command line
exits 2 on raises ``UsageError`` (``LoadError``), what it exits 1 on raises ``JobFailed``
(``LoadFailed``). The hosts are a port nothing listens on, so nothing connects."""

import shutil
import subprocess

import pytest

import cqlwire
from conftest import FIXTURES

NOWHERE = "127.0.0.1:1"

# (job, command-line flags, Python keywords, the answer). "{tmp}", "{input}", "{queries}",
# "{truth}" and "{folder}" name the test's own copies of the fixtures; load reads {input}, search
# {queries}, bench {folder}.
CASES = [
    ("load", ["--concurrency", "0"], {"concurrency": 0}, "usage"),
    ("load", ["--concurrency", str(2**40)], {"concurrency": 2**40}, "usage"),
    ("load", ["--concurrency=-1"], {"concurrency": -1}, "usage"),
    ("load", ["--rejects", "{input}"], {"rejects": "{input}"}, "usage"),
    ("load", ["--rows", "0..5", "--shard", "1/2"], {"rows": "0..5", "shard": "1/2"}, "usage"),
    ("load", ["--rows", "5..2"], {"rows": "5..2"}, "usage"),
    ("load", ["--shard", "3/2"], {"shard": "3/2"}, "usage"),
    ("load", ["--map", "=emb"], {"map": "=emb"}, "usage"),
    ("load", ["--input-format", "csv"], {"input_format": "csv"}, "usage"),
    ("load", ["--timeout", "0"], {"timeout": 0}, "usage"),
    ("load", ["--tls-cert", "{tmp}/c.pem"], {"tls_cert": "{tmp}/c.pem"}, "usage"),
    ("load", ["--rejects", "{tmp}/r.csv"], {"rejects": "{tmp}/r.csv"}, "failure"),
    ("search", ["--k", "0"], {"k": 0}, "usage"),
    ("search", ["--k", str(2**40)], {"k": 2**40}, "usage"),
    ("search", ["--concurrency", "0"], {"concurrency": 0}, "usage"),
    ("search", ["--warmup=-1"], {"warmup": -1}, "usage"),
    ("search", ["--results", "{queries}"], {"results": "{queries}"}, "usage"),
    ("search", ["--ground-truth", "{truth}", "--results", "{truth}"],
     {"ground_truth": "{truth}", "results": "{truth}"}, "usage"),
    ("search", ["--ground-truth", "{truth}", "--exact", "{queries}"],
     {"ground_truth": "{truth}", "exact": "{queries}"}, "usage"),
    ("search", ["--exact", "{tmp}"], {"exact": "{tmp}"}, "usage"),
    ("search", ["--queries", "5..2"], {"query_rows": "5..2"}, "usage"),
    ("search", ["--input-format", "csv"], {"input_format": "csv"}, "usage"),
    ("search", ["--results", "{tmp}/no/such/folder/r.csv"],
     {"results": "{tmp}/no/such/folder/r.csv"}, "failure"),
    ("search", [], {}, "failure"),
    ("unload", ["--split", "0"], {"split": 0}, "usage"),
    ("unload", ["--split", str(10**9)], {"split": 10**9}, "usage"),
    ("unload", ["--concurrency", str(2**40)], {"concurrency": 2**40}, "usage"),
    ("unload", ["--page-rows", "0"], {"page_rows": 0}, "usage"),
    ("unload", ["-o", "{tmp}/a.npy", "--ids", "{tmp}/a.npy"],
     {"output": "{tmp}/a.npy", "ids": "{tmp}/a.npy"}, "usage"),
    ("unload", ["-o", "{tmp}/a.npy", "--columns", "id"],
     {"output": "{tmp}/a.npy", "columns": ["id"]}, "usage"),
    ("unload", ["-o", "{tmp}/a.parquet", "--vector-column", "emb"],
     {"output": "{tmp}/a.parquet", "vector_column": "emb"}, "usage"),
    ("unload", ["-o", "{tmp}/a.npy", "--format", "csv"],
     {"output": "{tmp}/a.npy", "format": "csv"}, "usage"),
    ("unload", ["-o", "{tmp}/a.parquet"], {"output": "{tmp}/a.parquet"}, "failure"),
    ("bench", ["--concurrency", str(2**40)], {"concurrency": [2**40]}, "usage"),
    ("bench", ["--concurrency", "0"], {"concurrency": [0]}, "usage"),
    ("bench", ["--duration", "0"], {"duration": 0}, "usage"),
    ("bench", ["--k", "0"], {"k": 0}, "usage"),
    ("bench", ["--stages", "load", "--plot", "{tmp}/qps.svg"],
     {"stages": ["load"], "plot": "{tmp}/qps.svg"}, "usage"),
    ("bench", ["--stages", "load", "--index-option", "similarity_function=cosine"],
     {"stages": ["load"], "index_options": {"similarity_function": "cosine"}}, "usage"),
    ("bench", ["-o", "{folder}/test.parquet"], {"output": "{folder}/test.parquet"}, "usage"),
    ("bench", ["-o", "{tmp}/no/such/folder/result.json"],
     {"output": "{tmp}/no/such/folder/result.json"}, "failure"),
]


@pytest.fixture
def paths(tmp_path):
    """The test's own copies of the fixtures, so that no refusal can touch the repository's."""
    shutil.copy(FIXTURES / "convert/sample/train.npy", tmp_path / "train.npy")
    shutil.copy(FIXTURES / "search/test.npy", tmp_path / "queries.npy")
    shutil.copy(FIXTURES / "search/neighbors_euclidean.bin", tmp_path / "truth.bin")
    shutil.copytree(FIXTURES / "bench/folder", tmp_path / "folder")
    return {
        "tmp": str(tmp_path),
        "input": str(tmp_path / "train.npy"),
        "queries": str(tmp_path / "queries.npy"),
        "truth": str(tmp_path / "truth.bin"),
        "folder": str(tmp_path / "folder"),
    }


def filled(value, paths):
    """`value` with the paths put in (strings, and the strings of lists and dicts)."""
    if isinstance(value, str):
        return value.format(**paths)
    if isinstance(value, list):
        return [filled(item, paths) for item in value]
    if isinstance(value, dict):
        return {key: filled(item, paths) for key, item in value.items()}
    return value


SOURCES = {"load": "{input}", "search": "{queries}", "bench": "{folder}", "unload": None}


def contents(folder):
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("job, flags, keywords, answer", CASES)
def test_both_faces_give_one_answer(job, flags, keywords, answer, paths, cqlwire_binary,
                                    tmp_path, monkeypatch):
    monkeypatch.delenv("CQLWIRE_PASSWORD", raising=False)
    before = contents(tmp_path)
    source = SOURCES[job] and filled(SOURCES[job], paths)
    command = [cqlwire_binary, job, *([source] if source else []), "--hosts", NOWHERE,
               "--table", "ks.t", *filled(flags, paths)]
    ran = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         timeout=60)
    assert "error" in ran.stderr, ran.stderr
    arguments = [source] if source else []
    with pytest.raises((cqlwire.UsageError, cqlwire.JobFailed)) as raised:
        getattr(cqlwire, job)(*arguments, hosts=NOWHERE, table="ks.t", **filled(keywords, paths))
    python = "usage" if isinstance(raised.value, cqlwire.UsageError) else "failure"
    cli = {2: "usage", 1: "failure"}.get(ran.returncode, f"exit {ran.returncode}")
    assert (cli, python) == (answer, answer), (ran.stderr, str(raised.value))
    # A refusal writes nothing, and no input is touched.
    assert contents(tmp_path) == before


def test_the_first_names_are_the_same_classes():
    assert cqlwire.LoadError is cqlwire.UsageError
    assert cqlwire.LoadFailed is cqlwire.JobFailed
    assert issubclass(cqlwire.UsageError, ValueError)
    assert issubclass(cqlwire.JobFailed, RuntimeError)


def test_a_rejects_file_that_is_the_input_is_refused_before_any_row(tmp_path):
    source = tmp_path / "train.npy"
    shutil.copy(FIXTURES / "convert/sample/train.npy", source)
    before = source.read_bytes()
    with pytest.raises(cqlwire.LoadError, match=r"is the input.*\(rejects=\)") as raised:
        cqlwire.load(source, hosts=NOWHERE, table="ks.t", rejects=tmp_path / "." / "train.npy")
    assert raised.value.kind == "invalid_option"
    assert source.read_bytes() == before
