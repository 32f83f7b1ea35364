//! The vector conversion's targets: `vector_kernel` and `arrow_values`.

use super::values::{parsed_types, pick, DECODER_TYPES};
use cqlwire_codec::types::CqlType;
use cqlwire_codec::value::{self, Value};
use std::sync::OnceLock;

/// One input element as the kernels read it, widened without loss (a half float widens exactly).
#[derive(Debug, Clone, Copy)]
enum KernelInput {
    Int(i64),
    Single(f32),
    Double(f64),
}

/// Whether `x` and `y` are the same float (NaN equals NaN; -0 equals 0).
fn same_float(x: f64, y: f64) -> bool {
    x == y || (x.is_nan() && y.is_nan())
}

/// Whether `text`, which reads back as the float that Rust's `{}` prints as `display` (shortest
/// positional digits, a tie between two shortest going up), is also shortest and positional: the
/// same text, or as long and ending in the even digit of a tie.
fn shortest_positional(text: &str, display: &str) -> bool {
    text == display
        || (text.len() == display.len()
            && text
                .bytes()
                .all(|c| c.is_ascii_digit() || c == b'.' || c == b'-')
            && text.ends_with(['0', '2', '4', '6', '8']))
}

/// Whether a decoded vector element holds the number that was converted: integers exactly, a float
/// as the cast rounds it, text and decimal parsing back to the same number, varint the same digits.
fn kernel_element_matches(input: KernelInput, decoded: &Value) -> bool {
    use KernelInput::{Double, Int, Single};
    let wide = match input {
        Int(i) => i as f64,
        Single(x) => f64::from(x),
        Double(x) => x,
    };
    let integer = |j: i64| match input {
        Int(i) => i == j,
        _ => wide == j as f64 && wide.fract() == 0.0,
    };
    match decoded {
        Value::Boolean(b) => integer(i64::from(*b)),
        Value::TinyInt(j) => integer(i64::from(*j)),
        Value::SmallInt(j) => integer(i64::from(*j)),
        Value::Int(j) => integer(i64::from(*j)),
        Value::BigInt(j) | Value::Timestamp(j) | Value::Time(j) => integer(*j),
        Value::Date(j) => integer(i64::from(*j)),
        Value::Float(v) => match input {
            Double(x) => same_float(f64::from(*v), f64::from(x as f32)),
            _ => same_float(f64::from(*v), wide),
        },
        Value::Double(v) => same_float(*v, wide),
        Value::Varint(big) => match input {
            Int(i) => big.to_string() == i.to_string(),
            // `+ 0.0` turns -0 into 0, which a varint cannot hold.
            _ => wide.fract() == 0.0 && big.to_string() == format!("{:.0}", wide + 0.0),
        },
        Value::Decimal { unscaled, scale } => {
            let text = format!("{unscaled}e{}", -i64::from(*scale));
            match input {
                Int(i) => *scale == 0 && unscaled.to_string() == i.to_string(),
                Single(x) => text.parse::<f32>().is_ok_and(|y| y == x),
                Double(x) => text.parse::<f64>().is_ok_and(|y| y == x),
            }
        }
        Value::Text(text) => match input {
            Int(i) => text.parse::<i64>() == Ok(i),
            Single(x) => {
                text.parse::<f32>()
                    .is_ok_and(|y| same_float(f64::from(y), f64::from(x)))
                    && shortest_positional(text, &x.to_string())
            }
            Double(x) => {
                text.parse::<f64>().is_ok_and(|y| same_float(y, x))
                    && shortest_positional(text, &x.to_string())
            }
        },
        _ => false,
    }
}

