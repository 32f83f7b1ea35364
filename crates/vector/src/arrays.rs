//! CQL value bytes, as a server sends them in a page of rows, straight into Arrow arrays: the
//! inverse of [`crate::columns`] (Arrow columns to CQL values), as `unload` writes them. No value becomes an object or text on the way (`inet` aside, whose
//! Arrow form is its text); a vector's big-endian elements are byte-swapped into the child array of
//! a `fixed_size_list`.
//!
//! | CQL | Arrow |
//! | --- | --- |
//! | `tinyint`, `smallint`, `int`, `bigint`, `counter` | `int8`, `int16`, `int32`, `int64`, `int64` |
//! | `float`, `double`, `boolean` | `float32`, `float64`, `bool` |
//! | `text`, `ascii`, `varchar` | `utf8` |
//! | `blob` | `binary` |
//! | `uuid`, `timeuuid` | `fixed_size_binary(16)` (the 16 bytes in network order) |
//! | `timestamp` | `timestamp[ms, UTC]` |
//! | `date`, `time` | `date32`, `time64[ns]` |
//! | `inet` | `utf8` (the address as text) |
//! | `vector<T, N>` | `fixed_size_list<T', N>` |
//! | `list<T>`, `set<T>` | `list<T'>` |
//! | `map<K, V>` | `map<K', V'>` |
//! | `tuple<…>` | `struct` with fields `0`, `1`, … |
//! | user-defined type | `struct` with the type's fields |
//!
//! `varint`, `decimal` and `duration` have no exact Arrow form here: a column of those types is
//! refused. The *empty* value of a native type (zero bytes, legal for e.g. `int`) becomes null.

use std::sync::Arc;

use arrow_array::{make_array, ArrayRef};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBufferBuilder};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use cqlwire_codec::cursor::{Cursor, DecodeError, DecodeErrorKind};
use cqlwire_codec::types::{CqlType, NativeType};
use cqlwire_codec::vint;

