//! The writers of unloaded pages, from `cqlwire-vector`'s file formats: Parquet and Arrow IPC
//! (every column, typed), and the vector formats (`npy`, `fbin`, `raw`, `hex`) that hold one
//! vector column, with the partition keys of the same rows in an ids file beside them.

pub use cqlwire_vector::output::{IdsFormat, UnloadFormat, UnloadWriteError, UnloadWriter};

use crate::error::{LoadError, LoadErrorKind};

impl From<UnloadWriteError> for LoadError {
    /// Kind [`Output`](LoadErrorKind::Output) for a write that failed,
    /// [`UnsupportedType`](LoadErrorKind::UnsupportedType) for a column the format cannot hold,
    /// [`InvalidOption`](LoadErrorKind::InvalidOption) for the rest.
    fn from(error: UnloadWriteError) -> LoadError {
        let kind = match &error {
            UnloadWriteError::Io(_) => LoadErrorKind::Output,
            error if error.is_unsupported_type() => LoadErrorKind::UnsupportedType,
            _ => LoadErrorKind::InvalidOption,
        };
        LoadError::new(kind, error.to_string()).with_source(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, RecordBatch};
    use std::sync::Arc;

    #[test]
    fn writer_errors_keep_their_kind() {
        let ints = Arc::new(Int64Array::from(vec![1]));
        let page = RecordBatch::try_from_iter([("v", ints as _)]).unwrap();
        let writer = |format, ids| UnloadWriter::new(format, &page.schema(), Vec::new(), ids);
        let error = LoadError::from(writer(UnloadFormat::Npy, None).err().unwrap());
        assert_eq!(error.kind(), LoadErrorKind::UnsupportedType);
        let error = LoadError::from(writer(UnloadFormat::Raw, None).err().unwrap());
        assert_eq!(error.kind(), LoadErrorKind::InvalidOption);
        assert_eq!(
            error.message(),
            "raw output needs the vector column's value bytes"
        );
        let io = UnloadWriteError::Io(std::io::Error::other("disk full"));
        let error = LoadError::from(io);
        assert_eq!(error.kind(), LoadErrorKind::Output);
        let source = std::error::Error::source(&error).unwrap();
        assert!(matches!(
            source.downcast_ref::<UnloadWriteError>(),
            Some(UnloadWriteError::Io(_))
        ));
    }
}
