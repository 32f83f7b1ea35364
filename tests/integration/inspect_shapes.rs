//! `cqlwire inspect` on captures of shapes no healthy conversation has, made here by
//! `common::pcap`: requests never answered, long values and metadata, thousands of connections,
//! hostile strings, an RST outside its stream, a damaged pcapng block and rotated files. Each run
//! goes through the built binary, under an address-space ceiling where the case is about memory.

use crate::common::pcap::{self, frame, lz4_body, query_body, run_limited, startup_body, Tcp};
use std::ffi::OsStr;
use std::path::Path;

/// Runs `cqlwire inspect CAPTURE ARGS` with at most `mib` MiB of address space.
fn inspect(mib: u64, capture: &Path, args: &[&str]) -> pcap::Ran {
    let mut all: Vec<&OsStr> = vec![OsStr::new("inspect"), capture.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    run_limited(mib, &all)
}

/// Runs `cqlwire inspect FLAG FILE --format FORMAT`, FLAG `--client` or `--server` (one
/// direction's raw bytes), with at most `mib` MiB of address space.
fn inspect_stream(mib: u64, flag: &str, file: &Path, format: &str) -> pcap::Ran {
    let args = ["inspect", flag, "--format", format].map(OsStr::new);
    run_limited(mib, &[&args[..2], &[file.as_os_str()], &args[2..]].concat())
}

/// `connections` connections, each sending a STARTUP (stream 0) naming LZ4 then `queries` QUERYs
/// `text(connection, i)` as LZ4 frames on streams 1, 2, …, none answered.
fn unanswered(path: &Path, connections: u16, queries: usize, text: impl Fn(u16, usize) -> Vec<u8>) {
    let mut w = pcap::Writer::pcap(path);
    let mut micros = 1_700_000_000_000_000;
    for c in 0..connections {
        let mut tcp = Tcp::new(40_000 + c, 9042);
        let startup = startup_body(&[("CQL_VERSION", "3.0.0"), ("COMPRESSION", "lz4")]);
        let mut packets = tcp.handshake();
        packets.extend(tcp.send(true, &frame(4, 0, 0, 0x01, &startup)));
        for i in 0..queries {
            let body = lz4_body(&query_body(&text(c, i)));
            packets.extend(tcp.send(true, &frame(4, 1, i as i16 + 1, 0x07, &body)));
        }
        for p in pcap::timed(micros, packets) {
            w.packet(&p);
        }
        micros += 1_000_000;
    }
    w.finish();
}

#[test]
fn unanswered_requests_that_inflate_keep_only_their_gist() {
    // 16 connections, each one QUERY whose 64 KiB LZ4 body inflates to 16 MiB, never answered:
    // holding each decompressed request until its answer takes 16 x 16 MiB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inflating.pcap");
    unanswered(&path, 16, 1, |c, _| {
        [
            format!("SELECT {c} FROM t WHERE k = '").as_bytes(),
            &[b'a'; 16 << 20],
        ]
        .concat()
    });
    // Each run holds about one request at a time: twice its 16 MiB while it is decoded.
    let run = inspect(128, &path, &[]);
    run.assert_success("inflating queries");
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(" QUERY "))
        .collect();
    assert_eq!(lines.len(), 16, "{}", run.stdout);
    assert!(
        lines[15].contains("\"SELECT 15 FROM t WHERE k = 'aaaa"),
        "{}",
        lines[15]
    );
    assert!(!run.stdout.contains("forgotten"), "{}", run.stdout);
}

