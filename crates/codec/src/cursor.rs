//! A bounds-checked reader over one payload, shared by the value codec and the protocol's message
//! bodies.
//!
//! Every read checks the bytes left before it indexes or allocates, a count is checked against the
//! bytes it needs before anything is sized by it, and a fault is a [`DecodeError`] carrying the
//! offset in the payload and the path of steps (`element 3 / field zip`, `row 2 / column id`) from
//! the top of the payload to the faulty item. The cursor reads either at explicit offsets (the value
//! codec, which knows each item's end) or in sequence from its position (message bodies).

use std::fmt;

/// Why bytes could not be decoded: `<message> at byte <offset> (<path>)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct DecodeError {
    /// Which kind of fault it is.
    pub kind: DecodeErrorKind,
    /// What is wrong, e.g. `element length 8 exceeds the 3 bytes left`.
    pub message: String,
    /// Absolute offset in the payload where the faulty item starts.
    pub offset: usize,
    /// Where in the payload, e.g. `element 3 / field zip`; empty at the top level.
    pub path: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)?;
        if !self.path.is_empty() {
            write!(f, " ({})", self.path)?;
        }
        Ok(())
    }
}

/// The kinds of [`DecodeError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// An item or a length it claims runs past the bytes there: a longer payload (or a shorter
    /// claim) might decode.
    Truncated,
    /// The bytes there are not a valid item (a bad length, tag, UTF-8, a value out of range...).
    Malformed,
}

impl DecodeError {
    /// An error of `kind` at `offset` under `path` (empty at the top level).
    pub fn new(
        kind: DecodeErrorKind,
        message: impl Into<String>,
        offset: usize,
        path: impl Into<String>,
    ) -> Self {
        DecodeError {
            kind,
            message: message.into(),
            offset,
            path: path.into(),
        }
    }

    /// The same error seen from an enclosing payload in which this one starts at `base`, under the
    /// path `outer` (prepended; may be empty).
    pub fn within(mut self, base: usize, outer: &str) -> Self {
        self.offset = self.offset.saturating_add(base);
        if !outer.is_empty() {
            self.path = if self.path.is_empty() {
                outer.to_string()
            } else {
                format!("{outer} / {}", self.path)
            };
        }
        self
    }
}

/// "1 trailing byte", "2 trailing bytes".
pub fn trailing(count: usize) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{count} trailing byte{plural}")
}

/// A reader over `bytes` with a position and a path of steps of type `S` (rendered with `Display`,
/// joined by ` / `, only when an error or a trace line needs them).
#[derive(Debug, Clone)]
pub struct Cursor<'b, S> {
    /// The whole payload; every offset is absolute in it.
    bytes: &'b [u8],
    /// Where the next sequential read starts.
    pos: usize,
    /// Steps from the top of the payload to the current item.
    path: Vec<S>,
}

impl<'b, S: fmt::Display> Cursor<'b, S> {
    /// A cursor at the start of `bytes`, at the top level.
    pub fn new(bytes: &'b [u8]) -> Self {
        Cursor {
            bytes,
            pos: 0,
            path: Vec::new(),
        }
    }

    /// The whole payload.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// Where the next sequential read starts.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The number of bytes after the position.
    pub fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// Enters a step of the path (an element, a field, a column…).
    pub fn push(&mut self, step: S) {
        self.path.push(step);
    }

    /// Leaves the innermost step of the path.
    pub fn pop(&mut self) {
        self.path.pop();
    }

    /// The number of steps in the path.
    pub fn depth(&self) -> usize {
        self.path.len()
    }

    /// The path rendered as `step / step / …` (empty at the top level).
    pub fn path(&self) -> String {
        let mut path = String::new();
        for (i, step) in self.path.iter().enumerate() {
            if i > 0 {
                path.push_str(" / ");
            }
            path.push_str(&step.to_string());
        }
        path
    }

    /// A [`DecodeErrorKind::Malformed`] error at `offset` with the current path.
    pub fn error(&self, offset: usize, message: impl Into<String>) -> DecodeError {
        DecodeError::new(DecodeErrorKind::Malformed, message, offset, self.path())
    }

    /// A [`DecodeErrorKind::Truncated`] error at `offset` with the current path.
    pub fn truncated(&self, offset: usize, message: impl Into<String>) -> DecodeError {
        DecodeError::new(DecodeErrorKind::Truncated, message, offset, self.path())
    }

