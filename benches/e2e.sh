#!/usr/bin/env bash
# End-to-end benchmark of `cqlwire convert` (.npy -> raw file) against `cat INPUT > OUTPUT`.
#
# Generates (once, into the git-ignored bench-data/) a ROWS x DIM float32 .npy (default 1,000,000 x 768,
# about 3 GB), builds the release binary, then runs each command RUNS times with /usr/bin/time -v
# (installed with apt-get when missing) and prints the best wall time, throughput, peak RSS and the
# ratio to cat (the two alternate, best of RUNS each). Targets: throughput >= 0.7 x cat, peak RSS <= 64 MiB.
#
# NumPy and pyarrow come from benches/compare/.venv (made here from benches/compare/requirements.txt
# when missing, as benches/compare/run.py does); PYTHON overrides it.
#
# Usage: benches/e2e.sh            (ROWS, DIM, RUNS, PYTHON override the defaults)
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
DIM=${DIM:-768}
RUNS=${RUNS:-3}
if [ -z "${PYTHON:-}" ]; then
  VENV=benches/compare/.venv
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r benches/compare/requirements.txt
  PYTHON="$VENV/bin/python"
fi
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
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
BIN="$TARGET_DIR/release/cqlwire"
OUT_CAT="$DATA/out.cat"
OUT_CQL="$DATA/out.cql"
TIMES=$(mktemp)
trap 'rm -f "$TIMES" "$OUT_CAT" "$OUT_CQL"' EXIT

# Warm the page cache so both commands read from memory.
cat "$INPUT" > /dev/null
SIZE=$(stat -c %s "$INPUT")

# One timed run of "$@": prints "seconds peak_rss_kib".
timed() {
  # Deleting the previous output drops its dirty pages; sync waits for any writeback under way, so
  # each run starts with a clean page cache (the input stays cached).
  rm -f "$OUT_CAT" "$OUT_CQL"
  sync
  /usr/bin/time -v -o "$TIMES" "$@"
  awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; w=s}
              /Maximum resident set size/ {r=$2} END {print w, r}' "$TIMES"
}

# Start from no dirty pages, then alternate the two commands so both meet the same conditions
# (writeback of earlier outputs, other load); keep each one's best time and highest RSS.
sync
CAT_S="" CAT_RSS=0 CQL_S="" CQL_RSS=0
for _ in $(seq "$RUNS"); do
  read -r s r < <(timed sh -c "cat '$INPUT' > '$OUT_CAT'")
  if [ -z "$CAT_S" ] || awk "BEGIN{exit !($s < $CAT_S)}"; then CAT_S=$s; fi
  if [ "$r" -gt "$CAT_RSS" ]; then CAT_RSS=$r; fi
  read -r s r < <(timed "$BIN" convert "$INPUT" -o "$OUT_CQL" --quiet)
  if [ -z "$CQL_S" ] || awk "BEGIN{exit !($s < $CQL_S)}"; then CQL_S=$s; fi
  if [ "$r" -gt "$CQL_RSS" ]; then CQL_RSS=$r; fi
done

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

NPY_REPORT=$(awk -v size="$SIZE" -v cs="$CAT_S" -v cr="$CAT_RSS" -v qs="$CQL_S" -v qr="$CQL_RSS" -v runs="$RUNS" 'BEGIN {
  printf "input: %.2f GB, best of %d runs, page cache warm\n", size/1e9, runs
  printf "%-28s %8.2f s %8.2f GB/s   peak RSS %7.1f MiB\n", "cat INPUT > OUTPUT", cs, size/cs/1e9, cr/1024
  printf "%-28s %8.2f s %8.2f GB/s   peak RSS %7.1f MiB\n", "cqlwire convert -o OUTPUT", qs, size/qs/1e9, qr/1024
  printf "throughput ratio cqlwire/cat: %.2f (target >= 0.70); RSS target <= 64 MiB: %s\n", cs/qs, (qr <= 65536 ? "met" : "MISSED")
}')
echo "$NPY_REPORT"

