//! Why a batch could not be converted, and the wording of the problems.

use super::number::Number;
use super::target::{FixedTarget, NUMBER_ELEMENTS};
use crate::types::CqlType;

/// Why a batch could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VectorError {
    /// The target type cannot be produced from numeric embeddings (a usage error).
    #[error("{0}")]
    Unsupported(String),
    /// An element does not convert exactly to the target element type.
    #[error("value {value} {problem} at row {row} (element {element})")]
    Cast {
        /// The element as read from the input.
        value: String,
        /// What is wrong with it, e.g. `is out of range for float`.
        problem: String,
        /// Absolute (0-based) row index in the input.
        row: u64,
        /// 0-based element index in the row.
        element: usize,
    },
    /// The batch does not hold `rows × dimension` elements (a reader bug or a ragged input).
    #[error("batch at row {first_row} holds {elements} elements, not {rows} rows × {dimension}")]
    Shape {
        /// First row of the batch.
        first_row: u64,
        /// Elements in the batch.
        elements: usize,
        /// Rows in the batch.
        rows: usize,
        /// The target dimension.
        dimension: usize,
    },
}

impl VectorError {
    /// The absolute row the error is about, if it is about one.
    pub fn row(&self) -> Option<u64> {
        match self {
            VectorError::Cast { row, .. } => Some(*row),
            VectorError::Shape { first_row, .. } => Some(*first_row),
            VectorError::Unsupported(_) => None,
        }
    }
}

/// The error for an element type that cannot be made from numbers.
pub(super) fn unsupported_element(ty: &CqlType) -> VectorError {
    let names: Vec<&str> = NUMBER_ELEMENTS.iter().map(|t| t.cql_name()).collect();
    VectorError::Unsupported(format!(
        "cannot convert numeric embeddings to {ty}: the element type must be one of {}",
        names.join(", ")
    ))
}

/// Why `number` does not convert exactly to the fixed-size `target`.
pub(super) fn fixed_problem(number: Number, target: FixedTarget) -> String {
    let name = match target {
        FixedTarget::Boolean => return "is not 0 or 1, so not a boolean".into(),
        FixedTarget::Float => "float",
        FixedTarget::Double => "double",
        FixedTarget::Int => "int",
        FixedTarget::BigInt => "bigint",
        FixedTarget::TinyInt => "tinyint",
        FixedTarget::SmallInt => "smallint",
        FixedTarget::Date => "date",
        FixedTarget::Time => "time",
    };
    match (number.float(), target) {
        (None, FixedTarget::Float | FixedTarget::Double) => {
            format!("cannot be represented exactly as a {name}")
        }
        (Some(_), FixedTarget::Float | FixedTarget::Double) => {
            format!("is out of range for {name}")
        }
        (Some(x), _) => float_integer_problem(x, name),
        (None, _) => format!("is out of range for {name}"),
    }
}

/// Why the float `x` is not a valid value of the integer type `name` (given that it is not).
pub(super) fn float_integer_problem(x: f64, name: &str) -> String {
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    if x.is_nan() {
        format!("is not a number, so not {article} {name}")
    } else if x.is_finite() && x.fract() != 0.0 {
        format!("has a fraction, so is not {article} {name}")
    } else {
        format!("is out of range for {name}")
    }
}
