//! A dataset file as rows of a table: the input read by `cqlwire-vector`'s readers (every format
//! `convert` reads), its vector column converted by the vector kernel and its other columns by the
//! column encoders, each value for the type the server reports for its bind marker. No value is ever
//! formatted as text.
//!
//! [`Dataset::open`] reads the input's shape and names the table columns it provides (after
//! `map` renames, plus the row-number column); [`Dataset::bind`] matches them to the prepared
//! statement's markers and refuses a mapping that cannot work before any row is read;
//! [`Dataset::next_rows`] then yields [`Row`]s batch by batch. A cell that cannot be converted
//! (a value out of range, a fraction for an integer type) makes its row an invalid one, which the
//! run rejects with that reason while the other rows load.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::{DataType, SchemaRef};
use bytes::Bytes;
use cqlwire_codec::types::{CqlType as CodecType, Identifier};
use cqlwire_codec::value::{self as codec_value, cql::format_cql};
use cqlwire_vector::columns::ColumnEncoder;
use cqlwire_vector::convert;
use cqlwire_vector::input::{named, Batch, BatchReader, ElementType, InputError, InputOptions};
use cqlwire_vector::kernel::{Rows, VectorEncoder};
use scylla::cluster::metadata::ColumnType;

use crate::error::{LoadError, LoadErrorKind, Setting};
use crate::loader::BindMarker;
use crate::session::{schema_name, ColumnRole, TableColumn};
use crate::value::{Row, Value};

/// What to read and how its columns map to the table's.
#[derive(Debug, Clone)]
pub struct DatasetOptions {
    /// The input file; `None` (or `-`) is standard input.
    pub path: Option<PathBuf>,
    /// Format, vector column and rows to read, as for `convert`.
    pub input: InputOptions,
    /// Renames, input column → table column; an empty table column leaves the input column out.
    pub map: Vec<(String, String)>,
    /// The table column that receives each row's number in the whole input.
    pub row_number_column: Option<String>,
}

impl DatasetOptions {
    /// Rows per input batch handed to a load: small enough that a stopped run drains at once,
    /// large enough to keep the conversion's per-batch cost low.
    pub const BATCH_ROWS: usize = 1024;
}

/// One rename of [`DatasetOptions::map`] written as `INPUT=COLUMN` (spaces around either name
/// trimmed; an empty `COLUMN` leaves the input column out).
pub fn parse_rename(pair: &str) -> Result<(String, String), String> {
    pair.split_once('=')
        .map(|(from, to)| (from.trim().to_owned(), to.trim().to_owned()))
        .filter(|(from, _)| !from.is_empty())
        .ok_or_else(|| format!("expected INPUT=COLUMN, not '{pair}'"))
}

/// Where the values of one bind marker come from.
enum Source {
    /// The vector column, through the kernel.
    Vector(VectorEncoder),
    /// Another input column, by its index in the passed-through columns.
    Column {
        name: String,
        encoder: ColumnEncoder,
    },
    /// The row's number in the whole input.
    RowNumber(ColumnEncoder),
}

/// One bind marker's source and type.
struct Binding {
    source: Source,
    marker: crate::types::ServerType,
    /// The codec's form of the type, to print key values in the rejects file.
    codec_type: CodecType,
    /// Whether the marker is a partition key column (printed as the row's key).
    key: bool,
    name: String,
}

/// An input opened for loading.
pub struct Dataset {
    reader: Box<dyn BatchReader>,
    /// Input vector column name → table column (None when the input names no column).
    vector_column: Option<String>,
    /// (input column, table column) of the passed-through columns that are loaded.
    columns: Vec<(String, String)>,
    row_number_column: Option<String>,
    bindings: Vec<Binding>,
    /// The first batch, read at open to learn where the selected rows start.
    first: Option<Batch>,
    /// How the input was opened when it has several list columns and none was chosen: the first
    /// is read as the vector column until [`Dataset::table_columns`] finds the table's only vector
    /// column among the others.
    reopen: Option<Reopen>,
}

/// An input file opened with the first of several list columns as its vector column.
struct Reopen {
    options: DatasetOptions,
    /// The input's list columns, in the file's order.
    candidates: Vec<String>,
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset")
            .field("vector_column", &self.vector_column)
            .field("columns", &self.columns)
            .field("row_number_column", &self.row_number_column)
            .finish_non_exhaustive()
    }
}

