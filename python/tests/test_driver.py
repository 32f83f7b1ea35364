"""cqlwire.driver: the driver's own VectorType.serialize/deserialize and LZ4 entry, with and
without install(), give the same bytes and values on the fixture corpora."""
import importlib.util
import struct

import numpy as np
import pytest
from cassandra import connection
from cassandra.cqltypes import lookup_casstype
from conftest import FIXTURES, cases

import cqlwire
import cqlwire.driver

# The driver's element classes and its lookup of a vector type, as the corpus generator uses them.
GENERATOR = importlib.util.spec_from_file_location("vector_generate", FIXTURES / "vector" / "generate.py")
generate = importlib.util.module_from_spec(GENERATOR)
GENERATOR.loader.exec_module(generate)
CLASSES, vector_class = generate.CLASSES, generate.vector_type


@pytest.fixture
def installed():
    cqlwire.driver.install()
    yield
    cqlwire.driver.uninstall()


def vector_cases():
    """(element, dimension, bytes) for every vector value of both corpora whose element type the
    driver knows."""
    out = []
    for case in cases("driver") + cases("vector"):
        kind = case["type"]
        if not kind.startswith("vector<") or "hex" not in case:
            continue
        element, dimension = kind[len("vector<"):-1].rsplit(",", 1)
        if element.strip() not in CLASSES:
            continue
        dimension = int(dimension)
        data = bytes.fromhex(case["hex"])
        rows = case.get("rows", 1)
        size = len(data) // rows if rows and len(data) % rows == 0 else len(data)
        for start in range(0, len(data), size or 1):
            out.append((element.strip(), dimension, data[start:start + size]))
    return out


def run(function, *args):
    try:
        return ("ok", function(*args))
    except Exception as error:  # the driver's own errors must stay the driver's own
        return ("error", type(error).__name__, str(error))


def installed_results(cls, make):
    """`cls.serialize(make(), 4)` twice after install(): the first call finds the class's codec and
    sets its native serialize, the second goes through that."""
    cqlwire.driver.install()
    try:
        return [run(cls.serialize, make(), 4) for _ in range(2)]
    finally:
        cqlwire.driver.uninstall()


def test_uninstall_takes_the_native_serialize_off_the_classes():
    cls = vector_class("float", 4)
    driver_function = cls.serialize.__func__
    cqlwire.driver.install()
    assert cls.serialize([1.0] * 4, 4) == cls.serialize((1.0,) * 4, 4)
    assert isinstance(cls.__dict__["serialize"].__self__, cqlwire._cqlwire.DriverSerializer)
    cqlwire.driver.uninstall()
    assert "serialize" not in cls.__dict__ and cls.serialize.__func__ is driver_function


@pytest.mark.parametrize("element,dimension,data", vector_cases())
def test_corpus_round_trips_like_the_driver(element, dimension, data):
    cls = vector_class(element, dimension)
    plain_values = run(cls.deserialize, data, 4)
    plain_bytes = run(cls.serialize, plain_values[1], 4) if plain_values[0] == "ok" else None
    cqlwire.driver.install()
    try:
        values = run(cls.deserialize, data, 4)
        again = run(cls.serialize, values[1], 4) if values[0] == "ok" else None
    finally:
        cqlwire.driver.uninstall()
    assert repr(values) == repr(plain_values)  # repr: NaN equals itself
    assert again == plain_bytes


@pytest.mark.parametrize("element,dtype", [("float", "f4"), ("double", "f8"), ("int", "i4"), ("bigint", "i8")])
def test_numpy_rows_and_edge_values(installed, element, dtype):
    cls = vector_class(element, 8)
    random = np.random.default_rng(3)
    if dtype[0] == "f":
        row = random.standard_normal(8).astype(dtype)
        row[:4] = [np.nan, np.inf, -0.0, np.finfo(dtype).max]
    else:
        info = np.iinfo(dtype)
        row = random.integers(info.min, info.max, 8, endpoint=True).astype(dtype)
        row[:2] = [info.min, info.max]
    ours = cls.serialize(row, 4)
    assert ours == row.astype(">" + dtype).tobytes()
    assert cls.serialize(row.tolist(), 4) == ours
    cqlwire.driver.uninstall()
    assert cls.serialize(row.tolist(), 4) == ours
    assert cls.serialize(row, 4) == ours
    plain = run(cls.deserialize, ours, 4)
    cqlwire.driver.install()
    assert repr(run(cls.deserialize, ours, 4)) == repr(plain)


