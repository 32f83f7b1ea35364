"""Builds of the module side by side in one interpreter (python/README.md, "Why one abi3
wheel"): VectorType.serialize (the native method install() puts on the class) and
VectorCodec.serialize of 768 floats as a list, a tuple and a NumPy row, and serialize_vectors of
10,000 × 768 float32, each work timed for every build in turn in one loop (benches/compare's
`alternating`), medians compared with the first build.

    python python/benches/builds.py WHEEL [WHEEL...] [--c-api] [--rounds N]

in a venv with numpy and cassandra-driver (fixtures/requirements.txt). Each wheel is unpacked to a
temporary directory and imported under a package name of its own; --c-api also loads each one with
CQLWIRE_OBJECT_LAYOUT=0 (every list and float read through the C API).
"""
import argparse
import importlib
import os
import pathlib
import shutil
import sys
import tempfile
import zipfile

import numpy as np
from cassandra.cqltypes import lookup_casstype

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches" / "compare"))
from python_module import DIMENSION, alternating, keep_freed_memory  # noqa: E402


def load(wheel: pathlib.Path, into: pathlib.Path, name: str, c_api: bool):
    """The `cqlwire` package of `wheel`, imported as `name` (its own copy of the extension, so a
    second load of one wheel initializes a module of its own)."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(into / "unpacked")
    shutil.copytree(into / "unpacked" / "cqlwire", into / name)
    if str(into) not in sys.path:
        sys.path.insert(0, str(into))
    if c_api:
        os.environ["CQLWIRE_OBJECT_LAYOUT"] = "0"
    try:
        package = importlib.import_module(name)
        importlib.import_module(name + ".driver")
        return package
    finally:
        os.environ.pop("CQLWIRE_OBJECT_LAYOUT", None)
        shutil.rmtree(into / "unpacked")


def native_serialize(package, vector, value):
    """The native serialize that `package.driver.install()` sets on the parameterized class."""
    package.driver.install()
    try:
        vector.serialize(value, 4)
        return vector.__dict__["serialize"]
    finally:
        package.driver.uninstall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheels", nargs="+", type=pathlib.Path)
    parser.add_argument("--c-api", action="store_true", help="also each wheel with CQLWIRE_OBJECT_LAYOUT=0")
    parser.add_argument("--rounds", type=int, default=15, help="samples per work and build")
    args = parser.parse_args()
    keep_freed_memory()
    vector = lookup_casstype("org.apache.cassandra.db.marshal.VectorType("
                             "org.apache.cassandra.db.marshal.FloatType, %d)" % DIMENSION)
    row = np.random.default_rng(1).standard_normal(DIMENSION).astype(np.float32)
    values = {"a list": row.tolist(), "a tuple": tuple(row.tolist()), "a NumPy row": row}
    expected = vector.serialize(values["a list"], 4)
    matrix = np.random.default_rng(2).standard_normal((10_000, DIMENSION)).astype(np.float32)

    builds = []
    with tempfile.TemporaryDirectory() as temporary:
        for wheel in args.wheels:
            for c_api in (False, True) if args.c_api else (False,):
                label = wheel.name.split("-")[2:4]
                label = "-".join(label) + (", CQLWIRE_OBJECT_LAYOUT=0" if c_api else "")
                package = load(wheel, pathlib.Path(temporary), "cqlwire_build%d" % len(builds), c_api)
                codec = package.VectorCodec("vector<float, %d>" % DIMENSION)
                hook = native_serialize(package, vector, values["a list"])
                for value in values.values():
                    assert hook(value, 4) == codec.serialize(value) == expected
                print("build %d: %s, in-place reads (list, tuple, float): %s"
                      % (len(builds), label, package._cqlwire._object_layout))
                builds.append((package, codec, hook))

        works = []
        for name, value in values.items():
            works.append(("VectorType.serialize, %s" % name, 500 if name != "a NumPy row" else 5000,
                          [lambda h=hook, v=value: h(v, 4) for _, _, hook in builds]))
            works.append(("VectorCodec.serialize, %s" % name, 500 if name != "a NumPy row" else 5000,
                          [lambda c=codec, v=value: c.serialize(v) for _, codec, _ in builds]))
        works.append(("serialize_vectors 10,000×768 float32", 1,
                      [lambda p=package: p.serialize_vectors(matrix) for package, _, _ in builds]))

        print("%-46s %s" % ("median (min) per call", "   ".join("build %d" % i for i in range(len(builds)))))
        for name, inner, calls in works:
            times = alternating(calls, args.rounds, inner)
            unit, scale = ("ms", 1e3) if inner == 1 else ("µs", 1e6)
            cells = ["%.3f (%.3f) %s" % (median * scale, low * scale, unit) for median, low in times]
            ratios = ["%.2f×" % (median / times[0][0]) for median, _ in times[1:]]
            print("%-46s %s   vs build 0: %s" % (name, "   ".join(cells), ", ".join(ratios)))


if __name__ == "__main__":
    main()
