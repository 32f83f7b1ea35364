use super::byte_order::{convert_all, convert_loop, reverse_all, StoreMode};
use super::error::float_integer_problem;
use super::handoff::HAND_OFF_ROWS;
use super::number::{Number, TWO_POW_63};
#[cfg(target_arch = "x86_64")]
use super::x86::{convert_all_avx2, record_layout};
use super::*;
use crate::input::Elements;
use half::f16;

/// A deterministic pseudo-random generator (splitmix64) for test data.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn encoder(ty: &str) -> VectorEncoder {
    let ty = crate::types::parse_type(ty, &crate::types::UdtRegistry::new()).unwrap();
    VectorEncoder::new(&ty).unwrap()
}

fn encode(ty: &str, rows: Rows<'_>, first_row: u64) -> Result<Vec<u8>, VectorError> {
    let mut out = Vec::new();
    encoder(ty).encode_rows(rows, first_row, &mut out)?;
    Ok(out)
}

/// Runs both builds of the conversion loop and the reference `to_be_bytes` per element.
fn compare_paths<S: Copy, const N: usize>(src: &[S], convert: impl Fn(S) -> [u8; N] + Copy) {
    let reference: Vec<u8> = src.iter().flat_map(|&x| convert(x)).collect();
    let mut portable = vec![0xaa; src.len() * N];
    convert_loop(src, &mut portable, convert);
    assert_eq!(portable, reference);
    // One destination, and destinations of 37 records each (the last one shorter).
    for records in [src.len().max(1), 37] {
        let mut dispatched = vec![0xaa; src.len() * N];
        let mut parts: Vec<&mut [u8]> = dispatched.chunks_mut(records * N).collect();
        convert_all(src, &mut parts, convert);
        assert_eq!(dispatched, reference);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let mut avx2 = vec![0xaa; src.len() * N];
            let mut parts: Vec<&mut [u8]> = avx2.chunks_mut(records * N).collect();
            // SAFETY: AVX2 is available, checked just above.
            unsafe { convert_all_avx2(src, &mut parts, convert) };
            assert_eq!(avx2, reference);
        }
    }
}

/// [`reverse_all`] with streaming stores into three rows of `values` each, placed `shift` bytes
/// into a buffer with 48-byte gaps between them (as between Python objects): each row gets its
/// values' bytes, and no byte outside the rows changes.
fn check_non_temporal<S: Copy, const N: usize>(
    src: &[S],
    shift: usize,
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    let row = src.len() / 3 * N;
    let stride = row + 48;
    let mut buffer = vec![0x5au8; shift + 3 * stride];
    let mut parts: Vec<&mut [u8]> = buffer[shift..]
        .chunks_mut(stride)
        .map(|chunk| &mut chunk[..row])
        .collect();
    reverse_all(src, &mut parts, StoreMode::NonTemporal, convert);
    let reference: Vec<u8> = src.iter().flat_map(|&x| convert(x)).collect();
    for (at, byte) in buffer.iter().enumerate() {
        let place = at.checked_sub(shift).map(|at| (at / stride, at % stride));
        match place {
            Some((r, offset)) if offset < row => {
                assert_eq!(
                    *byte,
                    reference[r * row + offset],
                    "shift {shift}, byte {at}"
                )
            }
            _ => assert_eq!(*byte, 0x5a, "shift {shift}, byte {at} outside the rows"),
        }
    }
}

#[test]
fn streaming_reversal_writes_exactly_each_destination_at_every_alignment() {
    let mut random = Random(11);
    for values in [0, 1, 5, 16, 17, 100, 768] {
        let longs: Vec<i64> = (0..3 * values).map(|_| random.next() as i64).collect();
        let ints: Vec<i32> = longs.iter().map(|&x| x as i32).collect();
        let floats: Vec<f32> = ints.iter().map(|&x| f32::from_bits(x as u32)).collect();
        for shift in 0..64 {
            check_non_temporal(&ints, shift, |x: i32| x.to_be_bytes());
            check_non_temporal(&floats, shift, |x: f32| x.to_bits().to_be_bytes());
            check_non_temporal(&longs, shift, |x: i64| x.to_be_bytes());
        }
    }
}

