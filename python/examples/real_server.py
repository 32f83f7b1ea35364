#!/usr/bin/env python3
"""10,000 vectors through cassandra-driver with ``cqlwire.driver.install()`` and LZ4, against a live
Apache Cassandra 5.0 on 127.0.0.1:9042, and the check that ``cqlwire inspect`` of the captured session
shows the same vectors. Run by hand by ``python/examples/real_server.sh`` (which starts the server,
records the session with tcpdump and stops both); not part of CI.

    real_server.py session  --out DIR [--protocol 4] [--rows 10000] [--dimension 768] [--page 1000]
    real_server.py compare  --out DIR [--protocol 4] [--repeat 2]   # insert rates: driver, install()
    real_server.py check    --out DIR --pcap FILE [--cqlwire BIN]

``session``: install(), connect with compression='lz4', create ``cqlwire_real.embeddings (id int
PRIMARY KEY, v vector<float, D>)``, insert every row of a float32 array through one prepared statement
(each bound value a NumPy row, which install() serializes in place), read the table back with a paged
SELECT and check every vector bit for bit; writes DIR/vectors.npy (what was inserted, row i has id i) and
DIR/session-vP.json (timings, which functions the connections compress with).

``compare``: the same inserts into a scratch table, alternately with the driver's own code and with
install(), --repeat times each, timed (wall clock and this process's CPU); not captured.

``check``: runs ``cqlwire inspect --format json`` on the capture and checks that it reports no problem,
that the EXECUTEs of the INSERT bind every id once with exactly the inserted vector, and that the Rows
results of the SELECT hold every id once with exactly the inserted vector (float bits compared, NaN
payloads included).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.policies import RoundRobinPolicy
from cassandra.query import SimpleStatement, tuple_factory

import cqlwire
import cqlwire.driver

KEYSPACE = "cqlwire_real"
TABLE = "embeddings"
SCRATCH_TABLE = "embeddings_compare"
SELECT = f"SELECT id, v FROM {KEYSPACE}.{TABLE}"
CONCURRENCY = 64  # requests in flight during the inserts

# Bit patterns in row 0, so that "equal" means equal bits: signed zero, infinities, the canonical NaN,
# NaNs with payloads (quiet, so a float32 -> float64 -> float32 round trip keeps them), subnormals and
# the extremes.
SPECIALS = [0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC12345, 0xFFC00001, 0x00000001,
            0x80000001, 0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000]


def vectors(rows, dimension, seed=20261123):
    """Unit-length float32 embeddings (standard normal, normalized), row 0 starting with SPECIALS."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, dimension), dtype=np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    k = min(len(SPECIALS), dimension)
    a[0, :k] = np.array(SPECIALS[:k], dtype=np.uint32).view(np.float32)
    return a


def bits(v):
    """A vector's float32 bit patterns (a driver row is a list of Python floats)."""
    return np.asarray(v, dtype=np.float32).view(np.uint32)


def connect(protocol):
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), row_factory=tuple_factory)
    cluster = Cluster(["127.0.0.1"], port=9042, protocol_version=protocol, compression="lz4",
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                      schema_metadata_enabled=False, token_metadata_enabled=False)
    return cluster, cluster.connect()


def function_name(f):
    return None if f is None else f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', repr(f))}"


def codecs(cluster, session):
    """What each connection compresses with: the frame compressor (v4 bodies) and, once v5
    checksumming is on, the segment codec's (v5 segments)."""
    connections = [("control", cluster.control_connection._connection)]
    connections += [("pool", pool._connection) for pool in session._pools.values()]
    out = []
    for kind, c in connections:
        segment = getattr(c, "_segment_codec", None)
        out.append({"connection": kind, "protocol": c.protocol_version,
                    "frame_compressor": function_name(c.compressor),
                    "frame_decompressor": function_name(c.decompressor),
                    "checksumming": bool(getattr(c, "_is_checksumming_enabled", False)),
                    "segment_compressor": function_name(getattr(segment, "compressor", None)),
                    "segment_decompressor": function_name(getattr(segment, "decompressor", None))})
    return out


def insert(session, table, a):
    """Inserts row i of `a` with id i through one prepared statement; returns the seconds taken and
    the CPU seconds of this process (all its threads: binding, serialization, compression, the
    driver's event loop) meanwhile."""
    prepared = session.prepare(f"INSERT INTO {KEYSPACE}.{table} (id, v) VALUES (?, ?)")
    t0, cpu0 = time.perf_counter(), time.process_time()
    results = execute_concurrent_with_args(session, prepared, ((i, a[i]) for i in range(len(a))),
                                           concurrency=CONCURRENCY, raise_on_first_error=True)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    assert all(ok for ok, _ in results)
    return seconds, cpu


def create_table(session, table, dimension):
    session.execute(f"CREATE TABLE {KEYSPACE}.{table} (id int PRIMARY KEY, v vector<float, {dimension}>)")


