//! The parser of type strings and UDT declarations, and the registry of declared UDTs.

use super::names::{
    closest_name, is_cql_composite, is_java_composite, java_class, native_from_cql,
    native_from_java, CQL_COMPOSITES, CQL_NATIVES,
};
use super::{
    CqlType, TypeError, TypeErrorKind, UdtType, MAX_TYPE_DEPTH, MAX_TYPE_NODES,
    MAX_VECTOR_DIMENSION,
};
use crate::lexer::Lexer;

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

/// User-defined types declared by name, for type strings to refer to.
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
            return Err(parser.error_at(0, TypeErrorKind::BuiltInName { name }));
        }
        if self.get(&name).is_some() {
            return Err(parser.error_at(0, TypeErrorKind::AlreadyDeclared { name }));
        }
        parser.expect('(')?;
        let mut fields: Vec<(String, CqlType)> = Vec::new();
        loop {
            let field_start = parser.lexer.skip_whitespace();
            let field = parser.name("a field name")?;
            if fields.iter().any(|(existing, _)| *existing == field) {
                return Err(
                    parser.error_at(field_start, TypeErrorKind::DuplicateField { name: field })
                );
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

/// A recursive-descent parser of a type string.
struct Parser<'a> {
    /// The text and the position in it.
    lexer: Lexer<'a>,
    /// Declared UDTs that names may refer to.
    udts: &'a UdtRegistry,
    /// Type nodes created so far (bounded by [`MAX_TYPE_NODES`]).
    nodes: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    fn new(text: &'a str, udts: &'a UdtRegistry) -> Self {
        Parser {
            lexer: Lexer::new(text),
            udts,
            nodes: 0,
        }
    }

    /// An error at the byte offset `offset`.
    fn error_at(&self, offset: usize, kind: TypeErrorKind) -> TypeError {
        TypeError {
            kind,
            position: self.lexer.char_position(offset),
        }
    }

    /// An error at the current position: `expected` is needed, the next character is found.
    fn expected(&self, expected: impl Into<String>) -> TypeError {
        self.error_at(
            self.lexer.offset(),
            TypeErrorKind::Expected {
                expected: expected.into(),
                found: self.lexer.peek(),
            },
        )
    }

    /// The next non-whitespace character, not consumed.
    fn peek(&mut self) -> Option<char> {
        self.lexer.skip_whitespace();
        self.lexer.peek()
    }

    /// Consumes `expected` (after whitespace) or fails.
    fn expect(&mut self, expected: char) -> Result<(), TypeError> {
        self.lexer.skip_whitespace();
        if self.lexer.eat(expected) {
            Ok(())
        } else {
            Err(self.expected(format!("`{expected}`")))
        }
    }

    /// Consumes a `,` (returns true) or the closing `close` (returns false).
    fn comma_or_close(&mut self, close: char) -> Result<bool, TypeError> {
        self.lexer.skip_whitespace();
        if self.lexer.eat(',') {
            Ok(true)
        } else if self.lexer.eat(close) {
            Ok(false)
        } else {
            Err(self.expected(format!("`,` or `{close}`")))
        }
    }

    /// Fails unless only whitespace is left.
    fn expect_end(&mut self) -> Result<(), TypeError> {
        match self.peek() {
            None => Ok(()),
            Some(found) => {
                Err(self.error_at(self.lexer.offset(), TypeErrorKind::TrailingText { found }))
            }
        }
    }

    /// Reads a run of identifier characters (letters, digits, `_`, and `.` when `dots`).
    fn word(&mut self, dots: bool) -> &'a str {
        self.lexer.skip_whitespace();
        self.lexer
            .take_while(|c| c.is_alphanumeric() || c == '_' || (dots && c == '.'))
    }

    /// Reads a name: an unquoted identifier (lowercased) or a `"quoted"` one (`""` escapes a quote).
    fn name(&mut self, what: &str) -> Result<String, TypeError> {
        if self.peek() == Some('"') {
            return self.quoted_name();
        }
        let word = self.word(false);
        if word.is_empty() {
            return Err(self.expected(what));
        }
        Ok(word.to_lowercase())
    }

    /// Reads a `"quoted"` identifier; the current character is the opening quote.
    fn quoted_name(&mut self) -> Result<String, TypeError> {
        let start = self.lexer.offset();
        self.lexer
            .quoted('"')
            .ok_or_else(|| self.error_at(start, TypeErrorKind::UnterminatedQuotedName))
    }

    /// Counts more type nodes, failing past [`MAX_TYPE_NODES`].
    fn add_nodes(&mut self, count: usize, at: usize) -> Result<(), TypeError> {
        self.nodes = self.nodes.saturating_add(count);
        if self.nodes > MAX_TYPE_NODES {
            return Err(self.error_at(at, TypeErrorKind::TooManyNodes));
        }
        Ok(())
    }

    /// Parses one type at nesting `depth` (1 for the top level).
    fn parse_type(&mut self, depth: usize) -> Result<CqlType, TypeError> {
        let start = self.lexer.skip_whitespace();
        if depth > MAX_TYPE_DEPTH {
            return Err(self.error_at(start, TypeErrorKind::TooDeep));
        }
        self.add_nodes(1, start)?;
        if self.lexer.peek() == Some('"') {
            let name = self.quoted_name()?;
            return self.udt_reference(&name, start, depth);
        }
        let word = self.word(true);
        if word.is_empty() {
            return Err(self.expected("a type"));
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
                return Err(self.error_at(start, missing_parameters(class, "(...)")));
            }
        }
        if is_cql_composite(lower) {
            return Err(self.error_at(start, missing_parameters(lower, "<...>")));
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
            return Err(self.error_at(start, TypeErrorKind::TooDeep));
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
                return Err(self.error_at(start, unexpected_parameters(lower, "<...>")))
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
            .ok_or_else(|| self.error_at(start, unexpected_parameters(lower, "(...)")))?;
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
        let at = self.lexer.skip_whitespace();
        let digits = self.word(false);
        let dimension = digits
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_VECTOR_DIMENSION).contains(n))
            .ok_or_else(|| {
                self.error_at(
                    at,
                    TypeErrorKind::InvalidVectorDimension {
                        found: digits.to_string(),
                    },
                )
            })?;
        Ok(CqlType::Vector(Box::new(element), dimension))
    }

    /// `UserType(ks,hexname,hexfield:Type,...)` after the opening parenthesis.
    fn java_user_type(&mut self, inner: usize) -> Result<CqlType, TypeError> {
        let keyspace_start = self.lexer.skip_whitespace();
        let keyspace = self.word(false).to_string();
        if keyspace.is_empty() {
            return Err(self.error_at(keyspace_start, TypeErrorKind::MissingKeyspace));
        }
        self.expect(',')?;
        let name_start = self.lexer.skip_whitespace();
        let name = self.hex_name()?;
        let mut fields: Vec<(String, CqlType)> = Vec::new();
        while self.comma_or_close(')')? {
            let field_start = self.lexer.skip_whitespace();
            let field = self.hex_name()?;
            if fields.iter().any(|(existing, _)| *existing == field) {
                return Err(
                    self.error_at(field_start, TypeErrorKind::DuplicateField { name: field })
                );
            }
            self.expect(':')?;
            let field_type = self.parse_type(inner)?;
            fields.push((field, field_type));
        }
        if fields.is_empty() {
            return Err(self.error_at(name_start, TypeErrorKind::NoFields { name }));
        }
        Ok(CqlType::Udt(UdtType {
            keyspace: Some(keyspace),
            name,
            fields,
        }))
    }

    /// A hex-encoded UTF-8 name, as in Java `UserType` parameters.
    fn hex_name(&mut self) -> Result<String, TypeError> {
        let start = self.lexer.skip_whitespace();
        let digits = self.word(false);
        crate::hex::parse(digits)
            .ok()
            .filter(|bytes| !bytes.is_empty())
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| {
                self.error_at(
                    start,
                    TypeErrorKind::InvalidHexName {
                        found: digits.to_string(),
                    },
                )
            })
    }
}

/// An unknown type name, with the closest of `candidates` suggested when one is close enough to
/// be a typo.
fn unknown_type<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> TypeErrorKind {
    TypeErrorKind::UnknownType {
        name: name.to_string(),
        suggestion: closest_name(name, candidates).map(str::to_string),
    }
}

/// A type constructor `name` written without its `parameters` (`<...>` or `(...)`).
fn missing_parameters(name: &str, parameters: &'static str) -> TypeErrorKind {
    TypeErrorKind::MissingParameters {
        name: name.to_string(),
        parameters,
    }
}

/// `parameters` (`<...>` or `(...)`) after `name`, which takes none.
fn unexpected_parameters(name: &str, parameters: &'static str) -> TypeErrorKind {
    TypeErrorKind::UnexpectedParameters {
        name: name.to_string(),
        parameters,
    }
}
