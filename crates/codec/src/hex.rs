//! Hex text as users paste it: `xxd -p` output, Wireshark hex streams, `0x…` literals.
//!
//! [`HexReader`] reads such text as a stream of bytes: it validates while it reads, stops at the first
//! bad character with its position, and holds only a small buffer, so a caller can apply its size
//! limits to the bytes decoded so far. [`parse`] is the same reader over a string.

use std::io::{self, Read};

/// Why a piece of hex text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HexError {
    /// A character that is neither a hex digit nor ignorable punctuation.
    #[error("invalid hex character {character:?} at character {position}")]
    InvalidCharacter {
        /// The offending character.
        character: char,
        /// Its index (in characters) in the input text.
        position: usize,
    },
    /// The digits do not pair up into bytes.
    #[error("odd number of hex digits ({0})")]
    OddLength(usize),
    /// Bytes that are not UTF-8 text (raw binary data rather than hex).
    #[error("byte 0x{byte:02x} at character {position} is not UTF-8 text")]
    NotText {
        /// The first byte of the invalid sequence.
        byte: u8,
        /// Its index (in characters) in the input text.
        position: usize,
    },
    /// A line starting with an 8-digit offset and `: `, as `xxd` prints without `-p`.
    #[error("xxd output with offsets and a text column at character {position} (use `xxd -p`)")]
    XxdDump {
        /// Index (in characters) of the `:` after the offset.
        position: usize,
    },
}

impl HexError {
    /// Whether the text looks like raw binary bytes rather than hex (not UTF-8, or a control
    /// character other than whitespace).
    pub fn looks_binary(&self) -> bool {
        match self {
            HexError::NotText { .. } => true,
            HexError::InvalidCharacter { character, .. } => character.is_control(),
            _ => false,
        }
    }

    /// The hex error carried by an I/O error of a [`HexReader`], if it is one.
    pub fn from_io(error: &io::Error) -> Option<&HexError> {
        error.get_ref().and_then(|e| e.downcast_ref::<HexError>())
    }
}

/// Parses hex text, tolerating upper and lower case, `0x` prefixes, whitespace, `:` and newlines.
///
/// A `0x` may start the text or any whitespace-separated word, so `0x01 0x02` and `0x0102` both work.
pub fn parse(text: &str) -> Result<Vec<u8>, HexError> {
    let mut bytes = Vec::with_capacity(text.len() / 2);
    match HexReader::new(text.as_bytes()).read_to_end(&mut bytes) {
        Ok(_) => Ok(bytes),
        Err(e) => Err(HexError::from_io(&e)
            .cloned()
            .unwrap_or(HexError::OddLength(0))),
    }
}

/// Size of the buffer a [`HexReader`] reads its input into.
const CHUNK: usize = 8 << 10;

/// Reads hex text (the syntax of [`parse`]) from `inner` and yields the bytes it spells.
///
/// Reads its input in 8 KiB chunks and never holds more. The first invalid character (or an odd
/// number of digits at the end) makes `read` fail with an [`io::ErrorKind::InvalidData`] error that
/// carries the [`HexError`] (see [`HexError::from_io`]); every later `read` fails the same way. I/O
/// errors of `inner` pass through.
pub struct HexReader<R> {
    inner: R,
    buf: Box<[u8]>,
    /// Unread input is `buf[start..end]`.
    start: usize,
    end: usize,
    /// Characters consumed so far.
    chars: usize,
    /// Hex digits consumed so far.
    digits: usize,
    /// The high nibble of a byte whose low nibble is still to come.
    high: Option<u8>,
    /// Whether the next character starts a word (after the start, whitespace or `:`).
    word_start: bool,
    /// A `0` at the start of a word, held until the next character tells whether it starts `0x`.
    zero_pending: bool,
    /// Hex digits since the start of the line while the line holds only digits, up to 8.
    line_digits: Option<usize>,
    /// A `:` after an 8-digit offset at a line start; a following space means xxd output.
    offset_colon: Option<usize>,
    /// A multi-byte UTF-8 character being collected: its bytes so far, and how many it has.
    utf8: ([u8; 4], usize, usize),
    /// The error that stopped reading.
    failed: Option<HexError>,
    /// Whether `inner` reached its end.
    eof: bool,
}

impl<R: Read> HexReader<R> {
    /// A reader of the hex text that `inner` yields.
    pub fn new(inner: R) -> Self {
        HexReader {
            inner,
            buf: vec![0; CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
            chars: 0,
            digits: 0,
            high: None,
            word_start: true,
            zero_pending: false,
            line_digits: Some(0),
            offset_colon: None,
            utf8: ([0; 4], 0, 0),
            failed: None,
            eof: false,
        }
    }

    /// Characters of text consumed so far.
    pub fn characters_read(&self) -> usize {
        self.chars
    }

    /// Takes one input byte: a byte of output when it completes one.
    fn take_byte(&mut self, b: u8) -> Result<Option<u8>, HexError> {
        let (bytes, have, need) = &mut self.utf8;
        let c = if *have > 0 || b >= 0x80 {
            let not_text = |byte| HexError::NotText {
                byte,
                position: self.chars,
            };
            if *have == 0 {
                *need = match b {
                    0xC2..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    0xF0..=0xF4 => 4,
                    _ => return Err(not_text(b)),
                };
            } else if b & 0xC0 != 0x80 {
                return Err(not_text(bytes[0]));
            }
            bytes[*have] = b;
            *have += 1;
            if *have < *need {
                return Ok(None);
            }
            *have = 0;
            let sequence = &bytes[..*need];
            match std::str::from_utf8(sequence)
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(c) => c,
                None => return Err(not_text(sequence[0])),
            }
        } else {
            char::from(b)
        };
        self.take_char(c)
    }

