#!/usr/bin/env bash
# Start, stop or query a throw-away Apache Cassandra 5.0 on this machine, for trying `cqlwire load` and
# for the tests: one node on 127.0.0.1:9042, or on another loopback address (CASSANDRA_ADDRESS=127.0.0.5;
# servers on different addresses run side by side), or one node of a local cluster
# (scripts/cassandra-cluster.sh starts three).
#
#   scripts/cassandra.sh start     # fetch the jars (first time), start, wait for the CQL port
#   scripts/cassandra.sh status    # "running pid N on 127.0.0.1:9042" or "stopped" (exit 1)
#   scripts/cassandra.sh cql "STATEMENT" ...   # run CQL statements (no cqlsh needed); rows on stdout
#   scripts/cassandra.sh sample    # keyspace cqlwire_demo, table docs for fixtures/convert/sample
#   scripts/cassandra.sh stop      # stop the server started here (by its pid), delete its data
#   scripts/cassandra.sh nodetool ARGS...   # Cassandra's own nodetool against the server started with
#                                  # CASSANDRA_JMX_PORT (e.g. `nodetool flush ks t`, `nodetool compact ks t`)
#   scripts/cassandra.sh hash-password <file   # Cassandra's own bcrypt hash (tools/bin/hash_password)
#                                  # of the password read from standard input, for HASHED PASSWORD
#
# The jars come from Maven Central through `mvn dependency:copy-dependencies` into a cache outside the
# repository (CQLWIRE_CASSANDRA_HOME, default ~/.cache/cqlwire-cassandra); the server runs on OpenJDK 17
# (`java` on PATH, or JAVA) with the module flags of Cassandra's conf/jvm17-server.options and a
# minimal cassandra.yaml written into a fresh temporary directory that also holds its data and log.
# `cql` runs the statements with the Java driver that comes with those jars (scripts/Cql.java).
# Needs: mvn, java 17, ~2.6 GB of free memory (-Xmx2G); with Debian or Ubuntu:
# apt-get install openjdk-17-jdk-headless maven. Environment knobs:
#   CASSANDRA_VERSION (5.0.9), CASSANDRA_HEAP (2G), CASSANDRA_WAIT (seconds to wait for the port, 120),
#   CASSANDRA_AUTHENTICATOR (AllowAllAuthenticator; PasswordAuthenticator asks for a login, its default
#   superuser cassandra/cassandra appearing about 10 s after the port opens),
#   CASSANDRA_YAML_EXTRA (extra cassandra.yaml lines appended to the minimal one),
#   CASSANDRA_JMX_PORT (off by default: the port of the server's local JMX, on 127.0.0.1, which
#   nodetool talks to; give each server of a machine its own),
#   CASSANDRA_VECTOR_GRAPH_OPTIONS (off by default; 1 starts the server with
#   -Dcassandra.sai.vector.allow_custom_parameters=true, so that a vector index may set
#   maximum_node_connections and construction_beam_width, which Cassandra 5.0 refuses otherwise),
#   CASSANDRA_COMMITLOG_SYNC (periodic, Cassandra's default, or batch: every acknowledged write is
#   in the synced commit log, so it survives the node being killed),
#   CASSANDRA_DIR (use this directory instead of a fresh temporary one: a start after a crash replays
#   the commit log found there), CASSANDRA_ADDRESS (127.0.0.1: the listen and RPC address, the only
#   one the server binds), CASSANDRA_SEEDS (ADDRESS: the seed addresses of a cluster, comma-separated),
#   CASSANDRA_INITIAL_TOKEN (the node's token in a cluster; fixed tokens let nodes start in parallel).
# Before starting, the CQL port 9042 and the storage port 7000 must be free on ADDRESS (and not taken
# on every address, 0.0.0.0 or ::). The pid and data directory of a running server are kept per
# address in this checkout (.cassandra/server-ADDRESS), so two checkouts never stop each other's server.
set -euo pipefail

