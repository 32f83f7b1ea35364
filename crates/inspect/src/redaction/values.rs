//! `--redact` for row and bound values: each replaced by the keyed hash of its bytes and their
//! length ([`super::secrets`] does the rest of a message), so a decode can be shared without its
//! data. Names, types, nulls and unsets stay.

use super::keyed_hash::KeyedHash;
use super::secrets::write_redacted_bytes;
use cqlwire_codec::value::json::JsonWriter;
use cqlwire_protocol::message::{Cell, ColumnType};
use std::borrow::Cow;

/// The longest value hashed as its canonical bytes; a longer one is hashed as its bytes are, as
/// decoding it whole would take several times its size.
const CANONICAL_MAX: usize = 64 << 10;

/// The bytes a value is hashed as: for a known type, as it encodes again after decoding (its
/// canonical bytes, so `varint` 1 as `01` and as `0001` are one value); else, and for a value over
/// [`CANONICAL_MAX`] bytes, as they are.
pub(crate) fn canonical_bytes<'b>(ty: Option<&ColumnType>, bytes: &'b [u8]) -> Cow<'b, [u8]> {
    match ty.and_then(ColumnType::cql) {
        Some(ty) if bytes.len() <= CANONICAL_MAX => cqlwire_codec::value::decode(ty, bytes)
            .ok()
            .and_then(|value| cqlwire_codec::value::encode(ty, &value).ok())
            .map_or(Cow::Borrowed(bytes), Cow::Owned),
        _ => Cow::Borrowed(bytes),
    }
}

/// Writes the redacted form of a cell of a message whose body is `body`, `{"$redacted": "<8 hex
/// digits>", "len": <bytes>}`, and returns true; false (nothing written) for null and unset, which
/// stay as they are. Messages are written redacted with
/// [`ValueForm::Redacted`](crate::ValueForm).
pub fn write_redacted(
    w: &mut JsonWriter,
    ty: Option<&ColumnType>,
    cell: &Cell,
    body: &[u8],
    hash: &KeyedHash,
) -> bool {
    let (Cell::Value(range) | Cell::Bytes(range)) = cell else {
        return false;
    };
    let bytes = body.get(range.clone()).unwrap_or_default();
    let bytes = canonical_bytes(ty, bytes);
    write_redacted_bytes(w, &hash.tag(&bytes), bytes.len());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use cqlwire_codec::types::{CqlType, NativeType};

    #[test]
    fn a_value_is_hashed_as_its_canonical_bytes() {
        let varint = ColumnType::Cql(CqlType::Native(NativeType::Varint));
        assert_eq!(canonical_bytes(Some(&varint), &[0, 0, 1]).as_ref(), [1]);
        assert_eq!(canonical_bytes(None, &[0, 0, 1]).as_ref(), [0, 0, 1]);
        let long = [&[0; CANONICAL_MAX][..], &[1]].concat();
        assert_eq!(canonical_bytes(Some(&varint), &long).as_ref(), long);
        let hash = KeyedHash::from_key(&[1; 32]).unwrap();
        let written = |bytes: &[u8]| {
            let mut w = JsonWriter::new();
            let cell = Cell::Value(0..bytes.len());
            assert!(write_redacted(&mut w, Some(&varint), &cell, bytes, &hash));
            String::from_utf8(w.buf).unwrap()
        };
        assert_eq!(written(&[0, 0, 1]), written(&[1]));
        assert_eq!(
            written(&[1]),
            format!("{{\"$redacted\":\"{}\",\"len\":1}}", hash.tag(&[1]))
        );
        let mut w = JsonWriter::new();
        assert!(!write_redacted(&mut w, None, &Cell::Null, &[], &hash));
        assert!(w.buf.is_empty());
    }
}
