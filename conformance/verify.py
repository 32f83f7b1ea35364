#!/usr/bin/env python3
"""Every case of the conformance corpus against a running Apache Cassandra (fixtures/inspect/cassandra.sh).

    CASSANDRA_ADDRESS=127.0.0.1 python3 conformance/verify.py [--no-write]

In a fresh keyspace `conformance`, one wide table holds a column for every type of the corpus (collections
below the top frozen; a top-level collection also in a frozen column), and a counter table the counter cases.
For every case:
  - `literal`: the case's CQL literal written with INSERT (UPDATE … + for counters), the column read back as
    the raw value bytes the server sends (the Python driver with a result decoder that keeps bytes);
  - `bound`: the case's bytes bound to a prepared INSERT as they are, read back the same way, or the
    server's error;
  - `json`: the server's own rendering of the bound value (`SELECT JSON`), as text, which must be the
    case's `value` (same_json says how the two forms differ) unless `server_json_quirk` says otherwise;
  - `plain_literal` / `plain_bound`: the same in a non-frozen column, for a top-level list, set or map;
  - `equivalent`: the case's `equivalent` bytes (its tuples and UDTs completed with nulls) bound and read
    back, which must give them back.
The answers go to server.jsonl (id → answer; "hex" stands for a read-back equal to the case's `hex`) and into
cases.jsonl through generate.py, unless --no-write.
Exits 1 when the server disagrees with the corpus: a valid case whose literal or bytes do not read back as
`hex` (`canonical` for the literal when present; null for an empty non-frozen collection), an invalid case
the server takes (unless its `server_quirk` says it does), or a quirk case it refuses.
"""

import argparse
import decimal
import hashlib
import json
import os
import re
import socket
import struct
import sys
import time

from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from cassandra.marshal import int32_pack
from cassandra.policies import RoundRobinPolicy
from cassandra.cqltypes import BytesType
from cassandra.protocol import ProtocolHandler, ResultMessage, read_int, read_short, read_string
from cassandra.query import BoundStatement, SimpleStatement, tuple_factory

import generate

HERE = os.path.dirname(os.path.abspath(__file__))
KEYSPACE = "conformance"


class RawResultMessage(ResultMessage):
    """Rows as the value bytes the server sent (None for null), undecoded; column types are read past, not
    interpreted (the driver cannot build some, e.g. a vector of UDTs)."""

    @classmethod
    def read_type(cls, f, user_type_map):
        option = read_short(f)
        if option == 0x0000:
            read_string(f)
        elif option in (0x0020, 0x0022):
            cls.read_type(f, user_type_map)
        elif option == 0x0021:
            cls.read_type(f, user_type_map)
            cls.read_type(f, user_type_map)
        elif option == 0x0030:
            read_string(f)
            read_string(f)
            for _ in range(read_short(f)):
                read_string(f)
                cls.read_type(f, user_type_map)
        elif option == 0x0031:
            for _ in range(read_short(f)):
                cls.read_type(f, user_type_map)
        return BytesType

    def recv_results_rows(self, f, protocol_version, user_type_map, result_metadata, column_encryption_policy):
        self.recv_results_metadata(f, user_type_map)
        column_metadata = self.column_metadata or result_metadata
        rowcount = read_int(f)
        self.parsed_rows = [tuple(self.recv_row(f, len(column_metadata))) for _ in range(rowcount)]
        self.column_names = [c[2] for c in column_metadata]
        self.column_types = [c[3] for c in column_metadata]


class RawProtocolHandler(ProtocolHandler):
    message_types_by_opcode = ProtocolHandler.message_types_by_opcode.copy()
    message_types_by_opcode[RawResultMessage.opcode] = RawResultMessage


def column_name(column_type, plain=False):
    """A stable column name per column type."""
    return ("p_" if plain else "c_") + hashlib.sha1(column_type.encode()).hexdigest()[:12]


def is_collection(case):
    return isinstance(case["type_tree"], list) and case["type_tree"][0] in ("list", "set", "map")


def frozen_type(case):
    return f"frozen<{case['column']}>" if is_collection(case) else case["column"]


def error_text(error, names):
    """The server's error, without the driver's wrapping and with column names replaced by `v`."""
    if isinstance(error, NoHostAvailable) and error.errors:
        error = next(iter(error.errors.values()))  # the driver's wrapping of a server error (code 0000)
    text = getattr(error, "message", None) or str(error)
    match = re.search(r'message="(.*)"', text, re.S)
    text = match.group(1) if match else text
    for name in names:
        text = text.replace(name, "v")
    # The JVM leaves the message out of these once the code throwing them is compiled: keep only the class.
    text = re.sub(r"(java\.lang\.(NullPointerException|ArrayIndexOutOfBoundsException|ClassCastException|"
                  r"ArithmeticException)).*", r"\1", text, flags=re.S)
    return f"{type(error).__name__}: {text}"