class Number(float):
    """A float subclass (not read by the list fast path's exact-type check)."""


class Shrinking:
    """An element whose __float__ / __index__ empties the list it is in."""

    def __init__(self, owner):
        self.owner = owner

    def __float__(self):
        self.owner.clear()
        return 1.5

    __index__ = lambda self: int(self.__float__())  # noqa: E731


def shrinking():
    value = [1.0, None, 3.0]
    value[1] = Shrinking(value)
    return value


@pytest.mark.parametrize("make", [
    lambda: [1.0, 2.0], lambda: [1e300] * 3, lambda: ["a", "b", "c"], lambda: [1, 2, None],
    lambda: [2**40, 0, 0], lambda: (1.0, -2.5, 3.0), lambda: (1, 2, 3), lambda: [True, False, 1],
    lambda: [Number(1.25), 2, 3.5], lambda: [np.float64(0.1), np.int32(7), 1.0], lambda: [2**63, 0, 1],
    lambda: [float("nan"), float("-inf"), -0.0], lambda: [1.0, 2.0, 3.0, 4.0]])
@pytest.mark.parametrize("element", ["float", "int", "double", "bigint"])
def test_refused_values_keep_the_drivers_result(make, element):
    """Lists and tuples (the fast path), other numbers and odd elements: the bytes or the error of
    the driver's own code."""
    cls = vector_class(element, 3)
    plain = run(cls.serialize, make(), 4)
    assert installed_results(cls, make) == [plain, plain]


@pytest.mark.parametrize("element", ["float", "int", "double", "bigint"])
def test_a_list_emptied_while_read_is_a_clean_error(installed, element):
    """An element whose conversion empties the list: no crash, the driver's error on what is left."""
    with pytest.raises((ValueError, TypeError, struct.error)):
        vector_class(element, 3).serialize(shrinking(), 4)


def test_lz4_entry_and_uninstall():
    original = connection.locally_supported_compressions["lz4"]
    segments = connection.segment_codec_lz4
    original_segments = (segments.compressor, segments.decompressor)
    cqlwire.driver.install()
    cqlwire.driver.install()
    assert cqlwire.driver.installed()
    compress, decompress = connection.locally_supported_compressions["lz4"]
    assert compress is cqlwire.lz4_compress and decompress is cqlwire.lz4_decompress
    # Protocol v5's LZ4 segments go through cqlwire too, and the driver's segment codec still
    # reads what it wrote (and what the driver's own functions wrote).
    assert (segments.compressor, segments.decompressor) == (compress, decompress)
    from io import BytesIO
    from cassandra.segment import SegmentCodec

    payload = b"SELECT * FROM system.local WHERE key='local'" * 20
    for writer, reader in ((segments, SegmentCodec(*original_segments)),
                           (SegmentCodec(*original_segments), segments)):
        out = BytesIO()
        writer.encode(out, payload)
        buffer = BytesIO(out.getvalue())
        header = reader.decode_header(buffer)
        assert reader.decode(buffer, header).payload == payload
    assert original[1](compress(payload)) == payload
    assert decompress(original[0](payload)) == payload
    cqlwire.driver.uninstall()
    cqlwire.driver.uninstall()
    assert not cqlwire.driver.installed()
    assert connection.locally_supported_compressions["lz4"] == original
    assert (segments.compressor, segments.decompressor) == original_segments
    assert lookup_casstype("org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 2)").serialize([1.0, 2.0], 4) == bytes.fromhex("3f80000040000000")