#[test]
fn avx2_and_portable_loops_match_to_be_bytes_on_random_data() {
    let mut random = Random(7);
    for length in [0, 1, 3, 7, 8, 31, 33, 768, 1000, 4099] {
        let bits: Vec<u64> = (0..length).map(|_| random.next()).collect();
        let floats: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b as u32)).collect();
        let doubles: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
        let ints: Vec<i32> = bits.iter().map(|&b| b as i32).collect();
        let longs: Vec<i64> = bits.iter().map(|&b| b as i64).collect();
        compare_paths(&floats, |x: f32| x.to_be_bytes());
        compare_paths(&doubles, |x: f64| x.to_be_bytes());
        compare_paths(&ints, |x: i32| x.to_be_bytes());
        compare_paths(&longs, |x: i64| x.to_be_bytes());
        // The kernel's own path gives the same bytes (bit patterns, NaN payloads included).
        let expected: Vec<u8> = floats.iter().flat_map(|x| x.to_be_bytes()).collect();
        if length % 8 == 0 && length > 0 {
            let ty = format!("vector<float, {}>", 8);
            assert_eq!(encode(&ty, Rows::F32(&floats), 0).unwrap(), expected);
        }
    }
}

#[test]
fn parallel_batches_equal_sequential_rows() {
    let mut random = Random(11);
    let dimension = 5;
    let rows = 3001;
    let floats: Vec<f32> = (0..rows * dimension)
        .map(|_| (random.next() % 1000) as f32 / 7.0)
        .collect();
    for ty in ["vector<float, 5>", "vector<double, 5>", "vector<text, 5>"] {
        let sequential = encode(ty, Rows::F32(&floats), 40).unwrap();
        let mut batch = Batch {
            first_row: 40,
            rows,
            elements: Elements::F32(floats.clone()),
            validity: None,
            columns: None,
            damaged: Vec::new(),
        };
        let encoded = encoder(ty).encode_batch(&mut batch, Vec::new()).unwrap();
        assert_eq!(encoded.bytes, sequential, "{ty}");
        let rebuilt: Vec<u8> = (0..rows).flat_map(|i| encoded.row(i).to_vec()).collect();
        assert_eq!(rebuilt, sequential, "{ty}");
    }
}

#[test]
fn large_fixed_size_batches_are_split_across_the_pool_in_order() {
    let dimension = 100;
    let rows = PARALLEL_FIXED_BYTES / (4 * dimension) + 7;
    let ints: Vec<i32> = (0..(rows * dimension) as i32).collect();
    let expected: Vec<u8> = ints.iter().flat_map(|x| x.to_be_bytes()).collect();
    let mut batch = Batch {
        first_row: 0,
        rows,
        elements: Elements::I32(ints.clone()),
        validity: None,
        columns: None,
        damaged: Vec::new(),
    };
    let encoded = encoder("vector<int, 100>")
        .encode_batch(&mut batch, Vec::new())
        .unwrap();
    assert!(encoded.bytes.len() >= PARALLEL_FIXED_BYTES);
    assert!(encoded.bytes == expected, "parallel output differs");
    // A cast error in a late task still names its absolute row.
    let mut longs: Vec<i64> = ints.iter().map(|&x| i64::from(x)).collect();
    let bad = rows * dimension - 3;
    longs[bad] = i64::MAX;
    let mut batch = Batch {
        first_row: 1000,
        rows,
        elements: Elements::I64(longs),
        validity: None,
        columns: None,
        damaged: Vec::new(),
    };
    let error = encoder("vector<int, 100>")
        .encode_batch(&mut batch, Vec::new())
        .unwrap_err();
    let place = format!("at row {} (element 97)", 1000 + rows - 1);
    assert!(error.to_string().ends_with(&place), "{error}");
}

#[test]
fn per_row_destinations_get_the_rows_values_small_and_split() {
    let dimension = 100;
    let encoder = encoder("vector<int, 100>");
    // Below and above the size worth splitting across the pool.
    for rows in [3, PARALLEL_FIXED_BYTES / (4 * dimension) + 7] {
        let ints: Vec<i32> = (0..(rows * dimension) as i32).collect();
        let expected: Vec<u8> = ints.iter().flat_map(|x| x.to_be_bytes()).collect();
        let mut out = vec![0xaa; expected.len()];
        let mut values: Vec<&mut [u8]> = out.chunks_exact_mut(4 * dimension).collect();
        encoder
            .encode_fixed_values(Rows::I32(&ints), 0, &mut values)
            .unwrap();
        assert!(out == expected, "{rows} rows: output differs");
        // A cast error in the last row names its absolute row.
        let mut longs: Vec<i64> = ints.iter().map(|&x| i64::from(x)).collect();
        longs[rows * dimension - 3] = i64::MAX;
        let mut values: Vec<&mut [u8]> = out.chunks_exact_mut(4 * dimension).collect();
        let error = encoder
            .encode_fixed_values(Rows::I64(&longs), 1000, &mut values)
            .unwrap_err();
        let place = format!("at row {} (element 97)", 1000 + rows - 1);
        assert!(error.to_string().ends_with(&place), "{error}");
    }
    // One destination too few, or destinations of the wrong size: a shape error.
    let ints = [1i32; 200];
    let mut out = vec![0u8; 800];
    let mut values: Vec<&mut [u8]> = out.chunks_exact_mut(400).take(1).collect();
    let error = encoder.encode_fixed_values(Rows::I32(&ints), 0, &mut values);
    assert!(matches!(error, Err(VectorError::Shape { .. })), "{error:?}");
    let mut values: Vec<&mut [u8]> = out.chunks_exact_mut(399).take(2).collect();
    let error = encoder.encode_fixed_values(Rows::I32(&ints), 0, &mut values);
    assert!(matches!(error, Err(VectorError::Shape { .. })), "{error:?}");
}

