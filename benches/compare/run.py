#!/usr/bin/env python3
"""Runs cqlwire and its peers on the same data in one run and prints one Markdown table.

    python3 benches/compare/run.py [--rows 200000] [--rounds 5] [--skip-criterion] [--inspect-mb 40]
    python3 benches/compare/run.py --inspect-only [--inspect-capture FILE] [--binary BINARY] [--rounds 3]
    python3 benches/compare/run.py --lz4-only | --python-only

The peers (pinned in requirements.txt, installed into benches/compare/.venv by this script):
the Python driver's VectorType.serialize per row, NumPy's bulk byte swap, pyarrow read_table + NumPy on
a Parquet file, the driver's LZ4 wrappers, the C lz4 library (`cargo bench --bench lz4 -- --interleaved`,
which times both round by round and reports the median of per-round ratios), `cat INPUT > OUTPUT`
and `dd bs=1M` (the user-space copy of the same bytes, a converter's floor) for the .npy conversion,
and `dd bs=1M` of a file of the same output bytes for the Parquet one. The vint-prefixed and
variable-size element types are compared with cqlwire's own int and float paths on the same input
(output MB/s, whole process), with the driver's VectorType.serialize, and with an older cqlwire
binary when `--baseline BINARY` is given.

In-process work is timed in Python for the peers and taken from criterion's sample files for cqlwire;
whole-process work runs the release binary and the peer alternately, `--rounds` times each, and reads
the peak RSS of every child from wait4. Times are medians with the minimum in brackets.

The Python module (python/, built into the venv with `pip install ./python` in the same target
directory) is compared in-process with the driver's VectorType.serialize and LZ4 wrappers, NumPy and
memcpy (python_module.py); `--python-only` prints those rows alone.

`inspect --format json` is compared with `tshark -V` on a capture replayed from the real Cassandra
v4-lz4 and v5-lz4 fixtures (benches/inspect/replay.py) to --inspect-mb MB, and cqlwire's peak RSS is
shown again on one ten times larger (--inspect-mb 0 skips both). `--inspect-only` runs that comparison
alone (no venv, no other peer), on `--inspect-capture FILE` when given (e.g. a 400 MB replay), with
`--binary` instead of building: each round's wall time, CPU time (user + system) and peak RSS of both
processes and the load average go to standard error, then a table of medians.
"""

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENV = HERE / ".venv"
DATA = ROOT / "bench-data" / "compare"
TIME = "/usr/bin/time"
DIMENSION = 768
LZ4_SIZES = (1024, 8192, 65536)
# Driver class of each element type compared in memory.
DRIVER_CLASSES = {"int": "Int32Type", "smallint": "ShortType", "tinyint": "ByteType",
                  "date": "SimpleDateType", "time": "TimeType", "float": "FloatType",
                  "text": "UTF8Type", "decimal": "DecimalType", "varint": "IntegerType"}


def target_directory() -> pathlib.Path:
    """Cargo's target directory (honours CARGO_TARGET_DIR and .cargo/config), as cargo reports it."""
    metadata = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT,
                              check=True, capture_output=True, text=True).stdout
    return pathlib.Path(json.loads(metadata)["target_directory"])


TARGET = target_directory()
BINARY = TARGET / "release" / "cqlwire"
CRITERION = TARGET / "criterion"


def ensure_venv(script: str = __file__) -> None:
    """Re-executes `script` (this one by default) inside the comparison venv with the pinned peers
    installed."""
    if pathlib.Path(sys.prefix).resolve() == VENV.resolve():
        return
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-r", str(HERE / "requirements.txt")],
        check=True,
    )
    os.execv(str(python), [str(python), script, *sys.argv[1:]])


def install_module() -> None:
    """Builds python/ (release, this target directory) and installs it into the venv, with maturin
    pinned in python/requirements.txt."""
    python = str(VENV / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "-r", str(ROOT / "python" / "requirements.txt")], check=True)
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET), PATH=f"{VENV / 'bin'}:{os.environ['PATH']}")
    subprocess.run([*pip, "--no-build-isolation", "--force-reinstall", "--no-deps", str(ROOT / "python")],
                   check=True, env=env)