/// Why values could not become an Arrow array: a type without an Arrow form here, or a value that
/// is not one of its type (which a server never sends).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArrayError {
    /// A native type without an exact Arrow form here (`varint`, `decimal`, `duration`).
    #[error("{0} has no exact Arrow type here")]
    NoExactType(NativeType),
    /// A vector of more elements than an Arrow list can hold.
    #[error("{0} is too long for Arrow")]
    TooLong(CqlType),
    /// Another type without an Arrow form.
    #[error("{0} has no Arrow type here")]
    NoType(CqlType),
    /// A value that is not one of its type: what is wrong, at which byte of the value, where in it.
    #[error(transparent)]
    Value(#[from] DecodeError),
    /// More than one array's 32-bit offsets can count: `2^31 items`, `2 GiB of values`.
    #[error("more than {0} in one page")]
    TooLarge(&'static str),
    /// Arrow refused the array.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
}

impl ArrayError {
    /// Whether the error is about the type (no Arrow form), rather than about a value.
    pub fn is_unsupported_type(&self) -> bool {
        matches!(
            self,
            ArrayError::NoExactType(_) | ArrayError::TooLong(_) | ArrayError::NoType(_)
        )
    }
}

/// The Arrow array of `values` of type `ty`, each given as its CQL value bytes (`None` for null):
/// what `unload` writes for a column of that type (see the module's table of types).
pub fn arrow_array(ty: &CqlType, values: &[Option<&[u8]>]) -> Result<ArrayRef> {
    let mut builder = ArrayBuilder::new(ty)?;
    for value in values {
        builder.append(*value)?;
    }
    builder.finish()
}

type Result<T> = std::result::Result<T, ArrayError>;

/// A value that is not one of its type, found at `offset` of the value.
fn malformed(offset: usize, message: impl Into<String>) -> ArrayError {
    ArrayError::Value(DecodeError::new(
        DecodeErrorKind::Malformed,
        message,
        offset,
        "",
    ))
}

/// An error of the item at `offset` of an enclosing value, under `step`, seen from that value.
fn nested(error: ArrayError, offset: usize, step: impl FnOnce() -> String) -> ArrayError {
    match error {
        ArrayError::Value(error) => ArrayError::Value(error.within(offset, &step())),
        other => other,
    }
}

/// Builds the Arrow array of one column's values (and of the elements and fields inside them),
/// one value's CQL bytes at a time; [`finish`](ArrayBuilder::finish) hands the array over and
/// starts again, so that one builder serves every page of a column.
#[derive(Debug)]
pub struct ArrayBuilder(Builder);

impl ArrayBuilder {
    /// A builder of the Arrow form of `ty` (see the module's table), or why it has none.
    pub fn new(ty: &CqlType) -> Result<ArrayBuilder> {
        Builder::new(ty).map(ArrayBuilder)
    }

    /// A builder that keeps each value's CQL bytes as they are (Arrow `binary`).
    pub fn raw() -> ArrayBuilder {
        ArrayBuilder(Builder::raw())
    }

    /// The Arrow type of the arrays this builder makes.
    pub fn data_type(&self) -> DataType {
        self.0.data_type()
    }

    /// Appends one value: its bytes, or `None` for null.
    pub fn append(&mut self, value: Option<&[u8]>) -> Result<()> {
        self.0.append(value)
    }

    /// The array of the values appended since the last call; the builder starts empty again.
    pub fn finish(&mut self) -> Result<ArrayRef> {
        self.0.finish()
    }
}

/// Appends the values of one column (and of the elements and fields inside them) to Arrow buffers.
#[derive(Debug)]
enum Builder {
    /// Fixed-width big-endian numbers into little-endian primitives; `date` flips the top bit (a
    /// CQL date counts days from 2^31, `date32` from 0).
    Number {
        width: usize,
        date: bool,
        data_type: DataType,
        values: Vec<u8>,
        nulls: NullBufferBuilder,
    },
    /// `boolean`.
    Boolean {
        values: BooleanBufferBuilder,
        nulls: NullBufferBuilder,
    },
    /// Variable-length bytes: `utf8` (checked) or `binary` (any bytes, also the raw CQL value of a
    /// column of any type); `inet` is written as its text.
    Bytes {
        kind: BytesKind,
        offsets: Vec<i32>,
        values: Vec<u8>,
        nulls: NullBufferBuilder,
    },
    /// `uuid` and `timeuuid`: 16 bytes each.
    Uuid {
        values: Vec<u8>,
        nulls: NullBufferBuilder,
    },
    /// `list` and `set`.
    List {
        field: Arc<Field>,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
        element: Box<Builder>,
    },
    /// `vector`: `dimension` elements, each `element_size` bytes or vint-prefixed.
    Vector {
        field: Arc<Field>,
        dimension: usize,
        element_size: Option<usize>,
        nulls: NullBufferBuilder,
        element: Box<Builder>,
    },
    /// `map`.
    Map {
        entries: Arc<Field>,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
        keys: Box<Builder>,
        values: Box<Builder>,
    },
    /// `tuple` and user-defined types.
    Struct {
        fields: Fields,
        nulls: NullBufferBuilder,
        children: Vec<Builder>,
    },
}

/// The bytes of fixed-width values as a buffer aligned for any of their types: a `Vec<u8>` is
/// taken as it is when its memory happens to be 8-aligned (what the allocator gives), else copied;
/// an empty one (whose pointer is 1) would fail Arrow's alignment check.
fn aligned(values: Vec<u8>) -> Buffer {
    if values.as_ptr().align_offset(8) == 0 {
        Buffer::from_vec(values)
    } else {
        Buffer::from_slice_ref(&values)
    }
}

/// What a [`Builder::Bytes`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BytesKind {
    /// UTF-8 text (`text`, `varchar`, `ascii`).
    Utf8,
    /// Any bytes.
    Binary,
    /// `inet`: 4 or 16 address bytes, written as text.
    Inet,
}

