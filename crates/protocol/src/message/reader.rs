//! The protocol's notations (`[short]`, `[string]`, `[bytes]`, `[value]`, `[option]`, `[inet]`, …)
//! read from a body through the shared [`Cursor`], each read optionally recorded as an explain line.

use super::mask::{Captured, Mask, OpenSpan};
use super::types::{Cell, ColumnType, StringMultimap};
use super::Opcode;
use crate::cursor::{Cursor, DecodeError};
use crate::types::{parse_type, CqlType, NativeType, UdtRegistry, UdtType, MAX_TYPE_DEPTH};
use crate::value::print::{write_pieces, PrintError, TextForm};
use crate::value::ExplainLine;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// One step of a path inside a message body: `row 2`, `column 3`, `statement 0`, `value 1`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// A named part (`metadata`, `query parameters`).
    Part(&'static str),
    /// The item `index` of a list of `what`.
    Item(&'static str, usize),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Part(name) => f.write_str(name),
            Step::Item(what, index) => write!(f, "{what} {index}"),
        }
    }
}

/// A `[value]`: bytes, null (-1) or unset (-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawValue<'b> {
    /// A length of -1.
    Null,
    /// A length of -2 (v4+: leave the column as it is).
    Unset,
    /// The bytes of a value, starting at `offset` in the body.
    Bytes(&'b [u8], usize),
}

type Result<T> = std::result::Result<T, DecodeError>;

/// The body reader: a cursor, and the explain lines when they are wanted.
pub(crate) struct Reader<'b> {
    /// The position, path and bounds checks.
    pub cursor: Cursor<'b, Step>,
    /// Where the explain lines go, when tracing.
    pub lines: Option<&'b mut dyn FnMut(ExplainLine)>,
    /// Extra indentation of the next lines (nested lists).
    pub indent: usize,
    /// The mask whose hidden captured data the lines leave out, and the message's opcode.
    pub hide: Option<(&'b dyn Mask, Opcode)>,
    /// The last part of the body holding captured data that was read, while hiding.
    open: Option<OpenSpan>,
}

impl<'b> Reader<'b> {
    /// A reader at the start of `body`, handing each explain line to `lines` when given.
    pub fn new(body: &'b [u8], lines: Option<&'b mut dyn FnMut(ExplainLine)>) -> Self {
        Reader {
            cursor: Cursor::new(body),
            lines,
            indent: 0,
            hide: None,
            open: None,
        }
    }

    /// Marks the item from `start` (a `prefix`-byte length, then its bytes) to the position as
    /// captured data of `kind`, when hiding: the lines inside it are shown as the form shows it.
    fn mark(&mut self, start: usize, prefix: usize, what: &str, kind: Captured<'_>) {
        if let Some((mask, opcode)) = self.hide {
            let range = start..self.cursor.pos();
            let body = self.cursor.bytes();
            self.open = Some(OpenSpan::open(
                mask, range, prefix, what, kind, body, opcode,
            ));
        }
    }

    /// Hands `line` on, as the open span shows it.
    fn hand_on(&mut self, line: ExplainLine) {
        let line = match &self.open {
            Some(span) => span.show(line),
            None => Some(line),
        };
        if let (Some(lines), Some(line)) = (self.lines.as_mut(), line) {
            lines(line);
        }
    }

    /// Whether explain lines are recorded.
    pub fn tracing(&self) -> bool {
        self.lines.is_some()
    }

    /// Records the item from `start` to the position; `meaning` is only called when tracing.
    pub fn line(&mut self, start: usize, meaning: impl FnOnce() -> String) {
        let end = self.cursor.pos();
        self.line_at(start, end.saturating_sub(start), meaning);
    }

    /// Records an item of `len` bytes at `start`.
    pub fn line_at(&mut self, start: usize, len: usize, meaning: impl FnOnce() -> String) {
        if self.lines.is_some() {
            let line = ExplainLine {
                offset: start,
                len,
                depth: self.cursor.depth() + self.indent,
                path: self.cursor.path(),
                meaning: meaning(),
            };
            self.hand_on(line);
        }
    }

    /// Runs `read` inside the path step `step`.
    pub fn within<T>(
        &mut self,
        step: Step,
        read: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.cursor.push(step);
        let result = read(self);
        self.cursor.pop();
        result
    }