def test_lists_are_read_in_place_on_cpython():
    """The object layout VectorCodec reads lists, tuples and floats through is proven at import on
    a (GIL) CPython, so the tests below exercise it; elsewhere everything goes through the C API."""
    import sys
    import sysconfig

    expected = sys.implementation.name == "cpython" and not sysconfig.get_config_var("Py_GIL_DISABLED")
    assert cqlwire._cqlwire._object_layout == (expected,) * 3


class Half(float):
    """Another float subclass, with its own __float__ (which the driver's struct.pack ignores)."""

    def __float__(self):
        return 0.5


# f32's largest value, the largest double that rounds down to it, and the smallest that overflows.
F32_MAX = float(np.finfo(np.float32).max)
ROUNDS_DOWN = float.fromhex("0x1.fffffefffffffp+127")
OVERFLOWS = float.fromhex("0x1.ffffffp+127")

EDGE_ITEMS = [
    -0.0, float("nan"), float("inf"), float("-inf"), 5e-324, -1e-310, F32_MAX, -ROUNDS_DOWN,
    OVERFLOWS, -1e300, 7, True, False, 2**64, -(2**200), np.float32(1.5), np.float64(-2.25),
    np.int64(3), Number(0.1), Half(4.0), None, "1.0", b"x", [1.0],
]


def long_values():
    """768-element lists and tuples of floats with one odd item at the first, a middle or the last
    index, and lists one short, one long or empty."""
    row = np.random.default_rng(5).standard_normal(768).tolist()
    out = [("plain list", row), ("plain tuple", tuple(row)), ("one short", row[:-1]),
           ("one long", row + [1.0]), ("empty", [])]
    for item in EDGE_ITEMS:
        for index in (0, 384, 767):
            value = list(row)
            value[index] = item
            out.append(("%r at %d" % (item, index), value))
            if index == 384:
                out.append(("%r at %d, tuple" % (item, index), tuple(value)))
    return out


@pytest.mark.parametrize("name,value", long_values(), ids=[name for name, _ in long_values()])
@pytest.mark.parametrize("element", ["float", "double"])
def test_long_lists_keep_the_drivers_bytes_and_errors(element, name, value):
    cls = vector_class(element, 768)
    plain = run(cls.serialize, value, 4)
    assert installed_results(cls, lambda: value) == [plain, plain]


def test_the_c_api_path_gives_the_same_bytes(tmp_path):
    """With the in-place reads turned off (CQLWIRE_OBJECT_LAYOUT=0), the same values give the same
    bytes and errors."""
    import os
    import pickle
    import subprocess
    import sys

    script = tmp_path / "serialize.py"
    script.write_text(
        "import pickle, sys\n"
        "import cqlwire\n"
        "values = pickle.load(open(sys.argv[1], 'rb'))\n"
        "out = [cqlwire._cqlwire._object_layout]\n"
        "for element in ('float', 'double'):\n"
        "    codec = cqlwire.VectorCodec('vector<%s, 768>' % element)\n"
        "    for value in values:\n"
        "        try:\n"
        "            out.append(codec.serialize(value))\n"
        "        except Exception as error:\n"
        "            out.append((type(error).__name__, str(error)))\n"
        "pickle.dump(out, open(sys.argv[2], 'wb'))\n")
    values = [value for _, value in long_values() if all(type(x) in (float, int, bool) for x in value)]
    (tmp_path / "values.pickle").write_bytes(pickle.dumps(values))
    results = []
    for setting in ("1", "0"):
        env = dict(os.environ, CQLWIRE_OBJECT_LAYOUT=setting)
        output = tmp_path / ("out-%s.pickle" % setting)
        subprocess.run([sys.executable, str(script), str(tmp_path / "values.pickle"), str(output)],
                       check=True, env=env)
        results.append(pickle.loads(output.read_bytes()))
    assert results[1][0] == (False, False, False)
    assert results[0][1:] == results[1][1:]
    assert len(results[0]) == 1 + 2 * len(values)