#[test]
fn produced_destinations_get_the_rows_values() {
    let dimension = 100;
    let encoder = encoder("vector<int, 100>");
    // No row, fewer rows than one claim, one claim exactly, one row past it, many claims, and
    // enough to be encoded on the pool while they are produced.
    let split = PARALLEL_FIXED_BYTES / (4 * dimension) + 7;
    for rows in [0, 1, HAND_OFF_ROWS, HAND_OFF_ROWS + 1, 1000, split] {
        let ints: Vec<i32> = (0..(rows * dimension) as i32).collect();
        let expected: Vec<u8> = ints.iter().flat_map(|x| x.to_be_bytes()).collect();
        let mut out = vec![0xaa; expected.len()];
        let mut chunks = out.chunks_exact_mut(4 * dimension);
        let produce = |_| Ok::<_, ()>(chunks.next().expect("one destination per row"));
        encoder
            .encode_fixed_values_produced(Rows::I32(&ints), 0, rows, produce, |rest| rest())
            .unwrap();
        assert!(out == expected, "{rows} rows: output differs");
        if rows == 0 {
            continue;
        }
        // A cast error in the last row names its absolute row.
        let mut longs: Vec<i64> = ints.iter().map(|&x| i64::from(x)).collect();
        longs[rows * dimension - 3] = i64::MAX;
        let mut chunks = out.chunks_exact_mut(4 * dimension);
        let produce = |_| Ok::<_, ()>(chunks.next().expect("one destination per row"));
        let error = encoder
            .encode_fixed_values_produced(Rows::I64(&longs), 1000, rows, produce, |rest| rest())
            .unwrap_err()
            .unwrap_err();
        let place = format!("at row {} (element 97)", 1000 + rows - 1);
        assert!(error.to_string().ends_with(&place), "{error}");
    }
    // The producer's first error stops it and is returned; nothing is asked of it after that.
    let ints = vec![1i32; 1000 * dimension];
    let mut out = vec![0u8; 4 * ints.len()];
    let mut chunks = out.chunks_exact_mut(4 * dimension);
    let mut asked = 0;
    let produce = |row: usize| {
        asked += 1;
        match row {
            70 => Err("no memory"),
            _ => Ok(chunks.next().unwrap()),
        }
    };
    let error = encoder.encode_fixed_values_produced(Rows::I32(&ints), 0, 1000, produce, |_| {
        panic!("nothing is finished after a failed production")
    });
    assert_eq!(error, Err(Ok("no memory")));
    assert_eq!(asked, 71);
    // A producer that panics while the pool waits for its rows: the panic comes through
    // (the waiting threads stop instead of waiting for ever).
    let many = vec![1i32; split * dimension];
    let mut out = vec![0u8; 4 * many.len()];
    let mut chunks = out.chunks_exact_mut(4 * dimension);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let produce = |row: usize| {
            assert!(row < HAND_OFF_ROWS * 3, "the producer fails");
            Ok::<_, ()>(chunks.next().unwrap())
        };
        encoder.encode_fixed_values_produced(Rows::I32(&many), 0, split, produce, |r| r())
    }));
    assert!(panicked.is_err());
    // A row count that does not match the elements: a shape error, nothing produced.
    let error = encoder.encode_fixed_values_produced(
        Rows::I32(&ints),
        0,
        999,
        |_| -> Result<&mut [u8], ()> { panic!("nothing is produced for a wrong shape") },
        |rest| rest(),
    );
    assert!(
        matches!(error, Err(Err(VectorError::Shape { .. }))),
        "{error:?}"
    );
}

/// The vint-prefixed element types of fixed payload width.
const PREFIXED: [NativeType; 4] = [
    NativeType::TinyInt,
    NativeType::SmallInt,
    NativeType::Date,
    NativeType::Time,
];

