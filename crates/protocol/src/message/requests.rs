//! Request bodies with query parameters and bound values: QUERY, PREPARE, EXECUTE and BATCH.

use super::reader::{Reader, Step};
use super::types::{BoundValues, Columns};
use super::{bit_names, Registry};
use crate::cursor::DecodeError;
use std::borrow::Cow;
use std::sync::Arc;

type Result<T> = std::result::Result<T, DecodeError>;

/// Query flag: values follow.
const VALUES: u32 = 0x01;
/// Query flag: the result should carry no metadata.
const SKIP_METADATA: u32 = 0x02;
/// Query flag: a page size follows.
const PAGE_SIZE: u32 = 0x04;
/// Query flag: a paging state follows.
const PAGING_STATE: u32 = 0x08;
/// Query flag: a serial consistency follows.
const SERIAL_CONSISTENCY: u32 = 0x10;
/// Query flag: a default timestamp follows.
const TIMESTAMP: u32 = 0x20;
/// Query flag: each value is preceded by its name.
const NAMES: u32 = 0x40;
/// Query flag (v5): a keyspace follows.
const KEYSPACE: u32 = 0x80;
/// Query flag (v5): a "now" in seconds follows.
const NOW_IN_SECONDS: u32 = 0x100;

/// The names of query parameter flags.
pub const QUERY_FLAG_NAMES: [(u32, &str); 9] = [
    (VALUES, "VALUES"),
    (SKIP_METADATA, "SKIP_METADATA"),
    (PAGE_SIZE, "PAGE_SIZE"),
    (PAGING_STATE, "WITH_PAGING_STATE"),
    (SERIAL_CONSISTENCY, "WITH_SERIAL_CONSISTENCY"),
    (TIMESTAMP, "WITH_DEFAULT_TIMESTAMP"),
    (NAMES, "WITH_NAMES_FOR_VALUES"),
    (KEYSPACE, "WITH_KEYSPACE"),
    (NOW_IN_SECONDS, "WITH_NOW_IN_SECONDS"),
];

/// The options of a QUERY or EXECUTE (and the tail of a BATCH, which has no values, page size or
/// paging state).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryParameters {
    /// The consistency level.
    pub consistency: u16,
    /// The flags (a byte in v3/v4, an int in v5).
    pub flags: u32,
    /// The bound values, with names and types when known.
    pub values: BoundValues,
    /// The page size.
    pub page_size: Option<i32>,
    /// The paging state (`Some(None)`: the flag with a null state).
    pub paging_state: Option<Option<Vec<u8>>>,
    /// The serial consistency level.
    pub serial_consistency: Option<u16>,
    /// The default timestamp, in microseconds.
    pub timestamp: Option<i64>,
    /// The keyspace (v5).
    pub keyspace: Option<String>,
    /// The "now" in seconds (v5).
    pub now_in_seconds: Option<i32>,
}

impl QueryParameters {
    /// Whether the result should come without metadata.
    pub fn skip_metadata(&self) -> bool {
        self.flags & SKIP_METADATA != 0
    }
}

/// A QUERY: the query text and its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The CQL text.
    pub query: String,
    /// Consistency, values, paging, …
    pub parameters: QueryParameters,
}

/// A PREPARE: the query text, and in v5 flags and a keyspace.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepare {
    /// The CQL text.
    pub query: String,
    /// The flags (v5).
    pub flags: Option<u32>,
    /// The keyspace (v5, flag 0x01).
    pub keyspace: Option<String>,
}

/// An EXECUTE: the prepared id, in v5 the result metadata id, and the parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Execute {
    /// The prepared id.
    pub id: Vec<u8>,
    /// The result metadata id (v5).
    pub result_metadata_id: Option<Vec<u8>>,
    /// The query text, when the statement's PREPARE was seen.
    pub query: Option<Arc<str>>,
    /// Consistency, values (named and typed by the PREPARED result when seen), paging, …
    pub parameters: QueryParameters,
}

/// One statement of a BATCH: a query text or a prepared id, and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchStatement {
    /// The query text (given, or from the PREPARE of a prepared statement).
    pub query: Option<Arc<str>>,
    /// The prepared id of a prepared statement.
    pub id: Option<Vec<u8>>,
    /// The bound values.
    pub values: BoundValues,
}

/// A BATCH.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// 0 logged, 1 unlogged, 2 counter.
    pub kind: u8,
    /// The statements.
    pub statements: Vec<BatchStatement>,
    /// Consistency, flags, serial consistency, timestamp, keyspace and now (no values).
    pub parameters: QueryParameters,
}

/// The longest prepared query text a BATCH's JSON repeats at every statement that runs it; a longer
/// one is written at the first such statement only (the others carry the same prepared id), so a
/// message of 65,535 short statements naming one long prepared statement writes that text once.
pub const BATCH_REPEATED_QUERY_MAX: usize = 1024;

impl Batch {
    /// The batch type's name: `LOGGED`, `UNLOGGED`, `COUNTER`.
    pub fn kind_name(&self) -> String {
        match self.kind {
            0 => "LOGGED".into(),
            1 => "UNLOGGED".into(),
            2 => "COUNTER".into(),
            other => format!("type {other}"),
        }
    }
}

/// The flags of query parameters: a byte before v5, an int from v5.
fn flags(r: &mut Reader<'_>, version: u8) -> Result<u32> {
    let start = r.cursor.pos();
    let flags = if version >= 5 {
        r.cursor.i32("flags")? as u32
    } else {
        r.cursor.u8("flags")?.into()
    };
    r.line(start, || {
        format!(
            "flags 0x{flags:02x} {:?}",
            bit_names(flags, &QUERY_FLAG_NAMES)
        )
    });
    Ok(flags)
}

