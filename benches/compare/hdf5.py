#!/usr/bin/env python3
"""Times `cqlwire convert` of an HDF5 dataset against h5py + NumPy (`astype('>f4').tobytes()`), whole
processes, alternating, medians, and checks that both write the same bytes.

    python3 benches/compare/hdf5.py [--rows 100000] [--rounds 3]

The input: `--rows` × 768 float32 (load.py's seeded rows of norm 1) as the `train` dataset of two
files written by h5py, the way ann-benchmarks writes its files (contiguous, no filter) and chunked
(1,000 rows a chunk) with gzip level 4 + shuffle. Each process writes the values concatenated (raw,
big-endian) to a file under bench-data/; its wall time, peak RSS and CPU come from GNU time.
"""

import argparse
import filecmp
import sys

import load  # noqa: E402 (load.py's rows)
import run  # noqa: E402

HERE, ROOT = run.HERE, run.ROOT
DATA = ROOT / "bench-data" / "hdf5"


def write_files(rows: int):
    """The contiguous and the chunked gzip file (made once)."""
    import h5py

    DATA.mkdir(parents=True, exist_ok=True)
    files = {"contiguous": DATA / f"train-{rows}.hdf5", "chunked gzip + shuffle": DATA / f"train-{rows}-gzip.hdf5"}
    options = {"contiguous": {}, "chunked gzip + shuffle": {"chunks": (1000, load.DIMENSION),
                                                            "compression": "gzip", "compression_opts": 4,
                                                            "shuffle": True}}
    for kind, path in files.items():
        if path.exists():
            continue
        with h5py.File(path, "w") as f:
            train = f.create_dataset("train", (rows, load.DIMENSION), dtype="<f4", **options[kind])
            for start in range(0, rows, 10_000):
                end = min(rows, start + 10_000)
                train[start:end] = load.embeddings(start, end)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows × 768 float32 (default 100000)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, alternating (default 3)")
    args = parser.parse_args()
    run.ensure_venv(__file__)
    run.ensure_gnu_time()
    import subprocess

    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "cqlwire"], cwd=ROOT, check=True)
    files = write_files(args.rows)
    rows = []
    for kind, path in files.items():
        peer = [sys.executable, str(HERE / "peer_hdf5.py"), str(path), "train"]
        ours = [str(run.BINARY), "convert", str(path), "--quiet"]
        theirs_out, ours_out = DATA / "peer.bin", DATA / "ours.bin"
        run.measure(peer, theirs_out)
        run.measure(ours, ours_out)
        if not filecmp.cmp(theirs_out, ours_out, shallow=False):
            raise SystemExit(f"{kind}: cqlwire's bytes differ from NumPy's")
        size_mb = ours_out.stat().st_size / 1e6
        theirs_out.unlink()
        ours_out.unlink()
        peer_t, ours_t, peer_cpu, ours_cpu, peer_rss, ours_rss = [], [], [], [], 0.0, 0.0
        out = DATA / "out.bin"
        for _ in range(args.rounds):
            for command, times, cpus, is_peer in ((peer, peer_t, peer_cpu, True), (ours, ours_t, ours_cpu, False)):
                seconds, rss, cpu = run.measure(command, out)
                times.append(seconds)
                cpus.append(cpu)
                if is_peer:
                    peer_rss = max(peer_rss, rss)
                else:
                    ours_rss = max(ours_rss, rss)
            print(f"{kind}: h5py + NumPy {peer_t[-1]:.3f} s, cqlwire {ours_t[-1]:.3f} s", file=sys.stderr, flush=True)
        run.remove(out)
        median = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
        rows.append((kind, size_mb, median(peer_t), median(ours_t), median(peer_cpu), median(ours_cpu), peer_rss,
                     ours_rss))
    print(f"\n`convert` of the `train` dataset, {args.rows:,} × {load.DIMENSION} float32 → raw big-endian, "
          f"whole processes, medians of {args.rounds} alternating rounds; the bytes are equal.\n")
    print("| storage | MB out | h5py + NumPy s | cqlwire s | speed-up | CPU s (NumPy / cqlwire) | peak RSS MiB "
          "(NumPy / cqlwire) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind, size_mb, theirs, ours, theirs_cpu, ours_cpu, theirs_rss, ours_rss in rows:
        print(f"| {kind} | {size_mb:.0f} | {theirs:.3f} | {ours:.3f} | {theirs / ours:.2f}× | "
              f"{theirs_cpu:.2f} / {ours_cpu:.2f} | {theirs_rss:.0f} / {ours_rss:.0f} |")


if __name__ == "__main__":
    main()