impl Builder {
    /// A builder of the Arrow form of `ty`, or why it has none.
    fn new(ty: &CqlType) -> Result<Builder> {
        use NativeType as N;
        let number = |width, data_type| Builder::Number {
            width,
            date: false,
            data_type,
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        };
        let bytes = |kind| Builder::Bytes {
            kind,
            offsets: vec![0],
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        };
        Ok(match ty {
            CqlType::Native(native) => match native {
                N::TinyInt => number(1, DataType::Int8),
                N::SmallInt => number(2, DataType::Int16),
                N::Int => number(4, DataType::Int32),
                N::BigInt | N::Counter => number(8, DataType::Int64),
                N::Float => number(4, DataType::Float32),
                N::Double => number(8, DataType::Float64),
                N::Timestamp => number(
                    8,
                    DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                ),
                N::Time => number(8, DataType::Time64(TimeUnit::Nanosecond)),
                N::Date => Builder::Number {
                    width: 4,
                    date: true,
                    data_type: DataType::Date32,
                    values: Vec::new(),
                    nulls: NullBufferBuilder::new(0),
                },
                N::Boolean => Builder::Boolean {
                    values: BooleanBufferBuilder::new(0),
                    nulls: NullBufferBuilder::new(0),
                },
                N::Text | N::Ascii => bytes(BytesKind::Utf8),
                N::Blob => bytes(BytesKind::Binary),
                N::Inet => bytes(BytesKind::Inet),
                N::Uuid | N::TimeUuid => Builder::Uuid {
                    values: Vec::new(),
                    nulls: NullBufferBuilder::new(0),
                },
                _ => return Err(ArrayError::NoExactType(*native)),
            },
            CqlType::List(element) | CqlType::Set(element) => {
                let element = Builder::new(element)?;
                Builder::List {
                    field: Arc::new(Field::new("item", element.data_type(), true)),
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                    element: Box::new(element),
                }
            }
            CqlType::Vector(element_type, dimension) => {
                let element = Builder::new(element_type)?;
                if i32::try_from(*dimension).is_err() {
                    return Err(ArrayError::TooLong(ty.clone()));
                }
                Builder::Vector {
                    field: Arc::new(Field::new("item", element.data_type(), true)),
                    dimension: *dimension,
                    element_size: element_type.vector_element_size(),
                    nulls: NullBufferBuilder::new(0),
                    element: Box::new(element),
                }
            }
            CqlType::Map(key, value) => {
                let keys = Builder::new(key)?;
                let values = Builder::new(value)?;
                let entries = Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", keys.data_type(), false),
                        Field::new("value", values.data_type(), true),
                    ])),
                    false,
                );
                Builder::Map {
                    entries: Arc::new(entries),
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                    keys: Box::new(keys),
                    values: Box::new(values),
                }
            }
            CqlType::Tuple(components) => {
                let children = components
                    .iter()
                    .map(Builder::new)
                    .collect::<Result<Vec<_>>>()?;
                let fields = children
                    .iter()
                    .enumerate()
                    .map(|(i, child)| Field::new(i.to_string(), child.data_type(), true))
                    .collect();
                Builder::Struct {
                    fields,
                    nulls: NullBufferBuilder::new(0),
                    children,
                }
            }
            CqlType::Udt(udt) => {
                let children = udt
                    .fields
                    .iter()
                    .map(|(_, ty)| Builder::new(ty))
                    .collect::<Result<Vec<_>>>()?;
                let fields = udt
                    .fields
                    .iter()
                    .zip(&children)
                    .map(|((name, _), child)| Field::new(name, child.data_type(), true))
                    .collect();
                Builder::Struct {
                    fields,
                    nulls: NullBufferBuilder::new(0),
                    children,
                }
            }
            other => return Err(ArrayError::NoType(other.clone())),
        })
    }

    /// A builder that keeps each value's CQL bytes as they are (Arrow `binary`).
    fn raw() -> Builder {
        Builder::Bytes {
            kind: BytesKind::Binary,
            offsets: vec![0],
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }

    /// The Arrow type of the arrays this builder makes.
    fn data_type(&self) -> DataType {
        match self {
            Builder::Number { data_type, .. } => data_type.clone(),
            Builder::Boolean { .. } => DataType::Boolean,
            Builder::Bytes { kind, .. } => match kind {
                BytesKind::Binary => DataType::Binary,
                BytesKind::Utf8 | BytesKind::Inet => DataType::Utf8,
            },
            Builder::Uuid { .. } => DataType::FixedSizeBinary(16),
            Builder::List { field, .. } => DataType::List(field.clone()),
            Builder::Vector {
                field, dimension, ..
            } => DataType::FixedSizeList(field.clone(), *dimension as i32),
            Builder::Map { entries, .. } => DataType::Map(entries.clone(), false),
            Builder::Struct { fields, .. } => DataType::Struct(fields.clone()),
        }
    }

    /// Appends one value: its bytes, or `None` for null.
    fn append(&mut self, value: Option<&[u8]>) -> Result<()> {
        let Some(bytes) = value else {
            self.append_null();
            return Ok(());
        };
        match self {
            Builder::Number {
                width,
                date,
                values,
                nulls,
                ..
            } => {
                if bytes.is_empty() {
                    return {
                        self.append_null();
                        Ok(())
                    };
                }
                if bytes.len() != *width {
                    return Err(malformed(
                        0,
                        format!(
                            "a value of {} bytes where {width} were expected",
                            bytes.len()
                        ),
                    ));
                }
                let start = values.len();
                values.extend(bytes.iter().rev());
                if *date {
                    values[start + 3] ^= 0x80;
                }
                nulls.append_non_null();
            }
            Builder::Boolean { values, nulls } => {
                if bytes.is_empty() {
                    self.append_null();
                    return Ok(());
                }
                if bytes.len() != 1 {
                    return Err(malformed(
                        0,
                        format!("a boolean of {} bytes instead of 1", bytes.len()),
                    ));
                }
                values.append(bytes[0] != 0);
                nulls.append_non_null();
            }
            Builder::Bytes {
                kind,
                offsets,
                values,
                nulls,
            } => {
                match kind {
                    BytesKind::Binary => values.extend_from_slice(bytes),
                    BytesKind::Utf8 => {
                        let text = std::str::from_utf8(bytes).map_err(|e| {
                            malformed(e.valid_up_to(), format!("text that is not UTF-8: {e}"))
                        })?;
                        values.extend_from_slice(text.as_bytes());
                    }
                    BytesKind::Inet => {
                        let address = match bytes.len() {
                            0 => {
                                self.append_null();
                                return Ok(());
                            }
                            4 => std::net::IpAddr::from(
                                <[u8; 4]>::try_from(bytes).unwrap_or_default(),
                            ),
                            16 => std::net::IpAddr::from(
                                <[u8; 16]>::try_from(bytes).unwrap_or_default(),
                            ),
                            n => return Err(malformed(0, format!("an inet of {n} bytes"))),
                        };
                        values.extend_from_slice(address.to_string().as_bytes());
                    }
                }
                offsets.push(offset(values.len())?);
                nulls.append_non_null();
            }
            Builder::Uuid { values, nulls } => match bytes.len() {
                0 => self.append_null(),
                16 => {
                    values.extend_from_slice(bytes);
                    nulls.append_non_null();
                }
                n => return Err(malformed(0, format!("a uuid of {n} bytes"))),
            },
            Builder::List {
                offsets,
                nulls,
                element,
                ..
            } => {
                let mut reader = Reader::new(bytes);
                let count = count(&mut reader)?;
                for item in 0..count {
                    let (at, value) = item_value(&mut reader)?;
                    element
                        .append(value)
                        .map_err(|e| nested(e, at, || format!("element {item}")))?;
                }
                reader.expect_end("the list")?;
                push_offset(offsets, count)?;
                nulls.append_non_null();
            }
            Builder::Vector {
                dimension,
                element_size,
                nulls,
                element,
                ..
            } => {
                match element_size {
                    Some(size) => {
                        if Some(bytes.len()) != size.checked_mul(*dimension) {
                            return Err(malformed(
                                0,
                                format!(
                                    "a vector of {} bytes, not {dimension} elements of {size}",
                                    bytes.len()
                                ),
                            ));
                        }
                        element.append_fixed_run(bytes, *size)?;
                    }
                    None => {
                        let mut at = 0;
                        for item in 0..*dimension {
                            let rest = &bytes[at..];
                            let (length, used) = vint::decode_unsigned(rest).map_err(|e| {
                                malformed(at, format!("a vector element length: {e}"))
                            })?;
                            let rest = &rest[used..];
                            let length = usize::try_from(length)
                                .ok()
                                .filter(|&n| n <= rest.len())
                                .ok_or_else(|| {
                                    malformed(
                                        at,
                                        format!(
                                            "a vector element of {length} bytes with {} left",
                                            rest.len()
                                        ),
                                    )
                                })?;
                            at += used;
                            element
                                .append(Some(&rest[..length]))
                                .map_err(|e| nested(e, at, || format!("element {item}")))?;
                            at += length;
                        }
                        if at != bytes.len() {
                            return Err(malformed(
                                at,
                                format!(
                                    "{} bytes after the vector's {dimension} elements",
                                    bytes.len() - at
                                ),
                            ));
                        }
                    }
                }
                nulls.append_non_null();
            }
            Builder::Map {
                offsets,
                nulls,
                keys,
                values,
                ..
            } => {
                let mut reader = Reader::new(bytes);
                let count = count(&mut reader)?;
                for entry in 0..count {
                    let (at, key) = item_value(&mut reader)?;
                    let key = key.ok_or_else(|| malformed(at - 4, "a null map key"))?;
                    keys.append(Some(key))
                        .map_err(|e| nested(e, at, || format!("key {entry}")))?;
                    let (at, value) = item_value(&mut reader)?;
                    values
                        .append(value)
                        .map_err(|e| nested(e, at, || format!("value {entry}")))?;
                }
                reader.expect_end("the map")?;
                push_offset(offsets, count)?;
                nulls.append_non_null();
            }
            Builder::Struct {
                fields,
                nulls,
                children,
            } => {
                // Fields may end early: the missing ones are null.
                let mut reader = Reader::new(bytes);
                for (field, child) in fields.iter().zip(children.iter_mut()) {
                    if reader.left() == 0 {
                        child.append_null();
                    } else {
                        let (at, value) = item_value(&mut reader)?;
                        child
                            .append(value)
                            .map_err(|e| nested(e, at, || format!("field {}", field.name())))?;
                    }
                }
                reader.expect_end("the fields")?;
                nulls.append_non_null();
            }
        }
        Ok(())
    }

    /// Appends the elements of a vector of fixed-size elements: `bytes` is `size`-byte records.
    fn append_fixed_run(&mut self, bytes: &[u8], size: usize) -> Result<()> {
        match self {
            Builder::Number {
                width,
                date: false,
                values,
                nulls,
                ..
            } if *width == size => {
                let start = values.len();
                values.resize(start + bytes.len(), 0);
                elements_to_native(bytes, &mut values[start..], size);
                nulls.append_n_non_nulls(bytes.len() / size);
                Ok(())
            }
            _ => bytes
                .chunks_exact(size)
                .try_for_each(|element| self.append(Some(element))),
        }
    }

    /// Appends a null (and the placeholder values a fixed-size parent needs below it).
    fn append_null(&mut self) {
        match self {
            Builder::Number {
                width,
                values,
                nulls,
                ..
            } => {
                values.resize(values.len() + *width, 0);
                nulls.append_null();
            }
            Builder::Boolean { values, nulls } => {
                values.append(false);
                nulls.append_null();
            }
            Builder::Bytes { offsets, nulls, .. }
            | Builder::List { offsets, nulls, .. }
            | Builder::Map { offsets, nulls, .. } => {
                offsets.push(offsets.last().copied().unwrap_or(0));
                nulls.append_null();
            }
            Builder::Uuid { values, nulls } => {
                values.resize(values.len() + 16, 0);
                nulls.append_null();
            }
            Builder::Vector {
                dimension,
                nulls,
                element,
                ..
            } => {
                for _ in 0..*dimension {
                    element.append_null();
                }
                nulls.append_null();
            }
            Builder::Struct {
                nulls, children, ..
            } => {
                children.iter_mut().for_each(Builder::append_null);
                nulls.append_null();
            }
        }
    }

    /// The array of the values appended since the last call; the builder starts empty again.
    fn finish(&mut self) -> Result<ArrayRef> {
        let data_type = self.data_type();
        let builder = match self {
            Builder::Number { values, nulls, .. } | Builder::Uuid { values, nulls } => {
                let nulls = nulls.finish();
                let len = nulls
                    .as_ref()
                    .map_or_else(|| values.len() / fixed_width(&data_type), |n| n.len());
                ArrayDataBuilder::new(data_type)
                    .len(len)
                    .add_buffer(aligned(std::mem::take(values)))
                    .nulls(nulls)
            }
            Builder::Boolean { values, nulls } => {
                let values = values.finish();
                ArrayDataBuilder::new(data_type)
                    .len(values.len())
                    .add_buffer(values.into_inner())
                    .nulls(nulls.finish())
            }
            Builder::Bytes {
                offsets,
                values,
                nulls,
                ..
            } => {
                let offsets = std::mem::replace(offsets, vec![0]);
                ArrayDataBuilder::new(data_type)
                    .len(offsets.len() - 1)
                    .add_buffer(Buffer::from_vec(offsets))
                    .add_buffer(Buffer::from_vec(std::mem::take(values)))
                    .nulls(nulls.finish())
            }
            Builder::List {
                offsets,
                nulls,
                element,
                ..
            } => {
                let offsets = std::mem::replace(offsets, vec![0]);
                ArrayDataBuilder::new(data_type)
                    .len(offsets.len() - 1)
                    .add_buffer(Buffer::from_vec(offsets))
                    .add_child_data(element.finish()?.to_data())
                    .nulls(nulls.finish())
            }
            Builder::Vector {
                dimension,
                nulls,
                element,
                ..
            } => {
                let child = element.finish()?.to_data();
                ArrayDataBuilder::new(data_type)
                    .len(child.len() / (*dimension).max(1))
                    .add_child_data(child)
                    .nulls(nulls.finish())
            }
            Builder::Map {
                entries,
                offsets,
                nulls,
                keys,
                values,
            } => {
                let offsets = std::mem::replace(offsets, vec![0]);
                let keys = keys.finish()?.to_data();
                let entry_data = ArrayDataBuilder::new(entries.data_type().clone())
                    .len(keys.len())
                    .add_child_data(keys)
                    .add_child_data(values.finish()?.to_data())
                    .build()
                    .map_err(ArrayError::from)?;
                ArrayDataBuilder::new(data_type)
                    .len(offsets.len() - 1)
                    .add_buffer(Buffer::from_vec(offsets))
                    .add_child_data(entry_data)
                    .nulls(nulls.finish())
            }
            Builder::Struct {
                nulls, children, ..
            } => {
                let nulls = nulls.finish();
                let mut builder = ArrayDataBuilder::new(data_type);
                let mut len = nulls.as_ref().map(|n| n.len());
                for child in children.iter_mut() {
                    let data = child.finish()?.to_data();
                    len.get_or_insert(data.len());
                    builder = builder.add_child_data(data);
                }
                builder.len(len.unwrap_or(0)).nulls(nulls)
            }
        };
        builder.build().map(make_array).map_err(ArrayError::from)
    }
}

