//! What the first bytes of an LZ4 block say when the rest was not captured: the block's sequences
//! decoded as far as they go, stopping at the first one the bytes do not finish.

/// The start of what `block`, the first bytes of an LZ4 block, decompresses to: every literal and
/// match its bytes hold (the literals of the sequence they end in too), at most `max` bytes. A
/// match reaching before the start of the output ends it (the block is not what it claims).
pub(crate) fn decompress_prefix(block: &[u8], max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pos = 0;
    // A length of 15 goes on in bytes of 255 until a smaller one; `None` when the bytes end first.
    let extended = |pos: &mut usize, mut len: usize| -> Option<usize> {
        if len == 15 {
            loop {
                let byte = *block.get(*pos)?;
                *pos += 1;
                len = len.checked_add(usize::from(byte))?;
                if byte != 255 {
                    break;
                }
            }
        }
        Some(len)
    };
    while out.len() < max {
        let Some(&token) = block.get(pos) else {
            break;
        };
        pos += 1;
        let Some(literals) = extended(&mut pos, usize::from(token >> 4)) else {
            break;
        };
        let available = &block[pos.min(block.len())..];
        let take = literals.min(available.len()).min(max - out.len());
        out.extend_from_slice(&available[..take]);
        pos += literals;
        let Some(offset) = block.get(pos..pos + 2) else {
            break;
        };
        let offset = usize::from(u16::from_le_bytes([offset[0], offset[1]]));
        pos += 2;
        let Some(len) = extended(&mut pos, usize::from(token & 15)) else {
            break;
        };
        if offset == 0 || offset > out.len() {
            break;
        }
        let len = (len + 4).min(max - out.len());
        // Byte by byte: a match may overlap what it writes.
        for _ in 0..len {
            out.push(out[out.len() - offset]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::decompress_prefix;

    #[test]
    fn every_prefix_of_a_block_gives_a_prefix_of_its_content() {
        let content: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("row {} value {};", i % 97, i % 13).into_bytes())
            .collect();
        let block = lz4_flex::block::compress(&content);
        assert_eq!(decompress_prefix(&block, usize::MAX), content);
        let mut longest = 0;
        for cut in (0..block.len()).step_by(7) {
            let prefix = decompress_prefix(&block[..cut], content.len());
            assert_eq!(prefix, content[..prefix.len()], "cut at {cut}");
            assert!(prefix.len() >= longest, "cut at {cut}");
            longest = prefix.len();
        }
        assert_eq!(decompress_prefix(&block, 100), content[..100]);
    }

    #[test]
    fn a_match_before_the_start_ends_the_output() {
        // Literal "ab", then a match 3 bytes back of 4 bytes.
        assert_eq!(decompress_prefix(&[0x20, b'a', b'b', 3, 0], 100), b"ab");
        assert_eq!(decompress_prefix(&[0x20, b'a', b'b', 2, 0], 100), b"ababab");
        assert_eq!(decompress_prefix(&[0xf0, 255, 255], 100), b"");
    }
}
