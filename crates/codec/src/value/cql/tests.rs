use super::calendar::{civil_from_days, days_from_civil};
use super::*;
use crate::types::NativeType;
use crate::value::Value;
use num_bigint::BigInt;

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

fn round_trip(ty: &CqlType, value: Value) {
    let text = format_cql(ty, &value);
    assert_eq!(parse_cql(ty, &text), Ok(value), "{text}");
}

#[test]
fn civil_conversions_agree_at_known_points() {
    assert_eq!(days_from_civil(1970, 1, 1), 0);
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    for days in [-719_162, -1, 0, 59, 60, 365, 11_016, 19_723, 2_932_896] {
        let (y, m, d) = civil_from_days(days);
        assert_eq!(days_from_civil(y, m, d), days);
    }
}

#[test]
fn timestamps_print_quoted_and_read_back_in_common_forms() {
    let ty = native(NativeType::Timestamp);
    let value = Value::Timestamp(1_704_110_400_123);
    assert_eq!(format_cql(&ty, &value), "'2024-01-01 12:00:00.123Z'");
    for input in [
        "'2024-01-01 12:00:00.123Z'",
        "2024-01-01 12:00:00.123Z",
        "'2024-01-01T12:00:00.123Z'",
        "'2024-01-01 14:00:00.123+02:00'",
        "'2024-01-01 14:00:00.123+0200'",
        "1704110400123",
    ] {
        assert_eq!(parse_cql(&ty, input), Ok(value.clone()), "{input}");
    }
    assert_eq!(
        parse_cql(&ty, "'2024-01-01'"),
        Ok(Value::Timestamp(1_704_067_200_000))
    );
    assert_eq!(
        format_cql(&ty, &Value::Timestamp(i64::MIN)),
        i64::MIN.to_string()
    );
    round_trip(&ty, Value::Timestamp(i64::MAX));
    round_trip(&ty, Value::Timestamp(-62_135_596_800_000));
    round_trip(&ty, Value::Timestamp(-1));
}

#[test]
fn dates_times_and_durations() {
    let date = native(NativeType::Date);
    assert_eq!(format_cql(&date, &Value::Date(1 << 31)), "'1970-01-01'");
    assert_eq!(format_cql(&date, &Value::Date(0)), "0");
    round_trip(&date, Value::Date(0));
    round_trip(&date, Value::Date(u32::MAX));
    assert_eq!(
        parse_cql(&date, "1970-01-02"),
        Ok(Value::Date((1 << 31) + 1))
    );
    let time = native(NativeType::Time);
    assert_eq!(
        format_cql(&time, &Value::Time(45_296_123_456_789)),
        "'12:34:56.123456789'"
    );
    assert_eq!(
        parse_cql(&time, "12:34:56.5"),
        Ok(Value::Time(45_296_500_000_000))
    );
    let duration = native(NativeType::Duration);
    let d = |months, days, nanoseconds| Value::Duration {
        months,
        days,
        nanoseconds,
    };
    assert_eq!(format_cql(&duration, &d(0, 0, 5_400_000_000_000)), "1h30m");
    assert_eq!(format_cql(&duration, &d(-14, -3, -1)), "-1y2mo3d1ns");
    assert_eq!(format_cql(&duration, &d(13, -1, 0)), "+13mo-1d");
    assert_eq!(
        parse_cql(&duration, "P1DT2H"),
        Ok(d(0, 1, 7_200_000_000_000))
    );
    assert_eq!(parse_cql(&duration, "2w"), Ok(d(0, 14, 0)));
    for v in [
        d(0, 0, 0),
        d(i32::MAX, i32::MAX, i64::MAX),
        d(i32::MIN, i32::MIN, i64::MIN),
        d(0, 0, 1),
    ] {
        round_trip(&duration, v);
    }
    // Printable, but refused with the codec's message, as `encode` refuses it.
    let message = parse_cql(&duration, "-1mo+1d-1ns").unwrap_err().to_string();
    assert_eq!(
        message,
        crate::value::encode(&duration, &d(-1, 1, -1))
            .unwrap_err()
            .to_string()
    );
}

