//! Values whose bytes are already serialized, and the rows that carry them to the driver.

use bytes::Bytes;
use scylla::cluster::metadata::ColumnType;
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::value::SerializeValue;
use scylla::serialize::writers::{CellWriter, RowWriter, WrittenCellProof};
use scylla::serialize::SerializationError;

use crate::types::ServerType;

/// The content of one bound value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cell {
    /// The serialized bytes of a value (section 6 of the native protocol spec, without the length).
    Bytes(Bytes),
    /// CQL `null`: the column is written empty (a tombstone for a regular column).
    Null,
    /// Not set: the column is left as it is (protocol v4 `unset`).
    Unset,
    /// The input value could not be converted to the column's type, for this reason: the run
    /// rejects its row with it before binding (binding such a value fails too).
    Invalid(String),
}

/// One bound value: bytes already converted for a CQL type, and that type.
///
/// As a [`SerializeValue`] it writes its bytes unchanged, after checking that the bind marker's type
/// is the type the bytes were made for (frozen flags aside); any other type is a serialization error,
/// so bytes are never sent under a type they were not made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    typ: ServerType,
    cell: Cell,
}

impl Value {
    /// A value of type `typ` with the serialized `bytes`.
    pub fn new(typ: ServerType, bytes: impl Into<Bytes>) -> Self {
        Value {
            typ,
            cell: Cell::Bytes(bytes.into()),
        }
    }

    /// A null value of type `typ`.
    pub fn null(typ: ServerType) -> Self {
        Value {
            typ,
            cell: Cell::Null,
        }
    }

    /// An unset value of type `typ` (the column keeps what it has).
    pub fn unset(typ: ServerType) -> Self {
        Value {
            typ,
            cell: Cell::Unset,
        }
    }

    /// A value that could not be made for `typ`, for `reason`: its row is rejected with it.
    pub fn invalid(typ: ServerType, reason: impl Into<String>) -> Self {
        Value {
            typ,
            cell: Cell::Invalid(reason.into()),
        }
    }

    /// The type the bytes were made for.
    pub fn cql_type(&self) -> &ServerType {
        &self.typ
    }

    /// The content.
    pub fn cell(&self) -> &Cell {
        &self.cell
    }

    /// The number of value bytes (0 for null and unset).
    pub fn len(&self) -> usize {
        match &self.cell {
            Cell::Bytes(bytes) => bytes.len(),
            Cell::Null | Cell::Unset | Cell::Invalid(_) => 0,
        }
    }

    /// Whether the value has no bytes (null, unset, or an empty value).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why a row could not be bound to the prepared statement.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BindError {
    /// The bytes were made for another type than the bind marker's.
    #[error("value made for {made_for} cannot be bound to a marker of type {marker}")]
    TypeMismatch {
        /// The type the bytes were made for, in CQL syntax.
        made_for: String,
        /// The bind marker's type, in CQL syntax (or the driver's debug form).
        marker: String,
    },
    /// The row has another number of values than the statement has bind markers.
    #[error("the row has {values} values for {markers} bind markers")]
    ValueCount {
        /// Values in the row.
        values: usize,
        /// Bind markers of the statement.
        markers: usize,
    },
    /// The input value could not be converted to the column's type.
    #[error("{0}")]
    Conversion(String),
    /// The value is longer than a CQL value can be (2 GiB - 1).
    #[error("a value of {0} bytes is longer than a CQL value can be")]
    TooLong(usize),
    /// A value of a named bind marker failed.
    #[error("column {column}: {error}")]
    Column {
        /// The bind marker's name.
        column: String,
        /// What failed.
        error: Box<BindError>,
    },
}

impl SerializeValue for Value {
    fn serialize<'b>(
        &self,
        typ: &ColumnType,
        writer: CellWriter<'b>,
    ) -> Result<WrittenCellProof<'b>, SerializationError> {
        if !self.typ.matches(typ) {
            let marker = match ServerType::new(typ.clone().into_owned()) {
                Ok(marker) => marker.to_string(),
                Err(_) => format!("{typ:?}"),
            };
            return Err(SerializationError::new(BindError::TypeMismatch {
                made_for: self.typ.to_string(),
                marker,
            }));
        }
        match &self.cell {
            Cell::Bytes(bytes) => writer
                .set_value(bytes)
                .map_err(|_| SerializationError::new(BindError::TooLong(bytes.len()))),
            Cell::Null => Ok(writer.set_null()),
            Cell::Unset => Ok(writer.set_unset()),
            Cell::Invalid(reason) => Err(SerializationError::new(BindError::Conversion(
                reason.clone(),
            ))),
        }
    }
}

