#!/usr/bin/env python3
"""`cqlwire inspect --format json` against `tshark -V` on the same capture, side by side in one run:
the two run alternately ROUNDS times (output to /dev/null, wall time and peak RSS of each whole
process from GNU time), then the medians and the ratio are printed. Used for the inspect row of
README's Performance section (benches/compare/run.py --inspect-mb runs the same comparison among
all the others).

    python3 benches/inspect/replay.py fixtures/inspect/v4-lz4.pcap bench-data/v4-lz4-400M.pcap --size 400M
    python3 benches/inspect/vs_tshark.py bench-data/v4-lz4-400M.pcap --binary target/release/cqlwire
"""
import argparse
import os
import statistics
import subprocess
import tempfile


def run(command):
    """Wall seconds and peak RSS (MiB) of one process writing to /dev/null."""
    with tempfile.NamedTemporaryFile("r") as report, open(os.devnull, "wb") as sink:
        subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", report.name, *command], stdout=sink,
                       stderr=subprocess.DEVNULL, check=True)
        seconds, kib = report.read().split()[-2:]
    return float(seconds), int(kib) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture")
    parser.add_argument("--binary", default="target/release/cqlwire")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    commands = {"tshark -V": ["tshark", "-V", "-r", args.capture],
                "cqlwire inspect --format json": [args.binary, "inspect", args.capture, "--format", "json",
                                                  "--quiet"]}
    runs = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, command in commands.items():
            runs[name].append(run(command))
            print(f"{name}: {runs[name][-1][0]:.2f} s, {runs[name][-1][1]:.1f} MiB", flush=True)
    size = os.path.getsize(args.capture) / 1e6
    medians = {name: statistics.median(s for s, _ in r) for name, r in runs.items()}
    for name, r in runs.items():
        print(f"{name:32} median {medians[name]:.2f} s ({size / medians[name]:.0f} MB/s), "
              f"peak RSS {max(m for _, m in r):.1f} MiB")
    print(f"ratio {medians['tshark -V'] / medians['cqlwire inspect --format json']:.1f}x on {size:.0f} MB")


if __name__ == "__main__":
    main()
