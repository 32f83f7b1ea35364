//! The CQL type grammar: native types, collections, tuples, user-defined types and vectors, parsed
//! from CQL syntax or Cassandra's Java class names, and displayed back as CQL.

mod error;
mod names;
mod parse;

pub use error::{TypeError, TypeErrorKind};
pub use parse::{parse_type, UdtRegistry};

use std::fmt;

/// A native (non-composite) CQL type. `varchar` is an alias of `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NativeType {
    /// `ascii`: US-ASCII text.
    Ascii,
    /// `bigint`: 64-bit signed integer.
    BigInt,
    /// `blob`: arbitrary bytes.
    Blob,
    /// `boolean`: one byte, zero is false.
    Boolean,
    /// `counter`: 64-bit signed integer.
    Counter,
    /// `date`: unsigned 32-bit day count, 2^31 is 1970-01-01.
    Date,
    /// `decimal`: 32-bit scale then a varint unscaled value.
    Decimal,
    /// `double`: IEEE 754 binary64.
    Double,
    /// `duration`: months, days and nanoseconds as signed vints.
    Duration,
    /// `float`: IEEE 754 binary32.
    Float,
    /// `inet`: 4 or 16 address bytes.
    Inet,
    /// `int`: 32-bit signed integer.
    Int,
    /// `smallint`: 16-bit signed integer.
    SmallInt,
    /// `text` (and its alias `varchar`): UTF-8 text.
    Text,
    /// `time`: nanoseconds since midnight as a 64-bit signed integer.
    Time,
    /// `timestamp`: milliseconds since the epoch as a 64-bit signed integer.
    Timestamp,
    /// `timeuuid`: a version 1 UUID.
    TimeUuid,
    /// `tinyint`: 8-bit signed integer.
    TinyInt,
    /// `uuid`: 16 bytes.
    Uuid,
    /// `varint`: arbitrary-precision two's complement integer.
    Varint,
}

/// A user-defined type: its name and its fields in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdtType {
    /// The keyspace, when known (from a Java `UserType(...)` name).
    pub keyspace: Option<String>,
    /// The type's name.
    pub name: String,
    /// Field names and types, in declaration order.
    pub fields: Vec<(String, CqlType)>,
}

/// A CQL type. `frozen<...>` (and Java `FrozenType`/`ReversedType`) does not change the bytes, so it is
/// not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CqlType {
    /// A native type.
    Native(NativeType),
    /// `list<T>`.
    List(Box<CqlType>),
    /// `set<T>`.
    Set(Box<CqlType>),
    /// `map<K, V>`.
    Map(Box<CqlType>, Box<CqlType>),
    /// `tuple<T1, T2, ...>`.
    Tuple(Vec<CqlType>),
    /// A user-defined type.
    Udt(UdtType),
    /// `vector<T, N>` with N ≥ 1.
    Vector(Box<CqlType>, usize),
}

impl NativeType {
    /// The size in bytes of this type's values when it is a *fixed-size* vector element (as in
    /// Apache Cassandra's `VectorType`): boolean, int, float, bigint, double, timestamp, uuid,
    /// timeuuid. Every other native type — smallint, tinyint, date and time included — is
    /// vint-prefixed inside a vector.
    pub fn vector_element_size(self) -> Option<usize> {
        match self {
            NativeType::Boolean => Some(1),
            NativeType::Int | NativeType::Float => Some(4),
            NativeType::BigInt | NativeType::Double | NativeType::Timestamp => Some(8),
            NativeType::Uuid | NativeType::TimeUuid => Some(16),
            _ => None,
        }
    }
}

impl CqlType {
    /// The size in bytes of this type's values as a vector element when fixed (as in Cassandra's
    /// `VectorType`): the fixed-size natives and vectors of fixed-size elements (dimension × size);
    /// `None` when every element carries a vint length prefix.
    pub fn vector_element_size(&self) -> Option<usize> {
        match self {
            CqlType::Native(n) => n.vector_element_size(),
            CqlType::Vector(element, dimension) => element
                .vector_element_size()
                .and_then(|size| size.checked_mul(*dimension)),
            _ => None,
        }
    }
}

/// The deepest nesting of type constructors a type may have (the top level counts as one; `frozen`
/// counts too, as written).
pub const MAX_TYPE_DEPTH: usize = 64;

/// The most type nodes (natives, collections, fields, ...) one type may expand to, so that
/// user-defined types referring to each other cannot blow up memory.
pub const MAX_TYPE_NODES: usize = 100_000;

