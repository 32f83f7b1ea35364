//! cqlwire patch (see PATCH.md): the fixed-notation branch of `write` (decimal exponents -5..=15
//! for f64, -6..=12 for f32) moves digits with fixed-size copies; every digit count at every
//! exponent of that range gives ryu's text, as the exhaustive f32 test does for every f32.

use rand::rngs::SmallRng;
use rand::{RngExt as _, SeedableRng as _};

/// zmij's text equals ryu's (which writes `1e16` where zmij writes `1e+16`) and parses back.
fn check(value: f64) {
    let zmij = zmij::Buffer::new().format_finite(value).to_owned();
    let ryu = ryu::Buffer::new().format_finite(value).to_owned();
    let same = if ryu.contains('e') && !ryu.contains("e-") {
        ryu.split_once('e') == zmij.split_once("e+")
    } else {
        ryu == zmij
    };
    assert!(same, "{value:e}: ryu {ryu}, zmij {zmij}");
    assert_eq!(zmij.parse::<f64>(), Ok(value), "{zmij}");
}

#[test]
fn every_digit_count_at_every_fixed_exponent() {
    let mut rng = SmallRng::seed_from_u64(12);
    for exponent in -7..=17 {
        for digits in 1..=17u32 {
            for _ in 0..2000 {
                // A `digits`-digit integer scaled to `exponent` (its shortest text may still be
                // shorter, when the nearest double rounds trailing digits away), with either sign.
                let low = 10u64.pow(digits - 1);
                let significand = rng.random_range(low..low * 10) as f64;
                let value = significand * 10f64.powi(exponent - digits as i32 + 1);
                check(value);
                check(-value);
            }
        }
    }
}