    /// The bytes `start..end`; an out-of-range request is an error, not a panic.
    pub fn slice(&self, start: usize, end: usize) -> Result<&'b [u8], DecodeError> {
        self.bytes
            .get(start..end)
            .ok_or_else(|| self.truncated(start, "value runs past the end of the payload"))
    }

    /// The `N` bytes at `pos`, read no further than `end`; `what` names them in the error.
    pub fn array_at<const N: usize>(
        &self,
        pos: usize,
        end: usize,
        what: &str,
    ) -> Result<[u8; N], DecodeError> {
        self.bytes
            .get(pos..end)
            .and_then(|rest| rest.first_chunk::<N>())
            .copied()
            .ok_or_else(|| {
                let left = end.min(self.bytes.len()).saturating_sub(pos);
                self.truncated(
                    pos,
                    format!("truncated {what}: needs {N} bytes but only {left} are left"),
                )
            })
    }

    /// Reads a 4-byte big-endian `[int]` at `pos`, no further than `end`.
    pub fn int_at(&self, pos: usize, end: usize, what: &str) -> Result<i32, DecodeError> {
        self.array_at(pos, end, what).map(i32::from_be_bytes)
    }

    /// Checks that `count` items of at least `min_item` bytes each fit in the bytes from `start` to
    /// `end`, so that nothing is sized by a count the payload cannot hold.
    pub fn check_fits(
        &self,
        at: usize,
        start: usize,
        end: usize,
        count: usize,
        min_item: u64,
        what: &str,
    ) -> Result<(), DecodeError> {
        let left = end.saturating_sub(start);
        let needed = (count as u64).saturating_mul(min_item);
        if needed > left as u64 {
            return Err(self.error(
                at,
                format!("{what} {count} needs at least {needed} bytes but only {left} are left"),
            ));
        }
        Ok(())
    }

    /// Reads an `[int]` count at `start` (no further than `end`), rejects a negative one and checks
    /// that `count` items of at least `min_item` bytes fit before `end`.
    pub fn count_at(
        &self,
        start: usize,
        end: usize,
        what: &str,
        min_item: u64,
    ) -> Result<usize, DecodeError> {
        let count = self.int_at(start, end, what)?;
        let Ok(count) = usize::try_from(count) else {
            return Err(self.error(start, format!("invalid {what} {count}")));
        };
        self.check_fits(start, start.saturating_add(4), end, count, min_item, what)?;
        Ok(count)
    }

    /// Reads the next `N` bytes and moves past them.
    pub fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DecodeError> {
        let bytes = self.array_at::<N>(self.pos, self.bytes.len(), what)?;
        self.pos += N;
        Ok(bytes)
    }

    /// Reads the next `len` bytes and moves past them.
    pub fn take(&mut self, len: usize, what: &str) -> Result<&'b [u8], DecodeError> {
        let left = self.left();
        if len > left {
            return Err(self.truncated(
                self.pos,
                format!("{what} of {len} bytes exceeds the {left} bytes left"),
            ));
        }
        let bytes = self.slice(self.pos, self.pos + len)?;
        self.pos += len;
        Ok(bytes)
    }

    /// Reads an unsigned byte.
    pub fn u8(&mut self, what: &str) -> Result<u8, DecodeError> {
        self.array::<1>(what).map(u8::from_be_bytes)
    }

    /// Reads a big-endian unsigned 2-byte `[short]`.
    pub fn u16(&mut self, what: &str) -> Result<u16, DecodeError> {
        self.array(what).map(u16::from_be_bytes)
    }

    /// Reads a big-endian 4-byte `[int]`.
    pub fn i32(&mut self, what: &str) -> Result<i32, DecodeError> {
        self.array(what).map(i32::from_be_bytes)
    }

    /// Reads a big-endian 8-byte `[long]`.
    pub fn i64(&mut self, what: &str) -> Result<i64, DecodeError> {
        self.array(what).map(i64::from_be_bytes)
    }

    /// Fails when bytes are left after the position; `what` names what ended, e.g. `the body`.
    pub fn expect_end(&self, what: &str) -> Result<(), DecodeError> {
        match self.left() {
            0 => Ok(()),
            left => Err(self.error(self.pos, format!("{} after {what}", trailing(left)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_reads_check_the_bytes_left() {
        let mut cursor: Cursor<'_, &str> = Cursor::new(&[0, 1, 0, 0, 0, 2, 9]);
        assert_eq!(cursor.u16("short").unwrap(), 1);
        cursor.push("field x");
        assert_eq!(cursor.i32("int").unwrap(), 2);
        let error = cursor.i32("length").unwrap_err();
        assert_eq!(
            error.to_string(),
            "truncated length: needs 4 bytes but only 1 are left at byte 6 (field x)"
        );
        let error = cursor.take(5, "blob").unwrap_err();
        assert_eq!(error.message, "blob of 5 bytes exceeds the 1 bytes left");
        assert_eq!(error.kind, DecodeErrorKind::Truncated);
        cursor.pop();
        assert_eq!(
            cursor.expect_end("the body").unwrap_err().to_string(),
            "1 trailing byte after the body at byte 6"
        );
        assert_eq!(cursor.u8("byte").unwrap(), 9);
        assert!(cursor.expect_end("the body").is_ok());
    }

    #[test]
    fn counts_are_checked_against_the_bytes_they_need() {
        let cursor: Cursor<'_, &str> = Cursor::new(&[0x7f, 0xff, 0xff, 0xff, 0, 0]);
        let error = cursor.count_at(0, 6, "row count", 4).unwrap_err();
        assert_eq!(
            error.message,
            "row count 2147483647 needs at least 8589934588 bytes but only 2 are left"
        );
        let cursor: Cursor<'_, &str> = Cursor::new(&[0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(
            cursor.count_at(0, 4, "count", 1).unwrap_err().message,
            "invalid count -2"
        );
    }

    #[test]
    fn errors_seen_from_an_enclosing_payload() {
        let cursor: Cursor<'_, &str> = Cursor::new(&[]);
        let error = cursor.error(3, "bad").within(10, "value 2");
        assert_eq!(error.to_string(), "bad at byte 13 (value 2)");
        let error = DecodeError {
            path: "element 1".into(),
            ..error
        }
        .within(1, "row 0");
        assert_eq!(error.to_string(), "bad at byte 14 (row 0 / element 1)");
    }
}
