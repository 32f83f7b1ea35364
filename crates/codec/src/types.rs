//! The CQL type grammar: native types, collections, tuples, user-defined types and vectors, parsed
//! from CQL syntax or Cassandra's Java class names, and displayed back as CQL.

use std::fmt;

/// A native (non-composite) CQL type. `varchar` is an alias of `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// The Java package of Cassandra's type classes, accepted (or omitted) before a class name.
const JAVA_PACKAGE: &str = "org.apache.cassandra.db.marshal.";

/// Why a type string or a UDT declaration could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at character {position}")]
pub struct TypeError {
    /// What is wrong.
    pub message: String,
    /// Index (in characters, from 0) in the parsed text where the problem was found.
    pub position: usize,
}

/// A declared user-defined type with its size, kept so references to it can be bounded.
#[derive(Debug, Clone)]
struct DeclaredUdt {
    /// The type.
    udt: UdtType,
    /// Its nesting depth (itself included).
    depth: usize,
    /// Its node count (itself included).
    nodes: usize,
}

/// The user-defined types declared with `--udt`, by name.
#[derive(Debug, Clone, Default)]
pub struct UdtRegistry {
    /// Declarations in order.
    declared: Vec<DeclaredUdt>,
}

impl UdtRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares a type from `name(field1 type1, field2 type2, ...)`. Field types are full types and may
    /// use types declared earlier. Unquoted names are case-insensitive (kept in lowercase); `"Quoted"`
    /// names keep their case.
    pub fn declare(&mut self, declaration: &str) -> Result<(), TypeError> {
        let mut parser = Parser::new(declaration, self);
        let name = parser.name("a type name")?;
        if native_from_cql(&name).is_some() || is_cql_composite(&name) {
            return Err(parser.error_at(0, format!("`{name}` is a built-in type name")));
        }
        if self.get(&name).is_some() {
            return Err(parser.error_at(0, format!("type `{name}` is already declared")));
        }
        parser.expect('(')?;
        let mut fields: Vec<(String, CqlType)> = Vec::new();
        loop {
            let field_start = parser.skip_whitespace();
            let field = parser.name("a field name")?;
            if fields.iter().any(|(existing, _)| *existing == field) {
                return Err(parser.error_at(field_start, format!("duplicate field `{field}`")));
            }
            let field_type = parser.parse_type(2)?;
            fields.push((field, field_type));
            if !parser.comma_or_close(')')? {
                break;
            }
        }
        parser.expect_end()?;
        let nodes = parser.nodes + 1;
        let udt = UdtType {
            keyspace: None,
            name,
            fields,
        };
        let depth = CqlType::Udt(udt.clone()).depth();
        self.declared.push(DeclaredUdt { udt, depth, nodes });
        Ok(())
    }

    /// The declared type with this exact name.
    pub fn get(&self, name: &str) -> Option<&UdtType> {
        self.entry(name).map(|d| &d.udt)
    }

    /// The declaration with this exact name.
    fn entry(&self, name: &str) -> Option<&DeclaredUdt> {
        self.declared.iter().find(|d| d.udt.name == name)
    }
}

/// Parses a CQL type (`map<text, frozen<list<int>>>`, `vector<float, 3>`, a declared UDT name) or a
/// Cassandra Java class name (`org.apache.cassandra.db.marshal.ListType(Int32Type)`), case-insensitive
/// and whitespace-tolerant. Nesting is limited to [`MAX_TYPE_DEPTH`] levels.
pub fn parse_type(text: &str, udts: &UdtRegistry) -> Result<CqlType, TypeError> {
    let mut parser = Parser::new(text, udts);
    let parsed = parser.parse_type(1)?;
    parser.expect_end()?;
    Ok(parsed)
}

/// The native type of a CQL type keyword (lowercase).
fn native_from_cql(name: &str) -> Option<NativeType> {
    use NativeType::*;
    Some(match name {
        "ascii" => Ascii,
        "bigint" => BigInt,
        "blob" => Blob,
        "boolean" => Boolean,
        "counter" => Counter,
        "date" => Date,
        "decimal" => Decimal,
        "double" => Double,
        "duration" => Duration,
        "float" => Float,
        "inet" => Inet,
        "int" => Int,
        "smallint" => SmallInt,
        "text" | "varchar" => Text,
        "time" => Time,
        "timestamp" => Timestamp,
        "timeuuid" => TimeUuid,
        "tinyint" => TinyInt,
        "uuid" => Uuid,
        "varint" => Varint,
        _ => return None,
    })
}