fn mapping_error(message: impl Into<String>) -> LoadError {
    LoadError::new(LoadErrorKind::Mapping, message)
}

/// Whether `given` (an input's column name, or a name as written in CQL in `--map` or the
/// row-number column) names the table column `column` (its name in the schema): the same text, or
/// what CQL means by it (`"Emb"` is `Emb`, `Emb` is `emb`).
fn names_column(given: &str, column: &str) -> bool {
    given == column || schema_name(given) == column
}

impl Dataset {
    /// Opens the input and works out the table columns it provides.
    ///
    /// An input file with several list columns and none chosen (a Parquet or Arrow file that
    /// `unload` wrote of a table with a list column or two vector columns) is read with its first
    /// list column that reads as vectors as the vector column and the others as columns of their
    /// own, each loaded by name, until [`Dataset::table_columns`] learns the table's only vector
    /// column.
    pub fn open(options: &DatasetOptions) -> Result<Dataset, LoadError> {
        let input = |e: InputError| LoadError::new(LoadErrorKind::Input, e.to_string());
        let open_with = |column: &String| {
            let input_options = InputOptions {
                column: Some(column.clone()),
                ..options.input.clone()
            };
            let reader = convert::open(options.path.as_deref(), input_options).map_err(input)?;
            Dataset::from_reader(reader, &options.map, options.row_number_column.clone())
        };
        match convert::open(options.path.as_deref(), options.input.clone()) {
            Err(InputError::AmbiguousColumn { columns, .. })
                if options.input.column.is_none() && named(options.path.as_deref()).is_some() =>
            {
                // The first list column that reads as vectors (a list column of lists of several
                // lengths does not), until the table says which one it takes.
                let mut first_error = None;
                for column in &columns {
                    match open_with(column) {
                        Ok(mut dataset) => {
                            dataset.reopen = Some(Reopen {
                                options: options.clone(),
                                candidates: columns,
                            });
                            return Ok(dataset);
                        }
                        Err(error) => {
                            first_error.get_or_insert(error);
                        }
                    }
                }
                Err(first_error.unwrap_or_else(|| {
                    LoadError::new(LoadErrorKind::Input, "the input has no list column")
                }))
            }
            opened => Dataset::from_reader(
                opened.map_err(input)?,
                &options.map,
                options.row_number_column.clone(),
            ),
        }
    }

    /// For an input opened with the first of several list columns as its vector column: the input
    /// opened again with the list column that fills `table`'s only vector column (after the
    /// renames), when that is another one.
    fn with_the_tables_vector_column(
        &mut self,
        table: &[TableColumn],
    ) -> Result<Option<Dataset>, LoadError> {
        let Some(reopen) = self.reopen.take() else {
            return Ok(None);
        };
        let mut vectors = table
            .iter()
            .filter(|column| matches!(column.cql_type.column_type(), ColumnType::Vector { .. }));
        let (Some(only), None) = (vectors.next(), vectors.next()) else {
            return Ok(None);
        };
        if self
            .vector_column
            .as_deref()
            .is_some_and(|name| names_column(name, &only.name))
        {
            return Ok(None);
        }
        let map = &reopen.options.map;
        let fills = |candidate: &&String| match map.iter().find(|(from, _)| from == *candidate) {
            Some((_, to)) => !to.is_empty() && names_column(to, &only.name),
            None => names_column(candidate, &only.name),
        };
        let Some(column) = reopen.candidates.iter().find(fills) else {
            return Ok(None);
        };
        let options = &reopen.options;
        let input = InputOptions {
            column: Some(column.clone()),
            ..options.input.clone()
        };
        let reader = convert::open(options.path.as_deref(), input)
            .map_err(|e| LoadError::new(LoadErrorKind::Input, e.to_string()))?;
        Dataset::from_reader(reader, map, options.row_number_column.clone()).map(Some)
    }

