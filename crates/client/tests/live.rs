//! Loads into a real Apache Cassandra and reads back what arrived. Ignored by default: run them with
//! `fixtures/load/live-tests.sh`, which starts the server (PasswordAuthenticator, optional client TLS)
//! and sets the environment read here:
//!
//! - `CQLWIRE_TEST_CASSANDRA`: `HOST:PORT` of the server;
//! - `CQLWIRE_TEST_USER`, `CQLWIRE_TEST_PASSWORD`: a login role;
//! - `CQLWIRE_TEST_CA`: PEM of the server's certificate (it names the server's address);
//! - `CQLWIRE_TEST_CASSANDRA_OTHER_ADDRESS`: another loopback IP address, not in the server's
//!   certificate, on which a test forwards connections to the server (its port must be free there);
//! - `CQLWIRE_TEST_CASSANDRA_CONTROL`: `scripts/cassandra.sh` (pid of the server, restart);
//! - `PYTHON`: a Python with the cassandra-driver of fixtures/requirements.txt.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;

use cqlwire_client::{
    Concurrency, Credentials, Host, LoadError, LoadErrorKind, LoadOptions, LoadReport, Loader,
    Password, Reject, RetryOptions, Row, RunControl, SessionOptions, TlsOptions, Value,
};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::deserialize::row::ColumnIterator;
use tokio::sync::mpsc;

const KEYSPACE: &str = "cqlwire_client";

fn env(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name} is not set: run fixtures/load/live-tests.sh"))
}

fn credentials() -> Credentials {
    Credentials {
        username: env("CQLWIRE_TEST_USER"),
        password: Password::new(env("CQLWIRE_TEST_PASSWORD")),
    }
}

/// `options` sending batches of up to `rows` rows.
fn batched(mut options: LoadOptions, rows: usize) -> LoadOptions {
    options.batch_rows = rows;
    options
}

fn options(table: &str) -> LoadOptions {
    let mut session = SessionOptions::new(
        Host::parse_list(&env("CQLWIRE_TEST_CASSANDRA")).unwrap(),
        KEYSPACE,
        table,
    );
    session.credentials = Some(credentials());
    LoadOptions::new(session)
}

async fn admin() -> Session {
    SessionBuilder::new()
        .known_node(env("CQLWIRE_TEST_CASSANDRA"))
        .user(env("CQLWIRE_TEST_USER"), env("CQLWIRE_TEST_PASSWORD"))
        .build()
        .await
        .expect("admin session")
}

async fn create_table(session: &Session, table: &str, columns: &str) {
    session
        .query_unpaged(format!("DROP TABLE IF EXISTS {KEYSPACE}.{table}"), ())
        .await
        .unwrap();
    session
        .query_unpaged(format!("CREATE TABLE {KEYSPACE}.{table} ({columns})"), ())
        .await
        .unwrap();
}

/// Every row of `table` as raw value bytes (`None` for null), keyed by the bigint `id` column.
async fn read_raw(
    session: &Session,
    table: &str,
    columns: &str,
) -> BTreeMap<i64, Vec<Option<Vec<u8>>>> {
    let result = session
        .query_unpaged(format!("SELECT id, {columns} FROM {KEYSPACE}.{table}"), ())
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let mut rows = BTreeMap::new();
    for row in result.rows::<ColumnIterator>().unwrap() {
        let mut values = row
            .unwrap()
            .map(|column| column.unwrap().slice.map(|slice| slice.as_slice().to_vec()));
        let id = values.next().unwrap().unwrap();
        let id = i64::from_be_bytes(id.try_into().unwrap());
        rows.insert(id, values.collect());
    }
    rows
}

/// Sends `rows` in batches of `batch`, pausing `pace` after each, into a channel of 4 batches.
fn feed(rows: Vec<Row>, batch: usize, pace: Duration) -> mpsc::Receiver<Vec<Row>> {
    let (sender, receiver) = mpsc::channel(4);
    tokio::spawn(async move {
        for chunk in rows.chunks(batch) {
            if sender.send(chunk.to_vec()).await.is_err() {
                return;
            }
            tokio::time::sleep(pace).await;
        }
    });
    receiver
}

