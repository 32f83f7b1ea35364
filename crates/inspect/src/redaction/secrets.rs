//! What `inspect` shows of the data a capture carries: everything ([`ValueForm::Plain`],
//! `--show-secrets`), everything but passwords ([`ValueForm::Masked`], the default), or nothing of
//! it ([`ValueForm::Redacted`], `--redact`).
//!
//! Passwords are the one in a SASL PLAIN token (an AUTH_RESPONSE of `authzid\0user\0password`,
//! RFC 4616) and the string literal after `PASSWORD` or `HASHED PASSWORD` in a `CREATE`/`ALTER`
//! `ROLE`/`USER` statement (`WITH PASSWORD = '…'`, `AND PASSWORD = $$…$$`, `WITH PASSWORD '…'`):
//! masked, they read `<password: N bytes>`; redacted too, never hashed. Masked, the server's text
//! answering a statement that mentions a password has its quoted spans masked as well
//! ([`ValueForm::answering`]): a syntax error quotes the statement it could not parse.
//!
//! Redacted, every other piece of captured data becomes its type, its length and a keyed hash
//! ([`KeyedHash`]): row and bound values, auth tokens, custom payload values and paging states;
//! every literal of a query text becomes `?<kind>:<hash>` ([`redact_query`]), comments are dropped;
//! in server text (error messages, warnings) every quoted or bracketed span and every word that
//! is not one of a fixed list of the server's own words becomes `?:<hash>`
//! ([`redact_server_text`]): only what is known to be safe is shown.

use super::cql_lexer::{tokens, TokenKind};
use super::keyed_hash::KeyedHash;
use cqlwire_codec::value::json::JsonWriter;
use cqlwire_protocol::frame::Opcode;
use cqlwire_protocol::message::{Captured, Mask};
use std::borrow::Cow;
use std::ops::Range;

/// How the data of a capture is written: values, tokens, query text, server text.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub enum ValueForm<'k> {
    /// Everything as captured (values as `decode --format json` prints them).
    #[default]
    Plain,
    /// As captured, passwords excepted: `<password: N bytes>`.
    Masked,
    /// As [`ValueForm::Masked`], and every quoted or bracketed span of server text masked
    /// (`<masked: N bytes>`): the form of a response to a statement that mentions a password.
    MaskedQuotes,
    /// Nothing captured: values, tokens, payloads, paging states, literals and server text (but
    /// its known words) replaced by their type, length and a tag under this key; nulls and unsets
    /// stay.
    Redacted(&'k KeyedHash),
}

/// `<password: N bytes>`.
pub(crate) fn password_text(len: usize) -> String {
    format!("<password: {len} bytes>")
}

/// `N bytes: <redacted TAG>` (`1 byte: …`).
fn redacted_text(hash: &KeyedHash, bytes: &[u8]) -> String {
    let plural = if bytes.len() == 1 { "" } else { "s" };
    format!(
        "{} byte{plural}: <redacted {}>",
        bytes.len(),
        hash.tag(bytes)
    )
}

/// Writes `{"$redacted": TAG, "len": N}`.
pub(crate) fn write_redacted_bytes(w: &mut JsonWriter, tag: &str, len: usize) {
    w.begin_object();
    w.key("$redacted");
    w.str(tag);
    w.key("len");
    w.u64(len as u64);
    w.end_object();
}

/// Whether `text` holds the word `password` in any case (ASCII).
fn mentions_password(text: &str) -> bool {
    text.as_bytes()
        .windows(8)
        .any(|w| w.eq_ignore_ascii_case(b"password"))
}

/// SASL PLAIN credentials (RFC 4616): `authzid NUL authcid NUL passwd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SaslPlain<'t> {
    /// The authorization identity (often empty).
    pub authzid: &'t [u8],
    /// The user.
    pub user: &'t [u8],
    /// The password.
    pub password: &'t [u8],
}

/// The SASL PLAIN credentials a token holds: exactly two NUL bytes and a user.
pub(crate) fn sasl_plain(token: &[u8]) -> Option<SaslPlain<'_>> {
    let mut parts = token.split(|&b| b == 0);
    let (authzid, user, password) = (parts.next()?, parts.next()?, parts.next()?);
    (parts.next().is_none() && !user.is_empty()).then_some(SaslPlain {
        authzid,
        user,
        password,
    })
}

/// Bytes as text for a line: the UTF-8 they hold, lossy.
fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

