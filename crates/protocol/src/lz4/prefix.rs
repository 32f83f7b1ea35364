//! What the first bytes of an LZ4 block say when the rest was not captured: the block's sequences
//! decoded as far as they go, stopping at the first one the bytes do not finish.

use super::{BlockWalker, MIN_MATCH};

/// The start of what `block`, the first bytes of an LZ4 block, decompresses to: every literal and
/// match its bytes hold (the literals of the sequence they end in too), at most `max` bytes. A
/// match reaching before the start of the output ends it (the block is not what it claims).
pub(crate) fn decompress_prefix(block: &[u8], max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut walker = BlockWalker { block, pos: 0 };
    while out.len() < max {
        let Some(token) = walker.byte() else {
            break;
        };
        let Some(literals) = walker.length(usize::from(token >> 4)) else {
            break;
        };
        let available = block.get(walker.pos..).unwrap_or_default();
        let take = literals.min(available.len()).min(max - out.len());
        out.extend_from_slice(&available[..take]);
        walker.pos = walker.pos.saturating_add(literals);
        let (Some(low), Some(high)) = (walker.byte(), walker.byte()) else {
            break;
        };
        let offset = usize::from(u16::from_le_bytes([low, high]));
        let Some(extra) = walker.length(usize::from(token & 0x0f)) else {
            break;
        };
        if offset == 0 || offset > out.len() {
            break;
        }
        let len = MIN_MATCH.saturating_add(extra).min(max - out.len());
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
