//! A lexer of CQL statement text, after Apache Cassandra's `Lexer.g`: string literals (`'…'` with
//! `''` escapes, `$$…$$` bodies), quoted names (`"…"` with `""` escapes), comments (`--` and `//`
//! to the end of the line, `/* … */`), numbers (`-1`, `1.5`, `-1.5e3`, `NaN`, `Infinity`),
//! booleans, hex blobs (`0x…`), uuids, durations (`1h30m`, `P1D`, `PT1H`, `P0001-02-03T04:05:06`),
//! bind markers (`?`, `:name`), identifiers and single-character symbols. It never fails: a
//! string, name or comment that does not end runs to the end of the text, and any other
//! character is a symbol of its own, so every byte of the text belongs to exactly one token.

use std::ops::Range;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenKind {
    /// Spaces, tabs and line ends.
    Space,
    /// A comment, its markers included.
    Comment,
    /// A string literal, `'…'` or `$$…$$` (unterminated: to the end of the text).
    Text,
    /// An integer literal (`42`, `-7`).
    Integer,
    /// A floating-point literal (`1.5`, `-2e3`, `NaN`, `-Infinity`).
    Float,
    /// `true` or `false`, in any case.
    Boolean,
    /// A duration literal (`1h30m`, `-2d`, `P1Y2M`, `PT5S`).
    Duration,
    /// A uuid literal.
    Uuid,
    /// A hex blob literal (`0xcafe`).
    Blob,
    /// An unquoted identifier or keyword.
    Identifier,
    /// A quoted name (`"Name"`).
    QuotedName,
    /// A quoted name that does not end: the rest of the text, which may hold anything.
    UnterminatedName,
    /// A bind marker, `?` or `:name`.
    Marker,
    /// Any other character (`(`, `,`, `=`, `;`, …).
    Symbol,
}

impl TokenKind {
    /// Whether the token is a constant of the grammar (a value written in the statement).
    pub fn is_literal(self) -> bool {
        use TokenKind as K;
        matches!(
            self,
            K::Text | K::Integer | K::Float | K::Boolean | K::Duration | K::Uuid | K::Blob
        )
    }
}

/// One token: its kind and where it is in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Its bytes in the text.
    pub range: Range<usize>,
}

/// The tokens of `text`, in order, covering every byte: an iterator that keeps nothing but its
/// place, so any text is lexed in constant memory.
pub fn tokens(text: &str) -> Tokens<'_> {
    Tokens { text, at: 0 }
}

/// The iterator of [`tokens`].
#[derive(Debug, Clone)]
pub struct Tokens<'t> {
    text: &'t str,
    at: usize,
}

impl Iterator for Tokens<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        if self.at >= self.text.len() {
            return None;
        }
        let (kind, end) = next_token(self.text, self.at);
        let token = Token {
            kind,
            range: self.at..end,
        };
        self.at = end;
        Some(token)
    }
}

/// Whether `word` is `NaN` or `Infinity`, in any case.
fn is_special_float(word: &str) -> bool {
    word.eq_ignore_ascii_case("nan") || word.eq_ignore_ascii_case("infinity")
}

