//! The writers of unloaded pages, from `cqlwire-vector`'s file formats: Parquet and Arrow IPC
//! (every column, typed), and the vector formats (`npy`, `fbin`, `raw`, `hex`) that hold one
//! vector column, with the partition keys of the same rows in an ids file beside them.

pub use cqlwire_vector::output::{IdsFormat, UnloadFormat, UnloadWriteError, UnloadWriter};

use super::UnloadError;
use crate::error::{LoadError, LoadErrorKind};

impl From<UnloadWriteError> for UnloadError {
    /// [`OutputHeader`](UnloadError::OutputHeader) for a write that failed; for the rest a
    /// [`LoadError`] of kind [`UnsupportedType`](LoadErrorKind::UnsupportedType) for a column the
    /// format cannot hold, [`InvalidOption`](LoadErrorKind::InvalidOption) otherwise. The writer's
    /// error is the source.
    fn from(error: UnloadWriteError) -> UnloadError {
        let kind = match &error {
            UnloadWriteError::Io(_) => return UnloadError::OutputHeader(error),
            error if error.is_unsupported_type() => LoadErrorKind::UnsupportedType,
            _ => LoadErrorKind::InvalidOption,
        };
        LoadError::new(kind, error.to_string())
            .with_source(error)
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, RecordBatch};
    use std::sync::Arc;

    /// The [`LoadError`] of an error that is one.
    fn load_error(error: UnloadError) -> LoadError {
        match error {
            UnloadError::Unload(error) => error,
            other => panic!("not a LoadError: {other:?}"),
        }
    }

    #[test]
    fn writer_errors_keep_their_kind() {
        let ints = Arc::new(Int64Array::from(vec![1]));
        let page = RecordBatch::try_from_iter([("v", ints as _)]).unwrap();
        let writer = |format, ids| UnloadWriter::new(format, &page.schema(), Vec::new(), ids);
        let error = load_error(writer(UnloadFormat::Npy, None).err().unwrap().into());
        assert_eq!(error.kind(), LoadErrorKind::UnsupportedType);
        let error = load_error(writer(UnloadFormat::Raw, None).err().unwrap().into());
        assert_eq!(error.kind(), LoadErrorKind::InvalidOption);
        assert_eq!(
            error.message(),
            "raw output needs the vector column's value bytes"
        );
        let io = UnloadWriteError::Io(std::io::Error::other("disk full"));
        let error = UnloadError::from(io);
        assert!(matches!(error, UnloadError::OutputHeader(_)), "{error:?}");
        assert_eq!(error.to_string(), "disk full");
        let source = std::error::Error::source(&error).unwrap();
        assert!(matches!(
            source.downcast_ref::<UnloadWriteError>(),
            Some(UnloadWriteError::Io(_))
        ));
    }
}
