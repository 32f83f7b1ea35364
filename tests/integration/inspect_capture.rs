//! `cqlwire inspect` on what capturing does to a conversation, made here from the real captures of
//! fixtures/inspect or by `common::pcap`: packets cut to a snapshot length, a pcapng interface
//! clock offset before 1970, CQL on a port not watched, IP fragments, and more distinct
//! statements than `--stats` keeps. Each run goes through the built binary.

use crate::common::{
    fixture,
    pcap::{self, frame, query_body, run_limited, tcp_ports, Tcp},
};
use cqlwire_inspect::capture::Capture;
use cqlwire_inspect::Stats;
use cqlwire_inspect::{Inspector, Options};
use serde_json::Value as Json;
use std::ffi::OsStr;
use std::path::Path;

/// Runs `cqlwire inspect CAPTURE ARGS` (at most 1 GiB of address space).
fn inspect(capture: &Path, args: &[&str]) -> pcap::Ran {
    let mut all: Vec<&OsStr> = vec![OsStr::new("inspect"), capture.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    let run = run_limited(1024, &all);
    run.assert_success(&format!("inspect {} {args:?}", capture.display()));
    run
}

/// The JSON lines of a run.
fn json_lines(text: &str) -> Vec<Json> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Connection, direction, stream and opcode of each message of a JSON run.
fn message_keys(lines: &[Json]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.get("opcode").is_some())
        .map(|l| format!("{} {} {} {}", l["conn"], l["dir"], l["stream"], l["opcode"]))
        .collect()
}

/// Messages of a JSON run that carry a latency.
fn latencies(lines: &[Json]) -> usize {
    lines
        .iter()
        .filter(|l| l.get("latency_ms").is_some())
        .count()
}

#[test]
fn packets_cut_to_a_snapshot_length_keep_their_headers_paired_and_timed() {
    // The real captures as `tcpdump -s 96` and `-s 200` would have written them: each record
    // keeps its first bytes and its length on the wire. In v5, the envelopes a cut segment's
    // captured bytes finish decode whole (LZ4 segments included), the one they cut by its header.
    let dir = tempfile::tempdir().unwrap();
    for capture in ["v4-none", "v4-lz4", "v5-none", "v5-lz4"] {
        let original = fixture(&format!("inspect/{capture}.pcap"));
        let whole = json_lines(&inspect(&original, &["--format", "json"]).stdout);
        let packets = pcap::read_pcap(&original);
        for snaplen in [96, 200] {
            let path = dir.path().join(format!("{capture}-{snaplen}.pcap"));
            let cut: Vec<pcap::Packet> = packets
                .iter()
                .map(|p| pcap::Packet {
                    micros: p.micros,
                    wire_len: p.wire_len,
                    data: p.data[..p.data.len().min(snaplen)].to_vec(),
                })
                .collect();
            assert!(cut.iter().any(|p| p.data.len() < p.wire_len));
            pcap::write_pcap(&path, &cut);
            let run = inspect(&path, &["--format", "json"]);
            let lines = json_lines(&run.stdout);
            let what = format!("{capture} -s {snaplen}");
            let problems: Vec<&str> = lines
                .iter()
                .filter_map(|l| l.get("problem").and_then(Json::as_str))
                .collect();
            // One note per connection (the driver's control connection and its session), none
            // per packet.
            assert_eq!(problems.len(), 2, "{what}: {problems:?}");
            for problem in &problems {
                assert!(
                    problem.starts_with(&format!(
                        "capture truncated to {snaplen} bytes per packet (snapshot length): "
                    )) && problem.contains(" bytes not captured"),
                    "{what}: {problem}"
                );
            }
            // The frames cut short are shown by their header with what is missing. With 200
            // bytes every v4 header was captured: the same messages in the same order; with 96
            // (30 bytes of payload) a packet carrying a frame's end and the next header loses it,
            // as does a v5 segment whose captured bytes end before an envelope's header.
            let (keys, all_keys) = (message_keys(&lines), message_keys(&whole));
            let every_header = snaplen == 200 && capture.starts_with("v4");
            if every_header {
                assert_eq!(keys, all_keys, "{what}");
            } else {
                let mut rest = all_keys.iter();
                assert!(
                    keys.iter().all(|k| rest.any(|w| w == k)),
                    "{what}: not in the original order"
                );
                assert!(keys.len() * 100 >= all_keys.len() * 95, "{what}: {keys:?}");
            }
            let cut_short = lines
                .iter()
                .filter_map(|l| l.get("error").and_then(Json::as_str))
                .filter(|e| e.contains(" bytes not captured at byte "))
                .count();
            assert!(cut_short > 0, "{what}");
            // What decoded whole is what the whole capture decodes (values of an EXECUTE,
            // BATCH or Rows result are bytes when the PREPARED result they need was cut short).
            let place =
                |l: &Json| format!("{} {} {} {}", l["conn"], l["dir"], l["offset"], l["stream"]);
            let decoded = lines
                .iter()
                .filter(|l| l.get("opcode").is_some() && l.get("error").is_none());
            let mut same = 0;
            for line in decoded {
                // Envelopes of one v5 segment share its offset.
                let originals: Vec<&Json> =
                    whole.iter().filter(|w| place(w) == place(line)).collect();
                assert!(
                    originals.iter().any(|w| w["opcode"] == line["opcode"]),
                    "{what}: {line}"
                );
                if !matches!(
                    line["opcode"].as_str(),
                    Some("EXECUTE" | "BATCH" | "RESULT")
                ) {
                    assert!(originals.contains(&line), "{what}: {line}");
                }
                same += 1;
            }
            assert!(same > 0, "{what}");
            let (paired, all) = (latencies(&lines), latencies(&whole));
            println!(
                "{what}: {paired} of {all} latencies, {same} messages whole, {cut_short} cut short"
            );
            let least = if every_header { all } else { all * 9 / 10 };
            assert!(paired >= least, "{what}: {paired} of {all} latencies");
        }
    }
}

