"""What the module does with arguments it cannot use as given: its own one-line TypeError or
ValueError (never CPython's or NumPy's message, never a silently wrong value), and the null rows of
masked arrays and sequences, as for Arrow null rows. Expected bytes come from the driver
(cassandra.cqltypes) and NumPy."""
import struct

import numpy as np
import pytest
from cassandra.cqltypes import FloatType, IntegerType, lookup_casstype

import cqlwire

VECTOR2 = lookup_casstype(
    "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 2)")


def framed(values):
    """Each value (None = null) as a protocol [bytes]."""
    return b"".join(struct.pack(">i", -1) if v is None else struct.pack(">i", len(v)) + v
                    for v in values)


@pytest.mark.parametrize("cql_type", ["text", "ascii", "varchar", "int", "list<text>",
                                      "map<int, text>", "tuple<int, text>"])
def test_bytes_are_only_a_blob(cql_type):
    value = {"text": b"abc", "ascii": b"abc", "varchar": b"abc", "int": b"\x00\x00\x00\x01",
             "list<text>": [b"abc"], "map<int, text>": [[1, b"abc"]],
             "tuple<int, text>": [1, b"abc"]}[cql_type]
    with pytest.raises(TypeError, match="bytes are a blob value, not"):
        cqlwire.encode(cql_type, value)
    # The driver refuses bytes for text too (it has no str.encode to call).
    with pytest.raises(AttributeError):
        lookup_casstype("UTF8Type").serialize(b"abc", 4)


def test_bytes_and_bytearray_are_a_blob_anywhere_in_a_value():
    assert cqlwire.encode("blob", bytearray(b"\x01\x02")) == b"\x01\x02"
    assert cqlwire.encode("map<text, blob>", {"k": b"\xff"}) == cqlwire.encode(
        "map<text, blob>", [["k", "0xff"]])
    udt = ["u(name text, data blob)"]
    assert cqlwire.decode("u", cqlwire.encode("u", {"name": "x", "data": b"\x00"}, udts=udt),
                          udts=udt) == {"name": "x", "data": "0x00"}


def test_python_floats_round_once_to_float_as_the_driver_does():
    # 1 + 2**-24 lies exactly between two floats: rounded from the double it is 1.0 (ties to even);
    # its shortest text 1.0000000596046448 read as a float would round up.
    for x in [1 + 2**-24, 0.1, 1 / 3, 3.4028234663852886e38, 1e-45, -2.5e-45]:
        assert cqlwire.encode("float", x) == FloatType.serialize(x, 4), x
        assert cqlwire.encode("list<float>", [x])[-4:] == FloatType.serialize(x, 4), x
    with pytest.raises(ValueError, match="out of range"):
        cqlwire.encode("float", 1e300)


def test_ints_beyond_the_str_digit_limit_encode_as_the_driver_does():
    for n in [10**5000 + 1, -(7**9000), 2**20000]:
        assert cqlwire.encode("varint", n) == IntegerType.serialize(n, 4)
    assert cqlwire.encode("list<varint>", [10**4400]) == cqlwire.encode("list<varint>",
                                                                          ["1" + "0" * 4400])


@pytest.mark.parametrize("call", [
    lambda: cqlwire.decode("int", "00"),
    lambda: cqlwire.explain("int", "00"),
    lambda: cqlwire.lz4_compress("abc"),
    lambda: cqlwire.lz4_decompress("abc"),
])
def test_text_where_bytes_are_needed_is_named(call):
    with pytest.raises(TypeError, match=r"must be bytes, bytearray or memoryview, not str \(for hex"):
        call()


def test_bytes_like_arguments_are_accepted():
    body = cqlwire.lz4_compress(b"hello hello hello")
    assert cqlwire.lz4_compress(bytearray(b"hello hello hello")) == body
    assert cqlwire.lz4_decompress(memoryview(body)) == b"hello hello hello"
    assert cqlwire.decode("int", memoryview(b"\x00\x00\x00\x07")) == 7


@pytest.mark.parametrize("udts", ["addr(street text)", b"addr(street text)", 7, [7]])
def test_udts_must_be_a_list_of_declarations(udts):
    with pytest.raises(TypeError, match=r"udts must be a list of declarations such as"):
        cqlwire.encode("int", 1, udts=udts)
    with pytest.raises(TypeError, match=r"udts must be a list of declarations such as"):
        cqlwire.decode("int", b"\x00\x00\x00\x01", udts=udts)


def test_udts_as_a_tuple():
    assert cqlwire.encode("a", {"x": 1}, udts=("a(x int)",)) == b"\x00\x00\x00\x04\x00\x00\x00\x01"


def test_none_rows_are_null_rows():
    rows = [[1.0, 2.0], None, [3.0, 4.0]]
    one, two = (VECTOR2.serialize(r, 4) for r in (rows[0], rows[2]))
    assert cqlwire.serialize_vectors(rows, "vector<float, 2>") == [one, None, two]
    assert cqlwire.serialize_vectors(tuple(rows), "vector<float, 2>", format="framed") == framed(
        [one, None, two])
    with pytest.raises(ValueError, match="null vector at row 1"):
        cqlwire.serialize_vectors(rows, format="raw")
    # The element type is that of the valid rows (float32 rows stay floats).
    f4 = [np.array([1.5, 2.5], dtype="f4"), None]
    assert cqlwire.serialize_vectors(f4) == [VECTOR2.serialize([1.5, 2.5], 4), None]
    assert cqlwire.serialize_vectors([None, None], "vector<float, 2>") == [None, None]
    with pytest.raises(ValueError, match="the input's rows have no elements"):
        cqlwire.serialize_vectors([None, None])


def test_ragged_sequences_name_the_row():
    with pytest.raises(ValueError, match="row 2 has 1 elements, but row 0 has 2"):
        cqlwire.serialize_vectors([[1, 2], [3, 4], [5]])
    with pytest.raises(ValueError, match="row 2 has 3 elements, but row 1 has 2"):
        cqlwire.serialize_vectors([None, [3, 4], [5, 6, 7]])
    with pytest.raises(TypeError, match="row 1 is a int, not a sequence of numbers"):
        cqlwire.serialize_vectors([[1, 2], 3])


def test_masked_rows_are_null_rows_and_masked_elements_an_error():
    data = np.arange(8, dtype="f4").reshape(4, 2)
    mask = np.zeros((4, 2), dtype=bool)
    mask[1] = True
    masked = np.ma.masked_array(data, mask=mask)
    expected = [VECTOR2.serialize(list(map(float, r)), 4) for r in data]
    expected[1] = None
    assert cqlwire.serialize_vectors(masked) == expected
    assert cqlwire.serialize_vectors(masked, format="framed") == framed(expected)
    with pytest.raises(ValueError, match="null vector at row 1"):
        cqlwire.serialize_vectors(masked, format="raw")
    # Nothing masked: the plain array's bytes.
    assert cqlwire.serialize_vectors(np.ma.masked_array(data)) == [
        VECTOR2.serialize(list(map(float, r)), 4) for r in data]
    mask[1] = False
    mask[2, 1] = True
    with pytest.raises(ValueError, match="row 2 element 1 is masked"):
        cqlwire.serialize_vectors(np.ma.masked_array(data, mask=mask))


@pytest.mark.parametrize("name", ["load", "unload", "search"])
def test_the_live_table_functions_document_their_keywords_at_run_time(name):
    doc = getattr(cqlwire, name).__doc__
    assert "see the stubs" not in doc
    assert "LoadError" in doc and "underscores" in doc
    assert ("hosts" in doc) and ("consistency" in doc or "connection" in doc)
