//! What a filtered case needs of the table on Apache Cassandra 5.0.9: the column the filter
//! restricts, its SAI index, the `WHERE` condition of the search, and a reader that adds the
//! column to the training rows as they are loaded.
//!
//! Cassandra refuses `WHERE id >= N` with `ORDER BY … ANN OF` on the partition key (and no index can
//! be made on it), so an int filter restricts a regular copy of the id, `id_int`, with its own SAI
//! index; a label filter restricts `labels` (from `scalar_labels.parquet`, looked up by id) with an
//! SAI index on it (docs/bench.md, "On Apache Cassandra 5.0.9").

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use cqlwire_codec::types::Identifier;
use cqlwire_vector::input::{Batch, BatchReader, ElementType, Elements, InputError};

use crate::folder::Filter;
use crate::truth::ScalarLabels;

/// The regular column holding a copy of each row's id, for an int filter.
pub const INT_COLUMN: &str = "id_int";

/// The column holding each row's label, for a label filter.
pub const LABEL_COLUMN: &str = "labels";

/// The training set's id column.
const ID_COLUMN: &str = "id";

/// A filter as the table and the query carry it.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterColumn {
    /// The filter.
    pub filter: Filter,
    /// The restricted column ([`INT_COLUMN`] or [`LABEL_COLUMN`]).
    pub column: &'static str,
    /// The condition of the search's `WHERE`, its value written in (the statement is prepared
    /// once per case): `id_int >= 3`, `labels = 'label_20p'`.
    pub predicate: String,
}

impl FilterColumn {
    /// The column and condition of `filter` over a training set of `size` rows (the int filter's
    /// bound is `int(size × rate)`, as VectorDBBench computes it).
    pub fn new(filter: Filter, size: u64) -> FilterColumn {
        match (filter.int_value(size), filter.label_value()) {
            (Some(value), _) => FilterColumn {
                filter,
                column: INT_COLUMN,
                predicate: format!("{INT_COLUMN} >= {value}"),
            },
            (None, label) => FilterColumn {
                filter,
                column: LABEL_COLUMN,
                predicate: format!(
                    "{LABEL_COLUMN} = '{}'",
                    label.unwrap_or_default().replace('\'', "''")
                ),
            },
        }
    }

    /// The `CREATE CUSTOM INDEX` of the SAI index `name` on the filtered column of
    /// `keyspace.table` (names as in the schema).
    pub fn index_statement(&self, keyspace: &str, table: &str, name: &str) -> String {
        format!(
            "CREATE CUSTOM INDEX {} ON {}.{} ({}) USING 'StorageAttachedIndex'",
            Identifier(name),
            Identifier(keyspace),
            Identifier(table),
            Identifier(self.column)
        )
    }
}

/// What the added column holds.
enum Added {
    /// A copy of the id.
    Id,
    /// The id's label (null when the labels file has none for it).
    Label(ScalarLabels),
}

/// A training-set reader whose rows carry one more column: [`INT_COLUMN`] (the id again) or
/// [`LABEL_COLUMN`] (the id's label), made of the `id` column of each batch.
pub struct WithFilterColumn {
    inner: Box<dyn BatchReader>,
    schema: SchemaRef,
    added: Added,
}

impl WithFilterColumn {
    /// Adds `column`'s values to `inner`'s rows (`labels` is needed for [`LABEL_COLUMN`]).
    /// Refuses a reader without an `id` column of 64-bit integers.
    pub fn new(
        inner: Box<dyn BatchReader>,
        column: &FilterColumn,
        labels: Option<ScalarLabels>,
    ) -> Result<WithFilterColumn, InputError> {
        let no_id = || {
            InputError::Unsupported(
                "a filtered case needs a training set with an id column".to_owned(),
            )
        };
        let schema = inner.passthrough_schema().ok_or_else(no_id)?;
        match schema.field_with_name(ID_COLUMN).map(Field::data_type) {
            Ok(DataType::Int64) => {}
            Ok(other) => {
                return Err(InputError::Unsupported(format!(
                    "the training set's id column is {other}, not int64"
                )))
            }
            Err(_) => return Err(no_id()),
        }
        if schema.field_with_name(column.column).is_ok() {
            return Err(InputError::Unsupported(format!(
                "the training set has a column {} already",
                column.column
            )));
        }
        let (added, data_type) = match (column.column, labels) {
            (INT_COLUMN, _) => (Added::Id, DataType::Int64),
            (_, Some(labels)) => (Added::Label(labels), DataType::Utf8),
            (_, None) => {
                return Err(InputError::Options(
                    "a label filter needs the rows' labels".to_owned(),
                ))
            }
        };
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new(column.column, data_type, true));
        Ok(WithFilterColumn {
            inner,
            schema: Arc::new(Schema::new(fields)),
            added,
        })
    }
}

impl BatchReader for WithFilterColumn {
    fn element_type(&self) -> ElementType {
        self.inner.element_type()
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn rows(&self) -> Option<u64> {
        self.inner.rows()
    }

    fn column_name(&self) -> Option<&str> {
        self.inner.column_name()
    }

    fn passthrough_schema(&self) -> Option<SchemaRef> {
        Some(self.schema.clone())
    }

    fn has_vectors(&self) -> bool {
        self.inner.has_vectors()
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        let Some(mut batch) = self.inner.next_batch()? else {
            return Ok(None);
        };
        let lacks = || InputError::Data("a batch of the training set lacks its id column".into());
        let columns = batch.columns.take().ok_or_else(lacks)?;
        let ids = columns
            .column_by_name(ID_COLUMN)
            .and_then(|ids| ids.as_any().downcast_ref::<Int64Array>())
            .ok_or_else(lacks)?;
        let added: ArrayRef = match &self.added {
            Added::Id => Arc::new(ids.clone()),
            Added::Label(labels) => Arc::new(
                ids.iter()
                    .map(|id| id.and_then(|id| labels.label(id)))
                    .collect::<StringArray>(),
            ),
        };
        let mut arrays = columns.columns().to_vec();
        arrays.push(added);
        batch.columns = Some(
            RecordBatch::try_new(self.schema.clone(), arrays)
                .map_err(|e| InputError::Data(format!("the training set's columns: {e}")))?,
        );
        Ok(Some(batch))
    }

    fn recycle(&mut self, elements: Elements) {
        self.inner.recycle(elements);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_int_filter_restricts_the_copy_of_the_id_from_vectordbbenchs_bound() {
        let column = FilterColumn::new(Filter::Int { rate: 0.01 }, 300);
        assert_eq!(column.column, INT_COLUMN);
        assert_eq!(column.predicate, "id_int >= 3");
        let column = FilterColumn::new(Filter::Int { rate: 0.29 }, 100);
        // int(100 × 0.29) is 28, as Python truncates 28.999999999999996.
        assert_eq!(column.predicate, "id_int >= 28");
        assert_eq!(
            column.index_statement("ks", "Docs", "docs_id_int_idx"),
            "CREATE CUSTOM INDEX docs_id_int_idx ON ks.\"Docs\" (id_int) USING \
             'StorageAttachedIndex'"
        );
    }

    #[test]
    fn a_label_filter_restricts_the_labels_column() {
        let column = FilterColumn::new(Filter::Label { percentage: 0.05 }, 300);
        assert_eq!(column.column, LABEL_COLUMN);
        assert_eq!(column.predicate, "labels = 'label_5p'");
    }
}