/// One input row: its number in the input, a printable key for the rejects file, and one value per
/// bind marker in marker order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The row's number in the whole input (rows arrive in increasing order).
    pub number: u64,
    /// A short printable key (e.g. the primary key values) written to the rejects file.
    pub key: String,
    /// One value per bind marker, in marker order.
    pub values: Vec<Value>,
}

impl Row {
    /// The number of value bytes in the row.
    pub fn value_bytes(&self) -> usize {
        self.values.iter().map(Value::len).sum()
    }
}

impl SerializeRow for Row {
    fn serialize(
        &self,
        ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter,
    ) -> Result<(), SerializationError> {
        let markers = ctx.columns();
        if markers.len() != self.values.len() {
            return Err(SerializationError::new(BindError::ValueCount {
                values: self.values.len(),
                markers: markers.len(),
            }));
        }
        for (marker, value) in markers.iter().zip(&self.values) {
            value
                .serialize(marker.typ(), writer.make_cell_writer())
                .map_err(|error| {
                    let error = match error.downcast_ref::<BindError>() {
                        Some(error) => error.clone(),
                        None => return error,
                    };
                    SerializationError::new(BindError::Column {
                        column: marker.name().to_owned(),
                        error: Box::new(error),
                    })
                })?;
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::tests::{native, vector};
    use scylla::cluster::metadata::NativeType;
    use scylla::frame::response::result::{ColumnSpec, TableSpec};

    fn spec(name: &str, typ: ColumnType<'static>) -> ColumnSpec<'static> {
        ColumnSpec::owned(
            name.to_owned(),
            typ,
            TableSpec::owned("ks".into(), "t".into()),
        )
    }

    fn serialize(row: &Row, specs: &[ColumnSpec<'static>]) -> Result<Vec<u8>, SerializationError> {
        let mut buffer = Vec::new();
        let mut writer = RowWriter::new(&mut buffer);
        row.serialize(&RowSerializationContext::from_specs(specs), &mut writer)?;
        Ok(buffer)
    }

    #[test]
    fn a_row_writes_its_bytes_null_and_unset_unchanged() {
        let floats = ServerType::new(vector(NativeType::Float, 2)).unwrap();
        let int = ServerType::new(native(NativeType::Int)).unwrap();
        let vector_bytes: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let row = Row {
            number: 0,
            key: "k".into(),
            values: vec![
                Value::new(int.clone(), 7i32.to_be_bytes().to_vec()),
                Value::new(floats.clone(), vector_bytes.clone()),
                Value::null(int.clone()),
                Value::unset(int.clone()),
            ],
        };
        let specs = [
            spec("id", int.column_type().clone()),
            spec("v", floats.column_type().clone()),
            spec("a", int.column_type().clone()),
            spec("b", int.column_type().clone()),
        ];
        let mut expected = Vec::new();
        expected.extend_from_slice(&4i32.to_be_bytes());
        expected.extend_from_slice(&7i32.to_be_bytes());
        expected.extend_from_slice(&8i32.to_be_bytes());
        expected.extend_from_slice(&vector_bytes);
        expected.extend_from_slice(&(-1i32).to_be_bytes());
        expected.extend_from_slice(&(-2i32).to_be_bytes());
        assert_eq!(serialize(&row, &specs).unwrap(), expected);
        assert_eq!(row.value_bytes(), 12);
    }

    #[test]
    fn bytes_made_for_another_type_are_refused_with_the_column_name() {
        let floats = ServerType::new(vector(NativeType::Float, 2)).unwrap();
        let row = Row {
            number: 3,
            key: "k".into(),
            values: vec![Value::new(floats, vec![0u8; 8])],
        };
        let error = serialize(&row, &[spec("v", vector(NativeType::Double, 2))]).unwrap_err();
        assert_eq!(
            error.downcast_ref::<BindError>().unwrap().to_string(),
            "column v: value made for vector<float, 2> cannot be bound to a marker of type vector<double, 2>"
        );
    }

    #[test]
    fn a_row_with_the_wrong_number_of_values_is_refused() {
        let int = ServerType::new(native(NativeType::Int)).unwrap();
        let row = Row {
            number: 0,
            key: String::new(),
            values: vec![Value::null(int.clone())],
        };
        let specs = [
            spec("a", int.column_type().clone()),
            spec("b", int.column_type().clone()),
        ];
        let error = serialize(&row, &specs).unwrap_err();
        let error = error.downcast_ref::<BindError>().unwrap();
        assert_eq!(error.to_string(), "the row has 1 values for 2 bind markers");
    }
}
