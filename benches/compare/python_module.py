"""The Python module against its peers, side by side in one run (medians of timeit repeats).

    .venv/bin/python benches/compare/python_module.py

Needs cqlwire installed (pip install ./python) and the peers of benches/compare/requirements.txt.
"""
import os
import timeit

import numpy as np
from cassandra import connection
from cassandra.cqltypes import lookup_casstype

import cqlwire
import cqlwire.driver


def best(statement, number, repeat=7, **names):
    """Median seconds per call."""
    times = timeit.repeat(statement, number=number, repeat=repeat, globals=names)
    return sorted(times)[len(times) // 2] / number


def row(what, ours, theirs, unit=1e-6, label="µs"):
    print("| %s | %.3f %s | %.3f %s | %.1f× |" % (what, ours / unit, label, theirs / unit, label, theirs / ours))


def main():
    print("| what | cqlwire | peer | speed-up |")
    print("| --- | --- | --- | --- |")
    vector = lookup_casstype(
        "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 768)")
    values = np.random.default_rng(1).standard_normal(768).astype(np.float32)
    as_list = values.tolist()
    driver_list = best("v.serialize(x, 4)", 200, v=vector, x=as_list)
    cqlwire.driver.install()
    ours_list = best("v.serialize(x, 4)", 2000, v=vector, x=as_list)
    ours_array = best("v.serialize(x, 4)", 20000, v=vector, x=values)
    cqlwire.driver.uninstall()
    row("VectorType.serialize 768 floats, list (install() vs driver)", ours_list, driver_list)
    row("VectorType.serialize 768 floats, NumPy row (install() vs driver on a list)", ours_array, driver_list)

    a = np.random.default_rng(2).standard_normal((10_000, 768)).astype(np.float32)
    numpy_rows = best("[r.tobytes() for r in a.astype('>f4')]", 3, a=a)
    ours_rows = best("cqlwire.serialize_vectors(a)", 3, a=a, cqlwire=cqlwire)
    floor = best("[bytes(n) for _ in range(10_000)]", 3, n=3072)
    ours_raw = best("cqlwire.serialize_vectors(a, format='raw')", 5, a=a, cqlwire=cqlwire)
    memcpy = best("a.copy()", 5, a=a)
    row("serialize_vectors 10,000×768 f32, list (vs NumPy astype+tobytes)", ours_rows, numpy_rows, 1e-3, "ms")
    row("serialize_vectors list vs creating 10,000 bytes(3072) (floor)", ours_rows, floor, 1e-3, "ms")
    row("serialize_vectors raw vs a.copy() (memcpy)", ours_raw, memcpy, 1e-3, "ms")

    payloads = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "lz4", "payloads")
    compress, decompress = connection.lz4_compress, connection.lz4_decompress
    for size in (1 << 10, 8 << 10, 64 << 10):
        with open(os.path.join(payloads, "text-%d.bin" % size), "rb") as f:
            payload = f.read()
        body = compress(payload)
        row("lz4_compress %d KiB (vs driver)" % (size >> 10),
            best("f(p)", 2000, f=cqlwire.lz4_compress, p=payload), best("f(p)", 2000, f=compress, p=payload))
        row("lz4_decompress %d KiB (vs driver)" % (size >> 10),
            best("f(b)", 2000, f=cqlwire.lz4_decompress, b=body), best("f(b)", 2000, f=decompress, b=body))


if __name__ == "__main__":
    main()