/// The vector kernels of `convert` and `serialize_vectors`. Byte 0: the input element type (low 3
/// bits: f16, f32, f64, i8, u8, i16, i32, i64) and the target element type (the rest, modulo the 14
/// number-like types); byte 1: the dimension (1–40); the rest: elements in native byte order (a
/// partial row is dropped). The rows encoded together equal each element encoded alone, in order;
/// when they fail, the error names the first element that fails alone, with its message; an accepted
/// row decodes as the vector type to elements equal to the input numbers (integers exactly, floats
/// as the cast rounds them, text and decimal parsing back to the same number, text as the shortest
/// positional digits) and re-encodes to the same bytes. Fixed-size rows encoded into one
/// destination each (`encode_fixed_values`, as into Python objects) give the same bytes or error.
pub fn vector_kernel(data: &[u8]) {
    use cqlwire_vector::kernel::{Rows, VectorEncoder, VectorError};
    use half::f16;
    let [control, dimension, rest @ ..] = data else {
        return;
    };
    let targets = cqlwire_vector::kernel::NUMBER_ELEMENTS;
    let native = targets[usize::from(control >> 3) % targets.len()];
    let dimension = 1 + usize::from(*dimension) % 40;
    fn elements<const N: usize, T>(bytes: &[u8], read: fn([u8; N]) -> T) -> Vec<T> {
        bytes
            .chunks_exact(N)
            .map(|c| read(c.try_into().unwrap_or([0; N])))
            .collect()
    }
    let (f16s, f32s, f64s, i8s, u8s, i16s, i32s, i64s);
    let (rows, inputs): (Rows, Vec<KernelInput>) = match control & 7 {
        0 => {
            f16s = elements(rest, f16::from_ne_bytes);
            let inputs = f16s.iter().map(|&x| KernelInput::Single(f32::from(x)));
            (Rows::F16(&f16s), inputs.collect())
        }
        1 => {
            f32s = elements(rest, f32::from_ne_bytes);
            (
                Rows::F32(&f32s),
                f32s.iter().map(|&x| KernelInput::Single(x)).collect(),
            )
        }
        2 => {
            f64s = elements(rest, f64::from_ne_bytes);
            (
                Rows::F64(&f64s),
                f64s.iter().map(|&x| KernelInput::Double(x)).collect(),
            )
        }
        3 => {
            i8s = elements(rest, i8::from_ne_bytes);
            let inputs = i8s.iter().map(|&x| KernelInput::Int(x.into()));
            (Rows::I8(&i8s), inputs.collect())
        }
        4 => {
            u8s = rest.to_vec();
            let inputs = u8s.iter().map(|&x| KernelInput::Int(x.into()));
            (Rows::U8(&u8s), inputs.collect())
        }
        5 => {
            i16s = elements(rest, i16::from_ne_bytes);
            let inputs = i16s.iter().map(|&x| KernelInput::Int(x.into()));
            (Rows::I16(&i16s), inputs.collect())
        }
        6 => {
            i32s = elements(rest, i32::from_ne_bytes);
            let inputs = i32s.iter().map(|&x| KernelInput::Int(x.into()));
            (Rows::I32(&i32s), inputs.collect())
        }
        _ => {
            i64s = elements(rest, i64::from_ne_bytes);
            (
                Rows::I64(&i64s),
                i64s.iter().map(|&x| KernelInput::Int(x)).collect(),
            )
        }
    };
    let whole_len = rows.len() / dimension * dimension;
    let rows = rows.slice(0, whole_len);
    let element = CqlType::Native(native);
    let vector = CqlType::Vector(Box::new(element.clone()), dimension);
    let encoder = VectorEncoder::new(&vector).expect("a number-like vector type");
    let single = VectorEncoder::new(&CqlType::Vector(Box::new(element), 1)).expect("dimension 1");
    let mut together = Vec::new();
    let result = encoder.encode_rows(rows, 7, &mut together);
    // Fixed-size rows into one destination each (as into Python objects): the same bytes, or the
    // same error.
    if let Some(size) = encoder.value_size() {
        let mut separate = vec![0u8; size * (whole_len / dimension)];
        let mut values: Vec<&mut [u8]> = separate.chunks_exact_mut(size).collect();
        match (&result, encoder.encode_fixed_values(rows, 7, &mut values)) {
            (Ok(()), Ok(())) => assert_eq!(separate, together, "rows into separate values differ"),
            (Err(error), Err(per_row)) => {
                assert_eq!(*error, per_row, "separate values fail differently")
            }
            (together, per_row) => panic!("together {together:?}, separate values {per_row:?}"),
        }
    }
    // Each element alone, until the first that fails.
    let mut alone = Vec::new();
    let mut first_failure = None;
    for index in 0..whole_len {
        let mut one = Vec::new();
        match single.encode_rows(rows.slice(index, index + 1), 0, &mut one) {
            Ok(()) => alone.extend_from_slice(&one),
            Err(error) => {
                first_failure = Some((index, error));
                break;
            }
        }
    }
    match (result, first_failure) {
        (Ok(()), None) => assert_eq!(together, alone, "rows encoded together differ from alone"),
        (
            Err(VectorError::Cast {
                value,
                problem,
                row,
                element,
            }),
            Some((index, error)),
        ) => {
            assert_eq!(
                (row - 7) as usize * dimension + element,
                index,
                "error names another element"
            );
            let VectorError::Cast {
                value: v,
                problem: p,
                ..
            } = error
            else {
                panic!("element alone failed differently: {error}");
            };
            assert_eq!((value, problem), (v, p), "error message differs alone");
            return;
        }
        (result, failure) => panic!("together {result:?}, alone {failure:?}"),
    }
    if let Some(size) = encoder.value_size() {
        assert_eq!(
            together.len(),
            size * whole_len / dimension,
            "fixed-size output length"
        );
    }
    let mut offset = 0;
    for row in inputs[..whole_len].chunks(dimension) {
        let bytes = &together[offset..];
        let (value, used) = value::decode_prefix(&vector, bytes).expect("a row decodes");
        let Value::List(decoded) = &value else {
            panic!("a vector decodes to a list, not {value:?}");
        };
        assert_eq!(decoded.len(), dimension);
        for (input, element) in row.iter().zip(decoded) {
            assert!(
                kernel_element_matches(*input, element),
                "{input:?} became {element:?}"
            );
        }
        assert_eq!(
            value::encode(&vector, &value).expect("re-encodes"),
            bytes[..used],
            "re-encoding"
        );
        offset += used;
    }
    assert_eq!(offset, together.len(), "rows cover the output");
}