def generate(rows: int):
    """Writes the float32 embeddings once as .npy and as snappy Parquet (id int64, emb list<float>)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    DATA.mkdir(parents=True, exist_ok=True)
    npy, parquet = DATA / f"emb-{rows}.npy", DATA / f"emb-{rows}.parquet"
    rng = np.random.default_rng(42)
    data = rng.standard_normal((rows, DIMENSION), dtype=np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    if not npy.exists():
        np.save(npy, data)
    if not parquet.exists():
        offsets = pa.array(np.arange(0, (rows + 1) * DIMENSION, DIMENSION, dtype=np.int32))
        emb = pa.ListArray.from_arrays(offsets, pa.array(data.reshape(-1)))
        table = pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)), "emb": emb})
        pq.write_table(table, parquet, compression="snappy", row_group_size=100_000)
    return data, npy, parquet


def generate_elements(rows: int, data):
    """Small non-negative int16 embeddings (valid for int, smallint, tinyint, date, time, varint) and
    the first `rows` float32 rows, as .npy files."""
    import numpy as np

    small = DATA / f"small-i2-{rows}.npy"
    floats = DATA / f"emb-f4-{rows}.npy"
    if not small.exists():
        rng = np.random.default_rng(7)
        np.save(small, rng.integers(0, 128, size=(rows, DIMENSION), dtype=np.int16))
    if not floats.exists():
        np.save(floats, data[:rows])
    return small, floats


def summary(seconds):
    """(median, min) of a list of durations."""
    return statistics.median(seconds), min(seconds)


def time_python(work, repeats: int, inner: int = 1):
    """Median and min seconds of `work()` over `repeats` timings of `inner` calls each."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            work()
        samples.append((time.perf_counter() - start) / inner)
    return summary(samples)


def criterion(full_id: str, skipped: bool):
    """Median and min seconds per iteration of a criterion benchmark, from its sample.json (`skipped`:
    --skip-criterion was given, so an old run's results were expected)."""
    for meta in CRITERION.glob("**/new/benchmark.json"):
        if json.loads(meta.read_text())["full_id"] == full_id:
            sample = json.loads((meta.parent / "sample.json").read_text())
            per_iter = [t / n / 1e9 for t, n in zip(sample["times"], sample["iters"])]
            return summary(per_iter)
    hint = "run without --skip-criterion" if skipped else "did `cargo bench` write it?"
    raise SystemExit(f"criterion result {full_id!r} not found in {CRITERION}: {hint}")


# Processes of the interleaved LZ4 bench whose results lz4_interleaved combines.
LZ4_PROCESSES = 5
# Bytes the k-th of them allocates before its buffers and between each body and its output buffer
# (LZ4_BENCH_SHIFT, see benches/lz4.rs): k × 1744 steps through every 16-byte alignment within a
# cache line and spreads the buffers' distance modulo 4 KiB.
LZ4_SHIFT_STEP = 1744


def lz4_interleaved(processes: int = LZ4_PROCESSES, rounds: int = 200):
    """{(op, kind, size, side): ((median, min) seconds per call, (ratio, lowest, highest))} from
    `cargo bench --bench lz4 -- --interleaved`, which times cqlwire and the C library's calls in turn,
    round by round; a process's ratio is the median over rounds of the side's time / cqlwire's time in
    the same round. It runs in `processes` processes, each with its buffers placed elsewhere
    (LZ4_SHIFT_STEP): for bodies of 1-8 KiB the placement alone moved one and the same call by up
    to 2 ×, for every side; so the result is the median over the processes of their medians and
    ratios, with the lowest and highest ratio of a process beside it, and the minimum time."""
    runs = {}
    for process in range(processes):
        env = dict(os.environ, LZ4_BENCH_SHIFT=str(process * LZ4_SHIFT_STEP))
        out = subprocess.run(["cargo", "bench", "--quiet", "--bench", "lz4", "--", "--interleaved", str(rounds)],
                             cwd=ROOT, check=True, capture_output=True, text=True, env=env).stdout
        for line in out.splitlines():
            fields = line.split("\t")
            if len(fields) == 7:
                op, kind, size, side, median, low, ratio = fields
                runs.setdefault((op, kind, int(size), side), []).append((float(median), float(low), float(ratio)))
    return {key: ((statistics.median(m for m, _, _ in values) / 1e9, min(low for _, low, _ in values) / 1e9),
                  (statistics.median(r for _, _, r in values), min(r for _, _, r in values),
                   max(r for _, _, r in values)))
            for key, values in runs.items()}