#[cfg(target_arch = "x86_64")]
#[test]
fn record_layouts_fit_for_the_kernel_pairs() {
    // The pairs the SSSE3 record kernel serves: 1- and 2-byte integers to smallint, date and
    // time, and 4-byte integers to date and time.
    for (size, n) in [
        (1, 3),
        (1, 5),
        (1, 9),
        (2, 3),
        (2, 5),
        (2, 9),
        (4, 5),
        (4, 9),
    ] {
        assert!(
            record_layout(size, n).fits,
            "{n}-byte records of {size}-byte values"
        );
    }
    // Too far apart for one 16-byte load: one record at a time.
    for (size, n) in [(4, 2), (4, 3), (8, 9)] {
        assert!(
            !record_layout(size, n).fits,
            "{n}-byte records of {size}-byte values"
        );
    }
}

#[test]
fn record_kernels_match_the_value_codec_at_every_length() {
    let mut random = Random(11);
    for native in PREFIXED {
        let name = native.cql_name();
        let element = CqlType::Native(native);
        // Valid values of every integer source type: the limits, then random ones in range.
        let (min, max): (i64, i64) = match native {
            NativeType::TinyInt => (-128, 127),
            NativeType::SmallInt => (-32768, 32767),
            NativeType::Date => (0, u32::MAX.into()),
            _ => (0, 86_399_999_999_999),
        };
        let longs: Vec<i64> = (0..300)
            .map(|i| match i % 7 {
                0 => min,
                1 => max,
                _ => min + (random.next() % (max - min + 1) as u64) as i64,
            })
            .collect();
        let clamp = |lo: i64, hi: i64| -> Vec<i64> {
            longs
                .iter()
                .map(|&x| x.clamp(lo.max(min), hi.min(max)))
                .collect()
        };
        let bytes: Vec<i8> = clamp(-128, 127).iter().map(|&x| x as i8).collect();
        let unsigned: Vec<u8> = clamp(0, 255).iter().map(|&x| x as u8).collect();
        let shorts: Vec<i16> = clamp(-32768, 32767).iter().map(|&x| x as i16).collect();
        let ints: Vec<i32> = clamp(i32::MIN.into(), i32::MAX.into())
            .iter()
            .map(|&x| x as i32)
            .collect();
        for rows in [
            Rows::I8(&bytes),
            Rows::U8(&unsigned),
            Rows::I16(&shorts),
            Rows::I32(&ints),
            Rows::I64(&longs),
        ] {
            let references: Vec<Vec<u8>> = (0..rows.len())
                .map(|index| {
                    let value = reference_value(rows.number(index).unwrap(), native).unwrap();
                    let mut reference = Vec::new();
                    cqlwire_codec::value::encode_vector_element(&element, &value, &mut reference)
                        .unwrap();
                    reference
                })
                .collect();
            for length in 1..=rows.len() {
                let expected = references[..length].concat();
                let ty = format!("vector<{name}, {length}>");
                let got = encode(&ty, rows.slice(0, length), 0).unwrap();
                assert_eq!(got, expected, "{name} from {rows:?}, length {length}");
            }
        }
    }
}

#[test]
fn double_to_float_checks_range_and_passes_non_finite() {
    let max = f64::from(f32::MAX);
    let ok = [
        max,
        -max,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e-300,
    ];
    let bytes = encode("vector<float, 6>", Rows::F64(&ok), 0).unwrap();
    let expected: Vec<u8> = ok.iter().flat_map(|&x| (x as f32).to_be_bytes()).collect();
    assert_eq!(bytes, expected);
    // The next double above f32::MAX rounds down to it, as NumPy does; 2^128 overflows.
    let above = f64::from_bits(max.to_bits() + 1);
    let bytes = encode("vector<float, 1>", Rows::F64(&[above]), 0).unwrap();
    assert_eq!(bytes, f32::MAX.to_be_bytes());
    let overflow = 2f64.powi(128);
    let error = encode(
        "vector<float, 2>",
        Rows::F64(&[0.0, 1.0, 2.0, -overflow]),
        10,
    );
    assert_eq!(
        error.unwrap_err().to_string(),
        format!(
            "value {:e} is out of range for float at row 11 (element 1)",
            -overflow
        )
    );
}

#[test]
fn long_to_int_checks_range() {
    let ok = [i64::from(i32::MAX), i64::from(i32::MIN)];
    let bytes = encode("vector<int, 2>", Rows::I64(&ok), 0).unwrap();
    assert_eq!(
        bytes,
        [i32::MAX.to_be_bytes(), i32::MIN.to_be_bytes()].concat()
    );
    for bad in [i64::from(i32::MAX) + 1, i64::from(i32::MIN) - 1] {
        let error = encode("vector<int, 1>", Rows::I64(&[bad]), 3).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("value {bad} is out of range for int at row 3 (element 0)")
        );
    }
}