    /// An error at `offset` with the current path.
    pub fn error(&self, offset: usize, message: impl Into<String>) -> DecodeError {
        self.cursor.error(offset, message)
    }

    /// A `[byte]`, explained as `what <n>`.
    pub fn byte(&mut self, what: &str) -> Result<u8> {
        let start = self.cursor.pos();
        let value = self.cursor.u8(what)?;
        self.line(start, || format!("{what} {value}"));
        Ok(value)
    }

    /// A `[short]`, explained as `what <n>`.
    pub fn short(&mut self, what: &str) -> Result<u16> {
        let start = self.cursor.pos();
        let value = self.cursor.u16(what)?;
        self.line(start, || format!("{what} {value}"));
        Ok(value)
    }

    /// An `[int]`, explained as `what <n>`.
    pub fn int(&mut self, what: &str) -> Result<i32> {
        let start = self.cursor.pos();
        let value = self.cursor.i32(what)?;
        self.line(start, || format!("{what} {value}"));
        Ok(value)
    }

    /// A `[long]`, explained as `what <n>`.
    pub fn long(&mut self, what: &str) -> Result<i64> {
        let start = self.cursor.pos();
        let value = self.cursor.i64(what)?;
        self.line(start, || format!("{what} {value}"));
        Ok(value)
    }

    /// A count read by `read_count` that must leave room for `count` items of `min_item` bytes.
    fn checked_count(
        &self,
        start: usize,
        count: usize,
        min_item: u64,
        what: &str,
    ) -> Result<usize> {
        let pos = self.cursor.pos();
        let end = self.cursor.bytes().len();
        self.cursor
            .check_fits(start, pos, end, count, min_item, what)?;
        Ok(count)
    }

    /// A `[short]` count of items of at least `min_item` bytes each.
    pub fn short_count(&mut self, what: &str, min_item: u64) -> Result<usize> {
        let start = self.cursor.pos();
        let count = self.cursor.u16(what)?;
        let count = self.checked_count(start, count.into(), min_item, what)?;
        self.line(start, || format!("{what} {count}"));
        Ok(count)
    }

    /// An `[int]` count of items of at least `min_item` bytes each (negative is an error).
    pub fn int_count(&mut self, what: &str, min_item: u64) -> Result<usize> {
        let start = self.cursor.pos();
        let count = self.cursor.i32(what)?;
        let Ok(count) = usize::try_from(count) else {
            return Err(self.error(start, format!("invalid {what} {count}")));
        };
        let count = self.checked_count(start, count, min_item, what)?;
        self.line(start, || format!("{what} {count}"));
        Ok(count)
    }

