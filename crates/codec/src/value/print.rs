//! A payload decoded straight to text, each native value written as it is decoded: the memory a
//! decode needs stays a small multiple of the payload whatever its element count or nesting.

#[cfg(feature = "json")]
use super::json;
use super::{cql, decode_pieces, DecodeError, Piece, Step};
use crate::types::{CqlType, Identifier};
use std::borrow::Cow;
use std::io::{self, Write};

/// The text form [`write_text`] prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextForm {
    /// A CQL literal ([`cql::format_cql`]).
    Cql,
    /// Lossless JSON (`json::to_json`), compact (with the `json` feature).
    #[cfg(feature = "json")]
    Json,
}

/// Why [`write_text`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrintError {
    /// The payload is not a value of the type (nothing was written).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Decodes `bytes` as one value of `ty` (ignoring bytes after it when `allow_trailing`) and writes
/// it to `out` in `form`, then a newline; every piece of text goes through `show` first (e.g. a
/// function that makes control characters visible on a terminal). The whole payload is checked
/// before anything is written, so a malformed payload writes nothing. Nothing is kept: each native value is decoded,
/// printed (by [`cql::format_cql`] or `json::to_json`) and dropped in turn, at any depth (the
/// payload is decoded twice: to check, then to print).
pub fn write_text(
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    form: TextForm,
    show: &dyn Fn(&str) -> Cow<'_, str>,
    out: &mut dyn Write,
) -> Result<(), PrintError> {
    decode_pieces(ty, bytes, allow_trailing, &mut drop)?;
    write_pieces(ty, bytes, allow_trailing, form, show, out)?;
    writeln!(out)?;
    Ok(())
}

/// Writes like [`write_text`] without checking the payload first and without the newline: on a
/// malformed payload, what was written before the fault stays written (for payloads already
/// checked, such as the values of a decoded message).
pub fn write_pieces(
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    form: TextForm,
    show: &dyn Fn(&str) -> Cow<'_, str>,
    out: &mut dyn Write,
) -> Result<(), PrintError> {
    let mut printer = Printer {
        form,
        show,
        out,
        items: Vec::new(),
        written: Ok(()),
    };
    decode_pieces(ty, bytes, allow_trailing, &mut |piece| {
        if printer.written.is_ok() {
            printer.written = printer.piece(piece);
        }
    })?;
    printer.written?;
    Ok(())
}

/// Writes pieces of a value as text.
struct Printer<'o, 's> {
    form: TextForm,
    show: &'s dyn Fn(&str) -> Cow<'_, str>,
    out: &'o mut dyn Write,
    /// For each open composite: whether it is a map, and how many items (map entries) it has begun.
    items: Vec<(bool, usize)>,
    /// The first write error, after which nothing more is written.
    written: io::Result<()>,
}

impl Printer<'_, '_> {
    /// Whether the form is JSON.
    fn is_json(&self) -> bool {
        match self.form {
            TextForm::Cql => false,
            #[cfg(feature = "json")]
            TextForm::Json => true,
        }
    }

    /// Writes one piece.
    fn piece(&mut self, piece: Piece<'_>) -> io::Result<()> {
        let json = self.is_json();
        match piece {
            Piece::Open(ty) => {
                self.items.push((matches!(ty, CqlType::Map(..)), 0));
                self.out.write_all(bracket(ty, json, true).as_bytes())
            }
            Piece::Close(ty) => {
                let (map, count) = self.items.pop().unwrap_or_default();
                if json && map && count > 0 {
                    self.out.write_all(b"]")?;
                }
                self.out.write_all(bracket(ty, json, false).as_bytes())
            }
            Piece::Enter(step) => {
                let Some((_, count)) = self.items.last_mut() else {
                    return Ok(());
                };
                let first = *count == 0;
                if !matches!(step, Step::MapValue(_)) {
                    *count += 1;
                }
                let separator = match (json, first, step) {
                    (false, _, Step::MapValue(_)) => ": ",
                    (true, _, Step::MapValue(_)) => ",",
                    (true, true, Step::MapKey(_)) => "[",
                    (true, false, Step::MapKey(_)) => "],[",
                    (_, true, _) => "",
                    (false, false, _) => ", ",
                    (true, false, _) => ",",
                };
                self.out.write_all(separator.as_bytes())?;
                if let Step::Field(name) = step {
                    let name = match self.form {
                        TextForm::Cql => Identifier(name).to_string(),
                        #[cfg(feature = "json")]
                        TextForm::Json => json::to_json_string(name),
                    };
                    let colon = if json { ":" } else { ": " };
                    write!(self.out, "{}{colon}", (self.show)(&name))?;
                }
                Ok(())
            }
            Piece::Leaf(ty, value) => {
                let text = match self.form {
                    TextForm::Cql => cql::format_cql(ty, &value),
                    #[cfg(feature = "json")]
                    TextForm::Json => json::to_json(ty, &value).to_string(),
                };
                self.out.write_all((self.show)(&text).as_bytes())
            }
        }
    }
}

/// The opening or closing bracket of a composite of type `ty`.
fn bracket(ty: &CqlType, json: bool, open: bool) -> &'static str {
    let (left, right) = match ty {
        CqlType::Udt(_) => ("{", "}"),
        _ if json => ("[", "]"),
        CqlType::Set(_) | CqlType::Map(..) => ("{", "}"),
        CqlType::Tuple(_) => ("(", ")"),
        _ => ("[", "]"),
    };
    if open {
        left
    } else {
        right
    }
}

#[cfg(all(test, feature = "json"))]
mod tests {
    use super::*;
    use crate::types::{parse_type, UdtRegistry};

    /// What `write_text` prints, and what formatting the whole decoded value gives.
    fn both(type_text: &str, hex: &str, form: TextForm) -> (String, String) {
        let mut udts = UdtRegistry::new();
        udts.declare("p(ok boolean, \"Odd \"\"x\"\"\" text)")
            .unwrap();
        let ty = parse_type(type_text, &udts).unwrap();
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
                ("map<int, text>", "00000000"),
                (
                    "map<int, frozen<set<text>>>",
                    "00000002 00000004 00000001 0000000d 00000002 00000001 61 00000000 \
                     00000004 00000002 ffffffff",
                ),
                ("tuple<int, text, int>", "00000004 00000007 00000001 27"),
                ("tuple<int, text>", ""),
                ("frozen<p>", "00000001 01 00000002 6869"),
                ("frozen<p>", "00000001 00"),
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
