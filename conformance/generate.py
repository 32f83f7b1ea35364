#!/usr/bin/env python3
"""The CQL value conformance corpus: writes cases.jsonl beside this file, one case per line.

Every case is built here from a Python value and a type (the types, JSON forms and driver-backed
serialisation of fixtures/driver/generate.py): the bytes come from the Python driver's `cassandra.cqltypes`
serializers (protocol v4), with Apache Cassandra's framing where the driver differs (fixtures/driver/QUIRKS.md);
the invalid cases are driver-serialised values cut, padded or re-framed by the named mutations below. No byte is
typed in by hand. Fields of a case:

  id        stable identifier: the type's slug and a hash of (type, hex, valid)
  family    native | collection | collection-nested | tuple | udt | vector | vector-nested
  type      the CQL type as `cqlwire decode` takes it; `udts` the `--udt` declarations it needs
  java_type the type as Apache Cassandra's class name, as drivers see it in result metadata for custom types
  type_tree the type as JSON: "int", ["list", T], ["set", T], ["map", K, V], ["tuple", [T, ...]],
            ["udt", name, [[field, T], ...]], ["vector", T, N]
  literal   a CQL literal that Apache Cassandra writes as exactly `hex` (absent when there is none)
  value     the value as `cqlwire decode --format json` prints it (absent for bytes no decoder may accept)
  hex       the value bytes; `canonical` the bytes an encoder writes for `value`, when they differ
  valid     whether the bytes are a value of the type that Apache Cassandra 5.0 takes (written as a literal
            when there is one, bound as bytes, read back as the same bytes)
  server_quirk  how Cassandra 5.0.9 takes an invalid case all the same (lax validation), when it does
  server_json_quirk  how Cassandra's SELECT JSON gets a valid case wrong, when it does
  server    what Cassandra 5.0.9 did with the case, as recorded by verify.py in server.jsonl (null until run):
            the bytes read back after writing the `literal` and after binding `hex` (plain_…: in a non-frozen
            column, for a top-level collection; equivalent: after binding `equivalent`), "hex" when they equal `hex`,
            or {"error": the server's error};
            `json` the server's SELECT JSON rendering of the bound value
  note      why a case is there, when it is not obvious

Deterministic: fixed values and a seeded RNG; run it twice and `git status` shows nothing.
"""

import datetime
import decimal
import hashlib
import importlib.util
import json
import math
import os
import random
import re
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "driver_golden", os.path.join(HERE, "..", "fixtures", "driver", "generate.py"))
g = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(g)

from cassandra import util  # noqa: E402
from cassandra.marshal import int32_pack, uvint_pack  # noqa: E402

N, M, T, V = g.NATIVES, g.MapOf, g.TupleOf, g.Vector
EMPTY = g.EMPTY


def L(t):
    return g.Collection("list", t)


def S(t):
    return g.Collection("set", t)


# ----------------------------------------------------------------------------------------------------
# Types as JSON, families, table column types, and CQL literals.
# ----------------------------------------------------------------------------------------------------

def tree(t):
    if isinstance(t, g.Native):
        return t.cql
    if isinstance(t, g.Collection):
        return [t.kind, tree(t.element)]
    if isinstance(t, g.MapOf):
        return ["map", tree(t.key), tree(t.value)]
    if isinstance(t, g.TupleOf):
        return ["tuple", [tree(c) for c in t.components]]
    if isinstance(t, g.Udt):
        return ["udt", t.name, [[n, tree(ft)] for n, ft in t.fields]]
    return ["vector", tree(t.element), t.dimension]


def children(t):
    if isinstance(t, (g.Collection, g.Vector)):
        return [t.element]
    if isinstance(t, g.MapOf):
        return [t.key, t.value]
    if isinstance(t, g.TupleOf):
        return list(t.components)
    if isinstance(t, g.Udt):
        return [ft for _, ft in t.fields]
    return []


def has_vector(t):
    return isinstance(t, g.Vector) or any(has_vector(c) for c in children(t))


def family(t):
    if isinstance(t, g.Native):
        return "native"
    if isinstance(t, g.Vector):
        return "vector" if isinstance(t.element, g.Native) else "vector-nested"
    if has_vector(t):
        return "vector-nested"
    if isinstance(t, (g.Collection, g.MapOf)):
        return "collection" if all(isinstance(c, g.Native) for c in children(t)) else "collection-nested"
    return "tuple" if isinstance(t, g.TupleOf) else "udt"


def column_type(t, top=True):
    """The type of a table column holding `t`: every collection, tuple and UDT below the top frozen (the
    bytes are the same)."""
    if isinstance(t, g.Native):
        return t.cql
    if isinstance(t, g.Udt):
        return t.cql
    if isinstance(t, g.Vector):
        text = f"vector<{column_type(t.element, False)}, {t.dimension}>"
    elif isinstance(t, g.Collection):
        text = f"{t.kind}<{column_type(t.element, False)}>"
    elif isinstance(t, g.MapOf):
        text = f"map<{column_type(t.key, False)}, {column_type(t.value, False)}>"
    else:
        text = f"tuple<{', '.join(column_type(c, False) for c in t.components)}>"
    frozen = not top and isinstance(t, (g.Collection, g.MapOf, g.TupleOf))
    return f"frozen<{text}>" if frozen else text


def udt_declarations(t, out):
    """`CREATE TYPE` bodies (fields frozen as in columns), innermost first."""
    for c in children(t):
        udt_declarations(c, out)
    if isinstance(t, g.Udt):
        body = (f"{g.field_name_cql(t.name)} ("
                + ", ".join(f"{g.field_name_cql(n)} {column_type(ft, False)}" for n, ft in t.fields) + ")")
        if body not in out:
            out.append(body)
    return out