# Parquet (list<float>, snappy, row groups of 10,000 rows) -> raw, against pyarrow + NumPy doing the
# same work (read_table, flatten, astype('>f4'), write). Target: >= 2 x faster, RSS <= 4 row groups.
PQ_ROWS=${PQ_ROWS:-200000}
PARQUET="$DATA/e2e_${PQ_ROWS}x${DIM}_f4.parquet"
if [ ! -f "$PARQUET" ]; then
  echo "generating $PARQUET"
  "$PYTHON" - "$INPUT" "$PARQUET" "$PQ_ROWS" <<'PY'
import sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
source, path, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
vectors = np.load(source, mmap_mode="r")
dim = vectors.shape[1]
schema = pa.schema([("id", pa.int64()), ("emb", pa.list_(pa.float32()))])
with pq.ParquetWriter(path + ".tmp", schema, compression="snappy") as writer:
    for start in range(0, rows, 10000):
        end = min(rows, start + 10000)
        block = np.ascontiguousarray(vectors[start:end])
        emb = pa.ListArray.from_arrays(pa.array(np.arange(0, (end - start + 1) * dim, dim, dtype=np.int32)),
                                       pa.array(block.reshape(-1)))
        writer.write_table(pa.table({"id": pa.array(np.arange(start, end)), "emb": emb}, schema=schema))
import os
os.replace(path + ".tmp", path)
PY
fi
cat "$PARQUET" > /dev/null
PEER=$(mktemp --suffix=.py)
trap 'rm -f "$TIMES" "$OUT_CAT" "$OUT_CQL" "$PEER"' EXIT
cat > "$PEER" <<'PY'
import sys
import numpy as np
import pyarrow.parquet as pq
table = pq.read_table(sys.argv[1], columns=["emb"])
values = table.column("emb").combine_chunks().values.to_numpy()
with open(sys.argv[2], "wb") as out:
    out.write(values.astype(">f4").tobytes())
PY
PQ_CQL_S="" PQ_CQL_RSS=0 PQ_PY_S="" PQ_PY_RSS=0
for _ in $(seq "$RUNS"); do
  read -r s r < <(timed "$BIN" convert "$PARQUET" -o "$OUT_CQL" --quiet)
  if [ -z "$PQ_CQL_S" ] || awk "BEGIN{exit !($s < $PQ_CQL_S)}"; then PQ_CQL_S=$s; fi
  if [ "$r" -gt "$PQ_CQL_RSS" ]; then PQ_CQL_RSS=$r; fi
  read -r s r < <(timed "$PYTHON" "$PEER" "$PARQUET" "$OUT_CAT")
  if [ -z "$PQ_PY_S" ] || awk "BEGIN{exit !($s < $PQ_PY_S)}"; then PQ_PY_S=$s; fi
  if [ "$r" -gt "$PQ_PY_RSS" ]; then PQ_PY_RSS=$r; fi
done
"$BIN" convert "$PARQUET" -o "$OUT_CQL" --quiet
cmp "$OUT_CQL" "$OUT_CAT" && echo "parquet output identical to pyarrow + NumPy's"
awk -v rows="$PQ_ROWS" -v dim="$DIM" -v qs="$PQ_CQL_S" -v qr="$PQ_CQL_RSS" -v ps="$PQ_PY_S" -v pr="$PQ_PY_RSS" 'BEGIN {
  bytes = rows * dim * 4; group = 10000 * dim * 4 / 1048576
  printf "parquet: %d rows x %d float, snappy, row groups of 10,000 rows (%.1f MiB of floats each)\n", rows, dim, group
  printf "%-28s %8.2f s %8.2f GB/s   peak RSS %7.1f MiB\n", "pyarrow + NumPy", ps, bytes/ps/1e9, pr/1024
  printf "%-28s %8.2f s %8.2f GB/s   peak RSS %7.1f MiB\n", "cqlwire convert -o OUTPUT", qs, bytes/qs/1e9, qr/1024
  printf "speed-up over pyarrow + NumPy: %.2f (target >= 2); RSS in row groups: %.1f (target <= 4)\n", ps/qs, qr/1024/group
}'