#[test]
fn a_capture_of_requests_only_keeps_a_bounded_pending_set() {
    // What `tcpdump dst port 9042` records: 32,767 QUERYs of 30 kB on one connection (LZ4, so the
    // file stays small), no response. Each request kept whole until its answer is 1 GB; held for
    // --slower-than with its body, 3 GB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests-only.pcap");
    unanswered(&path, 1, 32_767, |_, i| {
        [
            format!("SELECT * FROM t WHERE k = {i} AND v = '").as_bytes(),
            &[b'x'; 30_000],
        ]
        .concat()
    });
    for args in [&[][..], &["--slower-than", "1ms"], &["--stats"]] {
        let run = inspect(128, &path, args);
        run.assert_success(&format!("{args:?}"));
        if args.is_empty() {
            let queries = run.stdout.lines().filter(|l| l.contains(" QUERY ")).count();
            assert_eq!(queries, 32_767);
            assert!(
                run.stdout.contains("the oldest are forgotten"),
                "{}",
                &run.stdout[run.stdout.len().saturating_sub(2000)..]
            );
            assert!(run
                .stdout
                .contains("requests were forgotten while waiting for a response"));
        }
        if args == ["--slower-than", "1ms"] {
            assert!(
                run.stdout.contains("--slower-than holds more than 32 MiB"),
                "{}",
                run.stdout
            );
        }
    }
}

/// A v4 RESULT Rows frame (stream 1) of table `ks.t` (a global table spec): `columns` column
/// specifications `specs`, then `rows` rows whose `[value]`s are `values`.
fn rows_frame(columns: usize, specs: &[u8], rows: usize, values: &[u8]) -> Vec<u8> {
    let mut body = [2i32, 1, columns as i32].map(i32::to_be_bytes).concat();
    body.extend([string("ks"), string("t")].concat());
    body.extend(specs);
    body.extend((rows as i32).to_be_bytes());
    body.extend(values);
    frame(0x84, 0, 1, 0x08, &body)
}

/// A RESULT of one `list<boolean>` column and one row whose list has `count` elements, all true.
fn booleans_frame(count: usize) -> Vec<u8> {
    let mut list = (count as i32).to_be_bytes().to_vec();
    list.extend([0, 0, 0, 1, 1].repeat(count));
    let value = [&(list.len() as i32).to_be_bytes()[..], &list].concat();
    rows_frame(1, &[&string("c")[..], &[0, 0x20, 0, 4]].concat(), 1, &value)
}

#[test]
fn a_long_collection_is_written_and_explained_as_it_is_read() {
    // One list of 1.5 M booleans (7.5 MB): decoded whole it is 80 MB of values for JSON, and
    // explained 1.5 M lines gathered before they are written, several hundred MB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("booleans.bin");
    let count = 1_500_000;
    std::fs::write(&path, booleans_frame(count)).unwrap();
    for format in ["json", "explain"] {
        let run = inspect_stream(64, "--server", &path, format);
        run.assert_success(format);
        if format == "json" {
            let json: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
            let list = json["body"]["rows"][0][0].as_array().unwrap();
            assert_eq!(list.len(), count);
            assert!(list.iter().all(|v| v == true));
        } else {
            let lines = run
                .stdout
                .lines()
                .filter(|l| l.contains(" boolean true [row 0 / column 0 / element "))
                .count();
            assert_eq!(
                lines,
                count,
                "{}",
                &run.stdout[..2000.min(run.stdout.len())]
            );
        }
    }
}

#[test]
fn redacted_explain_lines_are_written_as_they_are_read() {
    // With --redact every value is one line saying what it was; gathering a message's lines to
    // replace them afterwards took hundreds of MB for one list of 1.5 M booleans (and hashed the
    // whole list again for each of its lines), 380 MB for a 2 MB BATCH of 500,000 values.
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("booleans.bin");
    std::fs::write(&list, booleans_frame(1_500_000)).unwrap();
    let batch = dir.path().join("batch.bin");
    let body = batch_body(10_000, b"INSERT INTO t (k) VALUES (?)", 50);
    std::fs::write(&batch, frame(4, 0, 1, 0x0d, &body)).unwrap();
    for (flag, path, values) in [("--server", &list, 1), ("--client", &batch, 500_000)] {
        let args = ["inspect", flag, "--format", "explain", "--redact"].map(OsStr::new);
        let run = run_limited(64, &[&args[..2], &[path.as_os_str()], &args[2..]].concat());
        run.assert_success(flag);
        let redacted = run
            .stdout
            .lines()
            .filter(|l| l.contains("<redacted "))
            .count();
        assert_eq!(redacted, values, "{flag}");
        assert!(!run.stdout.contains("boolean true"), "{flag}");
        // The statements' query texts are redacted too, and no value's bytes are shown.
        let longest = run.stdout.lines().map(str::len).max().unwrap_or(0);
        assert!(longest < 300, "{flag}: a line of {longest} bytes");
    }
}