/// The native type of a Java class simple name (lowercase).
fn native_from_java(class: &str) -> Option<NativeType> {
    use NativeType::*;
    Some(match class {
        "asciitype" => Ascii,
        "longtype" => BigInt,
        "bytestype" => Blob,
        "booleantype" => Boolean,
        "countercolumntype" => Counter,
        "simpledatetype" => Date,
        "decimaltype" => Decimal,
        "doubletype" => Double,
        "durationtype" => Duration,
        "floattype" => Float,
        "inetaddresstype" => Inet,
        "int32type" => Int,
        "shorttype" => SmallInt,
        "utf8type" => Text,
        "timetype" => Time,
        "timestamptype" | "datetype" => Timestamp,
        "timeuuidtype" => TimeUuid,
        "bytetype" => TinyInt,
        "uuidtype" | "lexicaluuidtype" => Uuid,
        "integertype" => Varint,
        _ => return None,
    })
}

/// The CQL type constructors taking `<...>` parameters.
const CQL_COMPOSITES: [&str; 6] = ["list", "set", "map", "tuple", "frozen", "vector"];

/// The CQL native type names (those [`native_from_cql`] knows), for suggestions.
const CQL_NATIVES: [&str; 21] = [
    "ascii",
    "bigint",
    "blob",
    "boolean",
    "counter",
    "date",
    "decimal",
    "double",
    "duration",
    "float",
    "inet",
    "int",
    "smallint",
    "text",
    "varchar",
    "time",
    "timestamp",
    "timeuuid",
    "tinyint",
    "uuid",
    "varint",
];

/// Whether a lowercase name is a CQL type constructor taking `<...>` parameters.
fn is_cql_composite(name: &str) -> bool {
    CQL_COMPOSITES.contains(&name)
}