impl ValueForm<'_> {
    /// The form of a message answering a request that ran `statement` (its query text, see
    /// [`crate::RequestInfo::statement`]): masked, and the statement mentions a
    /// password, its server text is masked too ([`ValueForm::MaskedQuotes`]); else this form.
    pub fn answering(self, statement: Option<&str>) -> Self {
        match self {
            ValueForm::Masked if statement.is_some_and(mentions_password) => {
                ValueForm::MaskedQuotes
            }
            other => other,
        }
    }

    /// The key of a redacted form.
    pub fn key(&self) -> Option<&KeyedHash> {
        match self {
            ValueForm::Redacted(hash) => Some(hash),
            _ => None,
        }
    }

    /// A query text as shown: passwords masked (unless plain), literals replaced when redacted.
    pub fn query<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self {
            ValueForm::Plain => Cow::Borrowed(text),
            // Only a role statement has a password to mask: most texts are passed at a glance.
            ValueForm::Masked | ValueForm::MaskedQuotes if !mentions_password(text) => {
                Cow::Borrowed(text)
            }
            ValueForm::Masked | ValueForm::MaskedQuotes => redact_query(text, None),
            ValueForm::Redacted(hash) => redact_query(text, Some(hash)),
        }
    }

    /// A statement of the statistics ([`Statement`](crate::Statement)): its query text as
    /// [`ValueForm::query`] shows it; `EXECUTE 0x<id>` and `BATCH …` as they are.
    pub fn statement<'t>(&self, statement: &'t str) -> Cow<'t, str> {
        if statement.starts_with("EXECUTE 0x") || statement.starts_with("BATCH ") {
            return Cow::Borrowed(statement);
        }
        match statement.strip_prefix("PREPARE ") {
            Some(query) => match self.query(query) {
                Cow::Borrowed(_) => Cow::Borrowed(statement),
                Cow::Owned(query) => Cow::Owned(format!("PREPARE {query}")),
            },
            None => self.query(statement),
        }
    }

    /// A server's text (error message, warning) as shown: quoted spans and numbers replaced when
    /// redacted, quoted spans masked in [`ValueForm::MaskedQuotes`].
    pub(crate) fn server_text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self {
            ValueForm::Redacted(hash) => Cow::Owned(redact_server_text(text, hash)),
            ValueForm::MaskedQuotes => Cow::Owned(mask_server_text(text)),
            _ => Cow::Borrowed(text),
        }
    }

    /// Writes opaque bytes (a paging state, a custom payload value): `"0x…"`, or redacted.
    pub(crate) fn write_bytes(&self, w: &mut JsonWriter, bytes: Option<&[u8]>) {
        match (bytes, self) {
            (None, _) => w.null(),
            (Some(bytes), ValueForm::Redacted(hash)) => {
                write_redacted_bytes(w, &hash.tag(bytes), bytes.len());
            }
            (Some(bytes), _) => w.hex(bytes),
        }
    }

    /// Writes the token of an AUTH_* message of `opcode`: `"0x…"`; masked, SASL PLAIN credentials
    /// as `{"sasl_plain": {"authzid", "user", "password": "<password: N bytes>"}}`; redacted.
    pub(crate) fn write_token(&self, w: &mut JsonWriter, opcode: Opcode, token: Option<&[u8]>) {
        let plain = token
            .filter(|_| opcode == Opcode::AuthResponse)
            .and_then(sasl_plain);
        match (self, plain) {
            (ValueForm::Masked | ValueForm::MaskedQuotes, Some(plain)) => {
                w.begin_object();
                w.key("sasl_plain");
                w.begin_object();
                w.key("authzid");
                w.str(&lossy(plain.authzid));
                w.key("user");
                w.str(&lossy(plain.user));
                w.key("password");
                w.str(&password_text(plain.password.len()));
                w.end_object();
                w.end_object();
            }
            _ => self.write_bytes(w, token),
        }
    }

    /// The gist of a token: its length, and the SASL PLAIN user and password (masked unless plain;
    /// nothing of them redacted).
    pub(crate) fn token_gist(&self, opcode: Opcode, token: Option<&[u8]>) -> String {
        let Some(token) = token else {
            return "null token".into();
        };
        if let ValueForm::Redacted(hash) = self {
            return redacted_text(hash, token);
        }
        let plural = if token.len() == 1 { "" } else { "s" };
        let length = format!("{} byte{plural}", token.len());
        let plain = Some(token)
            .filter(|_| opcode == Opcode::AuthResponse)
            .and_then(sasl_plain);
        match (self, plain) {
            (ValueForm::Masked | ValueForm::MaskedQuotes, Some(plain)) => format!(
                "{length}, SASL PLAIN user {:?} {}",
                lossy(plain.user),
                password_text(plain.password.len())
            ),
            (ValueForm::Plain, Some(plain)) => format!(
                "{length}, SASL PLAIN user {:?} password {:?}",
                lossy(plain.user),
                lossy(plain.password)
            ),
            _ => length,
        }
    }
}

