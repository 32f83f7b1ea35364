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
#
# Environment knobs: CASSANDRA_CLUSTER_ADDRESSES (127.0.0.1,127.0.0.2,127.0.0.3: one node per address,
# any number of them), CASSANDRA_HEAP (768M per node), CASSANDRA_WAIT (seconds, 240), and those of
# scripts/cassandra.sh (CASSANDRA_YAML_EXTRA, CASSANDRA_AUTHENTICATOR, …), which every node shares.
# A node's own commands (e.g. its pid for a fault test): CASSANDRA_ADDRESS=A scripts/cassandra.sh status.
set -euo pipefail

NODE=$(dirname "${BASH_SOURCE[0]}")/cassandra.sh
IFS=', ' read -r -a ADDRESSES <<<"${CASSANDRA_CLUSTER_ADDRESSES:-127.0.0.1,127.0.0.2,127.0.0.3}"
SEEDS=$(IFS=,; echo "${ADDRESSES[*]}")
export CASSANDRA_HEAP=${CASSANDRA_HEAP:-768M}
WAIT=${CASSANDRA_WAIT:-240}

log() { echo "cassandra-cluster.sh: $*" >&2; }

# Murmur3 tokens spread evenly: node i of n gets about -2^63 + i * 2^64 / n.
token() { echo $((-9223372036854775807 - 1 + $1 * (9223372036854775807 / $2) * 2)); }

start() {
    local n=${#ADDRESSES[@]} i pids=() logs
    logs=$(mktemp -d "${TMPDIR:-/tmp}/cqlwire-cluster.XXXXXX")
    "$NODE" fetch
    local t0=$SECONDS
    for i in "${!ADDRESSES[@]}"; do
        CASSANDRA_ADDRESS=${ADDRESSES[$i]} CASSANDRA_SEEDS=$SEEDS CASSANDRA_INITIAL_TOKEN=$(token "$i" "$n") \
            CASSANDRA_WAIT=$WAIT "$NODE" start >"$logs/$i.log" 2>&1 &
        pids+=($!)
    done
    local failed=0
    for i in "${!ADDRESSES[@]}"; do
        if ! wait "${pids[$i]}"; then
            failed=1
            log "node ${ADDRESSES[$i]} did not start: $(grep -m1 'cassandra.sh: ' "$logs/$i.log" | tail -c 300)"
        fi
    done
    if ((failed)); then
        cat "$logs"/*.log >&2
        rm -rf "$logs"
        stop
        exit 1
    fi
    rm -rf "$logs"
    log "$n CQL ports open after $((SECONDS - t0)) s"
    # Every node must see every node NORMAL and serving clients before a test may count on it.
    local address seen
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
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
