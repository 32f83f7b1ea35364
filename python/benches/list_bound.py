"""What bounds serialize_vectors(a) to a list of bytes (python/README.md, "Speed"): NumPy's peer and
its two halves, a.copy() (reading and writing the 30 MB once), run.py's floor, the allocation of the
10,000 bytes objects alone, and ours as a list and as one buffer, timed in turn in one loop.

    python python/benches/list_bound.py [ROUNDS]    # in a venv with cqlwire and numpy installed
"""
import ctypes
import statistics
import sys
import time

import numpy as np

import cqlwire


def main(rounds: int) -> None:
    try:  # keep freed memory, as benches/compare/python_module.py does
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-1, 1 << 30)
        libc.mallopt(-3, 1 << 30)
    except OSError:
        pass
    new = ctypes.pythonapi.PyBytes_FromStringAndSize
    new.restype, new.argtypes = ctypes.py_object, (ctypes.c_void_p, ctypes.c_ssize_t)
    a = np.random.default_rng(2).standard_normal((10_000, 768)).astype(np.float32)
    swapped = a.astype(">f4")
    works = {
        "NumPy [r.tobytes() for r in a.astype('>f4')]": lambda: [r.tobytes() for r in a.astype(">f4")],
        "  its a.astype('>f4') alone": lambda: a.astype(">f4"),
        "  its [r.tobytes() for r in ...] alone": lambda: [r.tobytes() for r in swapped],
        "a.copy()": a.copy,
        "10,000 bytes(3072) (run.py's floor)": lambda: [bytes(3072) for _ in range(10_000)],
        "10,000 PyBytes_FromStringAndSize(NULL, 3072) via ctypes": lambda: [new(None, 3072) for _ in range(10_000)],
        "  the same with size 0 (ctypes' own cost)": lambda: [new(None, 0) for _ in range(10_000)],
        "serialize_vectors(a, format='raw')": lambda: cqlwire.serialize_vectors(a, format="raw"),
        "serialize_vectors(a)": lambda: cqlwire.serialize_vectors(a),
    }
    samples, kept = {name: [] for name in works}, {}
    for round_ in range(rounds + 1):
        for name, work in works.items():
            start = time.perf_counter()
            result = work()
            elapsed = time.perf_counter() - start
            if round_:  # the first round warms up
                samples[name].append(elapsed)
            kept[name] = result
            del result
    for name, times in samples.items():
        print("%-58s min %6.2f ms  median %6.2f ms" % (name, min(times) * 1e3, statistics.median(times) * 1e3))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
