#!/usr/bin/env bash
# Start, stop or query a throw-away three-node Apache Cassandra 5.0 cluster on this machine: one
# scripts/cassandra.sh server per loopback address (127.0.0.1, 127.0.0.2, 127.0.0.3 by default), each
# with its own data directory and a small heap, every node a seed with a fixed token so that all
# start at once, in datacenter1 (SimpleSnitch).
#
#   scripts/cassandra-cluster.sh start    # start every node, wait for every CQL port and until each
#                                         # node sees all of them NORMAL and ready for clients
#   scripts/cassandra-cluster.sh status   # one line per node; exit 1 unless all run
#   scripts/cassandra-cluster.sh stop     # stop every node (by its pid), delete their data
#   scripts/cassandra-cluster.sh restart ADDRESS...   # start nodes that died (e.g. killed by a
#                                         # test) again on their data, wait until all see all up
#
# Environment knobs: CASSANDRA_CLUSTER_ADDRESSES (127.0.0.1,127.0.0.2,127.0.0.3: one node per address,
# any number of them), CASSANDRA_HEAP (768M per node), CASSANDRA_WAIT (seconds, 240), and those of
# scripts/cassandra.sh (CASSANDRA_YAML_EXTRA, CASSANDRA_AUTHENTICATOR, …), which every node shares.
# A node's own commands (e.g. its pid for a fault test): CASSANDRA_ADDRESS=A scripts/cassandra.sh status.
set -euo pipefail

NODE=$(dirname "${BASH_SOURCE[0]}")/cassandra.sh
STATE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.cassandra   # scripts/cassandra.sh's
IFS=', ' read -r -a ADDRESSES <<<"${CASSANDRA_CLUSTER_ADDRESSES:-127.0.0.1,127.0.0.2,127.0.0.3}"
SEEDS=$(IFS=,; echo "${ADDRESSES[*]}")
export CASSANDRA_HEAP=${CASSANDRA_HEAP:-768M}
WAIT=${CASSANDRA_WAIT:-240}

log() { echo "cassandra-cluster.sh: $*" >&2; }

# Murmur3 tokens spread evenly: node i of n gets about -2^63 + i * 2^64 / n.
token() { echo $((-9223372036854775807 - 1 + $1 * (9223372036854775807 / $2) * 2)); }

# Starts the nodes at the given indexes of ADDRESSES at once (on the data they left when RESTART is
# set), waits for their CQL ports, then until every node sees every node up.
start_nodes() {
    local n=${#ADDRESSES[@]} i pids=() logs failed=0 t0=$SECONDS
    logs=$(mktemp -d "${TMPDIR:-/tmp}/cqlwire-cluster.XXXXXX")
    "$NODE" fetch
    for i in "$@"; do
        local dir=""
        [[ -n ${RESTART:-} ]] && dir=$(cat "$STATE/server-${ADDRESSES[$i]}/dir")
        CASSANDRA_ADDRESS=${ADDRESSES[$i]} CASSANDRA_SEEDS=$SEEDS CASSANDRA_INITIAL_TOKEN=$(token "$i" "$n") \
            CASSANDRA_DIR=$dir CASSANDRA_WAIT=$WAIT "$NODE" start >"$logs/$i.log" 2>&1 &
        pids+=($!)
    done
    local k=0
    for i in "$@"; do
        if ! wait "${pids[$k]}"; then
            failed=1
            log "node ${ADDRESSES[$i]} did not start: $(grep -m1 'cassandra.sh: ' "$logs/$i.log" | tail -c 300)"
        fi
        k=$((k + 1))
    done
    if ((failed)); then
        cat "$logs"/*.log >&2
        rm -rf "$logs"
        exit 1
    fi
    rm -rf "$logs"
    log "$# CQL ports open after $((SECONDS - t0)) s"
    wait_up "$t0"
}

start() { start_nodes "${!ADDRESSES[@]}" || { stop; exit 1; }; }

# Waits until every node sees every node NORMAL and serving clients (what a test may count on);
# T0 is when the wait began, in $SECONDS.
wait_up() {
    local t0=$1 n=${#ADDRESSES[@]} address seen
    for address in "${ADDRESSES[@]}"; do
        while true; do
            seen=$(CASSANDRA_ADDRESS=$address "$NODE" cql \
                "SELECT status_with_port, rpc_ready FROM system_views.gossip_info" 2>/dev/null \
                | grep -c $'^NORMAL.*\ttrue$' || true)
            ((seen == n)) && break
            if ((SECONDS - t0 > WAIT)); then
                log "after $((SECONDS - t0)) s node $address sees $seen of $n nodes up"
                exit 1
            fi
            sleep 2
        done
    done
    log "$n nodes up after $((SECONDS - t0)) s: ${ADDRESSES[*]}"
}

# Starts the nodes at the given addresses again, each on the data it left (it must have run here).
restart() {
    local address i indexes=()
    for address in "$@"; do
        for i in "${!ADDRESSES[@]}"; do [[ ${ADDRESSES[$i]} == "$address" ]] && indexes+=("$i"); done
        [[ -f $STATE/server-$address/dir ]] || { log "no node of this cluster ran on $address"; exit 2; }
    done
    RESTART=yes start_nodes "${indexes[@]}"
}

stop() {
    local address
    for address in "${ADDRESSES[@]}"; do CASSANDRA_ADDRESS=$address "$NODE" stop & done
    wait
}

status() {
    local address failed=0
    for address in "${ADDRESSES[@]}"; do
        echo "$address: $(CASSANDRA_ADDRESS=$address "$NODE" status || true)"
        CASSANDRA_ADDRESS=$address "$NODE" status >/dev/null || failed=1
    done
    return $failed
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) status ;;
    restart) shift; restart "${@:?usage: $0 restart ADDRESS...}" ;;
    *) echo "usage: $0 start|stop|status|restart ADDRESS..." >&2; exit 2 ;;
esac