def blob_function(native, data):
    """A CQL term for bytes that no literal writes (the empty value, a NaN with other bits)."""
    return f"blobAs{native.cql.capitalize()}(0x{data.hex()})"


def literal(t, v):
    """The CQL term Cassandra writes as the case's bytes."""
    if v is None:
        return "null"
    if isinstance(v, g.Empty):
        return blob_function(t, b"")
    if isinstance(t, g.Native):
        text = g.forms(t, v)[1]
        return blob_function(t, t.serialize(v)) if text.startswith("NaN(") else text
    if isinstance(t, g.Collection):
        open_, close = ("[", "]") if t.kind == "list" else ("{", "}")
        return open_ + ", ".join(literal(t.element, x) for x in v) + close
    if isinstance(t, g.Vector):
        return "[" + ", ".join(literal(t.element, x) for x in v) + "]"
    if isinstance(t, g.MapOf):
        return "{" + ", ".join(f"{literal(t.key, k)}: {literal(t.value, x)}" for k, x in v) + "}"
    if isinstance(t, g.TupleOf):
        return "(" + ", ".join(literal(c, x) for c, x in zip(t.components, v)) + ")"
    return "{" + ", ".join(f"{g.field_name_cql(n)}: {literal(ft, x)}" for (n, ft), x in zip(t.fields, v)) + "}"


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# ----------------------------------------------------------------------------------------------------
# The corpus.
# ----------------------------------------------------------------------------------------------------

CASES = []
SEEN = set()


def add(t, data, valid, value=None, has_value=True, lit=None, note=None, canonical=None, quirk=None,
        equivalent=None, json_quirk=None):
    type_text = t.cql
    key = (type_text, data.hex(), valid)
    if key in SEEN:
        return
    SEEN.add(key)
    digest = hashlib.sha1("\n".join([type_text, data.hex(), str(valid)]).encode()).hexdigest()[:10]
    entry = {"id": f"{slug(type_text)}/{digest}", "family": family(t), "type": type_text,
             "udts": g.udts_of(t, []), "type_tree": tree(t), "java_type": t.java, "column": column_type(t),
             "create_types": udt_declarations(t, [])}
    if lit is not None:
        entry["literal"] = lit
    if has_value:
        entry["value"] = value
    entry["hex"] = data.hex()
    if canonical is not None and canonical != data:
        entry["canonical"] = canonical.hex()
    if equivalent is not None and equivalent != data:
        entry["equivalent"] = [equivalent.hex()]
    entry["valid"] = valid
    if note:
        entry["note"] = note
    if quirk:
        entry["server_quirk"] = quirk
    if json_quirk:
        entry["server_json_quirk"] = json_quirk
    CASES.append(entry)


def parts(t, v):
    """(type, value) of what a container value holds."""
    if isinstance(t, g.MapOf):
        return [pair for k, x in v for pair in ((t.key, k), (t.value, x))]
    if isinstance(t, g.TupleOf):
        return list(zip(t.components, v))
    if isinstance(t, g.Udt):
        return list(zip([ft for _, ft in t.fields], v))
    return [(t.element, x) for x in v]


def anywhere(t, v, test):
    """Whether `test(type, value)` holds for the value or anything inside it."""
    if test(t, v):
        return True
    if v is None or isinstance(v, g.Empty) or isinstance(t, g.Native):
        return False
    return any(anywhere(c, x, test) for c, x in parts(t, v))


def null_element(t, v):
    """A list, set or map holding a null (length -1)."""
    return isinstance(t, (g.Collection, g.MapOf)) and v is not None and any(x is None for _, x in parts(t, v))


def ended_early(t, v):
    """A tuple or UDT value with fewer fields than its type: no literal writes it."""
    count = len(t.components) if isinstance(t, g.TupleOf) else len(t.fields) if isinstance(t, g.Udt) else 0
    return v is not None and not isinstance(v, g.Empty) and len(v) < count if count else False


def contains_empty(t, v):
    return anywhere(t, v, lambda _, x: isinstance(x, g.Empty))


# Types whose empty value Apache Cassandra 5.0 refuses ("Expected 2 bytes for a smallint (0)"); the
# counter's makes it fail with an internal error.
EMPTY_REFUSED = {"smallint", "tinyint", "date", "time", "duration", "counter"}


def literal_problem(t, v):
    """Why the literal of `v` does not write its bytes, or None."""
    def test(t, x):
        if not isinstance(t, g.Native) or x is None or isinstance(x, g.Empty):
            return False
        if t.cql == "inet" and len(t.serialize(x)) == 16 and t.serialize(x)[:12] == bytes(10) + b"\xff\xff":
            return "Cassandra writes an IPv4-mapped IPv6 literal as the 4-byte IPv4 address"
        if t.cql == "decimal" and abs(x.as_tuple().exponent) >= 2**31 - 1:
            return "Cassandra's CQL parser cannot read a decimal exponent of 2^31-1"
        if t.cql == "duration" and x.months == -2**31:
            return "Cassandra's duration literal parser refuses -2^31 months (it negates 2^31 months)"
        return False
    found = []
    anywhere(t, v, lambda t, x: bool(found.append(test(t, x)) or found[-1]))
    return next((f for f in found if f), None)


def sort_key(t, v):
    """Apache Cassandra's order of set elements and map keys (the order it writes them in); nulls first."""
    if v is None:
        return (0,)
    return (1, native_key(t, v) if isinstance(t, g.Native) else tuple(sort_key(c, x) for c, x in parts(t, v)))