// ---------------------------------------------------------------------------------------------------
// arrow_values
// ---------------------------------------------------------------------------------------------------

/// Decodes values into the Arrow array `unload` writes: the first byte picks a type of
/// `value_decoder`'s list, the rest is a run of `[bytes]` items (a negative length is null; a
/// length past the end takes the rest). Refusing is fine; an accepted run must give a valid Arrow
/// array with one slot per value, null exactly where the value is.
pub fn arrow_values(data: &[u8]) {
    static TYPES: OnceLock<Vec<CqlType>> = OnceLock::new();
    let Some((&selector, mut rest)) = data.split_first() else {
        return;
    };
    let ty = pick(parsed_types(&TYPES, &DECODER_TYPES), selector);
    let mut values: Vec<Option<&[u8]>> = Vec::new();
    while let Some((head, tail)) = rest.split_first_chunk::<4>() {
        let length = i32::from_be_bytes(*head);
        if length < 0 {
            values.push(None);
            rest = tail;
            continue;
        }
        let length = (length as usize).min(tail.len());
        values.push(Some(&tail[..length]));
        rest = &tail[length..];
    }
    let Ok(array) = cqlwire_vector::arrays::arrow_array(ty, &values) else {
        return;
    };
    assert_eq!(array.len(), values.len(), "one slot per value ({ty})");
    array
        .to_data()
        .validate_full()
        .unwrap_or_else(|e| panic!("an invalid Arrow array ({ty}): {e}"));
    for (index, value) in values.iter().enumerate() {
        if value.is_none() {
            assert!(
                array.is_null(index),
                "a null value not null in Arrow ({ty})"
            );
        }
    }
}