    /// Takes one character: a byte of output when it completes one.
    fn take_char(&mut self, c: char) -> Result<Option<u8>, HexError> {
        let position = self.chars;
        self.chars += 1;
        if let Some(colon) = self.offset_colon.take() {
            if c == ' ' {
                return Err(HexError::XxdDump { position: colon });
            }
        }
        if std::mem::take(&mut self.zero_pending) {
            if matches!(c, 'x' | 'X') {
                self.line_digits = None;
                return Ok(None);
            }
            self.nibble(0);
        }
        if c.is_whitespace() || c == ':' {
            if c == ':' && self.line_digits == Some(8) {
                self.offset_colon = Some(position);
            }
            self.line_digits = (c == '\n').then_some(0);
            self.word_start = true;
            return Ok(None);
        }
        let at_word_start = std::mem::take(&mut self.word_start);
        if c == '0' && at_word_start && self.high.is_none() {
            self.zero_pending = true;
            return Ok(None);
        }
        let nibble = c.to_digit(16).ok_or(HexError::InvalidCharacter {
            character: c,
            position,
        })?;
        Ok(self.nibble(nibble as u8))
    }

    /// Takes one hex digit's value: a byte of output when it is the low nibble.
    fn nibble(&mut self, nibble: u8) -> Option<u8> {
        self.digits += 1;
        // Past 8 digits the line cannot start with an xxd offset.
        self.line_digits = self
            .line_digits
            .map(|count| count + 1)
            .filter(|&count| count <= 8);
        match self.high.take() {
            None => {
                self.high = Some(nibble);
                None
            }
            Some(high) => Some(high << 4 | nibble),
        }
    }

    /// Checks the state at the end of the text.
    fn finish(&mut self) -> Result<(), HexError> {
        if self.utf8.1 > 0 {
            return Err(HexError::NotText {
                byte: self.utf8.0[0],
                position: self.chars,
            });
        }
        if std::mem::take(&mut self.zero_pending) {
            self.nibble(0);
        }
        match self.high {
            Some(_) => Err(HexError::OddLength(self.digits)),
            None => Ok(()),
        }
    }
}

impl<R: Read> Read for HexReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let invalid = |e: &HexError| io::Error::new(io::ErrorKind::InvalidData, e.clone());
        if let Some(e) = &self.failed {
            return Err(invalid(e));
        }
        let mut n = 0;
        while n < out.len() {
            if self.start == self.end {
                if n > 0 || self.eof {
                    break;
                }
                match self.inner.read(&mut self.buf) {
                    Ok(0) => {
                        self.eof = true;
                        if let Err(e) = self.finish() {
                            self.failed = Some(e);
                        }
                        break;
                    }
                    Ok(read) => {
                        self.start = 0;
                        self.end = read;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
                continue;
            }
            if !self.word_start && !self.zero_pending && self.line_digits.is_none() {
                // Fast path: a digit in the middle of a word (the state checks need no update).
                if let Some(digit) = char::from(self.buf[self.start]).to_digit(16) {
                    self.start += 1;
                    self.chars += 1;
                    if let Some(byte) = self.nibble(digit as u8) {
                        out[n] = byte;
                        n += 1;
                    }
                    continue;
                }
            }
            let b = self.buf[self.start];
            self.start += 1;
            match self.take_byte(b) {
                Ok(Some(byte)) => {
                    out[n] = byte;
                    n += 1;
                }
                Ok(None) => {}
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
            }
        }
        match &self.failed {
            Some(e) if n == 0 => Err(invalid(e)),
            _ => Ok(n),
        }
    }
}

/// Formats bytes as lowercase hex digits without prefix or separators.
pub fn encode(bytes: &[u8]) -> String {
    let mut text = Vec::new();
    encode_into(bytes, &mut text);
    String::from_utf8(text).expect("hex digits are ASCII")
}

