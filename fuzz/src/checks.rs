//! The properties the fuzz targets check, one function per target, shared by the libFuzzer targets
//! (`fuzz/fuzz_targets/`) and by the test that replays the inputs they found
//! (`tests/fuzz_regressions.rs`, which includes this file as a module).
//!
//! Each check takes arbitrary bytes, calls the library the way the commands do, and panics when an
//! invariant fails; the library itself must never panic. [`CappedAllocator`] turns any single
//! allocation above [`ALLOCATION_LIMIT`] into an abort, so "garbage that claims a huge size" is a
//! finding too, and so is a live heap that outgrows a target's [`MemoryBound`] ([`bounded`]).

use cqlwire_codec::types::{
    parse_type, CqlType, NativeType, TypeErrorKind, UdtRegistry, UdtType, MAX_TYPE_DEPTH,
};
use cqlwire_codec::value::{self, Value};
use cqlwire_codec::value::{cql, json, print};
use cqlwire_protocol::frame::{FrameHeader, FrameReader, Frames, HEADER_LEN};
use cqlwire_protocol::lz4;
use cqlwire_vector::input::{
    self, BatchReader, InputError, InputFormat, InputOptions, NeighborsFormat, RowSelection,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::io::{Cursor, Seek, Write};
use std::sync::OnceLock;

/// A target's check: panics when an invariant fails on the input.
pub type Check = fn(&[u8]);

/// The fuzz targets by name (also the folder names under `fixtures/fuzz-regressions/`).
pub const TARGETS: [(&str, Check); 18] = [
    ("type_parser", type_parser),
    ("value_decoder", value_decoder),
    ("literal_parser", literal_parser),
    ("lz4_body", lz4_body),
    ("frame_stream", frame_stream),
    ("npy_header", npy_header),
    ("vecs_readers", vecs_readers),
    ("neighbors", neighbors),
    ("hdf5_reader", hdf5_reader),
    ("message_body", message_body),
    ("protocol_stream", protocol_stream),
    ("inspect", inspect),
    ("capture", capture),
    ("vector_kernel", vector_kernel),
    ("query_redaction", query_redaction),
    ("arrow_values", arrow_values),
    ("columnar_readers", columnar_readers),
    ("bench_readers", bench_readers),
];

/// The largest single allocation an input may cause: 64 MiB (and a little, for a TEXMEX row's
/// 4-byte prefix): the readers accept rows up to 64 MiB and a stream, whose size is unknown, gets a
/// row's buffer before its bytes arrive. Above it the input claimed a size its bytes do not hold,
/// or a limit is missing.
pub const ALLOCATION_LIMIT: usize = (64 << 20) + (64 << 10);

/// How much more than a file's size a reader may allocate at once for that file (I/O buffers,
/// messages): a file's size is known, so a reader must not trust a header beyond it.
const FILE_ALLOCATION_SLACK: usize = 64 << 10;

/// Most bytes deflate (an HDF5 chunk's gzip filter) makes of one compressed byte.
pub const DEFLATE_RATIO: usize = 1032;

/// Most bytes an LZ4 block (CQL v4 body, v5 segment) inflates to per byte of block: a byte of a
/// match's length adds at most 255 bytes of output.
pub const LZ4_RATIO: usize = 255;

/// A bound on the live heap bytes a check may hold at once for an input of `n` bytes, with at
/// most `c` connections open at once ([`note_connections`]):
/// `per_input_byte × n + constant + min(decompressed_per_input_byte × n, retained_per_connection × c)`
/// (without `retained_per_connection`, the last term is `decompressed_per_input_byte × n`).
#[derive(Debug, Clone, Copy)]
pub struct MemoryBound {
    /// Bytes per input byte: copies, buffers and bookkeeping that follow the input.
    pub per_input_byte: usize,
    /// Bytes whatever the input: fixed buffers and one frame or block in flight.
    pub constant: usize,
    /// Bytes per input byte that decompressed data and what is kept of it may take: a small
    /// multiple of [`LZ4_RATIO`].
    pub decompressed_per_input_byte: usize,
    /// The most the library keeps of decompressed data per open connection, by its caps (`None`:
    /// no cap but the ratio).
    pub retained_per_connection: Option<usize>,
}

impl MemoryBound {
    /// The live heap bytes allowed for an input of `n` bytes with `connections` open at once.
    pub fn limit(&self, n: usize, connections: usize) -> usize {
        let decompressed = self.decompressed_per_input_byte.saturating_mul(n);
        let kept = match self.retained_per_connection {
            Some(cap) => decompressed.min(cap.saturating_mul(connections)),
            None => decompressed,
        };
        self.per_input_byte
            .saturating_mul(n)
            .saturating_add(self.constant)
            .saturating_add(kept)
    }
}

/// The measured run of [`bounded`] on this thread: the live heap before it, the input's length,
/// its bound, and the most connections open at once so far.
#[derive(Debug, Clone, Copy)]
struct Measured {
    before: isize,
    input_len: usize,
    bound: MemoryBound,
    connections: usize,
}

thread_local! {
    /// The largest single allocation on this thread since [`take_largest_allocation`].
    static LARGEST_ALLOCATION: Cell<usize> = const { Cell::new(0) };
    /// Heap bytes allocated and not yet freed by this thread (frees of another thread's
    /// allocations count here too, so it may go below zero).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// The highest [`LIVE`] since the measured run began (see [`bounded`]).
    static PEAK: Cell<isize> = const { Cell::new(0) };
    /// The run [`bounded`] measures, if any.
    static MEASURED: Cell<Option<Measured>> = const { Cell::new(None) };
    /// Whether allocations are left out of [`PEAK`] and the bound (see [`unmeasured`]).
    static PAUSED: Cell<bool> = const { Cell::new(false) };
}

/// The largest single allocation made on this thread since the last call.
fn take_largest_allocation() -> usize {
    LARGEST_ALLOCATION.try_with(|l| l.replace(0)).unwrap_or(0)
}

/// A line of at most 192 bytes formatted on the stack: the allocator cannot allocate to report.
struct StackLine {
    bytes: [u8; 192],
    len: usize,
}

impl std::fmt::Write for StackLine {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = (self.len + s.len()).min(self.bytes.len());
        self.bytes[self.len..end].copy_from_slice(&s.as_bytes()[..end - self.len]);
        self.len = end;
        Ok(())
    }
}

/// The system allocator, aborting the process on any allocation above [`ALLOCATION_LIMIT`] and,
/// inside [`bounded`], as soon as the live heap passes the run's [`MemoryBound`] (libFuzzer reports
/// the abort as a crash and saves the input). It counts each thread's live heap bytes and their
/// peak.
pub struct CappedAllocator;

impl CappedAllocator {
    /// Records an allocation of `size` bytes (`freed` bytes given back by a `realloc`); aborts
    /// when it is above a limit.
    fn allocated(size: usize, freed: usize) {
        // Const-initialised thread-locals without destructor: no allocation, no recursion.
        let _ = LARGEST_ALLOCATION.try_with(|l| l.set(l.get().max(size)));
        if size > ALLOCATION_LIMIT {
            // Writing a static message to unbuffered stderr does not allocate.
            let _ = std::io::stderr()
                .write_all(b"fuzz: allocation above ALLOCATION_LIMIT (64 MiB), aborting\n");
            std::process::abort();
        }
        let Ok(live) = LIVE.try_with(|l| {
            l.set(l.get() + size as isize - freed as isize);
            l.get()
        }) else {
            return;
        };
        if PAUSED.try_with(Cell::get).unwrap_or(true) {
            return;
        }
        let _ = PEAK.try_with(|p| p.set(p.get().max(live)));
        let Some(Some(run)) = MEASURED.try_with(Cell::get).ok() else {
            return;
        };
        let limit = run.bound.limit(run.input_len, run.connections);
        let above = live - run.before;
        if above > limit as isize {
            let mut line = StackLine {
                bytes: [0; 192],
                len: 0,
            };
            let _ = writeln!(
                line,
                "fuzz: live heap {above} bytes, over the limit of {limit} bytes for a {}-byte \
                 input with {} connection(s) open (MemoryBound), aborting",
                run.input_len, run.connections
            );
            let _ = std::io::stderr().write_all(&line.bytes[..line.len]);
            std::process::abort();
        }
    }

