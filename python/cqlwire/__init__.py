"""cqlwire: the bytes of the Cassandra/ScyllaDB native protocol (CQL), from the Rust library.

Vector values for NumPy and pyarrow data, CQL v4 LZ4 bodies, and any value's wire bytes, with the
same types, checks and one-line error messages as the ``cqlwire`` command line.

>>> import numpy as np, cqlwire
>>> cqlwire.serialize_vectors(np.array([[1.0, 2.0]], dtype=np.float32), "vector<float, 2>")
[b'?\\x80\\x00\\x00@\\x00\\x00\\x00']
>>> cqlwire.decode("list<int>", cqlwire.encode("list<int>", [1, 2]))
[1, 2]
>>> cqlwire.lz4_decompress(cqlwire.lz4_compress(b"hello hello hello hello"))
b'hello hello hello hello'

``cqlwire.load(source, hosts=..., table=...)`` loads a file, a NumPy array or a pyarrow table into
a live table on the command line's engine.

``cqlwire.driver.install()`` makes an installed ``cassandra`` driver use cqlwire for LZ4 and for
vectors of fixed-size numbers.
"""

from ._cqlwire import (
    DEFAULT_MAX_SIZE,
    JobFailed,
    LoadError,
    LoadFailed,
    LoadReport,
    RefusedValueWarning,
    SearchReport,
    UnloadReport,
    UsageError,
    VectorCodec,
    bench,
    decode,
    deserialize_vectors,
    encode,
    explain,
    load,
    search,
    unload,
    lz4_compress,
    lz4_decompress,
    serialize_vectors,
)

__all__ = [
    "DEFAULT_MAX_SIZE",
    "JobFailed",
    "LoadError",
    "LoadFailed",
    "LoadReport",
    "RefusedValueWarning",
    "SearchReport",
    "UnloadReport",
    "UsageError",
    "VectorCodec",
    "bench",
    "decode",
    "deserialize_vectors",
    "encode",
    "explain",
    "load",
    "search",
    "unload",
    "lz4_compress",
    "lz4_decompress",
    "serialize_vectors",
]
