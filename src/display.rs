//! Text shown to a person: long quotes cut in the middle ([`elide`]), and untrusted text made safe
//! for a terminal ([`visible`]).

use std::borrow::Cow;
use std::io::{self, Write};

/// `text` when it has at most `max_chars` characters, else its first and last `max_chars / 2`
/// characters around `…`, so that an error quoting a 60 KB input stays one readable line with both
/// ends (where the interesting part usually is) kept.
pub fn elide(text: &str, max_chars: usize) -> Cow<'_, str> {
    let keep = max_chars / 2;
    let count = text.chars().count();
    if count <= max_chars {
        return Cow::Borrowed(text);
    }
    let head_end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(count - keep)
        .map_or(text.len(), |(i, _)| i);
    Cow::Owned(format!("{}…{}", &text[..head_end], &text[tail_start..]))
}

/// Whether a character could change what a terminal shows beyond itself: C0 controls other than
/// newline and tab (ESC starts escape sequences, CR and BS overwrite), DEL, C1 controls (CSI) and the
/// bidirectional embeddings, overrides and isolates (which reorder the text around them).
fn is_hazard(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` made safe to show on a terminal: each character that [`is_hazard`] says could act on the
/// terminal is shown visibly instead, a C0 control or DEL as its Unicode control picture (`␛` for
/// ESC, `␍` for CR, `␡` for DEL), any other as `<U+XXXX>`. Newlines and tabs are kept.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hazard) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !is_hazard(c) => shown.push(c),
            '\u{0}'..='\u{1f}' => shown.push(char::from_u32(0x2400 + c as u32).unwrap_or('?')),
            '\u{7f}' => shown.push('\u{2421}'),
            c => shown.push_str(&format!("<U+{:04X}>", c as u32)),
        }
    }
    Cow::Owned(shown)
}

/// A writer that passes UTF-8 text through [`visible`] (bytes that are not UTF-8 pass as they are).
/// `write!`/`writeln!` hand a writer whole string pieces, so formatted untrusted text is made safe
/// for a terminal piece by piece; put it in front of any buffering.
pub struct Visible<W>(pub W);

impl<W: Write> Write for Visible<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => self.0.write_all(visible(text).as_bytes())?,
            Err(_) => self.0.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_writer_shows_controls_in_formatted_text() {
        let mut out = Visible(Vec::new());
        writeln!(out, "name {:?} ok", "\u{1b}[31mred").unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "name \"\\u{1b}[31mred\" ok\n"
        );
        let mut out = Visible(Vec::new());
        let text = "a\u{1b}[2Jb\rc";
        writeln!(out, "{text}").unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "a\u{241b}[2Jb\u{240d}c\n"
        );
    }

    #[test]
    fn elide_keeps_both_ends() {
        assert_eq!(elide("short", 10), "short");
        assert_eq!(elide("0123456789", 10), "0123456789");
        assert_eq!(elide("0123456789a", 10), "01234…6789a");
        assert_eq!(elide("ééééééé", 4), "éé…éé");
        let long = format!("{}int{}", "list<".repeat(10_000), ">".repeat(10_000));
        let short = elide(&long, 100);
        assert_eq!(short.chars().count(), 101);
        assert!(short.starts_with("list<list<") && short.ends_with(">>>"));
    }

    #[test]
    fn visible_shows_what_would_act_on_a_terminal() {
        assert_eq!(visible("plain\ttext\né"), "plain\ttext\né");
        assert_eq!(visible("\u{1b}[31mred\r\u{7}"), "␛[31mred␍␇");
        assert_eq!(visible("\u{0}\u{7f}\u{9b}"), "␀␡<U+009B>");
        assert_eq!(visible("abc\u{202e}def"), "abc<U+202E>def");
    }
}
