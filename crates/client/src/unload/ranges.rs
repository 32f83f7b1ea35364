//! The token ring cut into the ranges a scan reads, in token order.
//!
//! Murmur3 tokens run from `i64::MIN + 1` to `i64::MAX`: no partition key has the token `i64::MIN`
//! (the partitioner maps that hash to `i64::MAX`). A range is `(start, end]`, read with
//! `token(pk) > start AND token(pk) <= end`. The ring's wrapping range (after the last node token,
//! around to the first) is read as two: `(last, i64::MAX]` and `(i64::MIN, first]`; `i64::MIN` is
//! only ever a start, never an end (Cassandra reads an end bound of the minimum token as "to the
//! end of the ring").

/// Tokens `start < token <= end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenRange {
    /// Exclusive lower bound.
    pub(crate) start: i64,
    /// Inclusive upper bound.
    pub(crate) end: i64,
}

/// Cuts the ring whose node tokens are `tokens` (any order, repeats allowed; empty for a ring
/// that is not known) into ranges in token order that cover every token once: each range between
/// neighbouring node tokens (and each half of the wrapping one) in `splits` parts of nearly equal
/// width (fewer when it holds fewer tokens than that).
pub(crate) fn split_ring(tokens: &[i64], splits: usize) -> Vec<TokenRange> {
    let mut points: Vec<i64> = tokens.to_vec();
    points.sort_unstable();
    points.dedup();
    let mut ranges = Vec::new();
    let mut start = i64::MIN;
    for &token in &points {
        if token > start {
            split_into(start, token, splits, &mut ranges);
            start = token;
        }
    }
    if start < i64::MAX {
        split_into(start, i64::MAX, splits, &mut ranges);
    }
    ranges
}

/// Appends `(start, end]` cut into `parts` pieces of nearly equal width (`start < end`).
fn split_into(start: i64, end: i64, parts: usize, out: &mut Vec<TokenRange>) {
    let width = i128::from(end) - i128::from(start);
    let parts = i128::try_from(parts.max(1)).unwrap_or(i128::MAX).min(width);
    let mut lower = start;
    for k in 1..=parts {
        // Within (start, end]: start + width·k/parts never passes end, and the last is end.
        let upper = i64::try_from(i128::from(start) + width * k / parts).unwrap_or(end);
        if upper > lower {
            out.push(TokenRange {
                start: lower,
                end: upper,
            });
            lower = upper;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranges are in order, adjacent, start at the minimum token and end at the maximum.
    fn assert_covers_the_ring(ranges: &[TokenRange]) {
        assert_eq!(ranges.first().unwrap().start, i64::MIN);
        assert_eq!(ranges.last().unwrap().end, i64::MAX);
        for pair in ranges.windows(2) {
            assert_eq!(pair[0].end, pair[1].start, "{ranges:?}");
        }
        for range in ranges {
            assert!(range.start < range.end, "{range:?}");
            assert_ne!(range.end, i64::MIN);
        }
    }

    /// The range holding `token`: exactly one for every token a key can have.
    fn owners(ranges: &[TokenRange], token: i64) -> usize {
        ranges
            .iter()
            .filter(|r| r.start < token && token <= r.end)
            .count()
    }

    #[test]
    fn an_unknown_ring_is_one_range_or_equal_parts() {
        let whole = split_ring(&[], 1);
        assert_eq!(
            whole,
            vec![TokenRange {
                start: i64::MIN,
                end: i64::MAX
            }]
        );
        let parts = split_ring(&[], 4);
        assert_eq!(parts.len(), 4);
        assert_covers_the_ring(&parts);
        // Equal widths within one token.
        let widths: Vec<i128> = parts
            .iter()
            .map(|r| i128::from(r.end) - i128::from(r.start))
            .collect();
        assert!(widths.iter().max().unwrap() - widths.iter().min().unwrap() <= 1);
    }

    #[test]
    fn one_node_token_splits_the_wrapping_range_in_two_halves() {
        let ranges = split_ring(&[100], 1);
        assert_eq!(
            ranges,
            vec![
                TokenRange {
                    start: i64::MIN,
                    end: 100
                },
                TokenRange {
                    start: 100,
                    end: i64::MAX
                },
            ]
        );
        for splits in [1, 2, 7, 64] {
            let ranges = split_ring(&[-5, 100, 3, 100], splits);
            assert_covers_the_ring(&ranges);
            // Four ranges between the node tokens; (-5, 3] holds only 8 tokens.
            assert_eq!(ranges.len(), 3 * splits + splits.min(8));
            for token in [i64::MIN + 1, -6, -5, -4, 3, 4, 99, 100, 101, i64::MAX] {
                assert_eq!(owners(&ranges, token), 1, "{token} {splits}");
            }
        }
    }

    #[test]
    fn node_tokens_at_the_ends_of_the_ring_leave_no_empty_range() {
        let ranges = split_ring(&[i64::MIN, 0, i64::MAX], 3);
        assert_covers_the_ring(&ranges);
        assert_eq!(ranges.len(), 6);
        assert_eq!(owners(&ranges, i64::MAX), 1);
        assert_eq!(owners(&ranges, i64::MIN + 1), 1);
        let ranges = split_ring(&[i64::MIN + 1], 5);
        assert_covers_the_ring(&ranges);
        assert_eq!(
            ranges[0],
            TokenRange {
                start: i64::MIN,
                end: i64::MIN + 1
            }
        );
        assert_eq!(owners(&ranges, i64::MIN + 1), 1);
    }

    #[test]
    fn ranges_narrower_than_the_split_count_give_one_range_per_token() {
        let ranges = split_ring(&[10, 12], 100);
        assert_covers_the_ring(&ranges);
        let narrow: Vec<_> = ranges
            .iter()
            .filter(|r| r.start == 10 || r.start == 11)
            .collect();
        assert_eq!(
            narrow,
            [
                &TokenRange { start: 10, end: 11 },
                &TokenRange { start: 11, end: 12 }
            ]
        );
        for token in 9..14 {
            assert_eq!(owners(&ranges, token), 1, "{token}");
        }
    }

    #[test]
    fn sixteen_vnodes_in_seven_parts_cover_every_sampled_token_once() {
        let tokens: Vec<i64> = (0..16u64)
            .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7)) as i64)
            .collect();
        let ranges = split_ring(&tokens, 7);
        assert_covers_the_ring(&ranges);
        assert_eq!(ranges.len(), 17 * 7);
        let mut token = i64::MIN + 1;
        for step in 0..10_000u64 {
            assert_eq!(owners(&ranges, token), 1, "{token}");
            token = token.wrapping_add((step.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 2) as i64);
        }
        for &node_token in &tokens {
            assert_eq!(owners(&ranges, node_token), 1);
            assert_eq!(owners(&ranges, node_token.wrapping_add(1)), 1);
        }
    }
}