class Server:
    def __init__(self, address):
        profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), row_factory=tuple_factory,
                                   consistency_level=ConsistencyLevel.ONE, request_timeout=60)
        # Generous timeouts and retries: a server that has just opened its port on busy cores is slow.
        for attempt in range(12):
            self.cluster = Cluster([address], protocol_version=4, schema_metadata_enabled=False,
                                   token_metadata_enabled=False, connect_timeout=30,
                                   control_connection_timeout=30,
                                   execution_profiles={EXEC_PROFILE_DEFAULT: profile})
            try:
                self.session = self.cluster.connect()
                break
            except NoHostAvailable:
                self.cluster.shutdown()
                if attempt == 11:
                    raise
                time.sleep(10)
        self.session.client_protocol_handler = RawProtocolHandler
        # PREPARE answers are decoded by the driver's own handler: their types are read past in the same way
        # (the control connection, which reads the system tables, is up by now).
        ResultMessage.read_type = RawResultMessage.read_type
        self.prepared = {}

    def execute(self, query, values=None):
        return self.session.execute(query, values)

    def bind(self, query, values):
        """A prepared statement with values that are already bytes."""
        if query not in self.prepared:
            self.prepared[query] = self.session.prepare(query)
        bound = BoundStatement(self.prepared[query])
        bound.values = list(values)
        return self.session.execute(bound)

    def read(self, table, column, key):
        rows = list(self.execute(f"SELECT {column} FROM {table} WHERE k = {key}"))
        return rows[0][0] if rows else None


def create_schema(server, cases):
    server.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}")
    server.execute(f"CREATE KEYSPACE {KEYSPACE} WITH replication = {{'class': 'SimpleStrategy', "
                   f"'replication_factor': 1}}")
    server.execute(f"USE {KEYSPACE}")
    declared = []
    for case in cases:
        for body in case["create_types"]:
            if body not in declared:
                declared.append(body)
                server.execute(f"CREATE TYPE {body}")
    columns = {}
    for case in cases:
        if case["type"] == "counter":
            continue
        columns[column_name(case["column"])] = frozen_type(case)
        if is_collection(case):
            columns[column_name(case["column"], plain=True)] = case["column"]
    server.execute("CREATE TABLE cases (k int PRIMARY KEY, "
                   + ", ".join(f"{name} {t}" for name, t in sorted(columns.items())) + ")")
    server.execute("CREATE TABLE counters (k int PRIMARY KEY, c counter)")


def hex_or_none(data):
    return None if data is None else data.hex()


def attempt(names, action):
    """The value read back in hex (None for null), or {"error": …}."""
    try:
        return hex_or_none(action())
    except Exception as error:  # the server's refusal is the answer
        return {"error": error_text(error, names)}


def run_case(server, index, case):
    answer = {}
    if case["type"] == "counter":
        names = ["c"]

        def write_literal():
            server.execute(f"UPDATE counters SET c = c + {case['literal']} WHERE k = {2 * index}")
            return server.read("counters", "c", 2 * index)

        def write_bound():
            server.bind("UPDATE counters SET c = c + ? WHERE k = ?",
                        [bytes.fromhex(case["hex"]), int32_pack(2 * index + 1)])
            return server.read("counters", "c", 2 * index + 1)

        if "literal" in case:
            answer["literal"] = attempt(names, write_literal)
        answer["bound"] = attempt(names, write_bound)
        return answer
    variants = [("", column_name(case["column"]))]
    if is_collection(case):
        variants.append(("plain_", column_name(case["column"], plain=True)))
    for prefix, column in variants:
        names = [column]

        def write_literal():
            server.execute(f"INSERT INTO cases (k, {column}) VALUES ({2 * index}, {case['literal']})")
            return server.read("cases", column, 2 * index)

        def write_bound():
            server.bind(f"INSERT INTO cases (k, {column}) VALUES (?, ?)",
                        [int32_pack(2 * index + 1), bytes.fromhex(case["hex"])])
            return server.read("cases", column, 2 * index + 1)

        if "literal" in case:
            answer[prefix + "literal"] = attempt(names, write_literal)
        answer[prefix + "bound"] = attempt(names, write_bound)
        if prefix == "" and not isinstance(answer["bound"], dict):
            answer["json"] = select_json(server, column, 2 * index + 1)
        if prefix == "" and case.get("equivalent"):
            def write_equivalent(data=bytes.fromhex(case["equivalent"][0])):
                server.bind(f"INSERT INTO cases (k, {column}) VALUES (?, ?)", [int32_pack(2 * index + 1), data])
                return server.read("cases", column, 2 * index + 1)

            answer["equivalent"] = attempt(names, write_equivalent)
    return answer


def select_json(server, column, key):
    """The server's JSON rendering of a column's value, as the text it sent, or {"error": …} (it fails on
    some values)."""
    try:
        rows = list(server.execute(f"SELECT JSON {column} FROM cases WHERE k = {key}"))
    except Exception as error:
        return {"error": error_text(error, [column])}
    if not rows:
        return None
    text = rows[0][0].decode()
    prefix = '{"%s": ' % column
    return text[len(prefix):-1] if text.startswith(prefix) and text.endswith("}") else text


def load_server_json(text):
    return json.loads(text, parse_float=decimal.Decimal, parse_constant=lambda constant: constant)


