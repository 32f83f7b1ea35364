//! Decoding CQL values: collections, a UDT and a vector, from bytes made by our encoder (the encoder
//! is checked against the driver by crates/codec/tests/codec/driver_golden.rs), with throughput in payload bytes.
//!
//! Run: `cargo bench --bench decode`.

use cqlwire_codec::types::{parse_type, CqlType, UdtRegistry};
use cqlwire_codec::value::{decode, encode, explain, Value};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

/// One benchmark case: a name, its type and a value of that type.
struct Case {
    name: &'static str,
    ty: CqlType,
    value: Value,
}

fn cases() -> Vec<Case> {
    let mut udts = UdtRegistry::new();
    udts.declare("addr(street text, zip int, tags set<text>)")
        .unwrap();
    let ty = |text: &str| parse_type(text, &udts).unwrap();
    let address = |i: i32| {
        Value::Udt(vec![
            ("street".into(), Value::Text(format!("{i} Main Street"))),
            ("zip".into(), Value::Int(10_000 + i)),
            (
                "tags".into(),
                Value::List(vec![Value::Text("home".into()), Value::Text("work".into())]),
            ),
        ])
    };
    vec![
        Case {
            name: "list<int> x1000",
            ty: ty("list<int>"),
            value: Value::List((0..1000).map(Value::Int).collect()),
        },
        Case {
            name: "map<text, int> x100",
            ty: ty("map<text, int>"),
            value: Value::Map(
                (0..100)
                    .map(|i| (Value::Text(format!("key-{i}")), Value::Int(i)))
                    .collect(),
            ),
        },
        Case {
            name: "list<frozen<addr>> x100",
            ty: ty("list<frozen<addr>>"),
            value: Value::List((0..100).map(address).collect()),
        },
        Case {
            name: "vector<float, 768>",
            ty: ty("vector<float, 768>"),
            value: Value::List((0..768).map(|i| Value::Float(i as f32 / 768.0)).collect()),
        },
    ]
}

fn decoding(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for case in cases() {
        let bytes = encode(&case.ty, &case.value).unwrap();
        assert_eq!(decode(&case.ty, &bytes).unwrap(), case.value);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("decode {}", case.name), |b| {
            b.iter(|| decode(&case.ty, black_box(&bytes)).unwrap())
        });
        group.bench_function(format!("explain {}", case.name), |b| {
            b.iter(|| explain(&case.ty, black_box(&bytes)).lines.len())
        });
    }
    group.finish();
}

criterion_group!(benches, decoding);
criterion_main!(benches);