/// A RESULT of `count` int columns `c0`, `c1`, … and no rows.
fn wide_result_frame(count: usize) -> Vec<u8> {
    let specs: Vec<u8> = (0..count)
        .flat_map(|i| [string(&format!("c{i}")), vec![0, 9]].concat())
        .collect();
    rows_frame(count, &specs, 0, &[])
}

#[test]
fn column_specifications_are_kept_compact() {
    // 600,000 column specs (6 MB): a keyspace, table, name and type held per column took about
    // 240 bytes each (150 MB); every format must stay within 72 MiB of address space (explain
    // needs 64 of them, so a little room is left for allocator and thread-stack differences).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.bin");
    let count = 600_000;
    std::fs::write(&path, wide_result_frame(count)).unwrap();
    for format in ["text", "json", "explain"] {
        let run = inspect_stream(72, "--server", &path, format);
        run.assert_success(format);
        match format {
            "text" => assert!(run.stdout.contains("RESULT Rows: 0 rows × 600000 columns")),
            "json" => {
                let json: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
                let columns = json["body"]["columns"].as_array().unwrap();
                assert_eq!(columns.len(), count);
                let last = serde_json::json!({"name": "c599999", "type": "int", "keyspace": "ks", "table": "t"});
                assert_eq!(columns[count - 1], last);
            }
            _ => {
                let names = run
                    .stdout
                    .lines()
                    .filter(|l| l.contains(" name \"c"))
                    .count();
                assert_eq!(names, count);
            }
        }
    }
}

#[test]
fn a_60_mib_query_is_held_a_few_times_at_most() {
    // The frame as it arrives, its body and the query text: 3 x 60 MiB and more took 313 MB
    // (the buffer grown by doubling, the frame copied out of it and decoded while held).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("query.bin");
    let text = [&b"SELECT * FROM t WHERE k = '"[..], &[b'q'; 60 << 20], b"'"].concat();
    std::fs::write(&path, frame(4, 0, 1, 0x07, &query_body(&text))).unwrap();
    for format in ["text", "json", "explain"] {
        let run = inspect_stream(288, "--client", &path, format);
        run.assert_success(format);
        assert!(run.stdout.contains("QUERY") || run.stdout.contains("\"opcode\":\"QUERY\""));
    }
}

/// A v4 BATCH body of `statements` unprepared statements `text`, each with `values` empty values.
fn batch_body(statements: u16, text: &[u8], values: u16) -> Vec<u8> {
    let mut body = vec![1];
    body.extend(statements.to_be_bytes());
    for _ in 0..statements {
        body.push(0);
        body.extend((text.len() as u32).to_be_bytes());
        body.extend(text);
        body.extend(values.to_be_bytes());
        body.extend((0..values).flat_map(|_| 0u32.to_be_bytes()));
    }
    body.extend([0, 1, 0]);
    body
}

#[test]
fn bound_values_are_read_again_from_the_body_not_kept() {
    // A 2 MiB BATCH of 8 statements with 65,535 empty values each: half a million values kept
    // decoded (a name, a type and a cell each) took 130 MB; read again from the body as they are
    // written, every format stays well under 96 MiB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("batch.bin");
    std::fs::write(
        &path,
        frame(4, 0, 1, 0x0d, &batch_body(8, b"INSERT", 65_535)),
    )
    .unwrap();
    for format in ["text", "json", "explain"] {
        let run = inspect_stream(96, "--client", &path, format);
        run.assert_success(format);
        match format {
            "text" => assert!(run.stdout.contains("BATCH UNLOGGED 8 statements")),
            "json" => {
                let message: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
                let statements = message["body"]["statements"].as_array().unwrap();
                assert_eq!(statements.len(), 8);
                for statement in statements {
                    let values = statement["values"].as_array().unwrap();
                    assert_eq!(values.len(), 65_535);
                    assert!(values
                        .iter()
                        .all(|v| *v == serde_json::json!({"bytes": "0x"})));
                }
            }
            _ => {
                let values = run
                    .stdout
                    .lines()
                    .filter(|l| l.contains(": 0x (type unknown)"))
                    .count();
                assert_eq!(values, 8 * 65_535);
            }
        }
    }
}