def lz4_rows():
    """LZ4 against the C library, side by side round by round (per-round ratios; see lz4_interleaved)."""
    interleaved = lz4_interleaved()
    rows = []
    for op, other in (("compress", "C lz4, driver's call"), ("decompress", "C lz4, own buffer")):
        for kind in ("text", "random"):
            for size in LZ4_SIZES:
                ours = interleaved[(op, kind, size, "cqlwire")][0]
                c_lib, (c_ratio, c_low, c_high) = interleaved[(op, kind, size, "C lz4")]
                other_ratio = interleaved[(op, kind, size, other)][1][0]
                rows.append((f"LZ4 {op} {size // 1024} KiB {kind}",
                             f"C lz4 block API (interleaved, {LZ4_PROCESSES} buffer placements)",
                             c_lib, ours, f"{c_ratio:.2f}× ({c_low:.2f}–{c_high:.2f}); {other}: {other_ratio:.2f}×",
                             "≥ 1.0×"))
    return rows


def python_rows():
    """The Python module's rows (python_module.py), timed in a fresh interpreter: in this process,
    after the rest of the run (its data, its peers' imports and allocations), they came out 1.5-1.8x
    slower than alone."""
    out = subprocess.run([sys.executable, __file__, "--python-rows-json", "--no-module-build"],
                         check=True, capture_output=True, text=True).stdout
    return [tuple(row) for row in json.loads(out.splitlines()[-1])]


def ensure_gnu_time() -> None:
    """Installs GNU time (apt-get) when missing: it measures a child's peak RSS without counting
    this (large) Python process, whose memory a forked child would otherwise inherit in ru_maxrss."""
    if not pathlib.Path(TIME).exists():
        subprocess.run(["apt-get", "update", "-qq"], check=True, stdout=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "-qq", "time"], check=True, stdout=sys.stderr)


def remove(output: pathlib.Path) -> None:
    """Deletes an output file of an earlier run (never a device such as /dev/null)."""
    if output.is_file():
        output.unlink()