#[test]
fn floats_to_integers_need_integral_values_in_range() {
    let ok = [2_147_483_647.0, -2_147_483_648.0, -0.0, 5.0];
    let bytes = encode("vector<int, 4>", Rows::F64(&ok), 0).unwrap();
    let expected: Vec<u8> = ok.iter().flat_map(|&x| (x as i32).to_be_bytes()).collect();
    assert_eq!(bytes, expected);
    let cases: [(f64, &str); 4] = [
        (2.5, "has a fraction, so is not an int"),
        (f64::NAN, "is not a number, so not an int"),
        (2_147_483_648.0, "is out of range for int"),
        (f64::INFINITY, "is out of range for int"),
    ];
    for (bad, problem) in cases {
        let error = encode("vector<int, 1>", Rows::F64(&[bad]), 0).unwrap_err();
        assert!(error.to_string().contains(problem), "{error}");
    }
    let long_ok = [-TWO_POW_63, f64::from_bits(TWO_POW_63.to_bits() - 1)];
    let bytes = encode("vector<bigint, 2>", Rows::F64(&long_ok), 0).unwrap();
    let expected: Vec<u8> = long_ok
        .iter()
        .flat_map(|&x| (x as i64).to_be_bytes())
        .collect();
    assert_eq!(bytes, expected);
    let error = encode("vector<bigint, 1>", Rows::F64(&[TWO_POW_63]), 0);
    assert!(error
        .unwrap_err()
        .to_string()
        .contains("out of range for bigint"));
    let error = encode("vector<bigint, 1>", Rows::F32(&[0.5]), 0).unwrap_err();
    assert!(error.to_string().contains("fraction"), "{error}");
}

#[test]
fn integers_to_floats_must_be_exact() {
    let ok = [16_777_216i32, -16_777_216, 16_777_218];
    let bytes = encode("vector<float, 3>", Rows::I32(&ok), 0).unwrap();
    let expected: Vec<u8> = ok.iter().flat_map(|&x| (x as f32).to_be_bytes()).collect();
    assert_eq!(bytes, expected);
    let error = encode("vector<float, 1>", Rows::I32(&[16_777_217]), 0).unwrap_err();
    assert!(error.to_string().contains("exactly as a float"), "{error}");
    let error = encode("vector<double, 1>", Rows::I64(&[i64::MAX]), 0).unwrap_err();
    assert!(error.to_string().contains("exactly as a double"), "{error}");
    let bytes = encode("vector<double, 1>", Rows::I64(&[1 << 53]), 0).unwrap();
    assert_eq!(bytes, ((1u64 << 53) as f64).to_be_bytes());
    let error = encode("vector<double, 1>", Rows::I64(&[(1 << 53) + 1]), 0).unwrap_err();
    assert!(error.to_string().contains("exactly"), "{error}");
}

#[test]
fn half_floats_widen_exactly() {
    let halves: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let bytes = encode("vector<float, 1>", Rows::F16(&halves), 0).unwrap();
    let expected: Vec<u8> = halves
        .iter()
        .flat_map(|&h| h.to_f32().to_be_bytes())
        .collect();
    assert_eq!(bytes, expected);
}

#[test]
fn small_integers_widen_and_booleans_come_from_zero_and_one() {
    let bytes = encode("vector<bigint, 2>", Rows::U8(&[255, 0]), 0).unwrap();
    assert_eq!(bytes, [255i64.to_be_bytes(), 0i64.to_be_bytes()].concat());
    let bytes = encode("vector<int, 2>", Rows::I16(&[i16::MIN, -1]), 0).unwrap();
    assert_eq!(
        bytes,
        [i32::from(i16::MIN).to_be_bytes(), (-1i32).to_be_bytes()].concat()
    );
    let bytes = encode("vector<boolean, 3>", Rows::I8(&[1, 0, 1]), 0).unwrap();
    assert_eq!(bytes, [1, 0, 1]);
    let error = encode("vector<boolean, 3>", Rows::F32(&[1.0, 0.0, 2.0]), 0).unwrap_err();
    assert!(error.to_string().contains("row 0 (element 2)"), "{error}");
}