#[test]
fn a_supported_of_millions_of_values_is_read_from_the_body() {
    // A 15 MiB SUPPORTED of 120 options with 65,535 empty values each: a String per value took
    // 231 MB (text); read again from the body as it is written, it stays within 96 MiB, and its
    // gist is cut.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("supported.bin");
    let mut body = 120u16.to_be_bytes().to_vec();
    for key in 0..120 {
        body.extend(string(&format!("k{key:03}")));
        body.extend(u16::MAX.to_be_bytes());
        body.extend([0u8; 2].repeat(65_535));
    }
    std::fs::write(&path, frame(0x84, 0, 1, 0x06, &body)).unwrap();
    let run = inspect_stream(96, "--server", &path, "text");
    run.assert_success("text");
    let line = run.stdout.trim_end();
    assert!(
        line.contains("SUPPORTED k000=,,,") && line.ends_with('…'),
        "{line:.200}"
    );
    assert!(line.len() < 5000, "{} bytes", line.len());
    let run = inspect_stream(96, "--server", &path, "json");
    run.assert_success("json");
    let message: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let options = message["body"]["options"].as_object().unwrap();
    assert_eq!(options.len(), 120);
    for values in options.values() {
        let values = values.as_array().unwrap();
        assert_eq!(values.len(), 65_535);
        assert!(values.iter().all(|v| v == ""));
    }
}

#[test]
fn a_failure_of_millions_of_replicas_is_read_from_the_body() {
    // A 16 MiB v5 Read_failure whose reason map names 2.3 M replicas: kept as a list of addresses
    // and written as one JSON text it took 170 MB; read again from the body and written in
    // pieces, it stays within 96 MiB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("failure.bin");
    let count = 2_300_000;
    let mut body = [
        &0x1300i32.to_be_bytes()[..],
        &string(""),
        &1u16.to_be_bytes(),
    ]
    .concat();
    body.extend([0i32, 1, count].map(i32::to_be_bytes).concat());
    body.extend([4, 127, 0, 0, 1, 0, 1].repeat(count as usize));
    body.push(0);
    std::fs::write(&path, frame(0x85, 0, 1, 0x00, &body)).unwrap();
    let run = inspect_stream(96, "--server", &path, "text");
    run.assert_success("text");
    assert!(run.stdout.contains("ERROR Read_failure (0x1300)"));
    let run = inspect_stream(96, "--server", &path, "json");
    run.assert_success("json");
    let message: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let failures = message["body"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), count as usize);
    let reason = serde_json::json!({"endpoint": "127.0.0.1", "reason": 1});
    assert!(failures.iter().all(|f| *f == reason));
    assert_eq!(message["body"]["data_present"], false);
}