/// `count` QUERY/RESULT Void pairs on one connection from `client_port` to `server_port`, as
/// packets one microsecond apart from `start`; `text(i)` is the i-th query.
fn pairs(
    client_port: u16,
    server_port: u16,
    start: i64,
    count: usize,
    text: impl Fn(usize) -> String,
) -> Vec<pcap::Packet> {
    let mut tcp = Tcp::new(client_port, server_port);
    let mut packets = tcp.handshake();
    for i in 0..count {
        let stream = (i % 32_768) as i16;
        let query = query_body(text(i).as_bytes());
        packets.extend(tcp.send(true, &frame(4, 0, stream, 0x07, &query)));
        packets.extend(tcp.send(false, &frame(0x84, 0, stream, 0x08, &1i32.to_be_bytes())));
    }
    pcap::timed(start, packets)
}

#[test]
fn a_negative_pcapng_clock_offset_gives_times_before_1970() {
    // A pcapng interface with `if_tsoffset` -86400 s: packets stamped 0.5 s after the epoch were
    // captured on 1969-12-31, half a second after midnight.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("before-1970.pcapng");
    let mut option = 14u16.to_le_bytes().to_vec();
    option.extend(8u16.to_le_bytes());
    option.extend((-86_400i64).to_le_bytes());
    let mut w = pcap::Writer::pcapng(&path, &option);
    for p in pairs(6200, 9042, 500_000, 2, |i| format!("SELECT {i}")) {
        w.packet(&p);
    }
    w.finish();
    let lines = json_lines(&inspect(&path, &["--format", "json"]).stdout);
    let times: Vec<&str> = lines.iter().map(|l| l["time"].as_str().unwrap()).collect();
    // Handshake at 0.500000–0.500002, then one packet per microsecond.
    assert_eq!(
        times,
        [
            "1969-12-31T00:00:00.500003Z",
            "1969-12-31T00:00:00.500004Z",
            "1969-12-31T00:00:00.500005Z",
            "1969-12-31T00:00:00.500006Z"
        ]
    );
    assert_eq!(lines[1]["latency_ms"], 0.001);
    let text = inspect(&path, &[]).stdout;
    assert!(
        text.starts_with("00:00:00.500003 10.0.0.1:6200-10.0.0.2:9042 > v4 s0 QUERY"),
        "{text}"
    );
}

