//! Why a type string or a UDT declaration could not be parsed.

use super::{MAX_TYPE_DEPTH, MAX_TYPE_NODES, MAX_VECTOR_DIMENSION};
use std::fmt;

/// Why a type string or a UDT declaration could not be parsed: `<kind> at character <position>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at character {position}")]
#[non_exhaustive]
pub struct TypeError {
    /// What is wrong.
    pub kind: TypeErrorKind,
    /// Index (in characters, from 0) in the parsed text where the problem was found.
    pub position: usize,
}

/// What is wrong with a type string or a UDT declaration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TypeErrorKind {
    /// Something else than what the grammar needs here (`expected `>`, found the end`).
    #[error("expected {expected}, found {}", Found(*found))]
    Expected {
        /// What the grammar needs, e.g. `` `>` ``, `` `,` or `)` ``, `a type`.
        expected: String,
        /// The character found instead; `None` at the end of the text.
        found: Option<char>,
    },
    /// Text after a complete type.
    #[error("unexpected `{found}` after the type")]
    TrailingText {
        /// The first character after the type.
        found: char,
    },
    /// A `"quoted"` name without its closing quote.
    #[error("unterminated quoted name")]
    UnterminatedQuotedName,
    /// A name that is no native type, type constructor or declared UDT.
    #[error(
        "unknown type `{name}`{}",
        suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
    )]
    UnknownType {
        /// The name as written (lowercase unless quoted).
        name: String,
        /// A known name close enough to be what was meant.
        suggestion: Option<String>,
    },
    /// A type constructor without its parameters (`list`, `ListType`).
    #[error("`{name}` needs `{parameters}` parameters")]
    MissingParameters {
        /// The constructor's name (lowercase).
        name: String,
        /// The parameter syntax it needs: `<...>` or `(...)`.
        parameters: &'static str,
    },
    /// Parameters after a name that takes none (`int<text>`).
    #[error("`{name}` does not take `{parameters}` parameters")]
    UnexpectedParameters {
        /// The name (lowercase).
        name: String,
        /// The parameter syntax found: `<...>` or `(...)`.
        parameters: &'static str,
    },
    /// A vector dimension that is not an integer from 1 to [`MAX_VECTOR_DIMENSION`].
    #[error(
        "vector dimension must be an integer from 1 to {MAX_VECTOR_DIMENSION}, found `{found}`"
    )]
    InvalidVectorDimension {
        /// The text found as the dimension.
        found: String,
    },
    /// Type constructors nested deeper than [`MAX_TYPE_DEPTH`] levels.
    #[error("type nesting deeper than {MAX_TYPE_DEPTH} levels")]
    TooDeep,
    /// A type expanding to more than [`MAX_TYPE_NODES`] nodes.
    #[error("type has more than {MAX_TYPE_NODES} components")]
    TooManyNodes,
    /// A UDT declaration named like a native type or a type constructor.
    #[error("`{name}` is a built-in type name")]
    BuiltInName {
        /// The name declared.
        name: String,
    },
    /// A UDT declared twice.
    #[error("type `{name}` is already declared")]
    AlreadyDeclared {
        /// The name declared.
        name: String,
    },
    /// A UDT with two fields of the same name.
    #[error("duplicate field `{name}`")]
    DuplicateField {
        /// The field's name.
        name: String,
    },
    /// A Java `UserType(...)` without its keyspace.
    #[error("expected a keyspace name")]
    MissingKeyspace,
    /// A Java `UserType(...)` without fields.
    #[error("type `{name}` has no fields")]
    NoFields {
        /// The type's name.
        name: String,
    },
    /// A name in a Java `UserType(...)` that is not hex-encoded UTF-8.
    #[error("expected a hex-encoded UTF-8 name, found `{found}`")]
    InvalidHexName {
        /// The text found.
        found: String,
    },
}

/// A character found where another was expected, or the end of the text, for messages.
struct Found(Option<char>);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(c) => write!(f, "`{c}`"),
            None => f.write_str("the end"),
        }
    }
}