/// The token starting at byte `at` (a char boundary): its kind and end.
fn next_token(text: &str, at: usize) -> (TokenKind, usize) {
    let bytes = text.as_bytes();
    let rest = &text[at..];
    let b = bytes[at];
    let peek = |i: usize| bytes.get(at + i).copied().unwrap_or(0);
    if rest.starts_with(char::is_whitespace) {
        let len = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        return (TokenKind::Space, at + len);
    }
    if rest.starts_with("--") || rest.starts_with("//") {
        let len = rest.find(['\n', '\r']).unwrap_or(rest.len());
        return (TokenKind::Comment, at + len);
    }
    // `/* … */` and `$$ … $$`: to their end marker, or to the end of the text.
    for (open, close, kind) in [
        ("/*", "*/", TokenKind::Comment),
        ("$$", "$$", TokenKind::Text),
    ] {
        if let Some(body) = rest.strip_prefix(open) {
            let len = body.find(close).map_or(rest.len(), |end| end + 4);
            return (kind, at + len);
        }
    }
    match b {
        b'\'' => {
            return (
                TokenKind::Text,
                quoted_end(bytes, at, b'\'').unwrap_or(text.len()),
            )
        }
        b'"' => {
            return match quoted_end(bytes, at, b'"') {
                Some(end) => (TokenKind::QuotedName, end),
                None => (TokenKind::UnterminatedName, text.len()),
            }
        }
        b'?' => return (TokenKind::Marker, at + 1),
        b':' if peek(1).is_ascii_alphabetic() => {
            return (TokenKind::Marker, word_end(bytes, at + 1));
        }
        _ => {}
    }
    if let Some(end) = uuid_end(bytes, at) {
        return (TokenKind::Uuid, end);
    }
    if b == b'0' && matches!(peek(1), b'x' | b'X') {
        let mut end = at + 2;
        while bytes.get(end).is_some_and(u8::is_ascii_hexdigit) {
            end += 1;
        }
        return (TokenKind::Blob, end);
    }
    // `-NaN` and `-Infinity` are a minus sign and a keyword in the grammar: one literal here.
    if b == b'-' && peek(1).is_ascii_alphabetic() {
        let end = word_end(bytes, at + 1);
        if is_special_float(&text[at + 1..end]) {
            return (TokenKind::Float, end);
        }
    }
    let signed = usize::from(b == b'-');
    if let Some(end) = iso_duration_end(bytes, at + signed) {
        return (TokenKind::Duration, end);
    }
    if peek(signed).is_ascii_digit() {
        return number(bytes, at + signed);
    }
    if b.is_ascii_alphabetic() {
        let end = word_end(bytes, at);
        let word = &text[at..end];
        let kind = if word.eq_ignore_ascii_case("true") || word.eq_ignore_ascii_case("false") {
            TokenKind::Boolean
        } else if is_special_float(word) {
            TokenKind::Float
        } else {
            TokenKind::Identifier
        };
        return (kind, end);
    }
    let len = rest.chars().next().map_or(1, char::len_utf8);
    (TokenKind::Symbol, at + len)
}

/// The end of a string or name quoted by `quote` at `at`, whose doubled quotes are escapes;
/// `None` when it does not end.
fn quoted_end(bytes: &[u8], at: usize, quote: u8) -> Option<usize> {
    let mut i = at + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// The end of the identifier characters (letters, digits, `_`) from `at`.
fn word_end(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        at += 1;
    }
    at
}

/// The end of a uuid starting at `at` (8-4-4-4-12 hex digits), when one does.
fn uuid_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    for (n, group) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if n > 0 {
            if bytes.get(i) != Some(&b'-') {
                return None;
            }
            i += 1;
        }
        for _ in 0..group {
            if !bytes.get(i)?.is_ascii_hexdigit() {
                return None;
            }
            i += 1;
        }
    }
    Some(i)
}

/// The end of an ISO 8601 duration (`P…`) starting at `at`: `P` then digits, the designators
/// `Y M W D T H S` and the `-`/`:` of the alternative format, with at least one digit.
fn iso_duration_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'P') {
        return None;
    }
    let next = *bytes.get(at + 1)?;
    let starts = next.is_ascii_digit()
        || (next == b'T' && bytes.get(at + 2).is_some_and(u8::is_ascii_digit));
    if !starts {
        return None;
    }
    let mut end = at + 1;
    while bytes
        .get(end)
        .is_some_and(|b| b.is_ascii_digit() || b"YMWDTHS-:".contains(b))
    {
        end += 1;
    }
    Some(end)
}

/// The units of a duration literal, longest first (matched in any case).
const DURATION_UNITS: [&str; 11] = ["mo", "ms", "us", "µs", "ns", "y", "w", "d", "h", "m", "s"];

/// The length of the duration unit at `at`, when one is there and no identifier character
/// follows it that would make it a longer word.
fn duration_unit(bytes: &[u8], at: usize) -> Option<usize> {
    DURATION_UNITS
        .iter()
        .map(|u| u.as_bytes())
        .find_map(|unit| {
            let here = bytes.get(at..at + unit.len())?;
            let follows = bytes.get(at + unit.len()).copied().unwrap_or(0);
            (here.eq_ignore_ascii_case(unit) && !follows.is_ascii_alphabetic() && follows != b'_')
                .then_some(unit.len())
        })
}

