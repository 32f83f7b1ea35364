"""encode / decode / explain against the driver fixture corpus (bytes from cassandra.cqltypes)."""
import subprocess

import pytest
from cassandra.cqltypes import lookup_casstype
from conftest import cases

import cqlwire

CORPUS = cases("driver")


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c["type"] + ":" + c["hex"][:16])
def test_driver_corpus(case):
    data = bytes.fromhex(case["hex"])
    value = cqlwire.decode(case["type"], data, udts=case["udts"])
    assert value == case["json"]
    assert cqlwire.encode(case["type"], value, udts=case["udts"]) == data


def test_python_values():
    assert cqlwire.encode("varint", 2**100) == cqlwire.encode("varint", str(2**100))
    assert cqlwire.decode("varint", cqlwire.encode("varint", 2**100)) == str(2**100)
    assert cqlwire.encode("blob", b"\x01\x02") == b"\x01\x02"
    assert cqlwire.decode("blob", b"\x01\x02") == "0x0102"
    assert cqlwire.encode("float", float("nan")) == bytes.fromhex("7fc00000")
    assert cqlwire.decode("double", bytes.fromhex("7ff0000000000000")) == "Infinity"
    assert cqlwire.encode("map<text, int>", {"a": 1}) == cqlwire.encode("map<text, int>", [["a", 1]])
    udt = ["addr(street text, zip int)"]
    assert cqlwire.decode("addr", cqlwire.encode("addr", {"street": "x", "zip": 1}, udts=udt), udts=udt) == {"street": "x", "zip": 1}
    assert cqlwire.decode("int", b"") == {"$empty": True}


def test_python_sets_and_maps_keyed_by_other_than_text_encode_as_the_driver():
    marshal = "org.apache.cassandra.db.marshal."
    cases = [
        ("set<int>", "SetType(" + marshal + "Int32Type)", {3, 1, 2}),
        ("set<text>", "SetType(" + marshal + "UTF8Type)", frozenset({"a", "b"})),
        ("map<int, double>", "MapType(" + marshal + "Int32Type," + marshal + "DoubleType)", {1: 2.5, -7: 0.0}),
        ("map<uuid, int>", "MapType(" + marshal + "UUIDType," + marshal + "Int32Type)",
         {"5b6962dd-3f90-4c93-8f61-eabfa4a803e2": 1}),
        ("map<frozen<tuple<int, text>>, int>",
         "MapType(" + marshal + "TupleType(" + marshal + "Int32Type," + marshal + "UTF8Type)," + marshal + "Int32Type)",
         {(1, "a"): 2}),
    ]
    for cql_type, driver_type, value in cases:
        driver = lookup_casstype(marshal + driver_type)
        if cql_type.startswith("map<uuid"):
            import uuid
            expected = driver.serialize({uuid.UUID(k): v for k, v in value.items()}, 4)
        else:
            expected = driver.serialize(value, 4)
        assert cqlwire.encode(cql_type, value) == expected, cql_type


def test_errors():
    with pytest.raises(TypeError, match="invalid type"):
        cqlwire.decode("list<", b"")
    with pytest.raises(TypeError, match="invalid udt"):
        cqlwire.encode("x", 1, udts=["x("])
    with pytest.raises(ValueError, match="at byte"):
        cqlwire.decode("list<int>", bytes.fromhex("0000000200000004"))
    with pytest.raises(ValueError, match="must be 4 bytes, not 5 at byte 0"):
        cqlwire.decode("int", bytes(5))
    with pytest.raises(ValueError, match="invalid int value"):
        cqlwire.encode("int", "x")
    with pytest.raises(TypeError, match="cannot encode a object"):
        cqlwire.encode("set<int>", object())
    with pytest.raises(TypeError, match="dict keys must be str"):
        cqlwire.encode("frozen<tuple<int>>", {1: 2})
    deep = []
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(ValueError, match="deeper"):
        cqlwire.encode("list<int>", deep)


@pytest.mark.parametrize("hexdata", ["00000001000000040000002a", "0000000200000004000000010000000400"])
def test_explain_matches_the_command_line(hexdata, cqlwire_binary):
    data = bytes.fromhex(hexdata)
    run = subprocess.run([cqlwire_binary, "decode", "list<int>", hexdata, "--format", "explain"], capture_output=True, text=True)
    assert cqlwire.explain("list<int>", data) == run.stdout + run.stderr


def refused_corpus_cases():
    """The wire-legal cases of conformance/cases.jsonl that Apache Cassandra 5.0.9 refuses (its
    recorded answer), and a valid case of each of their types."""
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "cases.jsonl"
    with open(path, encoding="utf-8") as lines:
        corpus = [json.loads(line) for line in lines]
    return [c for c in corpus if "value" in c and not c["valid"]], [c for c in corpus if "value" in c and c["valid"]]


def test_decode_warns_once_per_thing_cassandra_refuses_and_strict_raises():
    import warnings

    refused, valid = refused_corpus_cases()
    assert len(refused) == 21
    for case in refused:
        data = bytes.fromhex(case["hex"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = cqlwire.decode(case["type"], data, udts=case["udts"])
        assert caught and all(w.category is cqlwire.RefusedValueWarning for w in caught), case["id"]
        assert all(str(w.message).startswith("Apache Cassandra refuses ") for w in caught)
        assert cqlwire.encode(case["type"], value, udts=case["udts"]) == data
        with pytest.raises(ValueError, match="^Apache Cassandra refuses "):
            cqlwire.decode(case["type"], data, udts=case["udts"], strict=True)
        assert "cqlwire: warning: Apache Cassandra refuses " in cqlwire.explain(case["type"], data, udts=case["udts"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for case in valid:
            cqlwire.decode(case["type"], bytes.fromhex(case["hex"]), udts=case["udts"], strict=True)


def test_the_warnings_are_the_command_lines_lines(cqlwire_binary):
    refused, _ = refused_corpus_cases()
    import warnings

    for case in refused:
        udts = [arg for declaration in case["udts"] for arg in ("--udt", declaration)]
        cli = subprocess.run([cqlwire_binary, "decode", *udts, case["type"], case["hex"] or "-"],
                             input=b"", capture_output=True, check=True)
        lines = [line.removeprefix("cqlwire: warning: ") for line in cli.stderr.decode().splitlines()]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cqlwire.decode(case["type"], bytes.fromhex(case["hex"]), udts=case["udts"])
        assert [str(w.message) for w in caught] == lines, case["id"]
