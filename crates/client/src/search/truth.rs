//! Where a search's ground truth comes from: a file of neighbour lists, the query file's own
//! `neighbors` dataset (ann-benchmarks' HDF5 layout), or brute force over the training vectors
//! with the index's similarity function.

use std::path::{Path, PathBuf};

use super::exact::exact_neighbors;
use cqlwire_vector::input::{
    self, InputFormat, InputOptions, Neighbors, NeighborsFormat, RowSelection,
};

use super::{QuerySet, Searcher};
use crate::error::{LoadError, LoadErrorKind};

/// The dataset of an HDF5 file that brute force reads the training vectors from.
const TRAIN_DATASET: &str = "train";

/// Bytes of training vectors per batch of the brute force.
const EXACT_BATCH_BYTES: usize = 8 << 20;

/// Where the ground truth of a search comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroundTruth {
    /// None: recall is not measured.
    None,
    /// A file of neighbour lists: HDF5 (by its extension; its `neighbors` dataset),
    /// big-ann-benchmarks' binary ground truth, `.ivecs` or an integer `.npy`.
    File(PathBuf),
    /// The `neighbors` dataset of an HDF5 file (ann-benchmarks' layout: `train`, `test`,
    /// `neighbors`, `distances`), e.g. the query file's own.
    Hdf5(PathBuf),
    /// Brute force over the training vectors of this file (an HDF5 file's `train` dataset), with
    /// the index's similarity function.
    Exact(PathBuf),
    /// Lists given as they are (e.g. an array in memory), one row per query number.
    Lists(Neighbors),
}

impl GroundTruth {
    /// The usual choice: the neighbours `file`, else brute force over `exact`, else the `queries`
    /// file's own `neighbors` when it is HDF5 (by `format`, else by its extension), else none.
    pub fn choose(
        file: Option<PathBuf>,
        exact: Option<PathBuf>,
        queries: Option<&Path>,
        format: Option<InputFormat>,
    ) -> GroundTruth {
        match (file, exact, queries) {
            (Some(file), _, _) => GroundTruth::File(file),
            (None, Some(train), _) => GroundTruth::Exact(train),
            (None, None, Some(queries)) if is_hdf5(queries, format) => {
                GroundTruth::Hdf5(queries.to_path_buf())
            }
            _ => GroundTruth::None,
        }
    }

    /// The file read, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            GroundTruth::None | GroundTruth::Lists(_) => None,
            GroundTruth::File(path) | GroundTruth::Hdf5(path) | GroundTruth::Exact(path) => {
                Some(path)
            }
        }
    }

    /// Whether the query vectors must be kept as floats (the `keep_floats` of
    /// [`Searcher::read_queries`]): for brute force.
    pub fn needs_floats(&self) -> bool {
        matches!(self, GroundTruth::Exact(_))
    }

    /// Reads the lists, or computes them for `queries` (read with their floats kept) with the
    /// searcher's k and its index's similarity function. The lists cover every query of the input
    /// up to the last one asked, as a file's would, so query numbers index them.
    pub fn neighbors(
        &self,
        searcher: &Searcher,
        queries: &QuerySet,
    ) -> Result<Option<Neighbors>, LoadError> {
        match self {
            GroundTruth::None => Ok(None),
            GroundTruth::File(path) => read(path, None, searcher.options().k).map(Some),
            GroundTruth::Hdf5(path) => {
                read(path, Some(NeighborsFormat::Hdf5), searcher.options().k).map(Some)
            }
            GroundTruth::Exact(train) => brute_force(train, searcher, queries).map(Some),
            GroundTruth::Lists(lists) => Ok(Some(lists.clone())),
        }
    }
}

/// Whether `path` is an HDF5 file: by `format`, else by its extension.
fn is_hdf5(path: &Path, format: Option<InputFormat>) -> bool {
    format.or_else(|| InputFormat::from_extension(path)) == Some(InputFormat::Hdf5)
}

/// The neighbour lists in `path`, in `format` or the one its name implies, each to its first `k`
/// ids (recall@k reads no further): memory follows queries × k whatever the file's width.
fn read(path: &Path, format: Option<NeighborsFormat>, k: usize) -> Result<Neighbors, LoadError> {
    input::read_neighbors_to(path, format, k).map_err(|e| input_error(e.to_string()))
}

/// The k nearest rows of `train` for every query, by the index's similarity function.
fn brute_force(
    train: &Path,
    searcher: &Searcher,
    queries: &QuerySet,
) -> Result<Neighbors, LoadError> {
    let row_bytes = queries.dimension().max(1) * 4;
    let options = InputOptions {
        format: None,
        column: None,
        selection: RowSelection::All,
        batch_rows: (EXACT_BATCH_BYTES / row_bytes).max(1),
        dataset: TRAIN_DATASET.to_string(),
        vectors_optional: false,
    };
    let mut reader = input::open(Some(train), &options).map_err(|e| input_error(e.to_string()))?;
    let found = exact_neighbors(
        reader.as_mut(),
        queries.floats().unwrap_or_default(),
        queries.dimension(),
        searcher.options().k,
        searcher.similarity(),
    )
    .map_err(|e| input_error(format!("{}: {e}", train.display())))?;
    // Query numbers index the lists, as they index a file's.
    let first = queries.numbers().first().copied().unwrap_or(0);
    Ok(found.starting_at(usize::try_from(first).unwrap_or(usize::MAX)))
}

/// An error of the ground truth's input.
fn input_error(message: impl Into<String>) -> LoadError {
    LoadError::new(LoadErrorKind::Input, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_comes_first_then_brute_force_then_the_queries_own_lists() {
        let p = |name: &str| Some(PathBuf::from(name));
        let queries = Path::new("glove.hdf5");
        assert_eq!(
            GroundTruth::choose(p("gt.ivecs"), p("train.npy"), Some(queries), None),
            GroundTruth::File(PathBuf::from("gt.ivecs"))
        );
        assert_eq!(
            GroundTruth::choose(None, p("train.npy"), Some(queries), None),
            GroundTruth::Exact(PathBuf::from("train.npy"))
        );
        assert_eq!(
            GroundTruth::choose(None, None, Some(queries), None),
            GroundTruth::Hdf5(PathBuf::from("glove.hdf5"))
        );
        let renamed = Path::new("glove.data");
        assert_eq!(
            GroundTruth::choose(None, None, Some(renamed), None),
            GroundTruth::None
        );
        assert_eq!(
            GroundTruth::choose(None, None, Some(renamed), Some(InputFormat::Hdf5)),
            GroundTruth::Hdf5(PathBuf::from("glove.data"))
        );
        assert_eq!(
            GroundTruth::choose(None, None, Some(queries), Some(InputFormat::Npy)),
            GroundTruth::None
        );
        assert_eq!(
            GroundTruth::choose(None, None, None, None),
            GroundTruth::None
        );
        assert!(GroundTruth::Exact(PathBuf::from("t")).needs_floats());
        assert!(!GroundTruth::Hdf5(PathBuf::from("t")).needs_floats());
        assert_eq!(GroundTruth::None.path(), None);
        assert_eq!(
            GroundTruth::Exact(PathBuf::from("t")).path(),
            Some(Path::new("t"))
        );
    }
}
