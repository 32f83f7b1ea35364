//! CQL literals read into values, guided by the type.

use super::scalar::native_from_text;
use super::{wrong_dimension, LiteralError, LiteralErrorKind, MAX_LITERAL_DEPTH};
use crate::lexer::Lexer;
use crate::types::{CqlType, NativeType};
use crate::value::{has_empty_value, Value};
use std::borrow::Cow;

/// Reads a CQL literal of the given type: what [`super::format_cql`] prints, plus common cqlsh
/// input forms (unquoted timestamps, dates and times, ISO 8601 `T` timestamps and `P…` durations,
/// `TRUE`, `+1`, `1e10`, `$$text$$`, sets in `[…]`). A value the binary codec cannot encode (a
/// top-level null, a duration with mixed signs, a null vector element) is refused with the codec's
/// message. Errors name the character position and the path in the value.
pub fn parse_cql(ty: &CqlType, text: &str) -> Result<Value, LiteralError> {
    let mut parser = Parser {
        lexer: Lexer::new(text),
        path: Vec::new(),
    };
    let value = parser.value(ty, false, 0)?;
    let end = parser.lexer.skip_whitespace();
    if !parser.lexer.rest().is_empty() {
        return Err(parser.error_at(end, LiteralErrorKind::TrailingText));
    }
    encodable(ty, value)
}

/// `value` when the binary codec can encode it as `ty`, else its refusal (a top-level null, a
/// duration with mixed signs, a null or empty vector element, ...): the text forms leave those rules
/// to the one place that owns them, with the same message. A map key or set element given twice is
/// refused too (the rule of both text forms, see `unique.rs`).
pub(crate) fn encodable(ty: &CqlType, value: Value) -> Result<Value, LiteralError> {
    match crate::value::check_encodable(ty, &value) {
        Ok(()) => crate::value::check_no_repeats(ty, &value).map(|()| value),
        Err(e) => Err(LiteralError {
            kind: e.kind.into(),
            position: None,
            path: e.path,
        }),
    }
}

/// Recursive-descent state: the text, the cursor and the path to the value being read.
struct Parser<'a> {
    /// The text and the position in it.
    lexer: Lexer<'a>,
    /// The steps from the top of the value to the one being read.
    path: Vec<String>,
}

impl<'a> Parser<'a> {
    /// An error at the byte offset `offset`, with the current path.
    fn error_at(&self, offset: usize, kind: LiteralErrorKind) -> LiteralError {
        LiteralError {
            kind,
            position: Some(self.lexer.char_position(offset)),
            path: self.path.join(" / "),
        }
    }

    /// An error at `offset` saying what the syntax needs there.
    fn expected_at(&self, offset: usize, expected: impl Into<String>) -> LiteralError {
        self.error_at(
            offset,
            LiteralErrorKind::Expected {
                expected: expected.into(),
            },
        )
    }

    /// Consumes `c` after optional whitespace, or fails naming `what` was expected.
    fn expect(&mut self, c: char, what: &str) -> Result<(), LiteralError> {
        let at = self.lexer.skip_whitespace();
        if self.lexer.eat(c) {
            Ok(())
        } else {
            Err(self.expected_at(at, what))
        }
    }

    /// After an element: `true` for `,` (more follow), `false` for the closing bracket.
    fn comma_or_close(&mut self, close: char) -> Result<bool, LiteralError> {
        let at = self.lexer.skip_whitespace();
        if self.lexer.eat(',') {
            Ok(true)
        } else if self.lexer.eat(close) {
            Ok(false)
        } else {
            Err(self.expected_at(at, format!("',' or '{close}'")))
        }
    }

    /// Reads `open item, item, … close`, calling `item` for each with its index. `[` among the
    /// `open` brackets always closes with `]`.
    fn sequence(
        &mut self,
        open: &[char],
        close: char,
        what: &str,
        mut item: impl FnMut(&mut Self, usize) -> Result<(), LiteralError>,
    ) -> Result<(), LiteralError> {
        let at = self.lexer.skip_whitespace();
        let close = match self.lexer.peek() {
            Some('[') if open.contains(&'[') => ']',
            Some(c) if open.contains(&c) => close,
            _ => return Err(self.expected_at(at, what)),
        };
        self.lexer.bump();
        self.lexer.skip_whitespace();
        if self.lexer.eat(close) {
            return Ok(());
        }
        let mut index = 0;
        loop {
            item(self, index)?;
            index += 1;
            if !self.comma_or_close(close)? {
                return Ok(());
            }
        }
    }

