//! One input element widened without loss, as errors quote it and variable-size elements write it.

/// 2^63: one past `i64::MAX`, exactly representable as a float (so `-2^63..2^63` is i64's range).
pub(super) const TWO_POW_63: f64 = 9_223_372_036_854_775_808u64 as f64;

/// One input element, widened without loss.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Number {
    /// An integer input element.
    Int(i64),
    /// A half- or single-precision input element (displayed with the digits of an f32).
    Single(f32),
    /// A double-precision input element.
    Float(f64),
}

impl Number {
    /// The floating-point value, or None for an integer.
    pub(super) fn float(self) -> Option<f64> {
        match self {
            Number::Int(_) => None,
            Number::Single(x) => Some(f64::from(x)),
            Number::Float(x) => Some(x),
        }
    }
}