    /// Records `size` bytes freed.
    fn freed(size: usize) {
        let _ = LIVE.try_with(|l| l.set(l.get() - size as isize));
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the only additions are the counters and
// the size checks.
unsafe impl GlobalAlloc for CappedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::allocated(layout.size(), 0);
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::allocated(layout.size(), 0);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the change in size (large blocks grow in place or by remapping).
        Self::allocated(new_size, layout.size());
        // SAFETY: as for `alloc`; `ptr` and `layout` come from this allocator, which is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        Self::freed(layout.size());
        // SAFETY: as for `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `check` on `data` under `bound`: the process aborts, naming the live heap reached, the
/// input's length and the limit, as soon as the heap live on this thread grows more than
/// `bound.limit` bytes above what was live before. Returns the peak reached above that (only
/// [`CappedAllocator`] counts: without it, 0).
pub fn bounded(data: &[u8], bound: MemoryBound, check: impl FnOnce(&[u8])) -> usize {
    let before = LIVE.with(Cell::get);
    let saved_peak = PEAK.replace(before);
    let saved = MEASURED.replace(Some(Measured {
        before,
        input_len: data.len(),
        bound,
        connections: 0,
    }));
    check(data);
    MEASURED.set(saved);
    let peak = PEAK.replace(saved_peak.max(PEAK.get()));
    usize::try_from(peak - before).unwrap_or(0)
}

/// Tells the run [`bounded`] measures that `open` connections are open at once (the bound grows
/// with the most seen).
pub fn note_connections(open: usize) {
    MEASURED.with(|m| {
        if let Some(mut run) = m.get() {
            run.connections = run.connections.max(open);
            m.set(Some(run));
        }
    });
}

/// Runs `f` with its allocations left out of the peak and the bound of [`bounded`]: for work of a
/// check that the commands do not do (building a `serde_json::Value` of a message to check it, or
/// the second decoding it compares). What `f` returns still counts as live afterwards.
pub fn unmeasured<T>(f: impl FnOnce() -> T) -> T {
    let was = PAUSED.replace(true);
    let out = f();
    PAUSED.set(was);
    out
}

// ---------------------------------------------------------------------------------------------------
// Types.
// ---------------------------------------------------------------------------------------------------

/// UDTs declared for the value targets' types.
const UDT_DECLARATIONS: [&str; 2] = [
    "addr(street text, zip int)",
    "person(name text, addresses list<frozen<addr>>, scores map<text, frozen<tuple<int, decimal>>>)",
];

/// The types `value_decoder` picks from with its first byte: every native, nested collections,
/// tuples, UDTs, and vectors of fixed-size and vint-prefixed subtypes (nested too).
const DECODER_TYPES: [&str; 48] = [
    "ascii",
    "bigint",
    "blob",
    "boolean",
    "counter",
    "date",
    "decimal",
    "double",
    "duration",
    "float",
    "inet",
    "int",
    "smallint",
    "text",
    "time",
    "timestamp",
    "timeuuid",
    "tinyint",
    "uuid",
    "varint",
    "list<int>",
    "set<text>",
    "map<text, int>",
    "list<frozen<list<int>>>",
    "map<int, frozen<map<text, blob>>>",
    "set<frozen<set<varint>>>",
    "list<frozen<map<uuid, frozen<list<duration>>>>>",
    "tuple<int, text, list<int>>",
    "tuple<tuple<int, text>, blob>",
    "tuple<inet, date, time, decimal>",
    "addr",
    "person",
    "list<frozen<addr>>",
    "vector<float, 3>",
    "vector<double, 2>",
    "vector<boolean, 4>",
    "vector<uuid, 1>",
    "vector<bigint, 2>",
    "vector<smallint, 2>",
    "vector<tinyint, 3>",
    "vector<text, 2>",
    "vector<varint, 3>",
    "vector<duration, 2>",
    "vector<frozen<list<int>>, 2>",
    "vector<vector<float, 2>, 2>",
    "vector<vector<text, 2>, 2>",
    "map<text, frozen<vector<float, 2>>>",
    "tuple<vector<timestamp, 2>, vector<date, 1>, vector<addr, 1>>",
];

/// The types `literal_parser` picks from with its first byte.
const LITERAL_TYPES: [&str; 24] = [
    "int",
    "bigint",
    "varint",
    "decimal",
    "float",
    "double",
    "boolean",
    "text",
    "ascii",
    "blob",
    "timestamp",
    "date",
    "time",
    "duration",
    "inet",
    "uuid",
    "list<int>",
    "set<text>",
    "map<text, double>",
    "map<frozen<list<int>>, frozen<set<date>>>",
    "tuple<int, text, timestamp>",
    "person",
    "vector<float, 3>",
    "vector<text, 2>",
];

/// Parses a fixed list of type strings once, with the UDTs of [`UDT_DECLARATIONS`].
fn parsed_types<const N: usize>(
    cache: &'static OnceLock<Vec<CqlType>>,
    texts: &[&str; N],
) -> &'static [CqlType] {
    cache.get_or_init(|| {
        let mut udts = UdtRegistry::new();
        for declaration in UDT_DECLARATIONS {
            udts.declare(declaration).expect("the fuzz UDTs declare");
        }
        texts
            .iter()
            .map(|text| parse_type(text, &udts).expect("the fuzz types parse"))
            .collect()
    })
}

/// The type that `selector` picks from `types`.
fn pick(types: &[CqlType], selector: u8) -> &CqlType {
    let index = usize::from(selector) % types.len().max(1);
    types.get(index).expect("the type lists are not empty")
}

// ---------------------------------------------------------------------------------------------------
// type_parser
// ---------------------------------------------------------------------------------------------------

/// Parses the last line of the input as a type, after declaring every earlier line as a UDT (errors
/// ignored). An accepted type must display as CQL that parses back to the same type.
pub fn type_parser(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let type_text = lines.next_back().unwrap_or_default();
    let mut udts = UdtRegistry::new();
    for declaration in lines {
        let _ = udts.declare(declaration);
    }
    let Ok(ty) = parse_type(type_text, &udts) else {
        return;
    };
    let shown = ty.to_string();
    let mut redeclared = UdtRegistry::new();
    if !declare_udts(&ty, &mut redeclared) {
        return;
    }
    let reparsed = parse_type(&shown, &redeclared)
        .unwrap_or_else(|e| panic!("`{shown}` (shown for `{type_text}`) does not parse: {e}"));
    assert_eq!(
        without_keyspaces(&reparsed),
        without_keyspaces(&ty),
        "`{type_text}` shows as `{shown}`, which parses to another type"
    );
    if ty.depth() < MAX_TYPE_DEPTH {
        let frozen = format!("frozen<{shown}>");
        match parse_type(&frozen, &redeclared) {
            Ok(t) => assert_eq!(t, reparsed, "`{frozen}` parses to another type"),
            Err(e) => panic!("`{frozen}` does not parse: {e}"),
        }
    }
}

/// Declares the UDTs used by `ty` (innermost first) from their [`UdtType::declaration`]s. False when
/// the round trip cannot be expressed in CQL: two different UDTs share a name, or a UDT (read from
/// a Java class name) is named like a built-in type.
fn declare_udts(ty: &CqlType, udts: &mut UdtRegistry) -> bool {
    match ty {
        CqlType::Native(_) => true,
        CqlType::List(t) | CqlType::Set(t) | CqlType::Vector(t, _) => declare_udts(t, udts),
        CqlType::Map(k, v) => declare_udts(k, udts) && declare_udts(v, udts),
        CqlType::Tuple(components) => components.iter().all(|t| declare_udts(t, udts)),
        CqlType::Udt(udt) => {
            if !udt.fields.iter().all(|(_, t)| declare_udts(t, udts)) {
                return false;
            }
            if let Some(known) = udts.get(&udt.name) {
                return without_keyspace(known) == without_keyspace(udt);
            }
            match udts.declare(&udt.declaration()) {
                Ok(()) => true,
                Err(e) if matches!(e.kind, TypeErrorKind::BuiltInName { .. }) => false,
                Err(e) => panic!(
                    "declaration `{}` of a parsed UDT is refused: {e}",
                    udt.declaration()
                ),
            }
        }
        other => panic!("not covered here: {other:?}"),
    }
}

/// The type with every UDT's keyspace removed (CQL declarations have none).
fn without_keyspaces(ty: &CqlType) -> CqlType {
    match ty {
        CqlType::Native(n) => CqlType::Native(*n),
        CqlType::List(t) => CqlType::List(Box::new(without_keyspaces(t))),
        CqlType::Set(t) => CqlType::Set(Box::new(without_keyspaces(t))),
        CqlType::Vector(t, n) => CqlType::Vector(Box::new(without_keyspaces(t)), *n),
        CqlType::Map(k, v) => CqlType::Map(
            Box::new(without_keyspaces(k)),
            Box::new(without_keyspaces(v)),
        ),
        CqlType::Tuple(components) => {
            CqlType::Tuple(components.iter().map(without_keyspaces).collect())
        }
        CqlType::Udt(udt) => CqlType::Udt(without_keyspace(udt)),
        other => panic!("not covered here: {other:?}"),
    }
}

/// The UDT without its keyspace, fields included.
fn without_keyspace(udt: &UdtType) -> UdtType {
    UdtType {
        keyspace: None,
        name: udt.name.clone(),
        fields: udt
            .fields
            .iter()
            .map(|(name, t)| (name.clone(), without_keyspaces(t)))
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------------------
// value_decoder and literal_parser
// ---------------------------------------------------------------------------------------------------

/// Decodes the input after its first byte as a value of the type that byte picks. `explain` must
/// agree with `decode` (and `decode_prefix` must take every byte of an accepted payload); an accepted
/// payload must re-encode to the same bytes, except where the wire rules allow other encodings (varint,
/// decimal, boolean, vints), which must re-encode no longer; the value must survive the encode,
/// CQL-literal and JSON round trips.
pub fn value_decoder(data: &[u8]) {
    static TYPES: OnceLock<Vec<CqlType>> = OnceLock::new();
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    let ty = pick(parsed_types(&TYPES, &DECODER_TYPES), selector);
    let decoded = value::decode(ty, payload);
    let explained = value::explain(ty, payload);
    assert_eq!(
        explained.result, decoded,
        "explain and decode disagree ({ty})"
    );
    let mut previous = 0;
    for line in &explained.lines {
        assert!(
            line.offset >= previous && line.offset.saturating_add(line.len) <= payload.len(),
            "explain line out of order or past the payload ({ty}): {line:?}"
        );
        previous = line.offset;
    }
    check_streamed_text(ty, payload, &decoded);
    check_refusals(ty, payload, &decoded);
    let Ok(value) = decoded else {
        return;
    };
    match value::decode_prefix(ty, payload) {
        Ok((prefix_value, used)) => {
            assert_eq!(
                prefix_value, value,
                "decode_prefix reads another value ({ty})"
            );
            assert_eq!(used, payload.len(), "decode_prefix leaves bytes ({ty})");
        }
        Err(e) => panic!("decode_prefix refuses what decode accepts ({ty}): {e}"),
    }
    let encoded = check_value_forms(ty, &value);
    if has_alternative_encodings(ty) {
        assert!(
            encoded.len() <= payload.len(),
            "re-encoding is longer than the accepted payload ({ty})"
        );
    } else {
        assert_eq!(
            encoded, payload,
            "a non-canonical payload is accepted ({ty})"
        );
    }
}

/// Checks that what `refused::refusals_each` finds in a payload (while decoding it, keeping nothing)
/// is what the rule finds walking the whole decoded value, in the same order, at offsets inside the
/// payload and in byte order; that it fails where decode fails; and that a type `can_be_refused`
/// calls free of refusals has none.
fn check_refusals(ty: &CqlType, payload: &[u8], decoded: &Result<Value, value::DecodeError>) {
    use value::refused::{self, Place, Refusal};
    let mut found = Vec::new();
    let streamed = refused::refusals_each(ty, payload, false, &mut |r| found.push(r));
    let Ok(value) = decoded else {
        assert!(
            streamed.is_err(),
            "refusals_each accepts what decode refuses ({ty})"
        );
        return;
    };
    assert_eq!(
        streamed.ok(),
        Some(payload.len()),
        "refusals_each disagrees with decode ({ty})"
    );
    fn walk(place: Place, ty: &CqlType, value: &Value, out: &mut Vec<Refusal>) {
        out.extend(Refusal::of(place, ty, value));
        match (ty, value) {
            (CqlType::List(t), Value::List(items)) => items
                .iter()
                .for_each(|v| walk(Place::ListElement, t, v, out)),
            (CqlType::Set(t), Value::List(items)) => items
                .iter()
                .for_each(|v| walk(Place::SetElement, t, v, out)),
            (CqlType::Vector(t, _), Value::List(items)) => {
                items.iter().for_each(|v| walk(Place::Other, t, v, out))
            }
            (CqlType::Map(k, t), Value::Map(entries)) => entries.iter().for_each(|(key, v)| {
                walk(Place::MapKey, k, key, out);
                walk(Place::MapValue, t, v, out);
            }),
            (CqlType::Tuple(types), Value::Tuple(items)) => types
                .iter()
                .zip(items)
                .for_each(|(t, v)| walk(Place::Other, t, v, out)),
            (CqlType::Udt(udt), Value::Udt(fields)) => udt
                .fields
                .iter()
                .zip(fields)
                .for_each(|((_, t), (_, v))| walk(Place::Other, t, v, out)),
            _ => {}
        }
    }
    let mut expected = Vec::new();
    walk(Place::Other, ty, value, &mut expected);
    let got: Vec<Refusal> = found.iter().map(|r| r.refusal).collect();
    assert_eq!(
        got, expected,
        "refusals_each misses or adds findings ({ty})"
    );
    let mut previous = 0;
    for r in &found {
        assert!(
            r.offset >= previous && (r.offset < payload.len() || r.offset == 0),
            "a finding out of order or past the payload ({ty}): {r:?}"
        );
        previous = r.offset;
    }
    assert!(
        found.is_empty() || refused::can_be_refused(ty),
        "can_be_refused({ty}) is false, yet {found:?}"
    );
}

/// Checks that the streamed printer writes what formatting the whole decoded value gives, in CQL and
/// JSON, and on a malformed payload fails as decode does, writing nothing.
fn check_streamed_text(ty: &CqlType, payload: &[u8], decoded: &Result<Value, value::DecodeError>) {
    for form in [print::TextForm::Cql, print::TextForm::Json] {
        let mut out = Vec::new();
        let streamed = print::write_text(ty, payload, false, form, &|s| s.into(), &mut out);
        match (streamed, decoded) {
            (Ok(()), Ok(value)) => {
                let whole = match form {
                    print::TextForm::Cql => cql::format_cql(ty, value),
                    print::TextForm::Json => json::to_json(ty, value).to_string(),
                    other => panic!("not covered here: {other:?}"),
                };
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    whole + "\n",
                    "streamed {form:?} differs ({ty})"
                );
            }
            (Err(print::PrintError::Decode(e)), Err(d)) => {
                assert_eq!(&e, d, "streamed {form:?} fails otherwise ({ty})");
                assert!(out.is_empty(), "half-written {form:?} output ({ty})");
            }
            (streamed, _) => panic!("write_text and decode disagree ({ty}): {streamed:?}"),
        }
    }
}

/// Whether the wire rules let a value of `ty` have more than one encoding: varint and decimal (any
/// two's complement length), boolean (any non-zero byte is true), duration and vint-prefixed vector
/// elements (non-minimal vints).
fn has_alternative_encodings(ty: &CqlType) -> bool {
    match ty {
        CqlType::Native(n) => matches!(
            n,
            NativeType::Varint | NativeType::Decimal | NativeType::Boolean | NativeType::Duration
        ),
        CqlType::Vector(t, _) => t.vector_element_size().is_none() || has_alternative_encodings(t),
        CqlType::List(t) | CqlType::Set(t) => has_alternative_encodings(t),
        CqlType::Map(k, v) => has_alternative_encodings(k) || has_alternative_encodings(v),
        CqlType::Tuple(components) => components.iter().any(has_alternative_encodings),
        CqlType::Udt(udt) => udt.fields.iter().any(|(_, t)| has_alternative_encodings(t)),
        other => panic!("not covered here: {other:?}"),
    }
}

/// Parses the input after its first byte as a CQL literal (even first byte) or JSON (odd) of the type
/// the rest of the first byte picks; an accepted value must survive the encode, CQL-literal and JSON
/// round trips.
pub fn literal_parser(data: &[u8]) {
    static TYPES: OnceLock<Vec<CqlType>> = OnceLock::new();
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let ty = pick(parsed_types(&TYPES, &LITERAL_TYPES), selector >> 1);
    let parsed = if selector & 1 == 0 {
        cql::parse_cql(ty, text)
    } else {
        match json::parse_document(text) {
            Ok(document) => json::from_json(ty, &document),
            Err(_) => return,
        }
    };
    if let Ok(value) = parsed {
        check_value_forms(ty, &value);
    }
}

/// Checks that an accepted value encodes and decodes back (the text readers refuse what the codec
/// cannot encode, with its message), prints as a CQL literal that parses back, and converts to JSON
/// that reads back, each time to the same value; returns its encoding.
fn check_value_forms(ty: &CqlType, value: &Value) -> Vec<u8> {
    let encoded = match value::encode(ty, value) {
        Ok(bytes) => bytes,
        Err(e) => panic!("an accepted value does not encode ({ty}): {e}: {value:?}"),
    };
    match value::decode(ty, &encoded) {
        Ok(decoded) => assert_eq!(&decoded, value, "encode/decode changes the value ({ty})"),
        Err(e) => panic!("the encoding of an accepted value does not decode ({ty}): {e}"),
    }
    let literal = cql::format_cql(ty, value);
    let document = json::to_json(ty, value);
    if let Err(repeat) = value::check_no_repeats(ty, value) {
        // A decoded payload may repeat a map key or set element; both text forms refuse it so.
        assert_eq!(
            cql::parse_cql(ty, &literal),
            Err(repeat.clone()),
            "`{literal}` ({ty})"
        );
        assert_eq!(
            json::from_json(ty, &document),
            Err(repeat),
            "{document} ({ty})"
        );
        return encoded;
    }
    match cql::parse_cql(ty, &literal) {
        Ok(parsed) => assert_eq!(&parsed, value, "`{literal}` parses to another value ({ty})"),
        Err(e) => panic!("printed literal `{literal}` does not parse ({ty}): {e}"),
    }
    match json::from_json(ty, &document) {
        Ok(read) => assert_eq!(
            &read, value,
            "JSON {document} reads as another value ({ty})"
        ),
        Err(e) => panic!("printed JSON {document} does not read ({ty}): {e}"),
    }
    encoded
}

// ---------------------------------------------------------------------------------------------------
// lz4_body and frame_stream
// ---------------------------------------------------------------------------------------------------

/// The `--max-size` the LZ4 targets use: small, so garbage cannot make big outputs, yet above the
/// 4 MiB where bodies are walked before the output is allocated.
const LZ4_MAX_SIZE: usize = 8 << 20;

thread_local! {
    /// The output buffer of [`lz4_body`]'s second decompression, kept from input to input as a
    /// caller that reuses its buffer keeps it: grown to the largest declared length seen, and
    /// holding whatever the inputs before left in it.
    static REUSED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Decompresses the input as a CQL v4 LZ4 body. The C lz4 library must agree on every body whose
/// declared length passes the checks, and an accepted payload must compress and decompress back.
/// The input itself and every accepted payload must compress to the C library's bytes, and the
/// input compressed must decompress back in place.
/// Decompressing into a reused buffer that already holds the declared length (the in-place path)
/// must give what a fresh buffer gives: the same payload, or the same error and an empty buffer.
/// All under [`LZ4_BODY_BOUND`].
pub fn lz4_body(data: &[u8]) {
    bounded(data, LZ4_BODY_BOUND, check_lz4_body);
}

/// What `lz4_body` may hold: the output is allocated only for a declared length the block can
/// make (at most [`LZ4_RATIO`] × the block, `docs/limits.md`), and the check holds up to about
/// eight payloads' worth at once (cqlwire's, the kept buffer grown to it, the C library's, and the
/// payload compressed three ways into buffers of its worst-case size), plus the input compressed
/// and decompressed in place.
pub const LZ4_BODY_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 16,
    constant: 64 << 10,
    decompressed_per_input_byte: 10 * LZ4_RATIO,
    retained_per_connection: None,
};

/// [`lz4_body`]'s checks, without the memory bound.
fn check_lz4_body(data: &[u8]) {
    compresses_like_c(data);
    round_trips_in_place(data);
    let ours = lz4::decompress_body(data, LZ4_MAX_SIZE);
    let declared = lz4::declared_length(data, LZ4_MAX_SIZE);
    REUSED.with_borrow_mut(|out| {
        if let Ok(declared) = declared {
            if out.len() < declared {
                out.resize(declared, 0xAA);
            }
        }
        match (lz4::decompress_body_into(data, LZ4_MAX_SIZE, out), &ours) {
            (Ok(()), Ok(payload)) => assert!(out == payload, "a reused buffer decodes differently"),
            (Err(e), Err(expected)) => {
                assert_eq!(&e, expected, "a reused buffer fails differently");
                assert!(out.is_empty(), "an error leaves the reused buffer filled");
            }
            (result, expected) => panic!("reused buffer: {result:?}, fresh: {expected:?}"),
        }
    });
    if let Ok(declared) = declared {
        let block = data.get(lz4::LENGTH_PREFIX..).unwrap_or_default();
        if declared > 0 {
            let size = i32::try_from(declared).expect("the limit fits in an i32");
            let reference = ::lz4::block::decompress(block, Some(size))
                .ok()
                .filter(|payload| payload.len() == declared);
            match (&ours, &reference) {
                (Ok(a), Some(b)) => assert!(a == b, "cqlwire and C lz4 decompress differently"),
                // The LZ4 format's end-of-block rules bind compressors; the C decoder enforces
                // them, lz4_flex (and so cqlwire) does not.
                (Ok(_), None) if breaks_end_of_block_rules(block) => {}
                (Ok(_), None) => panic!("cqlwire accepts a body C lz4 refuses"),
                // The LZ4 block format forbids offset 0; the C decoder lets it through.
                (Err(e), Some(_)) if e.kind == lz4::Lz4ErrorKind::MatchOffsetZero => {}
                (Err(e), Some(_)) => panic!("C lz4 accepts a body cqlwire refuses: {e}"),
                (Err(_), None) => {}
            }
        }
    }
    let Ok(payload) = ours else {
        return;
    };
    compresses_like_c(&payload);
    let body = lz4::compress_body(&payload).expect("an accepted payload compresses");
    assert!(
        lz4::decompress_body(&body, LZ4_MAX_SIZE).as_ref() == Ok(&payload),
        "compress/decompress changes the payload"
    );
}

/// `lz4::compress_body` makes the Python driver's body (python-lz4: liblz4's
/// `LZ4_compress_fast_continue` on a fresh stream), and lz4_flex's block `compress` makes
/// `LZ4_compress_default`'s block.
fn compresses_like_c(payload: &[u8]) {
    use ::lz4::liblz4::{LZ4_compress_continue, LZ4_createStream, LZ4_freeStream};
    let body = lz4::compress_body(payload).expect("the fuzzer's inputs are small");
    let len = i32::try_from(payload.len()).expect("the fuzzer's inputs are small");
    let mut stream_block = vec![0u8; lz4_flex::block::get_maximum_output_size(payload.len())];
    // SAFETY: a fresh stream, `len` bytes of source, a destination of at least LZ4_compressBound
    // (`LZ4_compress_continue` assumes it); the stream is freed once.
    let written = unsafe {
        let stream = LZ4_createStream();
        assert!(!stream.is_null());
        let written = LZ4_compress_continue(
            stream,
            payload.as_ptr().cast(),
            stream_block.as_mut_ptr().cast(),
            len,
        );
        LZ4_freeStream(stream);
        written
    };
    stream_block.truncate(usize::try_from(written).expect("C lz4 compresses"));
    assert!(
        body[lz4::LENGTH_PREFIX..] == stream_block[..],
        "cqlwire's body is not the driver's (LZ4_compress_fast_continue)"
    );
    let default_block = ::lz4::block::compress(payload, None, false).expect("C lz4 compresses");
    assert!(
        lz4_flex::block::compress(payload) == default_block,
        "lz4_flex's block is not LZ4_compress_default's"
    );
}

/// `payload` compressed comes back decompressed into a buffer already large enough (the in-place
/// path, which copies a block that is one literal run without the decoder).
fn round_trips_in_place(payload: &[u8]) {
    let body = lz4::compress_body(payload).expect("the fuzzer's inputs are small");
    REUSED.with_borrow_mut(|out| {
        if out.len() < payload.len() {
            out.resize(payload.len(), 0xAA);
        }
        lz4::decompress_body_into(&body, LZ4_MAX_SIZE, out).expect("our own body decompresses");
        assert!(
            out == payload,
            "a body decompressed in place is not its payload"
        );
    });
}

/// Whether a well-formed LZ4 block breaks the format's end-of-block rules: the last 5 bytes of output
/// are literals, and the last match starts at least 12 bytes before the end of the output.
fn breaks_end_of_block_rules(block: &[u8]) -> bool {
    let mut at = 0;
    let mut out = 0usize;
    let mut last_match_start = None;
    let length = |at: &mut usize, nibble: usize| {
        let mut total = nibble;
        if nibble == 15 {
            while let Some(&extra) = block.get(*at) {
                *at += 1;
                total += usize::from(extra);
                if extra != 255 {
                    break;
                }
            }
        }
        total
    };
    while let Some(&token) = block.get(at) {
        at += 1;
        let literals = length(&mut at, usize::from(token >> 4));
        at += literals;
        out += literals;
        if at >= block.len() {
            return literals < 5 || last_match_start.is_some_and(|start: usize| start + 12 > out);
        }
        at += 2;
        last_match_start = Some(out);
        out += 4 + length(&mut at, usize::from(token & 15));
    }
    true
}

/// Splits the input into v3/v4 frames with the slice iterator and the streaming reader, which must
/// agree frame by frame and on the error; headers must print back to their bytes; compressed bodies
/// are decompressed (as `decompress --frames` does) without panicking. All under
/// [`FRAME_STREAM_BOUND`].
pub fn frame_stream(data: &[u8]) {
    bounded(data, FRAME_STREAM_BOUND, check_frame_stream);
}

/// What `frame_stream` may hold: the streaming reader reads a body in steps of 1 MiB, so its
/// memory follows the bytes that arrive, never the length a header claims (`docs/limits.md`);
/// one body decompressed at a time, at most [`LZ4_RATIO`] × its block.
pub const FRAME_STREAM_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 4,
    constant: (1 << 20) + (64 << 10),
    decompressed_per_input_byte: 2 * LZ4_RATIO,
    retained_per_connection: None,
};

/// [`frame_stream`]'s checks, without the memory bound.
fn check_frame_stream(data: &[u8]) {
    let mut reader = FrameReader::new(Cursor::new(data));
    let mut body = Vec::new();
    let mut next_offset = 0u64;
    for sliced in Frames::new(data) {
        let streamed = reader.next_frame(&mut body);
        let frame = match (sliced, streamed) {
            (Ok(frame), Ok(Some((offset, header)))) => {
                assert_eq!((frame.offset, frame.header), (offset, header));
                assert_eq!(
                    frame.body,
                    body.as_slice(),
                    "bodies differ at byte {offset}"
                );
                frame
            }
            (Err(sliced), Err(streamed)) => {
                assert_eq!(sliced.to_string(), streamed.to_string());
                return;
            }
            (sliced, streamed) => panic!("slice and stream disagree: {sliced:?} / {streamed:?}"),
        };
        assert_eq!(frame.offset, next_offset, "frames are not contiguous");
        let start = usize::try_from(frame.offset).expect("offsets fit the input");
        let header_bytes = data.get(start..start + HEADER_LEN);
        assert_eq!(Some(&frame.header.to_bytes()[..]), header_bytes);
        next_offset = frame.body_offset() + frame.body.len() as u64;
        if frame.header.is_compressed() {
            if let Ok(payload) = lz4::decompress_body(frame.body, LZ4_MAX_SIZE) {
                let rewritten: Result<FrameHeader, _> =
                    frame.header.with_body(false, payload.len());
                assert!(
                    rewritten.is_ok(),
                    "a decompressed body under the limit fits a frame"
                );
            }
        }
    }
    assert!(
        matches!(reader.next_frame(&mut body), Ok(None)),
        "the stream reader finds more than the slice iterator"
    );
}

// ---------------------------------------------------------------------------------------------------
// npy_header and vecs_readers
// ---------------------------------------------------------------------------------------------------

/// Reads the whole input as a `.npy` file, as a stream and as a file; see [`check_reader`].
pub fn npy_header(data: &[u8]) {
    check_reader(data, InputFormat::Npy, RowSelection::All, 3);
}

/// Reads the input after its first byte as the fvecs/ivecs/bvecs/fbin/ibin/u8bin/i8bin file that
/// byte's low 3 bits pick (7 means fvecs), with the row selection and batch size its high bits pick;
/// see [`check_reader`].
pub fn vecs_readers(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    // The fixed-layout formats of the library's registry, in its order.
    let mut fixed = InputFormat::ALL
        .iter()
        .copied()
        .filter(|format| format.fixed_element_type().is_some());
    let format = fixed
        .nth(usize::from(selector & 7))
        .unwrap_or(InputFormat::Fvecs);
    let selection = fuzzed_selection(selector >> 6);
    let batch_rows = usize::from((selector >> 3) & 7) + 1;
    check_reader(file, format, selection, batch_rows);
}

/// The row selection two bits pick (the higher ones are ignored): all rows (0, 1), rows 1..3 (2)
/// or shard 2/3 (3).
fn fuzzed_selection(bits: u8) -> RowSelection {
    match bits & 3 {
        0 | 1 => RowSelection::All,
        2 => RowSelection::Range(1..3),
        _ => RowSelection::Shard { k: 2, n: 3 },
    }
}

/// Reads the input after its first byte as the ground truth its low 2 bits pick (ivecs, npy,
/// big-ann-benchmarks binary, Parquet), as a stream and as a file, to 1000 ids per list and to the
/// k that bits 2–3 pick (1, 3, 10, 100): stream and file give the same lists or both fail; every
/// list holds k ids; what is read to k is the first k ids of what is read to 1000 whenever that
/// reads (lists of any width are read to k: a whole 25,000,000-id list is never held); a
/// file other than Parquet (whose pages decompress to more than their bytes) never makes the
/// reader allocate more than 2 × its size (ids widen from 4 to 8 bytes) + 64 KiB at once.
pub fn neighbors(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let format = match selector & 3 {
        0 => NeighborsFormat::Ivecs,
        1 => NeighborsFormat::Npy,
        2 => NeighborsFormat::BigAnn,
        _ => NeighborsFormat::Parquet,
    };
    let k = [1, 3, 10, 100][usize::from((selector >> 2) & 3)];
    let whole = read_neighbors_both(file, format, 1000);
    let cut = read_neighbors_both(file, format, k);
    if let (Ok(whole), Ok(cut)) = (&whole, &cut) {
        assert_eq!(cut.rows(), whole.rows(), "read to {k}: other rows");
        assert_eq!(
            cut.k(),
            whole.k().min(k),
            "read to {k}: lists of {}",
            cut.k()
        );
        for row in 0..whole.rows() {
            assert_eq!(
                cut.row(row),
                &whole.row(row)[..cut.k()],
                "read to {k}: row {row}"
            );
        }
    }
    if whole.is_ok() {
        assert!(cut.is_ok(), "lists read to 1000, but not to {k}: {cut:?}");
    }
}

/// Reads `file` as a ground truth in `format` to `k` ids per list, as a stream and as a file:
/// both give the same lists or both fail; every list holds k ids; the allocation bound of
/// [`neighbors`].
fn read_neighbors_both(
    file: &[u8],
    format: NeighborsFormat,
    k: usize,
) -> Result<input::Neighbors, InputError> {
    let stream = input::read_neighbors_stream_to(
        "fuzz input",
        Box::new(Cursor::new(file.to_vec())),
        format,
        k,
    );
    let from_file = (|| {
        let io_error = |source| InputError::Io {
            input: "fuzz temporary file".to_string(),
            source,
        };
        let mut temporary = tempfile::tempfile_in("/dev/shm")
            .or_else(|_| tempfile::tempfile())
            .map_err(io_error)?;
        temporary.write_all(file).map_err(io_error)?;
        temporary.rewind().map_err(io_error)?;
        let path = format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&temporary)
        );
        take_largest_allocation();
        let read = input::read_neighbors_to(std::path::Path::new(&path), Some(format), k);
        let largest = take_largest_allocation();
        let bound = 2 * file.len() + FILE_ALLOCATION_SLACK;
        assert!(
            format == NeighborsFormat::Parquet || largest <= bound,
            "reading a {}-byte ground truth allocates {largest} bytes at once",
            file.len()
        );
        read
    })();
    for lists in [&stream, &from_file].into_iter().flatten() {
        assert!(lists.k() <= k, "lists of {} ids read to {k}", lists.k());
        for row in 0..lists.rows() {
            assert_eq!(lists.row(row).len(), lists.k());
        }
    }
    match (&stream, &from_file) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "stream and file read different lists"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("stream and file disagree: {a:?} / {b:?}"),
    }
    from_file
}