    /// A dataset over an already open reader (e.g. record batches in memory, see
    /// `cqlwire_vector::input::open_record_batches`), with `map`'s renames and the row-number
    /// column as in [`DatasetOptions`].
    pub fn from_reader(
        mut reader: Box<dyn BatchReader>,
        map: &[(String, String)],
        row_number_column: Option<String>,
    ) -> Result<Dataset, LoadError> {
        let rename = |input: &str| -> Option<String> {
            match map.iter().find(|(from, _)| from == input) {
                Some((_, to)) if to.is_empty() => None,
                Some((_, to)) => Some(to.clone()),
                None => Some(input.to_owned()),
            }
        };
        for (from, _) in map {
            let known = reader.column_name() == Some(from.as_str())
                || passthrough_names(reader.passthrough_schema()).any(|name| name == *from);
            if !known {
                return Err(mapping_error(format!(
                    "the map names the input column {from}, which the input does not have"
                ))
                .with_setting(Setting::Map));
            }
        }
        let vector_column = match reader.column_name() {
            Some(name) => rename(name),
            None => None,
        };
        let columns = passthrough_names(reader.passthrough_schema())
            .filter_map(|name| rename(&name).map(|to| (name, to)))
            .collect();
        let first = reader
            .next_batch()
            .map_err(|e| LoadError::new(LoadErrorKind::Input, e.to_string()).with_source(e))?;
        Ok(Dataset {
            first,
            reader,
            vector_column,
            columns,
            row_number_column,
            bindings: Vec::new(),
            reopen: None,
        })
    }