#[test]
fn a_batch_naming_one_long_prepared_statement_writes_its_text_once() {
    // 65,535 statements of 21 bytes each run one prepared statement of 900 KiB, whose first 16 KiB
    // are remembered: that text copied into each statement (1 GB) or written at each stays out;
    // the JSON names it at the first statement only.
    let dir = tempfile::tempdir().unwrap();
    let (client, server) = (dir.path().join("client.bin"), dir.path().join("server.bin"));
    let id = b"0123456789abcdef";
    let text = [&b"INSERT INTO t (k) VALUES (?) -- "[..], &[b'x'; 900 << 10]].concat();
    let short_bytes = |b: &[u8]| [&(b.len() as u16).to_be_bytes()[..], b].concat();
    let mut batch = vec![1];
    batch.extend(u16::MAX.to_be_bytes());
    for _ in 0..u16::MAX {
        batch.push(1);
        batch.extend(short_bytes(id));
        batch.extend(0u16.to_be_bytes());
    }
    batch.extend([0, 1, 0]);
    let prepare = [&(text.len() as u32).to_be_bytes()[..], &text].concat();
    let requests = [frame(4, 0, 1, 0x09, &prepare), frame(4, 0, 2, 0x0d, &batch)].concat();
    // Prepared: the id, no variables (flags, count, no partition key), no result metadata.
    let prepared = [
        &4i32.to_be_bytes()[..],
        &short_bytes(id),
        &[0i32, 0, 0, 4, 0].map(i32::to_be_bytes).concat(),
    ]
    .concat();
    let responses = [
        frame(0x84, 0, 1, 0x08, &prepared),
        frame(0x84, 0, 2, 0x08, &1i32.to_be_bytes()),
    ]
    .concat();
    std::fs::write(&client, requests).unwrap();
    std::fs::write(&server, responses).unwrap();
    for format in ["text", "json", "explain"] {
        let args = ["inspect", "--client", "--server", "--format", format].map(OsStr::new);
        let run = run_limited(
            96,
            &[
                &args[..2],
                &[client.as_os_str()],
                &args[2..3],
                &[server.as_os_str()],
                &args[3..],
            ]
            .concat(),
        );
        run.assert_success(format);
        // The text once, each statement's id (50 bytes of JSON, three lines of explain).
        let most = if format == "explain" {
            24 << 20
        } else {
            8 << 20
        };
        assert!(
            run.stdout.len() < most,
            "{format}: {} bytes",
            run.stdout.len()
        );
        if format == "json" {
            let batch: serde_json::Value = serde_json::from_str(
                run.stdout
                    .lines()
                    .find(|l| l.contains("\"BATCH\""))
                    .unwrap(),
            )
            .unwrap();
            let statements = batch["body"]["statements"].as_array().unwrap();
            assert_eq!(statements.len(), 65_535);
            let query = statements[0]["query"].as_str().unwrap();
            assert!(query.starts_with(std::str::from_utf8(&text[..16 << 10]).unwrap()));
            assert!(query.contains(&format!("… [{} bytes, #", text.len())));
            assert!(statements[1..].iter().all(|s| s.get("query").is_none()));
            assert!(statements
                .iter()
                .all(|s| s["id"] == "0x30313233343536373839616263646566"));
        }
    }
}

#[test]
fn a_request_without_a_password_is_explained_as_it_is_read() {
    // One BATCH of 10,000 statements with 50 values each (2 MB, half a million explain lines): by
    // default masking hides passwords only, so with none in it the lines must be written as they
    // are read, not gathered first (380 MB peak gathered); and they are the unmasked lines.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("batch.bin");
    let body = batch_body(10_000, b"INSERT INTO t (k) VALUES (?)", 50);
    std::fs::write(&path, frame(4, 0, 1, 0x0d, &body)).unwrap();
    let run = inspect_stream(96, "--client", &path, "explain");
    run.assert_success("explain");
    let values = run.stdout.lines().filter(|l| l.contains(" value ")).count();
    assert!(values >= 500_000, "{values} value lines");
    let args = [
        "inspect",
        "--client",
        "--format",
        "explain",
        "--show-secrets",
    ]
    .map(OsStr::new);
    let plain = run_limited(
        1024,
        &[&args[..2], &[path.as_os_str()], &args[2..]].concat(),
    );
    plain.assert_success("--show-secrets");
    assert!(
        plain.stdout == run.stdout,
        "masked explain differs from --show-secrets"
    );
}