/// What a reader produced: element type, dimension, rows, and each element's value as f64 bits.
#[derive(Debug, PartialEq)]
struct ReadAll {
    element_type: input::ElementType,
    dimension: usize,
    rows: u64,
    element_bits: Vec<u64>,
}

/// Opens `data` as `format` both as a stream and as a file and reads every batch. Batches must hold
/// rows × dimension elements, never more data than the input has, the row count announced up front;
/// the stream and the file must give the same rows, or both fail (except where a stream cannot know
/// what a file can).
fn check_reader(data: &[u8], format: InputFormat, selection: RowSelection, batch_rows: usize) {
    let whole = selection == RowSelection::All;
    let options = InputOptions {
        format: Some(format),
        column: None,
        dataset: "train".to_string(),
        selection,
        batch_rows,
        vectors_optional: false,
    };
    let stream = input::open_stream("fuzz input", Box::new(Cursor::new(data.to_vec())), &options)
        .and_then(|reader| read_all(reader, data.len(), None));
    let file = read_file(data, &options, 1);
    match (&stream, &file) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "stream and file read differently ({format:?})"),
        (Err(_), Err(_)) => {}
        // A file's size is checked against its header up front; a stream reading only some rows
        // never sees where it ends.
        (Ok(_), Err(InputError::Data(_))) if !whole => {}
        // What only a seekable file allows (Fortran order, --shard without a row count) is refused
        // on a stream.
        (Err(InputError::Unsupported(message) | InputError::Options(message)), Ok(_))
            if message.contains("stream") => {}
        (Err(InputError::ShardNeedsRowCount { .. }), Ok(_)) => {}
        _ => panic!("stream and file disagree ({format:?}): {stream:?} / {file:?}"),
    }
}