def measure(command, output: pathlib.Path):
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one child process writing to
    `output`, from GNU time."""
    remove(output)
    DATA.mkdir(parents=True, exist_ok=True)
    report = DATA / "rss.txt"
    with open(output, "wb") as sink:
        start = time.perf_counter()
        child = subprocess.run([TIME, "-f", "%M %U %S", "-o", str(report), *command], stdout=sink,
                               stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"{command} failed: {child.stderr.decode()}")
    kib, user, system = report.read_text().split()[-3:]
    return seconds, int(kib) / 1024, float(user) + float(system)


def run_process(command, output: pathlib.Path):
    """Wall seconds and peak RSS (MiB) of one child process writing to `output`."""
    seconds, rss, _ = measure(command, output)
    return seconds, rss


def output_rates(commands, rounds: int, output: pathlib.Path):
    """Runs the commands in turn, `rounds` times; returns per command (time summary, output bytes)."""
    times, sizes = [[] for _ in commands], [0] * len(commands)
    for _ in range(rounds):
        for index, command in enumerate(commands):
            seconds, _ = run_process(command, output)
            times[index].append(seconds)
            sizes[index] = output.stat().st_size
    output.unlink(missing_ok=True)
    return [(summary(t), size) for t, size in zip(times, sizes)]


def alternate(peer, ours, rounds: int, output: pathlib.Path):
    """Runs the peer and cqlwire alternately; returns (peer times, our times, peer RSS, our RSS)."""
    peer_t, ours_t, peer_rss, ours_rss = [], [], 0.0, 0.0
    for _ in range(rounds):
        for command, times, is_peer in ((peer, peer_t, True), (ours, ours_t, False)):
            seconds, rss = run_process(command, output)
            times.append(seconds)
            if is_peer:
                peer_rss = max(peer_rss, rss)
            else:
                ours_rss = max(ours_rss, rss)
    remove(output)
    return summary(peer_t), summary(ours_t), peer_rss, ours_rss


def replayed(fixture: str, megabytes: int) -> pathlib.Path:
    """A real capture replayed over new connections to `megabytes` MB, under bench-data/."""
    path = DATA / f"{fixture}-{megabytes}M.pcap"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "benches" / "inspect" / "replay.py"),
                        str(ROOT / "fixtures" / "inspect" / f"{fixture}.pcap"), str(path),
                        "--size", f"{megabytes}M"], check=True, stderr=subprocess.DEVNULL)
    return path


def ensure_tshark() -> None:
    """Installs tshark (apt-get) when missing; apt's log goes to standard error, as every progress
    line of this script does, so that standard output is the table alone."""
    if not pathlib.Path("/usr/bin/tshark").exists():
        subprocess.run(["apt-get", "install", "-y", "-qq", "tshark"], check=True, stdout=sys.stderr)


def inspect_pair(capture: pathlib.Path, binary: pathlib.Path, rounds: int, out: pathlib.Path):
    """`tshark -V` and `cqlwire inspect --format json` alternately on one capture, `rounds` times
    each; returns per command its (wall, peak RSS, CPU) of every round, each round told on stderr."""
    commands = {"tshark": ["tshark", "-V", "-r", str(capture)],
                "cqlwire": [str(binary), "inspect", str(capture), "--format", "json", "--quiet"]}
    runs = {name: [] for name in commands}
    for round_ in range(1, rounds + 1):
        for name, command in commands.items():
            wall, rss, cpu = measure(command, out)
            runs[name].append((wall, rss, cpu))
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"round {round_} {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.1f} MiB peak RSS; "
                  f"load average {load}", file=sys.stderr, flush=True)
    return runs


def inspect_rows(megabytes: int, rounds: int, out: pathlib.Path, binary: pathlib.Path):
    """`cqlwire inspect --format json` against `tshark -V` on the same replayed captures, and
    cqlwire alone on one ten times larger (peak RSS whatever the size)."""
    ensure_tshark()
    rows = []
    for fixture in ("v4-lz4", "v5-lz4"):
        capture = replayed(fixture, megabytes)
        size = capture.stat().st_size / 1e6
        runs = inspect_pair(capture, binary, rounds, out)
        peer, ours = (summary([wall for wall, _, _ in runs[name]]) for name in ("tshark", "cqlwire"))
        peer_rss, ours_rss = (max(rss for _, rss, _ in runs[name]) for name in ("tshark", "cqlwire"))
        rows.append((f"inspect --format json, {fixture} replayed ({size:.0f} MB)",
                     f"tshark -V (RSS {peer_rss:.0f} MiB)", peer, ours,
                     f"{peer[0] / ours[0]:.1f}×; cqlwire RSS {ours_rss:.1f} MiB", "≥ 10×, RSS ≤ 64 MiB"))
    capture = replayed("v5-lz4", megabytes * 10)
    size = capture.stat().st_size / 1e6
    runs = [run_process([str(binary), "inspect", str(capture), "--format", "json", "--quiet"], out)
            for _ in range(max(1, rounds // 2))]
    ours = summary([seconds for seconds, _ in runs])
    rows.append((f"inspect --format json, v5-lz4 replayed ({size:.0f} MB)", "—", None, ours,
                 f"{size / ours[0]:.0f} MB/s; cqlwire RSS {max(rss for _, rss in runs):.1f} MiB", "RSS ≤ 64 MiB"))
    return rows


def inspect_only(args) -> None:
    """`--inspect-only`: tshark against cqlwire on `--inspect-capture` (or the v4-lz4 replay of
    `--inspect-mb` MB), printed as a table of medians (minimum) with CPU times and the ratios."""
    ensure_gnu_time()
    ensure_tshark()
    binary = args.binary or BINARY
    if not args.binary:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    capture = args.inspect_capture or replayed("v4-lz4", args.inspect_mb)
    runs = inspect_pair(capture, binary, args.rounds, pathlib.Path(os.devnull))
    wall, cpu = ({name: summary([r[i] for r in runs[name]]) for name in runs} for i in (0, 2))
    rss = {name: max(r[1] for r in runs[name]) for name in runs}
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    size = capture.stat().st_size / 1e6
    print(f"\n{capture.name}, {size:.0f} MB, {args.rounds} rounds; load average at the end {load}\n")
    print("| process | wall | CPU (user + system) | peak RSS |")
    print("| --- | --- | --- | --- |")
    for name, label in (("tshark", "tshark -V"), ("cqlwire", "cqlwire inspect --format json")):
        print(f"| {label} | {fmt(wall[name])} | {fmt(cpu[name])} | {rss[name]:.1f} MiB |")
    print(f"\nspeed vs tshark: {wall['tshark'][0] / wall['cqlwire'][0]:.1f}× wall, "
          f"{cpu['tshark'][0] / cpu['cqlwire'][0]:.1f}× CPU (medians); per round: "
          + ", ".join(f"{t[0] / c[0]:.1f}×" for t, c in zip(runs["tshark"], runs["cqlwire"])))


def fmt(t):
    """'median (min)' with a unit that suits the size; '—' for None."""
    if t is None:
        return "—"
    median, low = t
    for unit, scale in (("s", 1), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9)):
        if median >= 1 / scale or unit == "ns":
            return f"{median * scale:.3g} {unit} ({low * scale:.3g})"
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows × 768 floats of test data")
    parser.add_argument("--rounds", type=int, default=5, help="alternating runs of each process")
    parser.add_argument("--skip-criterion", action="store_true", help="reuse the criterion results of an earlier run")
    parser.add_argument("--element-rows", type=int, default=50_000,
                        help="rows × 768 for the vint-prefixed and variable-size element types")
    parser.add_argument("--baseline", type=pathlib.Path,
                        help="an older cqlwire binary to compare the element-type conversions with")
    parser.add_argument("--inspect-mb", type=int, default=40,
                        help="size of the replayed captures for inspect vs tshark -V (0: skip)")
    parser.add_argument("--inspect-only", action="store_true",
                        help="only inspect vs tshark -V, with CPU times, on --inspect-capture when given")
    parser.add_argument("--inspect-capture", type=pathlib.Path,
                        help="the capture for --inspect-only (default: the v4-lz4 replay of --inspect-mb MB)")
    parser.add_argument("--binary", type=pathlib.Path,
                        help="the cqlwire binary for the inspect rows (default: build the release one)")
    parser.add_argument("--python-only", action="store_true", help="only the Python module's rows")
    parser.add_argument("--lz4-only", action="store_true",
                        help="only LZ4 against the C library (no venv: cargo bench --bench lz4 -- --interleaved)")
    parser.add_argument("--no-module-build", action="store_true",
                        help="use the cqlwire module already installed in the venv")
    parser.add_argument("--python-rows-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inspect_only:
        inspect_only(args)
        return
    if args.lz4_only:
        print_table(lz4_rows(), args)
        return
    ensure_venv()
    if not args.no_module_build:
        install_module()
    if args.python_rows_json:
        import python_module

        print(json.dumps(python_module.rows(ROOT)))
        return
    if args.python_only:
        print_table(python_rows(), args)
        return

    import numpy as np
    from cassandra.connection import lz4_compress, lz4_decompress
    from cassandra.cqltypes import lookup_casstype

    ensure_gnu_time()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    if not args.skip_criterion:
        for bench, pattern in (("vector", "(vector<float,768>|vint-prefixed vector<T,768>|variable vector<T,768>) x1000/"),
                               ("lz4", "lz4 (compress|decompress)/")):
            subprocess.run(["cargo", "bench", "--quiet", "--bench", bench, "--", pattern], cwd=ROOT,
                           check=True, stdout=subprocess.DEVNULL)
    data, npy, parquet = generate(args.rows)
    rows = []  # (work, peer, peer time, our time, ratio text, target)

    # In memory: 1000 rows of vector<float, 768>.
    block = np.ascontiguousarray(data[:1000])
    vector = lookup_casstype(
        f"org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, {DIMENSION})")
    as_lists = block.tolist()
    driver = time_python(lambda: [vector.serialize(r, 4) for r in as_lists], 5)
    numpy_bulk = time_python(lambda: np.asarray(block, ">f4").tobytes(), 20, 10)
    per_row, bulk, memcpy = (criterion(f"vector<float,768> x1000/{name}", args.skip_criterion) for name in ("per row", "bulk", "memcpy"))
    rows.append(("vector<float,768> ×1000, per row", "driver VectorType.serialize", driver, per_row,
                 f"{driver[0] / per_row[0]:.0f}×", "—"))
    rows.append(("vector<float,768> ×1000, bulk", "NumPy astype('>f4').tobytes()", numpy_bulk, bulk,
                 f"{numpy_bulk[0] / bulk[0]:.1f}×", "≥ 10×"))
    rows.append(("vector<float,768> ×1000, bulk", "memcpy of the same bytes (Rust)", memcpy, bulk,
                 f"{memcpy[0] / bulk[0]:.2f}×", "≥ 1.0×"))

    # In memory: 1000 rows of the vint-prefixed and variable-size element types against the driver.
    small_block = np.random.default_rng(7).integers(0, 128, size=(1000, DIMENSION)).tolist()
    float_block = block.tolist()
    for element, cases in (("vint-prefixed", ("int", "smallint", "tinyint", "date", "time")),
                           ("variable", ("float", "text", "decimal"))):
        for name in cases:
            driver_type = lookup_casstype(
                f"org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal."
                f"{DRIVER_CLASSES[name]}, {DIMENSION})")
            values = small_block if element == "vint-prefixed" else float_block
            if name == "text":
                values = [[np.format_float_positional(np.float32(x), unique=True, trim="-") for x in r] for r in values]
            elif name == "decimal":
                from decimal import Decimal
                values = [[Decimal(np.format_float_positional(np.float32(x), unique=True, trim="-")) for x in r]
                          for r in values]
            driver_rows = time_python(lambda: [driver_type.serialize(r, 4) for r in values], 3)
            ours = criterion(f"{element} vector<T,768> x1000/{name}", args.skip_criterion)
            rows.append((f"vector<{name},768> ×1000, bulk", "driver VectorType.serialize", driver_rows, ours,
                         f"{driver_rows[0] / ours[0]:.0f}×", "—"))

    # LZ4 bodies on the fixture payloads the criterion bench uses.
    for size in LZ4_SIZES:
        payload = (ROOT / "fixtures" / "lz4" / "payloads" / f"text-{size}.bin").read_bytes()
        body = lz4_compress(payload)
        inner = max(1, 200_000 // size)
        for op, work in (("compress", lambda: lz4_compress(payload)), ("decompress", lambda: lz4_decompress(body))):
            ours = criterion(f"lz4 {op}/cqlwire/text/{size}", args.skip_criterion)
            py = time_python(work, 20, inner)
            label = f"LZ4 {op} {size // 1024} KiB text"
            rows.append((label, "driver lz4 wrapper (python-lz4)", py, ours, f"{py[0] / ours[0]:.2f}×", "—"))

    rows += lz4_rows()

    # Whole process, alternating.
    out = DATA / "out.bin"
    size_mb = npy.stat().st_size / 1e6
    cat, ours, cat_rss, ours_rss = alternate(["cat", str(npy)], [str(BINARY), "convert", str(npy), "--quiet"],
                                             args.rounds, out)
    rows.append((f".npy → raw, {args.rows}×768 ({size_mb:.0f} MB)", f"cat INPUT > OUTPUT (RSS {cat_rss:.1f} MiB)",
                 cat, ours, f"{cat[0] / ours[0]:.2f}×; cqlwire RSS {ours_rss:.1f} MiB",
                 "≥ 0.9×, RSS ≤ 64 MiB"))
    # GNU cat copies with copy_file_range (in the kernel); dd bs=1M copies through user space, as a
    # converter must: the floor of a converter's process.
    dd, ours, _, _ = alternate(["dd", f"if={npy}", "bs=1M", "status=none"],
                               [str(BINARY), "convert", str(npy), "--quiet"], args.rounds, out)
    rows.append((f".npy → raw, {args.rows}×768 ({size_mb:.0f} MB)", "dd if=INPUT bs=1M > OUTPUT",
                 dd, ours, f"{dd[0] / ours[0]:.2f}×", "≥ 0.9×"))
    peer = [sys.executable, str(HERE / "peer_parquet.py"), str(parquet), "emb"]
    arrow, ours, arrow_rss, ours_rss = alternate(peer, [str(BINARY), "convert", str(parquet), "--quiet"],
                                                 args.rounds, out)
    rows.append((f"Parquet → raw, {args.rows}×768 snappy", f"pyarrow read_table + NumPy (RSS {arrow_rss:.1f} MiB)",
                 arrow, ours, f"{arrow[0] / ours[0]:.1f}×; cqlwire RSS {ours_rss:.1f} MiB", "≥ 2×"))
    # dd of a file holding the same output bytes: the same reads and writes without decoding.
    raw = DATA / f"raw-{args.rows}.bin"
    if not raw.exists():
        subprocess.run([str(BINARY), "convert", str(parquet), "--quiet", "-o", str(raw)], check=True)
    dd, ours, _, _ = alternate(["dd", f"if={raw}", "bs=1M", "status=none"],
                               [str(BINARY), "convert", str(parquet), "--quiet"], args.rounds, out)
    rows.append((f"Parquet → raw, {args.rows}×768 snappy", "dd bs=1M of the same output bytes",
                 dd, ours, f"{dd[0] / ours[0]:.2f}×", "≥ 0.8×"))

    # Whole process: the element types against cqlwire's own int / float path on the same input
    # (output MB/s), and against an older binary when given.
    small, floats = generate_elements(args.element_rows, data)
    label_rows = f"{args.element_rows}×768"
    for source, reference, targets, goal in (
            (small, "int", ("smallint", "tinyint", "date", "time"), ("≥ 0.8×", "—")),
            (small, "int", ("varint",), ("≥ 0.3×", "≥ 5×")),
            (floats, "float", ("text", "decimal"), ("≥ 0.3×", "≥ 5×"))):
        for target in targets:
            ty = lambda t: ["--type", f"vector<{t}, {DIMENSION}>"]
            commands = [[str(BINARY), "convert", str(source), "--quiet", *ty(reference)],
                        [str(BINARY), "convert", str(source), "--quiet", *ty(target)]]
            if args.baseline:
                commands.append([str(args.baseline), "convert", str(source), "--quiet", *ty(target)])
            # tinyint writes as many bytes as it reads: `cat` of the input is the floor of its process.
            if target == "tinyint":
                commands.append(["cat", str(source)])
            results = output_rates(commands, args.rounds, out)
            (ref_t, ref_size), (ours_t, ours_size) = results[:2]
            rate = lambda t, size: size / t[0] / 1e6
            work = f"convert {source.name.split('-')[0]} .npy → vector<{target},768>, {label_rows}"
            rows.append((work, f"cqlwire vector<{reference},768>, same input ({rate(ref_t, ref_size):.0f} MB/s out)",
                         ref_t, ours_t, f"{rate(ours_t, ours_size) / rate(ref_t, ref_size):.2f}× output MB/s "
                         f"({rate(ours_t, ours_size):.0f} MB/s)", goal[0]))
            if args.baseline:
                base_t, _ = results[2]
                rows.append((work, f"cqlwire before ({args.baseline.name})", base_t, ours_t,
                             f"{base_t[0] / ours_t[0]:.1f}×", goal[1]))
            if target == "tinyint":
                cat_t, _ = results[-1]
                rows.append((work, "cat of the input (reads and writes as many bytes: the floor)", cat_t, ours_t,
                             f"{cat_t[0] / ours_t[0]:.2f}×", "—"))

    if args.inspect_mb:
        rows.extend(inspect_rows(args.inspect_mb, args.rounds, pathlib.Path(os.devnull), args.binary or BINARY))
    rows.extend(python_rows())
    print_table(rows, args)


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo, with its family and model numbers."""
    info = {}
    for line in open("/proc/cpuinfo"):
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    cpu = info.get("model name", platform.processor())
    if "cpu family" in info:  # e.g. AMD: family 25 is Zen 3/4, 26 is Zen 5
        cpu += f" (family {info['cpu family']}, model {info.get('model', '?')})"
    return cpu


def print_table(rows, args) -> None:
    """The Markdown table of (work, peer, peer time, our time, ratio text, target) rows."""
    print(f"\nMachine: {cpu_name()}, {os.cpu_count()} cores; rows {args.rows}, rounds {args.rounds}\n")
    print("| work | peer | peer time | cqlwire time | speed vs peer (peer time / cqlwire time) | target |")
    print("| --- | --- | --- | --- | --- | --- |")
    for work, name, p, o, ratio, target in rows:
        print(f"| {work} | {name} | {fmt(p)} | {fmt(o)} | {ratio} | {target} |")


if __name__ == "__main__":
    main()
