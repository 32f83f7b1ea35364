#!/usr/bin/env python3
"""The Python driver's offline codec (`cassandra.cqltypes`) on the conformance corpus.

    python3 conformance/drivers/python_driver.py [NAME] < conformance/cases.jsonl > raw.jsonl

Runs under whichever driver the interpreter has (cassandra-driver or scylla-driver: both are the package
`cassandra`). For every case, one line: {"case": ID, "driver": "<name> <version>"} and
  "unsupported": why            the type cannot be built with the driver's types, or
  "decode_error": message       `from_binary(hex)` raised, or
  "decoded": repr, "reencoded": hex | "reencode_error": message     `to_binary` of what it decoded,
and for a case with a `value`: "value_encoded": hex | "value_error": message, the driver's bytes for the
value given as the Python objects the driver takes (from the JSON form). conformance/drivers/judge.py turns
these into pass/fail/unsupported.
"""

import datetime
import decimal
import json
import re
import struct
import sys
import uuid

import cassandra
from cassandra import cqltypes as ct
from cassandra import util
from cassandra.cqltypes import EMPTY

PROTOCOL = 4
NATIVE_CLASSES = {
    "ascii": "AsciiType", "bigint": "LongType", "blob": "BytesType", "boolean": "BooleanType",
    "counter": "CounterColumnType", "date": "SimpleDateType", "decimal": "DecimalType", "double": "DoubleType",
    "duration": "DurationType", "float": "FloatType", "inet": "InetAddressType", "int": "Int32Type",
    "smallint": "ShortType", "text": "UTF8Type", "varchar": "UTF8Type", "time": "TimeType",
    "timestamp": "TimestampType", "timeuuid": "TimeUUIDType", "tinyint": "ByteType", "uuid": "UUIDType",
    "varint": "IntegerType",
}


def driver_type(tree):
    """The driver's type class for a `type_tree`."""
    if isinstance(tree, str):
        return ct.lookup_casstype(NATIVE_CLASSES[tree])
    kind = tree[0]
    if kind in ("list", "set"):
        return (ct.ListType if kind == "list" else ct.SetType).apply_parameters([driver_type(tree[1])])
    if kind == "map":
        return ct.MapType.apply_parameters([driver_type(tree[1]), driver_type(tree[2])])
    if kind == "tuple":
        return ct.TupleType.apply_parameters([driver_type(t) for t in tree[1]])
    if kind == "udt":
        names = tuple(name for name, _ in tree[2])
        return ct.UserType.make_udt_class("conformance", tree[1], names, tuple(driver_type(t) for _, t in tree[2]))
    return ct.VectorType.apply_parameters([driver_type(tree[1]), tree[2]], None)


def hashable(value):
    """A map key as the driver takes it: lists (list, set and vector keys) as tuples."""
    return tuple(hashable(x) for x in value) if isinstance(value, (list, tuple)) else value


DURATION_UNITS = {"y": (12, 0, 0), "mo": (1, 0, 0), "w": (0, 7, 0), "d": (0, 1, 0),
                  "h": (0, 0, 3_600_000_000_000), "m": (0, 0, 60_000_000_000), "s": (0, 0, 1_000_000_000),
                  "ms": (0, 0, 1_000_000), "us": (0, 0, 1000), "ns": (0, 0, 1)}


def duration(text):
    sign = -1 if text.startswith("-") else 1
    months = days = nanos = 0
    for amount, unit in re.findall(r"(\d+)(mo|ms|us|ns|y|w|d|h|m|s)", text):
        m, d, n = DURATION_UNITS[unit]
        months, days, nanos = months + int(amount) * m, days + int(amount) * d, nanos + int(amount) * n
    return util.Duration(sign * months, sign * days, sign * nanos)


def special_float(text, unpack):
    if text.startswith("NaN(0x"):
        return struct.unpack(unpack, bytes.fromhex(text[6:-1]))[0]
    return float(text.replace("Infinity", "inf").replace("NaN", "nan"))


def python_value(tree, value):
    """The Python object the driver takes for a corpus JSON value."""
    if value is None:
        return None
    if isinstance(value, dict) and value == {"$empty": True}:
        raise ValueError("the driver has no way to write the empty value")
    if isinstance(tree, str):
        if tree in ("tinyint", "smallint", "int", "bigint", "counter", "varint"):
            return int(value)
        if tree == "decimal":
            return decimal.Decimal(value)
        if tree in ("float", "double"):
            return special_float(value, ">f" if tree == "float" else ">d") if isinstance(value, str) \
                else float(value)
        if tree == "blob":
            return bytes.fromhex(value[2:])
        if tree in ("uuid", "timeuuid"):
            return uuid.UUID(value)
        if tree == "timestamp":
            if isinstance(value, int):
                return value
            return datetime.datetime.strptime(value, "%Y-%m-%d %H:%M:%S.%fZ")
        if tree == "date":
            return value if isinstance(value, int) else datetime.date.fromisoformat(value)
        if tree == "time":
            hours, minutes, seconds = value.split(":")
            whole, fraction = seconds.split(".")
            return ((int(hours) * 60 + int(minutes)) * 60 + int(whole)) * 10**9 + int(fraction.ljust(9, "0"))
        if tree == "duration":
            return duration(value)
        return value
    kind = tree[0]
    if kind in ("list", "set", "vector"):
        return [python_value(tree[1], x) for x in value]
    if kind == "map":
        return {hashable(python_value(tree[1], k)): python_value(tree[2], v) for k, v in value}
    if kind == "tuple":  # a tuple that ends early is completed with nulls, the same value
        return tuple(python_value(t, x) for t, x in zip(tree[1], value + [None] * (len(tree[1]) - len(value))))
    return tuple(python_value(t, value.get(name)) for name, t in tree[2])


def run(case, name):
    line = {"case": case["id"], "driver": name}
    try:
        typ = driver_type(case["type_tree"])
    except Exception as error:
        line["unsupported"] = f"{type(error).__name__}: {error}"
        return line
    data = bytes.fromhex(case["hex"])
    try:
        decoded = typ.from_binary(data, PROTOCOL)
    except Exception as error:
        line["decode_error"] = f"{type(error).__name__}: {error}"
    else:
        line["decoded"] = repr(decoded)[:200]
        try:
            line["reencoded"] = (b"" if decoded is EMPTY else typ.to_binary(decoded, PROTOCOL)).hex()
        except Exception as error:
            line["reencode_error"] = f"{type(error).__name__}: {error}"
    if "value" in case:
        try:
            line["value_encoded"] = typ.to_binary(python_value(case["type_tree"], case["value"]), PROTOCOL).hex()
        except Exception as error:
            line["value_error"] = f"{type(error).__name__}: {error}"
    return line


def main():
    name = f"{sys.argv[1] if len(sys.argv) > 1 else 'cassandra-driver'} {cassandra.__version__}"
    for text in sys.stdin:
        sys.stdout.write(json.dumps(run(json.loads(text), name), ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