/// The value of a vint-prefixed element for `number` the slow, obvious way (through `Value`
/// and `BigInt`), as the codec did before the direct kernels: the reference they must match.
fn reference_value(
    number: Number,
    native: NativeType,
) -> Result<cqlwire_codec::value::Value, String> {
    use cqlwire_codec::value::Value;
    let integer = |min: i64, max: i64, name: &str| -> Result<i64, String> {
        let value = match number {
            Number::Int(i) => i,
            _ => {
                let x = number.float().unwrap();
                if x.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&x) {
                    x as i64
                } else {
                    return Err(float_integer_problem(x, name));
                }
            }
        };
        if (min..=max).contains(&value) {
            Ok(value)
        } else {
            Err(format!("is out of range for {name}"))
        }
    };
    let big_integer = |x: f64| <num_bigint::BigInt as num_traits::FromPrimitive>::from_f64(x);
    Ok(match native {
        NativeType::TinyInt => Value::TinyInt(integer(-128, 127, "tinyint")? as i8),
        NativeType::SmallInt => Value::SmallInt(integer(-32768, 32767, "smallint")? as i16),
        NativeType::Date => Value::Date(integer(0, u32::MAX.into(), "date")? as u32),
        NativeType::Time => Value::Time(integer(0, 86_399_999_999_999, "time")?),
        NativeType::Varint => Value::Varint(match number {
            Number::Int(i) => i.into(),
            _ => {
                let x = number.float().unwrap();
                if !(x.is_finite() && x.fract() == 0.0) {
                    return Err(float_integer_problem(x, "varint"));
                }
                big_integer(x).unwrap()
            }
        }),
        NativeType::Decimal => match number {
            Number::Int(i) => Value::Decimal {
                unscaled: i.into(),
                scale: 0,
            },
            _ => {
                if !number.float().unwrap().is_finite() {
                    return Err("is not finite, so not a decimal".into());
                }
                let text = number.to_string();
                let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
                Value::Decimal {
                    unscaled: format!("{whole}{fraction}").parse().unwrap(),
                    scale: fraction.len() as i32,
                }
            }
        },
        _ => Value::Text(number.to_string()),
    })
}

/// Awkward numbers for every element type: limits on both sides, fractions, non-finite values,
/// tiny and huge magnitudes, and random bit patterns.
fn awkward_numbers() -> (Vec<f32>, Vec<f64>, Vec<i64>) {
    let mut doubles = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        0.5,
        -1.5,
        127.0,
        128.0,
        -128.0,
        -129.0,
        255.0,
        32767.0,
        32768.0,
        -32768.0,
        -32769.0,
        4_294_967_295.0,
        4_294_967_296.0,
        86_399_999_999_999.0,
        86_400_000_000_000.0,
        TWO_POW_63,
        -TWO_POW_63,
        1e19,
        -1e19,
        1e300,
        -1e-300,
        123_456.789,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let mut random = Random(3);
    for _ in 0..300 {
        let bits = random.next();
        doubles.push(f64::from_bits(bits));
        doubles.push((bits >> 20) as f64 / 1e3);
        doubles.push((bits as i64 >> (bits % 60)) as f64);
    }
    let floats: Vec<f32> = doubles.iter().map(|&x| x as f32).collect();
    let mut longs = vec![
        0,
        -1,
        127,
        128,
        -128,
        -129,
        255,
        256,
        32767,
        32768,
        -32768,
        -32769,
        i64::from(u32::MAX),
        i64::from(u32::MAX) + 1,
        86_399_999_999_999,
        86_400_000_000_000,
        i64::MAX,
        i64::MIN,
    ];
    for _ in 0..300 {
        let bits = random.next() as i64;
        longs.push(bits);
        longs.push(bits >> (bits as u64 % 64));
    }
    (floats, doubles, longs)
}