/// Reads the input after its first byte as a Parquet file (bit 0 set) or an Arrow IPC stream or file
/// (as a stream and as a file), in batches of the rows its bits 1–3 pick; every batch its readers
/// give has its other columns as valid Arrow arrays of the batch's rows and the declared schema,
/// and its damaged rows (text that is not UTF-8, at any depth) inside the batch, in order, each a
/// null cell of a column that exists.
pub fn columnar_readers(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let parquet = selector & 1 == 1;
    let options = InputOptions {
        format: Some(if parquet {
            InputFormat::Parquet
        } else {
            InputFormat::Arrow
        }),
        column: None,
        dataset: "train".to_string(),
        selection: RowSelection::All,
        batch_rows: usize::from((selector >> 1) & 7) + 1,
        vectors_optional: false,
    };
    if !parquet {
        let stream = Box::new(Cursor::new(file.to_vec()));
        if let Ok(reader) = input::open_stream("fuzz input", stream, &options) {
            let _ = check_columns(reader);
        }
    }
    let _ = with_file(file, |path| {
        input::open(Some(path), &options).and_then(check_columns)
    });
}

/// Reads the input after its first byte as the VectorDBBench file its low 2 bits pick: a ground
/// truth (`neighbors*.parquet`: `id`, `neighbors_id`), the labels (`scalar_labels.parquet`: `id`,
/// `labels`) or the queries (`test.parquet`: `id`, `emb`), from a file. Whatever the bytes, an
/// error or: ground-truth lists all of k non-negative ids; every label row's id finds a label
/// that is one of the distinct names or none, and the rows carrying each name add up to at most
/// the rows; one id per query and `dimension` elements per query.
pub fn bench_readers(data: &[u8]) {
    use cqlwire_bench::truth::{GroundTruth, Queries, ScalarLabels};
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let _ = with_file(file, |path| match selector & 3 {
        0 | 1 => {
            if let Ok(truth) = GroundTruth::read(path) {
                for query in 0..truth.queries() {
                    let list = truth.list(query);
                    assert_eq!(list.len(), truth.k(), "list {query} of another length");
                    assert!(
                        list.iter().all(|&id| id >= 0),
                        "a negative id in list {query}"
                    );
                }
            }
        }
        2 => {
            if let Ok(labels) = ScalarLabels::read(path) {
                let counted: usize = labels.names().iter().map(|name| labels.count(name)).sum();
                assert!(
                    counted <= labels.len(),
                    "{counted} labelled rows of {}",
                    labels.len()
                );
                for row in 0..labels.len().min(1000) {
                    let Ok(id) = i64::try_from(row) else { break };
                    if let Some(label) = labels.label(id) {
                        assert!(labels.names().iter().any(|name| name == label));
                    }
                }
            }
        }
        _ => {
            if let Ok(queries) = Queries::read(path) {
                assert_eq!(queries.ids().len(), queries.len());
                for query in 0..queries.len() {
                    assert_eq!(queries.vector(query).len(), queries.dimension());
                }
            }
        }
    });
}