VERSION=${CASSANDRA_VERSION:-5.0.9}
HOME_DIR=${CQLWIRE_CASSANDRA_HOME:-$HOME/.cache/cqlwire-cassandra}
LIB=$HOME_DIR/$VERSION/lib
ADDRESS=${CASSANDRA_ADDRESS:-127.0.0.1}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=$ROOT/.cassandra/server-$ADDRESS   # holds pid and dir of the server running on ADDRESS
SEEDS=${CASSANDRA_SEEDS:-$ADDRESS}
JAVA=${JAVA:-java}
PORT=9042
STORAGE_PORT=7000

log() { echo "cassandra.sh: $*" >&2; }

fetch() {
    [[ -f $LIB/cassandra-all-$VERSION.jar ]] && return
    log "fetching org.apache.cassandra:cassandra-all:$VERSION and its dependencies into $LIB"
    local pomdir
    pomdir=$(mktemp -d)
    cat >"$pomdir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cqlwire</groupId><artifactId>cassandra-runtime</artifactId><version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId><artifactId>cassandra-all</artifactId><version>$VERSION</version>
    </dependency>
  </dependencies>
</project>
POM
    mkdir -p "$LIB"
    (cd "$pomdir" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB")
    rm -rf "$pomdir"
}

# A killed server is a zombie until its parent reaps it: that counts as stopped.
pid_alive() {
    [[ -f $STATE/pid ]] || return 1
    local pid
    pid=$(cat "$STATE/pid")
    kill -0 "$pid" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

port_open() { (exec 3<>/dev/tcp/"$ADDRESS"/$PORT) 2>/dev/null; }

# Who listens on PORT where a server on ADDRESS would bind it: ADDRESS itself, 0.0.0.0, :: or
# ::ffff:ADDRESS. Prints the first such listening address, if any.
port_taken() {
    local port=$1 a b c d
    IFS=. read -r a b c d <<<"$ADDRESS"
    local mine any
    mine=$(printf '%02X%02X%02X%02X:%04X' "$d" "$c" "$b" "$a" "$port")
    any=$(printf '00000000:%04X' "$port")
    local v6any v6mine
    v6any=$(printf '00000000000000000000000000000000:%04X' "$port")
    v6mine=$(printf '0000000000000000FFFF0000%02X%02X%02X%02X:%04X' "$d" "$c" "$b" "$a" "$port")
    awk -v mine="$mine" -v any="$any" -v v6any="$v6any" -v v6mine="$v6mine" -v port="$port" -v address="$ADDRESS" '
        $4 == "0A" && $2 == mine { print address ":" port; exit }
        $4 == "0A" && $2 == any { print "0.0.0.0:" port; exit }
        $4 == "0A" && $2 == v6any { print "[::]:" port; exit }
        $4 == "0A" && $2 == v6mine { print "[::ffff:" address "]:" port; exit }
    ' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# The commit log's sync mode: periodic (Cassandra's default: synced every 10 s, so a node killed
# loses the writes it acknowledged since the last sync) or batch (synced before each write is
# acknowledged).
commitlog_sync() {
    case ${CASSANDRA_COMMITLOG_SYNC:-periodic} in
        periodic) printf 'commitlog_sync: periodic\ncommitlog_sync_period: 10000ms\n' ;;
        batch) printf 'commitlog_sync: batch\n' ;;
        *) log "CASSANDRA_COMMITLOG_SYNC must be periodic or batch, not $CASSANDRA_COMMITLOG_SYNC"; exit 2 ;;
    esac
}

write_config() {
    local dir=$1
    cat >"$dir/cassandra.yaml" <<YAML
cluster_name: cqlwire
num_tokens: 1
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
listen_address: $ADDRESS
rpc_address: $ADDRESS
native_transport_port: $PORT
storage_port: $STORAGE_PORT
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$SEEDS"
${CASSANDRA_INITIAL_TOKEN:+initial_token: $CASSANDRA_INITIAL_TOKEN
auto_bootstrap: false}
endpoint_snitch: SimpleSnitch
data_file_directories: [$dir/data]
commitlog_directory: $dir/commitlog
saved_caches_directory: $dir/saved_caches
hints_directory: $dir/hints
cdc_raw_directory: $dir/cdc_raw
$(commitlog_sync)
authenticator: ${CASSANDRA_AUTHENTICATOR:-AllowAllAuthenticator}
authorizer: AllowAllAuthorizer
# Small so that a short BATCH already gets a WARNING back.
batch_size_warn_threshold: 1KiB
batch_size_fail_threshold: 1024KiB
${CASSANDRA_YAML_EXTRA:-}
YAML
    cat >"$dir/logback.xml" <<XML
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$dir/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
XML
}

start() {
    if pid_alive; then log "already running (pid $(cat "$STATE/pid"))"; return; fi
    local port taken
    for port in $PORT $STORAGE_PORT; do
        taken=$(port_taken "$port")
        if [[ -n $taken ]]; then
            log "cannot start on $ADDRESS: another process listens on $taken (stop it, or set CASSANDRA_ADDRESS)"
            exit 1
        fi
    done
    fetch
    local dir=${CASSANDRA_DIR:-}
    if [[ -n $dir ]]; then mkdir -p "$dir"; else dir=$(mktemp -d "${TMPDIR:-/tmp}/cqlwire-cassandra.XXXXXX"); fi
    write_config "$dir"
    # The JPMS flags of conf/jvm17-server.options (what Cassandra's own launcher passes on Java 17).
    local jpms=(
        --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
        --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
        --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
        --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
        --add-exports java.sql/java.sql=ALL-UNNAMED
        --add-exports java.base/java.lang.ref=ALL-UNNAMED
        --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
        --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
        --add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
        --add-opens java.base/java.lang.module=ALL-UNNAMED
        --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
        --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
        --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
        --add-opens java.base/jdk.internal.math=ALL-UNNAMED
        --add-opens java.base/jdk.internal.module=ALL-UNNAMED
        --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
        --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
        --add-opens java.base/sun.nio.ch=ALL-UNNAMED
        --add-opens java.base/java.io=ALL-UNNAMED
        --add-opens java.base/java.lang.reflect=ALL-UNNAMED
        --add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
        --add-opens java.base/java.lang=ALL-UNNAMED
        --add-opens java.base/java.util=ALL-UNNAMED
    )
    local heap=${CASSANDRA_HEAP:-2G}
    local jmx=()
    [[ -z ${CASSANDRA_JMX_PORT:-} ]] || jmx=(-Dcassandra.jmx.local.port="$CASSANDRA_JMX_PORT")
    local graph=()
    case ${CASSANDRA_VECTOR_GRAPH_OPTIONS:-} in
        '' | 0) ;;
        1) graph=(-Dcassandra.sai.vector.allow_custom_parameters=true) ;;
        *) log "CASSANDRA_VECTOR_GRAPH_OPTIONS is 1 or 0, not '$CASSANDRA_VECTOR_GRAPH_OPTIONS'"; exit 2 ;;
    esac
    log "starting Cassandra $VERSION in $dir"
    nohup "$JAVA" -Xms"$heap" -Xmx"$heap" -XX:+UseG1GC -Xss512k \
        "${jpms[@]}" \
        -Djdk.attach.allowAttachSelf=true \
        -Dio.netty.tryReflectionSetAccessible=true \
        -Dcassandra.config="file://$dir/cassandra.yaml" \
        -Dlogback.configurationFile="$dir/logback.xml" \
        -Dcassandra.storagedir="$dir" \
        -Dcassandra.logdir="$dir" \
        -Dcassandra-foreground=yes \
        -Dcassandra.skip_wait_for_gossip_to_settle=0 \
        "${jmx[@]}" "${graph[@]}" \
        -cp "$LIB/*" org.apache.cassandra.service.CassandraDaemon \
        >"$dir/stdout.log" 2>&1 </dev/null &
    local pid=$!
    mkdir -p "$STATE"
    echo "$pid" >"$STATE/pid"
    echo "$dir" >"$STATE/dir"
    local t0=$SECONDS
    while ! port_open; do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "server exited; last log lines:"; tail -n 20 "$dir/system.log" "$dir/stdout.log" >&2 || true
            rm -f "$STATE/pid"; exit 1
        fi
        if ((SECONDS - t0 > ${CASSANDRA_WAIT:-120})); then log "CQL port not open after $((SECONDS - t0)) s"; exit 1; fi
        sleep 1
    done
    log "CQL port $ADDRESS:$PORT open after $((SECONDS - t0)) s (pid $pid)"
}

