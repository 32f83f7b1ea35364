//! An unload into files: the columns a vector format reads, and the scan run into an
//! [`UnloadWriter`] on a thread of its own.

use std::io;
use std::sync::atomic::Ordering;

use cqlwire_vector::output::Destination;

use super::{
    UnloadControl, UnloadError, UnloadFormat, UnloadOptions, UnloadReport, UnloadWriter, Unloader,
};
use crate::error::{LoadError, LoadErrorKind};
use crate::session::{ColumnRole, TableColumn};

/// Pages queued between the scan and the writer.
const QUEUED_PAGES: usize = 2;

/// Why a vector format has no column to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VectorColumnError {
    /// The table has no `vector<…>` column.
    #[error("the table has no vector column")]
    NoVector,
    /// The table has several, and none was named.
    #[error("the table has several vector columns ({}): choose one", .0.join(", "))]
    Several(Vec<String>),
}

impl VectorColumnError {
    /// As a [`LoadError`] of kind [`UnknownColumn`](LoadErrorKind::UnknownColumn) whose message
    /// says how to choose the column: with `option`, the caller's name for it (e.g. a flag).
    pub fn into_load_error(self, option: &str) -> LoadError {
        let message = match self {
            VectorColumnError::NoVector => format!("{self} (name the column with {option})"),
            VectorColumnError::Several(_) => format!("{self} with {option}"),
        };
        LoadError::new(LoadErrorKind::UnknownColumn, message)
    }
}

impl UnloadOptions {
    /// Reads what a vector `format` writes, from `table`'s columns: the vector `column` (as
    /// written in CQL; else the table's only vector column) first, then the partition key columns
    /// when `ids` are written; the vector as its CQL value bytes for `raw` and `hex`. For
    /// [`Unloader::connect_with`].
    pub fn read_vector(
        &mut self,
        table: &[TableColumn],
        format: UnloadFormat,
        column: Option<&str>,
        ids: bool,
    ) -> Result<(), VectorColumnError> {
        let vector = match column {
            Some(name) => name.to_owned(),
            None => {
                let vectors: Vec<&TableColumn> =
                    table.iter().filter(|c| is_vector(&c.cql_type)).collect();
                match vectors.as_slice() {
                    [only] => quoted(&only.name),
                    [] => return Err(VectorColumnError::NoVector),
                    several => {
                        let names = several.iter().map(|c| c.name.clone()).collect();
                        return Err(VectorColumnError::Several(names));
                    }
                }
            }
        };
        self.raw_columns = if format.wants_value_bytes() {
            vec![vector.clone()]
        } else {
            Vec::new()
        };
        let mut columns = vec![vector];
        if ids {
            columns.extend(
                table
                    .iter()
                    .filter(|c| matches!(c.role, ColumnRole::PartitionKey(_)))
                    .map(|c| quoted(&c.name)),
            );
        }
        self.columns = Some(columns);
        Ok(())
    }
}

/// Whether a column holds a `vector<…>`.
fn is_vector(typ: &crate::types::ServerType) -> bool {
    typ.to_string().starts_with("vector<")
}

/// A schema name as written in CQL (quoted, so that its case is kept).
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Unloader {
    /// Runs the scan (see [`run`](Unloader::run)) into `writer`, which writes each page on a
    /// blocking thread of its own so that writing never holds up the reads. A write error sets
    /// `control.stop`, which ends the scan. Returns the scan's outcome and the writer's: on a write
    /// error that is the cause to report (the scan then says it was stopped); on success, the
    /// writer to [`finish`](UnloadWriter::finish), and its outputs to commit.
    pub async fn run_into<W: Destination + 'static>(
        &self,
        mut writer: UnloadWriter<W>,
        control: &UnloadControl,
    ) -> (
        Result<UnloadReport, UnloadError>,
        io::Result<UnloadWriter<W>>,
    ) {
        let (sender, mut receiver) = tokio::sync::mpsc::channel(QUEUED_PAGES);
        let stop = control.stop.clone();
        let writing = tokio::task::spawn_blocking(move || -> io::Result<UnloadWriter<W>> {
            while let Some(batch) = receiver.blocking_recv() {
                if let Err(error) = writer.write(&batch) {
                    stop.store(true, Ordering::Relaxed);
                    return Err(error);
                }
            }
            Ok(writer)
        });
        let scanned = self.run(sender, control).await;
        let written = writing
            .await
            .unwrap_or_else(|_| Err(io::Error::other("the writer failed")));
        (scanned, written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::tests::column;
    use crate::session::{Host, SessionOptions};
    use crate::types::tests::{native, vector};
    use scylla::cluster::metadata::NativeType;

    #[test]
    fn a_vector_format_reads_the_only_vector_then_the_partition_key() {
        let mut table = vec![
            column("Id", native(NativeType::Int), ColumnRole::PartitionKey(0)),
            column("emb", vector(NativeType::Float, 3), ColumnRole::Regular),
        ];
        let mut options = UnloadOptions::new(SessionOptions::new(
            Host::parse_list("h").unwrap(),
            "ks",
            "t",
        ));
        options
            .read_vector(&table, UnloadFormat::Hex, None, true)
            .unwrap();
        assert_eq!(
            options.columns.as_deref(),
            Some(&["\"emb\"".to_owned(), "\"Id\"".to_owned()][..])
        );
        assert_eq!(options.raw_columns, ["\"emb\""]);
        options
            .read_vector(&table, UnloadFormat::Npy, Some("v2"), false)
            .unwrap();
        assert_eq!(options.columns.as_deref(), Some(&["v2".to_owned()][..]));
        table.push(column(
            "other",
            vector(NativeType::Float, 2),
            ColumnRole::Regular,
        ));
        let error = options
            .read_vector(&table, UnloadFormat::Npy, None, false)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the table has several vector columns (emb, other): choose one"
        );
        assert_eq!(
            error.into_load_error("--column").to_string(),
            "the table has several vector columns (emb, other): choose one with --column"
        );
        let error = options
            .read_vector(&table[..1], UnloadFormat::Npy, None, false)
            .unwrap_err();
        assert_eq!(error, VectorColumnError::NoVector);
        let error = error.into_load_error("column=");
        assert_eq!(error.kind(), LoadErrorKind::UnknownColumn);
        assert_eq!(
            error.to_string(),
            "the table has no vector column (name the column with column=)"
        );
    }
}
