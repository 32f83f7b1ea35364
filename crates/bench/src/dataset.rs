//! What a case reads: a VectorDBBench folder ([`DatasetFolder`]), an ann-benchmarks HDF5 file, or
//! three files named one by one ([`DatasetFiles`]: a training set in any format `load` reads,
//! queries and ground truth in any format `search` reads). [`BenchDataset`] is either, as
//! [`crate::case::run`] takes it.

use std::path::{Path, PathBuf};

use cqlwire_vector::input::{self, BatchReader, InputFormat, InputOptions, NeighborsFormat};

use crate::folder::{DatasetFolder, Filter};
use crate::truth::{GroundTruth, ID_COLUMN, VECTOR_COLUMN};
use crate::DatasetError;

/// The HDF5 dataset of the training rows in a training file (ann-benchmarks' name).
const TRAIN_DATASET: &str = "train";
/// The HDF5 dataset of the queries in a test file.
const TEST_DATASET: &str = "test";
/// The root attribute of an ann-benchmarks file that names its distance.
const DISTANCE_ATTRIBUTE: &str = "distance";
/// The similarity function of a case whose dataset does not say its own.
const DEFAULT_SIMILARITY: &str = "cosine";

/// Cassandra's similarity function of an ann-benchmarks distance (`angular`, `euclidean`, `dot`,
/// or the function's own name), `None` for one it has not (`hamming`, `jaccard`).
pub fn similarity_of_distance(distance: &str) -> Option<&'static str> {
    match distance.to_ascii_lowercase().as_str() {
        "angular" | "cosine" => Some("cosine"),
        "euclidean" | "l2" => Some("euclidean"),
        "dot" | "ip" | "inner_product" | "dot_product" => Some("dot_product"),
        _ => None,
    }
}

/// Input columns renamed (`from`, `to`; an empty `to` leaves the column out), as
/// `cqlwire_client::Dataset::from_reader` takes them.
pub type ColumnMap = Vec<(String, String)>;

/// A training set, its queries and their ground truth as separate files: `.npy`, fvecs, ivecs,
/// bvecs, fbin, ibin, Parquet, Arrow, HDF5 (dataset `train` of the training file, `test` of the
/// test file) for the vectors; ivecs, `.npy`, Parquet (`neighbors_id`) or big-ann-benchmarks'
/// layout for the ground truth. A training row's id is its `id` column when it has one, else its
/// row number (from 0), and the ground truth's ids are taken to be the same. An HDF5 training file
/// may name its distance in a root attribute `distance`, as ann-benchmarks' files do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetFiles {
    train: PathBuf,
    test: PathBuf,
    ground_truth: PathBuf,
    distance: Option<String>,
}

impl DatasetFiles {
    /// The three files, each refused (naming it) when it is not a readable file; an HDF5
    /// training file's `distance` attribute is read.
    pub fn new(
        train: &Path,
        test: &Path,
        ground_truth: &Path,
    ) -> Result<DatasetFiles, DatasetError> {
        for path in [train, test, ground_truth] {
            std::fs::metadata(path)
                .and_then(|meta| {
                    if meta.is_dir() {
                        Err(std::io::Error::other("a folder, not a file"))
                    } else {
                        Ok(())
                    }
                })
                .map_err(|source| DatasetError::Io {
                    path: path.display().to_string(),
                    source,
                })?;
        }
        let distance = if InputFormat::from_extension(train) == Some(InputFormat::Hdf5) {
            input::read_root_string_attribute(train, DISTANCE_ATTRIBUTE)?
        } else {
            None
        };
        Ok(DatasetFiles {
            train: train.to_owned(),
            test: test.to_owned(),
            ground_truth: ground_truth.to_owned(),
            distance,
        })
    }

    /// An ann-benchmarks HDF5 file: its datasets `train`, `test` and `neighbors` (the training
    /// rows' numbers, best first) and its `distance` attribute.
    pub fn hdf5(file: &Path) -> Result<DatasetFiles, DatasetError> {
        DatasetFiles::new(file, file, file)
    }