stop() {
    if ! pid_alive; then log "not running"; rm -f "$STATE/pid"; return; fi
    local pid dir
    pid=$(cat "$STATE/pid"); dir=$(cat "$STATE/dir")
    local rss
    rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n $rss ]] && log "peak RSS $((rss / 1024)) MiB"
    kill "$pid"
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then log "still alive after 30 s, killing"; kill -9 "$pid"; fi
    rm -f "$STATE/pid"
    [[ -n ${CASSANDRA_KEEP:-} ]] || rm -rf "$dir"
    log "stopped pid $pid"
}

status() {
    if pid_alive && port_open; then echo "running pid $(cat "$STATE/pid") on $ADDRESS:$PORT"
    elif pid_alive; then echo "starting pid $(cat "$STATE/pid")"
    else echo "stopped"; return 1; fi
}

# The password on standard input (all of it, newlines included) hashed by Cassandra's HashPassword tool.
hash_password() {
    fetch
    "$JAVA" -cp "$LIB/*" org.apache.cassandra.tools.HashPassword --input -
}

# Each argument one CQL statement, run on the server at ADDRESS; rows on standard output.
# (Compiled once into the jar cache; a newer scripts/Cql.java is compiled again.)
cql() {
    fetch
    local classes=$HOME_DIR/$VERSION/cql-classes
    if [[ ! $classes/Cql.class -nt $ROOT/scripts/Cql.java ]]; then
        mkdir -p "$classes"
        javac -nowarn -cp "$LIB/*" -d "$classes" "$ROOT/scripts/Cql.java"
    fi
    "$JAVA" -Dlogback.configurationFile="$ROOT/scripts/quiet-logback.xml" -cp "$classes:$LIB/*" \
        Cql "$ADDRESS" "$@"
}