/// The byte width of a [`Builder::Number`] or [`Builder::Uuid`] type.
fn fixed_width(data_type: &DataType) -> usize {
    data_type.primitive_width().unwrap_or(16).max(1)
}

/// Ends a list or map value of `count` items: its end offset after the previous one.
fn push_offset(offsets: &mut Vec<i32>, count: usize) -> Result<()> {
    let last = offsets.last().copied().unwrap_or(0);
    let end = last
        .checked_add(offset(count)?)
        .ok_or(ArrayError::TooLarge("2^31 items"))?;
    offsets.push(end);
    Ok(())
}

/// A length as an Arrow offset.
fn offset(length: usize) -> Result<i32> {
    i32::try_from(length).map_err(|_| ArrayError::TooLarge("2 GiB of values"))
}

/// The elements of vector values of a fixed-size numeric type (`size` bytes each, big-endian as
/// CQL sends them) into `dst` in native byte order, as Arrow and NumPy hold them: `src` and `dst`
/// have the same length, a whole number of `size`-byte records.
pub fn elements_to_native(src: &[u8], dst: &mut [u8], size: usize) {
    match size {
        4 => {
            for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                let word = u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
                d.copy_from_slice(&word.to_ne_bytes());
            }
        }
        8 => {
            for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
                let mut word = [0u8; 8];
                word.copy_from_slice(s);
                d.copy_from_slice(&u64::from_be_bytes(word).to_ne_bytes());
            }
        }
        _ if cfg!(target_endian = "big") => dst.copy_from_slice(src),
        _ => {
            for (d, s) in dst.chunks_exact_mut(size).zip(src.chunks_exact(size)) {
                d.iter_mut().zip(s.iter().rev()).for_each(|(d, s)| *d = *s);
            }
        }
    }
}