def native_key(t, v):
    data = t.serialize(v)
    if t.cql in ("text", "ascii", "varchar", "blob", "inet"):
        return data
    if t.cql in ("uuid", "timeuuid"):
        version = v.version or 0
        return (version, v.time if version == 1 else 0, data)
    if t.cql in ("float", "double"):
        return (math.isnan(v), v, math.copysign(1, v))
    if t.cql == "timestamp" and isinstance(v, datetime.datetime):
        return (v - datetime.datetime(1970, 1, 1)) / datetime.timedelta(milliseconds=1)
    if t.cql == "date" and isinstance(v, datetime.date):
        return (v - datetime.date(1970, 1, 1)).days + g.EPOCH_DATE
    if t.cql == "time" and isinstance(v, datetime.time):
        return util.Time(v).nanosecond_time
    return v


def cassandra_order(t, v):
    """`v` with every set and map in Cassandra's order."""
    if v is None or isinstance(v, g.Empty) or isinstance(t, g.Native):
        return v
    if isinstance(t, g.MapOf):
        entries = [(cassandra_order(t.key, k), cassandra_order(t.value, x)) for k, x in v]
        return sorted(entries, key=lambda e: sort_key(t.key, e[0])) if len(entries) > 1 else entries
    if isinstance(t, g.Collection):
        items = [cassandra_order(t.element, x) for x in v]
        return sorted(items, key=lambda x: sort_key(t.element, x)) if t.kind == "set" else items
    if isinstance(t, g.Vector):
        return [cassandra_order(t.element, x) for x in v]
    return tuple(cassandra_order(c, x) for c, x in parts(t, v))


def ser(t, v):
    """The driver's bytes for `v`; a value holding the empty value somewhere (which the driver cannot take
    inside a container) is framed here around driver-serialised parts."""
    if not contains_empty(t, v) or isinstance(t, g.Native) or isinstance(v, g.Empty):
        return g.serialize(t, v)
    if isinstance(t, g.Collection):
        return int32_pack(len(v)) + b"".join(framed(t.element, x) for x in v)
    if isinstance(t, g.MapOf):
        return int32_pack(len(v)) + b"".join(framed(t.key, k) + framed(t.value, x) for k, x in v)
    if isinstance(t, g.TupleOf):
        return b"".join(framed(c, x) for c, x in zip(t.components, v))
    if isinstance(t, g.Udt):
        return b"".join(framed(ft, x) for (_, ft), x in zip(t.fields, v))
    assert t.element.fixed_size() is None, "a fixed-size vector element cannot be empty"
    return b"".join(uvint_pack(len(ser(t.element, x))) + ser(t.element, x) for x in v)


def framed(t, v):
    if v is None:
        return int32_pack(-1)
    data = ser(t, v)
    return int32_pack(len(data)) + data


def valid(t, v, note=None, raw=None):
    """A value: bytes from the driver (Cassandra's framing where it differs), JSON from the Python value. A
    value with a null element or an empty value Cassandra refuses is a wire-legal invalid case."""
    if raw is None:
        v = cassandra_order(t, v)
    data = raw if raw is not None else ser(t, v)
    value = g.forms(t, v)[0]
    notes = [note] if note else []
    if anywhere(t, v, null_element):
        quirk = None
        if isinstance(t, g.Collection) and t.kind == "list" and not anywhere(t.element, v, null_element) \
                and all(not anywhere(t.element, x, null_element) for x in v if x is not None):
            quirk = ("a frozen list column takes null elements when they are bound (a literal and a "
                     "non-frozen column refuse them)")
        notes.append("a null element (length -1): wire-legal, refused by Cassandra")
        add(t, data, False, value, note="; ".join(notes), quirk=quirk)
        return
    if anywhere(t, v, lambda t, x: isinstance(t, (g.Collection, g.MapOf)) and x is not None
                and any(isinstance(y, g.Empty) for _, y in parts(t, x))):
        notes.append("an empty element in a collection: wire-legal, but Cassandra does not keep it")
        add(t, data, False, value, note="; ".join(notes),
            quirk="a frozen list column takes it and reads the empty element back as null (ffffffff)")
        return
    if anywhere(t, v, lambda t, x: isinstance(x, g.Empty) and t.cql in EMPTY_REFUSED):
        notes.append("the empty value of smallint, tinyint, date, time, duration or counter: cqlwire reads it, "
                     "Cassandra refuses it")
        add(t, data, False, value, note="; ".join(notes))
        return
    lit = padded = None
    if anywhere(t, v, ended_early):
        padded = ser(t, pad(t, v))
    elif literal_problem(t, v):
        notes.append(literal_problem(t, v))
    else:
        lit = literal(t, v)
    add(t, data, True, value, lit=lit, note="; ".join(notes), equivalent=padded, json_quirk=json_problem(t, v))


def json_problem(t, v):
    """How Cassandra's SELECT JSON gets the value wrong, or None."""
    if anywhere(t, v, lambda t, x: isinstance(t, g.TupleOf) and ended_early(t, x)):
        return "SELECT JSON fails with an internal error (IndexOutOfBoundsException) on a tuple that ends early"
    if anywhere(t, v, lambda t, x: isinstance(x, g.Empty) and t.cql == "boolean"):
        return "SELECT JSON fails with an internal error (NullPointerException) on an empty boolean"
    if anywhere(t, v, lambda t, x: isinstance(t, g.Native) and t.cql == "duration" and x is not None
                and not isinstance(x, g.Empty) and x.months == -2**31):
        return 'SELECT JSON renders a duration of -2^31 months as "-"'
    return None


def pad(t, v):
    """`v` with every tuple and UDT that ends early completed with nulls (the same value)."""
    if v is None or isinstance(v, g.Empty) or isinstance(t, g.Native):
        return v
    if isinstance(t, g.MapOf):
        return [(pad(t.key, k), pad(t.value, x)) for k, x in v]
    if isinstance(t, (g.Collection, g.Vector)):
        return [pad(t.element, x) for x in v]
    types = t.components if isinstance(t, g.TupleOf) else [ft for _, ft in t.fields]
    return tuple(pad(c, x) for c, x in zip(types, list(v) + [None] * (len(types) - len(v))))