#[test]
fn seventeen_thousand_open_connections_all_decode() {
    // Each connection sends half a QUERY, then, once all are open, the other half: with a
    // connection table of 16,384 evicting an eighth of it at each new connection, every one of
    // them lost its data.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.pcap");
    let connections = 17_000u16;
    let frames: Vec<Vec<u8>> = (0..connections)
        .map(|c| frame(4, 0, 1, 0x07, &query_body(format!("SELECT {c}").as_bytes())))
        .collect();
    let mut tcps: Vec<Tcp> = (0..connections)
        .map(|c| Tcp::new(10_000 + c, 9042))
        .collect();
    let mut packets = Vec::new();
    for (tcp, frame) in tcps.iter_mut().zip(&frames) {
        packets.extend(tcp.handshake());
        packets.extend(tcp.send(true, &frame[..frame.len() / 2]));
    }
    for (tcp, frame) in tcps.iter_mut().zip(&frames) {
        packets.extend(tcp.send(true, &frame[frame.len() / 2..]));
    }
    pcap::write_pcap(&path, &pcap::timed(1_700_000_000_000_000, packets));
    let run = inspect(256, &path, &[]);
    run.assert_success("17,000 connections");
    let queries = run
        .stdout
        .lines()
        .filter(|l| l.contains(" QUERY \"SELECT "))
        .count();
    assert_eq!(queries, connections as usize);
    assert!(!run.stdout.contains(" ! "), "{}", &run.stdout[..2000]);
}

#[test]
fn a_connection_dropped_over_the_limit_is_reported_once() {
    // 66,000 connections, each sending one whole QUERY and staying open: over the 65,536 tracked
    // at once the least recently active are dropped (said once), and every QUERY still decodes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("more.pcap");
    let connections = 66_000u32;
    let mut packets = Vec::new();
    for c in 0..connections {
        let mut tcp = Tcp::new(
            (c % 60_000) as u16 + 1024,
            9042 + (c / 60_000) as u16 * 10_000,
        );
        packets.extend(tcp.handshake());
        packets.extend(tcp.send(
            true,
            &frame(4, 0, 1, 0x07, &query_body(format!("SELECT {c}").as_bytes())),
        ));
    }
    pcap::write_pcap(&path, &pcap::timed(1_700_000_000_000_000, packets));
    let run = inspect(512, &path, &[]);
    run.assert_success("66,000 connections");
    let queries = run
        .stdout
        .lines()
        .filter(|l| l.contains(" QUERY \"SELECT "))
        .count();
    assert_eq!(queries, connections as usize);
    let dropped: Vec<&str> = run.stdout.lines().filter(|l| l.contains(" ! ")).collect();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert!(
        dropped[0]
            .contains("10.0.0.1:1024-10.0.0.2:9042 > ! connection dropped: more than 65536 open"),
        "{}",
        dropped[0]
    );
}

/// A `[string]`.
fn string(s: &str) -> Vec<u8> {
    [&(s.len() as u16).to_be_bytes()[..], s.as_bytes()].concat()
}

#[test]
fn captured_strings_cannot_forge_output_lines() {
    // Every string a message carries that a text line shows, each with a newline (and other
    // controls) followed by what would read as a message line of its own.
    let forged =
        "x\n00:00:00.000000 10.0.0.9:1-10.0.0.9:9042 > v4 s9 QUERY \"FORGED\" ONE\r\u{1b}[2K";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forged.pcap");
    let mut tcp = Tcp::new(5555, 9042);
    let mut packets = tcp.handshake();
    let startup = startup_body(&[("CQL_VERSION", forged)]);
    let supported = [
        &1u16.to_be_bytes()[..],
        &string(forged),
        &1u16.to_be_bytes(),
        &string(forged),
    ]
    .concat();
    let event = [
        string("SCHEMA_CHANGE"),
        string("CREATED"),
        string("TABLE"),
        string(forged),
        string(forged),
    ]
    .concat();
    let exchange: [(bool, i16, u8, Vec<u8>); 8] = [
        (true, 0, 0x01, startup),
        (false, 0, 0x03, string(forged)),
        (true, 1, 0x05, Vec::new()),
        (false, 1, 0x06, supported),
        (
            true,
            2,
            0x0B,
            [&1u16.to_be_bytes()[..], &string(forged)].concat(),
        ),
        (true, 3, 0x07, query_body(b"USE ks")),
        (
            false,
            3,
            0x08,
            [&3i32.to_be_bytes()[..], &string(forged)].concat(),
        ),
        (false, -1, 0x0C, event),
    ];
    for (from_client, stream, opcode, body) in &exchange {
        let version = if *from_client { 4 } else { 0x84 };
        packets.extend(tcp.send(*from_client, &frame(version, 0, *stream, *opcode, body)));
    }
    pcap::write_pcap(&path, &pcap::timed(1_700_000_000_000_000, packets));
    for format in ["text", "explain", "json"] {
        let run = inspect(1024, &path, &["--format", format]);
        run.assert_success(format);
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert!(
            !run.stdout.contains('\r') && !run.stdout.contains('\u{1b}'),
            "{format}"
        );
        for line in &lines {
            assert!(
                !line.starts_with("00:00:00"),
                "{format}: forged line {line:?}"
            );
        }
        let shown = lines.iter().filter(|l| l.contains("FORGED")).count();
        match format {
            "text" => assert_eq!((lines.len(), shown), (8, 6), "{}", run.stdout),
            "json" => {
                assert_eq!(lines.len(), 8);
                for line in lines {
                    serde_json::from_str::<serde_json::Value>(line).unwrap();
                }
            }
            _ => assert!(shown >= 6, "{}", run.stdout),
        }
    }
}