    /// Reads `item` with `step` pushed on the path.
    fn within<T>(
        &mut self,
        step: String,
        item: impl FnOnce(&mut Self) -> Result<T, LiteralError>,
    ) -> Result<T, LiteralError> {
        self.path.push(step);
        let read = item(self)?;
        self.path.pop();
        Ok(read)
    }

    /// Reads one value of type `ty`; `in_map_key` makes a bare token stop at `:`.
    fn value(
        &mut self,
        ty: &CqlType,
        in_map_key: bool,
        depth: usize,
    ) -> Result<Value, LiteralError> {
        let start = self.lexer.skip_whitespace();
        if depth > MAX_LITERAL_DEPTH {
            return Err(self.error_at(start, LiteralErrorKind::TooDeep));
        }
        if self.lexer.at_keyword("null") {
            self.lexer.advance("null".len());
            return Ok(Value::Null);
        }
        if self.lexer.starts_with("<empty>") {
            if !matches!(ty, CqlType::Native(n) if has_empty_value(*n)) {
                return Err(self.error_at(
                    start,
                    LiteralErrorKind::CannotBeEmpty {
                        ty: Box::new(ty.clone()),
                    },
                ));
            }
            self.lexer.advance("<empty>".len());
            return Ok(Value::Empty);
        }
        match ty {
            CqlType::Native(native) => self.native(*native, in_map_key),
            CqlType::List(element) => {
                self.elements(element, &['['], ']', "'[' to start a list", depth)
            }
            CqlType::Set(element) => {
                self.elements(element, &['{', '['], '}', "'{' to start a set", depth)
            }
            CqlType::Vector(element, dimension) => {
                let value = self.elements(element, &['['], ']', "'[' to start a vector", depth)?;
                match wrong_dimension(ty, *dimension, &value) {
                    Some(kind) => Err(self.error_at(start, kind)),
                    None => Ok(value),
                }
            }
            CqlType::Map(key_type, value_type) => {
                let mut entries = Vec::new();
                self.sequence(&['{'], '}', "'{' to start a map", |p, i| {
                    let key = p.within(format!("map key #{i}"), |p| {
                        p.value(key_type, true, depth + 1)
                    })?;
                    p.expect(':', "':' after a map key")?;
                    let value = p.within(format!("map value #{i}"), |p| {
                        p.value(value_type, false, depth + 1)
                    })?;
                    entries.push((key, value));
                    Ok(())
                })?;
                Ok(Value::Map(entries))
            }
            CqlType::Tuple(component_types) => {
                let mut components = Vec::new();
                self.sequence(&['('], ')', "'(' to start a tuple", |p, i| {
                    let at = p.lexer.skip_whitespace();
                    let component_type = component_types.get(i).ok_or_else(|| {
                        p.error_at(
                            at,
                            LiteralErrorKind::TooManyComponents {
                                ty: Box::new(ty.clone()),
                                count: component_types.len(),
                                found: None,
                            },
                        )
                    })?;
                    let component = p.within(format!("component {i}"), |p| {
                        p.value(component_type, false, depth + 1)
                    })?;
                    components.push(component);
                    Ok(())
                })?;
                Ok(Value::Tuple(components))
            }
            CqlType::Udt(udt) => {
                let mut given: Vec<Option<Value>> = vec![None; udt.fields.len()];
                let what = "'{' to start a user-defined type value";
                self.sequence(&['{'], '}', what, |p, _| {
                    let at = p.lexer.skip_whitespace();
                    let name = p.identifier()?;
                    let Some(index) = udt.fields.iter().position(|(n, _)| *n == name) else {
                        let kind = LiteralErrorKind::NoSuchField {
                            udt: udt.name.clone(),
                            field: name,
                        };
                        return Err(p.error_at(at, kind));
                    };
                    p.expect(':', "':' after a field name")?;
                    let field_type = &udt.fields[index].1;
                    let value = p.within(format!("field {name}"), |p| {
                        p.value(field_type, false, depth + 1)
                    })?;
                    match given.get_mut(index) {
                        Some(slot @ None) => *slot = Some(value),
                        _ => {
                            let kind = LiteralErrorKind::FieldGivenTwice { field: name };
                            return Err(p.error_at(at, kind));
                        }
                    }
                    Ok(())
                })?;
                let present = given.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
                Ok(Value::Udt(
                    udt.fields
                        .iter()
                        .zip(given)
                        .take(present)
                        .map(|((name, _), v)| (name.clone(), v.unwrap_or(Value::Null)))
                        .collect(),
                ))
            }
        }
    }