def invalid(t, data, note, quirk=None):
    """Bytes that are not a value of `t`; `quirk` says how Cassandra takes them all the same."""
    add(t, data, False, has_value=False, note=note, quirk=quirk)


def noncanonical(t, data, v, note):
    """Valid bytes in a form encoders do not write; `canonical` is the form they do."""
    add(t, data, True, g.forms(t, v)[0], note=note, canonical=ser(t, v))


def vint_framed(t, v):
    b = ser(t, v)
    return uvint_pack(len(b)) + b


U = uuid.UUID
rng = random.Random(20261127)

# 1. Every value of the driver golden cases (fixtures/driver), by CQL type name; Java class names and a
# vector<counter> (a column type Cassandra refuses) are left out.
for t, v, note, java_type, raw in g.VALUES:
    if java_type or (isinstance(t, g.Vector) and t.element.cql == "counter"):
        continue
    valid(t, v, note=note if raw is not None else None, raw=raw)

# 2. More native edges.
MORE_NATIVES = {
    "tinyint": [2, -2, 100, -100],
    "smallint": [255, 256, -256, -255],
    "int": [65535, 65536, -65536, 16777216],
    "bigint": [2**31, -2**31 - 1, 2**32, 2**53 + 1],
    "varint": [2**31 - 1, -2**31, 2**63 - 1, -2**63, 2**127, -2**127, 10**100, -(10**100), 2**1000],
    "decimal": [decimal.Decimal(s) for s in
                ["1E+2147483647", "1E-2147483647", "-1E+2147483647", "0.1", "-0.1", "1E+1",
                 "12345678901234567890123456789012345678901234567890E-49", "0E+5", "9" * 120, "0.5E-300"]],
    "double": [-1.0, 2.0**-1074 * 3, -1.7976931348623157e308, 1e-320, 0.3, 1.0 + 2.0**-52],
    "float": [-1.0, 0.3, -3.4028234663852886e38, 2.0**-149 * 5, 1.0 + 2.0**-23, 3.0],
    "uuid": [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(3)]
    + [uuid.UUID("d2177dd0-eaa2-11de-a572-001b779c76e3")],
    "timeuuid": [uuid.UUID(fields=(0, 0, 0x1000, 0x80, 0, 0)),
                 uuid.UUID("13814000-1dd2-11b2-8080-808080808080")],
    "timestamp": [datetime.datetime(1583, 10, 15), datetime.datetime(1969, 7, 20, 20, 17, 40),
                  datetime.datetime(2038, 1, 19, 3, 14, 8), datetime.datetime(3000, 6, 15, 1, 2, 3, 456000),
                  -62167219200000, 1],
    "date": [datetime.date(1582, 10, 15), datetime.date(1582, 10, 4), datetime.date(1900, 1, 1),
             datetime.date(2038, 1, 19), datetime.date(2100, 3, 1), 1, 2**31 - 1, 2**31 + 1],
    "time": [999999999, 1000000000, 86399000000000, 60000000000, 3600000000000],
    "duration": [util.Duration(12, 0, 0), util.Duration(-1, 0, 0), util.Duration(0, -1, 0),
                 util.Duration(0, 0, -1), util.Duration(0, 0, 1000), util.Duration(0, 0, 1000000),
                 util.Duration(0, 0, 60000000000), util.Duration(0, 0, 86400000000000),
                 util.Duration(25, 31, 3723004005006)],
    "inet": ["10.0.0.0", "1.2.3.4", "::ffff:0:1", "2001:db8::", "fe80::"],
    "boolean": [],
    "blob": [bytes([0xff]), bytes(1000), b"\x00" * 3],
    "ascii": ["\x7f", " ", "a" * 300],
    "text": ["\u00e9", "\U0001f600", "\u0000", "a" * 70000, "\ufeffbom", "right-to-left \u05d0\u05d1"],
    "varchar": ["", "x"],
}
for name, values in MORE_NATIVES.items():
    for value in values:
        valid(N[name], value)
for name in ["tinyint", "float", "timeuuid", "counter"]:
    valid(N[name], EMPTY)

# Valid bytes in a form encoders do not write: varints and decimals with redundant sign bytes.
noncanonical(N["varint"], b"\x00\x01", 1, "varint 1 with a redundant leading 0x00")
noncanonical(N["varint"], b"\xff\xff", -1, "varint -1 with a redundant leading 0xff")
noncanonical(N["varint"], b"\x00\x00\x00\x7f", 127, "varint 127 in four bytes")
noncanonical(N["varint"], b"\xff\x80", -128, "varint -128 with a redundant leading 0xff")
noncanonical(N["decimal"], ser(N["int"], 2) + b"\x00\x00\x96", decimal.Decimal("1.50"),
             "decimal 1.50 with its unscaled 150 in three bytes")

# 3. Collections: empty and nested, frozen-column and plain-column values, nulls where the protocol allows.
# Sets are listed in Cassandra's order (the server writes them sorted), maps sorted by key.
for name in ["tinyint", "smallint", "int", "bigint", "varint", "float", "double", "decimal", "text", "ascii",
             "blob", "boolean", "uuid", "timeuuid", "timestamp", "date", "time", "inet", "duration"]:
    valid(L(N[name]), [])
    if name != "duration":
        valid(S(N[name]), [])
        valid(M(N[name], N["int"]), [])
