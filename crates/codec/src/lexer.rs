//! The lexer shared by the type grammar ([`crate::types`]) and the CQL literal parser
//! ([`crate::value::cql`]): a cursor over the text itself, moving in byte offsets.
//!
//! Nothing is copied or decoded ahead: a token is a slice of the text. Error messages count in
//! characters, so an offset becomes a character position only when an error is made
//! ([`Lexer::char_position`]).

/// A cursor over a text, at a byte offset that is always on a character boundary.
#[derive(Debug, Clone)]
pub(crate) struct Lexer<'a> {
    /// The whole text.
    text: &'a str,
    /// The byte offset of the next character.
    at: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Lexer { text, at: 0 }
    }

    /// The byte offset of the next character.
    pub(crate) fn offset(&self) -> usize {
        self.at
    }

    /// The text from the next character on.
    pub(crate) fn rest(&self) -> &'a str {
        self.text.get(self.at..).unwrap_or_default()
    }

    /// The position in characters (from 0) of the byte offset `offset`, for error messages.
    pub(crate) fn char_position(&self, offset: usize) -> usize {
        let before = self.text.get(..offset).unwrap_or(self.text);
        before.chars().count()
    }

    /// The next character, not consumed.
    pub(crate) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// The character after the next one, not consumed.
    pub(crate) fn peek_second(&self) -> Option<char> {
        let mut chars = self.rest().chars();
        chars.next();
        chars.next()
    }

    /// Whether the rest of the text starts with `prefix`.
    pub(crate) fn starts_with(&self, prefix: &str) -> bool {
        self.rest().starts_with(prefix)
    }

    /// Moves past the next character, if any.
    pub(crate) fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.at += c.len_utf8();
        }
    }

    /// Moves past the next `len` bytes, which the caller has seen end on a character boundary.
    pub(crate) fn advance(&mut self, len: usize) {
        self.at = (self.at + len).min(self.text.len());
        debug_assert!(self.text.is_char_boundary(self.at));
    }

    /// Consumes `c` when it is the next character.
    pub(crate) fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += c.len_utf8();
        }
        found
    }

    /// Skips whitespace (as [`char::is_whitespace`] defines it) and returns the new offset.
    pub(crate) fn skip_whitespace(&mut self) -> usize {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
        self.at
    }

    /// Consumes the run of characters that satisfy `keep` and returns it.
    pub(crate) fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &'a str {
        let rest = self.rest();
        let len = rest.find(|c: char| !keep(c)).unwrap_or(rest.len());
        self.at += len;
        &rest[..len]
    }

    /// Whether the text at the cursor is `word` (ASCII, any case) not followed by an identifier
    /// character (a letter, a digit or `_`).
    pub(crate) fn at_keyword(&self, word: &str) -> bool {
        let rest = self.rest();
        rest.get(..word.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(word))
            && !rest[word.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
    }

    /// Reads a string between two `quote`s, in which a doubled quote stands for one; the next
    /// character is the opening quote. `None` when the closing quote is missing (the cursor then
    /// stays at the opening quote).
    pub(crate) fn quoted(&mut self, quote: char) -> Option<String> {
        let start = self.at;
        self.at += quote.len_utf8();
        let mut text = String::new();
        loop {
            let rest = self.rest();
            let Some(end) = rest.find(quote) else {
                self.at = start;
                return None;
            };
            text.push_str(&rest[..end]);
            self.at += end + quote.len_utf8();
            if !self.eat(quote) {
                return Some(text);
            }
            text.push(quote);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_bytes_and_positions_characters() {
        let mut lexer = Lexer::new("  é x");
        assert_eq!(lexer.skip_whitespace(), 2);
        assert_eq!(lexer.peek(), Some('é'));
        lexer.bump();
        assert_eq!(lexer.offset(), 4);
        let x = lexer.skip_whitespace();
        assert_eq!((x, lexer.char_position(x)), (5, 4));
        assert_eq!(lexer.take_while(char::is_alphanumeric), "x");
        assert_eq!(lexer.peek(), None);
    }

    #[test]
    fn whitespace_is_unicode_whitespace() {
        let mut lexer = Lexer::new("\u{0b}\u{a0}\u{2003}x");
        lexer.skip_whitespace();
        assert_eq!(lexer.rest(), "x");
    }

    #[test]
    fn quoted_strings_undouble_their_quotes() {
        let mut lexer = Lexer::new("'it''s' rest");
        assert_eq!(lexer.quoted('\'').as_deref(), Some("it's"));
        assert_eq!(lexer.rest(), " rest");
        let mut lexer = Lexer::new("'open''");
        assert_eq!(lexer.quoted('\''), None);
        assert_eq!(lexer.offset(), 0);
    }

    #[test]
    fn keywords_end_at_a_non_identifier_character() {
        assert!(Lexer::new("NULL,").at_keyword("null"));
        assert!(Lexer::new("null").at_keyword("null"));
        assert!(!Lexer::new("nullx").at_keyword("null"));
        assert!(!Lexer::new("nul").at_keyword("null"));
        assert!(!Lexer::new("nulé").at_keyword("null"));
    }
}