    /// Reads the elements of a list, set or vector.
    fn elements(
        &mut self,
        element: &CqlType,
        open: &[char],
        close: char,
        what: &str,
        depth: usize,
    ) -> Result<Value, LiteralError> {
        let mut items = Vec::new();
        self.sequence(open, close, what, |p, i| {
            let item = p.within(format!("element {i}"), |p| {
                p.value(element, false, depth + 1)
            })?;
            items.push(item);
            Ok(())
        })?;
        Ok(Value::List(items))
    }

    /// A UDT field name: a bare identifier (lowercased) or a `"quoted"` one (kept as is).
    fn identifier(&mut self) -> Result<String, LiteralError> {
        let start = self.lexer.skip_whitespace();
        if self.lexer.peek() == Some('"') {
            return self.quoted('"');
        }
        let name = self.lexer.take_while(|c| c.is_alphanumeric() || c == '_');
        if name.is_empty() {
            return Err(self.expected_at(start, "a field name"));
        }
        // Character by character, as CQL lowercases identifiers (no final-sigma rule).
        Ok(name.chars().flat_map(char::to_lowercase).collect())
    }

    /// Reads a string quoted with `quote` (the next character), where a doubled quote stands for
    /// one.
    fn quoted(&mut self, quote: char) -> Result<String, LiteralError> {
        let start = self.lexer.offset();
        self.lexer
            .quoted(quote)
            .ok_or_else(|| self.error_at(start, LiteralErrorKind::UnterminatedString))
    }

    /// Reads `$$…$$` (the next characters are the opening `$$`).
    fn dollar_quoted(&mut self) -> Result<&'a str, LiteralError> {
        let start = self.lexer.offset();
        self.lexer.advance("$$".len());
        let rest = self.lexer.rest();
        let Some(end) = rest.find("$$") else {
            return Err(self.error_at(start, LiteralErrorKind::UnterminatedDollarString));
        };
        self.lexer.advance(end + "$$".len());
        Ok(&rest[..end])
    }

    /// Reads a bare token: up to `,` or a bracket (or `:` in a map key, where a timestamp, time or
    /// inet key stops only at `:` followed by whitespace), trimmed. `NaN(…)` is one token.
    fn bare_token(&mut self, native: NativeType, in_map_key: bool) -> &'a str {
        let colons_inside = matches!(
            native,
            NativeType::Timestamp | NativeType::Time | NativeType::Inet
        );
        let rest = self.lexer.rest();
        // Every character that ends a token is ASCII, so the scan goes byte by byte and each
        // place it stops at is a character boundary.
        let mut len = 0;
        while let Some(&byte) = rest.as_bytes().get(len) {
            match byte {
                b'(' if rest[..len].eq_ignore_ascii_case("nan") => {
                    len = rest[len..]
                        .find(')')
                        .map_or(rest.len(), |close| len + close + 1);
                }
                b',' | b']' | b'}' | b')' | b'[' | b'{' | b'(' => break,
                b':' if in_map_key
                    && (!colons_inside
                        || rest[len + 1..]
                            .chars()
                            .next()
                            .is_none_or(char::is_whitespace)) =>
                {
                    break
                }
                _ => len += 1,
            }
        }
        self.lexer.advance(len);
        rest[..len].trim_end()
    }

    /// Reads a native value: a quoted string, `$$…$$` or a bare token, interpreted by type.
    fn native(&mut self, native: NativeType, in_map_key: bool) -> Result<Value, LiteralError> {
        let start = self.lexer.offset();
        let (text, quoted) = match (self.lexer.peek(), self.lexer.peek_second()) {
            (Some('\''), _) => (Cow::Owned(self.quoted('\'')?), true),
            (Some('$'), Some('$')) => (Cow::Borrowed(self.dollar_quoted()?), true),
            _ => (Cow::Borrowed(self.bare_token(native, in_map_key)), false),
        };
        let textual = matches!(native, NativeType::Text | NativeType::Ascii);
        if textual && !quoted {
            return Err(self.expected_at(start, format!("a quoted string for {native}")));
        }
        if native == NativeType::Blob && quoted {
            return Err(self.expected_at(start, "a blob as 0x… (not quoted)"));
        }
        if text.is_empty() && !quoted {
            return Err(self.expected_at(start, format!("a {native} value")));
        }
        native_from_text(native, text).map_err(|kind| self.error_at(start, kind))
    }
}
