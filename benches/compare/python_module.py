"""The Python module's rows of benches/compare/run.py: cqlwire in-process against its peers (the
driver's VectorType.serialize and LZ4 wrappers, NumPy, creating the bytes objects, memcpy), each pair
timed alternately in one loop so that the noise of a shared machine hits both sides alike.

Run through run.py (`python3 benches/compare/run.py --python-only` for these rows alone), which
builds the module from python/ into its venv first.
"""
import statistics
import time

DIMENSION = 768
LZ4_SIZES = (1024, 8192, 65536)


def alternating(works, repeats, inner):
    """(median, min) seconds per call of each of `works` (ours first, then the peers), sampled in
    turn `repeats` times after a round of warm-up, each sample `inner` calls."""
    samples, kept = [[] for _ in works], [None] * len(works)
    for _ in range(repeats + 1):
        for side, work in enumerate(works):
            start = time.perf_counter()
            for _ in range(inner):
                result = work()
            samples[side].append((time.perf_counter() - start) / inner)
            # Each side's previous result is freed outside the timed loop, once the next one
            # exists (a steady state, as in a pipeline of batches).
            kept[side] = result
            del result
    # The first round warms up (imports, caches, the allocator).
    return [(statistics.median(s[1:]), min(s[1:])) for s in samples]


def ratio(peer, ours):
    """Peer time / our time, of the medians (of the minimums in brackets)."""
    return "%.2f× (%.2f×)" % (peer[0] / ours[0], peer[1] / ours[1])


def keep_freed_memory():
    """Tells glibc's malloc to keep freed memory and to serve large blocks from its heap: freeing a
    30 MB result otherwise hands it back to the kernel, and whichever side allocates next pays
    7,500 page faults (3-40 ms here, more than the work measured). Peers' buffers (NumPy's astype)
    then come from the reused heap too."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    trim_threshold, mmap_threshold = -1, -3  # M_TRIM_THRESHOLD, M_MMAP_THRESHOLD
    libc.mallopt(trim_threshold, 1 << 30)
    libc.mallopt(mmap_threshold, 1 << 30)


def rows(root):
    """(work, peer, peer time, our time, ratio text, target) rows, times as (median, min)."""
    import numpy as np
    from cassandra import connection
    from cassandra.cqltypes import lookup_casstype

    import cqlwire
    import cqlwire.driver

    keep_freed_memory()
    out = []
    vector = lookup_casstype("org.apache.cassandra.db.marshal.VectorType("
                             "org.apache.cassandra.db.marshal.FloatType, %d)" % DIMENSION)
    row = np.random.default_rng(1).standard_normal(DIMENSION).astype(np.float32)
    as_list = row.tolist()
    expected = vector.serialize(as_list, 4)
    driver = vector.serialize  # bound before install(): the driver's own code
    cqlwire.driver.install()
    try:
        assert vector.serialize(row, 4) == vector.serialize(as_list, 4) == expected
        for name, value, inner in (("a NumPy row", row, 5000), ("a Python list", as_list, 500),
                                   ("a tuple", tuple(as_list), 500)):
            ours, peer = alternating((lambda: vector.serialize(value, 4),
                                      lambda: driver(as_list, 4)), 15, inner)
            goal = "≤ 1 µs per call (≥ 50×)"
            out.append(("Python: VectorType.serialize 768 floats, %s, after install()" % name,
                        "the driver alone (a list)", peer, ours,
                        "%s; %.2f µs per call" % (ratio(peer, ours), ours[0] * 1e6), goal))
    finally:
        cqlwire.driver.uninstall()

    a = np.random.default_rng(2).standard_normal((10_000, DIMENSION)).astype(np.float32)
    size = DIMENSION * 4
    assert cqlwire.serialize_vectors(a)[:3] == [r.tobytes() for r in a[:3].astype(">f4")]
    # One loop for the four, so that the ratios between the peers are of the same moment: a list
    # serializer reads and writes the 30 MB at least once, as a.copy() does, so NumPy / a.copy() is
    # the most it can reach (python/README.md, "Speed").
    ours, numpy_rows, floor, memcpy = alternating((
        lambda: cqlwire.serialize_vectors(a), lambda: [r.tobytes() for r in a.astype(">f4")],
        lambda: [bytes(size) for _ in range(10_000)], a.copy), 9, 1)
    work = "Python: serialize_vectors 10,000×768 float32 → list of bytes"
    out.append((work, "NumPy [r.tobytes() for r in a.astype('>f4')]", numpy_rows, ours,
                "%s; NumPy / a.copy(): %.2f×" % (ratio(numpy_rows, ours), numpy_rows[0] / memcpy[0]), "≥ 3×"))
    out.append((work, "creating 10,000 bytes(3072) (the floor for a list)", floor, ours, ratio(floor, ours),
                "≥ 0.67× (within 1.5×)"))
    out.append((work, "a.copy() (reading and writing the 30 MB once)", memcpy, ours, ratio(memcpy, ours), "—"))
    ours, peer = alternating((lambda: cqlwire.serialize_vectors(a, format="raw"), a.copy), 9, 1)
    out.append(("Python: serialize_vectors 10,000×768 float32, format='raw'", "a.copy() (memcpy into a new buffer)",
                peer, ours, ratio(peer, ours), "≥ 0.83× (within 1.2×)"))

    payloads = root / "fixtures" / "lz4" / "payloads"
    for kind in ("text", "random"):
        for size in LZ4_SIZES:
            payload = (payloads / ("%s-%d.bin" % (kind, size))).read_bytes()
            body = connection.lz4_compress(payload)
            assert cqlwire.lz4_decompress(body) == payload == connection.lz4_decompress(cqlwire.lz4_compress(payload))
            inner = max(10, 200_000 // size)
            for op, ours_work, peer_work in (
                    ("lz4_compress", lambda: cqlwire.lz4_compress(payload), lambda: connection.lz4_compress(payload)),
                    ("lz4_decompress", lambda: cqlwire.lz4_decompress(body), lambda: connection.lz4_decompress(body))):
                ours, peer = alternating((ours_work, peer_work), 21, inner)
                out.append(("Python: %s %d KiB %s" % (op, size // 1024, kind), "driver's python-lz4 wrapper",
                            peer, ours, ratio(peer, ours), "> 1×"))
    return out