    /// The table columns this input fills, for the default INSERT: the vector column (named after
    /// the input's column, or the table's only vector column for inputs without names; none for an
    /// input read without vectors), the other input columns, and the row-number column. Refuses a
    /// vector column the table cannot take.
    ///
    /// An input file with several list columns and none chosen fills the table's only vector
    /// column from the list column of that name (after the renames), whichever comes first in the
    /// file.
    pub fn table_columns(&mut self, table: &[TableColumn]) -> Result<Vec<String>, LoadError> {
        if let Some(reopened) = self.with_the_tables_vector_column(table)? {
            *self = reopened;
        }
        if self.vector_column.is_none() && self.reader.has_vectors() {
            let vectors: Vec<&TableColumn> = table
                .iter()
                .filter(|column| matches!(column.cql_type.column_type(), ColumnType::Vector { .. }))
                .collect();
            match vectors.as_slice() {
                [only] => self.vector_column = Some(only.name.clone()),
                [] => {
                    return Err(mapping_error(
                        "the table has no vector column to load the input's vectors into",
                    ))
                }
                _ => {
                    let names: Vec<&str> = vectors.iter().map(|c| c.name.as_str()).collect();
                    return Err(mapping_error(format!(
                        "the table has several vector columns ({}): write the statement",
                        names.join(", ")
                    ))
                    .with_setting(Setting::Query));
                }
            }
        }
        let mut names: Vec<String> = self.vector_column.iter().cloned().collect();
        names.extend(self.columns.iter().map(|(_, to)| to.clone()));
        names.extend(self.row_number_column.iter().cloned());
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(mapping_error(format!(
                    "two inputs go to the table column {name}: rename one"
                ))
                .with_setting(Setting::Map));
            }
        }
        Ok(names)
    }

    /// Matches the prepared statement's markers to the input: each marker takes the vector column,
    /// an input column or the row number of the same name, with a converter from the input's type to
    /// the marker's. A marker no input fills, or a type the input cannot give, is refused here.
    pub fn bind(&mut self, markers: &[BindMarker], table: &[TableColumn]) -> Result<(), LoadError> {
        let schema = self.reader.passthrough_schema();
        let mut bindings = Vec::with_capacity(markers.len());
        for marker in markers {
            let codec_type = codec_type(&marker.cql_type)?;
            let key = table
                .iter()
                .any(|c| c.name == marker.name && matches!(c.role, ColumnRole::PartitionKey(_)));
            let refused = |e: &dyn std::fmt::Display| {
                mapping_error(format!("cannot load the column {}: {e}", marker.name))
            };
            let names = |given: &str| names_column(given, &marker.name);
            let source = if self.vector_column.as_deref().is_some_and(names) {
                let encoder = VectorEncoder::new(&codec_type).map_err(|e| refused(&e))?;
                if encoder.dimension() != self.reader.dimension() && self.reader.rows() != Some(0) {
                    return Err(refused(&format!(
                        "it is {codec_type}, but the input's vectors have {} elements",
                        self.reader.dimension()
                    )));
                }
                Source::Vector(encoder)
            } else if self.row_number_column.as_deref().is_some_and(names) {
                Source::RowNumber(
                    ColumnEncoder::new(&DataType::UInt64, &codec_type).map_err(|e| refused(&e))?,
                )
            } else if let Some((input, _)) = self.columns.iter().find(|(_, to)| names(to)) {
                let field = schema
                    .as_ref()
                    .and_then(|schema| schema.field_with_name(input).ok())
                    .ok_or_else(|| refused(&"the input has no such column"))?;
                Source::Column {
                    name: input.clone(),
                    encoder: ColumnEncoder::new(field.data_type(), &codec_type)
                        .map_err(|e| refused(&e))?,
                }
            } else {
                let (hint, setting) = if self.reader.passthrough_schema().is_none() {
                    (
                        ": an input without column names gives only its vectors and each row's \
                         number",
                        Setting::RowNumberColumn,
                    )
                } else {
                    (": name an input column for it", Setting::Map)
                };
                return Err(mapping_error(format!(
                    "no input column fills the bind marker {}{hint}",
                    marker.name
                ))
                .with_setting(setting));
            };
            bindings.push(Binding {
                source,
                marker: marker.cql_type.clone(),
                codec_type,
                key,
                name: marker.name.clone(),
            });
        }
        self.bindings = bindings;
        Ok(())
    }

    /// How many rows the input selection holds, when known up front.
    pub fn rows(&self) -> Option<u64> {
        self.reader.rows()
    }

    /// A `CREATE TABLE keyspace.table (...)` that this input fills: the key (the row-number
    /// column, else an input column named `id`, else the first input column, else `id bigint` for
    /// the rows' numbers), the vector column (`emb` for an input without names; none for an input
    /// read without vectors) as `vector<T, N>` of the type `convert` derives from the input, and the other input columns whose Arrow type
    /// has a plain CQL counterpart; and whether the key is the rows' numbers though no row-number
    /// column was asked for.
    pub fn create_table(&self, keyspace: &str, table: &str) -> (String, bool) {
        self.create_table_of(keyspace, table, None)
    }

    /// [`Dataset::create_table`] with the vector's element type `element` (e.g. `float`, as a
    /// vector index needs) instead of the one derived from the input; the load converts each
    /// value with `convert`'s checked casts.
    pub fn create_table_of(
        &self,
        keyspace: &str,
        table: &str,
        element: Option<&str>,
    ) -> (String, bool) {
        let schema = self.reader.passthrough_schema();
        let mut columns: Vec<(String, String)> = Vec::new();
        if let Some(row) = &self.row_number_column {
            columns.push((schema_name(row), "bigint".to_owned()));
        }
        if let Some(schema) = &schema {
            for field in schema.fields() {
                let Some((_, to)) = self.columns.iter().find(|(from, _)| from == field.name())
                else {
                    continue;
                };
                if let Some(typ) = cql_type_of(field.data_type()) {
                    columns.push((schema_name(to), typ));
                }
            }
        }
        let numbered = self.row_number_column.is_none() && columns.is_empty();
        if numbered {
            columns.push(("id".to_owned(), "bigint".to_owned()));
        } else if self.row_number_column.is_none() {
            let key = columns
                .iter()
                .position(|(name, _)| name == "id")
                .unwrap_or(0);
            let id = columns.remove(key);
            columns.insert(0, id);
        }
        let element = element.unwrap_or(match self.reader.element_type() {
            ElementType::F16 | ElementType::F32 => "float",
            ElementType::F64 => "double",
            ElementType::I64 => "bigint",
            _ => "int",
        });
        if self.reader.has_vectors() {
            let vector = self
                .vector_column
                .as_deref()
                .map_or_else(|| "emb".to_owned(), schema_name);
            columns.insert(
                1,
                (
                    vector,
                    format!("vector<{element}, {}>", self.reader.dimension()),
                ),
            );
        }
        let mut statement = format!(
            "CREATE TABLE {}.{} (",
            Identifier(keyspace),
            Identifier(table)
        );
        for (i, (name, typ)) in columns.iter().enumerate() {
            let key = if i == 0 { " PRIMARY KEY" } else { "" };
            let comma = if i == 0 { "" } else { ", " };
            let _ = write!(statement, "{comma}{} {typ}{key}", Identifier(name));
        }
        statement.push(')');
        (statement, numbered)
    }

    /// The number of the first selected row in the whole input (0 for an empty selection).
    pub fn first_row(&self) -> u64 {
        self.first.as_ref().map_or(0, |batch| batch.first_row)
    }

    /// The rows of the next input batch, converted, or `None` at the end of the input.
    pub fn next_rows(&mut self) -> Result<Option<Vec<Row>>, LoadError> {
        let next = match self.first.take() {
            Some(batch) => Some(batch),
            None => self
                .reader
                .next_batch()
                .map_err(|e| LoadError::new(LoadErrorKind::Input, e.to_string()).with_source(e))?,
        };
        let Some(mut batch) = next else {
            return Ok(None);
        };
        let mut columns: Vec<Option<Vec<Cell>>> = Vec::with_capacity(self.bindings.len());
        for binding in &self.bindings {
            columns.push(match &binding.source {
                Source::Vector(_) => None,
                Source::Column { name, encoder } => {
                    let array = batch
                        .columns
                        .as_ref()
                        .and_then(|columns| columns.column_by_name(name))
                        .ok_or_else(|| {
                            LoadError::new(
                                LoadErrorKind::Input,
                                format!("a batch of the input lacks the column {name}"),
                            )
                        })?;
                    let mut cells = column_cells(encoder, array, batch.rows);
                    for damaged in batch.damaged.iter().filter(|d| d.column == *name) {
                        let index = damaged.row.checked_sub(batch.first_row);
                        let cell = index
                            .and_then(|i| usize::try_from(i).ok())
                            .and_then(|i| cells.get_mut(i));
                        if let Some(cell) = cell {
                            *cell = Cell::Error(format!("column {name}: {}", damaged.reason));
                        }
                    }
                    Some(cells)
                }
                Source::RowNumber(encoder) => {
                    let first = batch.first_row;
                    let numbers: ArrayRef = Arc::new(UInt64Array::from_iter_values(
                        (0..batch.rows as u64).map(|i| first + i),
                    ));
                    Some(column_cells(encoder, &numbers, batch.rows))
                }
            });
        }
        let mut vectors = None;
        for binding in &self.bindings {
            if let Source::Vector(encoder) = &binding.source {
                vectors.get_or_insert_with(|| vector_cells(encoder, &mut batch));
            }
        }
        let columns: Vec<Vec<Cell>> = columns
            .into_iter()
            .map(|cells| cells.unwrap_or_else(|| vectors.clone().unwrap_or_default()))
            .collect();
        let rows = (0..batch.rows)
            .map(|i| self.row(batch.first_row + i as u64, &columns, i))
            .collect();
        let elements = std::mem::replace(&mut batch.elements, empty_elements());
        self.reader.recycle(elements);
        Ok(Some(rows))
    }

    /// Row `i` of a converted batch.
    fn row(&self, number: u64, columns: &[Vec<Cell>], i: usize) -> Row {
        let mut key = Vec::new();
        let mut values = Vec::with_capacity(self.bindings.len());
        for (binding, cells) in self.bindings.iter().zip(columns) {
            let cell = &cells[i];
            if binding.key {
                key.push(format!("{}={}", binding.name, key_text(binding, cell)));
            }
            let marker = binding.marker.clone();
            values.push(match cell {
                Cell::Bytes(bytes) => Value::new(marker, bytes.clone()),
                Cell::Null => Value::null(marker),
                Cell::Error(message) => Value::invalid(marker, message.clone()),
            });
        }
        Row {
            number,
            key: key.join(","),
            values,
        }
    }
}

