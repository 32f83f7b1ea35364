//! Property tests of the value codec: random types and values round-trip through the wire bytes,
//! and decoding arbitrary or corrupted bytes never panics.

use crate::values::{any_type, type_and_value};
use cqlwire_codec::value::{decode, decode_prefix, encode, explain, explain_allowing_trailing};
use proptest::prelude::*;

/// Nesting depth of the random types.
const DEPTH: u32 = 3;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn values_round_trip_through_bytes((ty, value) in type_and_value(DEPTH)) {
        let bytes = encode(&ty, &value).unwrap();
        let decoded = decode(&ty, &bytes).unwrap();
        prop_assert_eq!(&decoded, &value);
        prop_assert_eq!(encode(&ty, &decoded).unwrap(), bytes.clone());
        let explanation = explain(&ty, &bytes);
        prop_assert_eq!(explanation.result, Ok(value.clone()));
        let (prefix_value, used) = decode_prefix(&ty, &bytes).unwrap();
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(prefix_value, value);
    }

    #[test]
    fn corrupted_encodings_never_panic(
        (ty, value) in type_and_value(DEPTH),
        cut in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        tail in proptest::collection::vec(any::<u8>(), 0..3),
    ) {
        let mut bytes = encode(&ty, &value).unwrap();
        for (at, byte) in flips {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] ^= byte;
            }
        }
        let truncated = &bytes[..cut.index(bytes.len() + 1)];
        for payload in [truncated.to_vec(), [bytes.clone(), tail].concat()] {
            let strict = decode(&ty, &payload);
            if let Err(error) = &strict {
                prop_assert!(error.offset <= payload.len());
                prop_assert_eq!(error.to_string().lines().count(), 1);
            }
            let explanation = explain(&ty, &payload);
            prop_assert_eq!(explanation.result, strict);
            let _ = decode_prefix(&ty, &payload);
            let _ = explain_allowing_trailing(&ty, &payload);
        }
    }

    #[test]
    fn random_bytes_never_panic(ty in any_type(DEPTH), bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode(&ty, &bytes);
        let _ = decode_prefix(&ty, &bytes);
        let _ = explain(&ty, &bytes);
    }
}