#[test]
fn cql_on_a_port_not_watched_is_hinted_at() {
    // The session connection of v4-none moved to port 9142 (Cassandra's usual TLS port, not
    // watched by default) and captured from the middle of a frame on: nothing tells it is CQL.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("port-9142.pcap");
    let packets = pcap::read_pcap(&fixture("inspect/v4-none.pcap"));
    // The session is the connection with the most client bytes.
    let mut bytes_by_client = std::collections::BTreeMap::<u16, usize>::new();
    for p in &packets {
        if let Some((source, 9042, start)) = tcp_ports(&p.data) {
            *bytes_by_client.entry(source).or_default() += p.data.len() - start;
        }
    }
    let (&session, _) = bytes_by_client.iter().max_by_key(|(_, n)| **n).unwrap();
    // Its client stream's frame boundaries (9-byte headers), and the first client packet that
    // starts inside a frame.
    let mut offset = 0;
    let mut next_frame = 0;
    let mut first = None;
    for (i, p) in packets.iter().enumerate() {
        let Some((source, _, start)) = tcp_ports(&p.data) else {
            continue;
        };
        let payload = &p.data[start..];
        if source != session || payload.is_empty() {
            continue;
        }
        if offset != next_frame {
            first = Some(i);
            break;
        }
        let end = offset + payload.len();
        while next_frame + 9 <= end {
            let at = next_frame - offset;
            let length = u32::from_be_bytes(payload[at + 5..at + 9].try_into().unwrap());
            next_frame += 9 + length as usize;
        }
        offset = end;
    }
    let first = first.expect("a frame longer than a packet");
    let moved: Vec<pcap::Packet> = packets[first..]
        .iter()
        .filter(|p| tcp_ports(&p.data).is_some_and(|(s, d, _)| s == session || d == session))
        .map(|p| {
            let mut data = p.data.clone();
            let tcp = 14 + usize::from(data[14] & 0x0f) * 4;
            for at in [tcp, tcp + 2] {
                if data[at..at + 2] == 9042u16.to_be_bytes() {
                    data[at..at + 2].copy_from_slice(&9142u16.to_be_bytes());
                }
            }
            pcap::Packet {
                micros: p.micros,
                wire_len: p.wire_len,
                data,
            }
        })
        .collect();
    pcap::write_pcap(&path, &moved);

    let run = inspect(&path, &[]);
    assert_eq!(run.stdout, "");
    let hint = "cqlwire: hint: no CQL found on port 9042 or 19042; TCP traffic on port 9142 (";
    assert!(run.stderr.starts_with(hint), "{}", run.stderr);
    assert!(
        run.stderr
            .ends_with("bytes): if it is CQL, name its port with --port 9142\n"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    // `--quiet` says nothing; the port named decodes the rest of the session.
    assert_eq!(inspect(&path, &["--quiet"]).stderr, "");
    let run = inspect(&path, &["--port", "9142"]);
    let responses = run.stdout.lines().filter(|l| l.contains(" < v4 ")).count();
    assert!(responses >= 15, "{}", run.stdout);
    assert!(!run.stderr.contains("hint"), "{}", run.stderr);
}

#[test]
fn ip_fragments_are_counted_in_the_summary_and_the_statistics() {
    // 20 pairs and 3 packets marked as IPv4 fragments (more-fragments flag, offsets 0 and 8).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fragments.pcap");
    let mut packets = pairs(6300, 9042, 1_700_000_000_000_000, 20, |i| {
        format!("SELECT {i}")
    });
    let mut tcp = Tcp::new(6301, 9042);
    for offset_units in [0u16, 1, 0] {
        let mut data = tcp.packet(true, pcap::ACK, b"fragmented datagram");
        // Flags and fragment offset: more fragments, then the offset in 8-byte units.
        data[20..22].copy_from_slice(&(0x2000 | offset_units).to_be_bytes());
        packets.push(pcap::Packet {
            micros: 1_700_000_001_000_000,
            wire_len: data.len(),
            data,
        });
    }
    pcap::write_pcap(&path, &packets);

    let run = inspect(&path, &[]);
    assert_eq!(run.stdout.lines().count(), 40, "{}", run.stdout);
    assert_eq!(
        run.stderr,
        "cqlwire: 3 IP fragments skipped (not reassembled)\n"
    );
    let run = inspect(&path, &["--stats"]);
    assert!(
        run.stdout
            .ends_with("0 problems\n3 IP fragments skipped (not reassembled)\n"),
        "{}",
        run.stdout
    );
    let run = inspect(&path, &["--stats", "--format", "json"]);
    let stats: Json = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(stats["ip_fragments"], 3, "{stats}");
    // None: not mentioned.
    let plain = dir.path().join("plain.pcap");
    pcap::write_pcap(
        &plain,
        &pairs(6400, 9042, 1_700_000_000_000_000, 2, |i| {
            format!("SELECT {i}")
        }),
    );
    assert_eq!(inspect(&plain, &[]).stderr, "");
    assert!(!inspect(&plain, &["--stats"]).stdout.contains("fragment"));
}

/// Writes `count` QUERY/RESULT pairs of distinct texts, `SELECT <i> -- <padding>` of `len`
/// bytes, to a pcap at `path`.
fn distinct_statements(path: &Path, count: usize, len: usize) {
    let mut w = pcap::Writer::pcap(path);
    let text = |i: usize| {
        let head = format!("SELECT {i} -- ");
        format!("{head}{}", "x".repeat(len.saturating_sub(head.len())))
    };
    for p in pairs(6500, 9042, 1_700_000_000_000_000, count, text) {
        w.packet(&p);
    }
    w.finish();
}

#[test]
fn statistics_keep_the_first_statements_and_count_the_rest() {
    // Through the library with a bound of 5: 12 distinct statements, the first twice.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twelve.pcap");
    distinct_statements(&path, 12, 20);
    let file = std::fs::File::open(&path).unwrap();
    let mut capture = Capture::new(std::io::BufReader::new(file)).unwrap();
    let mut inspector = Inspector::new(Options::default());
    let mut stats = Stats::with_max_statements(5);
    capture
        .run(&mut |event| inspector.event(event, &mut |record| stats.add(&record)))
        .unwrap();
    inspector.finish(&mut |record| stats.add(&record));
    assert_eq!(stats.statements.len(), 5);
    assert!(stats.statements.keys().all(|k| k.starts_with("SELECT ")));
    assert_eq!(
        (stats.more.distinct, stats.more.count, stats.more.errors),
        (7, 7, 0)
    );

    // Through the binary: 10,000 kept of 10,025, the rest one line.
    let path = dir.path().join("many.pcap");
    distinct_statements(&path, 10_025, 20);
    let run = inspect(&path, &["--stats"]);
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .take_while(|l| !l.is_empty())
        .skip(1)
        .collect();
    assert_eq!(rows.len(), 10_001);
    assert_eq!(
        rows.iter().filter(|r| r.contains("  SELECT ")).count(),
        10_000
    );
    assert_eq!(
        rows[10_000].split_whitespace().collect::<Vec<_>>(),
        ["25", "0", "-", "-", "-", "(25", "more", "statements)"]
    );
    let run = inspect(&path, &["--stats", "--format", "json"]);
    let stats: Json = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(stats["statements"].as_array().unwrap().len(), 10_000);
    assert_eq!(
        stats["more_statements"],
        serde_json::json!({"distinct": 25, "count": 25, "errors": 0})
    );
}

#[test]
fn statistics_of_many_distinct_statements_stay_in_bounded_memory() {
    // 100,000 distinct 1 KiB query texts: keeping each took about 100 MiB more than the ceiling
    // leaves; 10,000 of them take 10 MiB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("distinct.pcap");
    distinct_statements(&path, 100_000, 1024);
    let args = ["inspect", "--stats", "--quiet"].map(OsStr::new);
    let run = run_limited(96, &[&args[..2], &[path.as_os_str()], &args[2..]].concat());
    run.assert_success("100,000 distinct statements");
    assert!(
        run.stdout.contains("(90000 more statements)"),
        "{}",
        &run.stdout[run.stdout.len().saturating_sub(500)..]
    );
}
