//! Throughput of the capture layer alone (pcap/pcapng reading, link layers, TCP reassembly) on a
//! file: `cargo run --release --example capture_throughput -- FILE.pcap` prints the file's MB/s,
//! the stream bytes delivered and the counters. Big inputs: `benches/inspect/replay.py`.

use std::time::Instant;

use cqlwire_inspect::capture::{Capture, Event};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: capture_throughput FILE");
        std::process::exit(2);
    };
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let started = Instant::now();
    let mut capture = Capture::new(file).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (mut delivered, mut gaps, mut connections, mut problems) = (0u64, 0u64, 0u64, 0u64);
    capture
        .run(&mut |event| match event {
            Event::Data { bytes, .. } => delivered += bytes.len() as u64,
            Event::Gap { missing, .. } => gaps += missing,
            Event::Opened { .. } => connections += 1,
            Event::Problem(_) => problems += 1,
            Event::Closed { .. } => {}
        })
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{path}: {size} bytes in {seconds:.3} s = {:.0} MB/s; {connections} connections, \
         {delivered} stream bytes, {gaps} bytes of gaps, {problems} problems",
        size as f64 / seconds / 1e6
    );
    println!("{:?}", capture.stats());
}
