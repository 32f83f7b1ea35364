//! Items of a message body read again where decoding kept only their place: bound values, rows,
//! a SUPPORTED's options and failure reasons are ranges of the body, checked when the message was
//! decoded, and read again through this as they are written.

use super::types::Cell;
use crate::cursor::Cursor;
use std::ops::Range;

/// A cursor over the body up to the end of a kept range, from its start. Each read is `None` past
/// that end, which a range decoding checked never meets.
#[derive(Debug, Clone)]
pub(crate) struct Reread<'a>(Cursor<'a, &'static str>);

impl<'a> Reread<'a> {
    /// At the start of `range` of `body`.
    pub(crate) fn new(body: &'a [u8], range: &Range<usize>) -> Self {
        let mut cursor = Cursor::new(body.get(..range.end).unwrap_or_default());
        // Offsets stay those of the body: the first bytes are passed, not cut off.
        let _ = cursor.take(range.start, "");
        Reread(cursor)
    }

    /// The next `len` bytes, as a range of the body.
    pub(crate) fn take(&mut self, len: usize) -> Option<Range<usize>> {
        let start = self.0.pos();
        self.0.take(len, "").ok()?;
        Some(start..self.0.pos())
    }

    /// A `[byte]`.
    pub(crate) fn byte(&mut self) -> Option<u8> {
        self.0.u8("").ok()
    }

    /// A `[short]`.
    pub(crate) fn short(&mut self) -> Option<u16> {
        self.0.u16("").ok()
    }

    /// The bytes at `range` (one [`Reread::take`] gave).
    pub(crate) fn bytes(&self, range: Range<usize>) -> &'a [u8] {
        &self.0.bytes()[range]
    }

    /// A `[string]`.
    pub(crate) fn string(&mut self) -> Option<&'a str> {
        let len = self.short()?;
        let range = self.take(len.into())?;
        std::str::from_utf8(self.bytes(range)).ok()
    }

    /// A `[value]`: [`Cell::Value`] when its type is `known`, else [`Cell::Bytes`].
    pub(crate) fn cell(&mut self, known: bool) -> Option<Cell> {
        let length = self.0.i32("").ok()?;
        Some(match usize::try_from(length) {
            Ok(len) if known => Cell::Value(self.take(len)?),
            Ok(len) => Cell::Bytes(self.take(len)?),
            Err(_) if length == -2 => Cell::Unset,
            Err(_) => Cell::Null,
        })
    }
}
