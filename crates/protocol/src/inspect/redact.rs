//! `--redact`: row and bound values replaced by a short stable hash of their bytes, with their
//! length, so a decode can be shared without its data. Names, types, nulls and unsets stay.

use crate::message::{Cell, ColumnType};
use crate::value::json::JsonWriter;

/// FNV-1a (64 bits) of `bytes`: stable across runs, machines and versions.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Writes the redacted form of a cell of a message whose body is `body`, `{"$redacted": "<8 hex
/// digits>", "len": <bytes>}`, and returns true; false (nothing written) for null and unset, which
/// stay as they are. A value of a known type is hashed as it encodes again after decoding (its
/// canonical bytes). Messages are written redacted with
/// [`ValueForm::Redacted`](crate::message::ValueForm).
pub fn write_redacted(
    w: &mut JsonWriter,
    ty: Option<&ColumnType>,
    cell: &Cell,
    body: &[u8],
) -> bool {
    let encoded;
    let bytes: &[u8] = match (cell, ty.and_then(ColumnType::cql)) {
        (Cell::Null | Cell::Unset, _) => return false,
        (Cell::Bytes(range), _) => body.get(range.clone()).unwrap_or_default(),
        (Cell::Value(range), Some(ty)) => {
            encoded = body
                .get(range.clone())
                .and_then(|bytes| crate::value::decode(ty, bytes).ok())
                .and_then(|value| crate::value::encode(ty, &value).ok())
                .unwrap_or_default();
            &encoded
        }
        (Cell::Value(_), None) => &[],
    };
    w.begin_object();
    w.key("$redacted");
    w.str(&format!("{:08x}", fnv1a(bytes) >> 32));
    w.key("len");
    w.u64(bytes.len() as u64);
    w.end_object();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_reference_vectors() {
        // The published FNV-1a 64-bit test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