    /// The distance the training file declares (an HDF5 file's `distance` attribute).
    pub fn distance(&self) -> Option<&str> {
        self.distance.as_deref()
    }

    /// The training file.
    pub fn train_file(&self) -> &Path {
        &self.train
    }

    /// The test file.
    pub fn test_file(&self) -> &Path {
        &self.test
    }

    /// The ground-truth file.
    pub fn ground_truth_file(&self) -> &Path {
        &self.ground_truth
    }
}

/// What a result file says of the dataset a case read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DatasetSummary {
    /// The folder's (or the training file's) name.
    pub name: String,
    /// The folder (or the training file's folder), as given.
    pub dir: String,
    /// Training rows (0 when the input does not say).
    pub size: u64,
    /// Dimension.
    pub dim: usize,
    /// Training files.
    pub file_count: u32,
    /// Whether the training files are VectorDBBench's shuffled ones.
    pub use_shuffled: bool,
}

/// The dataset of a case.
#[derive(Debug, Clone)]
pub enum BenchDataset {
    /// A VectorDBBench folder (every filtered case's files too).
    Folder(DatasetFolder),
    /// Three files (the unfiltered case only).
    Files(DatasetFiles),
}

impl BenchDataset {
    /// The dataset at `path`: a VectorDBBench folder, or an ann-benchmarks HDF5 file (by its
    /// extension, `.hdf5` or `.h5`).
    pub fn open(path: &Path) -> Result<BenchDataset, DatasetError> {
        if path.is_dir() {
            return DatasetFolder::open(path, None).map(BenchDataset::Folder);
        }
        if InputFormat::from_extension(path) == Some(InputFormat::Hdf5) {
            return DatasetFiles::hdf5(path).map(BenchDataset::Files);
        }
        match std::fs::metadata(path) {
            Err(source) => Err(DatasetError::Io {
                path: path.display().to_string(),
                source,
            }),
            Ok(_) => Err(DatasetError::NotADataset {
                path: path.display().to_string(),
            }),
        }
    }

    /// The index's similarity function: `asked`, else the one the dataset's distance is, else
    /// cosine (as for a VectorDBBench folder, which does not say). Refused: a distance no
    /// similarity function measures, and `asked` against the dataset's own.
    pub fn similarity(&self, asked: Option<&str>) -> Result<String, DatasetError> {
        let (files, distance) = match self {
            BenchDataset::Files(
                files @ DatasetFiles {
                    distance: Some(distance),
                    ..
                },
            ) => (files, distance),
            _ => return Ok(asked.unwrap_or(DEFAULT_SIMILARITY).to_owned()),
        };
        let file = || files.train.display().to_string();
        let similarity =
            similarity_of_distance(distance).ok_or_else(|| DatasetError::UnsupportedDistance {
                file: file(),
                distance: distance.clone(),
            })?;
        match asked {
            Some(asked) if !asked.eq_ignore_ascii_case(similarity) => {
                Err(DatasetError::SimilarityConflict {
                    file: file(),
                    distance: distance.clone(),
                    similarity,
                    asked: asked.to_owned(),
                })
            }
            _ => Ok(similarity.to_owned()),
        }
    }