/// Reads every batch of a Parquet or Arrow reader, checking its columns and damaged rows (see
/// [`columnar_readers`]).
fn check_columns(mut reader: Box<dyn BatchReader>) -> Result<(), InputError> {
    let schema = reader.passthrough_schema();
    while let Some(batch) = reader.next_batch()? {
        let rows = batch.first_row..batch.first_row + batch.rows as u64;
        if let (Some(columns), Some(schema)) = (&batch.columns, &schema) {
            assert_eq!(columns.num_rows(), batch.rows, "columns of another length");
            assert_eq!(
                columns.schema().fields(),
                schema.fields(),
                "columns of other types"
            );
            for column in columns.columns() {
                column
                    .to_data()
                    .validate_full()
                    .unwrap_or_else(|e| panic!("an invalid Arrow column: {e}"));
            }
        }
        let mut last = None;
        for damaged in &batch.damaged {
            assert!(
                rows.contains(&damaged.row),
                "a damaged row outside its batch"
            );
            assert!(last <= Some(damaged.row), "damaged rows out of order");
            last = Some(damaged.row);
            let column = batch
                .columns
                .as_ref()
                .and_then(|columns| columns.column_by_name(&damaged.column))
                .unwrap_or_else(|| panic!("a damaged row of no column: {damaged}"));
            let index = (damaged.row - batch.first_row) as usize;
            assert!(
                column.is_null(index),
                "a damaged cell is not null: {damaged}"
            );
        }
    }
    Ok(())
}

/// Datasets `hdf5_reader` picks from with its first byte.
const HDF5_DATASETS: [&str; 4] = ["train", "test", "neighbors", "distances"];

/// Reads the input after its first byte as an HDF5 file, the dataset (low 2 bits: train, test,
/// neighbors, distances), row selection (bits 2–3) and batch size (bits 4–6) picked by that byte:
/// as a stream and as a file, which must agree, with the checks of [`check_reader`] except that
/// gzip-compressed chunks may hold up to [`DEFLATE_RATIO`] times their bytes; and the dataset
/// whole through `read_integer_dataset`, which holds rows × columns values when it succeeds; and
/// the root attribute `distance` through `read_root_string_attribute`, with the same allocation
/// bound and a value of at most `MAX_ATTRIBUTE_BYTES` bytes.
pub fn hdf5_reader(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let dataset = HDF5_DATASETS
        .get(usize::from(selector & 3))
        .copied()
        .unwrap_or("train");
    let options = InputOptions {
        format: Some(InputFormat::Hdf5),
        column: None,
        dataset: dataset.to_string(),
        selection: fuzzed_selection(selector >> 2),
        batch_rows: usize::from((selector >> 4) & 7) + 1,
        vectors_optional: false,
    };
    let capacity = file.len().saturating_mul(DEFLATE_RATIO);
    let stream = input::open_stream("fuzz input", Box::new(Cursor::new(file.to_vec())), &options)
        .and_then(|reader| read_all(reader, capacity, None));
    let from_file = read_file(file, &options, DEFLATE_RATIO);
    match (&stream, &from_file) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "stream and file read differently (HDF5)"),
        (Err(_), Err(_)) => {}
        _ => panic!("stream and file disagree (HDF5): {stream:?} / {from_file:?}"),
    }
    let whole = with_file(file, |path| {
        take_largest_allocation();
        let read = input::read_integer_dataset(path, dataset);
        let largest = take_largest_allocation();
        let bound = capacity.saturating_add(FILE_ALLOCATION_SLACK);
        assert!(
            largest <= bound,
            "reading a {}-byte file allocates {largest} bytes at once",
            file.len()
        );
        read
    });
    if let Ok(Ok(read)) = whole {
        assert_eq!(Some(read.values.len()), read.rows.checked_mul(read.columns));
        assert!(
            read.values.len() <= capacity,
            "more values than the input holds"
        );
    }
    let attribute = with_file(file, |path| {
        take_largest_allocation();
        let read = input::read_root_string_attribute(path, "distance");
        let largest = take_largest_allocation();
        let bound = file.len().saturating_add(FILE_ALLOCATION_SLACK);
        assert!(
            largest <= bound,
            "reading an attribute of a {}-byte file allocates {largest} bytes at once",
            file.len()
        );
        read
    });
    if let Ok(Ok(Some(value))) = attribute {
        assert!(
            value.len() <= input::MAX_ATTRIBUTE_BYTES,
            "an attribute longer than the bound: {} bytes",
            value.len()
        );
    }
}

/// Writes `data` to an unnamed temporary file in memory and calls `read` with its `/proc/self/fd`
/// path, as `convert` opens a file.
fn with_file<T>(data: &[u8], read: impl FnOnce(&std::path::Path) -> T) -> Result<T, InputError> {
    let io_error = |source| InputError::Io {
        input: "fuzz temporary file".to_string(),
        source,
    };
    let mut file = tempfile::tempfile_in("/dev/shm")
        .or_else(|_| tempfile::tempfile())
        .map_err(io_error)?;
    file.write_all(data).map_err(io_error)?;
    file.rewind().map_err(io_error)?;
    let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
    Ok(read(std::path::Path::new(&path)))
}

/// Reads `data` as a file (see [`with_file`]) and every batch of it; the data may inflate to
/// `ratio` times its size (1: it is stored as is).
fn read_file(data: &[u8], options: &InputOptions, ratio: usize) -> Result<ReadAll, InputError> {
    let capacity = data.len().saturating_mul(ratio);
    with_file(data, |path| {
        take_largest_allocation();
        let reader = input::open(Some(path), options)?;
        read_all(
            reader,
            capacity,
            Some(capacity.saturating_add(FILE_ALLOCATION_SLACK)),
        )
    })?
}

/// Reads every batch, checking each against the reader's announced shape and the input's size, and
/// the reader's allocations against `allocation_bound` (from the last [`take_largest_allocation`]).
fn read_all(
    mut reader: Box<dyn BatchReader>,
    input_len: usize,
    allocation_bound: Option<usize>,
) -> Result<ReadAll, InputError> {
    let check_allocations = || {
        let largest = take_largest_allocation();
        if let Some(bound) = allocation_bound {
            assert!(
                largest <= bound,
                "reading a {input_len}-byte file allocates {largest} bytes at once"
            );
        }
    };
    check_allocations();
    let element_type = reader.element_type();
    let dimension = reader.dimension();
    let announced = reader.rows();
    let mut all = ReadAll {
        element_type,
        dimension,
        rows: 0,
        element_bits: Vec::new(),
    };
    loop {
        let next = reader.next_batch();
        check_allocations();
        let Some(batch) = next? else {
            break;
        };
        assert!(batch.first_row >= all.rows, "batches go back");
        assert_eq!(batch.elements.element_type(), element_type);
        assert_eq!(
            Some(batch.elements.len()),
            batch.rows.checked_mul(dimension),
            "a batch's elements are not rows × dimension"
        );
        if let Some(validity) = &batch.validity {
            assert_eq!(
                validity.len(),
                batch.rows,
                "validity is not one flag per row"
            );
        }
        all.rows += batch.rows as u64;
        all.element_bits
            .extend(batch.elements.to_f64().iter().map(|x| x.to_bits()));
        assert!(
            all.element_bits.len() * element_type.size() <= input_len,
            "more elements than the input holds"
        );
    }
    if let Some(rows) = announced {
        assert_eq!(rows, all.rows, "fewer or more rows than announced");
    }
    Ok(all)
}

