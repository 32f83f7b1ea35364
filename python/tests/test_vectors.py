"""serialize_vectors / deserialize_vectors against NumPy, pyarrow and the driver's own bytes."""
import struct

import numpy as np
import pyarrow as pa
import pytest
from conftest import cases

import cqlwire

DTYPES = ["f2", "f4", "f8", "i1", "u1", "i2", "i4", "i8"]
DEFAULT = {"f2": ">f4", "f4": ">f4", "f8": ">f8", "i8": ">i8"}  # the rest: >i4
NAMES = {">f4": "float", ">f8": "double", ">i4": "int", ">i8": "bigint"}


def sample(dtype, rows=5, dimension=7, seed=1):
    random = np.random.default_rng(seed)
    if dtype.startswith("f"):
        return random.standard_normal((rows, dimension)).astype(dtype)
    info = np.iinfo(dtype)
    return random.integers(info.min, info.max, (rows, dimension), endpoint=True).astype(dtype)


def framed(values):
    return b"".join(struct.pack(">i", len(v)) + v for v in values)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_numpy_default_types_match_numpy_big_endian_rows(dtype, order, layout):
    a = sample(dtype)
    target = DEFAULT.get(dtype, ">i4")
    expected = [row.tobytes() for row in a.astype(target)]
    source = np.asarray(a, dtype=np.dtype(dtype).newbyteorder(order), order=layout)
    assert cqlwire.serialize_vectors(source) == expected
    assert cqlwire.serialize_vectors(source, format="raw") == b"".join(expected)
    assert cqlwire.serialize_vectors(source, format="framed") == framed(expected)
    name = "vector<%s, %d>" % (NAMES[target], a.shape[1])
    assert cqlwire.serialize_vectors(source, name) == expected


@pytest.mark.parametrize("dtype, rows, dimension", [("f4", 5600, 768), ("i4", 5600, 767),
                                                    ("f8", 2800, 768), ("i8", 2801, 767)])
def test_arrays_large_enough_to_split_across_threads_keep_row_order(dtype, rows, dimension):
    # About 17 MB of output: above the 16 MiB the library splits across its thread pool and writes
    # byte swaps with streaming stores (64-byte aligned middles, rows of any alignment; an odd
    # dimension puts the framed format's 8-byte values off their alignment), in all three formats.
    a = sample(dtype, rows=rows, dimension=dimension, seed=3)
    values = [r.tobytes() for r in a.astype(DEFAULT.get(dtype, ">i4"))]
    assert len(values) * len(values[0]) > 16 << 20
    assert cqlwire.serialize_vectors(a) == values
    assert cqlwire.serialize_vectors(a, format="raw") == b"".join(values)
    assert cqlwire.serialize_vectors(a, format="framed") == framed(values)


def test_a_cast_error_in_a_late_task_names_its_absolute_row():
    a = sample("f4", rows=5600, dimension=768, seed=3)
    wide = a.astype("f8")
    wide[5598, 700] = 1e300
    with pytest.raises(ValueError, match=r"at row 5598 \(element 700\)$"):
        cqlwire.serialize_vectors(wide, "vector<float, 768>")


@pytest.mark.parametrize("case", cases("vector"), ids=lambda c: c["name"])
@pytest.mark.parametrize("order", ["<", ">"])
def test_driver_vector_corpus(case, order):
    dtype = np.dtype(case["dtype"])
    bits_type = {"f": "u", "i": "i", "u": "u"}[dtype.kind] + str(dtype.itemsize)
    a = np.array(case["bits"], dtype=object).astype(bits_type).view(dtype)
    a = a.reshape(case["rows"], -1).astype(dtype.newbyteorder(order))
    if "error" in case:
        where = "at row %(row)d (element %(element)d)" % case["error"]
        with pytest.raises(ValueError, match=r"at row \d+ \(element \d+\)$") as raised:
            cqlwire.serialize_vectors(a, case["type"], format="raw")
        assert str(raised.value).endswith(where)
        return
    assert cqlwire.serialize_vectors(a, case["type"], format="raw").hex() == case["hex"]
    rows = cqlwire.serialize_vectors(np.asfortranarray(a), case["type"])
    assert b"".join(rows).hex() == case["hex"]


