//! RESULT bodies: Void, Rows (metadata flags, paging state, no metadata, v5's changed metadata with
//! its new id), Set_keyspace, Prepared (partition key indices, bound variables, result metadata,
//! ScyllaDB's LWT bit) and Schema_change.

use super::reader::{Reader, Step};
use super::reread::Reread;
use super::types::{Cell, Columns};
use super::{bit_names, Body, Message, Registry};
use crate::cursor::DecodeError;
use std::borrow::Cow;
use std::ops::Range;

type Result<T> = std::result::Result<T, DecodeError>;

/// Metadata flag: one keyspace and table for every column.
const GLOBAL_TABLES_SPEC: u32 = 0x0001;
/// Metadata flag: more pages follow; a paging state is present.
const HAS_MORE_PAGES: u32 = 0x0002;
/// Metadata flag: no column specifications.
const NO_METADATA: u32 = 0x0004;
/// Metadata flag (v5): the result metadata changed; its new id follows.
const METADATA_CHANGED: u32 = 0x0008;
/// ScyllaDB's bit in PREPARED metadata flags marking a lightweight transaction (the mask it
/// announces in SUPPORTED as `SCYLLA_LWT_ADD_METADATA_MARK`, 0x80000000 in practice).
const SCYLLA_LWT: u32 = 0x8000_0000;

/// The names of metadata flags.
pub const METADATA_FLAG_NAMES: [(u32, &str); 5] = [
    (GLOBAL_TABLES_SPEC, "GLOBAL_TABLES_SPEC"),
    (HAS_MORE_PAGES, "HAS_MORE_PAGES"),
    (NO_METADATA, "NO_METADATA"),
    (METADATA_CHANGED, "METADATA_CHANGED"),
    (SCYLLA_LWT, "LWT (ScyllaDB)"),
];

/// The metadata of a Rows result, or the result metadata of a Prepared result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowsMetadata {
    /// The flags.
    pub flags: u32,
    /// The column count (also when there is no metadata).
    pub column_count: usize,
    /// The paging state, when more pages follow (`None` inside also when it is null).
    pub paging_state: Option<Vec<u8>>,
    /// The new result metadata id (v5, when the metadata changed).
    pub new_metadata_id: Option<Vec<u8>>,
    /// The column specifications (empty with NO_METADATA).
    pub columns: Columns,
}

impl RowsMetadata {
    /// Whether more pages follow.
    pub fn has_more_pages(&self) -> bool {
        self.flags & HAS_MORE_PAGES != 0
    }

    /// Whether the column specifications are absent.
    pub fn no_metadata(&self) -> bool {
        self.flags & NO_METADATA != 0
    }
}

/// A Rows result.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// The metadata as sent.
    pub metadata: RowsMetadata,
    /// With NO_METADATA: the result columns of the executed statement's PREPARED result, when it
    /// was seen and has the column count of the metadata.
    pub executed_columns: Option<Columns>,
    /// The number of rows.
    pub count: usize,
    /// Where the rows' `[value]`s are in the message's body ([`Message::bytes`]), checked when the
    /// message was decoded: [`Rows::cells`] reads them again, so a message holds no more than its
    /// body however many rows and cells it has.
    pub values: Range<usize>,
}

impl Rows {
    /// The columns the values were decoded with: the metadata's, or with NO_METADATA those of the
    /// executed statement's PREPARED result; `None` when unknown (values are then raw bytes).
    pub fn columns(&self) -> Option<&Columns> {
        if self.metadata.no_metadata() {
            self.executed_columns.as_ref()
        } else {
            Some(&self.metadata.columns)
        }
    }

    /// The cells of the rows, row after row (`column_count` cells each), read from `body`, the
    /// body of the message ([`Message::bytes`]): a value of a column of known type is a
    /// [`Cell::Value`], else [`Cell::Bytes`].
    pub fn cells<'a>(&'a self, body: &'a [u8]) -> impl Iterator<Item = Cell> + 'a {
        let columns = self.columns();
        let width = self.metadata.column_count.max(1);
        let mut cells = Reread::new(body, &self.values);
        (0..self.count.saturating_mul(width)).map_while(move |i| {
            let known = columns
                .and_then(|c| c.get(i % width))
                .is_some_and(|c| c.ty.cql().is_some());
            cells.cell(known)
        })
    }
}