/// Appends `bytes` to `out` as lowercase hex digits (const-hex: SIMD where the CPU has it, fast
/// enough for gigabytes of hex output), through a small buffer that stays in cache rather than
/// zero-filling `out` first.
pub fn encode_into(bytes: &[u8], out: &mut Vec<u8>) {
    const STEP: usize = 4096;
    let mut digits = [0u8; 2 * STEP];
    out.reserve(2 * bytes.len());
    for chunk in bytes.chunks(STEP) {
        let digits = &mut digits[..2 * chunk.len()];
        const_hex::encode_to_slice(chunk, digits).expect("two digits of room per byte");
        out.extend_from_slice(digits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_common_pastes() {
        assert_eq!(parse("0x00ff").unwrap(), vec![0x00, 0xff]);
        assert_eq!(parse("00:FF:10").unwrap(), vec![0x00, 0xff, 0x10]);
        assert_eq!(parse(" 00 ff\n10\r\n").unwrap(), vec![0x00, 0xff, 0x10]);
        assert_eq!(parse("0X0a 0x0B").unwrap(), vec![0x0a, 0x0b]);
        assert_eq!(parse("").unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn a_zero_inside_a_word_is_a_digit() {
        assert_eq!(parse("00").unwrap(), vec![0]);
        assert_eq!(
            parse("0a0x").unwrap_err(),
            HexError::InvalidCharacter {
                character: 'x',
                position: 3
            }
        );
    }

    #[test]
    fn rejects_bad_text() {
        assert_eq!(
            parse("0g").unwrap_err(),
            HexError::InvalidCharacter {
                character: 'g',
                position: 1
            }
        );
        assert_eq!(parse("abc").unwrap_err(), HexError::OddLength(3));
    }

    #[test]
    fn encode_is_lowercase_and_inverse_of_parse() {
        let bytes: Vec<u8> = (0..=255).collect();
        let text = encode(&bytes);
        assert_eq!(&text[..6], "000102");
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(text, expected);
        assert_eq!(parse(&text).unwrap(), bytes);
        let mut out = b"0x".to_vec();
        encode_into(&bytes, &mut out);
        assert_eq!(out, [b"0x", text.as_bytes()].concat());
        // Every length around the 8-byte steps, at every alignment, against std's formatting.
        for (start, len) in (0..8).flat_map(|start| (0..=19).map(move |len| (start, len))) {
            let piece = &bytes[200 + start..200 + start + len];
            let expected: String = piece.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(encode(piece), expected);
        }
    }
    #[test]
    fn rejects_binary_and_xxd_dumps() {
        let error = parse("00\u{0}").unwrap_err();
        assert!(error.looks_binary(), "{error}");
        let error = HexReader::new(&b"00\xff\xfe"[..])
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        let error = HexError::from_io(&error).unwrap();
        assert_eq!(
            *error,
            HexError::NotText {
                byte: 0xff,
                position: 2
            }
        );
        assert!(error.looks_binary());
        assert_eq!(
            parse("00000000: 0000 002a                                ...*\n").unwrap_err(),
            HexError::XxdDump { position: 8 }
        );
        assert_eq!(
            parse("deadbeef:00").unwrap(),
            vec![0xde, 0xad, 0xbe, 0xef, 0]
        );
        assert_eq!(parse("0a\u{a0}0b\u{3000}").unwrap(), vec![0x0a, 0x0b]);
        assert_eq!(
            parse("0a\u{e9}").unwrap_err(),
            HexError::InvalidCharacter {
                character: '\u{e9}',
                position: 2
            }
        );
    }

    /// Yields its text one byte per `read`, as a slow pipe may.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            match (self.0.split_first(), out.first_mut()) {
                (Some((&b, rest)), Some(slot)) => {
                    *slot = b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    /// What reading `reader` to its end gives: the bytes, or the hex error.
    fn read_all(reader: impl Read) -> Result<Vec<u8>, HexError> {
        let mut bytes = Vec::new();
        match HexReader::new(reader).read_to_end(&mut bytes) {
            Ok(_) => Ok(bytes),
            Err(e) => Err(HexError::from_io(&e).cloned().expect("a hex error")),
        }
    }

    proptest::proptest! {
        /// Any text, valid or not, reads the same whole or a byte at a time, and the reader never
        /// reads more input than it needs: bytes past the first error stay unread.
        #[test]
        fn streaming_matches_whole_text(
            text in proptest::collection::vec(
                proptest::sample::select(b"0123456789abcdefABCDEFxX: \n\r\tg\0\xc3\xa9\xff".to_vec()),
                0..200,
            )
        ) {
            let whole = read_all(&text[..]);
            proptest::prop_assert_eq!(&whole, &read_all(Trickle(&text)));
            if let Ok(str_text) = std::str::from_utf8(&text) {
                proptest::prop_assert_eq!(&whole, &parse(str_text));
            }
        }

        /// Text that claims much more than a limit holds: reading through `take(limit)` yields at
        /// most `limit` bytes, after consuming at most one chunk more than those bytes' digits.
        #[test]
        fn limits_apply_to_what_was_read(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2000),
            limit in 0u64..1000,
            repeat in 1usize..2000,
        ) {
            let text = encode(&bytes).repeat(repeat);
            let mut reader = HexReader::new(text.as_bytes());
            let mut out = Vec::new();
            (&mut reader).take(limit).read_to_end(&mut out).unwrap();
            proptest::prop_assert!(out.len() as u64 <= limit);
            proptest::prop_assert!(reader.characters_read() <= 2 * out.len() + CHUNK);
        }
    }
}