/// A string as the protocol's `[string]`.
fn short_string(text: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(&(text.len() as u16).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// The body of a PREPARED result for prepared id `0xab`: bound variables `a int`, `b text`,
/// `c list<int>`, `d vector<float, 2>` (a custom class name), result columns `x int` and
/// `y tuple<int, text>`.
fn prepared_body(version: u8) -> Vec<u8> {
    let mut body = vec![0, 0, 0, 4, 0, 1, 0xab];
    if version >= 5 {
        body.extend_from_slice(&[0, 1, 0xcd]);
    }
    body.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 4]);
    if version >= 4 {
        body.extend_from_slice(&[0, 0, 0, 1, 0, 0]);
    }
    short_string("k", &mut body);
    short_string("t", &mut body);
    for (name, option) in [
        ("a", &[0u8, 9][..]),
        ("b", &[0, 0x0d]),
        ("c", &[0, 0x20, 0, 9]),
    ] {
        short_string(name, &mut body);
        body.extend_from_slice(option);
    }
    short_string("d", &mut body);
    body.extend_from_slice(&[0, 0]);
    short_string(
        "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 2)",
        &mut body,
    );
    body.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2]);
    short_string("k", &mut body);
    short_string("t", &mut body);
    short_string("x", &mut body);
    body.extend_from_slice(&[0, 9]);
    short_string("y", &mut body);
    body.extend_from_slice(&[0, 0x31, 0, 2, 0, 9, 0, 0x0d]);
    body
}

/// `message_body`: byte 0 picks the protocol version (3, 4 or 5) and, with its top bit, a registry
/// that knows prepared id `0xab` (so EXECUTE and BATCH values get types, and a RESULT is decoded as
/// the answer to an EXECUTE of it); byte 1 is the header flags, byte 2 the opcode (low 5 bits, so
/// unknown opcodes too); the rest is the body. Invariants: `explain` agrees with `decode`, its lines
/// stay inside the body in byte order, and a decoded message renders as JSON, gist and explain text.
pub fn message_body(data: &[u8]) {
    use cqlwire_inspect::RenderMessage;
    use cqlwire_protocol::message::{DecodeContext, Message, Registry};
    let [selector, flags, opcode, body @ ..] = data else {
        return;
    };
    let version = 3 + (selector & 0x7f) % 3;
    let opcode = opcode & 0x1f;
    let mut registry = Registry::new();
    let mut request = None;
    if selector & 0x80 != 0 {
        let prepared = Message::decode(
            &DecodeContext {
                version,
                flags: 0,
                opcode: 0x08,
                registry: &registry,
                request: None,
            },
            &prepared_body(version),
        )
        .expect("the fuzz registry's PREPARED result decodes");
        registry.learn(None, &prepared);
        assert_eq!(registry.len(), 1);
        let mut execute = vec![0, 1, 0xab];
        if version >= 5 {
            execute.extend_from_slice(&[0, 1, 0xcd]);
        }
        execute.extend_from_slice(&[0, 1, 0]);
        if version >= 5 {
            execute.extend_from_slice(&[0, 0, 0]);
        }
        request = Some(
            Message::decode(
                &DecodeContext {
                    version,
                    flags: 0,
                    opcode: 0x0a,
                    registry: &registry,
                    request: None,
                },
                &execute,
            )
            .expect("the fuzz EXECUTE decodes"),
        );
    }
    let context = DecodeContext {
        version,
        flags: *flags,
        opcode,
        registry: &registry,
        request: request.as_ref(),
    };
    let decoded = Message::decode(&context, body);
    let explained = Message::explain(&context, body);
    assert_eq!(decoded, explained.result, "explain and decode disagree");
    let mut last = 0;
    for line in &explained.lines {
        assert!(line.offset >= last, "explain lines go backwards: {line:?}");
        assert!(
            line.offset + line.len <= body.len(),
            "explain line past the body: {line:?}"
        );
        last = line.offset;
    }
    let mut text = Vec::new();
    explained
        .write(&mut text, body, 1000, 1)
        .expect("writing to memory");
    if let Ok(message) = decoded {
        let json = message.to_json();
        assert!(json["body"].is_object(), "{json}");
        let _ = message.gist();
        registry.learn(request.as_ref(), &message);
    }
}

/// Feeds a stream to the per-direction protocol decoder. The first byte steers: bit 0 the
/// direction, bit 1 wraps the rest into valid v5 segments (bit 2: LZ4, bits 3-7 the segment size,
/// one in three segments not self-contained) so the fuzzer reaches the envelope reassembly, bits
/// 4-7 the chunk size. Fed in chunks or whole, the decoder must yield the same events; with every
/// eighth chunk replaced by a gap it must not panic either. All under [`PROTOCOL_STREAM_BOUND`].
pub fn protocol_stream(data: &[u8]) {
    bounded(data, PROTOCOL_STREAM_BOUND, check_protocol_stream);
}

/// What `protocol_stream` may hold: a decoder keeps one frame as its bytes arrive (never the length
/// a header claims) plus the chunk fed, and the check keeps every event of its three runs, bodies
/// decompressed (at most [`LZ4_RATIO`] × their blocks, or segments').
pub const PROTOCOL_STREAM_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 16,
    constant: 256 << 10,
    decompressed_per_input_byte: 4 * LZ4_RATIO,
    retained_per_connection: None,
};

/// [`protocol_stream`]'s checks, without the memory bound.
fn check_protocol_stream(data: &[u8]) {
    use cqlwire_protocol::frame::Direction;
    use cqlwire_protocol::segment::{encode_segment, SegmentFormat, MAX_PAYLOAD_LEN};
    use cqlwire_protocol::stream::StreamDecoder;
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let direction = if control & 1 == 0 {
        Direction::Request
    } else {
        Direction::Response
    };
    let stream = if control & 2 != 0 {
        let format = if control & 4 != 0 {
            SegmentFormat::Lz4
        } else {
            SegmentFormat::Uncompressed
        };
        let size = (1 + usize::from(control >> 3) * 97).min(MAX_PAYLOAD_LEN);
        let mut out = Vec::new();
        for (i, chunk) in rest.chunks(size).enumerate() {
            encode_segment(chunk, i % 3 != 2, format, &mut out);
        }
        out
    } else {
        rest.to_vec()
    };
    let max_frame = 16 << 20;
    let mut whole = Vec::new();
    let mut decoder = StreamDecoder::new(direction, max_frame);
    decoder.feed(&stream, &mut whole);
    decoder.finish(&mut whole);
    let step = 1 + usize::from(control >> 4);
    let mut chunked = Vec::new();
    let mut decoder = StreamDecoder::new(direction, max_frame);
    for chunk in stream.chunks(step) {
        decoder.feed(chunk, &mut chunked);
    }
    decoder.finish(&mut chunked);
    assert_eq!(whole, chunked, "chunking changed what the decoder found");
    let mut gapped = Vec::new();
    let mut decoder = StreamDecoder::new(direction, max_frame);
    for (i, chunk) in stream.chunks(step).enumerate() {
        if i % 8 == 7 {
            decoder.gap(chunk.len() as u64, &mut gapped);
        } else {
            decoder.feed(chunk, &mut gapped);
        }
    }
    decoder.finish(&mut gapped);
}