    /// UTF-8 text of `len` bytes.
    fn text(&mut self, len: usize, what: &str) -> Result<String> {
        let start = self.cursor.pos();
        let bytes = self.cursor.take(len, what)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|e| self.error(start + e.valid_up_to(), format!("invalid UTF-8 in {what}")))
    }

    /// A `[string]`: a `[short]` length and UTF-8 bytes; explained as `what "text"`.
    pub fn string(&mut self, what: &str) -> Result<String> {
        let start = self.cursor.pos();
        let len = self.cursor.u16(what)?;
        let text = self.text(len.into(), what)?;
        self.line(start, || format!("{what} {}", quoted(&text)));
        Ok(text)
    }

    /// A `[long string]`: an `[int]` length and UTF-8 bytes.
    pub fn long_string(&mut self, what: &str) -> Result<String> {
        let start = self.cursor.pos();
        let len = self.cursor.i32(what)?;
        let Ok(len) = usize::try_from(len) else {
            return Err(self.error(start, format!("invalid {what} length {len}")));
        };
        let text = self.text(len, what)?;
        self.mark(start, 4, what, Captured::Query);
        self.line(start, || format!("{what} {}", quoted(&text)));
        Ok(text)
    }

    /// Records the query text of the statement an EXECUTE runs (from its PREPARE: not in the
    /// body) as a line of no bytes.
    pub fn prepared_query(&mut self, query: &str) {
        let at = self.cursor.pos();
        self.mark(at, 0, "prepared query", Captured::PreparedQuery(query));
        self.line_at(at, 0, || format!("prepared query {query:?}"));
    }

    /// A `[string]` written by the server about the request (an error message, a warning), which
    /// may quote its values.
    pub fn server_text(&mut self, what: &str) -> Result<String> {
        let start = self.cursor.pos();
        let len = self.cursor.u16(what)?;
        let text = self.text(len.into(), what)?;
        self.mark(start, 2, what, Captured::ServerText);
        self.line(start, || format!("{what} {}", quoted(&text)));
        Ok(text)
    }

    /// `[bytes]`: an `[int]` length (negative: null) and the bytes.
    pub fn bytes(&mut self, what: &str) -> Result<Option<&'b [u8]>> {
        let start = self.cursor.pos();
        let len = self.cursor.i32(what)?;
        let Ok(len) = usize::try_from(len) else {
            self.line(start, || format!("{what} null"));
            return Ok(None);
        };
        let bytes = self.cursor.take(len, what)?;
        self.mark(start, 4, what, Captured::Bytes);
        self.line(start, || format!("{what} {}", hex_text(bytes)));
        Ok(Some(bytes))
    }

    /// `[short bytes]`: a `[short]` length and the bytes.
    pub fn short_bytes(&mut self, what: &str) -> Result<&'b [u8]> {
        let start = self.cursor.pos();
        let len = self.cursor.u16(what)?;
        let bytes = self.cursor.take(len.into(), what)?;
        self.line(start, || format!("{what} {}", hex_text(bytes)));
        Ok(bytes)
    }

    /// A `[value]`: its length line is recorded by the caller, which knows what the bytes mean.
    pub fn value(&mut self, what: &str) -> Result<(RawValue<'b>, usize)> {
        let start = self.cursor.pos();
        let len = self.cursor.i32(what)?;
        let raw = match len {
            -1 => RawValue::Null,
            -2 => RawValue::Unset,
            _ => {
                let Ok(len) = usize::try_from(len) else {
                    return Err(self.error(start, format!("invalid {what} length {len}")));
                };
                let offset = self.cursor.pos();
                RawValue::Bytes(self.cursor.take(len, what)?, offset)
            }
        };
        Ok((raw, start))
    }

    /// A `[value]` of type `ty` when it is known (`what` names it: `column id`, `value 2`), checked
    /// to decode and kept as its place in the body; when tracing, the value's own explain lines
    /// follow its length line, one level deeper.
    pub fn cell(&mut self, ty: Option<&ColumnType>, what: &str) -> Result<Cell> {
        let (raw, start) = self.value(what)?;
        let (bytes, offset) = match raw {
            RawValue::Null => {
                self.line(start, || format!("{what}: null"));
                return Ok(Cell::Null);
            }
            RawValue::Unset => {
                self.line(start, || format!("{what}: unset"));
                return Ok(Cell::Unset);
            }
            RawValue::Bytes(bytes, offset) => (bytes, offset),
        };
        self.mark(start, 4, what, Captured::Value(ty));
        let range = offset..offset + bytes.len();
        let Some(ty) = ty.and_then(ColumnType::cql) else {
            self.line(start, || {
                format!("{what}: {} (type unknown)", hex_text(bytes))
            });
            return Ok(Cell::Bytes(range));
        };
        if self.open.as_ref().is_some_and(OpenSpan::is_hidden) {
            // Its one line says what it was; the lines inside it would all go.
            self.line_at(start, 4, String::new);
            return Ok(Cell::Value(range));
        }
        if !self.tracing() {
            // A value that does not decode is still a cell of its row (its bytes and why are
            // shown where it is written), so the other values of the message are not lost.
            return Ok(Cell::Value(range));
        }
        let path = self.cursor.path();
        let literal = literal(ty, bytes);
        self.line_at(start, 4, || {
            let plural = if bytes.len() == 1 { "" } else { "s" };
            format!("{what} ({ty}), {} byte{plural}: {literal}", bytes.len())
        });
        let depth = self.cursor.depth() + self.indent + 1;
        // The value's lines are handed on as they are read, never gathered.
        let mut forward = |line: ExplainLine| {
            if self.lines.is_some() {
                self.hand_on(ExplainLine {
                    offset: line.offset + offset,
                    depth: line.depth + depth,
                    path: match (path.is_empty(), line.path.is_empty()) {
                        (_, true) => path.clone(),
                        (true, false) => line.path,
                        (false, false) => format!("{path} / {}", line.path),
                    },
                    ..line
                });
            }
        };
        if let Err(e) = crate::value::explain_each(ty, bytes, false, &mut forward) {
            // The value's own lines stop at its fault; the message goes on after it.
            let fault = e.within(offset, &path);
            self.line_at(start, 0, || format!("{what}: invalid value: {fault}"));
        }
        Ok(Cell::Value(range))
    }

    /// A `[uuid]`.
    pub fn uuid(&mut self, what: &str) -> Result<uuid::Uuid> {
        let start = self.cursor.pos();
        let id = uuid::Uuid::from_bytes(self.cursor.array(what)?);
        self.line(start, || format!("{what} {id}"));
        Ok(id)
    }

    /// A `[string list]`.
    pub fn string_list(&mut self, what: &'static str) -> Result<Vec<String>> {
        self.list_of(what, |r| r.string("string"))
    }

    /// A `[string list]` of [`Reader::server_text`]s (warnings).
    pub fn server_text_list(&mut self, what: &'static str) -> Result<Vec<String>> {
        self.list_of(what, |r| r.server_text("string"))
    }

    /// A `[short]` count of strings, each read by `item`.
    fn list_of(
        &mut self,
        what: &'static str,
        item: impl Fn(&mut Self) -> Result<String>,
    ) -> Result<Vec<String>> {
        let count = self.short_count(what, 2)?;
        let mut list = Vec::with_capacity(count);
        for i in 0..count {
            list.push(self.within(Step::Item(what, i), &item)?);
        }
        Ok(list)
    }

    /// A `[string map]`.
    pub fn string_map(&mut self, what: &'static str) -> Result<Vec<(String, String)>> {
        let count = self.short_count(what, 4)?;
        let mut map = Vec::with_capacity(count);
        for i in 0..count {
            map.push(self.within(Step::Item(what, i), |r| {
                Ok((r.string("key")?, r.string("value")?))
            })?);
        }
        Ok(map)
    }

    /// A `[string multimap]`.
    pub fn string_multimap(&mut self, what: &'static str) -> Result<StringMultimap> {
        let count = self.short_count(what, 4)?;
        let start = self.cursor.pos();
        for i in 0..count {
            self.within(Step::Item(what, i), |r| {
                r.string("key")?;
                r.string_list("values")
            })?;
        }
        Ok(StringMultimap::new(count, start..self.cursor.pos()))
    }

    /// A `[bytes map]`.
    pub fn bytes_map(&mut self, what: &'static str) -> Result<Vec<(String, Option<Vec<u8>>)>> {
        let count = self.short_count(what, 6)?;
        let mut map = Vec::with_capacity(count);
        for i in 0..count {
            map.push(self.within(Step::Item(what, i), |r| {
                Ok((r.string("key")?, r.bytes("value")?.map(<[u8]>::to_vec)))
            })?);
        }
        Ok(map)
    }

    /// An IP address of `[byte] n` then n bytes (4 or 16).
    fn address(&mut self, what: &str) -> Result<IpAddr> {
        let start = self.cursor.pos();
        match self.cursor.u8(what)? {
            4 => Ok(IpAddr::V4(Ipv4Addr::from(self.cursor.array::<4>(what)?))),
            16 => Ok(IpAddr::V6(Ipv6Addr::from(self.cursor.array::<16>(what)?))),
            n => Err(self.error(start, format!("{what} size must be 4 or 16, not {n}"))),
        }
    }

    /// An `[inetaddr]`.
    pub fn inetaddr(&mut self, what: &str) -> Result<IpAddr> {
        let start = self.cursor.pos();
        let ip = self.address(what)?;
        self.line(start, || format!("{what} {ip}"));
        Ok(ip)
    }

    /// An `[inet]`: an address and an `[int]` port.
    pub fn inet(&mut self, what: &str) -> Result<SocketAddr> {
        let start = self.cursor.pos();
        let ip = self.address(what)?;
        let port_at = self.cursor.pos();
        let port = self.cursor.i32("port")?;
        let port = u16::try_from(port)
            .map_err(|_| self.error(port_at, format!("port {port} is out of range")))?;
        let address = SocketAddr::new(ip, port);
        self.line(start, || format!("{what} {address}"));
        Ok(address)
    }

    /// A `[consistency]`, explained with its name.
    pub fn consistency(&mut self, what: &str) -> Result<u16> {
        let start = self.cursor.pos();
        let level = self.cursor.u16(what)?;
        self.line(start, || format!("{what} {}", consistency_name(level)));
        Ok(level)
    }

    /// A type `[option]`: a native type, a collection, a UDT, a tuple, or a custom Java class name
    /// read through the type grammar (an unknown class is kept as its name).
    pub fn option(&mut self, what: &str) -> Result<ColumnType> {
        let start = self.cursor.pos();
        let ty = self.option_at_depth(1)?;
        self.line(start, || format!("{what} {ty}"));
        Ok(ty)
    }

    /// A type option nested `depth` levels deep.
    fn option_at_depth(&mut self, depth: usize) -> Result<ColumnType> {
        let start = self.cursor.pos();
        if depth > MAX_TYPE_DEPTH {
            return Err(self.error(
                start,
                format!("type nesting deeper than {MAX_TYPE_DEPTH} levels"),
            ));
        }
        let id = self.cursor.u16("type option id")?;
        let native = |n| Ok(ColumnType::Cql(CqlType::Native(n)));
        use NativeType as N;
        match id {
            0x0000 => {
                let len = self.cursor.u16("custom type")?;
                let start = self.cursor.pos();
                let class = self.cursor.take(len.into(), "custom type")?;
                match std::str::from_utf8(class) {
                    Ok(class) => Ok(custom_type(class)),
                    Err(e) => {
                        Err(self.error(start + e.valid_up_to(), "invalid UTF-8 in custom type"))
                    }
                }
            }
            0x0001 => native(N::Ascii),
            0x0002 => native(N::BigInt),
            0x0003 => native(N::Blob),
            0x0004 => native(N::Boolean),
            0x0005 => native(N::Counter),
            0x0006 => native(N::Decimal),
            0x0007 => native(N::Double),
            0x0008 => native(N::Float),
            0x0009 => native(N::Int),
            0x000B => native(N::Timestamp),
            0x000C => native(N::Uuid),
            0x000D => native(N::Text),
            0x000E => native(N::Varint),
            0x000F => native(N::TimeUuid),
            0x0010 => native(N::Inet),
            0x0011 => native(N::Date),
            0x0012 => native(N::Time),
            0x0013 => native(N::SmallInt),
            0x0014 => native(N::TinyInt),
            0x0015 => native(N::Duration),
            0x0020 | 0x0022 => {
                let element = self.option_at_depth(depth + 1)?;
                Ok(element.map(|e| {
                    let e = Box::new(e);
                    if id == 0x0020 {
                        CqlType::List(e)
                    } else {
                        CqlType::Set(e)
                    }
                }))
            }
            0x0021 => {
                let key = self.option_at_depth(depth + 1)?;
                let value = self.option_at_depth(depth + 1)?;
                Ok(match (key, value) {
                    (ColumnType::Cql(k), ColumnType::Cql(v)) => {
                        ColumnType::Cql(CqlType::Map(Box::new(k), Box::new(v)))
                    }
                    (k, v) => ColumnType::Unknown(format!("map<{k}, {v}>")),
                })
            }
            0x0030 => {
                let keyspace = self.string_quietly("udt keyspace")?;
                let name = self.string_quietly("udt name")?;
                let count = self.cursor.u16("udt field count")?;
                self.checked_count(start, count.into(), 4, "udt field count")?;
                let mut fields = Vec::with_capacity(count.into());
                let mut known = true;
                let mut unknown = Vec::new();
                for _ in 0..count {
                    let field = self.string_quietly("udt field name")?;
                    match self.option_at_depth(depth + 1)? {
                        ColumnType::Cql(ty) => fields.push((field, ty)),
                        other => {
                            known = false;
                            unknown.push(format!("{field} {other}"));
                        }
                    }
                }
                Ok(if known {
                    ColumnType::Cql(CqlType::Udt(UdtType {
                        keyspace: Some(keyspace),
                        name,
                        fields,
                    }))
                } else {
                    ColumnType::Unknown(format!("{keyspace}.{name}({})", unknown.join(", ")))
                })
            }
            0x0031 => {
                let count = self.cursor.u16("tuple component count")?;
                self.checked_count(start, count.into(), 2, "tuple component count")?;
                let mut components = Vec::with_capacity(count.into());
                let mut unknown = None;
                for _ in 0..count {
                    match self.option_at_depth(depth + 1)? {
                        ColumnType::Cql(ty) => components.push(ty),
                        other => unknown = Some(other),
                    }
                }
                Ok(match unknown {
                    None => ColumnType::Cql(CqlType::Tuple(components)),
                    Some(other) => ColumnType::Unknown(format!("tuple<… {other} …>")),
                })
            }
            other => Err(self.error(start, format!("unknown type option id 0x{other:04x}"))),
        }
    }

    /// A `[string]` without an explain line of its own (inside a type option).
    fn string_quietly(&mut self, what: &str) -> Result<String> {
        let len = self.cursor.u16(what)?;
        self.text(len.into(), what)
    }
}