/// `unknown type `name``, with the closest of `candidates` suggested when one is close enough to be
/// a typo.
fn unknown_type<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> String {
    let closest = candidates
        .into_iter()
        .map(|candidate| (strsim::damerau_levenshtein(name, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= 2 && distance < candidate.len())
        // Among equally distant names, the one sharing the longest start (`intt`: `int`, not `inet`).
        .min_by(|a, b| {
            let similarity = |c: &str| strsim::jaro_winkler(name, c);
            a.0.cmp(&b.0)
                .then_with(|| similarity(b.1).total_cmp(&similarity(a.1)))
        });
    match closest {
        Some((_, candidate)) => format!("unknown type `{name}` (did you mean `{candidate}`?)"),
        None => format!("unknown type `{name}`"),
    }
}

/// A recursive-descent parser over the characters of a type string.
struct Parser<'a> {
    /// The text, as characters so that positions are character indexes.
    chars: Vec<char>,
    /// The next character to read.
    pos: usize,
    /// Declared UDTs that names may refer to.
    udts: &'a UdtRegistry,
    /// Type nodes created so far (bounded by [`MAX_TYPE_NODES`]).
    nodes: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    fn new(text: &str, udts: &'a UdtRegistry) -> Self {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            udts,
            nodes: 0,
        }
    }

    /// An error at `position`.
    fn error_at(&self, position: usize, message: impl Into<String>) -> TypeError {
        TypeError {
            message: message.into(),
            position,
        }
    }

    /// Describes the character at the current position for an error message.
    fn found(&self) -> String {
        match self.chars.get(self.pos) {
            Some(c) => format!("`{c}`"),
            None => "the end".to_string(),
        }
    }

    /// Skips whitespace and returns the new position.
    fn skip_whitespace(&mut self) -> usize {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
        self.pos
    }

    /// The next non-whitespace character, not consumed.
    fn peek(&mut self) -> Option<char> {
        self.skip_whitespace();
        self.chars.get(self.pos).copied()
    }

    /// Consumes `expected` (after whitespace) or fails.
    fn expect(&mut self, expected: char) -> Result<(), TypeError> {
        if self.peek() == Some(expected) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error_at(
                self.pos,
                format!("expected `{expected}`, found {}", self.found()),
            ))
        }
    }

    /// Consumes a `,` (returns true) or the closing `close` (returns false).
    fn comma_or_close(&mut self, close: char) -> Result<bool, TypeError> {
        match self.peek() {
            Some(',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.error_at(
                self.pos,
                format!("expected `,` or `{close}`, found {}", self.found()),
            )),
        }
    }

    /// Fails unless only whitespace is left.
    fn expect_end(&mut self) -> Result<(), TypeError> {
        match self.peek() {
            None => Ok(()),
            Some(c) => Err(self.error_at(self.pos, format!("unexpected `{c}` after the type"))),
        }
    }

    /// Reads a run of identifier characters (letters, digits, `_`, and `.` when `dots`).
    fn word(&mut self, dots: bool) -> String {
        self.skip_whitespace();
        let start = self.pos;
        while self
            .chars
            .get(self.pos)
            .is_some_and(|&c| c.is_alphanumeric() || c == '_' || (dots && c == '.'))
        {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// Reads a name: an unquoted identifier (lowercased) or a `"quoted"` one (`""` escapes a quote).
    fn name(&mut self, what: &str) -> Result<String, TypeError> {
        if self.peek() == Some('"') {
            return self.quoted_name();
        }
        let start = self.pos;
        let word = self.word(false);
        if word.is_empty() {
            return Err(self.error_at(start, format!("expected {what}, found {}", self.found())));
        }
        Ok(word.to_lowercase())
    }

    /// Reads a `"quoted"` identifier; the current character is the opening quote.
    fn quoted_name(&mut self) -> Result<String, TypeError> {
        let start = self.pos;
        self.pos += 1;
        let mut name = String::new();
        loop {
            match self.chars.get(self.pos) {
                None => return Err(self.error_at(start, "unterminated quoted name")),
                Some('"') if self.chars.get(self.pos + 1) == Some(&'"') => {
                    name.push('"');
                    self.pos += 2;
                }
                Some('"') => {
                    self.pos += 1;
                    return Ok(name);
                }
                Some(&c) => {
                    name.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Counts one more type node, failing past [`MAX_TYPE_NODES`].
    fn add_nodes(&mut self, count: usize, at: usize) -> Result<(), TypeError> {
        self.nodes = self.nodes.saturating_add(count);
        if self.nodes > MAX_TYPE_NODES {
            return Err(self.error_at(
                at,
                format!("type has more than {MAX_TYPE_NODES} components"),
            ));
        }
        Ok(())
    }

    /// Parses one type at nesting `depth` (1 for the top level).
    fn parse_type(&mut self, depth: usize) -> Result<CqlType, TypeError> {
        let start = self.skip_whitespace();
        if depth > MAX_TYPE_DEPTH {
            return Err(self.error_at(
                start,
                format!("type nesting deeper than {MAX_TYPE_DEPTH} levels"),
            ));
        }
        self.add_nodes(1, start)?;
        if self.peek() == Some('"') {
            let name = self.quoted_name()?;
            return self.udt_reference(&name, start, depth);
        }
        let word = self.word(true);
        if word.is_empty() {
            return Err(self.error_at(start, format!("expected a type, found {}", self.found())));
        }
        let lower = word.to_lowercase();
        match self.peek() {
            Some('<') => self.cql_composite(&lower, start, depth),
            Some('(') => self.java_composite(&lower, start, depth),
            _ => self.simple(&lower, start, depth),
        }
    }

    /// A type name without parameters: a CQL native, a declared UDT or a Java native class.
    fn simple(&mut self, lower: &str, start: usize, depth: usize) -> Result<CqlType, TypeError> {
        if let Some(native) = native_from_cql(lower) {
            return Ok(CqlType::Native(native));
        }
        if let Some(class) = java_class(lower) {
            if let Some(native) = native_from_java(class) {
                return Ok(CqlType::Native(native));
            }
            if is_java_composite(class) {
                return Err(self.error_at(start, format!("`{class}` needs `(...)` parameters")));
            }
        }
        if is_cql_composite(lower) {
            return Err(self.error_at(start, format!("`{lower}` needs `<...>` parameters")));
        }
        // A keyspace-qualified UDT name (`ks.addr`) refers to the declared `addr`.
        let name = lower.rsplit('.').next().unwrap_or(lower);
        self.udt_reference(name, start, depth)
    }

    /// A reference to a declared UDT, counted against the depth and node limits.
    fn udt_reference(
        &mut self,
        name: &str,
        start: usize,
        depth: usize,
    ) -> Result<CqlType, TypeError> {
        let Some(declared) = self.udts.entry(name) else {
            let declared = self.udts.declared.iter().map(|d| d.udt.name.as_str());
            let candidates = CQL_NATIVES
                .into_iter()
                .chain(CQL_COMPOSITES)
                .chain(declared);
            return Err(self.error_at(start, unknown_type(name, candidates)));
        };
        if depth + declared.depth - 1 > MAX_TYPE_DEPTH {
            return Err(self.error_at(
                start,
                format!("type nesting deeper than {MAX_TYPE_DEPTH} levels"),
            ));
        }
        self.add_nodes(declared.nodes, start)?;
        Ok(CqlType::Udt(declared.udt.clone()))
    }

    /// `list<T>`, `set<T>`, `map<K, V>`, `tuple<...>`, `frozen<T>`, `vector<T, N>`.
    fn cql_composite(
        &mut self,
        lower: &str,
        start: usize,
        depth: usize,
    ) -> Result<CqlType, TypeError> {
        let inner = depth + 1;
        self.expect('<')?;
        let parsed = match lower {
            "list" => CqlType::List(Box::new(self.parse_type(inner)?)),
            "set" => CqlType::Set(Box::new(self.parse_type(inner)?)),
            "frozen" => self.parse_type(inner)?,
            "map" => self.map(inner)?,
            "tuple" => self.tuple(inner, '>')?,
            "vector" => self.vector(inner)?,
            _ if native_from_cql(lower).is_some() || self.udts.entry(lower).is_some() => {
                return Err(
                    self.error_at(start, format!("`{lower}` does not take `<...>` parameters"))
                )
            }
            _ => return Err(self.error_at(start, unknown_type(lower, CQL_COMPOSITES))),
        };
        // `tuple<...>` consumed its own closing `>`; every other form (frozen<tuple<...>> too) has one left.
        if lower != "tuple" {
            self.expect('>')?;
        }
        Ok(parsed)
    }

    /// The Java composites: `ListType(T)`, `MapType(K,V)`, `UserType(ks,hexname,hexfield:T,...)`, ...
    fn java_composite(
        &mut self,
        lower: &str,
        start: usize,
        depth: usize,
    ) -> Result<CqlType, TypeError> {
        let inner = depth + 1;
        let class = java_class(lower)
            .filter(|class| is_java_composite(class))
            .ok_or_else(|| {
                self.error_at(start, format!("`{lower}` does not take `(...)` parameters"))
            })?;
        self.expect('(')?;
        let parsed = match class {
            "listtype" => CqlType::List(Box::new(self.parse_type(inner)?)),
            "settype" => CqlType::Set(Box::new(self.parse_type(inner)?)),
            "frozentype" | "reversedtype" => self.parse_type(inner)?,
            "maptype" => self.map(inner)?,
            "vectortype" => self.vector(inner)?,
            "tupletype" => return self.tuple(inner, ')'),
            _ => return self.java_user_type(inner),
        };
        self.expect(')')?;
        Ok(parsed)
    }

    /// The key and value types of a map, separated by a comma.
    fn map(&mut self, inner: usize) -> Result<CqlType, TypeError> {
        let key = self.parse_type(inner)?;
        self.expect(',')?;
        let value = self.parse_type(inner)?;
        Ok(CqlType::Map(Box::new(key), Box::new(value)))
    }

    /// One or more comma-separated component types up to and including `close`.
    fn tuple(&mut self, inner: usize, close: char) -> Result<CqlType, TypeError> {
        let mut components = Vec::new();
        loop {
            components.push(self.parse_type(inner)?);
            if !self.comma_or_close(close)? {
                return Ok(CqlType::Tuple(components));
            }
        }
    }

    /// The element type and dimension of a vector: `T, N` with 1 ≤ N ≤ [`MAX_VECTOR_DIMENSION`].
    fn vector(&mut self, inner: usize) -> Result<CqlType, TypeError> {
        let element = self.parse_type(inner)?;
        self.expect(',')?;
        let at = self.skip_whitespace();
        let digits = self.word(false);
        let dimension = digits
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_VECTOR_DIMENSION).contains(n))
            .ok_or_else(|| {
                self.error_at(
                    at,
                    format!(
                        "vector dimension must be an integer from 1 to {MAX_VECTOR_DIMENSION}, found `{digits}`"
                    ),
                )
            })?;
        Ok(CqlType::Vector(Box::new(element), dimension))
    }

    /// `UserType(ks,hexname,hexfield:Type,...)` after the opening parenthesis.
    fn java_user_type(&mut self, inner: usize) -> Result<CqlType, TypeError> {
        let keyspace_start = self.skip_whitespace();
        let keyspace = self.word(false);
        if keyspace.is_empty() {
            return Err(self.error_at(keyspace_start, "expected a keyspace name"));
        }
        self.expect(',')?;
        let name_start = self.skip_whitespace();
        let name = self.hex_name()?;
        let mut fields: Vec<(String, CqlType)> = Vec::new();
        while self.comma_or_close(')')? {
            let field_start = self.skip_whitespace();
            let field = self.hex_name()?;
            if fields.iter().any(|(existing, _)| *existing == field) {
                return Err(self.error_at(field_start, format!("duplicate field `{field}`")));
            }
            self.expect(':')?;
            let field_type = self.parse_type(inner)?;
            fields.push((field, field_type));
        }
        if fields.is_empty() {
            return Err(self.error_at(name_start, format!("type `{name}` has no fields")));
        }
        Ok(CqlType::Udt(UdtType {
            keyspace: Some(keyspace),
            name,
            fields,
        }))
    }

    /// A hex-encoded UTF-8 name, as in Java `UserType` parameters.
    fn hex_name(&mut self) -> Result<String, TypeError> {
        let start = self.skip_whitespace();
        let digits = self.word(false);
        crate::hex::parse(&digits)
            .ok()
            .filter(|bytes| !bytes.is_empty())
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| {
                self.error_at(
                    start,
                    format!("expected a hex-encoded UTF-8 name, found `{digits}`"),
                )
            })
    }
}

/// The lowercase simple class name of a Java type name: the part after `org.apache.cassandra.db.marshal.`,
/// or the whole name when it has no package. `None` for other dotted names.
fn java_class(lower: &str) -> Option<&str> {
    match lower.strip_prefix(JAVA_PACKAGE) {
        Some(class) => Some(class),
        None if !lower.contains('.') => Some(lower),
        None => None,
    }
}

/// Whether a lowercase Java simple class name is a parameterised type.
fn is_java_composite(class: &str) -> bool {
    matches!(
        class,
        "listtype"
            | "settype"
            | "maptype"
            | "tupletype"
            | "frozentype"
            | "reversedtype"
            | "vectortype"
            | "usertype"
    )
}

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

/// Writes a name bare when it is a lowercase identifier, else `"quoted"` with `""` escaping.
fn write_name(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    let bare = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if bare {
        f.write_str(name)
    } else {
        write!(f, "\"{}\"", name.replace('"', "\"\""))
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
            CqlType::Udt(udt) => write_name(f, &udt.name),
        }
    }
}

impl UdtType {
    /// The declaration of this type in `--udt` syntax: `addr(street text, zip int)`.
    pub fn declaration(&self) -> String {
        struct Declaration<'a>(&'a UdtType);
        impl fmt::Display for Declaration<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_name(f, &self.0.name)?;
                f.write_str("(")?;
                for (i, (field, t)) in self.0.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_name(f, field)?;
                    write!(f, " {t}")?;
                }
                f.write_str(")")
            }
        }
        Declaration(self).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> CqlType {
        parse_type(text, &UdtRegistry::new()).unwrap()
    }

    fn native(n: NativeType) -> CqlType {
        CqlType::Native(n)
    }

    fn list(t: CqlType) -> CqlType {
        CqlType::List(Box::new(t))
    }

    fn parse_error(text: &str, udts: &UdtRegistry) -> TypeError {
        parse_type(text, udts).unwrap_err()
    }

    #[test]
    fn every_native_name_parses_case_insensitively() {
        use NativeType::*;
        let all = [
            Ascii, BigInt, Blob, Boolean, Counter, Date, Decimal, Double, Duration, Float, Inet,
            Int, SmallInt, Text, Time, Timestamp, TimeUuid, TinyInt, Uuid, Varint,
        ];
        for n in all {
            assert_eq!(parse(n.cql_name()), native(n));
            assert_eq!(
                parse(&format!("  {}\t", n.cql_name().to_uppercase())),
                native(n)
            );
        }
        assert_eq!(parse("varchar"), native(Text));
        assert_eq!(parse("VarChar"), native(Text));
    }

    #[test]
    fn composites_parse_with_any_spacing() {
        use NativeType::*;
        assert_eq!(parse("list<int>"), list(native(Int)));
        assert_eq!(
            parse(" MAP < text ,frozen< list<int >>> "),
            CqlType::Map(Box::new(native(Text)), Box::new(list(native(Int))))
        );
        assert_eq!(parse("set<uuid>"), CqlType::Set(Box::new(native(Uuid))));
        assert_eq!(
            parse("tuple<int, text,blob>"),
            CqlType::Tuple(vec![native(Int), native(Text), native(Blob)])
        );
        assert_eq!(
            parse("vector<float, 3>"),
            CqlType::Vector(Box::new(native(Float)), 3)
        );
        assert_eq!(
            parse("vector<vector<smallint,2>,1>"),
            CqlType::Vector(Box::new(CqlType::Vector(Box::new(native(SmallInt)), 2)), 1)
        );
        assert_eq!(
            parse("vector<list<text>, 2>"),
            CqlType::Vector(Box::new(list(native(Text))), 2)
        );
        let pair = CqlType::Tuple(vec![native(Int), native(Text)]);
        assert_eq!(parse("frozen<tuple<int, text>>"), pair);
        assert_eq!(parse("list<frozen<tuple<int, text>>>"), list(pair));
    }

    #[test]
    fn java_class_names_parse_with_or_without_package() {
        use NativeType::*;
        let pairs = [
            ("AsciiType", Ascii),
            ("LongType", BigInt),
            ("BytesType", Blob),
            ("BooleanType", Boolean),
            ("CounterColumnType", Counter),
            ("SimpleDateType", Date),
            ("DecimalType", Decimal),
            ("DoubleType", Double),
            ("DurationType", Duration),
            ("FloatType", Float),
            ("InetAddressType", Inet),
            ("Int32Type", Int),
            ("ShortType", SmallInt),
            ("UTF8Type", Text),
            ("TimeType", Time),
            ("TimestampType", Timestamp),
            ("DateType", Timestamp),
            ("TimeUUIDType", TimeUuid),
            ("ByteType", TinyInt),
            ("UUIDType", Uuid),
            ("IntegerType", Varint),
        ];
        for (class, n) in pairs {
            assert_eq!(parse(class), native(n), "{class}");
            assert_eq!(
                parse(&format!("{JAVA_PACKAGE}{class}")),
                native(n),
                "{class}"
            );
        }
        let m = "org.apache.cassandra.db.marshal.";
        assert_eq!(
            parse(&format!("{m}VectorType({m}FloatType,3)")),
            CqlType::Vector(Box::new(native(Float)), 3)
        );
        assert_eq!(
            parse("VectorType(FloatType , 3)"),
            CqlType::Vector(Box::new(native(Float)), 3)
        );
        assert_eq!(
            parse(&format!(
                "{m}MapType({m}UTF8Type,{m}ListType({m}Int32Type))"
            )),
            CqlType::Map(Box::new(native(Text)), Box::new(list(native(Int))))
        );
        assert_eq!(
            parse("FrozenType(SetType(ReversedType(TimeUUIDType)))"),
            CqlType::Set(Box::new(native(TimeUuid)))
        );
        assert_eq!(
            parse("TupleType(Int32Type,UTF8Type)"),
            CqlType::Tuple(vec![native(Int), native(Text)])
        );
    }

    #[test]
    fn java_user_types_decode_their_hex_names() {
        let m = "org.apache.cassandra.db.marshal.";
        // "addr" = 61646472, "street" = 737472656574, "zip" = 7a6970
        let text = format!("{m}UserType(ks,61646472,737472656574:{m}UTF8Type,7a6970:{m}Int32Type)");
        let expected = CqlType::Udt(UdtType {
            keyspace: Some("ks".into()),
            name: "addr".into(),
            fields: vec![
                ("street".into(), native(NativeType::Text)),
                ("zip".into(), native(NativeType::Int)),
            ],
        });
        assert_eq!(parse(&text), expected);
        let error = parse_error("UserType(ks,6g)", &UdtRegistry::new());
        assert_eq!(error.position, 12);
    }

    #[test]
    fn udts_are_declared_and_used_by_name() {
        let mut udts = UdtRegistry::new();
        udts.declare("addr(street text, zip int)").unwrap();
        udts.declare("Person ( name text, homes list<frozen<addr>> )")
            .unwrap();
        let addr = udts.get("addr").unwrap().clone();
        assert_eq!(addr.fields.len(), 2);
        assert_eq!(
            parse_type("list<frozen<addr>>", &udts).unwrap(),
            list(CqlType::Udt(addr.clone()))
        );
        let person = parse_type("PERSON", &udts).unwrap();
        let CqlType::Udt(person) = person else {
            panic!("not a udt")
        };
        assert_eq!(person.fields[1].1, list(CqlType::Udt(addr)));
        assert_eq!(
            parse_type("ks.addr", &udts).unwrap(),
            parse_type("addr", &udts).unwrap()
        );
        assert!(udts
            .declare("addr(x int)")
            .unwrap_err()
            .message
            .contains("already"));
        assert!(udts.declare("int(x int)").is_err());
        assert!(udts
            .declare("dup(x int, X text)")
            .unwrap_err()
            .message
            .contains("duplicate"));
        assert_eq!(udts.declare("bad(x nosuch)").unwrap_err().position, 6);
        udts.declare("\"Mixed\"(\"Zip\" int)").unwrap();
        assert_eq!(udts.get("Mixed").unwrap().fields[0].0, "Zip");
        assert!(parse_type("mixed", &udts).is_err());
        assert!(parse_type("\"Mixed\"", &udts).is_ok());
    }

    #[test]
    fn unknown_names_and_bad_syntax_say_where() {
        let udts = UdtRegistry::new();
        let e = parse_error("map<text, nosuch>", &udts);
        assert_eq!(e.position, 10);
        assert!(e.message.contains("nosuch"));
        assert_eq!(e.to_string(), "unknown type `nosuch` at character 10");
        let e = parse_type("mapp<int, int>", &UdtRegistry::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown type `mapp` (did you mean `map`?) at character 0"
        );
        let e = parse_type("list<intt>", &UdtRegistry::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown type `intt` (did you mean `int`?) at character 5"
        );
        let e = parse_type("int<int>", &UdtRegistry::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`int` does not take `<...>` parameters at character 0"
        );
        for name in CQL_NATIVES {
            assert!(native_from_cql(name).is_some(), "{name}");
        }
        assert_eq!(parse_error("list<int", &udts).position, 8);
        assert_eq!(parse_error("list<int>>", &udts).position, 9);
        assert_eq!(parse_error("", &udts).position, 0);
        assert!(parse_error("list", &udts).message.contains("parameters"));
        assert!(parse_error("int<text>", &udts)
            .message
            .contains("parameters"));
        assert!(parse_error("ListType", &udts)
            .message
            .contains("parameters"));
        assert!(parse_error("vector<float, 0>", &udts)
            .message
            .contains("dimension"));
        assert!(parse_error("vector<float, x>", &udts)
            .message
            .contains("dimension"));
        assert!(parse_error("vector<float, 99999999999999999999>", &udts)
            .message
            .contains("dimension"));
        assert!(parse_error("tuple<>", &udts)
            .message
            .contains("expected a type"));
        assert!(parse_error("com.example.Foo", &udts)
            .message
            .contains("unknown"));
    }

    #[test]
    fn nesting_is_limited_without_overflowing_the_stack() {
        let udts = UdtRegistry::new();
        let nest = |n: usize| format!("{}int{}", "list<".repeat(n), ">".repeat(n));
        assert_eq!(parse(&nest(MAX_TYPE_DEPTH - 1)).depth(), MAX_TYPE_DEPTH);
        let e = parse_error(&nest(MAX_TYPE_DEPTH), &udts);
        assert!(e.message.contains("nesting"), "{e}");
        let e = parse_error(&nest(10_000), &udts);
        assert!(e.message.contains("nesting"), "{e}");
        assert_eq!(e.to_string().lines().count(), 1);
        let java = format!(
            "{}Int32Type{}",
            "ListType(".repeat(10_000),
            ")".repeat(10_000)
        );
        assert!(parse_error(&java, &udts).message.contains("nesting"));
        // frozen does not change the type but still counts as a level of syntax.
        let frozen = format!("{}int{}", "frozen<".repeat(10_000), ">".repeat(10_000));
        assert!(parse_error(&frozen, &udts).message.contains("nesting"));
        let reversed = format!(
            "{}Int32Type{}",
            "ReversedType(".repeat(10_000),
            ")".repeat(10_000)
        );
        assert!(parse_error(&reversed, &udts).message.contains("nesting"));
    }

    #[test]
    fn udt_references_count_towards_depth_and_size() {
        let mut udts = UdtRegistry::new();
        let inner = format!("{}int{}", "list<".repeat(40), ">".repeat(40));
        udts.declare(&format!("deep(x {inner})")).unwrap();
        let e = udts
            .declare(&format!("deeper(x {})", inner.replace("int", "deep")))
            .unwrap_err();
        assert!(e.message.contains("nesting"), "{e}");
        // Each level doubles the size: the node limit stops the blow-up.
        udts.declare("t0(a int, b int)").unwrap();
        let mut failed = false;
        for level in 1..40 {
            let previous = level - 1;
            if udts
                .declare(&format!("t{level}(a t{previous}, b t{previous})"))
                .is_err()
            {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }

    #[test]
    fn display_is_cql_and_parses_back() {
        let mut udts = UdtRegistry::new();
        udts.declare("addr(street text, zip int)").unwrap();
        udts.declare("\"Odd \"\"Name\"\"\"(x int)").unwrap();
        for text in [
            "int",
            "list<int>",
            "set<timeuuid>",
            "map<text, int>",
            "tuple<int, text, blob>",
            "vector<float, 3>",
            "vector<vector<smallint, 2>, 4>",
            "list<addr>",
            "map<addr, tuple<varint, decimal>>",
            "\"Odd \"\"Name\"\"\"",
        ] {
            let t = parse_type(text, &udts).unwrap();
            assert_eq!(t.to_string(), text);
            assert_eq!(parse_type(&t.to_string(), &udts).unwrap(), t);
        }
        assert_eq!(parse("varchar").to_string(), "text");
        assert_eq!(
            parse("VectorType(FloatType , 3)").to_string(),
            "vector<float, 3>"
        );
        assert_eq!(
            udts.get("addr").unwrap().declaration(),
            "addr(street text, zip int)"
        );
    }

    #[test]
    fn only_the_listed_natives_are_fixed_size_in_vectors() {
        assert_eq!(
            CqlType::Native(NativeType::Float).vector_element_size(),
            Some(4)
        );
        assert_eq!(
            CqlType::Native(NativeType::Uuid).vector_element_size(),
            Some(16)
        );
        for n in [
            NativeType::SmallInt,
            NativeType::TinyInt,
            NativeType::Date,
            NativeType::Time,
            NativeType::Text,
        ] {
            assert_eq!(n.vector_element_size(), None, "{n:?}");
        }
        let nested = CqlType::Vector(Box::new(CqlType::Native(NativeType::Double)), 3);
        assert_eq!(nested.vector_element_size(), Some(24));
        let list = CqlType::List(Box::new(CqlType::Native(NativeType::Int)));
        assert_eq!(
            CqlType::Vector(Box::new(list), 2).vector_element_size(),
            None
        );
    }
}