/// The names of the passed-through columns.
/// The CQL type a `CREATE TABLE` gives a column of Arrow type `typ`, for the plain types `load`
/// converts (`None` for the others).
fn cql_type_of(typ: &DataType) -> Option<String> {
    use DataType as D;
    let name = match typ {
        D::Boolean => "boolean",
        D::Int8 => "tinyint",
        D::Int16 | D::UInt8 => "smallint",
        D::Int32 | D::UInt16 => "int",
        D::Int64 | D::UInt32 => "bigint",
        D::UInt64 => "varint",
        D::Float16 | D::Float32 => "float",
        D::Float64 => "double",
        D::Utf8 | D::LargeUtf8 | D::Utf8View => "text",
        D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_) => "blob",
        D::Timestamp(_, _) | D::Date64 => "timestamp",
        D::Date32 => "date",
        D::Time32(_) | D::Time64(_) => "time",
        D::Dictionary(_, values) => return cql_type_of(values),
        D::List(item) | D::LargeList(item) => {
            return Some(format!("list<{}>", cql_type_of(item.data_type())?))
        }
        _ => return None,
    };
    Some(name.to_owned())
}

fn passthrough_names(schema: Option<SchemaRef>) -> impl Iterator<Item = String> {
    schema.into_iter().flat_map(|schema| {
        schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect::<Vec<_>>()
    })
}