#[test]
fn an_rst_outside_the_stream_is_reported_and_ignored() {
    // 50 QUERY/RESULT pairs; after the 15th, an RST from the client with sequence number 0, far
    // outside its stream: a TCP stack ignores it, so the other 35 pairs follow on the connection.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rst.pcap");
    let mut tcp = Tcp::new(7777, 9042);
    let isn = tcp.seq[0];
    assert!(isn > 1 << 25 && isn.wrapping_neg() > 1 << 25, "{isn}");
    let mut packets = tcp.handshake();
    let void = 1i32.to_be_bytes();
    for i in 0..50i16 {
        let query = query_body(format!("SELECT {i}").as_bytes());
        packets.extend(tcp.send(true, &frame(4, 0, i, 0x07, &query)));
        packets.extend(tcp.send(false, &frame(0x84, 0, i, 0x08, &void)));
        if i == 14 {
            packets.push(tcp.packet_with_seq(true, pcap::RST, 0, &[]));
        }
    }
    pcap::write_pcap(&path, &pcap::timed(1_700_000_000_000_000, packets));
    let run = inspect(1024, &path, &[]);
    run.assert_success("rst");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains(" RESULT Void ("))
            .count(),
        50
    );
    let problems: Vec<&&str> = lines.iter().filter(|l| l.contains(" ! ")).collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("capture file ! RST from 10.0.0.1:7777 to 10.0.0.2:9042 with sequence number 0 outside its stream ignored"), "{}", problems[0]);
}

/// 20 QUERY/RESULT pairs on one connection, as packets one microsecond apart.
fn pairs(port: u16, count: i16) -> Vec<pcap::Packet> {
    let mut tcp = Tcp::new(port, 9042);
    let mut packets = tcp.handshake();
    let void = 1i32.to_be_bytes();
    for i in 0..count {
        let query = query_body(format!("SELECT {i}").as_bytes());
        packets.extend(tcp.send(true, &frame(4, 0, i, 0x07, &query)));
        packets.extend(tcp.send(false, &frame(0x84, 0, i, 0x08, &void)));
    }
    pcap::timed(1_700_000_000_000_000, packets)
}