for name, values in [
    ("tinyint", [-128, 0, 127]), ("smallint", [-32768, 32767]), ("int", [-2**31, 2**31 - 1]),
    ("bigint", [-1, 0]), ("varint", [-(10**30), 0, 10**30]), ("float", [-1.5, 0.0, 2.5]),
    ("double", [-1e300, 1e300]), ("decimal", [decimal.Decimal("-1.5"), decimal.Decimal("2.25")]),
    ("text", ["", "a", "b"]), ("ascii", ["A", "a"]), ("blob", [b"", b"\x00", b"\xff"]),
    ("boolean", [False, True]), ("timestamp", [datetime.datetime(1969, 1, 1), datetime.datetime(2024, 1, 1)]),
    ("date", [datetime.date(1969, 1, 1), datetime.date(2024, 1, 1)]), ("time", [1, 2]),
    ("inet", ["1.2.3.4", "10.0.0.1"]),
]:
    valid(S(N[name]), values)
    valid(L(N[name]), list(reversed(values)))
    valid(M(N[name], N["text"]), [(x, "v") for x in values])
valid(L(N["duration"]), [util.Duration(1, 0, 0), util.Duration(-1, -1, -1)])
valid(M(N["text"], N["duration"]), [("a", util.Duration(0, 0, 5))])
valid(L(N["int"]), list(range(1000)), note="a 1000-element list")
valid(L(N["text"]), ["x" * 100] * 50)
valid(L(L(N["int"])), [[]])
valid(L(L(L(L(N["int"])))), [[[[1]]], [[[]]]])
valid(L(S(N["text"])), [["a"], []])
valid(L(M(N["int"], N["int"])), [[(1, 2)], []])
valid(S(S(N["int"])), [[], [1], [1, 2]])
valid(S(T([N["int"], N["text"]])), [(1, "a"), (2, "b")])
valid(M(N["int"], S(N["int"])), [(1, []), (2, [1])])
valid(M(T([N["int"], N["int"]]), N["text"]), [((1, 2), "tuple key")])
valid(M(N["text"], M(N["text"], M(N["text"], N["int"]))), [("a", [("b", [("c", 1)])])])
valid(L(N["int"]), [1, None, 3])
valid(M(N["text"], N["text"]), [("k", None)])
valid(S(N["text"]), [None])

# 4. Tuples and UDTs: present, null and missing trailing fields, nesting.
tint_text_uuid = T([N["int"], N["text"], N["uuid"]])
valid(tint_text_uuid, (1, "a", U("123e4567-e89b-12d3-a456-426614174000")))
valid(tint_text_uuid, (None, None, None))
valid(tint_text_uuid, (1, "a"), note="a tuple value that ends before its last component")
valid(tint_text_uuid, (), note="a zero-byte tuple value: no component present")
valid(T([N["int"]]), (5,))
valid(T([N["int"]]), (None,))
valid(T([N["int"]]), (EMPTY,))
valid(T([N["boolean"], N["tinyint"], N["smallint"], N["float"], N["double"], N["date"], N["time"],
         N["timestamp"], N["inet"], N["varint"], N["decimal"], N["blob"], N["ascii"], N["duration"]]),
      (True, -1, -2, 1.5, -2.5, datetime.date(1, 1, 1), 1, -1, "::1", 2**70, decimal.Decimal("0.001"), b"\x00",
       "a", util.Duration(0, 1, 0)))
valid(T([T([T([N["int"]])])]), (((1,),),))
valid(T([L(N["text"]), S(N["int"]), M(N["int"], N["int"])]), (["a"], [1], [(1, 2)]))
valid(T([L(N["text"]), S(N["int"]), M(N["int"], N["int"])]), ([], [], []))
valid(T([N["int"], N["int"]]), ((2**31 - 1), None))
valid(L(T([N["int"], N["text"]])), [(1,), (2, "x")], note="tuples in a list that end early")

addr = g.Udt("addr", [("street", N["text"]), ("zip", N["int"])])
point = g.Udt("point", [("x", N["double"]), ("y", N["double"]), ("label", N["text"])])
nested = g.Udt("nested", [("p", point), ("pts", L(point)), ("tag", T([N["int"], point]))])
valid(point, (1.0, 2.0, "p"))
valid(point, (float("nan"), float("-inf"), None))
valid(point, (1.0,), note="a UDT value with its first field only")
valid(point, (1.0, 2.0), note="a UDT value without its last field")
valid(point, ())
valid(nested, ((0.0, 0.0, "o"), [(1.0, 1.0, "a"), (2.0, 2.0)], (7, (3.0, 4.0, "t"))))
valid(nested, (None, [], None))
valid(nested, ((1.0,),), note="a nested UDT that ends early inside a UDT that ends early")
valid(L(point), [(1.0, 2.0, "a"), (3.0,)])
valid(S(addr), [("a", 1), ("b", 2)])
valid(M(N["int"], point), [(1, (0.5, 0.5, "half"))])
valid(T([addr, point]), (("s", 1), (1.0, 2.0, "z")))