/// The largest vector dimension (Cassandra stores it as a Java `int`).
pub const MAX_VECTOR_DIMENSION: usize = i32::MAX as usize;

impl NativeType {
    /// The CQL name of this type (`varchar` prints as `text`).
    pub fn cql_name(self) -> &'static str {
        use NativeType::*;
        match self {
            Ascii => "ascii",
            BigInt => "bigint",
            Blob => "blob",
            Boolean => "boolean",
            Counter => "counter",
            Date => "date",
            Decimal => "decimal",
            Double => "double",
            Duration => "duration",
            Float => "float",
            Inet => "inet",
            Int => "int",
            SmallInt => "smallint",
            Text => "text",
            Time => "time",
            Timestamp => "timestamp",
            TimeUuid => "timeuuid",
            TinyInt => "tinyint",
            Uuid => "uuid",
            Varint => "varint",
        }
    }
}

impl fmt::Display for NativeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cql_name())
    }
}

impl CqlType {
    /// The nesting depth of this type: 1 for a native type, one more than the deepest component
    /// otherwise.
    pub fn depth(&self) -> usize {
        let deepest = match self {
            CqlType::Native(_) => 0,
            CqlType::List(t) | CqlType::Set(t) | CqlType::Vector(t, _) => t.depth(),
            CqlType::Map(k, v) => k.depth().max(v.depth()),
            CqlType::Tuple(components) => components.iter().map(CqlType::depth).max().unwrap_or(0),
            CqlType::Udt(udt) => udt.fields.iter().map(|(_, t)| t.depth()).max().unwrap_or(0),
        };
        deepest + 1
    }
}

/// A name (of a UDT, a field, a keyspace, a table or a column) as CQL writes it: bare when it is a
/// lowercase identifier (a letter, then letters, digits and `_`) and no reserved keyword, else
/// `"quoted"` with `""` escaping a quote.
#[derive(Debug, Clone, Copy)]
pub struct Identifier<'a>(pub &'a str);

/// Apache Cassandra's reserved keywords (its `reserved_keywords.txt`), which name a column or table
/// only when quoted: `"select"`, `"token"`.
const RESERVED: &[&str] = &[
    "add",
    "allow",
    "alter",
    "and",
    "apply",
    "asc",
    "authorize",
    "batch",
    "begin",
    "by",
    "check",
    "columnfamily",
    "constraint",
    "create",
    "delete",
    "desc",
    "describe",
    "drop",
    "entries",
    "execute",
    "from",
    "full",
    "grant",
    "if",
    "in",
    "index",
    "infinity",
    "insert",
    "into",
    "is",
    "keyspace",
    "length",
    "limit",
    "materialized",
    "modify",
    "nan",
    "norecursive",
    "not",
    "null",
    "of",
    "on",
    "or",
    "order",
    "primary",
    "rename",
    "revoke",
    "schema",
    "select",
    "set",
    "table",
    "to",
    "token",
    "truncate",
    "unlogged",
    "update",
    "use",
    "using",
    "view",
    "where",
    "with",
];

impl fmt::Display for Identifier<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.0;
        let bare = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !RESERVED.contains(&name);
        if bare {
            f.write_str(name)
        } else {
            write!(f, "\"{}\"", name.replace('"', "\"\""))
        }
    }
}

impl fmt::Display for CqlType {
    /// CQL syntax: `map<text, int>`, `vector<float, 3>`, a UDT by name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CqlType::Native(n) => write!(f, "{n}"),
            CqlType::List(t) => write!(f, "list<{t}>"),
            CqlType::Set(t) => write!(f, "set<{t}>"),
            CqlType::Map(k, v) => write!(f, "map<{k}, {v}>"),
            CqlType::Vector(t, n) => write!(f, "vector<{t}, {n}>"),
            CqlType::Tuple(components) => {
                f.write_str("tuple<")?;
                for (i, t) in components.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(">")
            }
            CqlType::Udt(udt) => write!(f, "{}", Identifier(&udt.name)),
        }
    }
}

impl UdtType {
    /// The declaration of this type in the syntax [`UdtRegistry::declare`] reads:
    /// `addr(street text, zip int)`.
    pub fn declaration(&self) -> String {
        struct Declaration<'a>(&'a UdtType);
        impl fmt::Display for Declaration<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(", Identifier(&self.0.name))?;
                for (i, (field, t)) in self.0.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{} {t}", Identifier(field))?;
                }
                f.write_str(")")
            }
        }
        Declaration(self).to_string()
    }
}

#[cfg(test)]
mod tests;