/// A Prepared result.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The prepared id.
    pub id: Vec<u8>,
    /// The result metadata id (v5).
    pub result_metadata_id: Option<Vec<u8>>,
    /// The flags of the bound variables' metadata (ScyllaDB's LWT bit included).
    pub flags: u32,
    /// The indices of the bound variables that make the partition key (v4+).
    pub pk_indices: Vec<u16>,
    /// The bound variables.
    pub variables: Columns,
    /// The metadata of the rows an EXECUTE will return.
    pub result: RowsMetadata,
}

/// A schema change (a Schema_change result or a SCHEMA_CHANGE event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaChange {
    /// `CREATED`, `UPDATED` or `DROPPED`.
    pub change: String,
    /// `KEYSPACE`, `TABLE`, `TYPE`, `FUNCTION` or `AGGREGATE`.
    pub target: String,
    /// The keyspace.
    pub keyspace: String,
    /// The table, type, function or aggregate (absent for a keyspace).
    pub name: Option<String>,
    /// The argument types of a function or aggregate.
    pub argument_types: Option<Vec<String>>,
}

/// A RESULT body by kind.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultBody {
    /// Void.
    Void,
    /// Rows.
    Rows(Rows),
    /// Set_keyspace: the keyspace now in use.
    SetKeyspace(String),
    /// Prepared.
    Prepared(Prepared),
    /// Schema_change.
    SchemaChange(SchemaChange),
}

impl ResultBody {
    /// The kind's name: `Void`, `Rows`, `Set_keyspace`, `Prepared`, `Schema_change`.
    pub fn kind(&self) -> &'static str {
        match self {
            ResultBody::Void => "Void",
            ResultBody::Rows(_) => "Rows",
            ResultBody::SetKeyspace(_) => "Set_keyspace",
            ResultBody::Prepared(_) => "Prepared",
            ResultBody::SchemaChange(_) => "Schema_change",
        }
    }
}

/// Column specifications: with a global table spec, one keyspace and table for all.
fn column_specs(r: &mut Reader<'_>, flags: u32, count: usize) -> Result<Columns> {
    let global = if flags & GLOBAL_TABLES_SPEC != 0 {
        Some((r.string("keyspace")?, r.string("table")?))
    } else {
        None
    };
    let mut columns = Columns::with_capacity(count);
    for i in 0..count {
        r.within(Step::Item("column", i), |r| {
            let own;
            let (keyspace, table) = match &global {
                Some((keyspace, table)) => (keyspace, table),
                None => {
                    own = (r.string("keyspace")?, r.string("table")?);
                    (&own.0, &own.1)
                }
            };
            let name = r.string("name")?;
            let ty = r.option("type")?;
            columns.push(keyspace, table, &name, ty);
            Ok(())
        })?;
    }
    Ok(columns)
}

/// The smallest column specification: a name and an option id (with a global table spec).
const MIN_COLUMN_SPEC: u64 = 4;

/// The flags of a metadata, explained with their names.
fn metadata_flags(r: &mut Reader<'_>) -> Result<u32> {
    let start = r.cursor.pos();
    let flags = r.cursor.i32("flags")? as u32;
    r.line(start, || {
        format!(
            "flags 0x{flags:04x} {:?}",
            bit_names(flags, &METADATA_FLAG_NAMES)
        )
    });
    Ok(flags)
}

/// Rows metadata: flags, column count, paging state, new metadata id, column specifications.
fn rows_metadata(r: &mut Reader<'_>) -> Result<RowsMetadata> {
    let flags = metadata_flags(r)?;
    let no_metadata = flags & NO_METADATA != 0;
    let column_count = r.int_count(
        "column count",
        if no_metadata { 0 } else { MIN_COLUMN_SPEC },
    )?;
    let mut metadata = RowsMetadata {
        flags,
        column_count,
        ..RowsMetadata::default()
    };
    if flags & HAS_MORE_PAGES != 0 {
        metadata.paging_state = r.bytes("paging state")?.map(<[u8]>::to_vec);
    }
    if flags & METADATA_CHANGED != 0 {
        metadata.new_metadata_id = Some(r.short_bytes("new metadata id")?.to_vec());
    }
    if !no_metadata {
        metadata.columns = column_specs(r, flags, column_count)?;
    }
    Ok(metadata)
}

/// The result columns of the statement an EXECUTE request ran, from the registry.
fn executed_columns(registry: &Registry, request: Option<&Message>) -> Option<Columns> {
    let Some(Body::Execute(execute)) = request.map(|m| &m.body) else {
        return None;
    };
    registry
        .get(&execute.id)
        .map(|statement| statement.columns.clone())
}

