//! Hex text as users paste it: `xxd -p` output, Wireshark hex streams, `0x…` literals.

/// Why a piece of hex text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
}

/// Parses hex text, tolerating upper and lower case, `0x` prefixes, whitespace, `:` and newlines.
///
/// A `0x` may start the text or any whitespace-separated word, so `0x01 0x02` and `0x0102` both work.
pub fn parse(text: &str) -> Result<Vec<u8>, HexError> {
    let mut bytes = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    let mut digits = 0usize;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at_word_start = i == 0 || chars[i - 1].is_whitespace() || chars[i - 1] == ':';
        if c == '0'
            && at_word_start
            && matches!(chars.get(i + 1), Some('x' | 'X'))
            && high.is_none()
        {
            i += 2;
            continue;
        }
        if c.is_whitespace() || c == ':' {
            i += 1;
            continue;
        }
        let nibble = c.to_digit(16).ok_or(HexError::InvalidCharacter {
            character: c,
            position: i,
        })? as u8;
        digits += 1;
        match high.take() {
            None => high = Some(nibble),
            Some(h) => bytes.push(h << 4 | nibble),
        }
        i += 1;
    }
    if high.is_some() {
        return Err(HexError::OddLength(digits));
    }
    Ok(bytes)
}

/// Formats bytes as lowercase hex digits without prefix or separators.
pub fn encode(bytes: &[u8]) -> String {
    let mut text = Vec::new();
    encode_into(bytes, &mut text);
    text.into_iter().map(char::from).collect()
}

/// Appends `bytes` to `out` as lowercase hex digits (a table lookup per half byte: fast enough for
/// gigabytes of hex output).
pub fn encode_into(bytes: &[u8], out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 0x0f)]);
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
        assert_eq!(parse(&text).unwrap(), bytes);
    }
}
