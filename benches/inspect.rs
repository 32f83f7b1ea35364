//! The inspector library on the real Apache Cassandra captures in `fixtures/inspect`: pcap
//! reading, TCP reassembly, frames/segments and every message body decoded (rows and bound values
//! included), in memory, per capture (≈ 330 kB each); then the same with each message's JSON
//! written as `inspect --format json` writes it (group "inspect capture to JSON"). The
//! whole-process comparison with `tshark -V` on a big replayed capture is
//! `benches/compare/run.py --inspect-only --inspect-capture FILE` (and the inspect rows of its
//! full run).
//!
//! Run: `cargo bench --bench inspect`.

use cqlwire_codec::value::json::JsonWriter;
use cqlwire_inspect::capture::Capture;
use cqlwire_inspect::{Inspector, Options, Record};
use cqlwire_inspect::{RenderMessage, ValueForm};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

const CAPTURES: [&str; 3] = ["v4-lz4", "v4-none", "v5-lz4"];

/// Decodes a whole capture held in memory, with each message's JSON fields written when `json`
/// (as `inspect --format json` writes them, into a buffer reused from message to message); returns
/// the number of messages and problems.
fn inspect(bytes: &[u8], json: bool) -> (usize, usize) {
    let (mut messages, mut problems) = (0, 0);
    let mut inspector = Inspector::new(Options::default());
    let mut w = JsonWriter::new();
    let mut sink = |record: Record| match record {
        Record::Message(m) => {
            messages += 1;
            if let (true, Ok(message)) = (json, &m.message) {
                w.clear();
                w.begin_object();
                message.write_json_fields(&mut w, ValueForm::Plain);
                w.end_object();
                black_box(&w.buf);
            }
        }
        Record::Problem(_) => problems += 1,
        Record::Tls(_) => {}
    };
    let mut capture = Capture::new(bytes).unwrap();
    capture
        .run(&mut |event| inspector.event(event, &mut sink))
        .unwrap();
    inspector.finish(&mut sink);
    (messages, problems)
}

fn captures(c: &mut Criterion) {
    for (group, json) in [
        ("inspect capture", false),
        ("inspect capture to JSON", true),
    ] {
        let mut group = c.benchmark_group(group);
        group
            .sample_size(20)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_millis(1500));
        for name in CAPTURES {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/inspect")
                .join(format!("{name}.pcap"));
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let (messages, problems) = inspect(&bytes, json);
            assert!(
                messages > 100 && problems == 0,
                "{name}: {messages} messages, {problems} problems"
            );
            group.throughput(Throughput::Bytes(bytes.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(name), &bytes, |b, bytes| {
                b.iter(|| inspect(black_box(bytes), json))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, captures);
criterion_main!(benches);