#[test]
fn numbers() {
    let int = native(NativeType::Int);
    assert_eq!(parse_cql(&int, "+12"), Ok(Value::Int(12)));
    assert_eq!(parse_cql(&int, "1e3"), Ok(Value::Int(1000)));
    assert!(parse_cql(&int, "1.5").is_err());
    assert!(parse_cql(&int, "2147483648").is_err());
    assert!(parse_cql(&int, "1e999999999999").is_err());
    let double = native(NativeType::Double);
    let negative_nan = f64::from_bits(0xfff8_0000_0000_0000);
    assert_eq!(
        format_cql(&double, &Value::Double(negative_nan)),
        "NaN(0xfff8000000000000)"
    );
    for x in [
        negative_nan,
        0.1,
        -0.0,
        1e300,
        f64::MIN_POSITIVE,
        5e-324,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        round_trip(&double, Value::Double(x));
    }
    let float = native(NativeType::Float);
    assert_eq!(format_cql(&float, &Value::Float(0.1)), "0.1");
    assert!(parse_cql(&float, "1e39").is_err());
    assert!(parse_cql(&float, "NaN(0x3f800000)").is_err());
    round_trip(&float, Value::Float(f32::from_bits(0x7f80_0001)));
    let decimal = native(NativeType::Decimal);
    for (unscaled, scale, text) in [
        (150, 2, "1.50"),
        (1, -3, "1E+3"),
        (-12, 9, "-1.2E-8"),
        (0, 0, "0"),
        (0, 10, "0E-10"),
        (123, 8, "0.00000123"),
    ] {
        let value = Value::Decimal {
            unscaled: BigInt::from(unscaled),
            scale,
        };
        assert_eq!(format_cql(&decimal, &value), text);
        round_trip(&decimal, value);
    }
}

#[test]
fn composites() {
    let registry_free_udt = CqlType::Udt(crate::types::UdtType {
        keyspace: None,
        name: "addr".into(),
        fields: vec![
            ("street".into(), native(NativeType::Text)),
            ("Zip".into(), native(NativeType::Int)),
        ],
    });
    let value = Value::Udt(vec![
        ("street".into(), Value::Text("it's".into())),
        ("Zip".into(), Value::Null),
    ]);
    assert_eq!(
        format_cql(&registry_free_udt, &value),
        "{street: 'it''s', \"Zip\": null}"
    );
    round_trip(&registry_free_udt, value);
    round_trip(
        &registry_free_udt,
        Value::Udt(vec![("street".into(), Value::Null)]),
    );
    let map = CqlType::Map(
        Box::new(native(NativeType::Text)),
        Box::new(CqlType::Set(Box::new(native(NativeType::Int)))),
    );
    let value = Value::Map(vec![(
        Value::Text("a".into()),
        Value::List(vec![Value::Int(1), Value::Null]),
    )]);
    assert_eq!(format_cql(&map, &value), "{'a': {1, null}}");
    round_trip(&map, value);
    let tuple = CqlType::Tuple(vec![native(NativeType::Int), native(NativeType::Blob)]);
    round_trip(
        &tuple,
        Value::Tuple(vec![Value::Int(1), Value::Blob(vec![0xca, 0xfe])]),
    );
    round_trip(&tuple, Value::Tuple(vec![Value::Int(1)]));
    let int_keys = CqlType::Map(
        Box::new(native(NativeType::Int)),
        Box::new(native(NativeType::Timestamp)),
    );
    assert_eq!(
        parse_cql(&int_keys, "{1:2024-01-01 00:00:00}"),
        Ok(Value::Map(vec![(
            Value::Int(1),
            Value::Timestamp(1_704_067_200_000)
        )]))
    );
}

#[test]
fn errors_name_position_and_path() {
    let ty = CqlType::List(Box::new(CqlType::Map(
        Box::new(native(NativeType::Int)),
        Box::new(native(NativeType::Int)),
    )));
    let error = parse_cql(&ty, "[{1: 2}, {3: x}]").unwrap_err();
    assert_eq!(error.position, Some(13));
    assert_eq!(error.path, "element 1 / map value #0");
    assert!(error.to_string().contains("at character 13"), "{error}");
    let vector = CqlType::Vector(Box::new(native(NativeType::Float)), 2);
    assert!(parse_cql(&vector, "[1.0]").is_err());
    for bad in ["", "[", "[1,", "'", "[1 2]", "[1]]", "$$", "<empty>"] {
        assert!(parse_cql(&ty, bad).is_err(), "{bad}");
    }
}