# 5. Vectors: every element type Cassandra 5.0 takes, N = 1 and large, fixed-size and vint-prefixed.
VECTOR_SAMPLES = {
    "float": lambda i: float(g.np.float32(rng.uniform(-1, 1))),
    "double": lambda i: rng.uniform(-1e10, 1e10),
    "int": lambda i: rng.randint(-2**31, 2**31 - 1),
    "bigint": lambda i: rng.randint(-2**63, 2**63 - 1),
    "boolean": lambda i: rng.random() < 0.5,
    "timestamp": lambda i: rng.randint(-2**40, 2**41),
    "uuid": lambda i: uuid.UUID(int=rng.getrandbits(128), version=4),
    "timeuuid": lambda i: uuid.UUID(fields=(rng.getrandbits(32), rng.getrandbits(16), 0x1000 | rng.getrandbits(12),
                                            0x80 | rng.getrandbits(6), rng.getrandbits(8), rng.getrandbits(48))),
    "smallint": lambda i: rng.randint(-32768, 32767),
    "tinyint": lambda i: rng.randint(-128, 127),
    "date": lambda i: datetime.date(1, 1, 1) + datetime.timedelta(days=rng.randint(0, 3652058)),
    "time": lambda i: rng.randint(0, 86399999999999),
    "varint": lambda i: rng.randint(-2**(i % 200), 2**(i % 200)),
    "decimal": lambda i: decimal.Decimal(rng.randint(-10**(i % 40), 10**(i % 40))).scaleb(-rng.randint(0, 20)),
    "text": lambda i: "".join(rng.choice("ab ćd\u65e5'") for _ in range(i % 20)),
    "varchar": lambda i: "v" * (i % 7),
    "ascii": lambda i: "".join(chr(rng.randint(32, 126)) for _ in range(i % 10)),
    "inet": lambda i: ("10.0.%d.%d" % (i % 256, rng.randint(0, 255)) if i % 2
                       else str(uuid.UUID(int=rng.getrandbits(128))).replace("-", "")[:4] + "::" + str(i)),
    "duration": lambda i: util.Duration(rng.randint(0, 100), rng.randint(0, 100), rng.randint(0, 10**15))
    if i % 2 else util.Duration(-rng.randint(0, 100), -rng.randint(0, 100), -rng.randint(0, 10**15)),
    "blob": lambda i: bytes(rng.getrandbits(8) for _ in range(i % 5)),
}
for name, make in VECTOR_SAMPLES.items():
    for dimension in (1, 2, 3, 100 if name in ("float", "double", "int", "smallint", "text", "varint") else 8):
        valid(V(N[name], dimension), [make(i) for i in range(dimension)])
for dimension in (1024, 1536):
    valid(V(N["float"], dimension), [VECTOR_SAMPLES["float"](i) for i in range(dimension)],
          note="an embedding-sized vector")
# Element edges: the vint prefix grows at 128 and 16384 bytes; extremes of each element type.
valid(V(N["blob"], 3), [bytes(127), bytes(128), bytes(16384)], note="vint lengths of one, two and three bytes")
valid(V(N["text"], 2), ["", ""], note="empty text elements: vint length 0")
valid(V(N["smallint"], 4), [-32768, 32767, 0, -1])
valid(V(N["tinyint"], 2), [-128, 127])
valid(V(N["date"], 3), [0, 2**32 - 1, 2**31])
valid(V(N["time"], 2), [0, 86399999999999])
valid(V(N["float"], 4), [float("nan"), float("inf"), float("-inf"), -0.0])
valid(V(N["double"], 4), [float("nan"), float("inf"), float("-inf"), -0.0])
valid(V(N["varint"], 3), [0, 2**1000, -(2**1000)])
valid(V(N["decimal"], 2), [decimal.Decimal("1E+2147483647"), decimal.Decimal("0.000")])
valid(V(N["timestamp"], 2), [-2**63, 2**63 - 1])
valid(V(N["duration"], 3), [util.Duration(0, 0, 0), util.Duration(2**31 - 1, 2**31 - 1, 2**63 - 1),
                            util.Duration(-2**31, -2**31, -2**63)])
valid(V(N["inet"], 2), ["0.0.0.0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"])
invalid(V(N["smallint"], 2), uvint_pack(0) + vint_framed(N["smallint"], 1), "an empty smallint inside a vector")
valid(V(N["text"], 1), [EMPTY])
# Nested vectors and vectors in and of collections, tuples and UDTs.
valid(V(V(N["smallint"], 3), 2), [[1, 2, 3], [-1, -2, -3]])
valid(V(V(N["tinyint"], 1), 1), [[1]])
valid(V(V(N["double"], 2), 2), [[0.5, 1.5], [2.5, 3.5]])
valid(V(V(N["uuid"], 1), 2), [[U(int=1)], [U(int=2)]])
valid(V(V(N["text"], 2), 2), [["a", ""], ["", "b"]])
valid(V(V(N["date"], 2), 1), [[datetime.date(2024, 1, 1), datetime.date(1969, 12, 31)]])
valid(V(V(V(N["smallint"], 1), 2), 2), [[[1], [2]], [[3], [4]]])
valid(V(V(N["float"], 128), 4), [[VECTOR_SAMPLES["float"](i) for i in range(128)] for _ in range(4)])
valid(V(L(N["smallint"]), 2), [[1, 2], []])
valid(V(L(V(N["float"], 2)), 1), [[[1.0, 2.0], [3.0, 4.0]]])
valid(V(S(N["text"]), 2), [["a"], ["b", "c"]])
valid(V(M(N["int"], V(N["int"], 2)), 1), [[(1, [1, 2]), (2, [3, 4])]])
valid(V(T([N["int"], N["smallint"]]), 2), [(1, 2), (3, None)])
valid(V(T([N["int"], N["text"]]), 1), [(1,)], note="a tuple that ends early inside a vector")
valid(V(point, 2), [(1.0, 2.0, "a"), (3.0, 4.0, None)])
valid(V(addr, 1), [()], note="a zero-byte UDT inside a vector: vint length 0")
for name in ["float", "smallint", "text", "double", "tinyint", "date", "time", "boolean", "varint", "uuid"]:
    make = VECTOR_SAMPLES[name]
    valid(L(V(N[name], 2)), [[make(1), make(2)], [make(3), make(4)]])
    valid(S(V(N[name], 1)), [[make(5)]])
    valid(M(N["text"], V(N[name], 2)), [("a", [make(6), make(7)]), ("b", [make(8), make(9)])])
    valid(T([V(N[name], 1), N["int"]]), ([make(10)], 1))