impl Mask for ValueForm<'_> {
    /// What the first line of the captured data `what` of `kind` (its bytes `content`, length
    /// prefix left out) says when this form hides it; `None` when it is shown as it is.
    fn hidden(
        &self,
        what: &str,
        kind: Captured<'_>,
        content: &[u8],
        opcode: Opcode,
    ) -> Option<String> {
        let len = content.len();
        let bytes = if len == 1 { "byte" } else { "bytes" };
        // The text of a query or server text (only those read it: a value may be long).
        let text = || match kind {
            Captured::PreparedQuery(query) => Cow::Borrowed(query),
            _ => lossy(content),
        };
        match (self, kind) {
            (ValueForm::Plain, _) => None,
            (ValueForm::Redacted(hash), Captured::Value(ty)) => {
                let canonical = super::values::canonical_bytes(ty, content);
                let tag = hash.tag(&canonical);
                Some(match ty {
                    Some(ty) => format!("{what} ({ty}), {len} {bytes}: <redacted {tag}>"),
                    None => format!("{what}: {len} {bytes} (type unknown): <redacted {tag}>"),
                })
            }
            (ValueForm::Redacted(hash), Captured::Bytes) => {
                Some(format!("{what} {}", redacted_text(hash, content)))
            }
            (ValueForm::Redacted(hash), Captured::ServerText) => {
                Some(format!("{what} {:?}", redact_server_text(&text(), hash)))
            }
            (ValueForm::Redacted(hash), Captured::Query | Captured::PreparedQuery(_)) => {
                Some(format!("{what} {:?}", redact_query(&text(), Some(hash))))
            }
            (ValueForm::Masked | ValueForm::MaskedQuotes, Captured::Bytes)
                if what == "token" && opcode == Opcode::AuthResponse =>
            {
                let plain = sasl_plain(content)?;
                Some(format!(
                    "{what} SASL PLAIN: authzid {:?}, user {:?}, {}",
                    lossy(plain.authzid),
                    lossy(plain.user),
                    password_text(plain.password.len())
                ))
            }
            (ValueForm::MaskedQuotes, Captured::ServerText) => {
                Some(format!("{what} {:?}", mask_server_text(&text())))
            }
            (
                ValueForm::Masked | ValueForm::MaskedQuotes,
                Captured::Query | Captured::PreparedQuery(_),
            ) => match self.query(&text()) {
                Cow::Owned(masked) => Some(format!("{what} {masked:?}")),
                Cow::Borrowed(_) => None,
            },
            (ValueForm::Masked | ValueForm::MaskedQuotes, _) => None,
        }
    }
}

/// The name of a literal's kind in a placeholder (`?text:…`).
fn literal_kind(kind: TokenKind) -> &'static str {
    match kind {
        TokenKind::Text => "text",
        TokenKind::Integer => "integer",
        TokenKind::Float => "float",
        TokenKind::Boolean => "boolean",
        TokenKind::Duration => "duration",
        TokenKind::Uuid => "uuid",
        TokenKind::Blob => "blob",
        _ => "literal",
    }
}

/// What a string literal says: `'…'` without its quotes and with `''` as `'`, `$$…$$` without
/// its markers (an unterminated one to the end).
fn string_content(literal: &str) -> Cow<'_, str> {
    if let Some(body) = literal.strip_prefix("$$") {
        return Cow::Borrowed(body.strip_suffix("$$").unwrap_or(body));
    }
    let body = literal.strip_prefix('\'').unwrap_or(literal);
    if !body.contains('\'') {
        return Cow::Borrowed(body);
    }
    // A quote ends the literal unless another follows it: then the two are one quote.
    let mut content = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' && chars.next_if_eq(&'\'').is_none() {
            break;
        }
        content.push(c);
    }
    Cow::Owned(content)
}

/// Most nested collection literals [`redact_query`] tracks to replace each whole; a collection
/// deeper than that has its literals replaced one by one (the work stays linear in the text).
const COLLECTION_DEPTH: usize = 8;

/// An open bracket of a possible collection literal: `[`, `{`, or a tuple's `(` inside one.
#[derive(Debug)]
struct Collection {
    /// The bracket.
    open: u8,
    /// Where it starts in the text and in the output.
    text_start: usize,
    out_start: usize,
    /// Whether a `:` stands at its top level (a map).
    colon: bool,
    /// Literals (and whole collections of literals) inside it.
    literals: usize,
}

/// What [`redact_query`] knows of the statement it is in.
#[derive(Debug, Default)]
struct Statement {
    /// Its first two significant tokens (not spaces or comments).
    first: [Option<Range<usize>>; 2],
    /// Its last two significant tokens, the latest last.
    last: [Option<Range<usize>>; 2],
}

impl Statement {
    /// Records a significant token; `;` starts a new statement.
    fn push(&mut self, text: &str, range: Range<usize>) {
        if &text[range.clone()] == ";" {
            *self = Statement::default();
            return;
        }
        if self.first[0].is_none() {
            self.first[0] = Some(range.clone());
        } else if self.first[1].is_none() {
            self.first[1] = Some(range.clone());
        }
        self.last = [self.last[1].take(), Some(range)];
    }

