#!/usr/bin/env bash
# End-to-end benchmark of `cqlwire convert` (.npy -> raw file) against `cat INPUT > OUTPUT`.
#
# Generates (once, into the git-ignored bench-data/) a ROWS x DIM float32 .npy (default 1,000,000 x 768,
# about 3 GB), builds the release binary, then runs each command RUNS times with /usr/bin/time -v
# (installed with apt-get when missing) and prints the best wall time, throughput, peak RSS and the
# ratio to cat. Targets (PRODUCT §7): throughput >= 0.7 x cat, peak RSS <= 64 MiB.
#
# Usage: benches/e2e.sh            (ROWS, DIM, RUNS, PYTHON override the defaults)
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
DIM=${DIM:-768}
RUNS=${RUNS:-3}
PYTHON=${PYTHON:-python3}
DATA=bench-data
INPUT="$DATA/e2e_${ROWS}x${DIM}_f4.npy"

if [ ! -x /usr/bin/time ]; then
  echo "installing GNU time (apt-get)"
  if [ "$(id -u)" -eq 0 ]; then apt-get update -qq && apt-get install -y -qq time; else sudo apt-get update -qq && sudo apt-get install -y -qq time; fi
fi

mkdir -p "$DATA"
if [ ! -f "$INPUT" ]; then
  echo "generating $INPUT ($ROWS x $DIM float32)"
  "$PYTHON" - "$INPUT" "$ROWS" "$DIM" <<'PY'
import sys
import numpy as np
path, rows, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
array = np.lib.format.open_memmap(path + ".tmp", mode="w+", dtype="<f4", shape=(rows, dim))
rng = np.random.default_rng(42)
step = 16384
for start in range(0, rows, step):
    end = min(rows, start + step)
    array[start:end] = rng.standard_normal((end - start, dim), dtype=np.float32)
array.flush()
del array
import os
os.replace(path + ".tmp", path)
PY
fi

echo "building the release binary"
cargo build --release --quiet
BIN=target/release/cqlwire
OUT_CAT="$DATA/out.cat"
OUT_CQL="$DATA/out.cql"
TIMES=$(mktemp)
trap 'rm -f "$TIMES" "$OUT_CAT" "$OUT_CQL"' EXIT

# Warm the page cache so both commands read from memory.
cat "$INPUT" > /dev/null
SIZE=$(stat -c %s "$INPUT")

# Runs "$@" RUNS times; prints "best_seconds peak_rss_kib".
measure() {
  local best="" rss=0
  for _ in $(seq "$RUNS"); do
    rm -f "$OUT_CAT" "$OUT_CQL"
    /usr/bin/time -v -o "$TIMES" "$@"
    local wall kib
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; print s}' "$TIMES")
    kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$TIMES")
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; fi
    if [ "$kib" -gt "$rss" ]; then rss=$kib; fi
  done
  echo "$best $rss"
}

read -r CAT_S CAT_RSS < <(measure sh -c "cat '$INPUT' > '$OUT_CAT'")
read -r CQL_S CQL_RSS < <(measure "$BIN" convert "$INPUT" -o "$OUT_CQL" --quiet)

# Check the output once: size, and first/last rows against NumPy's astype('>f4').
"$BIN" convert "$INPUT" -o "$OUT_CQL" --quiet
"$PYTHON" - "$INPUT" "$OUT_CQL" "$ROWS" "$DIM" <<'PY'
import os, sys
import numpy as np
path, out, rows, dim = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
source = np.load(path, mmap_mode="r")
record = dim * 4
assert os.path.getsize(out) == rows * record, "output size"
with open(out, "rb") as f:
    for row in (0, rows // 2, rows - 1):
        f.seek(row * record)
        assert f.read(record) == np.asarray(source[row], ">f4").tobytes(), "row %d" % row
print("output verified: %d bytes, rows 0, %d, %d equal NumPy astype('>f4')" % (rows * record, rows // 2, rows - 1))
PY

awk -v size="$SIZE" -v cs="$CAT_S" -v cr="$CAT_RSS" -v qs="$CQL_S" -v qr="$CQL_RSS" -v runs="$RUNS" 'BEGIN {
  printf "input: %.2f GB, best of %d runs, page cache warm\n", size/1e9, runs
  printf "%-28s %8.2f s %8.2f GB/s   peak RSS %7.1f MiB\n", "cat INPUT > OUTPUT", cs, size/cs/1e9, cr/1024
  printf "%-28s %8.2f s %8.2f GB/s   peak RSS %7.1f MiB\n", "cqlwire convert -o OUTPUT", qs, size/qs/1e9, qr/1024
  printf "throughput ratio cqlwire/cat: %.2f (target >= 0.70); RSS target <= 64 MiB: %s\n", cs/qs, (qr <= 65536 ? "met" : "MISSED")
}'
