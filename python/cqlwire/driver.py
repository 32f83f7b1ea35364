"""Make an installed Python driver (``cassandra-driver`` or ``scylla-driver``, both the
``cassandra`` package) use cqlwire for the LZ4 compression it negotiates (v4 frame bodies and v5
LZ4 segments) and for ``VectorType`` values of fixed-size numbers (float, double, int, bigint).
Python-lz4 is not needed: without it, the hook also provides the driver's v5 LZ4 segment codec.

>>> import cqlwire.driver
>>> cqlwire.driver.install()      # from now on, new connections and vector values use cqlwire
>>> cqlwire.driver.uninstall()    # back to the driver's own code

Byte-identical: a value cqlwire cannot serialize exactly as the driver would (another element
type, a value out of range, a wrong length, an integer given as a float) goes to the driver's own
code, which produces its bytes or its error. NumPy arrays (1-D, of the vector's dimension) are read
in place, without a per-element Python loop, and lists and tuples of floats through CPython's object
layout where the module proved it at import (python/README.md, "Speed"). Each parameterized vector
class gets a native ``serialize`` on its first value, so later values run no Python code of ours.
"""

from __future__ import annotations

from types import MethodType
from typing import Any, Callable, Dict, Optional

from ._cqlwire import DriverSerializer, VectorCodec, lz4_compress, lz4_decompress

__all__ = ["install", "uninstall", "installed"]

# The driver's element classes that cqlwire serializes, and their CQL names.
_ELEMENTS = {
    "FloatType": "float",
    "DoubleType": "double",
    "Int32Type": "int",
    "LongType": "bigint",
}

_saved: Optional[Dict[str, Any]] = None
_codecs: Dict[type, Optional[VectorCodec]] = {}
# The native serialize set on each parameterized class that has a codec, to take off at uninstall.
_hooks: Dict[type, Callable] = {}
_MISSING = object()


def _codec(cls: type) -> Optional[VectorCodec]:
    """The codec of a parameterized ``VectorType`` class, or None when the driver keeps it."""
    try:
        return _codecs[cls]
    except KeyError:
        pass
    subtype = getattr(cls, "subtype", None)
    element = _ELEMENTS.get(getattr(subtype, "__name__", ""))
    codec = None
    if element is not None and subtype is getattr(_cqltypes(), subtype.__name__, None):
        codec = VectorCodec("vector<%s, %d>" % (element, cls.vector_size))
        if _saved is not None and "serialize" not in cls.__dict__:
            # From now on the class's serialize is a native method (no Python frame per value)
            # that falls back to the driver's own code bound to the class.
            driver = MethodType(_saved["serialize"].__func__, cls)
            hook = cls.serialize = DriverSerializer(codec, driver).serialize
            _hooks[cls] = hook
    _codecs[cls] = codec
    return codec


def _cqltypes():
    import cassandra.cqltypes

    return cassandra.cqltypes


def _through_codec(original: Callable, use: Callable, errors: tuple) -> classmethod:
    """A classmethod that tries ``use(codec, value)`` first and falls back to the driver's
    ``original`` when the class has no codec or the codec refuses the value."""

    codecs, missing = _codecs, _MISSING

    def method(cls, value, protocol_version):
        # The cache lookup inlined: this runs once per value the driver binds.
        codec = codecs.get(cls, missing)
        if codec is missing:
            codec = _codec(cls)
        if codec is not None:
            try:
                return use(codec, value)
            except errors:
                pass
        return original(cls, value, protocol_version)

    return classmethod(method)


def install() -> None:
    """Use cqlwire in the installed ``cassandra`` package (idempotent)."""
    global _saved
    if _saved is not None:
        return
    import cassandra.connection as connection

    vector = _cqltypes().VectorType
    saved = {
        "serialize": vector.__dict__["serialize"],
        "deserialize": vector.__dict__["deserialize"],
        "lz4": connection.locally_supported_compressions.get("lz4"),
    }
    # Protocol v5 compresses segments with a codec the driver built at import from its own
    # functions, not through the table above. Without python-lz4 the driver leaves that codec
    # None, and a v5 connection that negotiated the lz4 entry set below would fail on its first
    # segment: the hook then provides the codec, on cqlwire's functions. A segment carries the
    # uncompressed length in its header and the LZ4 block alone as its payload; the driver's
    # codec strips and adds the 4-byte length that lz4_compress/lz4_decompress use.
    segments = getattr(connection, "segment_codec_lz4", _MISSING)
    if segments is None:
        from cassandra.segment import SegmentCodec

        saved["segments"] = None
        connection.segment_codec_lz4 = SegmentCodec(lz4_compress, lz4_decompress)
    elif segments is not _MISSING:
        saved["segments"] = (segments.compressor, segments.decompressor)
        segments.compressor, segments.decompressor = lz4_compress, lz4_decompress
    vector.serialize = _through_codec(
        saved["serialize"].__func__, VectorCodec.serialize, (TypeError, ValueError, OverflowError)
    )
    vector.deserialize = _through_codec(
        saved["deserialize"].__func__, VectorCodec.deserialize, (TypeError, ValueError)
    )
    compressions = connection.locally_supported_compressions
    compressions["lz4"] = (lz4_compress, lz4_decompress)
    if saved["lz4"] is None:
        # First, as the driver orders it when python-lz4 is there: it picks the first entry the
        # server also offers, and protocol v5 takes LZ4 only (snappy means no compression).
        compressions.move_to_end("lz4", last=False)
    _saved = saved


def uninstall() -> None:
    """Give the driver its own code back (idempotent)."""
    global _saved
    if _saved is None:
        return
    import cassandra.connection as connection

    vector = _cqltypes().VectorType
    vector.serialize = _saved["serialize"]
    vector.deserialize = _saved["deserialize"]
    if _saved["lz4"] is None:
        connection.locally_supported_compressions.pop("lz4", None)
    else:
        connection.locally_supported_compressions["lz4"] = _saved["lz4"]
    if "segments" in _saved:
        if _saved["segments"] is None:
            # The codec the hook provided goes; connections opened meanwhile keep theirs.
            connection.segment_codec_lz4 = None
        else:
            segments = connection.segment_codec_lz4
            segments.compressor, segments.decompressor = _saved["segments"]
    for cls, hook in _hooks.items():
        if cls.__dict__.get("serialize") is hook:
            del cls.serialize
    _hooks.clear()
    _codecs.clear()
    _saved = None


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return _saved is not None