/// Runs rows `range` of a vector table fed 100 rows every 20 ms while `during` runs; the rejects
/// must stay empty.
async fn run_vectors_while(
    loader: &Loader,
    range: std::ops::Range<u64>,
    control: &RunControl,
    during: impl std::future::Future<Output = ()>,
) -> Result<LoadReport, LoadError> {
    let mut rejects = Vec::<Reject>::new();
    let rows = vector_rows(loader, range);
    let run = loader.run(
        feed(rows, 100, Duration::from_millis(20)),
        0,
        &mut rejects,
        control,
    );
    let (result, ()) = tokio::join!(run, during);
    assert_eq!(rejects, []);
    result
}

/// Runs rows `range` of a vector table from its start, fed at once; the table must then be complete.
async fn resume_vectors(loader: &Loader, range: std::ops::Range<u64>) -> LoadReport {
    let start = range.start;
    let rows = vector_rows(loader, range);
    let input = feed(rows, 100, Duration::ZERO);
    let report = loader
        .run(input, start, &mut Vec::new(), &RunControl::default())
        .await
        .unwrap();
    assert_eq!(report.resume_from, None);
    report
}

/// Runs (or dry-runs) `rows` fed in batches of `batch` from row 0; the report and the rejects.
async fn load_all(
    loader: &Loader,
    rows: Vec<Row>,
    batch: usize,
    dry: bool,
) -> (LoadReport, Vec<Reject>) {
    let mut rejects = Vec::<Reject>::new();
    let control = RunControl::default();
    let input = feed(rows, batch, Duration::ZERO);
    let report = if dry {
        loader.dry_run(input, 0, &mut rejects, &control).await
    } else {
        loader.run(input, 0, &mut rejects, &control).await
    };
    (report.unwrap(), rejects)
}

fn float_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_be_bytes).collect()
}

/// The vector of row `n` in the `id bigint, v vector<float, 64>` tables.
fn vector_of(n: u64) -> Vec<u8> {
    float_bytes((0..64).map(|i| (n * 64 + i) as f32 * 0.25 - 1000.0))
}

/// Rows `range` of an `(id bigint PRIMARY KEY, v vector<float, 64>)` table, id = row number.
fn vector_rows(loader: &Loader, range: std::ops::Range<u64>) -> Vec<Row> {
    let types: Vec<_> = loader
        .bind_markers()
        .iter()
        .map(|m| m.cql_type.clone())
        .collect();
    range
        .map(|n| Row {
            number: n,
            key: format!("id={n}"),
            values: vec![
                Value::new(types[0].clone(), (n as i64).to_be_bytes().to_vec()),
                Value::new(types[1].clone(), vector_of(n)),
            ],
        })
        .collect()
}

/// Checks that `table` holds rows `range` (at least) with the bytes [`vector_rows`] sent.
async fn assert_vector_rows(
    session: &Session,
    table: &str,
    range: std::ops::Range<u64>,
    exactly: bool,
) {
    let rows = read_raw(session, table, "v").await;
    for n in range.clone() {
        let values = rows
            .get(&(n as i64))
            .unwrap_or_else(|| panic!("row {n} is missing"));
        assert_eq!(
            values[0].as_deref(),
            Some(vector_of(n).as_slice()),
            "row {n}"
        );
    }
    if exactly {
        assert_eq!(rows.len() as u64, range.end - range.start);
    }
}

fn cassandra_pid() -> i32 {
    let output = Command::new(env("CQLWIRE_TEST_CASSANDRA_CONTROL"))
        .arg("status")
        .output()
        .unwrap();
    let status = String::from_utf8(output.stdout).unwrap();
    status
        .split_whitespace()
        .skip_while(|word| *word != "pid")
        .nth(1)
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {status:?}"))
}