/// The codec's form of a marker's type.
pub(crate) fn codec_type(marker: &crate::types::ServerType) -> Result<CodecType, LoadError> {
    marker
        .codec_type()
        .map_err(|e| LoadError::new(LoadErrorKind::UnsupportedType, format!("{marker}: {e}")))
}

/// One converted cell.
#[derive(Clone)]
enum Cell {
    Bytes(Bytes),
    Null,
    /// Why the input value cannot be a value of the marker's type.
    Error(String),
}

/// The vector column's cells: the whole batch through the kernel (its threads), or row by row when
/// the batch has a row the type cannot hold (so that only that row is refused). Takes the batch's
/// validity and columns, so it runs after the other columns' cells.
fn vector_cells(encoder: &VectorEncoder, batch: &mut Batch) -> Vec<Cell> {
    let validity = batch.validity.clone();
    let valid = |i: usize| {
        validity
            .as_ref()
            .is_none_or(|valid| valid.get(i) == Some(&true))
    };
    if let Ok(encoded) = encoder.encode_batch(batch, Vec::new()) {
        let base = encoded.bytes.as_ptr() as usize;
        let ranges: Vec<_> = (0..encoded.rows)
            .map(|i| {
                let row = encoded.row(i);
                let start = row.as_ptr() as usize - base;
                start..start + row.len()
            })
            .collect();
        let all = Bytes::from(encoded.bytes);
        return ranges
            .into_iter()
            .enumerate()
            .map(|(i, range)| {
                if valid(i) {
                    Cell::Bytes(all.slice(range))
                } else {
                    Cell::Null
                }
            })
            .collect();
    }
    let rows = Rows::from(&batch.elements);
    let dimension = encoder.dimension();
    (0..batch.rows)
        .map(|i| {
            if !valid(i) {
                return Cell::Null;
            }
            let mut value = Vec::new();
            let row = rows.slice(i * dimension, (i + 1) * dimension);
            match encoder.encode_rows(row, batch.first_row + i as u64, &mut value) {
                Ok(()) => Cell::Bytes(Bytes::from(value)),
                Err(e) => Cell::Error(e.to_string()),
            }
        })
        .collect()
}

/// The cells of an input column.
fn column_cells(encoder: &ColumnEncoder, array: &ArrayRef, rows: usize) -> Vec<Cell> {
    let mut out = Vec::new();
    let mut ends = Vec::with_capacity(rows);
    for i in 0..rows {
        let start = out.len();
        ends.push(match encoder.encode(array, i, &mut out) {
            Ok(true) => Ok(start..out.len()),
            Ok(false) => Err(None),
            Err(e) => Err(Some(e.message)),
        });
    }
    let all = Bytes::from(out);
    ends.into_iter()
        .map(|end| match end {
            Ok(range) => Cell::Bytes(all.slice(range)),
            Err(None) => Cell::Null,
            Err(Some(message)) => Cell::Error(message),
        })
        .collect()
}

/// A key cell as a CQL literal for the rejects file (`null`, or `?` when it has no value).
fn key_text(binding: &Binding, cell: &Cell) -> String {
    match cell {
        Cell::Bytes(bytes) => match codec_value::decode(&binding.codec_type, bytes) {
            Ok(value) => format_cql(&binding.codec_type, &value),
            Err(_) => "?".to_owned(),
        },
        Cell::Null => "null".to_owned(),
        Cell::Error(_) => "?".to_owned(),
    }
}

/// Elements of no rows, left in a batch whose elements went back to the reader.
fn empty_elements() -> cqlwire_vector::input::Elements {
    cqlwire_vector::input::Elements::F32(Vec::new())
}

#[cfg(test)]
mod tests;