# Cassandra's nodetool (org.apache.cassandra.tools.NodeTool in the server's jars) on the local JMX
# port of a server started with CASSANDRA_JMX_PORT.
nodetool() {
    fetch
    [[ -n ${CASSANDRA_JMX_PORT:-} ]] || { log "nodetool needs the server's CASSANDRA_JMX_PORT"; exit 1; }
    "$JAVA" -Dlogback.configurationFile="$ROOT/scripts/quiet-logback.xml" -cp "$LIB/*" \
        org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$CASSANDRA_JMX_PORT" "$@"
}

# The keyspace and table that fixtures/convert/sample (id int64, emb 128 floats) loads into.
sample() {
    cql "CREATE KEYSPACE IF NOT EXISTS cqlwire_demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" \
        "CREATE TABLE IF NOT EXISTS cqlwire_demo.docs (id bigint PRIMARY KEY, emb vector<float, 128>)"
    log "made table cqlwire_demo.docs (id bigint PRIMARY KEY, emb vector<float, 128>) on $ADDRESS"
}

case ${1:-} in
    start) start ;;
    cql) shift; cql "$@" ;;
    nodetool) shift; nodetool "$@" ;;
    sample) sample ;;
    hash-password) hash_password ;;
    stop) stop ;;
    status) status ;;
    fetch) fetch ;;
    *) echo "usage: $0 start|stop|status|cql STATEMENT...|nodetool ARGS...|sample|fetch|hash-password" >&2; exit 2 ;;
esac