fn signal(pid: i32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

/// Waits until process `pid` has exited (a killed process lingers a moment).
async fn wait_gone(pid: i32) {
    let status = PathBuf::from(format!("/proc/{pid}/status"));
    for _ in 0..300 {
        match std::fs::read_to_string(&status) {
            Ok(text) if !text.contains("State:\tZ") => {}
            _ => return,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("process {pid} still runs 30 s after SIGKILL");
}

async fn wait_written(control: &RunControl, rows: u64) {
    while control.progress.snapshot().written < rows {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn vectors_and_side_columns_arrive_byte_for_byte() {
    let session = admin().await;
    let columns = "id bigint PRIMARY KEY, vf vector<float, 8>, vs vector<smallint, 4>, \
                   vd vector<double, 3>, t text, i int, ts timestamp, u uuid";
    create_table(&session, "typed", columns).await;
    let loader = Loader::connect(options("typed")).await.unwrap();
    let markers: Vec<String> = loader
        .bind_markers()
        .iter()
        .map(|m| format!("{} {}", m.name, m.cql_type))
        .collect();
    assert_eq!(
        markers,
        [
            "id bigint",
            "i int",
            "t text",
            "ts timestamp",
            "u uuid",
            "vd vector<double, 3>",
            "vf vector<float, 8>",
            "vs vector<smallint, 4>"
        ]
    );
    let types: Vec<_> = loader
        .bind_markers()
        .iter()
        .map(|m| m.cql_type.clone())
        .collect();
    let count = 300u64;
    let expected: Vec<Vec<Vec<u8>>> = (0..count)
        .map(|n| {
            let smallints: Vec<u8> = (0..4i16)
                .flat_map(|j| {
                    let x = (n as i16 * 97 + j * 1000).wrapping_sub(1500);
                    let mut element = vec![2u8];
                    element.extend_from_slice(&x.to_be_bytes());
                    element
                })
                .collect();
            vec![
                (n as i64 * 1_000_003).to_be_bytes().to_vec(),
                (n as i32 - 150).to_be_bytes().to_vec(),
                format!("row {n} – ünïcode").into_bytes(),
                (1_700_000_000_000i64 + n as i64 * 1_234)
                    .to_be_bytes()
                    .to_vec(),
                (0..16u8)
                    .map(|b| b.wrapping_mul(n as u8 | 1).wrapping_add(b))
                    .collect(),
                (0..3)
                    .flat_map(|j| (n as f64 / 7.0 + j as f64).to_be_bytes())
                    .collect(),
                float_bytes((0..8).map(|j| n as f32 * 0.1 - j as f32 * 3.5)),
                smallints,
            ]
        })
        .collect();
    let rows = expected
        .iter()
        .enumerate()
        .map(|(n, values)| Row {
            number: n as u64,
            key: format!("id={n}"),
            values: values
                .iter()
                .zip(&types)
                .map(|(bytes, typ)| Value::new(typ.clone(), bytes.clone()))
                .collect(),
        })
        .collect();
    let (report, rejects) = load_all(&loader, rows, 64, false).await;
    assert_eq!(rejects, []);
    assert_eq!(
        (report.written, report.rejected, report.resume_from),
        (count, 0, None)
    );
    let sent_bytes: usize = expected.iter().flatten().map(Vec::len).sum();
    assert_eq!(report.bytes, sent_bytes as u64);

    let stored = read_raw(&session, "typed", "i, t, ts, u, vd, vf, vs").await;
    assert_eq!(stored.len() as u64, count);
    for (id, values) in &stored {
        let n = expected
            .iter()
            .position(|row| row[0] == id.to_be_bytes())
            .unwrap();
        let sent: Vec<Option<&[u8]>> = expected[n][1..]
            .iter()
            .map(|b| Some(b.as_slice()))
            .collect();
        let got: Vec<Option<&[u8]>> = values.iter().map(Option::as_deref).collect();
        assert_eq!(got, sent, "row {n}");
    }

    // The same rows through the Python driver: the numbers, text, time and uuid they stand for.
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/load/readback.py");
    let output = Command::new(env("PYTHON"))
        .arg(script)
        .arg(format!("{KEYSPACE}.typed"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len() as u64, count);
    for line in lines {
        let id: i64 = line.split('\t').next().unwrap().parse().unwrap();
        let n = (id / 1_000_003) as u64;
        let uuid: String = expected[n as usize][4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let floats: Vec<String> = (0..8)
            .map(|j| format!("{:?}", n as f32 * 0.1 - j as f32 * 3.5))
            .collect();
        let smallints: Vec<String> = (0..4i16)
            .map(|j| (n as i16 * 97 + j * 1000).wrapping_sub(1500).to_string())
            .collect();
        let doubles: Vec<String> = (0..3)
            .map(|j| format!("{:?}", n as f64 / 7.0 + j as f64))
            .collect();
        let want = [
            id.to_string(),
            (n as i32 - 150).to_string(),
            format!("row {n} – ünïcode"),
            (1_700_000_000_000i64 + n as i64 * 1_234).to_string(),
            uuid,
            doubles.join(","),
            floats.join(","),
            smallints.join(","),
        ]
        .join("\t");
        assert_eq!(line, want);
    }
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn values_the_server_refuses_go_to_rejects_and_the_rest_loads() {
    refused_rows("refused", 1).await;
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn a_refused_batch_sends_its_rows_one_by_one_and_each_is_accounted_for() {
    // Rows 0-7, 8-15, …: each refused row's batch is refused whole, then each of its rows has
    // its own verdict.
    refused_rows("refused_batch", 8).await;
}

/// Loads 50 rows, three of which are refused (two by the server, one by the binding), in batches
/// of `batch` rows: the 47 others are written, the three rejected with the server's reasons.
async fn refused_rows(table: &str, batch: usize) {
    let session = admin().await;
    create_table(
        &session,
        table,
        "id bigint PRIMARY KEY, t text, vs vector<smallint, 2>",
    )
    .await;
    let loader = Loader::connect(batched(options(table), batch))
        .await
        .unwrap();
    let types: Vec<_> = loader
        .bind_markers()
        .iter()
        .map(|m| m.cql_type.clone())
        .collect();
    let good_vector = vec![2, 0, 1, 2, 0xff, 0xfe];
    let rows: Vec<Row> = (0..50u64)
        .map(|n| {
            let mut text = format!("ok {n}").into_bytes();
            let mut vector = good_vector.clone();
            match n {
                // Not UTF-8: Cassandra's UTF8Type refuses it.
                7 => text = vec![b'a', 0xc3, 0x28],
                // A smallint element of 3 bytes: Cassandra's VectorType refuses it.
                19 => vector = vec![3, 0, 0, 1, 2, 0, 1],
                _ => {}
            }
            let vector = if n == 33 {
                // Bytes made for another type than the marker's: refused before sending.
                Value::new(types[0].clone(), 1i64.to_be_bytes().to_vec())
            } else {
                Value::new(types[2].clone(), vector)
            };
            Row {
                number: n,
                key: format!("id={n}"),
                values: vec![
                    Value::new(types[0].clone(), (n as i64).to_be_bytes().to_vec()),
                    Value::new(types[1].clone(), text),
                    vector,
                ],
            }
        })
        .collect();
    let (report, mut rejects) = load_all(&loader, rows, 8, false).await;
    assert_eq!(
        (report.written, report.rejected, report.resume_from),
        (47, 3, None)
    );
    rejects.sort_by_key(|reject| reject.row);
    let summary: Vec<(u64, &str)> = rejects.iter().map(|r| (r.row, r.key.as_str())).collect();
    assert_eq!(summary, [(7, "id=7"), (19, "id=19"), (33, "id=33")]);
    assert!(
        rejects[0].error.contains("String didn't validate"),
        "{}",
        rejects[0].error
    );
    assert!(
        rejects[1].error.contains("Expected 2 bytes for a smallint"),
        "{}",
        rejects[1].error
    );
    assert_eq!(
        rejects[2].error,
        "column vs: value made for bigint cannot be bound to a marker of type vector<smallint, 2>"
    );
    let stored = read_raw(&session, table, "t, vs").await;
    let ids: Vec<i64> = stored.keys().copied().collect();
    let want: Vec<i64> = (0..50).filter(|n| ![7, 19, 33].contains(n)).collect();
    assert_eq!(ids, want);
    for (id, values) in stored {
        assert_eq!(values[0].as_deref(), Some(format!("ok {id}").as_bytes()));
        assert_eq!(values[1].as_deref(), Some(good_vector.as_slice()));
    }
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn statements_that_cannot_load_are_refused_before_any_row() {
    let session = admin().await;
    create_table(
        &session,
        "keyed",
        "a int, b int, v text, PRIMARY KEY ((a), b)",
    )
    .await;
    let mut missing = options("keyed");
    missing.columns = Some(vec!["a".into(), "v".into()]);
    let error = Loader::connect(missing).await.err().unwrap();
    assert_eq!(error.kind(), LoadErrorKind::MissingKeyColumn);
    assert!(error.message().contains("column(s) b"), "{error}");

    let error = Loader::connect(options("no_such_table"))
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), LoadErrorKind::UnknownTable);

    let mut select = options("keyed");
    select.query = Some(format!(
        "SELECT v FROM {KEYSPACE}.keyed WHERE a = ? AND b = ?"
    ));
    let error = Loader::connect(select).await.err().unwrap();
    assert_eq!(error.kind(), LoadErrorKind::Statement);

    // A custom query with a TTL marker exposes it for the mapping layer.
    let mut ttl = options("keyed");
    ttl.query = Some(format!(
        "INSERT INTO {KEYSPACE}.keyed (a, b, v) VALUES (?, ?, ?) USING TTL ?"
    ));
    let loader = Loader::connect(ttl).await.unwrap();
    let markers: Vec<String> = loader
        .bind_markers()
        .iter()
        .map(|m| format!("{} {}", m.name, m.cql_type))
        .collect();
    assert_eq!(markers, ["a int", "b int", "v text", "[ttl] int"]);
    let columns: Vec<String> = loader
        .columns()
        .iter()
        .map(|c| format!("{} {}", c.name, c.cql_type))
        .collect();
    assert_eq!(columns, ["a int", "b int", "v text"]);
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn a_dry_run_binds_every_row_and_sends_none() {
    let session = admin().await;
    create_table(
        &session,
        "dry",
        "id bigint PRIMARY KEY, v vector<float, 64>",
    )
    .await;
    let loader = Loader::connect(options("dry")).await.unwrap();
    let mut rows = vector_rows(&loader, 0..100);
    rows[10].values.pop();
    let (report, rejects) = load_all(&loader, rows, 16, true).await;
    assert_eq!(
        (report.written, report.rejected, report.resume_from),
        (99, 1, None)
    );
    assert_eq!(rejects[0].row, 10);
    assert_eq!(rejects[0].error, "the row has 1 values for 2 bind markers");
    assert!(read_raw(&session, "dry", "v").await.is_empty());
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn a_password_login_is_checked() {
    let mut wrong = options("typed");
    wrong.session.credentials = Some(Credentials {
        username: env("CQLWIRE_TEST_USER"),
        password: Password::new("not the password"),
    });
    let error = Loader::connect(wrong).await.err().unwrap();
    assert_eq!(error.kind(), LoadErrorKind::Authentication, "{error}");
    assert!(!error.message().contains(&env("CQLWIRE_TEST_PASSWORD")));

    let mut anonymous = options("typed");
    anonymous.session.credentials = None;
    let error = Loader::connect(anonymous).await.err().unwrap();
    assert_eq!(error.kind(), LoadErrorKind::Authentication, "{error}");
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn tls_trusts_the_server_certificate_and_checks_its_address() {
    let session = admin().await;
    create_table(
        &session,
        "secure",
        "id bigint PRIMARY KEY, v vector<float, 64>",
    )
    .await;
    let tls = TlsOptions {
        ca_file: Some(env("CQLWIRE_TEST_CA").into()),
        ..TlsOptions::default()
    };
    let mut secure = options("secure");
    secure.session.tls = Some(tls.clone());
    let loader = Loader::connect(secure).await.unwrap();
    let rows = vector_rows(&loader, 0..200);
    let report = loader
        .run(
            feed(rows, 50, Duration::ZERO),
            0,
            &mut Vec::new(),
            &RunControl::default(),
        )
        .await
        .unwrap();
    assert_eq!(report.written, 200);
    assert_vector_rows(&session, "secure", 0..200, true).await;

    // Another address of the same server: its certificate does not name it.
    let forwarded = forwarder(
        &env("CQLWIRE_TEST_CASSANDRA_OTHER_ADDRESS"),
        &env("CQLWIRE_TEST_CASSANDRA"),
    )
    .await;
    let other = Host::parse_list(&forwarded).unwrap();
    let mut wrong_name = options("secure");
    wrong_name.session.hosts = other.clone();
    wrong_name.session.tls = Some(tls.clone());
    let error = Loader::connect(wrong_name).await.err().unwrap();
    assert_eq!(error.kind(), LoadErrorKind::Connect, "{error}");
    assert!(error.message().contains("certificate"), "{error}");
    let mut unchecked = options("secure");
    unchecked.session.hosts = other;
    unchecked.session.tls = Some(TlsOptions {
        verify_host: false,
        ..tls
    });
    Loader::connect(unchecked).await.unwrap();
}

/// Forwards every connection to `address` at the port of `target` to `target`: the same server
/// reached at another address. Returns `address:port`. (The same port, because the driver learns a
/// node's address from `system.local` and keeps only the port of the address it connected to.)
async fn forwarder(address: &str, target: &str) -> String {
    let port = target
        .rsplit_once(':')
        .map_or(9042, |(_, p)| p.parse().unwrap());
    let listener = tokio::net::TcpListener::bind((address, port))
        .await
        .unwrap_or_else(|e| panic!("cannot listen on {address}:{port}: {e}"));
    let local = listener.local_addr().unwrap();
    let target = target.to_owned();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let target = target.clone();
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(&target).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    local.to_string()
}

/// Options for the fault tests: short timeouts so that a run notices quickly.
fn impatient(table: &str, retries: u32) -> LoadOptions {
    let mut options = options(table);
    options.session.request_timeout = Duration::from_millis(800);
    options.concurrency = Concurrency::Fixed(32);
    options.retry = RetryOptions {
        max_retries: retries,
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(500),
    };
    options
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn a_paused_server_loses_no_row_and_the_retries_are_counted() {
    paused("paused", 1).await;
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn a_paused_server_loses_no_row_of_a_batched_load() {
    paused("paused_batch", 16).await;
}

async fn paused(table: &str, batch: usize) {
    let session = admin().await;
    create_table(
        &session,
        table,
        "id bigint PRIMARY KEY, v vector<float, 64>",
    )
    .await;
    let loader = Loader::connect(batched(impatient(table, 40), batch))
        .await
        .unwrap();
    let control = RunControl::default();
    let pid = cassandra_pid();
    let pause = async {
        wait_written(&control, 500).await;
        signal(pid, "STOP");
        tokio::time::sleep(Duration::from_secs(3)).await;
        signal(pid, "CONT");
    };
    let report = run_vectors_while(&loader, 0..4000, &control, pause).await;
    let report = report.unwrap();
    assert_eq!(
        (report.written, report.rejected, report.resume_from),
        (4000, 0, None)
    );
    assert!(report.retried > 0, "{report:?}");
    assert_vector_rows(&session, table, 0..4000, true).await;
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn the_stop_flag_drains_and_the_resume_point_completes_the_table() {
    stopped("stopped", 1).await;
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn the_stop_flag_keeps_the_resume_point_of_a_batched_load_true() {
    stopped("stopped_batch", 16).await;
}

async fn stopped(table: &str, batch: usize) {
    let session = admin().await;
    create_table(
        &session,
        table,
        "id bigint PRIMARY KEY, v vector<float, 64>",
    )
    .await;
    let loader = Loader::connect(batched(options(table), batch))
        .await
        .unwrap();
    let control = RunControl::default();
    let stop = async {
        wait_written(&control, 300).await;
        control.stop.store(true, Ordering::Relaxed);
    };
    let report = run_vectors_while(&loader, 0..3000, &control, stop).await;
    let report = report.unwrap();
    let resume = report.resume_from.expect("stopped early");
    assert!((300..3000).contains(&resume), "{report:?}");
    assert_vector_rows(&session, table, 0..resume, false).await;

    resume_vectors(&loader, resume..3000).await;
    assert_vector_rows(&session, table, 0..3000, true).await;
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn a_killed_server_ends_the_run_with_a_true_resume_point() {
    let session = admin().await;
    create_table(
        &session,
        "killed",
        "id bigint PRIMARY KEY, v vector<float, 64>",
    )
    .await;
    drop(session);
    let loader = Loader::connect(impatient("killed", 4)).await.unwrap();
    let total = 6000;
    let control = RunControl::default();
    let pid = cassandra_pid();
    let kill = async {
        wait_written(&control, 1000).await;
        signal(pid, "KILL");
    };
    let result = run_vectors_while(&loader, 0..total, &control, kill).await;
    let error: LoadError = result.expect_err("the run must fail");
    assert_eq!(error.kind(), LoadErrorKind::ServerGone, "{error}");
    let report: LoadReport = error.report().unwrap().clone();
    let resume = report.resume_from.unwrap();
    assert!(
        report.written >= 1000 && resume <= report.written,
        "{report:?}"
    );
    assert!(
        error
            .to_string()
            .contains(&format!("resume from row {resume}")),
        "{error}"
    );
    drop(loader);

    // The same data directory: the commit log brings back every acknowledged row.
    wait_gone(pid).await;
    let status = Command::new(env("CQLWIRE_TEST_CASSANDRA_CONTROL"))
        .arg("start")
        .status()
        .unwrap();
    assert!(status.success());
    let session = admin().await;
    let stored = read_raw(&session, "killed", "v").await;
    assert!(
        stored.len() as u64 >= report.written,
        "{} < {}",
        stored.len(),
        report.written
    );
    assert_vector_rows(&session, "killed", 0..resume, false).await;

    let loader = Loader::connect(options("killed")).await.unwrap();
    let rest = resume_vectors(&loader, resume..total).await;
    assert_eq!(rest.written, total - resume);
    assert_vector_rows(&session, "killed", 0..total, true).await;
}

/// Rows `0..n` of an `(id bigint, c int, v vector<float, 64>, s int static)` table: row `n` writes
/// key `(n % keys, n % 3)` and `s = n`, so later rows write the keys of earlier ones again.
fn repeating_rows(loader: &Loader, n: u64, keys: u64) -> Vec<Row> {
    (0..n)
        .map(|n| {
            let id = (n % keys) as i64;
            let values = loader
                .bind_markers()
                .iter()
                .map(|marker| {
                    let bytes = match marker.name.as_str() {
                        "id" => id.to_be_bytes().to_vec(),
                        "c" => ((n % 3) as i32).to_be_bytes().to_vec(),
                        "v" => vector_of(n),
                        _ => (n as i32).to_be_bytes().to_vec(),
                    };
                    Value::new(marker.cql_type.clone(), bytes)
                })
                .collect();
            Row {
                number: n,
                key: format!("id={id}"),
                values,
            }
        })
        .collect()
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn a_batched_load_leaves_the_table_a_row_by_row_load_leaves() {
    let session = admin().await;
    let columns = "id bigint, c int, v vector<float, 64>, s int static, PRIMARY KEY (id, c)";
    let (rows, keys) = (3000, 700);
    let mut stored = Vec::new();
    for (table, batch) in [("one_by_one", 1), ("batched", 16), ("batched_big", 1024)] {
        create_table(&session, table, columns).await;
        let loader = Loader::connect(batched(options(table), batch))
            .await
            .unwrap();
        let input = repeating_rows(&loader, rows, keys);
        let (report, rejects) = load_all(&loader, input, 100, false).await;
        assert_eq!(rejects, []);
        assert_eq!(
            (report.written, report.rejected, report.resume_from),
            (rows, 0, None)
        );
        stored.push(read_rows(&session, table, "id, c, v, s").await);
    }
    // The last row writing each key wins (the static column: the last row of the partition), in
    // every table alike.
    assert_eq!(stored[0].len() as u64, keys.min(rows) * 3);
    for values in &stored[0] {
        let number = |i: usize| {
            let bytes: [u8; 4] = values[i].clone().unwrap().try_into().unwrap();
            i32::from_be_bytes(bytes) as u64
        };
        let id = u64::from_be_bytes(values[0].clone().unwrap().try_into().unwrap());
        let c = number(1);
        let last_of_key = (0..rows).filter(|n| n % keys == id && n % 3 == c).max();
        let last_of_partition = (0..rows).filter(|n| n % keys == id).max().unwrap();
        assert_eq!(
            values[2].as_deref(),
            Some(vector_of(last_of_key.unwrap()).as_slice())
        );
        assert_eq!(number(3), last_of_partition);
    }
    assert_eq!(stored[0], stored[1]);
    assert_eq!(stored[0], stored[2]);
}

/// Every row of `table` as the raw bytes of `columns` (`None` for null), in key order.
async fn read_rows(session: &Session, table: &str, columns: &str) -> Vec<Vec<Option<Vec<u8>>>> {
    let result = session
        .query_unpaged(format!("SELECT {columns} FROM {KEYSPACE}.{table}"), ())
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let mut rows: Vec<Vec<Option<Vec<u8>>>> = result
        .rows::<ColumnIterator>()
        .unwrap()
        .map(|row| {
            row.unwrap()
                .map(|column| column.unwrap().slice.map(|slice| slice.as_slice().to_vec()))
                .collect()
        })
        .collect();
    rows.sort();
    rows
}

/// The size the server gave each batch of `table` that passed its warning threshold, from the
/// warnings in its log (`Batch for [ks.table] is of size 49.125KiB, exceeding …`), and whether it
/// refused one as too large.
fn logged_batch_sizes(table: &str) -> (Vec<f64>, bool) {
    let control = PathBuf::from(env("CQLWIRE_TEST_CASSANDRA_CONTROL"));
    let address = env("CQLWIRE_TEST_CASSANDRA");
    let address = address
        .rsplit_once(':')
        .map_or(address.as_str(), |(host, _)| host);
    let state = control
        .parent()
        .and_then(|scripts| scripts.parent())
        .unwrap()
        .join(".cassandra")
        .join(format!("server-{address}"))
        .join("dir");
    let dir = std::fs::read_to_string(&state).unwrap();
    let log = std::fs::read_to_string(PathBuf::from(dir.trim()).join("system.log")).unwrap();
    let prefix = format!("Batch for [{KEYSPACE}.{table}] is of size ");
    let mut refused = false;
    let sizes = log
        .lines()
        .filter_map(|line| {
            let size = line.split_once(&prefix)?.1;
            refused |= line.contains("batch_size_fail_threshold");
            let (number, unit) = size.split_at(size.find(|c: char| c.is_ascii_alphabetic())?);
            let scale = match unit.chars().next()? {
                'K' => 1024.0,
                'M' => 1024.0 * 1024.0,
                _ => 1.0,
            };
            Some(number.parse::<f64>().ok()? * scale)
        })
        .collect();
    (sizes, refused)
}

#[tokio::test]
#[ignore = "needs a live Cassandra: fixtures/load/live-tests.sh"]
async fn batches_stay_within_the_servers_size_threshold_and_a_given_bound() {
    let session = admin().await;
    // The server's own threshold, read as the loader reads it (scripts/cassandra.sh: 1024 KiB).
    let threshold = session
        .query_unpaged(
            "SELECT value FROM system_views.settings WHERE name = 'batch_size_fail_threshold'",
            (),
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(String,)>()
        .unwrap()
        .0;
    let threshold: f64 = threshold
        .strip_suffix("KiB")
        .unwrap()
        .parse::<f64>()
        .unwrap()
        * 1024.0;
    // 1,024 rows of 768 floats would be 3 MiB: the threshold ends each batch first; then a bound
    // of 50 KiB (Apache Cassandra's default threshold) given.
    for (table, bytes, bound) in [
        ("sized", None, threshold),
        ("sized_given", Some(51_200), 51_200.0),
    ] {
        create_table(
            &session,
            table,
            "id bigint PRIMARY KEY, v vector<float, 768>",
        )
        .await;
        let mut options = batched(options(table), 1024);
        options.batch_bytes = bytes;
        let loader = Loader::connect(options).await.unwrap();
        let types: Vec<_> = loader
            .bind_markers()
            .iter()
            .map(|m| m.cql_type.clone())
            .collect();
        let rows: Vec<Row> = (0..2000u64)
            .map(|n| Row {
                number: n,
                key: format!("id={n}"),
                values: vec![
                    Value::new(types[0].clone(), (n as i64).to_be_bytes().to_vec()),
                    Value::new(
                        types[1].clone(),
                        float_bytes((0..768).map(|i| (n * 768 + i) as f32)),
                    ),
                ],
            })
            .collect();
        let (report, rejects) = load_all(&loader, rows, 1000, false).await;
        assert_eq!(rejects, []);
        assert_eq!((report.written, report.resume_from), (2000, None));
        // Every batch above 1 KiB is in the server's log with the size it counted.
        let (sizes, refused) = logged_batch_sizes(table);
        assert!(!refused, "{table}: the server refused a batch as too large");
        let largest = sizes.iter().copied().fold(0.0, f64::max);
        // Nearly every row went in a batch (a batch of one row goes as that row alone).
        let batched: f64 = sizes.iter().sum();
        assert!(
            batched > 0.9 * 2000.0 * 3072.0,
            "{table}: {batched} bytes in batches"
        );
        assert!(
            largest <= bound && largest > 0.8 * bound,
            "{table}: largest batch {largest} bytes, bound {bound}"
        );
        let stored = read_raw(&session, table, "v").await;
        assert_eq!(stored.len(), 2000);
        for (id, values) in stored {
            let id = id as u64;
            let want = float_bytes((0..768).map(|i| (id * 768 + i) as f32));
            assert_eq!(values[0].as_deref(), Some(want.as_slice()), "row {id}");
        }
    }
}
