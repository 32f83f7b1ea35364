#!/usr/bin/env bash
# The corpus against a real Apache Cassandra 5.0.9: starts a throw-away server (fixtures/inspect/cassandra.sh,
# on CASSANDRA_ADDRESS, default 127.0.0.1), runs conformance/verify.py (every case written and read back),
# stops the server by its pid, and fails if the server disagreed with the corpus or if its answers differ
# from the committed conformance/server.jsonl. A server already running on the address is used and left
# running (it is not this script's to stop).
#
#   conformance/live.sh            # needs .venv with fixtures/requirements.txt (see .ci/run), java 17, mvn
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$PWD/.venv/bin/python}
CASSANDRA=$PWD/fixtures/inspect/cassandra.sh
if ! "$CASSANDRA" status >/dev/null; then
    trap '"$CASSANDRA" stop || true' EXIT
    CASSANDRA_HEAP=${CASSANDRA_HEAP:-1G} "$CASSANDRA" start
fi
"$PYTHON" conformance/verify.py --address "${CASSANDRA_ADDRESS:-127.0.0.1}"
if [ -n "$(git status --porcelain -- conformance/server.jsonl conformance/cases.jsonl)" ]; then
    git diff --stat -- conformance/server.jsonl conformance/cases.jsonl
    echo "live.sh: the server's answers differ from the committed conformance/server.jsonl"
    exit 1
fi