/// Most custom class names whose types [`custom_type`] remembers (per thread); past that it
/// forgets them all and starts again.
const CUSTOM_TYPES_KEPT: usize = 256;

/// The type of a custom Java class name, through the type grammar (an unknown class is kept as
/// its name). The same few names come in every Rows and Prepared result of a session (vectors,
/// durations), so their types are remembered rather than parsed each time.
fn custom_type(class: &str) -> ColumnType {
    type Kept = HashMap<String, ColumnType, foldhash::fast::RandomState>;
    thread_local! {
        static KEPT: RefCell<Kept> = RefCell::default();
    }
    KEPT.with_borrow_mut(|kept| {
        if let Some(ty) = kept.get(class) {
            return ty.clone();
        }
        let ty = match parse_type(class, &UdtRegistry::new()) {
            Ok(ty) => ColumnType::Cql(ty),
            Err(_) => ColumnType::Unknown(class.to_owned()),
        };
        if kept.len() >= CUSTOM_TYPES_KEPT {
            kept.clear();
        }
        kept.insert(class.to_owned(), ty.clone());
        ty
    })
}

/// Longest CQL literal of a value, or text of a string, shown on its explain line; a longer one
/// is cut (`…`).
const LITERAL_MAX: usize = 1 << 20;

/// `text` quoted and escaped as Rust's `{:?}` does, cut after [`LITERAL_MAX`] bytes of it.
fn quoted(text: &str) -> String {
    if text.len() <= LITERAL_MAX {
        return format!("{text:?}");
    }
    let mut end = LITERAL_MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}…", &text[..end])
}

