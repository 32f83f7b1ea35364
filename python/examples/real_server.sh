#!/usr/bin/env bash
# By hand, not in CI: 10,000 vectors through cassandra-driver 3.30.1 with cqlwire.driver.install() and
# compression='lz4' against a real Apache Cassandra 5.0, captured with tcpdump and checked with
# `cqlwire inspect`:
#
#   start the server (fixtures/inspect/cassandra.sh) -> tcpdump on lo port 9042 (fixtures/inspect/tcpdump.sh)
#   -> real_server.py session (install(), CREATE TABLE, 10,000 prepared INSERTs of NumPy rows, paged
#   SELECT, every vector equal bit for bit) -> stop tcpdump -> real_server.py compare (the same inserts,
#   driver only and with install(), timed, not captured) -> stop the server by its pid -> real_server.py
#   check (inspect --format json: no problem, every EXECUTE's and every SELECT row's vector equal to the
#   inserted one) -> inspect --stats and a few --format text and explain lines.
#
#   python/examples/real_server.sh                 # protocol v4, 10,000 × vector<float, 768>
#   python/examples/real_server.sh --protocol 5    # v5: LZ4 segments (see README: not through install())
#   ROWS=1000 DIMENSION=128 OUT=/tmp/rs python/examples/real_server.sh
#
# The server and tcpdump are stopped on any exit (trap), the server only if this script started it.
# Needs what fixtures/inspect/capture.sh needs (root for tcpdump, mvn, OpenJDK 17, ~2.6 GB of memory),
# the pinned venv with the module installed (PYTHON, default .venv/bin/python) and a release build of
# the CLI (CQLWIRE, default target/release/cqlwire). Writes OUT (default bench-data/real-server):
# session-vP.pcap, vectors.npy, session-vP.json (≈ 95 MB at the defaults; git-ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
INSPECT=fixtures/inspect
PY=${PYTHON:-.venv/bin/python}
CQLWIRE=${CQLWIRE:-target/release/cqlwire}
OUT=${OUT:-bench-data/real-server}
ROWS=${ROWS:-10000}
DIMENSION=${DIMENSION:-768}
PROTOCOL=4
if [[ ${1:-} == --protocol ]]; then PROTOCOL=$2; shift 2; fi
[[ $# == 0 && $PROTOCOL =~ ^[45]$ ]] || { echo "usage: $0 [--protocol 4|5]" >&2; exit 2; }
PCAP=$OUT/session-v$PROTOCOL.pcap
EXAMPLE=(python/examples/real_server.py --out "$OUT" --protocol "$PROTOCOL")

source "$INSPECT/tcpdump.sh"
started=""
cleanup() {
    tcpdump_stop || true
    if [[ -n $started ]]; then "$INSPECT/cassandra.sh" stop || true; fi
}
trap cleanup EXIT

[[ -x $CQLWIRE ]] || { echo "real_server.sh: no $CQLWIRE (cargo build --release, or set CQLWIRE)" >&2; exit 1; }
mkdir -p "$OUT"
if ! "$INSPECT/cassandra.sh" status >/dev/null; then
    started=1
    "$INSPECT/cassandra.sh" start
fi

tcpdump_start "$PCAP"
t0=$SECONDS
"$PY" "${EXAMPLE[@]}" session --rows "$ROWS" --dimension "$DIMENSION"
tcpdump_stop
echo "real_server.sh: session $((SECONDS - t0)) s, capture $PCAP $(stat -c %s "$PCAP") bytes" >&2

"$PY" "${EXAMPLE[@]}" compare

if [[ -n $started ]]; then "$INSPECT/cassandra.sh" stop; started=""; fi

"$PY" "${EXAMPLE[@]}" check --pcap "$PCAP" --cqlwire "$CQLWIRE"

show() { echo "== cqlwire inspect $PCAP $*" >&2; }
show --stats
"$CQLWIRE" inspect "$PCAP" --stats --quiet
show "--opcode EXECUTE --slower-than 200ms | head -n 2"
"$CQLWIRE" inspect "$PCAP" --opcode EXECUTE --slower-than 200ms --quiet | head -n 2 || true
show "--opcode QUERY | grep -A 1 -m 2 'SELECT id, v'"
"$CQLWIRE" inspect "$PCAP" --opcode QUERY --quiet | grep -A 1 -m 2 'SELECT id, v' || true
show "--format explain --opcode EXECUTE | head -n 14"
"$CQLWIRE" inspect "$PCAP" --format explain --opcode EXECUTE --quiet | head -n 14 || true