/// A number or duration whose digits start at `at` (after an optional `-`).
fn number(bytes: &[u8], at: usize) -> (TokenKind, usize) {
    let digits = |mut i: usize| {
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut end = digits(at);
    if let Some(unit) = duration_unit(bytes, end) {
        end += unit;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            let after = digits(end);
            let Some(unit) = duration_unit(bytes, after) else {
                break;
            };
            end = after + unit;
        }
        return (TokenKind::Duration, end);
    }
    let mut kind = TokenKind::Integer;
    // `1..5` is an integer and a range, not `1.` and `.5`.
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1) != Some(&b'.') {
        kind = TokenKind::Float;
        end = digits(end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        if bytes.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            kind = TokenKind::Float;
            end = digits(end + 1 + sign);
        }
    }
    (kind, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(kind, text)` of each token that is not a space.
    fn lexed(text: &str) -> Vec<(TokenKind, &str)> {
        tokens(text)
            .filter(|t| t.kind != TokenKind::Space)
            .map(|t| (t.kind, &text[t.range]))
            .collect()
    }

    #[test]
    fn literals_of_every_kind_are_one_token_each() {
        use TokenKind as K;
        let text = "INSERT INTO t (a) VALUES ('it''s', $$a 'b' c$$, -1.5e3, 42, -7, NaN, \
                    -Infinity, true, FALSE, 0xCAFE, 123e4567-e89b-12d3-a456-426614174000, \
                    1h30m, -2d, P1Y2M, PT5S, P0001-02-03T04:05:06, 1mo2w3ns, 1.)";
        let literals: Vec<_> = lexed(text)
            .into_iter()
            .filter(|(k, _)| k.is_literal())
            .collect();
        assert_eq!(
            literals,
            [
                (K::Text, "'it''s'"),
                (K::Text, "$$a 'b' c$$"),
                (K::Float, "-1.5e3"),
                (K::Integer, "42"),
                (K::Integer, "-7"),
                (K::Float, "NaN"),
                (K::Float, "-Infinity"),
                (K::Boolean, "true"),
                (K::Boolean, "FALSE"),
                (K::Blob, "0xCAFE"),
                (K::Uuid, "123e4567-e89b-12d3-a456-426614174000"),
                (K::Duration, "1h30m"),
                (K::Duration, "-2d"),
                (K::Duration, "P1Y2M"),
                (K::Duration, "PT5S"),
                (K::Duration, "P0001-02-03T04:05:06"),
                (K::Duration, "1mo2w3ns"),
                (K::Float, "1."),
            ]
        );
    }

    #[test]
    fn comments_names_and_markers_are_not_literals() {
        use TokenKind as K;
        assert_eq!(
            lexed("SELECT \"we\"\"ird\" -- 'x'\nFROM t /* 'y' */ WHERE a = ? AND b = :bee // z"),
            [
                (K::Identifier, "SELECT"),
                (K::QuotedName, "\"we\"\"ird\""),
                (K::Comment, "-- 'x'"),
                (K::Identifier, "FROM"),
                (K::Identifier, "t"),
                (K::Comment, "/* 'y' */"),
                (K::Identifier, "WHERE"),
                (K::Identifier, "a"),
                (K::Symbol, "="),
                (K::Marker, "?"),
                (K::Identifier, "AND"),
                (K::Identifier, "b"),
                (K::Symbol, "="),
                (K::Marker, ":bee"),
                (K::Comment, "// z"),
            ]
        );
        // `1..5` is an integer and a range; `m[1]` an identifier and an index.
        assert_eq!(
            lexed("1..5 m[1]"),
            [
                (K::Integer, "1"),
                (K::Symbol, "."),
                (K::Symbol, "."),
                (K::Integer, "5"),
                (K::Identifier, "m"),
                (K::Symbol, "["),
                (K::Integer, "1"),
                (K::Symbol, "]"),
            ]
        );
    }

    #[test]
    fn what_does_not_end_runs_to_the_end_and_every_byte_is_covered() {
        use TokenKind as K;
        assert_eq!(
            lexed("a = 'open"),
            [(K::Identifier, "a"), (K::Symbol, "="), (K::Text, "'open")]
        );
        assert_eq!(lexed("\"open 'x'"), [(K::UnterminatedName, "\"open 'x'")]);
        assert_eq!(lexed("/* open 'x'"), [(K::Comment, "/* open 'x'")]);
        assert_eq!(lexed("$$ open"), [(K::Text, "$$ open")]);
        for text in [
            "é'x'\u{0}",
            "'",
            "\"",
            "-",
            "0x",
            "P",
            "PT",
            "1e",
            "$",
            "µ1µs",
        ] {
            let all: Vec<Token> = tokens(text).collect();
            assert_eq!(all.first().map_or(0, |t| t.range.start), 0, "{text:?}");
            assert_eq!(
                all.last().map_or(0, |t| t.range.end),
                text.len(),
                "{text:?}"
            );
            assert!(all.windows(2).all(|w| w[0].range.end == w[1].range.start));
        }
    }
}
