//! Column types and values as a message carries them: a type the grammar knows or a custom class it
//! does not, and a value that is null, unset, decoded, or raw bytes when its type is unknown.

use crate::types::CqlType;
use std::fmt;
use std::ops::Range;

/// The type of a column or bound variable, from a type `[option]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnType {
    /// A type of the grammar (custom Java class names included when it knows them).
    Cql(CqlType),
    /// A custom type the grammar does not know: its Java class name (or a type built from one).
    Unknown(String),
}

impl ColumnType {
    /// Applies `f` to a known type; an unknown one stays unknown.
    pub(crate) fn map(self, f: impl FnOnce(CqlType) -> CqlType) -> ColumnType {
        match self {
            ColumnType::Cql(ty) => ColumnType::Cql(f(ty)),
            unknown => unknown,
        }
    }

    /// The type when the grammar knows it.
    pub fn cql(&self) -> Option<&CqlType> {
        match self {
            ColumnType::Cql(ty) => Some(ty),
            ColumnType::Unknown(_) => None,
        }
    }
}

impl fmt::Display for ColumnType {
    /// CQL syntax for a known type (`vector<float, 3>`), the class name for an unknown one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnType::Cql(ty) => write!(f, "{ty}"),
            ColumnType::Unknown(class) => f.write_str(class),
        }
    }
}

/// A column (of a Rows result) or a bound variable (of a Prepared result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Its keyspace.
    pub keyspace: String,
    /// Its table.
    pub table: String,
    /// Its name (a bind marker's name, a column name, or a selector).
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
}

/// One `[value]` of a row or of bound values. A value is kept as where its bytes are in the
/// message's body ([`super::Message::bytes`]), not decoded: a message holds about what it took on
/// the wire whatever its values, and each value is decoded again when it is written
/// ([`super::Message::cell_value`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// A length of -1.
    Null,
    /// A length of -2: the column is left unchanged.
    Unset,
    /// A value of its known type, checked to decode when the message was decoded: its bytes.
    Value(Range<usize>),
    /// The bytes of a value whose type is unknown.
    Bytes(Range<usize>),
}

/// A bound value of a QUERY, EXECUTE or BATCH statement, with its name and type when known (given
/// in the message, or from the PREPARED result of its statement).
#[derive(Debug, Clone, PartialEq)]
pub struct BoundValue {
    /// The bind marker's name.
    pub name: Option<String>,
    /// The variable's type.
    pub ty: Option<ColumnType>,
    /// The value.
    pub value: Cell,
}