def session_main(args):
    a = vectors(args.rows, args.dimension)
    cqlwire.driver.install()
    cluster, session = connect(args.protocol)
    session.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}")
    session.execute(f"CREATE KEYSPACE {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    create_table(session, TABLE, args.dimension)
    insert_s, insert_cpu = insert(session, TABLE, a)
    print(f"session: inserted {len(a)} vectors of {args.dimension} floats in {insert_s:.2f} s "
          f"({len(a) / insert_s:.0f} rows/s, client CPU {insert_cpu:.2f} s) with install(), "
          f"protocol v{args.protocol}, lz4", file=sys.stderr)

    t0 = time.perf_counter()
    rs = session.execute(SimpleStatement(SELECT, fetch_size=args.page))
    seen, pages = set(), 0
    while True:
        pages += 1
        for key, v in rs.current_rows:
            if key in seen:
                sys.exit(f"session: id {key} read twice")
            seen.add(key)
            if not np.array_equal(bits(v), a[key].view(np.uint32)):
                sys.exit(f"session: id {key} reads back different bits")
        if not rs.has_more_pages:
            break
        rs.fetch_next_page()
    select_s = time.perf_counter() - t0
    if seen != set(range(len(a))):
        sys.exit(f"session: read back {len(seen)} distinct ids of {len(a)}")
    print(f"session: read back {len(seen)} vectors in {pages} pages in {select_s:.2f} s, "
          "all equal bit for bit", file=sys.stderr)
    used = codecs(cluster, session)
    cluster.shutdown()
    cqlwire.driver.uninstall()

    np.save(os.path.join(args.out, "vectors.npy"), a)
    summary = {"protocol": args.protocol, "rows": len(a), "dimension": args.dimension,
               "insert_seconds": insert_s, "insert_cpu_seconds": insert_cpu,
               "select_seconds": select_s, "select_pages": pages, "connections": used,
               "driver": sys.modules["cassandra"].__version__}
    with open(os.path.join(args.out, f"session-v{args.protocol}.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    for c in used:
        print(f"session: {c['connection']} connection v{c['protocol']}: frame compressor "
              f"{c['frame_compressor']}, segment compressor "
              f"{c['segment_compressor'] if c['checksumming'] else '(no v5 segments)'}", file=sys.stderr)


def compare_main(args):
    a = np.load(os.path.join(args.out, "vectors.npy"))
    runs = []
    for installed in (False, True) * args.repeat:
        # install() takes effect for connections opened afterwards (the compression is chosen at
        # STARTUP), so each run gets its own cluster.
        (cqlwire.driver.install if installed else cqlwire.driver.uninstall)()
        cluster, session = connect(args.protocol)
        create_table(session, SCRATCH_TABLE, a.shape[1])
        seconds, cpu = insert(session, SCRATCH_TABLE, a)
        session.execute(f"DROP TABLE {KEYSPACE}.{SCRATCH_TABLE}")
        cluster.shutdown()
        runs.append({"install": installed, "seconds": seconds, "cpu_seconds": cpu})
        print(f"compare: {'with install()' if installed else 'driver only   '}: {len(a)} inserts in "
              f"{seconds:.2f} s ({len(a) / seconds:.0f} rows/s), client CPU {cpu:.2f} s "
              f"({cpu / len(a) * 1e6:.0f} µs per insert)", file=sys.stderr)
    cqlwire.driver.uninstall()
    path = os.path.join(args.out, f"session-v{args.protocol}.json")
    with open(path) as f:
        summary = json.load(f)
    summary["compare"] = runs
    with open(path, "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")


# ----------------------------------------------------------------------------------------------------
# check: the capture, as cqlwire inspect decodes it, against vectors.npy
# ----------------------------------------------------------------------------------------------------

SPECIAL_JSON = {"NaN": 0x7FC00000, "Infinity": 0x7F800000, "-Infinity": 0xFF800000}


def json_bits(values):
    """float32 bit patterns of a vector in cqlwire's JSON: numbers in the shortest form that reads back
    to the same float, "NaN", "Infinity", "-Infinity" and "NaN(0x…)" with the bits of other NaNs."""
    out = np.empty(len(values), dtype=np.uint32)
    numbers = [i for i, x in enumerate(values) if not isinstance(x, str)]
    if len(numbers) == len(values):
        return np.asarray(values, dtype=np.float64).astype(np.float32).view(np.uint32)
    for i, x in enumerate(values):
        if not isinstance(x, str):
            out[i] = np.float32(x).view(np.uint32)
        elif x in SPECIAL_JSON:
            out[i] = SPECIAL_JSON[x]
        elif x.startswith("NaN(0x") and x.endswith(")"):
            out[i] = int(x[6:-1], 16)
        else:
            raise ValueError(f"unexpected float in the JSON: {x!r}")
    return out


class Checker:
    def __init__(self, a):
        self.a = a
        self.expected = [row.view(np.uint32) for row in a]
        self.bound = {}  # id -> number of EXECUTEs that bound it
        self.selected = {}  # id -> number of SELECT rows that held it
        self.order = []  # ids in the order of the EXECUTEs
        self.mismatches = 0

    def compare(self, where, key, vector):
        if not isinstance(key, int) or not 0 <= key < len(self.a):
            self.fail(f"{where}: unexpected id {key!r}")
        elif not np.array_equal(json_bits(vector), self.expected[key]):
            self.fail(f"{where}: id {key}: the vector differs from the one inserted")

    def fail(self, message):
        self.mismatches += 1
        if self.mismatches <= 10:
            print(f"check: {message}", file=sys.stderr)


def check_main(args):
    a = np.load(os.path.join(args.out, "vectors.npy"))
    c = Checker(a)
    insert_ids, select_streams = set(), set()  # prepared ids of the INSERT; (conn, stream) of SELECTs
    counts = {"messages": 0, "problems": 0, "executes": 0, "rows_pages": 0, "rows": 0}
    t0 = time.perf_counter()
    proc = subprocess.Popen([args.cqlwire, "inspect", args.pcap, "--format", "json", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1 << 20)
    for line in proc.stdout:
        m = json.loads(line)
        counts["messages"] += 1
        if "problem" in m:
            counts["problems"] += 1
            c.fail(f"inspect reports a problem: {line.strip()[:300]}")
            continue
        if "error" in m:
            c.fail(f"inspect could not decode a body: {line.strip()[:300]}")
            continue
        body, key = m.get("body") or {}, (m["conn"], m["stream"])
        if m["dir"] == "request":
            select_streams.discard(key)
            if m["opcode"] == "QUERY" and body.get("query") == SELECT:
                select_streams.add(key)
            elif m["opcode"] == "EXECUTE" and body.get("query", "").startswith(f"INSERT INTO {KEYSPACE}.{TABLE} "):
                insert_ids.add(body["id"])
                values = body["values"]
                names = [(v["name"], v["type"]) for v in values]
                if names != [("id", "int"), ("v", f"vector<float, {a.shape[1]}>")]:
                    c.fail(f"EXECUTE binds {names}")
                    continue
                k = values[0]["value"]
                c.compare(f"EXECUTE at {m['time']}", k, values[1]["value"])
                c.bound[k] = c.bound.get(k, 0) + 1
                c.order.append(k)
                counts["executes"] += 1
        elif key in select_streams and m["opcode"] == "RESULT":
            select_streams.discard(key)
            if body.get("kind") != "Rows":
                c.fail(f"the SELECT got {body.get('kind')}")
                continue
            counts["rows_pages"] += 1
            for row in body["rows"]:
                c.compare(f"RESULT at {m['time']}", row[0], row[1])
                c.selected[row[0]] = c.selected.get(row[0], 0) + 1
                counts["rows"] += 1
    stderr = proc.stderr.read()
    status = proc.wait()
    seconds = time.perf_counter() - t0
    n = len(a)
    if status != 0:
        c.fail(f"cqlwire inspect exited with {status}: {stderr.strip()}")
    if len(insert_ids) != 1:
        c.fail(f"the INSERT ran under {len(insert_ids)} prepared ids")
    for what, seen in (("EXECUTEs", c.bound), ("SELECT rows", c.selected)):
        if sorted(seen) != list(range(n)) or set(seen.values()) != {1}:
            c.fail(f"the {what} hold {len(seen)} distinct ids of {n}, "
                   f"{sum(v > 1 for v in seen.values())} more than once")
    in_order = c.order == sorted(c.order)
    print(f"check: cqlwire inspect --format json: {counts['messages']} messages in {seconds:.1f} s "
          f"(decoding and this check), {counts['problems']} problems", file=sys.stderr)
    print(f"check: {counts['executes']} EXECUTEs of the INSERT bind ids 0..{n - 1} once each"
          f"{' (in id order)' if in_order else ' (not all in id order: concurrent requests)'}, "
          f"{counts['rows']} rows in {counts['rows_pages']} RESULT pages of the SELECT", file=sys.stderr)
    if c.mismatches:
        sys.exit(f"check: {c.mismatches} mismatches")
    print(f"check: every bound vector and every selected row equals the inserted one bit for bit "
          f"({n} × {a.shape[1]} float32, NaN payloads included)", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["session", "compare", "check"])
    parser.add_argument("--out", required=True, help="directory for vectors.npy and session.json")
    parser.add_argument("--protocol", type=int, choices=[4, 5], default=4)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--dimension", type=int, default=768)
    parser.add_argument("--page", type=int, default=1000,
                        help="rows per SELECT page (1000 × 3 KiB ≈ 3 MiB per RESULT at 768 floats)")
    parser.add_argument("--repeat", type=int, default=2, help="pairs of runs (compare)")
    parser.add_argument("--pcap", help="the capture to check (check)")
    parser.add_argument("--cqlwire", default="target/release/cqlwire", help="the cqlwire binary (check)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    {"session": session_main, "compare": compare_main, "check": check_main}[args.mode](args)


if __name__ == "__main__":
    main()