    /// A short name for titles: the folder's or the training file's own name.
    pub fn name(&self) -> String {
        let path = match self {
            BenchDataset::Folder(folder) => folder.root(),
            BenchDataset::Files(files) => &files.train,
        };
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// What a result file says of the dataset, `train` its training set as opened.
    pub fn summary(&self, train: &dyn BatchReader) -> DatasetSummary {
        let (dir, file_count, use_shuffled) = match self {
            BenchDataset::Folder(folder) => (
                folder.root().display().to_string(),
                u32::try_from(folder.train_files().len()).unwrap_or(u32::MAX),
                folder.train_prefix() == crate::folder::TrainPrefix::Shuffled,
            ),
            BenchDataset::Files(files) => (
                files
                    .train
                    .parent()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                1,
                false,
            ),
        };
        DatasetSummary {
            name: self.name(),
            dir,
            size: train.rows().unwrap_or(0),
            dim: train.dimension(),
            file_count,
            use_shuffled,
        }
    }

    /// The folder, when the dataset is one (a filtered case needs it).
    pub fn folder(&self) -> Option<&DatasetFolder> {
        match self {
            BenchDataset::Folder(folder) => Some(folder),
            BenchDataset::Files(_) => None,
        }
    }

    /// The training set as one input (`options.column` and `options.dataset` are the dataset's
    /// own: `emb` of a folder, the reader's default vector column and `train` of a file).
    pub fn open_train(&self, options: &InputOptions) -> Result<Box<dyn BatchReader>, DatasetError> {
        match self {
            BenchDataset::Folder(folder) => folder.open_train(&InputOptions {
                column: Some(VECTOR_COLUMN.to_owned()),
                ..options.clone()
            }),
            BenchDataset::Files(files) => Ok(input::open(
                Some(&files.train),
                &InputOptions {
                    column: None,
                    dataset: TRAIN_DATASET.to_owned(),
                    ..options.clone()
                },
            )?),
        }
    }

    /// The queries as an input (column and dataset as [`BenchDataset::open_train`] chooses them,
    /// `test` of an HDF5 file).
    pub fn open_test(&self, options: &InputOptions) -> Result<Box<dyn BatchReader>, DatasetError> {
        let (path, options) = match self {
            BenchDataset::Folder(folder) => (
                folder.test_file()?,
                InputOptions {
                    column: Some(VECTOR_COLUMN.to_owned()),
                    ..options.clone()
                },
            ),
            BenchDataset::Files(files) => (
                files.test.as_path(),
                InputOptions {
                    column: None,
                    dataset: TEST_DATASET.to_owned(),
                    ..options.clone()
                },
            ),
        };
        Ok(input::open(Some(path), &options)?)
    }

    /// The ground truth of the unfiltered case or of `filter` (a folder's only).
    /// Each list is read to its first `k` ids: memory follows queries × k whatever width the
    /// file claims.
    pub fn ground_truth(
        &self,
        filter: Option<&Filter>,
        k: usize,
    ) -> Result<GroundTruth, DatasetError> {
        match self {
            BenchDataset::Folder(folder) => GroundTruth::read_to(
                folder.ground_truth_file(filter)?,
                Some(NeighborsFormat::Parquet),
                k,
            ),
            BenchDataset::Files(files) => GroundTruth::read_to(&files.ground_truth, None, k),
        }
    }

    /// How the engine maps the training input's columns onto the table, as
    /// `cqlwire_client::Dataset::from_reader` takes them: a folder's `id` and `emb` as they are;
    /// a file's vector column renamed `emb`, its `id` column kept (else the row number is the
    /// id) and every other column left out. A file's `id` column of another type than int64 is
    /// refused (the table's key is a bigint).
    pub fn columns(
        &self,
        train: &dyn BatchReader,
    ) -> Result<(ColumnMap, Option<String>), DatasetError> {
        let id_field = train
            .passthrough_schema()
            .and_then(|schema| schema.field_with_name(ID_COLUMN).ok().cloned());
        if let Some(field) = &id_field {
            if field.data_type() != &arrow_schema::DataType::Int64 {
                return Err(DatasetError::ColumnType {
                    file: self.train_name(),
                    column: ID_COLUMN.to_owned(),
                    found: field.data_type().to_string(),
                    expected: "int64",
                });
            }
        }
        let BenchDataset::Files(_) = self else {
            if id_field.is_none() {
                return Err(DatasetError::MissingColumn {
                    file: self.train_name(),
                    column: ID_COLUMN.to_owned(),
                    columns: train
                        .passthrough_schema()
                        .map(|schema| {
                            let names: Vec<&str> =
                                schema.fields().iter().map(|f| f.name().as_str()).collect();
                            names.join(", ")
                        })
                        .unwrap_or_default(),
                });
            }
            return Ok((Vec::new(), None));
        };
        let mut map = Vec::new();
        if let Some(name) = train.column_name().filter(|name| *name != VECTOR_COLUMN) {
            map.push((name.to_owned(), VECTOR_COLUMN.to_owned()));
        }
        let mut has_id = false;
        if let Some(schema) = train.passthrough_schema() {
            for field in schema.fields() {
                if field.name() == ID_COLUMN {
                    has_id = true;
                } else if Some(field.name().as_str()) != train.column_name() {
                    map.push((field.name().clone(), String::new()));
                }
            }
        }
        let row_number = (!has_id).then(|| ID_COLUMN.to_owned());
        Ok((map, row_number))
    }

    /// The training set's name in messages: the folder, or the training file.
    fn train_name(&self) -> String {
        match self {
            BenchDataset::Folder(folder) => folder.root().display().to_string(),
            BenchDataset::Files(files) => files.train.display().to_string(),
        }
    }

    /// The test file's name in messages.
    fn test_name(&self) -> Result<String, DatasetError> {
        Ok(match self {
            BenchDataset::Folder(folder) => folder.test_file()?.display().to_string(),
            BenchDataset::Files(files) => files.test.display().to_string(),
        })
    }

    /// Every file the dataset is read from: the folder's Parquet files, or the three files.
    pub fn input_files(&self) -> Vec<&Path> {
        match self {
            BenchDataset::Folder(folder) => folder.files().collect(),
            BenchDataset::Files(files) => vec![
                files.train.as_path(),
                files.test.as_path(),
                files.ground_truth.as_path(),
            ],
        }
    }

    /// Reads every query and refuses the first that the server cannot answer (see
    /// [`unanswerable`]: a non-finite element; all zeros for a cosine index), and a test file
    /// without a query; returns how many queries there are.
    pub fn check_queries(
        &self,
        options: &InputOptions,
        similarity: &str,
    ) -> Result<u64, DatasetError> {
        let mut reader = self.open_test(options)?;
        let dimension = reader.dimension().max(1);
        let mut count = 0;
        while let Some(batch) = reader.next_batch()? {
            let values = batch.elements.to_f64();
            for (i, vector) in values.chunks(dimension).enumerate() {
                let row = batch.first_row + i as u64;
                if let Some(reason) = unanswerable(vector, similarity) {
                    return Err(DatasetError::UnanswerableQuery {
                        file: self.test_name()?,
                        row,
                        reason,
                    });
                }
            }
            count += (values.len() / dimension) as u64;
        }
        if count == 0 {
            return Err(DatasetError::NoQueries {
                file: self.test_name()?,
            });
        }
        Ok(count)
    }

    /// Refuses a training set that repeats an id (across its files too), naming the file and row
    /// of the second one: the table would keep one row of the two and the ground truth would
    /// count both. Only Parquet training files are read, their `id` column alone; numbered rows
    /// cannot repeat. Memory: 8 bytes a row.
    pub fn check_unique_ids(&self) -> Result<(), DatasetError> {
        let files: Vec<&Path> = match self {
            BenchDataset::Folder(folder) => {
                folder.train_files().iter().map(PathBuf::as_path).collect()
            }
            BenchDataset::Files(files)
                if InputFormat::from_extension(&files.train) == Some(InputFormat::Parquet) =>
            {
                vec![files.train.as_path()]
            }
            BenchDataset::Files(_) => Vec::new(),
        };
        let mut ids = Vec::new();
        for file in &files {
            crate::truth::read_ids(file, |_, id| ids.push(id))?;
        }
        ids.sort_unstable();
        let Some(repeated) = ids.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]) else {
            return Ok(());
        };
        drop(ids);
        let mut seen = false;
        for file in &files {
            let mut second = None;
            crate::truth::read_ids(file, |row, id| {
                if id == repeated && second.is_none() {
                    if seen {
                        second = Some(row);
                    }
                    seen = true;
                }
            })?;
            if let Some(row) = second {
                return Err(DatasetError::DuplicateId {
                    file: file.display().to_string(),
                    row,
                    id: repeated,
                });
            }
        }
        Ok(())
    }

    /// Refuses queries of another dimension than the training rows', naming both files.
    pub fn check_dimensions(
        &self,
        train: &dyn BatchReader,
        test: &dyn BatchReader,
    ) -> Result<(), DatasetError> {
        if train.dimension() == test.dimension() {
            return Ok(());
        }
        let (train_name, test_name) = match self {
            BenchDataset::Folder(folder) => (
                folder.root().display().to_string(),
                folder.test_file()?.display().to_string(),
            ),
            BenchDataset::Files(files) => (
                files.train.display().to_string(),
                files.test.display().to_string(),
            ),
        };
        Err(DatasetError::Dimensions {
            train: train_name,
            train_dimension: train.dimension(),
            test: test_name,
            test_dimension: test.dimension(),
        })
    }
}

