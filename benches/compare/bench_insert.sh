#!/usr/bin/env bash
# Times the bench's insert against `cqlwire load` on one server: the same training files of a
# VectorDBBench folder, each run into a fresh table (id bigint PRIMARY KEY, emb vector<float, D>),
# no index. Prints per run the wall time, the server's CPU seconds (/proc/PID/stat) and the load
# average before and after.
#
#   benches/compare/bench_insert.sh FOLDER ROUND [bench,files,joined]
#
#   bench   `cqlwire bench FOLDER --stages table,load` (its insert_duration printed too)
#   files   `cqlwire load` of each training file in name order, one process each
#   joined  `cqlwire load` of the folder's training set joined into one train.parquet
#           (bench.py's bench-data/bench/joined/NAME, made by its Folder.single_file)
#
# The steps run in the order given (rotate it between rounds: the first writes into a freshly
# started server are the slowest). The server: scripts/cassandra.sh on CASSANDRA_ADDRESS
# (default 127.0.0.1), with the keyspace cqlwire_bench; CQLWIRE: the binary (default the release build).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FOLDER=$(cd "$1" && pwd)
ROUND=$2
ORDER=${3:-bench,files,joined}
HOST=${CASSANDRA_ADDRESS:-127.0.0.1}
CQLWIRE=${CQLWIRE:-$ROOT/target/release/cqlwire}
JOINED=$ROOT/bench-data/bench/joined/$(basename "$FOLDER")/train.parquet
OUT=$ROOT/bench-data/bench/insert
mkdir -p "$OUT"
cql() { CASSANDRA_ADDRESS=$HOST "$ROOT/scripts/cassandra.sh" cql "$@" >/dev/null || echo "(not answered: $*)" >&2; }
PID=$(cat "$ROOT/.cassandra/server-$HOST/pid")
cpu() { awk '{ print ($14 + $15) / 100 }' "/proc/$PID/stat"; }
average() { uptime | sed 's/.*load average: //'; }
DIMENSION=$("$ROOT/benches/compare/.venv/bin/python" -c "
import pyarrow.parquet as pq, sys, glob
f = sorted(glob.glob(sys.argv[1] + '/*train*.parquet'))[0]
c = pq.read_table(f, columns=['emb']).column('emb').combine_chunks()
print(len(c.values) // len(c))" "$FOLDER")
fresh() {
    cql "DROP TABLE IF EXISTS cqlwire_bench.$1"
    cql "CREATE TABLE cqlwire_bench.$1 (id bigint PRIMARY KEY, emb vector<float, $DIMENSION>)"
}
timed() { # label, command...
    local label=$1 server started before
    shift
    server=$(cpu) started=$(date +%s.%N) before=$(average)
    "$@" >"$OUT/$label-$ROUND.txt" 2>&1
    echo "$label round $ROUND: $(echo "$(date +%s.%N) - $started" | bc) s, server CPU" \
        "$(echo "$(cpu) - $server" | bc) s, load average [$before] → [$(average)]" \
        "$(grep -o '"insert_duration":[0-9.]*' "$OUT/$label-$ROUND.txt" || true)"
}
for step in ${ORDER//,/ }; do
    case $step in
    bench)
        cql "DROP TABLE IF EXISTS cqlwire_bench.insert_bench"
        timed bench "$CQLWIRE" bench "$FOLDER" --hosts "$HOST" --table cqlwire_bench.insert_bench \
            --stages table,load --drop --format json --quiet
        cql "DROP TABLE cqlwire_bench.insert_bench" ;;
    files)
        fresh insert_files
        timed files bash -c 'for f in "$1"/*train-*.parquet; do "$2" load "$f" --hosts "$3" \
            --table cqlwire_bench.insert_files || exit 1; done' - "$FOLDER" "$CQLWIRE" "$HOST"
        cql "DROP TABLE cqlwire_bench.insert_files" ;;
    joined)
        fresh insert_joined
        timed joined "$CQLWIRE" load "$JOINED" --hosts "$HOST" --table cqlwire_bench.insert_joined
        cql "DROP TABLE cqlwire_bench.insert_joined" ;;
    *) echo "bench_insert.sh: unknown step $step (bench, files, joined)" >&2; exit 2 ;;
    esac
    sleep 5
done
