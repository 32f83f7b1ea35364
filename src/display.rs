//! Text shown to a person: long quotes cut in the middle, and untrusted text made safe for a
//! terminal.

use std::borrow::Cow;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