/// A Rows result.
fn rows(r: &mut Reader<'_>, registry: &Registry, request: Option<&Message>) -> Result<Rows> {
    let metadata = r.within(Step::Part("metadata"), rows_metadata)?;
    let executed = if metadata.no_metadata() {
        executed_columns(registry, request).filter(|c| c.len() == metadata.column_count)
    } else {
        None
    };
    let columns = if metadata.no_metadata() {
        executed.as_ref()
    } else {
        Some(&metadata.columns)
    };
    let width = metadata.column_count;
    let start = r.cursor.pos();
    let count = r.int_count("row count", (width as u64).saturating_mul(4))?;
    if width == 0 && count > 0 {
        return Err(r.error(start, format!("row count {count} with no columns")));
    }
    // Each value is checked (and explained), not kept: the rows are read again from the body.
    let first = r.cursor.pos();
    for i in 0..count {
        r.within(Step::Item("row", i), |r| {
            for j in 0..width {
                let column = columns.and_then(|c| c.get(j));
                let what = match column {
                    Some(c) => Cow::Borrowed(c.name),
                    None => Cow::Owned(format!("column {j}")),
                };
                r.within(Step::Item("column", j), |r| {
                    r.cell(column.map(|c| c.ty), &what)
                })?;
            }
            Ok(())
        })?;
    }
    let values = first..r.cursor.pos();
    Ok(Rows {
        metadata,
        executed_columns: executed,
        count,
        values,
    })
}

/// A Prepared result.
fn prepared(r: &mut Reader<'_>, version: u8) -> Result<Prepared> {
    let id = r.short_bytes("prepared id")?.to_vec();
    let result_metadata_id = if version >= 5 {
        Some(r.short_bytes("result metadata id")?.to_vec())
    } else {
        None
    };
    let (flags, pk_indices, variables) = r.within(Step::Part("bound variables"), |r| {
        let flags = metadata_flags(r)?;
        let count = r.int_count("variable count", MIN_COLUMN_SPEC)?;
        let mut pk_indices = Vec::new();
        if version >= 4 {
            let pk_count = r.int_count("partition key count", 2)?;
            pk_indices.reserve(pk_count);
            for i in 0..pk_count {
                pk_indices.push(r.short(&format!("partition key {i}: variable"))?);
            }
        }
        Ok((flags, pk_indices, column_specs(r, flags, count)?))
    })?;
    let result = r.within(Step::Part("result metadata"), rows_metadata)?;
    Ok(Prepared {
        id,
        result_metadata_id,
        flags,
        pk_indices,
        variables,
        result,
    })
}

/// A schema change: change type, target and the target's options.
pub(crate) fn schema_change(r: &mut Reader<'_>) -> Result<SchemaChange> {
    let change = r.string("change")?;
    let target = r.string("target")?;
    let keyspace = r.string("keyspace")?;
    let mut schema_change = SchemaChange {
        change,
        target,
        keyspace,
        name: None,
        argument_types: None,
    };
    if schema_change.target != "KEYSPACE" {
        schema_change.name = Some(r.string("name")?);
        if matches!(schema_change.target.as_str(), "FUNCTION" | "AGGREGATE") {
            schema_change.argument_types = Some(r.string_list("argument types")?);
        }
    }
    Ok(schema_change)
}

/// A RESULT body.
pub(crate) fn result(
    r: &mut Reader<'_>,
    version: u8,
    registry: &Registry,
    request: Option<&Message>,
) -> Result<ResultBody> {
    let start = r.cursor.pos();
    let kind = r.cursor.i32("result kind")?;
    let name = match kind {
        1 => "Void",
        2 => "Rows",
        3 => "Set_keyspace",
        4 => "Prepared",
        5 => "Schema_change",
        other => return Err(r.error(start, format!("unknown result kind {other}"))),
    };
    r.line(start, || format!("kind {kind} ({name})"));
    Ok(match kind {
        1 => ResultBody::Void,
        2 => ResultBody::Rows(rows(r, registry, request)?),
        3 => ResultBody::SetKeyspace(r.string("keyspace")?),
        4 => ResultBody::Prepared(prepared(r, version)?),
        _ => ResultBody::SchemaChange(schema_change(r)?),
    })
}