/// Why the server cannot answer an ANN query of `vector`, or None: a NaN or infinite element
/// (Apache Cassandra 5.0.9 refuses the query, and afterwards its ANN queries on the table can hang
/// until a restart), or all zeros for a cosine index (no angle to any vector).
pub fn unanswerable(vector: &[f64], similarity: &str) -> Option<String> {
    if let Some((element, value)) = vector.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Some(format!(
            "has {value} at element {element}: the server refuses an ANN query of a non-finite \
             value"
        ));
    }
    (similarity == "cosine" && vector.iter().all(|&x| x == 0.0))
        .then(|| "is all zeros: a cosine index cannot compare a vector of length 0".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cqlwire_vector::input::RowSelection;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/bench")
            .join(name)
    }

    fn options() -> InputOptions {
        InputOptions {
            format: None,
            column: None,
            dataset: String::new(),
            selection: RowSelection::All,
            batch_rows: 64,
            vectors_optional: false,
        }
    }

    #[test]
    fn a_file_without_an_id_column_is_numbered_and_one_with_it_keeps_its_ids() {
        let files = DatasetFiles::new(
            &fixture("files/train.fvecs"),
            &fixture("files/test.fvecs"),
            &fixture("files/neighbors.ivecs"),
        )
        .unwrap();
        let dataset = BenchDataset::Files(files);
        let train = dataset.open_train(&options()).unwrap();
        assert_eq!(
            dataset.columns(train.as_ref()).unwrap(),
            (Vec::new(), Some("id".to_owned()))
        );
        let test = dataset.open_test(&options()).unwrap();
        dataset
            .check_dimensions(train.as_ref(), test.as_ref())
            .unwrap();
        assert_eq!(dataset.ground_truth(None, usize::MAX).unwrap().k(), 10);
        assert_eq!(dataset.name(), "train.fvecs");

        // A Parquet file with id and emb: the ids are the column's, nothing renamed or dropped.
        let parquet = fixture("folder/test.parquet");
        let truth = fixture("folder/neighbors.parquet");
        let dataset = BenchDataset::Files(DatasetFiles::new(&parquet, &parquet, &truth).unwrap());
        let train = dataset.open_train(&options()).unwrap();
        assert_eq!(dataset.columns(train.as_ref()).unwrap(), (Vec::new(), None));
        // The folder's own files are read as VectorDBBench lays them out.
        let folder = DatasetFolder::open(&fixture("folder"), None).unwrap();
        let dataset = BenchDataset::Folder(folder);
        let train = dataset.open_train(&options()).unwrap();
        assert_eq!(train.rows(), Some(300));
        assert_eq!(dataset.columns(train.as_ref()).unwrap(), (Vec::new(), None));
    }

    #[test]
    fn an_id_column_that_is_not_int64_is_refused_naming_the_file() {
        use arrow_array::types::Float32Type;
        use arrow_array::{ArrayRef, Int32Array, ListArray, RecordBatch};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.parquet");
        let ids: ArrayRef = Arc::new(Int32Array::from(vec![0, 1]));
        let vectors: ArrayRef =
            Arc::new(ListArray::from_iter_primitive::<Float32Type, _, _>(vec![
                Some(vec![Some(1.0), Some(0.0)]),
                Some(vec![Some(0.0), Some(1.0)]),
            ]));
        let batch = RecordBatch::try_from_iter([("id", ids), ("emb", vectors)]).unwrap();
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let truth = fixture("files/neighbors.ivecs");
        let dataset = BenchDataset::Files(DatasetFiles::new(&path, &path, &truth).unwrap());
        let train = dataset.open_train(&options()).unwrap();
        let error = dataset.columns(train.as_ref()).unwrap_err().to_string();
        assert!(
            error.contains("train.parquet: column 'id' has type Int32; expected int64"),
            "{error}"
        );
    }

    #[test]
    fn an_ann_benchmarks_file_is_a_dataset_whose_distance_is_the_similarity_function() {
        let dataset = BenchDataset::open(&fixture("files/ann-angular.hdf5")).unwrap();
        assert_eq!(dataset.name(), "ann-angular.hdf5");
        assert!(dataset.folder().is_none());
        let train = dataset.open_train(&options()).unwrap();
        assert_eq!((train.rows(), train.dimension()), (Some(200), 8));
        // No id column: the row numbers are the ids, which ann-benchmarks' neighbors hold.
        assert_eq!(
            dataset.columns(train.as_ref()).unwrap(),
            (Vec::new(), Some("id".to_owned()))
        );
        let test = dataset.open_test(&options()).unwrap();
        assert_eq!(test.rows(), Some(10));
        dataset
            .check_dimensions(train.as_ref(), test.as_ref())
            .unwrap();
        let truth = dataset.ground_truth(None, usize::MAX).unwrap();
        assert_eq!((truth.queries(), truth.k()), (10, 10));
        assert!(truth.list(0).iter().all(|id| (0..200).contains(id)));

        assert_eq!(dataset.similarity(None).unwrap(), "cosine");
        assert_eq!(dataset.similarity(Some("COSINE")).unwrap(), "cosine");
        let error = dataset.similarity(Some("euclidean")).unwrap_err();
        assert!(error.is_usage());
        assert!(
            error.to_string().ends_with(
                "ann-angular.hdf5: its ground truth is by angular distance (the similarity \
                 function cosine), not euclidean"
            ),
            "{error}"
        );

        let hamming = BenchDataset::open(&fixture("files/ann-hamming.hdf5")).unwrap();
        let error = hamming.similarity(None).unwrap_err();
        assert!(error.is_usage());
        assert!(
            error
                .to_string()
                .contains("'hamming' has no similarity function"),
            "{error}"
        );
    }

    #[test]
    fn a_dataset_without_a_distance_takes_the_one_asked_else_cosine() {
        let folder = BenchDataset::open(&fixture("folder")).unwrap();
        assert!(folder.folder().is_some());
        assert_eq!(folder.similarity(None).unwrap(), "cosine");
        assert_eq!(folder.similarity(Some("euclidean")).unwrap(), "euclidean");
        let files = DatasetFiles::new(
            &fixture("files/train.fvecs"),
            &fixture("files/test.fvecs"),
            &fixture("files/neighbors.ivecs"),
        )
        .unwrap();
        assert_eq!(files.distance(), None);
        let files = BenchDataset::Files(files);
        assert_eq!(
            files.similarity(Some("dot_product")).unwrap(),
            "dot_product"
        );
        assert_eq!(
            similarity_of_distance("dot"),
            Some("dot_product"),
            "ann-benchmarks' inner product"
        );
    }

    #[test]
    fn a_file_that_is_neither_a_folder_nor_hdf5_is_no_dataset() {
        let error = BenchDataset::open(&fixture("files/train.fvecs")).unwrap_err();
        assert!(error.is_usage());
        assert!(
            error
                .to_string()
                .contains("not a dataset folder or an ann-benchmarks HDF5 file"),
            "{error}"
        );
        let error = BenchDataset::open(Path::new("/nonexistent/glove.hdf5")).unwrap_err();
        assert!(!error.is_usage());
        assert!(
            error.to_string().starts_with("/nonexistent/glove.hdf5"),
            "{error}"
        );
        let error = BenchDataset::open(Path::new("/nonexistent/folder")).unwrap_err();
        assert!(
            error.to_string().starts_with("/nonexistent/folder"),
            "{error}"
        );
    }

    #[test]
    fn a_folder_given_as_a_file_is_refused_naming_it() {
        let folder = fixture("folder");
        let error = DatasetFiles::new(&folder, &folder, &folder).unwrap_err();
        assert!(
            error.to_string().contains("a folder, not a file"),
            "{error}"
        );
    }
}