#[test]
fn direct_element_kernels_match_the_value_codec() {
    let (floats, doubles, longs) = awkward_numbers();
    let halves: Vec<f16> = floats.iter().map(|&x| f16::from_f32(x)).collect();
    let ints: Vec<i32> = longs.iter().map(|&x| x as i32).collect();
    let shorts: Vec<i16> = longs.iter().map(|&x| x as i16).collect();
    let bytes: Vec<i8> = longs.iter().map(|&x| x as i8).collect();
    let unsigned: Vec<u8> = longs.iter().map(|&x| x as u8).collect();
    let inputs = [
        Rows::F16(&halves),
        Rows::F32(&floats),
        Rows::F64(&doubles),
        Rows::I8(&bytes),
        Rows::U8(&unsigned),
        Rows::I16(&shorts),
        Rows::I32(&ints),
        Rows::I64(&longs),
    ];
    let variable = [
        NativeType::Varint,
        NativeType::Decimal,
        NativeType::Text,
        NativeType::Ascii,
    ];
    for native in PREFIXED.into_iter().chain(variable) {
        let name = native.cql_name();
        let element = CqlType::Native(native);
        for rows in inputs {
            let mut valid = Vec::new();
            let mut expected = Vec::new();
            for index in 0..rows.len() {
                let number = rows.number(index).unwrap();
                let one = rows.slice(index, index + 1);
                let got = encode(&format!("vector<{name}, 1>"), one, 5);
                match reference_value(number, native) {
                    Ok(value) => {
                        let mut reference = Vec::new();
                        cqlwire_codec::value::encode_vector_element(
                            &element,
                            &value,
                            &mut reference,
                        )
                        .unwrap();
                        assert_eq!(got.as_ref().ok(), Some(&reference), "{name} {number}");
                        valid.push(index);
                        expected.extend_from_slice(&reference);
                    }
                    Err(problem) => {
                        let message =
                            format!("value {} {problem} at row 5 (element 0)", number.quoted());
                        assert_eq!(got.unwrap_err().to_string(), message, "{name}");
                    }
                }
            }
            // All valid elements at once, as one row and as rows of one (bulk paths).
            if !valid.is_empty() {
                let kept = keep(rows, &valid);
                let ty = format!("vector<{name}, {}>", valid.len());
                assert_eq!(
                    encode(&ty, Rows::from(&kept), 0).unwrap(),
                    expected,
                    "{name}"
                );
                let single = encode(&format!("vector<{name}, 1>"), Rows::from(&kept), 0);
                assert_eq!(single.unwrap(), expected, "{name} rows of one");
            }
        }
    }
}

/// Random floats of every class: any bits (subnormals, NaN payloads, infinities, huge and tiny
/// magnitudes), values around the edges of the variable kernels' positional fast path, small
/// integers, and plain embedding-like values.
fn float_bits(random: &mut Random, count: usize) -> (Vec<f32>, Vec<f64>) {
    let mut floats = Vec::with_capacity(count);
    let mut doubles = Vec::with_capacity(count);
    let edges = [1e-3, 1e6, 1e-4, 1e-5, 1e7, 1e15, 1e16, 0.0];
    for i in 0..count {
        let bits = random.next();
        let edge: f64 = edges[i % edges.len()];
        let step = (bits % 9) as i64 - 4;
        let (single, double) = match i % 6 {
            0 => (f32::from_bits(bits as u32), f64::from_bits(bits)),
            // Subnormal.
            1 => (
                f32::from_bits(bits as u32 & 0x807f_ffff),
                f64::from_bits(bits & 0x800f_ffff_ffff_ffff),
            ),
            // A few ulps from an edge, either sign.
            2 => (
                f32::from_bits(((edge as f32).to_bits() as i64 + step) as u32),
                f64::from_bits((edge.to_bits() as i64 + step) as u64),
            ),
            3 => ((bits % 2001) as f32 - 1000.0, (bits % 2001) as f64 - 1000.0),
            _ => {
                // Uniform in ±[0, 4) with a random scale of 10^-4..10^8.
                let unit = (bits >> 11) as f64 / (1u64 << 53) as f64 * 8.0 - 4.0;
                let scaled = unit * 10f64.powi((bits % 13) as i32 - 4);
                (scaled as f32, scaled)
            }
        };
        floats.push(if bits & 1 << 62 != 0 { -single } else { single });
        doubles.push(if bits & 1 << 62 != 0 { -double } else { double });
    }
    (floats, doubles)
}