def packed_address(text):
    family = socket.AF_INET6 if ":" in text else socket.AF_INET
    data = socket.inet_pton(family, text)
    return data[12:] if data[:12] == bytes(10) + b"\xff\xff" else data


def map_key(text):
    """A map key as SELECT JSON writes it: JSON text for most types, bare text for dates, times..."""
    try:
        return load_server_json(text)
    except ValueError:
        return text


def same_json(tree, value, server):
    """Whether the server's SELECT JSON rendering is the corpus `value` (cqlwire's JSON form). The server
    writes varints and decimals as numbers, NaN and infinities as null, floats as Java prints them, IPv6
    uncompressed, maps as objects with JSON text keys, the empty value as null, the zero duration as ""."""
    if value is None:
        return server is None
    if value == {"$empty": True}:
        return server in (None, "")
    if isinstance(tree, str):
        if tree in ("varint", "decimal"):
            return isinstance(server, (int, decimal.Decimal)) and decimal.Decimal(value) == decimal.Decimal(server)
        if tree in ("float", "double"):
            if isinstance(value, str):
                return server is None
            pack = ">f" if tree == "float" else ">d"
            return isinstance(server, (int, decimal.Decimal)) and struct.pack(pack, float(server)) == struct.pack(
                pack, value)
        if tree == "inet":
            return isinstance(server, str) and packed_address(server) == packed_address(value)
        if tree in ("timestamp", "date") and isinstance(value, int):
            return isinstance(server, str)  # beyond the years cqlwire prints: the server's own calendar text
        if tree == "duration" and value == "0s":
            return server == ""
        return value == server
    kind = tree[0]
    if kind in ("list", "set", "vector"):
        return isinstance(server, list) and len(server) == len(value) and all(
            same_json(tree[1], x, y) for x, y in zip(value, server))
    if kind == "map":
        text_keys = isinstance(tree[1], str) and tree[1] in ("text", "ascii", "varchar", "inet")
        return isinstance(server, dict) and len(server) == len(value) and all(
            same_json(tree[1], k, sk if text_keys else map_key(sk)) and same_json(tree[2], x, sx)
            for (k, x), (sk, sx) in zip(value, server.items()))
    if kind == "tuple":
        return isinstance(server, list) and len(server) == len(tree[1]) and all(
            same_json(t, value[i] if i < len(value) else None, server[i]) for i, t in enumerate(tree[1]))
    if not isinstance(server, dict):
        return False
    names = {key.strip('"').replace('""', '"'): key for key in server}
    return all(same_json(t, value.get(name), server.get(names.get(name))) for name, t in tree[2])


def disagreements(case, answer):
    """How the server's answer departs from the corpus, as lines."""
    problems = []
    if case["valid"]:
        expected = {"literal": case.get("canonical", case["hex"]), "bound": case["hex"]}
        for key, answered in answer.items():
            kind = key.removeprefix("plain_")
            if key == "equivalent" and answered != case["equivalent"][0]:
                problems.append(f"equivalent: {json.dumps(answered)[:300]}")
            if kind not in expected:
                continue
            # A non-frozen collection with no element is no cell at all: it reads back as null.
            if answered != expected[kind] and not (key.startswith("plain_") and answered is None
                                                   and case["value"] == []):
                problems.append(f"{key}: {json.dumps(answered)[:300]}")
        rendered = answer.get("json")
        if case["type"] != "counter" and not case.get("server_json_quirk") and not (
                isinstance(rendered, str) and same_json(case["type_tree"], case["value"], load_server_json(rendered))):
            problems.append(f"json: {json.dumps(rendered)[:300]}")
    elif case.get("server_quirk"):
        if isinstance(answer.get("bound"), dict):
            problems.append(f"bound: the server refused bytes it is known to take: {answer['bound']['error']}")
    elif not isinstance(answer.get("bound"), dict):
        problems.append(f"bound: the server took invalid bytes: {json.dumps(answer['bound'])[:300]}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=os.environ.get("CASSANDRA_ADDRESS", "127.0.0.1"))
    parser.add_argument("--no-write", action="store_true", help="check only; leave server.jsonl as it is")
    args = parser.parse_args()
    cases = generate.CASES
    started = time.monotonic()
    server = Server(args.address)
    create_schema(server, cases)
    answers = {}
    failures = 0
    for index, case in enumerate(cases):
        answer = run_case(server, index, case)
        answers[case["id"]] = answer
        for problem in disagreements(case, answer):
            failures += 1
            print(f"DISAGREE {case['id']} ({case['type']}, {'valid' if case['valid'] else 'invalid'}): {problem}")
    server.execute(f"DROP KEYSPACE {KEYSPACE}")
    server.cluster.shutdown()
    if not args.no_write:
        with open(os.path.join(HERE, "server.jsonl"), "w", encoding="utf-8", newline="\n") as out:
            for case in cases:
                answer = {key: "hex" if answered == case["hex"] else answered
                          for key, answered in answers[case["id"]].items()}
                out.write(json.dumps({"id": case["id"], "server": answer}, ensure_ascii=False) + "\n")
        generate.main()
    print(f"verify: {len(cases)} cases against the server in {time.monotonic() - started:.0f} s, "
          f"{failures} disagreements")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