def test_sequences_and_views():
    a = sample("f8", rows=4, dimension=10)
    view = a[::2, ::3]  # neither C nor Fortran contiguous
    expected = [row.tobytes() for row in view.astype(">f8")]
    assert not view.flags.c_contiguous and not view.flags.f_contiguous
    assert cqlwire.serialize_vectors(view) == expected
    assert cqlwire.serialize_vectors(view.tolist()) == expected
    assert cqlwire.serialize_vectors([[1, 2], [3, 4]], "vector<float, 2>") == [
        r.tobytes() for r in np.array([[1, 2], [3, 4]], dtype=">f4")
    ]
    assert cqlwire.serialize_vectors(np.zeros((0, 3), dtype="f4")) == []
    assert cqlwire.serialize_vectors(np.zeros((0, 3), dtype="f4"), format="raw") == b""


def test_booleans():
    a = np.array([[True, False, True]])
    assert cqlwire.serialize_vectors(a, "vector<boolean, 3>") == [a.astype("u1").tobytes()]


def list_array(rows, kind, value_type):
    if kind == "list":
        return pa.array(rows, type=pa.list_(value_type))
    if kind == "large_list":
        return pa.array(rows, type=pa.large_list(value_type))
    return pa.array(rows, type=pa.list_(value_type, len(rows[0])))


@pytest.mark.parametrize("kind", ["list", "large_list", "fixed_size_list"])
@pytest.mark.parametrize("value_type", [pa.float16(), pa.float32(), pa.float64(), pa.int8(), pa.uint8(), pa.int16(), pa.int32(), pa.int64()])
def test_arrow_arrays(kind, value_type):
    a = sample(value_type.to_pandas_dtype()().dtype.str[1:], rows=6, dimension=4)
    array = list_array(a.tolist() if a.dtype.kind != "f" else list(a), kind, value_type)
    numbers = np.array(array.flatten().to_numpy(zero_copy_only=False)).reshape(6, 4)
    expected = cqlwire.serialize_vectors(numbers)
    assert expected == [r.tobytes() for r in numbers.astype(DEFAULT.get(numbers.dtype.str[1:], ">i4"))]
    assert cqlwire.serialize_vectors(array) == expected
    chunked = pa.chunked_array([array.slice(0, 2), array.slice(2)])
    assert cqlwire.serialize_vectors(chunked) == expected
    batch = pa.record_batch([pa.array(range(6)), array], names=["id", "emb"])
    assert cqlwire.serialize_vectors(batch, format="raw") == b"".join(expected)
    assert cqlwire.serialize_vectors(pa.Table.from_batches([batch]), format="framed") == framed(expected)


def test_arrow_null_rows():
    array = pa.array([[1.0, 2.0], None, [3.0, 4.0]], type=pa.list_(pa.float32()))
    one, two = (np.array(r, dtype=">f4").tobytes() for r in ([1, 2], [3, 4]))
    assert cqlwire.serialize_vectors(array) == [one, None, two]
    assert cqlwire.serialize_vectors(array, format="framed") == (
        framed([one]) + struct.pack(">i", -1) + framed([two])
    )
    with pytest.raises(ValueError, match="null vector at row 1"):
        cqlwire.serialize_vectors(array, format="raw")


def test_arrow_errors():
    ragged = pa.array([[1.0, 2.0], [3.0]], type=pa.list_(pa.float32()))
    with pytest.raises(ValueError, match="row 1 has 1 elements, but the first row has 2"):
        cqlwire.serialize_vectors(ragged)
    holes = pa.array([[1.0, None]], type=pa.list_(pa.float32()))
    with pytest.raises(ValueError, match="row 0 element 1 is null"):
        cqlwire.serialize_vectors(holes)
    with pytest.raises(TypeError, match="no list-typed column to read vectors from"):
        cqlwire.serialize_vectors(pa.array(["a"]))


