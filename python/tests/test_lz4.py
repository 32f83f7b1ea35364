"""lz4_compress / lz4_decompress against the driver's cassandra.connection wrappers (python-lz4)."""
import os
import struct

import pytest
from cassandra.connection import lz4_compress as driver_compress
from cassandra.connection import lz4_decompress as driver_decompress

import cqlwire

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
PAYLOADS = sorted(os.listdir(os.path.join(FIXTURES, "lz4", "payloads")))
# fixtures/lz4ref: payload sources whose prefixes exercise every branch of liblz4's compressor.
SOURCES = sorted(os.listdir(os.path.join(FIXTURES, "lz4ref", "payloads")))


def payload(name):
    path = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "lz4", "payloads", name)
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("name", PAYLOADS)
def test_bodies_interoperate_with_the_driver(name):
    data = payload(name)
    ours = cqlwire.lz4_compress(data)
    theirs = driver_compress(data)
    assert ours == theirs
    assert ours[:4] == struct.pack(">I", len(data))
    assert driver_decompress(ours) == data
    assert cqlwire.lz4_decompress(theirs) == driver_decompress(theirs) == data
    assert cqlwire.lz4_decompress(bytearray(theirs)) == data
    assert cqlwire.lz4_compress(bytearray(data)) == ours


@pytest.mark.parametrize("name", SOURCES)
def test_bodies_are_the_drivers_bytes(name):
    with open(os.path.join(FIXTURES, "lz4ref", "payloads", name), "rb") as f:
        source = f.read()
    limit = 64 * 1024 + 11  # liblz4's LZ4_64Klimit
    sizes = list(range(21)) + list(range(limit - 3, limit + 4)) + [1024, 8192, 65536, len(source)]
    for size in sizes:
        data = source[:size]
        assert cqlwire.lz4_compress(data) == driver_compress(data), "%s[:%d]" % (name, size)


def test_declared_lengths_are_capped_before_allocating():
    two_gib = struct.pack(">I", 2**31 - 1) + b"\x00" * 16
    with pytest.raises(ValueError, match="at byte 0$"):
        cqlwire.lz4_decompress(two_gib)
    # Even with the cap lifted, 16 bytes of block cannot hold 2 GiB: refused before allocating.
    with pytest.raises(ValueError, match="at byte 0$"):
        cqlwire.lz4_decompress(two_gib, max_size=1 << 40)
    body = cqlwire.lz4_compress(b"x" * 5000)
    with pytest.raises(ValueError, match="at byte 0$") as refused:
        cqlwire.lz4_decompress(body, max_size=4999)
    # The module's message names its own parameter's limit, no command-line flag.
    assert "exceeds the limit of 4999 bytes" in str(refused.value)
    assert "--" not in str(refused.value)
    assert cqlwire.lz4_decompress(body, max_size=5000) == b"x" * 5000
    assert cqlwire.DEFAULT_MAX_SIZE == 256 << 20


@pytest.mark.parametrize("body", [b"", b"\x00\x00", b"\x00\x00\x00\x05\xff", b"\x00\x00\x00\x05\x50abc"])
def test_corrupt_bodies(body):
    with pytest.raises(ValueError, match=r"at byte \d+$"):
        cqlwire.lz4_decompress(body)
    with pytest.raises(Exception):
        driver_decompress(body)


def test_wrong_argument_types():
    with pytest.raises(TypeError):
        cqlwire.lz4_compress("text")
    with pytest.raises(TypeError):
        cqlwire.lz4_decompress(None)