/// `a` (a text redacted under one key) with its placeholders (`?kind:<tag>`, `?:<tag>`) and
/// password masks (`<password: N bytes>`) blanked with spaces, so what is left is what the
/// redaction kept. The same text redacted under another key, `b`, tells the tags (where they
/// differ) from kept text that only looks like one (a bind marker `:abcdef12`).
fn blank_placeholders(a: &str, b: &str) -> String {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    assert_eq!(x.len(), y.len(), "two keys, two shapes: {a:?} {b:?}");
    let mut out = x.to_vec();
    let mut i = 0;
    while i < x.len() {
        if x[i] != y[i] {
            // A tag: its `:` is at most 8 bytes before, its kind and `?` before that.
            let colon = (i.saturating_sub(8)..i).rev().find(|&j| x[j] == b':');
            let colon = colon.expect("a tag follows a colon");
            let mut start = colon;
            while start > 0 && x[start - 1].is_ascii_lowercase() {
                start -= 1;
            }
            assert_eq!(
                x[start.saturating_sub(1)],
                b'?',
                "a placeholder starts with ?: {a:?}"
            );
            let end = colon + 9;
            out[start - 1..end].fill(b' ');
            i = end;
        } else if x[i..].starts_with(b"<password: ") {
            let end = a[i..].find(" bytes>").map_or(i + 1, |e| i + e + 7);
            out[i..end].fill(b' ');
            i = end;
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `query_redaction`: the input (as lossy UTF-8) as a query text and as a server's text. Its
/// tokens cover it in order; redacted, lexed again without its placeholders, it holds no literal
/// and no comment; as a server's text redacted, no ASCII digit is left outside a placeholder.
pub fn query_redaction(data: &[u8]) {
    use cqlwire_inspect::fuzzing::{redact_query, redact_server_text};
    use cqlwire_inspect::fuzzing::{tokens, TokenKind};
    use cqlwire_inspect::KeyedHash;
    let text = String::from_utf8_lossy(data);
    let mut at = 0;
    for token in tokens(&text) {
        assert!(
            token.range.start == at && token.range.end > at,
            "{token:?} at {at}"
        );
        at = token.range.end;
    }
    assert_eq!(at, text.len());
    let key = KeyedHash::from_key(&[7; 32]).expect("32 bytes are a key");
    let other = KeyedHash::from_key(&[8; 32]).expect("32 bytes are a key");
    let redacted = redact_query(&text, Some(&key));
    let kept = blank_placeholders(&redacted, &redact_query(&text, Some(&other)));
    for token in tokens(&kept) {
        assert!(
            !token.kind.is_literal() && token.kind != TokenKind::Comment,
            "{:?} {:?} left in {redacted:?}",
            token.kind,
            &kept[token.range]
        );
    }
    let server = redact_server_text(&text, &key);
    let kept = blank_placeholders(&server, &redact_server_text(&text, &other));
    assert!(
        !kept.contains(|c: char| c.is_ascii_digit()),
        "a digit left in {server:?}"
    );
}

/// The key logs of the two CQL connections of `fixtures/tls/captures/` and of the TLS captures of
/// `fixtures/inspect/`, so that captures seeded from `fixtures/tls/pcaps/` and
/// `fixtures/inspect/tls*.pcap` decrypt.
const INSPECT_KEY_LOG: &str = concat!(
    include_str!("../../fixtures/tls/captures/tls12-aes128gcm-cql/keylog"),
    include_str!("../../fixtures/tls/captures/tls13-aes256gcm-cql/keylog"),
    include_str!("../../fixtures/inspect/tls12-chacha20-v5-none.keylog"),
    include_str!("../../fixtures/inspect/tls12-v4-lz4.keylog"),
    include_str!("../../fixtures/inspect/tls13-v5-lz4.keylog"),
    include_str!("../../fixtures/inspect/tls13-v5-none.keylog"),
);

/// `--max-frame` of the `inspect` target: larger than most frames of the seeds (so they decode),
/// small enough that one frame in flight is a small constant of [`INSPECT_BOUND`], and large
/// enough that an LZ4 body reaches nearly its full ratio (16 KiB from a 70-byte block).
pub const INSPECT_MAX_FRAME: usize = 16 << 10;

/// The reassembly limits of `inspect`'s bit 4: a hole of 256 bytes in one direction, 1 KiB in all,
/// 4 connections tracked at once, so their buffering, gaps and evictions show on small inputs.
pub const TIGHT_LIMITS: cqlwire_inspect::capture::Limits = cqlwire_inspect::capture::Limits {
    per_direction: 256,
    total: 1024,
    connections: 4,
};

/// What `inspect` may hold, for the promise of `docs/inspect.md` ("Memory and limits"): the open
/// connections' unfinished frames, the gist of their pending requests and their registries of
/// prepared statements, one frame held a few times while it is decoded, never the whole capture.
/// - per input byte, 32: the reassembler's segments and connections (about 3 KiB per CQL
///   connection of two packets, 120 bytes), a pending request's own bookkeeping (about 180 bytes
///   for a 9-byte frame), problems;
/// - constant: the 256 KiB read buffer of a capture and one frame of [`INSPECT_MAX_FRAME`] as it
///   arrives, its body, its decoding with explain lines gathered (masked and redacted forms hide
///   data in them: about 120 bytes per wire item, so up to 120 times the frame) and its JSON text;
/// - what is kept of decompressed bytes (query texts, names and types of prepared statements,
///   stored compactly, at most twice their wire bytes) and the frames one piece fed to a decoder
///   completes: `2 × LZ4_RATIO` per input byte, but never more than the caps of each open
///   connection (4 MiB of pending requests, 1 MiB of registry, and 1 MiB for their entries' own
///   bookkeeping and the frames of one piece).
pub const INSPECT_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 32,
    constant: (256 << 10) + 160 * INSPECT_MAX_FRAME,
    decompressed_per_input_byte: 2 * LZ4_RATIO,
    retained_per_connection: Some(
        cqlwire_inspect::PENDING_MAX_BYTES_PER_CONN
            + cqlwire_protocol::message::REGISTRY_MAX_BYTES
            + (1 << 20),
    ),
};

/// The inputs `inspect` gives the inspector.
enum InspectInput<'a> {
    /// One connection's raw directions.
    Raw { client: &'a [u8], server: &'a [u8] },
    /// A capture in one or more files (rotated), in order.
    Capture {
        files: Vec<&'a [u8]>,
        limits: cqlwire_inspect::capture::Limits,
    },
}

impl<'a> InspectInput<'a> {
    /// Reads `inspect`'s input after its control byte (see [`inspect`]).
    fn parse(control: u8, rest: &'a [u8]) -> Self {
        let length = |bytes: &[u8]| usize::from(u16::from_le_bytes([bytes[0], bytes[1]]));
        if control & 1 == 0 {
            let (split, streams) = match rest {
                [_, _, streams @ ..] => (length(rest), streams),
                _ => (0, rest),
            };
            let (client, server) = streams.split_at(split.min(streams.len()));
            return InspectInput::Raw { client, server };
        }
        let files = if control & 8 != 0 {
            super::capture::split_files(rest)
        } else {
            vec![rest]
        };
        let limits = if control & 16 != 0 {
            TIGHT_LIMITS
        } else {
            cqlwire_inspect::capture::Limits::default()
        };
        InspectInput::Capture { files, limits }
    }
}

/// The whole inspector on hostile input. The first byte steers:
/// - bit 0 clear: the rest is one connection's two raw directions, split at the position the next
///   two bytes give (little-endian);
/// - bit 0 set: the rest is a capture (pcap or pcapng); with bit 3, several files of one rotated
///   capture, each but the last behind its 2-byte little-endian length, given in order as
///   `inspect A B …` gives them (a file that is no capture ends the run there); bit 4: the
///   [`TIGHT_LIMITS`] of reassembly, else the defaults;
/// - bit 1: port 9042 is CQL (else connections are recognised by their first frame);
/// - bit 2: TLS connections are decrypted with [`INSPECT_KEY_LOG`].
///
/// The inspector runs twice, with `--max-frame` [`INSPECT_MAX_FRAME`]: without explain lines,
/// counting every record in the statistics; then with them, under [`INSPECT_BOUND`], rendering
/// every message in JSON and gist, plain, masked and redacted (`--redact`), and explained. Both
/// runs must give the same records.
pub fn inspect(data: &[u8]) {
    use cqlwire_inspect::Stats;
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let input = InspectInput::parse(control, rest);
    let key_log = (control & 4 != 0).then(|| {
        let log = cqlwire_inspect::KeyLog::from_reader(INSPECT_KEY_LOG.as_bytes());
        std::sync::Arc::new(log.expect("reading memory"))
    });
    let options = cqlwire_inspect::Options {
        ports: if control & 2 == 0 { vec![] } else { vec![9042] },
        max_frame: INSPECT_MAX_FRAME,
        explain: false,
        tls_key_log: key_log,
    };
    let mut stats = Stats::default();
    let mut plain = Vec::new();
    run_inspector(&input, options.clone(), &mut |record| {
        stats.add(&record);
        plain.push(record_hash(&record));
    });
    stats.finish();
    let mut seen = 0;
    let explaining = cqlwire_inspect::Options {
        explain: true,
        ..options
    };
    bounded(data, INSPECT_BOUND, |_| {
        run_inspector(&input, explaining, &mut |record| {
            render(&record);
            unmeasured(|| {
                assert_eq!(
                    plain.get(seen),
                    Some(&record_hash(&record)),
                    "explain changed what was decoded (record {seen}: {record:?})"
                );
            });
            seen += 1;
        });
    });
    assert_eq!(seen, plain.len(), "explain changed the number of records");
}

/// Runs an inspector with `options` over `input`, telling [`bounded`] how many connections are
/// open at once.
fn run_inspector(
    input: &InspectInput<'_>,
    options: cqlwire_inspect::Options,
    sink: &mut dyn FnMut(cqlwire_inspect::Record),
) {
    use cqlwire_inspect::capture::{Capture, Event};
    use cqlwire_inspect::Inspector;
    let mut inspector = Inspector::new(options);
    match input {
        InspectInput::Raw { client, server } => {
            note_connections(1);
            let (mut client, mut server) = (*client, *server);
            inspector
                .raw("fuzz", Some(&mut client), Some(&mut server), sink)
                .expect("reading memory");
        }
        InspectInput::Capture { files, limits } => {
            let Ok(mut capture) = Capture::with_limits(files[0], *limits) else {
                return;
            };
            let mut open = 0;
            let mut on_event = |event: Event<'_>| {
                match event {
                    Event::Opened { .. } => {
                        open += 1;
                        note_connections(open);
                    }
                    Event::Closed { .. } => open -= 1,
                    _ => {}
                }
                inspector.event(event, sink);
            };
            super::capture::read_files(&mut capture, files, &mut on_event);
            capture.finish(&mut on_event);
            inspector.finish(sink);
        }
    }
}

/// A hash of what a record says, to compare two runs: its fields, a message's body bytes hashed
/// as bytes (their `Debug` text, a list of numbers, would take most of the check's time).
fn record_hash(record: &cqlwire_inspect::Record) -> u64 {
    use cqlwire_inspect::Record;
    use cqlwire_protocol::message::Message;
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    match record {
        Record::Message(m) => {
            (m.offset, format!("{:?}", m.header), &m.body[..]).hash(&mut hasher);
            match &m.message {
                Ok(message) => {
                    let Message {
                        version,
                        flags,
                        opcode,
                        tracing_id,
                        warnings,
                        custom_payload,
                        body,
                        trailing,
                        bytes,
                    } = message;
                    let fields = (version, flags, opcode, tracing_id, warnings, custom_payload);
                    format!("{fields:?} {body:?} {trailing}").hash(&mut hasher);
                    bytes[..].hash(&mut hasher);
                }
                Err(e) => format!("{e:?}").hash(&mut hasher),
            }
        }
        Record::Problem(p) => format!("{} {}", p.offset, p.message).hash(&mut hasher),
        Record::Tls(t) => format!("{} {} {}", t.conn, t.summary, t.decrypted).hash(&mut hasher),
    }
    hasher.finish()
}

/// Renders a message record as `inspect` prints it: JSON fields and gist in the plain, masked and
/// redacted forms, and its explain lines. The JSON must parse, and `to_json` must not panic (both
/// checks are not what the command does, so they are left out of the memory bound).
fn render(record: &cqlwire_inspect::Record) {
    use cqlwire_codec::value::json::JsonWriter;
    use cqlwire_inspect::KeyedHash;
    use cqlwire_inspect::Record;
    use cqlwire_inspect::{RenderMessage, ValueForm};
    let Record::Message(m) = record else {
        return;
    };
    let Ok(message) = &m.message else {
        return;
    };
    unmeasured(|| {
        let _ = message.to_json();
    });
    let key = KeyedHash::from_key(&[7; 32]).expect("32 bytes are a key");
    for form in [
        ValueForm::Plain,
        ValueForm::Masked,
        ValueForm::Redacted(&key),
    ] {
        let mut shown = JsonWriter::new();
        shown.begin_object();
        message.write_json_fields(&mut shown, form);
        shown.end_object();
        unmeasured(|| {
            serde_json::from_slice::<serde_json::Value>(&shown.buf).expect("the JSON is valid")
        });
        let _ = message.gist_in(form);
        let _ = m.explain_each(form, &mut |_| {});
    }
}

/// The `capture` target ([`super::capture::capture`]) under [`CAPTURE_BOUND`].
pub fn capture(data: &[u8]) {
    bounded(data, CAPTURE_BOUND, super::capture::capture);
}

/// What `capture` may hold: the 256 KiB read buffer (grown only for bytes that arrived, up to the
/// 16 MiB record limit), the segments buffered ahead of holes (their bytes and bookkeeping) and
/// the tracked connections (about 300 bytes each, each of at least one 56-byte packet).
pub const CAPTURE_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 16,
    constant: 512 << 10,
    decompressed_per_input_byte: 0,
    retained_per_connection: None,
};

/// One input element as the kernels read it, widened without loss (a half float widens exactly).
#[derive(Debug, Clone, Copy)]
enum KernelInput {
    Int(i64),
    Single(f32),
    Double(f64),
}

/// Whether `x` and `y` are the same float (NaN equals NaN; -0 equals 0).
fn same_float(x: f64, y: f64) -> bool {
    x == y || (x.is_nan() && y.is_nan())
}