def test_hostile_inputs_raise_clean_exceptions():
    with pytest.raises(ValueError, match="expected a 2-D array, got a 3-D array of shape"):
        cqlwire.serialize_vectors(np.zeros((2, 2, 2), dtype="f4"))
    with pytest.raises(ValueError, match="expected a 2-D array, got a 1-D"):
        cqlwire.serialize_vectors(np.zeros(3, dtype="f4"))
    with pytest.raises(TypeError, match="unsupported dtype"):
        cqlwire.serialize_vectors(np.array([[1, "x"]], dtype=object))
    with pytest.raises(TypeError, match="unsupported dtype"):
        cqlwire.serialize_vectors(np.zeros((2, 2), dtype="c8"))
    with pytest.raises(TypeError, match="unsupported dtype"):
        cqlwire.serialize_vectors(np.zeros((2, 2), dtype="u4"))
    with pytest.raises(TypeError, match="unsupported dtype"):
        cqlwire.serialize_vectors([["a", "b"]])
    with pytest.raises(TypeError, match="not a string"):
        cqlwire.serialize_vectors("12")
    nan = np.array([[1.0, np.nan]])
    with pytest.raises(ValueError, match=r"^value NaN is not a number, so not an int at row 0 \(element 1\)$"):
        cqlwire.serialize_vectors(nan, "vector<int, 2>")
    with pytest.raises(ValueError, match="has dimension 3 but the input's rows have 2 elements"):
        cqlwire.serialize_vectors(nan, "vector<float, 3>")
    with pytest.raises(TypeError, match="must be a vector type"):
        cqlwire.serialize_vectors(nan, "list<float>")
    with pytest.raises(TypeError, match="invalid type"):
        cqlwire.serialize_vectors(nan, "vector<float")
    with pytest.raises(TypeError):
        cqlwire.serialize_vectors(nan, "vector<uuid, 2>")
    with pytest.raises(ValueError, match="unknown format"):
        cqlwire.serialize_vectors(nan, format="csv")
    with pytest.raises(ValueError, match="no elements"):
        cqlwire.serialize_vectors(np.zeros((2, 0), dtype="f4"))
    with pytest.raises(ValueError):
        cqlwire.serialize_vectors([[1.0, 2.0], [3.0]])
    # A big cast error in a large batch names the right row.
    big = np.zeros((20000, 8))
    big[12345, 6] = 1e300
    with pytest.raises(ValueError, match=r"at row 12345 \(element 6\)$"):
        cqlwire.serialize_vectors(big, "vector<float, 8>")


@pytest.mark.parametrize("element,dtype", [("float", "f4"), ("double", "f8"), ("int", "i4"), ("bigint", "i8"), ("timestamp", "i8"), ("smallint", "i2"), ("tinyint", "i1")])
def test_deserialize_round_trips(element, dtype):
    a = sample(dtype, rows=9, dimension=5)
    name = "vector<%s, 5>" % element
    raw = cqlwire.serialize_vectors(a, name, format="raw")
    back = cqlwire.deserialize_vectors(raw, name)
    assert back.dtype == np.dtype(dtype) and back.shape == a.shape
    np.testing.assert_array_equal(back, a)
    np.testing.assert_array_equal(cqlwire.deserialize_vectors(cqlwire.serialize_vectors(a, name), name), a)
    if dtype[0] in "fi" and element not in ("smallint", "tinyint"):
        np.testing.assert_array_equal(back, np.frombuffer(raw, dtype=">" + dtype).reshape(a.shape))


def test_deserialize_errors():
    with pytest.raises(ValueError, match="not a whole number"):
        cqlwire.deserialize_vectors(b"\x00" * 7, "vector<float, 2>")
    with pytest.raises(TypeError, match="use decode"):
        cqlwire.deserialize_vectors(b"", "vector<text, 2>")
    with pytest.raises(TypeError, match="not bytes"):
        cqlwire.deserialize_vectors([b"\x00" * 8, 5], "vector<float, 2>")
    with pytest.raises(ValueError):
        cqlwire.deserialize_vectors(b"\x02\x00", "vector<smallint, 2>")
    bools = cqlwire.deserialize_vectors(bytes([0, 1, 2]), "vector<boolean, 3>")
    assert bools.tolist() == [[False, True, True]]


def test_codec_single_values():
    codec = cqlwire.VectorCodec("vector<float, 4>")
    row = sample("f4", rows=1, dimension=4)[0]
    assert codec.serialize(row) == row.astype(">f4").tobytes()
    assert codec.serialize(row.tolist()) == row.astype(">f4").tobytes()
    assert codec.deserialize(codec.serialize(row)) == [float(x) for x in row]
    with pytest.raises(ValueError):
        codec.serialize([1.0, 2.0])
    ints = cqlwire.VectorCodec("vector<int, 2>")
    assert ints.serialize([1, -1]) == np.array([1, -1], ">i4").tobytes()
    with pytest.raises(TypeError):
        ints.serialize(np.array([1.0, 2.0]))