valid(L(V(N["float"], 2)), [])
valid(M(N["int"], L(V(N["smallint"], 2))), [(1, [[1, 2], [3, 4]])])
valid(M(V(N["int"], 2), N["text"]), [([1, 2], "vector key")])
with_vectors = g.Udt("with_vectors", [("embedding", V(N["float"], 3)), ("codes", V(N["smallint"], 2)),
                                      ("names", V(N["text"], 1))])
valid(with_vectors, ([0.5, -0.5, 1.0], [1, -1], ["n"]))
valid(with_vectors, ([0.5, -0.5, 1.0],), note="a UDT with vectors that ends after its first field")
valid(with_vectors, (None, [7, 8], None))
valid(L(with_vectors), [([1.0, 2.0, 3.0], [1, 2], ["x"])])

# 6. Invalid bytes.
one = {name: ser(N[name], value) for name, value in [
    ("int", 1), ("bigint", 1), ("smallint", 1), ("tinyint", 1), ("float", 1.0), ("double", 1.0),
    ("boolean", True), ("uuid", U(int=1)), ("timestamp", 1), ("date", 1), ("time", 1), ("counter", 1),
    ("inet", "1.2.3.4"), ("decimal", decimal.Decimal("1.5")), ("timeuuid", U("d2177dd0-eaa2-11de-a572-001b779c76e3"))]}
for name, data in one.items():
    if len(data) > 1 and name not in ("decimal", "inet"):
        invalid(N[name], data[:-1], f"{name} one byte short")
    if name != "decimal":
        invalid(N[name], data + data[:1], f"{name} one byte too long")
invalid(N["inet"], ser(N["inet"], "::1")[:15], "inet of 15 bytes")
invalid(N["inet"], ser(N["inet"], "1.2.3.4")[:2], "inet of 2 bytes")
invalid(N["decimal"], ser(N["decimal"], decimal.Decimal("1.5"))[:3], "decimal shorter than its scale")
invalid(N["timeuuid"], ser(N["uuid"], U("123e4567-e89b-42d3-a456-426614174000")), "a version 4 UUID as timeuuid")
TIME_QUIRK = "Cassandra's time type takes any 8 bytes when bound (its literal parser refuses times outside a day)"
invalid(N["time"], ser(N["bigint"], -1), "time of -1 nanoseconds", quirk=TIME_QUIRK)
invalid(N["time"], ser(N["bigint"], 86400 * 10**9), "time of 24:00:00", quirk=TIME_QUIRK)
invalid(N["time"], ser(N["bigint"], 2**63 - 1), "time of 2^63-1 nanoseconds", quirk=TIME_QUIRK)
for data, what in [(b"\xff", "a lone 0xff"), ("é".encode()[:1], "a truncated two-byte sequence"),
                   (b"\xc0\x80", "an overlong NUL"), (b"\xed\xa0\x80", "a UTF-16 surrogate"),
                   (b"\xf4\x90\x80\x80", "a code point above U+10FFFF"), (b"ok" + b"\xfe", "0xfe after text")]:
    quirk = ("Cassandra's UTF-8 check takes overlong forms, surrogates and code points above U+10FFFF"
             if data[:1] in (b"\xc0", b"\xed", b"\xf4") else None)
    invalid(N["text"], data, f"text: invalid UTF-8, {what}", quirk=quirk)
invalid(N["varchar"], b"\x80", "varchar: invalid UTF-8, a lone continuation byte")
invalid(N["ascii"], "é".encode(), "ascii: a byte above 0x7f")
invalid(N["ascii"], b"a\x80", "ascii: 0x80")
d_mixed = [(1, -1, 0), (-1, 1, 0), (0, 1, -1), (0, -1, 1), (1, 0, -1)]
for months, days, nanos in d_mixed:
    invalid(N["duration"], ser(N["duration"], util.Duration(months, days, nanos)),
            f"duration with mixed signs ({months} months, {days} days, {nanos} ns)")
dur = ser(N["duration"], util.Duration(1, 2, 3))
invalid(N["duration"], dur[:2], "duration without its nanoseconds")
invalid(N["duration"], dur + dur[:1], "duration with a trailing byte",
        quirk="Cassandra's duration check ignores bytes after the third vint")
invalid(N["duration"], ser(N["duration"], util.Duration(0, 0, 2**40))[:-1], "duration with a truncated vint")
invalid(N["duration"], dur[:1], "duration with its months only")

li = L(N["int"])
two = ser(li, [1, 2])
invalid(li, int32_pack(-2), "list count -2")
invalid(li, int32_pack(2) + framed(N["int"], 1), "list count 2 with one element")
invalid(li, two + b"\x00", "list with a trailing byte")
invalid(li, two[:-1], "list with a truncated last element")
invalid(li, int32_pack(1) + int32_pack(-2), "list element length -2",
        quirk="Cassandra reads any negative element length as null, and a frozen list takes a null")
invalid(li, int32_pack(1) + int32_pack(3) + one["int"][:3], "list of int with a 3-byte element")
invalid(li, int32_pack(1) + int32_pack(2**31 - 1), "list element length 2^31-1 with no bytes")
invalid(li, int32_pack(2**31 - 1), "list count 2^31-1 with no elements")
invalid(li, one["int"][:2], "list of 2 bytes (no count)")
invalid(L(N["text"]), int32_pack(1) + int32_pack(1) + b"\xff", "list of text with invalid UTF-8")
invalid(L(L(N["int"])), int32_pack(1) + framed(li, [1])[:-1] + b"", "nested list truncated")
invalid(S(N["int"]), int32_pack(1), "set count 1 with no element")
mti = M(N["text"], N["int"])
invalid(mti, int32_pack(1) + framed(N["text"], "k"), "map entry with a key and no value")
invalid(mti, ser(mti, [("k", 1)]) + b"\x00", "map with a trailing byte")
invalid(mti, int32_pack(1) + framed(N["text"], "k") + framed(N["bigint"], 1), "map value of 8 bytes for int")
invalid(mti, int32_pack(-1), "map count -1")