/// The codec's cursor over the `[int n]` and `[bytes]` items of a collection, tuple or UDT value.
type Reader<'a> = Cursor<'a, &'static str>;

/// An element count, never more than the bytes left could hold (4 bytes an item at least).
fn count(reader: &mut Reader<'_>) -> Result<usize> {
    let count = reader.count_at(reader.pos(), reader.bytes().len(), "element count", 4)?;
    reader.array::<4>("element count")?;
    Ok(count)
}

/// The next `[bytes]` item and the offset of its bytes: `None` for null (a negative length).
fn item_value<'a>(reader: &mut Reader<'a>) -> Result<(usize, Option<&'a [u8]>)> {
    let length = reader.i32("item length")?;
    let at = reader.pos();
    let Ok(length) = usize::try_from(length) else {
        return Ok((at, None));
    };
    Ok((at, Some(reader.take(length, "item")?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Int16Type, Int32Type, Int64Type};
    use arrow_array::Array;
    use cqlwire_codec::types::{parse_type, UdtRegistry};
    use cqlwire_codec::value;

    fn ty(text: &str) -> CqlType {
        let mut udts = UdtRegistry::new();
        udts.declare("addr(street text, zip int)").unwrap();
        parse_type(text, &udts).unwrap()
    }

    /// The codec's bytes of the literal, decoded by a builder of the type.
    fn array(type_text: &str, literals: &[Option<&str>]) -> ArrayRef {
        let cql = ty(type_text);
        let mut builder = Builder::new(&cql).unwrap();
        for literal in literals {
            let bytes = literal.map(|text| {
                let value = value::cql::parse_cql(&cql, text).unwrap();
                value::encode(&cql, &value).unwrap()
            });
            builder.append(bytes.as_deref()).unwrap();
        }
        let array = builder.finish().unwrap();
        assert_eq!(array.data_type(), &builder.data_type());
        array
    }

    #[test]
    fn a_page_without_rows_gives_empty_arrays_of_every_width() {
        for type_text in [
            "bigint",
            "double",
            "int",
            "vector<float, 4>",
            "uuid",
            "text",
        ] {
            let array = array(type_text, &[]);
            assert_eq!(array.len(), 0, "{type_text}");
        }
        let mut builder = Builder::new(&ty("bigint")).unwrap();
        builder.append(Some(&7i64.to_be_bytes())).unwrap();
        builder.finish().unwrap();
        assert_eq!(builder.finish().unwrap().len(), 0);
    }

    #[test]
    fn vectors_become_fixed_size_lists_of_native_numbers() {
        let floats = array(
            "vector<float, 3>",
            &[Some("[1.5, -2, 3e38]"), None, Some("[0, NaN, -0.0]")],
        );
        let floats = floats.as_fixed_size_list();
        assert_eq!(floats.len(), 3);
        assert!(floats.is_null(1));
        let values = floats.values().as_primitive::<Float32Type>();
        assert_eq!(&values.values()[..3], &[1.5, -2.0, 3e38]);
        assert!(values.value(7).is_nan());
        assert_eq!(values.value(8).to_bits(), (-0.0f32).to_bits());

        let small = array("vector<smallint, 2>", &[Some("[1, -2]"), Some("[300, 0]")]);
        let small = small
            .as_fixed_size_list()
            .values()
            .as_primitive::<Int16Type>();
        assert_eq!(small.values().as_ref(), &[1, -2, 300, 0]);
    }

    #[test]
    fn elements_are_swapped_to_native_order() {
        let src = [0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0];
        let mut dst = [0; 8];
        elements_to_native(&src, &mut dst, 4);
        let floats: Vec<f32> = dst
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(floats, [1.0, -2.0]);
        elements_to_native(&src, &mut dst, 8);
        assert_eq!(u64::from_ne_bytes(dst), 0x3f80_0000_c000_0000);
        elements_to_native(&src[..6], &mut dst[..6], 2);
        assert_eq!(i16::from_ne_bytes([dst[0], dst[1]]), 0x3f80);
    }

    #[test]
    fn natives_keep_their_values() {
        let ints = array("int", &[Some("7"), Some("-2147483648"), None]);
        let ints = ints.as_primitive::<Int32Type>();
        assert_eq!(ints.value(0), 7);
        assert_eq!(ints.value(1), i32::MIN);
        assert!(ints.is_null(2));
        let stamps = array("timestamp", &[Some("'2024-01-01 12:00:00.000Z'")]);
        let stamps = stamps.as_primitive::<arrow_array::types::TimestampMillisecondType>();
        assert_eq!(stamps.value(0), 1_704_110_400_000);
        let dates = array("date", &[Some("'1970-01-02'"), Some("'1969-12-31'")]);
        let dates = dates.as_primitive::<arrow_array::types::Date32Type>();
        assert_eq!(dates.values().as_ref(), &[1, -1]);
        let text = array("text", &[Some("'héllo'"), None, Some("''")]);
        let text = text.as_string::<i32>();
        assert_eq!(text.value(0), "héllo");
        assert!(text.is_null(1));
        assert_eq!(text.value(2), "");
        let uuids = array("uuid", &[Some("123e4567-e89b-12d3-a456-426614174000")]);
        assert_eq!(uuids.as_fixed_size_binary().value(0)[..2], [0x12, 0x3e]);
        let inet = array("inet", &[Some("'10.0.0.1'"), Some("'::1'")]);
        assert_eq!(inet.as_string::<i32>().value(1), "::1");
    }

    #[test]
    fn collections_tuples_and_udts_nest() {
        let lists = array("list<bigint>", &[Some("[1, 2]"), Some("[]"), None]);
        let lists = lists.as_list::<i32>();
        assert_eq!(lists.value_offsets(), &[0, 2, 2, 2]);
        assert!(lists.is_null(2));
        assert_eq!(
            lists.values().as_primitive::<Int64Type>().values().as_ref(),
            &[1, 2]
        );
        let maps = array("map<text, int>", &[Some("{'a': 1, 'b': null}")]);
        let maps = maps.as_map();
        assert_eq!(maps.keys().as_string::<i32>().value(1), "b");
        assert!(maps.values().is_null(1));
        let tuples = array("tuple<int, text>", &[Some("(1, 'x')"), None]);
        let tuples = tuples.as_struct();
        assert_eq!(tuples.column_names(), ["0", "1"]);
        assert!(tuples.is_null(1));
        let udts = array("frozen<addr>", &[Some("{street: 'x', zip: 5}")]);
        let udts = udts.as_struct();
        assert_eq!(udts.column_names(), ["street", "zip"]);
        assert_eq!(udts.column(1).as_primitive::<Int32Type>().value(0), 5);
    }

    #[test]
    fn malformed_values_are_errors_not_panics() {
        let mut builder = Builder::new(&ty("list<int>")).unwrap();
        for bad in [
            &[0u8, 0, 0][..],
            &[0x7f, 0xff, 0xff, 0xff],
            &[0, 0, 0, 1, 0, 0, 0, 9, 1],
            &[0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1, 9],
        ] {
            assert!(builder.append(Some(bad)).is_err(), "{bad:?}");
        }
        let mut vector = Builder::new(&ty("vector<smallint, 2>")).unwrap();
        assert!(vector.append(Some(&[0x02, 0x00, 0x01, 0x09])).is_err());
        assert!(vector.append(Some(&[0xff])).is_err());
        let mut floats = Builder::new(&ty("vector<float, 2>")).unwrap();
        assert!(floats.append(Some(&[0; 7])).is_err());
        let mut text = Builder::new(&ty("text")).unwrap();
        assert!(text.append(Some(&[0xff])).is_err());
        let bad = [0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 3, 1, 2, 3];
        let error = builder.append(Some(&bad)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a value of 3 bytes where 4 were expected at byte 16 (element 1)"
        );
        let mut udt = Builder::new(&ty("list<frozen<addr>>")).unwrap();
        let error = udt
            .append(Some(&[0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 0, 1, 0xff, 7]))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "text that is not UTF-8: invalid utf-8 sequence of 1 bytes from index 0 at byte 12 \
             (element 0 / field street)"
        );
        assert!(!error.is_unsupported_type());
        assert_eq!(
            ArrayBuilder::new(&ty("decimal")).unwrap_err().to_string(),
            "decimal has no exact Arrow type here"
        );
        assert!(Builder::new(&ty("decimal")).is_err());
        assert!(Builder::new(&ty("list<varint>")).is_err());
    }
}
