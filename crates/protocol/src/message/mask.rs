//! What the body reader asks of a masking policy while it explains a body: the parts of a body
//! that hold captured data ([`Captured`]) are marked as they are read, and a [`Mask`] decides,
//! once per part, whether its explain lines are shown or replaced by one line of its own. The
//! message layer knows no policy: the inspector's forms (plain, masked, redacted) implement it.

use super::types::ColumnType;
use super::Opcode;
use crate::value::ExplainLine;
use std::ops::Range;

/// What a part of a message body that holds captured data holds, as the body reader marks it.
#[derive(Debug, Clone, Copy)]
pub enum Captured<'a> {
    /// A row or bound value (`[value]`) of this type, when known.
    Value(Option<&'a ColumnType>),
    /// `[bytes]`: an auth token, a paging state, a custom payload value.
    Bytes,
    /// A query text (`[long string]`).
    Query,
    /// The query text of the statement an EXECUTE runs, known from its PREPARE (a span of no
    /// bytes).
    PreparedQuery(&'a str),
    /// A server's text (`[string]`): an error message or a warning.
    ServerText,
}

/// A masking policy of explain lines: what the first line of a part of captured data says when
/// the policy hides it.
pub trait Mask {
    /// The meaning of the one line that replaces the explain lines of the captured data `what`
    /// of `kind` (its bytes `content`, length prefix left out) in a message of `opcode`; `None`
    /// shows them as they are.
    fn hidden(
        &self,
        what: &str,
        kind: Captured<'_>,
        content: &[u8],
        opcode: Opcode,
    ) -> Option<String>;
}

/// A part of a message body that holds captured data, being explained: where it is, and what its
/// first line says when the mask hides it.
#[derive(Debug, Clone)]
pub(crate) struct OpenSpan {
    /// Its bytes in the body, length prefix included.
    range: Range<usize>,
    /// The bytes of its length prefix (2 or 4).
    prefix: usize,
    /// Its first line's meaning when hidden; `None`: shown as it is.
    hidden: Option<String>,
}

impl OpenSpan {
    /// The span of captured data `what` (its bytes at `range` of `body`, `prefix` of them its
    /// length) as `mask` shows the explain lines inside it, decided once: see
    /// [`OpenSpan::show`]. `opcode` is the message's.
    pub(crate) fn open(
        mask: &dyn Mask,
        range: Range<usize>,
        prefix: usize,
        what: &str,
        kind: Captured<'_>,
        body: &[u8],
        opcode: Opcode,
    ) -> OpenSpan {
        let content = body
            .get(range.start + prefix..range.end)
            .unwrap_or_default();
        OpenSpan {
            hidden: mask.hidden(what, kind, content, opcode),
            range,
            prefix,
        }
    }

    /// Whether the lines inside it are dropped (its first line replaced).
    pub(crate) fn is_hidden(&self) -> bool {
        self.hidden.is_some()
    }

    /// `line` as shown: a line inside a hidden span goes (`None`), and its first line says what
    /// the span was, redacted or masked; a line of no bytes at the start of a span of no bytes (a
    /// prepared query) is that span's, and so is no other line at a span's start but its first.
    pub(crate) fn show(&self, line: ExplainLine) -> Option<ExplainLine> {
        let range = &self.range;
        let inside = if range.is_empty() {
            line.len == 0 && line.offset == range.start
        } else {
            line.offset >= range.start
                && line.offset < range.end
                && (line.offset > range.start || line.len > 0)
        };
        match &self.hidden {
            Some(meaning) if inside => (line.offset == range.start).then(|| ExplainLine {
                len: self.prefix,
                meaning: meaning.clone(),
                ..line
            }),
            _ => Some(line),
        }
    }
}