/// Whether `text`, which reads back as the float that Rust's `{}` prints as `display` (shortest
/// positional digits, a tie between two shortest going up), is also shortest and positional: the
/// same text, or as long and ending in the even digit of a tie.
fn shortest_positional(text: &str, display: &str) -> bool {
    text == display
        || (text.len() == display.len()
            && text
                .bytes()
                .all(|c| c.is_ascii_digit() || c == b'.' || c == b'-')
            && text.ends_with(['0', '2', '4', '6', '8']))
}

/// Whether a decoded vector element holds the number that was converted: integers exactly, a float
/// as the cast rounds it, text and decimal parsing back to the same number, varint the same digits.
fn kernel_element_matches(input: KernelInput, decoded: &Value) -> bool {
    use KernelInput::{Double, Int, Single};
    let wide = match input {
        Int(i) => i as f64,
        Single(x) => f64::from(x),
        Double(x) => x,
    };
    let integer = |j: i64| match input {
        Int(i) => i == j,
        _ => wide == j as f64 && wide.fract() == 0.0,
    };
    match decoded {
        Value::Boolean(b) => integer(i64::from(*b)),
        Value::TinyInt(j) => integer(i64::from(*j)),
        Value::SmallInt(j) => integer(i64::from(*j)),
        Value::Int(j) => integer(i64::from(*j)),
        Value::BigInt(j) | Value::Timestamp(j) | Value::Time(j) => integer(*j),
        Value::Date(j) => integer(i64::from(*j)),
        Value::Float(v) => match input {
            Double(x) => same_float(f64::from(*v), f64::from(x as f32)),
            _ => same_float(f64::from(*v), wide),
        },
        Value::Double(v) => same_float(*v, wide),
        Value::Varint(big) => match input {
            Int(i) => big.to_string() == i.to_string(),
            // `+ 0.0` turns -0 into 0, which a varint cannot hold.
            _ => wide.fract() == 0.0 && big.to_string() == format!("{:.0}", wide + 0.0),
        },
        Value::Decimal { unscaled, scale } => {
            let text = format!("{unscaled}e{}", -i64::from(*scale));
            match input {
                Int(i) => *scale == 0 && unscaled.to_string() == i.to_string(),
                Single(x) => text.parse::<f32>().is_ok_and(|y| y == x),
                Double(x) => text.parse::<f64>().is_ok_and(|y| y == x),
            }
        }
        Value::Text(text) => match input {
            Int(i) => text.parse::<i64>() == Ok(i),
            Single(x) => {
                text.parse::<f32>()
                    .is_ok_and(|y| same_float(f64::from(y), f64::from(x)))
                    && shortest_positional(text, &x.to_string())
            }
            Double(x) => {
                text.parse::<f64>().is_ok_and(|y| same_float(y, x))
                    && shortest_positional(text, &x.to_string())
            }
        },
        _ => false,
    }
}

/// The vector kernels of `convert` and `serialize_vectors`. Byte 0: the input element type (low 3
/// bits: f16, f32, f64, i8, u8, i16, i32, i64) and the target element type (the rest, modulo the 14
/// number-like types); byte 1: the dimension (1–40); the rest: elements in native byte order (a
/// partial row is dropped). The rows encoded together equal each element encoded alone, in order;
/// when they fail, the error names the first element that fails alone, with its message; an accepted
/// row decodes as the vector type to elements equal to the input numbers (integers exactly, floats
/// as the cast rounds them, text and decimal parsing back to the same number, text as the shortest
/// positional digits) and re-encodes to the same bytes. Fixed-size rows encoded into one
/// destination each (`encode_fixed_values`, as into Python objects) give the same bytes or error.
pub fn vector_kernel(data: &[u8]) {
    use cqlwire_vector::kernel::{Rows, VectorEncoder, VectorError};
    use half::f16;
    let [control, dimension, rest @ ..] = data else {
        return;
    };
    let targets = cqlwire_vector::kernel::NUMBER_ELEMENTS;
    let native = targets[usize::from(control >> 3) % targets.len()];
    let dimension = 1 + usize::from(*dimension) % 40;
    fn elements<const N: usize, T>(bytes: &[u8], read: fn([u8; N]) -> T) -> Vec<T> {
        bytes
            .chunks_exact(N)
            .map(|c| read(c.try_into().unwrap_or([0; N])))
            .collect()
    }
    let (f16s, f32s, f64s, i8s, u8s, i16s, i32s, i64s);
    let (rows, inputs): (Rows, Vec<KernelInput>) = match control & 7 {
        0 => {
            f16s = elements(rest, f16::from_ne_bytes);
            let inputs = f16s.iter().map(|&x| KernelInput::Single(f32::from(x)));
            (Rows::F16(&f16s), inputs.collect())
        }
        1 => {
            f32s = elements(rest, f32::from_ne_bytes);
            (
                Rows::F32(&f32s),
                f32s.iter().map(|&x| KernelInput::Single(x)).collect(),
            )
        }
        2 => {
            f64s = elements(rest, f64::from_ne_bytes);
            (
                Rows::F64(&f64s),
                f64s.iter().map(|&x| KernelInput::Double(x)).collect(),
            )
        }
        3 => {
            i8s = elements(rest, i8::from_ne_bytes);
            let inputs = i8s.iter().map(|&x| KernelInput::Int(x.into()));
            (Rows::I8(&i8s), inputs.collect())
        }
        4 => {
            u8s = rest.to_vec();
            let inputs = u8s.iter().map(|&x| KernelInput::Int(x.into()));
            (Rows::U8(&u8s), inputs.collect())
        }
        5 => {
            i16s = elements(rest, i16::from_ne_bytes);
            let inputs = i16s.iter().map(|&x| KernelInput::Int(x.into()));
            (Rows::I16(&i16s), inputs.collect())
        }
        6 => {
            i32s = elements(rest, i32::from_ne_bytes);
            let inputs = i32s.iter().map(|&x| KernelInput::Int(x.into()));
            (Rows::I32(&i32s), inputs.collect())
        }
        _ => {
            i64s = elements(rest, i64::from_ne_bytes);
            (
                Rows::I64(&i64s),
                i64s.iter().map(|&x| KernelInput::Int(x)).collect(),
            )
        }
    };
    let whole_len = rows.len() / dimension * dimension;
    let rows = rows.slice(0, whole_len);
    let element = CqlType::Native(native);
    let vector = CqlType::Vector(Box::new(element.clone()), dimension);
    let encoder = VectorEncoder::new(&vector).expect("a number-like vector type");
    let single = VectorEncoder::new(&CqlType::Vector(Box::new(element), 1)).expect("dimension 1");
    let mut together = Vec::new();
    let result = encoder.encode_rows(rows, 7, &mut together);
    // Fixed-size rows into one destination each (as into Python objects): the same bytes, or the
    // same error.
    if let Some(size) = encoder.value_size() {
        let mut separate = vec![0u8; size * (whole_len / dimension)];
        let mut values: Vec<&mut [u8]> = separate.chunks_exact_mut(size).collect();
        match (&result, encoder.encode_fixed_values(rows, 7, &mut values)) {
            (Ok(()), Ok(())) => assert_eq!(separate, together, "rows into separate values differ"),
            (Err(error), Err(per_row)) => {
                assert_eq!(*error, per_row, "separate values fail differently")
            }
            (together, per_row) => panic!("together {together:?}, separate values {per_row:?}"),
        }
    }
    // Each element alone, until the first that fails.
    let mut alone = Vec::new();
    let mut first_failure = None;
    for index in 0..whole_len {
        let mut one = Vec::new();
        match single.encode_rows(rows.slice(index, index + 1), 0, &mut one) {
            Ok(()) => alone.extend_from_slice(&one),
            Err(error) => {
                first_failure = Some((index, error));
                break;
            }
        }
    }
    match (result, first_failure) {
        (Ok(()), None) => assert_eq!(together, alone, "rows encoded together differ from alone"),
        (
            Err(VectorError::Cast {
                value,
                problem,
                row,
                element,
            }),
            Some((index, error)),
        ) => {
            assert_eq!(
                (row - 7) as usize * dimension + element,
                index,
                "error names another element"
            );
            let VectorError::Cast {
                value: v,
                problem: p,
                ..
            } = error
            else {
                panic!("element alone failed differently: {error}");
            };
            assert_eq!((value, problem), (v, p), "error message differs alone");
            return;
        }
        (result, failure) => panic!("together {result:?}, alone {failure:?}"),
    }
    if let Some(size) = encoder.value_size() {
        assert_eq!(
            together.len(),
            size * whole_len / dimension,
            "fixed-size output length"
        );
    }
    let mut offset = 0;
    for row in inputs[..whole_len].chunks(dimension) {
        let bytes = &together[offset..];
        let (value, used) = value::decode_prefix(&vector, bytes).expect("a row decodes");
        let Value::List(decoded) = &value else {
            panic!("a vector decodes to a list, not {value:?}");
        };
        assert_eq!(decoded.len(), dimension);
        for (input, element) in row.iter().zip(decoded) {
            assert!(
                kernel_element_matches(*input, element),
                "{input:?} became {element:?}"
            );
        }
        assert_eq!(
            value::encode(&vector, &value).expect("re-encodes"),
            bytes[..used],
            "re-encoding"
        );
        offset += used;
    }
    assert_eq!(offset, together.len(), "rows cover the output");
}

// ---------------------------------------------------------------------------------------------------
// arrow_values
// ---------------------------------------------------------------------------------------------------

/// Decodes values into the Arrow array `unload` writes: the first byte picks a type of
/// `value_decoder`'s list, the rest is a run of `[bytes]` items (a negative length is null; a
/// length past the end takes the rest). Refusing is fine; an accepted run must give a valid Arrow
/// array with one slot per value, null exactly where the value is.
pub fn arrow_values(data: &[u8]) {
    static TYPES: OnceLock<Vec<CqlType>> = OnceLock::new();
    let Some((&selector, mut rest)) = data.split_first() else {
        return;
    };
    let ty = pick(parsed_types(&TYPES, &DECODER_TYPES), selector);
    let mut values: Vec<Option<&[u8]>> = Vec::new();
    while let Some((head, tail)) = rest.split_first_chunk::<4>() {
        let length = i32::from_be_bytes(*head);
        if length < 0 {
            values.push(None);
            rest = tail;
            continue;
        }
        let length = (length as usize).min(tail.len());
        values.push(Some(&tail[..length]));
        rest = &tail[length..];
    }
    let Ok(array) = cqlwire_vector::arrays::arrow_array(ty, &values) else {
        return;
    };
    assert_eq!(array.len(), values.len(), "one slot per value ({ty})");
    array
        .to_data()
        .validate_full()
        .unwrap_or_else(|e| panic!("an invalid Arrow array ({ty}): {e}"));
    for (index, value) in values.iter().enumerate() {
        if value.is_none() {
            assert!(
                array.is_null(index),
                "a null value not null in Arrow ({ty})"
            );
        }
    }
}
