//! The text of an explanation: one line per wire item, `offset  bytes  <indent>meaning [path]`.
//!
//! The lines come from [`super::explain`](fn@super::explain) (a value) or from any other decoder that records
//! [`ExplainLine`]s (a protocol message); `base` is added to every offset so that a value inside a
//! larger payload or stream shows where its bytes are there, and `depth` indents it under its parent.

use super::ExplainLine;
use crate::hex;
use std::io::{self, Write};

/// Bytes shown in full on an explain line; longer items show their first half, `…` and the length.
const SHOWN_BYTES: usize = 8;
/// Characters of an item's meaning shown before it is cut with `…` and its length.
const MEANING_CHARS: usize = 100;
/// Width of the bytes column of an explain line.
const BYTES_COLUMN: usize = 24;

/// Writes one line per item of `lines`, whose offsets are into `payload`; printed offsets are
/// `base` + offset and every line is indented `depth` more levels than its own depth.
pub fn write_lines<W: Write>(
    out: &mut W,
    lines: &[ExplainLine],
    payload: &[u8],
    base: usize,
    depth: usize,
) -> io::Result<()> {
    for line in lines {
        writeln!(out, "{}", format_line(line, payload, base, depth))?;
    }
    Ok(())
}

/// One explain line: `offset  bytes  <indent>meaning [path]` (see [`write_lines`]).
pub fn format_line(line: &ExplainLine, payload: &[u8], base: usize, depth: usize) -> String {
    let item = line
        .offset
        .checked_add(line.len)
        .and_then(|end| payload.get(line.offset..end))
        .unwrap_or_default();
    let shown = if line.len == 0 {
        String::new()
    } else if line.len > SHOWN_BYTES {
        let head = item.get(..SHOWN_BYTES / 2).unwrap_or_default();
        format!("{}… ({} bytes)", hex::encode(head), line.len)
    } else {
        hex::encode(item)
    };
    let path = if line.path.is_empty() {
        String::new()
    } else {
        format!(" [{}]", line.path)
    };
    let meaning = match line.meaning.char_indices().nth(MEANING_CHARS) {
        Some((cut, _)) => format!(
            "{}… ({} chars)",
            &line.meaning[..cut],
            line.meaning.chars().count()
        ),
        None => line.meaning.clone(),
    };
    format!(
        "{:04}  {:<width$}  {}{}{}",
        line.offset.saturating_add(base),
        shown,
        "  ".repeat(line.depth + depth),
        meaning,
        path,
        width = BYTES_COLUMN
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{parse_type, UdtRegistry};

    #[test]
    fn base_offsets_and_depth_shift_a_value_inside_a_stream() {
        let ty = parse_type("list<int>", &UdtRegistry::new()).unwrap();
        let payload = crate::hex::parse("00000001 00000004 0000002a").unwrap();
        let explanation = super::super::explain(&ty, &payload);
        let mut out = Vec::new();
        write_lines(&mut out, &explanation.lines, &payload, 100, 1).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("0100  00000001 "));
        assert!(lines[0].ends_with("  element count 1"));
        assert!(lines[2].starts_with("0108  0000002a "));
        assert!(lines[2].ends_with("      int 42 [element 0]"));
    }
}