#[test]
fn variable_kernels_match_the_general_path_on_random_bits() {
    let mut random = Random(11);
    let (floats, doubles) = float_bits(&mut random, 60_000);
    let halves: Vec<f16> = floats.iter().map(|&x| f16::from_f32(x)).collect();
    let longs: Vec<i64> = (0..20_000)
        .map(|i| match i % 4 {
            0 => random.next() as i64,
            1 => (random.next() as i64) >> (random.next() % 64),
            2 => [i64::MIN, i64::MAX, 0, -1, 127, 128, -128, -129][i / 4 % 8],
            _ => (random.next() % 2_000_001) as i64 - 1_000_000,
        })
        .collect();
    let ints: Vec<i32> = longs.iter().map(|&x| x as i32).collect();
    // Mostly tinyint-sized (runs of them take the varint kernel's 16-at-once path), with a
    // larger value now and then; and the same as i8.
    let shorts: Vec<i16> = (0..20_000)
        .map(|_| match random.next() % 40 {
            0 => random.next() as i16,
            1 => [127, -128, 128, -129][random.next() as usize % 4],
            _ => (random.next() % 256) as i16 - 128,
        })
        .collect();
    let bytes: Vec<i8> = shorts.iter().map(|&x| x as i8).collect();
    let inputs = [
        Rows::F16(&halves),
        Rows::F32(&floats),
        Rows::F64(&doubles),
        Rows::I8(&bytes),
        Rows::I16(&shorts),
        Rows::I32(&ints),
        Rows::I64(&longs),
    ];
    let natives = [
        NativeType::Text,
        NativeType::Ascii,
        NativeType::Varint,
        NativeType::Decimal,
    ];
    for native in natives {
        for rows in inputs {
            // Element by element through the general path; the elements that convert are kept.
            let mut general = Vec::new();
            let mut ends = Vec::new();
            let mut valid = Vec::new();
            let mut first_failure = None;
            for index in 0..rows.len() {
                let number = rows.number(index).unwrap();
                let mut one = Vec::new();
                if write_variable(number, native, &mut Vec::new(), &mut one).is_ok() {
                    general.extend_from_slice(&one);
                    ends.push(general.len());
                    valid.push(index);
                } else {
                    first_failure.get_or_insert(index);
                }
            }
            // All of them as one row: fails at the same element.
            let mut out = vec![7];
            let failed = variable::encode_rows(rows, rows.len(), native, &mut out, &mut Vec::new());
            assert_eq!(failed.err(), first_failure, "{native:?} {rows:?}");
            // The valid ones as rows of one and as one row (the output grows several times).
            let kept = keep(rows, &valid);
            let mut fast = vec![7];
            let mut fast_ends = Vec::new();
            variable::encode_rows(Rows::from(&kept), 1, native, &mut fast, &mut fast_ends).unwrap();
            assert_eq!(fast[1..], general[..], "{native:?}");
            let shifted: Vec<usize> = ends.iter().map(|end| end + 1).collect();
            assert_eq!(fast_ends, shifted, "{native:?}");
            let mut whole = Vec::new();
            let mut whole_ends = Vec::new();
            let count = valid.len().max(1);
            variable::encode_rows(
                Rows::from(&kept),
                count,
                native,
                &mut whole,
                &mut whole_ends,
            )
            .unwrap();
            assert_eq!(whole, general, "{native:?}");
        }
    }
}

/// The elements of `rows` at `indices`, owned.
fn keep(rows: Rows<'_>, indices: &[usize]) -> Elements {
    fn pick<T: Copy>(v: &[T], indices: &[usize]) -> Vec<T> {
        indices.iter().map(|&i| v[i]).collect()
    }
    match rows {
        Rows::F16(v) => Elements::F16(pick(v, indices)),
        Rows::F32(v) => Elements::F32(pick(v, indices)),
        Rows::F64(v) => Elements::F64(pick(v, indices)),
        Rows::I8(v) => Elements::I8(pick(v, indices)),
        Rows::U8(v) => Elements::U8(pick(v, indices)),
        Rows::I16(v) => Elements::I16(pick(v, indices)),
        Rows::I32(v) => Elements::I32(pick(v, indices)),
        Rows::I64(v) => Elements::I64(pick(v, indices)),
    }
}

#[test]
fn prefixed_kernels_match_on_both_loop_builds() {
    let mut random = Random(5);
    let shorts: Vec<i16> = (0..4099).map(|_| random.next() as i16).collect();
    let days: Vec<i64> = (0..4099).map(|_| (random.next() >> 32) as i64).collect();
    compare_paths(&shorts, |x: i16| {
        let [hi, lo] = x.to_be_bytes();
        [2, hi, lo]
    });
    let expected: Vec<u8> = days
        .iter()
        .flat_map(|&d| [&[4u8][..], &(d as u32).to_be_bytes()].concat())
        .collect();
    assert_eq!(
        encode("vector<date, 4099>", Rows::I64(&days), 0).unwrap(),
        expected
    );
}

#[test]
fn targets_must_be_vectors_of_number_like_types() {
    let registry = crate::types::UdtRegistry::new();
    for ty in [
        "list<float>",
        "vector<uuid, 2>",
        "vector<list<int>, 2>",
        "float",
    ] {
        let ty = crate::types::parse_type(ty, &registry).unwrap();
        assert!(matches!(
            VectorEncoder::new(&ty),
            Err(VectorError::Unsupported(_))
        ));
    }
}

#[test]
fn shape_mismatch_is_an_error() {
    let error = encode("vector<float, 3>", Rows::F32(&[1.0; 4]), 0).unwrap_err();
    assert!(matches!(error, VectorError::Shape { .. }));
}