    /// Whether a string literal now is a password: the statement is `CREATE`/`ALTER` `ROLE`/`USER`
    /// and the literal follows `PASSWORD` or `PASSWORD =`.
    fn expects_password(&self, text: &str) -> bool {
        let is = |range: &Option<Range<usize>>, words: &[&str]| {
            range.as_ref().is_some_and(|r| {
                words
                    .iter()
                    .any(|w| text[r.clone()].eq_ignore_ascii_case(w))
            })
        };
        is(&self.first[0], &["create", "alter"])
            && is(&self.first[1], &["role", "user"])
            && (is(&self.last[1], &["password"])
                || (is(&self.last[1], &["="]) && is(&self.last[0], &["password"])))
    }

    /// Whether a `[` now indexes a column (`m[…]`, `l[…]`) rather than opens a list literal.
    fn indexes(&self, text: &str) -> bool {
        self.last[1].as_ref().is_some_and(|r| {
            let last = &text[r.clone()];
            last.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '"' || c == '_')
                || last == ")"
                || last == "]"
        })
    }
}

/// A query text with its literals replaced by `?<kind>:<tag>` and its comments by a space when
/// `hash` is given, and the passwords of role statements masked in any case (`<password: N
/// bytes>`). A collection literal of literals only (`[1, 2]`, `{'a': 1}`, `{(1, 'x')}`) becomes one
/// `?list:…`, `?set:…` or `?map:…` (tagged by its text). A quoted name that does not end is
/// replaced too. Borrowed when nothing changed. One pass over the tokens, in memory linear in the
/// text.
pub fn redact_query<'t>(text: &'t str, hash: Option<&KeyedHash>) -> Cow<'t, str> {
    let mut out = String::new();
    let mut changed = false;
    let mut statement = Statement::default();
    // The open brackets of possible collection literals; those below `failed` hold something else.
    let mut open: Vec<Collection> = Vec::new();
    let mut failed = 0;
    // Brackets opened deeper than COLLECTION_DEPTH, not tracked.
    let mut deeper = 0usize;
    for token in tokens(text) {
        let s = &text[token.range.clone()];
        match token.kind {
            TokenKind::Space => {
                out.push_str(s);
                continue;
            }
            TokenKind::Comment => {
                if hash.is_some() {
                    out.push(' ');
                    changed = true;
                } else {
                    out.push_str(s);
                }
                continue;
            }
            _ => {}
        }
        let mut shown = Cow::Borrowed(s);
        if token.kind == TokenKind::Text && statement.expects_password(text) {
            shown = Cow::Owned(password_text(string_content(s).len()));
            if let Some(top) = open.last_mut() {
                top.literals += 1;
            }
        } else if let Some(hash) = hash {
            let kind = token.kind;
            if kind.is_literal() {
                let content = match kind {
                    TokenKind::Text => string_content(s),
                    _ => Cow::Borrowed(s),
                };
                let tag = hash.tag(content.as_bytes());
                shown = Cow::Owned(format!("?{}:{tag}", literal_kind(kind)));
                if let Some(top) = open.last_mut() {
                    top.literals += 1;
                }
            } else if kind == TokenKind::UnterminatedName {
                shown = Cow::Owned(format!("?name:{}", hash.tag(s.as_bytes())));
            }
            let opens = (s == "[" && !statement.indexes(text))
                || s == "{"
                || (s == "(" && !open.is_empty());
            let closes = matches!(s, "]" | "}" | ")") && (deeper > 0 || !open.is_empty());
            let separates = !open.is_empty() && (s == "," || s == ":");
            if opens && deeper == 0 && open.len() < COLLECTION_DEPTH {
                open.push(Collection {
                    open: s.as_bytes()[0],
                    text_start: token.range.start,
                    out_start: out.len(),
                    colon: false,
                    literals: 0,
                });
            } else if opens {
                deeper += 1;
                failed = open.len();
            } else if closes && deeper > 0 {
                deeper -= 1;
            } else if closes {
                let bracket = open.pop().expect("a bracket is open");
                // Its index is now `open.len()`: it holds literals only unless below `failed`.
                let matches = matches!((bracket.open, s), (b'[', "]") | (b'{', "}") | (b'(', ")"));
                let whole = open.len() >= failed && matches && bracket.literals > 0;
                if whole && bracket.open != b'(' {
                    let kind = match (bracket.open, bracket.colon) {
                        (b'[', _) => "list",
                        (_, true) => "map",
                        _ => "set",
                    };
                    let source = &text[bracket.text_start..token.range.end];
                    out.truncate(bracket.out_start);
                    shown = Cow::Owned(format!("?{kind}:{}", hash.tag(source.as_bytes())));
                }
                failed = failed.min(open.len());
                if !matches {
                    failed = open.len();
                }
                if let Some(parent) = open.last_mut() {
                    parent.literals += usize::from(whole);
                }
            } else if separates {
                if let Some(top) = open.last_mut() {
                    top.colon |= s == ":" && top.open == b'{';
                }
            } else if !kind.is_literal() {
                failed = open.len();
            }
        }
        changed |= matches!(shown, Cow::Owned(_));
        out.push_str(&shown);
        statement.push(text, token.range);
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// The closing character of a quote or bracket that opens a span of server text.
fn closer(open: char) -> Option<char> {
    match open {
        '\'' => Some('\''),
        '"' => Some('"'),
        '`' => Some('`'),
        '(' => Some(')'),
        '[' => Some(']'),
        '{' => Some('}'),
        '<' => Some('>'),
        _ => None,
    }
}

/// Whether a character continues a word of server text (`6.5KiB`, `127.0.0.1:9042`, `a-b_c`).
fn in_word(c: char) -> bool {
    c.is_alphanumeric() || "._-:/+@#%$&*=".contains(c)
}

/// A server's text (error message, warning) with only what is known to be safe left: each
/// quoted or bracketed span (`rewrite_server_text`) and each word that is not one of the server's
/// own words (a fixed list: the words of Cassandra's messages, CQL keywords and type names; a word
/// with a digit or other characters never is) becomes `?:<tag>`; a word of punctuation alone
/// stays. A word keeps a trailing `.` or `:` of its sentence outside the tag (`Invalid STRING constant (?:1a2b3c4d) for "?:5e6f7a8b" of type int`, `Detected partition
/// ?:0c1d2e3f with …`).
pub fn redact_server_text(text: &str, hash: &KeyedHash) -> String {
    rewrite_server_text(
        text,
        |content| format!("?:{}", hash.tag(content.as_bytes())),
        |word| {
            if !word.chars().any(char::is_alphanumeric) {
                return None;
            }
            let stem = word.trim_end_matches(['.', ':']);
            let kept = !stem.eq_ignore_ascii_case("true")
                && !stem.eq_ignore_ascii_case("false")
                && super::server_words::is_known(stem);
            if kept {
                return None;
            }
            Some(format!(
                "?:{}{}",
                hash.tag(stem.as_bytes()),
                &word[stem.len()..]
            ))
        },
    )
}

/// A server's text answering a statement that mentions a password, masked: each quoted or
/// bracketed span (`rewrite_server_text`) becomes `<masked: N bytes>` (a syntax error quotes
/// the statement it could not parse, password included: `mismatched input 'pw' expecting '='
/// (ALTER ROLE r WITH PASSWORD ['p]...)`).
pub(crate) fn mask_server_text(text: &str) -> String {
    rewrite_server_text(
        text,
        |content| format!("<masked: {} bytes>", content.len()),
        |_| None,
    )
}

/// `text` with each quoted or bracketed span's content replaced by `span(content)` and each word
/// outside them by `word(word)` when it gives one. A span runs from an opening quote or bracket
/// (`'`, `"`, `` ` ``, `(`, `[`, `{`, `<`) to the LAST matching closer of the text, and on to the
/// last closer of every opener inside it (to the end of the text when one never closes), so
/// nothing quoted escapes however it nests or is cut (Cassandra's syntax errors show the offending
/// token cut inside brackets: `input 'secret' … ['secre]...)`). One pass: linear in the text.
fn rewrite_server_text(
    text: &str,
    span: impl Fn(&str) -> String,
    word: impl Fn(&str) -> Option<String>,
) -> String {
    let lasts: Vec<(char, Option<usize>)> = OPENERS
        .iter()
        .filter_map(|&open| closer(open))
        .map(|close| (close, text.rfind(close)))
        .collect();
    let last_of = |close: char| {
        lasts
            .iter()
            .find(|(c, _)| *c == close)
            .and_then(|(_, at)| *at)
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        if let Some(close) = closer(c) {
            let start = at + c.len_utf8();
            let (end, ender) = span_end(text, start, close, &last_of);
            out.push(c);
            out.push_str(&span(&text[start..end]));
            at = match ender {
                Some(ender) => {
                    out.push(ender);
                    end + ender.len_utf8()
                }
                None => text.len(),
            };
        } else if in_word(c) {
            let end = text[at..]
                .find(|c: char| !in_word(c))
                .map_or(text.len(), |e| at + e);
            let w = &text[at..end];
            match word(w) {
                Some(shown) => out.push_str(&shown),
                None => out.push_str(w),
            }
            at = end;
        } else {
            out.push(c);
            at += c.len_utf8();
        }
    }
    out
}

/// The characters that open a span of server text.
const OPENERS: [char; 7] = ['\'', '"', '`', '(', '[', '{', '<'];

/// Where a span of server text whose content starts at `start` and whose opener `close` closes
/// ends: the end of its content and the closer there; the end of the text and `None` when it (or
/// an opener inside it) never closes. `last_of` tells where each closer is last in the text.
fn span_end(
    text: &str,
    start: usize,
    close: char,
    last_of: &impl Fn(char) -> Option<usize>,
) -> (usize, Option<char>) {
    let Some(mut end) = last_of(close).filter(|&e| e >= start) else {
        return (text.len(), None);
    };
    let mut ender = close;
    let mut scanned = start;
    while let Some(c) = text[scanned..end].chars().next() {
        if let Some(inner) = closer(c) {
            // A quote that is the last of its kind closes one opened before it.
            match last_of(inner).filter(|&e| e >= scanned) {
                Some(e) if e > end => {
                    end = e;
                    ender = inner;
                }
                Some(_) => {}
                None => return (text.len(), None),
            }
        }
        scanned += c.len_utf8();
    }
    (end, Some(ender))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key() -> KeyedHash {
        KeyedHash::from_key(&[3; 32]).unwrap()
    }

    #[test]
    fn role_passwords_are_masked_in_every_form_of_the_grammar() {
        for (statement, masked) in [
            (
                "CREATE ROLE r WITH PASSWORD = 'pw1' AND LOGIN = true",
                "CREATE ROLE r WITH PASSWORD = <password: 3 bytes> AND LOGIN = true",
            ),
            (
                "alter role r with login = false and password = $$p'w$$;",
                "alter role r with login = false and password = <password: 3 bytes>;",
            ),
            (
                "CREATE USER u WITH PASSWORD 'it''s' NOSUPERUSER",
                "CREATE USER u WITH PASSWORD <password: 4 bytes> NOSUPERUSER",
            ),
            (
                "ALTER USER u WITH HASHED PASSWORD /* c */ '$2a$10$x'",
                "ALTER USER u WITH HASHED PASSWORD /* c */ <password: 8 bytes>",
            ),
            (
                "CREATE ROLE IF NOT EXISTS \"R\" WITH HASHED PASSWORD = 'h' AND SUPERUSER = false",
                "CREATE ROLE IF NOT EXISTS \"R\" WITH HASHED PASSWORD = <password: 1 bytes> AND SUPERUSER = false",
            ),
        ] {
            assert_eq!(redact_query(statement, None), masked);
        }
        // Not a role statement, or no literal after PASSWORD: left as it is.
        for statement in [
            "SELECT * FROM users WHERE password = 'x'",
            "CREATE ROLE r WITH GENERATED PASSWORD",
            "CREATE ROLE r WITH LOGIN = true; SELECT 'password'",
        ] {
            assert!(
                matches!(redact_query(statement, None), Cow::Borrowed(_)),
                "{statement}"
            );
        }
        // Redacted: the password is masked too, never tagged.
        let redacted = redact_query("CREATE ROLE r WITH PASSWORD = 'pw1'", Some(&key()));
        assert_eq!(
            redacted,
            "CREATE ROLE r WITH PASSWORD = <password: 3 bytes>"
        );
    }

    #[test]
    fn literals_become_tagged_placeholders_and_equal_literals_share_a_tag() {
        let hash = key();
        let redacted = redact_query(
            "SELECT * FROM t WHERE a = 'x''y' AND b IN (1, -2.5e3) AND m['k'] = $$x'y$$ \
             AND v = [0.5, 1.5] AND s = {'a', 'b'} AND u = {f: 1} -- 'gone'",
            Some(&hash),
        );
        let tag = |s: &str| hash.tag(s.as_bytes());
        assert_eq!(
            redacted,
            format!(
                "SELECT * FROM t WHERE a = ?text:{x} AND b IN (?integer:{one}, ?float:{f}) AND \
                 m[?text:{k}] = ?text:{x} AND v = ?list:{list} AND s = ?set:{set} AND \
                 u = {{f: ?integer:{one}}}  ",
                x = tag("x'y"),
                one = tag("1"),
                f = tag("-2.5e3"),
                k = tag("k"),
                list = tag("[0.5, 1.5]"),
                set = tag("{'a', 'b'}"),
            )
        );
    }

    #[test]
    fn collections_of_literals_become_one_placeholder_at_any_nesting() {
        let hash = key();
        let tag = |s: &str| hash.tag(s.as_bytes());
        let redacted = |text: &str| redact_query(text, Some(&hash)).into_owned();
        assert_eq!(
            redacted("SET s = {(1, 'x')}, l = [[1], []]"),
            format!(
                "SET s = ?set:{}, l = ?list:{}",
                tag("{(1, 'x')}"),
                tag("[[1], []]")
            )
        );
        // A collection holding a name or a call keeps its shape, its literals replaced one by one.
        assert_eq!(
            redacted("SET l = [1, now()], u = {a: [2]}"),
            format!(
                "SET l = [?integer:{one}, now()], u = {{a: ?list:{two}}}",
                one = tag("1"),
                two = tag("[2]")
            )
        );
        // Deeper than COLLECTION_DEPTH: literal by literal, nothing left.
        let deep = format!("{}'deepSecret'{}", "[".repeat(12), "]".repeat(12));
        let shown = redacted(&deep);
        assert_eq!(shown.matches('[').count(), 12, "{shown}");
        assert!(!shown.contains("deepSecret"), "{shown}");
        // Hostile text is one linear pass: a few MiB of brackets and literals.
        let hostile = "[{('x', ".repeat(1 << 19);
        assert!(!redacted(&hostile).contains("'x'"));
    }

    #[test]
    fn server_text_keeps_its_words_and_loses_what_it_quotes() {
        let hash = key();
        let tag = |s: &str| hash.tag(s.as_bytes());
        assert_eq!(
            redact_server_text(
                "Invalid STRING constant (a)b) for \"id\" of type int",
                &hash
            ),
            format!(
                "Invalid STRING constant (?:{}) for \"?:{}\" of type int",
                tag("a)b"),
                tag("id")
            )
        );
        assert_eq!(
            redact_server_text("Key length of 70000 is true; 'open", &hash),
            format!(
                "Key length of ?:{} is ?:{}; '?:{}",
                tag("70000"),
                tag("true"),
                tag("open")
            )
        );
        // A word the server's messages do not use is no word of the message: it may be data.
        assert_eq!(
            redact_server_text("Detected partition alice@example.com with bob.", &hash),
            format!(
                "Detected partition ?:{} with ?:{}.",
                tag("alice@example.com"),
                tag("bob")
            )
        );
    }

    /// What Apache Cassandra 5.0.9 answered `ALTER ROLE alice WITH PASSWORD 'correcthorse'` (the
    /// grammar wants `=`): the password quoted, then cut inside brackets after the last quote.
    const SYNTAX_ERROR: &str = "line 1:31 mismatched input 'correcthorse' expecting '=' \
                                (ALTER ROLE alice WITH PASSWORD ['correcthors]...)";

    #[test]
    fn a_token_cut_inside_brackets_after_the_last_quote_is_hidden() {
        let redacted = redact_server_text(SYNTAX_ERROR, &key());
        let masked = mask_server_text(SYNTAX_ERROR);
        for shown in [&redacted, &masked] {
            assert!(!shown.contains("correcthors"), "{shown}");
            assert!(shown.starts_with("line "), "{shown}");
        }
        // From the first quote to the last closer of what opened inside it: the `)` at the end.
        let content = &SYNTAX_ERROR[SYNTAX_ERROR.find('\'').unwrap() + 1..SYNTAX_ERROR.len() - 1];
        assert_eq!(
            masked,
            format!(
                "line 1:31 mismatched input '<masked: {} bytes>)",
                content.len()
            )
        );
        // A quote closing one opened before it is no unclosed opener; one that never closes takes
        // the rest of the text.
        assert_eq!(
            mask_server_text("a 'x' b (y) c"),
            "a '<masked: 1 bytes>' b (<masked: 1 bytes>) c"
        );
        assert_eq!(
            mask_server_text("a 'x' b \"y c"),
            "a '<masked: 1 bytes>' b \"<masked: 3 bytes>"
        );
        assert_eq!(mask_server_text("(a [b) c"), "(<masked: 7 bytes>");
    }

    #[test]
    fn masked_server_text_answering_a_password_statement_is_masked() {
        let masked = ValueForm::Masked.answering(Some("ALTER ROLE alice WITH PASSWORD 'x'"));
        assert!(matches!(masked, ValueForm::MaskedQuotes));
        assert!(!masked.server_text(SYNTAX_ERROR).contains("correcthors"));
        // The statement itself is masked as before.
        assert_eq!(
            masked.query("CREATE USER u WITH PASSWORD 'pw'"),
            "CREATE USER u WITH PASSWORD <password: 2 bytes>"
        );
        // Other statements, no statement, and the other forms: unchanged.
        for (form, statement) in [
            (ValueForm::Masked, Some("SELECT * FROM t WHERE k = 'x'")),
            (ValueForm::Masked, None),
            (ValueForm::Plain, Some("CREATE ROLE r WITH PASSWORD = 'x'")),
        ] {
            let form = form.answering(statement);
            assert_eq!(form.server_text(SYNTAX_ERROR), SYNTAX_ERROR);
        }
        let hash = key();
        let redacted =
            ValueForm::Redacted(&hash).answering(Some("CREATE ROLE r WITH PASSWORD = 'x'"));
        assert_eq!(
            redacted.server_text(SYNTAX_ERROR),
            redact_server_text(SYNTAX_ERROR, &hash)
        );
    }

    #[test]
    fn sasl_plain_needs_exactly_two_nuls_and_a_user() {
        assert_eq!(
            sasl_plain(b"z\0u\0p"),
            Some(SaslPlain {
                authzid: b"z",
                user: b"u",
                password: b"p"
            })
        );
        assert!(sasl_plain(b"\0\0p").is_none());
        assert!(sasl_plain(b"\0u\0p\0").is_none());
        assert!(sasl_plain(b"token").is_none());
        let mut w = JsonWriter::new();
        ValueForm::Masked.write_token(&mut w, Opcode::AuthResponse, Some(b"\0user\0secret"));
        assert_eq!(
            String::from_utf8(w.buf).unwrap(),
            r#"{"sasl_plain":{"authzid":"","user":"user","password":"<password: 6 bytes>"}}"#
        );
        // Only an AUTH_RESPONSE carries credentials; other tokens stay bytes when masked.
        let mut w = JsonWriter::new();
        ValueForm::Masked.write_token(&mut w, Opcode::AuthChallenge, Some(b"\0user\0secret"));
        assert_eq!(
            String::from_utf8(w.buf).unwrap(),
            r#""0x007573657200736563726574""#
        );
    }

    /// A literal of each kind, from generated parts: (its source text, what it says).
    fn literal() -> impl Strategy<Value = String> {
        let word = "[A-Za-z0-9 ,;()*/=?:.'\"-]{3,12}";
        prop_oneof![
            word.prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
            "[A-Za-z0-9 ;'()\"-]{3,12}".prop_map(|s| format!("$${s}$$")),
            (100u64..u64::MAX).prop_map(|n| n.to_string()),
            (1000i64..i64::MAX).prop_map(|n| format!("-{n}")),
            (1u32..1000, 100u32..1000, 0i32..40).prop_map(|(a, b, e)| format!("{a}.{b}e-{e}")),
            "[0-9a-f]{3,20}".prop_map(|h| format!("0x{h}")),
            "[0-9a-f]{32}".prop_map(|h| format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            )),
            (1u32..500, 1u32..60).prop_map(|(h, m)| format!("{h}h{m}m")),
            (1u32..500).prop_map(|d| format!("P{d}DT{d}H")),
        ]
    }

    /// `text` without its placeholders (`?kind:` and 8 hex digits), whose tags may spell a short
    /// literal by chance.
    fn without_placeholders(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('?') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let kind = after
                .find(|c: char| !c.is_ascii_lowercase())
                .unwrap_or(after.len());
            let tag = after[kind..].strip_prefix(':').and_then(|t| t.get(..8));
            match tag.filter(|t| t.bytes().all(|b| b.is_ascii_hexdigit())) {
                // A placeholder leaves a mark, so that the text around it cannot join into a
                // literal's text (`=  W` of `= ?list:… WHERE`).
                Some(_) => {
                    out.push('\u{1}');
                    rest = &after[kind + 9..];
                }
                None => {
                    out.push('?');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// Where a literal goes in a statement (`{}`), with comments that hold literals too.
    const SHAPES: [&str; 8] = [
        "SELECT * FROM ks.t WHERE k = {}",
        "INSERT INTO t (a, b) VALUES ({}, {})",
        "UPDATE t SET l = [{}, {}] WHERE k = {}",
        "UPDATE t SET m = m + {{{}: {}}} WHERE k IN ({}, {})",
        "DELETE FROM t WHERE k = {} -- was {}\n",
        "SELECT {} /* {} */ FROM t // {}",
        "INSERT INTO t (k, u) VALUES ({}, {{f: {}, g: ({}, {})}})",
        "UPDATE t SET s = s - {{{}}} WHERE k = {} IF v = {}",
    ];

    proptest! {
        /// No literal of a generated statement (in its source form or what it says) is left in
        /// the statement redacted, nor in a comment.
        #[test]
        fn no_literal_of_a_generated_statement_survives_redaction(
            shape in 0..SHAPES.len(),
            literals in proptest::collection::vec(literal(), 5),
            key in proptest::array::uniform32(any::<u8>()),
        ) {
            let mut statement = String::new();
            let mut parts = SHAPES[shape].split("{}");
            let mut used = Vec::new();
            let mut literals = literals.into_iter();
            statement.push_str(parts.next().unwrap());
            for part in parts {
                let literal = literals.next().unwrap();
                statement.push_str(&literal);
                used.push(literal);
                statement.push_str(&part.replace("{{", "{").replace("}}", "}"));
            }
            let hash = KeyedHash::from_key(&key).unwrap();
            let redacted = redact_query(&statement, Some(&hash));
            let shown = without_placeholders(&redacted);
            for literal in &used {
                let content = string_content(literal);
                for text in [literal.as_str(), content.as_ref()] {
                    prop_assert!(
                        text.len() < 3 || !shown.contains(text),
                        "{literal:?} in {redacted:?} (from {statement:?})"
                    );
                }
            }
        }

        /// Any text: the tokens cover it, and neither redaction nor server text redaction panics.
        #[test]
        fn any_text_lexes_and_redacts(text in "\\PC{0,60}") {
            prop_assert_eq!(tokens(&text).last().map_or(0, |t| t.range.end), text.len());
            let hash = key();
            let _ = redact_query(&text, Some(&hash));
            let _ = redact_server_text(&text, &hash);
            let _ = mask_server_text(&text);
        }
    }
}