/// The CQL literal of a value for its explain line, written piece by piece and cut after
/// [`LITERAL_MAX`] bytes (a value of millions of elements is never held decoded); `malformed`
/// when it does not decode.
fn literal(ty: &CqlType, bytes: &[u8]) -> String {
    /// Text up to a limit; writing past it fails, which stops the printer.
    struct Capped(Vec<u8>);
    impl std::io::Write for Capped {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.0.len() + bytes.len() > LITERAL_MAX {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.0.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Capped(Vec::new());
    let written = write_pieces(ty, bytes, false, TextForm::Cql, &|s| s.into(), &mut out);
    let text = String::from_utf8_lossy(&out.0).into_owned();
    match written {
        Ok(()) => text,
        Err(PrintError::Io(_)) => format!("{text}…"),
        // A payload that is not a value of its type.
        Err(_) => "malformed".to_string(),
    }
}

/// Bytes as `0x…` text (at most 32 bytes shown, then `… (N bytes)`).
pub(crate) fn hex_text(bytes: &[u8]) -> String {
    const SHOWN: usize = 32;
    match bytes.get(..SHOWN) {
        Some(head) if bytes.len() > SHOWN => {
            format!("0x{}… ({} bytes)", crate::hex::encode(head), bytes.len())
        }
        _ => format!("0x{}", crate::hex::encode(bytes)),
    }
}

/// The name of a consistency level (`QUORUM`), or its number when unknown.
pub fn consistency_name(level: u16) -> String {
    let name = match level {
        0x0000 => "ANY",
        0x0001 => "ONE",
        0x0002 => "TWO",
        0x0003 => "THREE",
        0x0004 => "QUORUM",
        0x0005 => "ALL",
        0x0006 => "LOCAL_QUORUM",
        0x0007 => "EACH_QUORUM",
        0x0008 => "SERIAL",
        0x0009 => "LOCAL_SERIAL",
        0x000A => "LOCAL_ONE",
        other => return format!("0x{other:04x}"),
    };
    name.to_string()
}
