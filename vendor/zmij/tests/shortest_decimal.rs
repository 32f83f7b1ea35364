//! `shortest_decimal` against the text of `format_finite`: the same digits and exponent.

#![cfg_attr(not(check_cfg), allow(unexpected_cfgs))]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;

/// `(significand, exponent)` read from zmij's text: `|x| = significand × 10^exponent`, no
/// trailing zero in the significand.
fn parts_of_text(text: &str) -> (u64, i32) {
    let text = text.trim_start_matches('-');
    let (mantissa, exponent) = match text.split_once('e') {
        Some((m, e)) => (m, e.trim_start_matches('+').parse::<i32>().unwrap()),
        None => (text, 0),
    };
    let (integer, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{integer}{fraction}");
    let mut exponent = exponent - fraction.len() as i32;
    let mut digits = digits.trim_start_matches('0');
    while let Some(rest) = digits.strip_suffix('0') {
        digits = rest;
        exponent += 1;
    }
    if digits.is_empty() {
        return (0, 0);
    }
    (digits.parse().unwrap(), exponent)
}

fn check<F: zmij::Float + Copy + std::fmt::Debug>(x: F, buffer: &mut zmij::Buffer) {
    let text = buffer.format_finite(x);
    assert_eq!(
        zmij::shortest_decimal(x),
        parts_of_text(text),
        "{x:?} ({text})"
    );
}

#[test]
fn special_and_boundary_values() {
    let mut buffer = zmij::Buffer::new();
    for x in [
        0.0f64,
        -0.0,
        1.0,
        -1.0,
        0.1,
        1e-5,
        1e-4,
        1e15,
        1e16,
        1e22,
        123456789012345680.0,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        1200.0,
        0.001234,
    ] {
        check(x, &mut buffer);
    }
    for x in [
        0.0f32,
        -0.0,
        1.0,
        0.1,
        1e-5,
        1e-4,
        1e7,
        1e8,
        f32::MIN_POSITIVE,
        1e-45,
        f32::MAX,
        f32::EPSILON,
        1200.0,
        0.001234,
        16777216.0,
    ] {
        check(x, &mut buffer);
    }
}

#[test]
fn sampled_f64_and_f32() {
    let mut buffer = zmij::Buffer::new();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..2_000_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let f = f64::from_bits(state);
        if f.is_finite() {
            check(f, &mut buffer);
        }
        let g = f32::from_bits((state >> 32) as u32);
        if g.is_finite() {
            check(g, &mut buffer);
        }
        // Values with few digits, which end in zeros (integers, short fractions).
        let short = (state % 100_000) as f64 * 10f64.powi((state >> 40) as i32 % 24 - 12);
        check(short, &mut buffer);
        check(short as f32, &mut buffer);
    }
}

#[test]
#[cfg_attr(not(exhaustive), ignore = "requires cfg(exhaustive)")]
fn every_f32() {
    const BATCH_SIZE: u32 = 1_000_000;
    let counter = Arc::new(AtomicU32::new(0));
    let mut workers = Vec::new();
    for _ in 0..num_cpus::get() {
        let counter = counter.clone();
        workers.push(thread::spawn(move || {
            let mut buffer = zmij::Buffer::new();
            loop {
                let batch = counter.fetch_add(1, Ordering::Relaxed);
                if batch > u32::MAX / BATCH_SIZE {
                    return;
                }
                let min = batch * BATCH_SIZE;
                let max = if batch == u32::MAX / BATCH_SIZE {
                    u32::MAX
                } else {
                    min + BATCH_SIZE - 1
                };
                for u in min..=max {
                    let f = f32::from_bits(u);
                    if f.is_finite() {
                        check(f, &mut buffer);
                    }
                }
            }
        }));
    }
    for w in workers {
        w.join().unwrap();
    }
}