#[test]
fn a_pcapng_block_whose_packet_overruns_it_is_skipped_and_reported() {
    // The 8th packet's block says its packet is 8 bytes longer than the block holds: that block
    // is reported and skipped (its length says where the next starts), the rest decodes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("overrun.pcapng");
    let packets = pairs(6000, 20);
    let mut w = pcap::Writer::pcapng(&path, &[]);
    let mut bad_at = 0;
    for (i, p) in packets.iter().enumerate() {
        if i == 7 {
            bad_at = w.written;
            w.raw(&pcap::enhanced_packet_block(p, p.data.len() + 8));
        } else {
            w.packet(p);
        }
    }
    w.finish();
    let run = inspect(1024, &path, &["--format", "json"]);
    run.assert_success("overrun");
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let problems: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l.get("problem").is_some())
        .collect();
    assert!(!problems.is_empty());
    assert_eq!(problems[0]["offset"], bad_at, "{problems:?}");
    assert!(
        problems[0]["problem"].as_str().unwrap().contains("skipped"),
        "{problems:?}"
    );
    let messages = lines.iter().filter(|l| l.get("opcode").is_some()).count();
    // The skipped packet carried one message (the 8th packet: the second pair's RESULT).
    assert!(messages >= 38, "{messages}: {}", run.stdout);
}

#[test]
fn rotated_files_are_one_capture() {
    // One connection's 20 QUERY/RESULT pairs cut into two files (`tcpdump -C`) between the two
    // packets of the 10th QUERY (40 kB): given together, they decode as the single file does.
    let dir = tempfile::tempdir().unwrap();
    let mut tcp = Tcp::new(6100, 9042);
    let mut packets = tcp.handshake();
    let mut cut = 0;
    for i in 0..20i16 {
        let text = format!(
            "SELECT {i} -- {}",
            if i == 9 {
                "x".repeat(40_000)
            } else {
                String::new()
            }
        );
        let query = tcp.send(true, &frame(4, 0, i, 0x07, &query_body(text.as_bytes())));
        if i == 9 {
            assert_eq!(query.len(), 2);
            cut = packets.len() + 1;
        }
        packets.extend(query);
        packets.extend(tcp.send(false, &frame(0x84, 0, i, 0x08, &1i32.to_be_bytes())));
    }
    let packets = pcap::timed(1_700_000_000_000_000, packets);
    let (whole, first, second) = (
        dir.path().join("whole.pcap"),
        dir.path().join("a.pcap"),
        dir.path().join("b.pcap"),
    );
    pcap::write_pcap(&whole, &packets);
    pcap::write_pcap(&first, &packets[..cut]);
    pcap::write_pcap(&second, &packets[cut..]);
    let one = inspect(1024, &whole, &["--format", "json"]);
    one.assert_success("one file");
    let args = ["inspect", "--format", "json"].map(OsStr::new);
    let two = run_limited(
        1024,
        &[&args[..], &[first.as_os_str(), second.as_os_str()]].concat(),
    );
    two.assert_success("two files");
    assert_eq!(one.stdout.lines().count(), 40);
    assert_eq!(two.stdout, one.stdout);
}

#[test]
fn an_invalid_text_cell_shows_as_its_bytes_and_the_other_values_stay() {
    // A page of three text rows, the middle one not UTF-8: a message-wide decoding error used to
    // hide the two good values.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("page.bin");
    let cells = [&b"first"[..], &[0x61, 0xff, 0x62], b"third"];
    let values: Vec<u8> = cells
        .iter()
        .flat_map(|c| [&(c.len() as i32).to_be_bytes()[..], c].concat())
        .collect();
    let spec = [&string("c")[..], &[0, 0x0d]].concat();
    std::fs::write(&path, rows_frame(1, &spec, 3, &values)).unwrap();

    let run = inspect_stream(256, "--server", &path, "json");
    run.assert_success("json");
    let json: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let rows = &json["body"]["rows"];
    assert_eq!(rows[0][0], "first", "{json}");
    assert_eq!(rows[2][0], "third", "{json}");
    let bad = &rows[1][0];
    assert_eq!(bad["bytes"], "0x61ff62", "{json}");
    assert!(
        bad["$invalid"].as_str().unwrap().contains("UTF-8"),
        "{json}"
    );

    let run = inspect_stream(256, "--server", &path, "explain");
    run.assert_success("explain");
    assert!(run.stdout.contains("invalid value"), "{}", run.stdout);
    assert!(run.stdout.contains("'third'"), "{}", run.stdout);
    assert!(!run.stdout.contains("error:"), "{}", run.stdout);
}