ti = T([N["int"], N["text"]])
invalid(ti, ser(ti, (1, "a")) + framed(N["int"], 2), "tuple with a third component")
invalid(ti, ser(ti, (1, "a"))[:-1], "tuple with a truncated last component")
invalid(ti, int32_pack(-2), "tuple component length -2",
        quirk="Cassandra reads any negative component length as null")
invalid(ti, framed(N["int"], 1)[:6], "tuple with a truncated first component")
invalid(ti, int32_pack(3) + one["int"][:3], "tuple int component of 3 bytes")
invalid(addr, ser(addr, ("s", 1)) + framed(N["int"], 2), "UDT with a field beyond its declaration")
invalid(addr, ser(addr, ("s", 1))[:-2], "UDT with a truncated field")
invalid(addr, framed(N["text"], "s") + int32_pack(8) + ser(N["bigint"], 1), "UDT int field of 8 bytes")

for name, value in [("float", 1.5), ("double", 1.5), ("int", 7), ("bigint", 7), ("boolean", True),
                    ("uuid", U(int=9)), ("timestamp", 9)]:
    vt = V(N[name], 3)
    good = ser(vt, [value] * 3)
    size = len(good) // 3
    invalid(vt, good[:2 * size], f"vector<{name}, 3> with two elements")
    invalid(vt, good + good[:size], f"vector<{name}, 3> with four elements")
    if size > 1:
        invalid(vt, good[:-1], f"vector<{name}, 3> with a truncated element")
    invalid(vt, b"", f"vector<{name}, 3> of zero bytes")
    invalid(V(N[name], 2), b"".join(vint_framed(N[name], value) for _ in range(2)),
            f"vector<{name}, 2> with vint length prefixes (it is fixed-size)")
for name, value in [("smallint", 1), ("tinyint", 1), ("date", 1), ("time", 1), ("text", "ab"), ("varint", 300),
                    ("decimal", decimal.Decimal("1.5")), ("inet", "::1"), ("duration", util.Duration(1, 1, 1)),
                    ("blob", b"\x01\x02"), ("ascii", "a")]:
    vt = V(N[name], 2)
    good = ser(vt, [value, value])
    size = len(good) // 2
    invalid(vt, good[:size], f"vector<{name}, 2> with one element")
    invalid(vt, good + good[:size], f"vector<{name}, 2> with three elements")
    invalid(vt, good[:-1], f"vector<{name}, 2> with a truncated element")
    invalid(vt, good + b"\x00", f"vector<{name}, 2> with a trailing byte")
    invalid(vt, b"", f"vector<{name}, 2> of zero bytes")
    invalid(vt, good[:size] + uvint_pack(2**40), f"vector<{name}, 2> with a vint length far past the end")
    invalid(vt, good[:size] + b"\xff", f"vector<{name}, 2> with a vint that announces 8 more bytes")
    if name in ("smallint", "tinyint", "date", "time"):
        fixed = b"".join(ser(N[name], value) for _ in range(2))
        invalid(vt, fixed, f"vector<{name}, 2> written fixed-size (no vint prefix): the classic driver bug")
invalid(V(N["smallint"], 1), uvint_pack(3) + ser(N["int"], 1)[:3], "vector<smallint> element of 3 bytes")
invalid(V(N["tinyint"], 1), uvint_pack(2) + ser(N["smallint"], 1), "vector<tinyint> element of 2 bytes")
invalid(V(N["date"], 1), uvint_pack(8) + ser(N["bigint"], 1), "vector<date> element of 8 bytes")
invalid(V(N["time"], 1), uvint_pack(8) + ser(N["bigint"], -1), "vector<time> element of -1 ns", quirk=TIME_QUIRK)
invalid(V(N["text"], 1), uvint_pack(1) + b"\xff", "vector<text> element of invalid UTF-8")
invalid(V(V(N["float"], 2), 2), ser(V(V(N["float"], 2), 2), [[1.0, 2.0], [3.0, 4.0]])[:-4],
        "vector<vector<float, 2>, 2> one float short")
invalid(V(V(N["smallint"], 2), 1), ser(V(N["smallint"], 2), [1, 2]), "nested smallint vector without its outer prefix")
invalid(L(V(N["float"], 2)), int32_pack(1) + framed(V(N["float"], 3), [1.0, 2.0, 3.0]),
        "list<vector<float, 2>> holding a 3-float vector")
invalid(L(V(N["smallint"], 2)), int32_pack(1) + int32_pack(4) + ser(N["smallint"], 1) + ser(N["smallint"], 2),
        "list<vector<smallint, 2>> holding a fixed-size smallint vector")
valid(M(N["text"], V(N["int"], 2)), [("k", None)])
invalid(T([V(N["int"], 2)]), int32_pack(4) + ser(N["int"], 1), "tuple<vector<int, 2>> of one int")


def server_answers():
    path = os.path.join(HERE, "server.jsonl")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return {entry["id"]: entry["server"] for entry in map(json.loads, f)}


def main():
    answers = server_answers()
    ids = set()
    with open(os.path.join(HERE, "cases.jsonl"), "w", encoding="utf-8", newline="\n") as out:
        for entry in CASES:
            assert entry["id"] not in ids, entry["id"]
            ids.add(entry["id"])
            entry["server"] = answers.get(entry["id"])
            out.write(json.dumps(entry, ensure_ascii=False, allow_nan=False) + "\n")
    valid_count = sum(entry["valid"] for entry in CASES)
    print(f"conformance/cases.jsonl: {len(CASES)} cases ({valid_count} valid, {len(CASES) - valid_count} invalid)")


if __name__ == "__main__":
    main()
