//! A payload decoded straight to text, holding one element of a top-level list, set or vector at a
//! time: the memory a decode needs stays a small multiple of the payload whatever its element count.

use super::{cql, decode_elements, json, DecodeError, Value};
use crate::types::CqlType;
use std::borrow::Cow;
use std::io::{self, Write};

/// The text form [`write_text`] prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextForm {
    /// A CQL literal ([`cql::format_cql`]).
    Cql,
    /// Lossless JSON ([`json::to_json`]), compact.
    Json,
}

/// Why [`write_text`] failed.
#[derive(Debug, thiserror::Error)]
pub enum PrintError {
    /// The payload is not a value of the type (nothing was written).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Decodes `bytes` as one value of `ty` (ignoring bytes after it when `allow_trailing`) and writes
/// it to `out` in `form`, then a newline; every piece of text goes through `show` first (e.g.
/// [`crate::display::visible`] for a terminal). The whole payload is checked before anything is
/// written, so a malformed payload writes nothing. The elements of a top-level list, set or vector
/// are decoded, printed and dropped one at a time (the payload is decoded twice: to check, then to
/// print); other values are decoded whole.
pub fn write_text(
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    form: TextForm,
    show: &dyn Fn(&str) -> Cow<'_, str>,
    out: &mut dyn Write,
) -> Result<(), PrintError> {
    let text_of = |ty: &CqlType, value: &Value| match form {
        TextForm::Cql => cql::format_cql(ty, value),
        TextForm::Json => json::to_json(ty, value).to_string(),
    };
    let (CqlType::List(element) | CqlType::Set(element) | CqlType::Vector(element, _)) = ty else {
        let (value, _) = decode_elements(ty, bytes, allow_trailing, &mut drop)?;
        writeln!(out, "{}", show(&text_of(ty, &value)))?;
        return Ok(());
    };
    decode_elements(ty, bytes, allow_trailing, &mut drop)?;
    let (open, close, separator) = match (form, ty) {
        (TextForm::Cql, CqlType::Set(_)) => ("{", "}", ", "),
        (TextForm::Cql, _) => ("[", "]", ", "),
        (TextForm::Json, _) => ("[", "]", ","),
    };
    let mut written = out.write_all(open.as_bytes());
    let mut first = true;
    decode_elements(ty, bytes, allow_trailing, &mut |value| {
        if written.is_ok() {
            let before = if std::mem::take(&mut first) {
                ""
            } else {
                separator
            };
            written = write!(out, "{before}{}", show(&text_of(element, &value)));
        }
    })?;
    written?;
    writeln!(out, "{close}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{parse_type, UdtRegistry};

    /// What `write_text` prints, and what formatting the whole decoded value gives.
    fn both(type_text: &str, hex: &str, form: TextForm) -> (String, String) {
        let ty = parse_type(type_text, &UdtRegistry::new()).unwrap();
        let bytes = crate::hex::parse(hex).unwrap();
        let mut out = Vec::new();
        write_text(&ty, &bytes, false, form, &|s| s.into(), &mut out).unwrap();
        let value = crate::value::decode(&ty, &bytes).unwrap();
        let whole = match form {
            TextForm::Cql => cql::format_cql(&ty, &value),
            TextForm::Json => json::to_json(&ty, &value).to_string(),
        };
        (String::from_utf8(out).unwrap(), whole + "\n")
    }

    #[test]
    fn streamed_collections_print_as_the_whole_value_does() {
        for form in [TextForm::Cql, TextForm::Json] {
            for (ty, hex) in [
                ("list<int>", "00000002 00000004 00000001 ffffffff"),
                ("set<text>", "00000002 00000001 61 00000001 62"),
                ("list<int>", "00000000"),
                ("vector<float, 2>", "3f800000 7fc00000"),
                ("vector<text, 2>", "01 61 00"),
                (
                    "list<frozen<list<int>>>",
                    "00000001 0000000c 00000001 00000004 0000002a",
                ),
            ] {
                let (streamed, whole) = both(ty, hex, form);
                assert_eq!(streamed, whole, "{ty} {form:?}");
            }
        }
    }

    #[test]
    fn a_malformed_payload_writes_nothing() {
        let ty = parse_type("list<int>", &UdtRegistry::new()).unwrap();
        let bytes = crate::hex::parse("00000002 00000004 00000001 00000004").unwrap();
        let mut out = Vec::new();
        let error = write_text(&ty, &bytes, false, TextForm::Cql, &|s| s.into(), &mut out);
        assert!(matches!(error, Err(PrintError::Decode(_))));
        assert!(out.is_empty());
    }
}