/// Bound values: a `[short]` count then each `[value]`, preceded by its name when `named`; names and
/// types of values without them come from `variables`. Each value is read (and explained) here and
/// kept as where it is in the body.
fn values(r: &mut Reader<'_>, named: bool, variables: Option<&Columns>) -> Result<BoundValues> {
    let count = r.short_count("value count", if named { 6 } else { 4 })?;
    let start = r.cursor.pos();
    for i in 0..count {
        r.within(Step::Item("value", i), |r| {
            let given = if named { Some(r.string("name")?) } else { None };
            let variable = variables.and_then(|v| v.get(i));
            let what = match (&given, variable) {
                (Some(name), _) => Cow::Borrowed(name.as_str()),
                (None, Some(v)) => Cow::Borrowed(v.name),
                (None, None) => Cow::Owned(format!("value {i}")),
            };
            r.cell(variable.map(|v| v.ty), &what)
        })?;
    }
    Ok(BoundValues::new(
        count,
        named,
        variables.cloned(),
        start..r.cursor.pos(),
    ))
}

/// The optional fields after the values, as `flags` announces them.
fn tail(r: &mut Reader<'_>, p: &mut QueryParameters, version: u8) -> Result<()> {
    if p.flags & PAGE_SIZE != 0 {
        p.page_size = Some(r.int("page size")?);
    }
    if p.flags & PAGING_STATE != 0 {
        p.paging_state = Some(r.bytes("paging state")?.map(<[u8]>::to_vec));
    }
    batch_tail(r, p, version)
}

/// The optional fields a BATCH shares with the query parameters (keyspace and now only from v5:
/// before, those bits mean nothing).
fn batch_tail(r: &mut Reader<'_>, p: &mut QueryParameters, version: u8) -> Result<()> {
    if p.flags & SERIAL_CONSISTENCY != 0 {
        p.serial_consistency = Some(r.consistency("serial consistency")?);
    }
    if p.flags & TIMESTAMP != 0 {
        p.timestamp = Some(r.long("timestamp (µs)")?);
    }
    if version >= 5 && p.flags & KEYSPACE != 0 {
        p.keyspace = Some(r.string("keyspace")?);
    }
    if version >= 5 && p.flags & NOW_IN_SECONDS != 0 {
        p.now_in_seconds = Some(r.int("now in seconds")?);
    }
    Ok(())
}

/// Query parameters, the values named and typed by `variables` when known.
fn parameters(
    r: &mut Reader<'_>,
    version: u8,
    variables: Option<&Columns>,
) -> Result<QueryParameters> {
    let mut p = QueryParameters {
        consistency: r.consistency("consistency")?,
        ..QueryParameters::default()
    };
    p.flags = flags(r, version)?;
    if p.flags & VALUES != 0 {
        p.values = values(r, p.flags & NAMES != 0, variables)?;
    }
    tail(r, &mut p, version)?;
    Ok(p)
}

/// A QUERY body.
pub(crate) fn query(r: &mut Reader<'_>, version: u8) -> Result<Query> {
    Ok(Query {
        query: r.long_string("query")?,
        parameters: parameters(r, version, None)?,
    })
}

/// A PREPARE body.
pub(crate) fn prepare(r: &mut Reader<'_>, version: u8) -> Result<Prepare> {
    let query = r.long_string("query")?;
    let mut prepare = Prepare {
        query,
        flags: None,
        keyspace: None,
    };
    if version >= 5 {
        let flags = r.int("flags")? as u32;
        prepare.flags = Some(flags);
        if flags & 0x01 != 0 {
            prepare.keyspace = Some(r.string("keyspace")?);
        }
    }
    Ok(prepare)
}

/// An EXECUTE body.
pub(crate) fn execute(r: &mut Reader<'_>, version: u8, registry: &Registry) -> Result<Execute> {
    let id = r.short_bytes("prepared id")?.to_vec();
    let result_metadata_id = if version >= 5 {
        Some(r.short_bytes("result metadata id")?.to_vec())
    } else {
        None
    };
    let statement = registry.get(&id);
    if let Some(query) = statement.and_then(|s| s.query.as_deref()) {
        r.prepared_query(query);
    }
    let parameters = parameters(r, version, statement.map(|s| &s.variables))?;
    Ok(Execute {
        id,
        result_metadata_id,
        query: statement.and_then(|s| s.query.clone()),
        parameters,
    })
}

/// A BATCH body.
pub(crate) fn batch(r: &mut Reader<'_>, version: u8, registry: &Registry) -> Result<Batch> {
    let kind = r.byte("batch type")?;
    let count = r.short_count("statement count", 5)?;
    let mut statements = Vec::with_capacity(count);
    for i in 0..count {
        statements.push(r.within(Step::Item("statement", i), |r| {
            let start = r.cursor.pos();
            match r.byte("kind")? {
                0 => {
                    let query = r.long_string("query")?;
                    Ok(BatchStatement {
                        query: Some(query.into()),
                        id: None,
                        values: values(r, false, None)?,
                    })
                }
                1 => {
                    let id = r.short_bytes("prepared id")?.to_vec();
                    let statement = registry.get(&id);
                    let variables = statement.map(|s| &s.variables);
                    Ok(BatchStatement {
                        query: statement.and_then(|s| s.query.clone()),
                        id: Some(id),
                        values: values(r, false, variables)?,
                    })
                }
                other => Err(r.error(start, format!("invalid batch statement kind {other}"))),
            }
        })?);
    }
    let mut parameters = QueryParameters {
        consistency: r.consistency("consistency")?,
        ..QueryParameters::default()
    };
    parameters.flags = flags(r, version)?;
    batch_tail(r, &mut parameters, version)?;
    Ok(Batch {
        kind,
        statements,
        parameters,
    })
}
