"""Type stubs of the native module (the functions' docstrings have examples)."""

from typing import Any, Literal, Sequence, Tuple, Union

import numpy
import numpy.typing

DEFAULT_MAX_SIZE: int
"""The default ``max_size`` of :func:`lz4_decompress`: 256 MiB."""
_object_layout: Tuple[bool, bool, bool]
"""Which of (list, tuple, float) ``VectorCodec`` reads through CPython's object layout, proven at
import (python/README.md, "Speed")."""

BytesLike = Union[bytes, bytearray, memoryview]
Json = Any
"""A value in the JSON shapes of ``cqlwire decode --format json`` (None, bool, int, float, str,
list, dict)."""

def serialize_vectors(
    data: Any,
    cql_type: Union[str, None] = None,
    *,
    format: Literal["list", "raw", "framed"] = "list",
) -> Union[list, bytes]:
    """Serialize rows of numbers into CQL ``vector<T, N>`` values.

    ``data``: a 2-D NumPy array (float16/32/64, int8/16/32/64, uint8, bool; either byte order; C or
    Fortran order), a pyarrow Array / ChunkedArray / RecordBatch / Table with a list, large_list or
    fixed_size_list column, or a sequence of sequences. Null rows (a null Arrow row, a ``None`` row
    of a sequence, a fully masked row of a ``numpy.ma`` array) are None with ``format="list"``,
    ``-1`` with ``"framed"`` and an error with ``"raw"``; a masked element of a row is an error.
    ``format="list"`` returns one ``bytes`` per row, ``"raw"`` the values concatenated,
    ``"framed"`` each as a protocol ``[bytes]``. Raises ``ValueError`` (bad data) or ``TypeError``
    (unusable type or object).
    """

def deserialize_vectors(data: Union[bytes, Sequence[bytes]], cql_type: str) -> numpy.ndarray:
    """Read ``vector<T, N>`` values (concatenated, or one ``bytes`` each) into a rows × N array."""

def encode(cql_type: str, value: Json, *, udts: Sequence[str] = ()) -> bytes:
    """The wire bytes of one value given in the JSON shapes of ``decode --format json``; ``bytes``
    only for a blob (a ``TypeError`` elsewhere, as in the driver); a ``set`` for a set, and a dict
    with keys other than ``str`` for a map, as the driver takes them."""

def decode(cql_type: str, data: BytesLike, *, udts: Sequence[str] = ()) -> Json:
    """One value's bytes as the JSON shapes of ``decode --format json``."""

def explain(cql_type: str, data: BytesLike, *, udts: Sequence[str] = ()) -> str:
    """An annotated dump of one value's bytes, one line per wire item."""

def lz4_compress(body: BytesLike) -> bytes:
    """A CQL v4 LZ4 body: 4-byte big-endian length, then the LZ4 block."""

def lz4_decompress(body: BytesLike, *, max_size: int = ...) -> bytes:
    """The payload of a CQL v4 LZ4 body; a declared length above ``max_size`` is refused."""

class VectorCodec:
    """One vector type's codec for single values (what a driver binds per row)."""

    def __init__(self, cql_type: str) -> None: ...
    @property
    def dimension(self) -> int: ...
    def serialize(self, value: numpy.typing.ArrayLike) -> bytes: ...
    def deserialize(self, data: bytes) -> list: ...

class DriverSerializer:
    """The driver's ``VectorType.serialize`` of one parameterized class (set by ``cqlwire.driver``):
    ``codec``, else ``fallback(value, protocol_version)`` for what the codec refuses."""

    def __init__(self, codec: VectorCodec, fallback: Any) -> None: ...
    def serialize(self, value: Any, protocol_version: int) -> bytes: ...
