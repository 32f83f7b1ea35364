//! A VectorDBBench dataset folder, as VectorDBBench lays it out (`backend/dataset.py`,
//! `backend/utils.py` `compose_train_files`, `backend/filter.py` at commit 4ea1810): the training
//! set in `train.parquet` or `{train|shuffle_train}-NN-of-MM.parquet` (NN from `00`; either
//! number with or without leading zeros, as hand-made folders spell them), the queries in `test.parquet`, their ground truth in `neighbors.parquet`, a filtered
//! case's ground truth in `neighbors_head_1p.parquet`, `neighbors_tail_1p.parquet`,
//! `neighbors_int_{R}p.parquet` or `neighbors_labels_label_{P}p.parquet`, and the rows' labels in
//! `scalar_labels.parquet`.

use crate::DatasetError;
use cqlwire_vector::input::{self, BatchReader, InputOptions};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The queries' file.
pub const TEST_FILE: &str = "test.parquet";
/// The unfiltered ground truth's file.
pub const NEIGHBORS_FILE: &str = "neighbors.parquet";
/// The rows' labels (`id`, `labels`), for label filters.
pub const SCALAR_LABELS_FILE: &str = "scalar_labels.parquet";

/// Most files a split training set may claim (`-of-MM`): far above VectorDBBench's largest
/// (LAION 100M, 100 files), so a name claiming more is not taken for one.
pub const MAX_TRAIN_FILES: u32 = 100_000;

/// The two names of a training set: VectorDBBench's shuffled copy or the rows in id order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum TrainPrefix {
    /// `train.parquet`, `train-NN-of-MM.parquet`.
    Plain,
    /// `shuffle_train.parquet`, `shuffle_train-NN-of-MM.parquet` (VectorDBBench's default).
    Shuffled,
}

impl TrainPrefix {
    /// The file names' prefix.
    pub fn name(self) -> &'static str {
        match self {
            TrainPrefix::Plain => "train",
            TrainPrefix::Shuffled => "shuffle_train",
        }
    }
}

/// One training set found in a folder: its prefix and its number of files (None: one file
/// without `-NN-of-MM`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SetKey {
    prefix: TrainPrefix,
    count: Option<u32>,
}

impl fmt::Display for SetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.count {
            None => write!(f, "{}.parquet", self.prefix.name()),
            Some(count) => write!(f, "{}-NN-of-{count}.parquet", self.prefix.name()),
        }
    }
}

/// The name of file `index` of a set of `count` (VectorDBBench's `compose_train_files`: the index
/// right-justified to two digits with zeros).
pub fn train_file_name(prefix: TrainPrefix, index: u32, count: u32) -> String {
    format!("{}-{index:02}-of-{count}.parquet", prefix.name())
}

/// What a file name says about the training set: its set and, for a split set, its index.
fn parse_train_name(name: &str) -> Option<(SetKey, Option<u32>)> {
    let stem = name.strip_suffix(".parquet")?;
    for prefix in [TrainPrefix::Shuffled, TrainPrefix::Plain] {
        let Some(rest) = stem.strip_prefix(prefix.name()) else {
            continue;
        };
        if rest.is_empty() {
            return Some((
                SetKey {
                    prefix,
                    count: None,
                },
                None,
            ));
        }
        let (index, count) = rest.strip_prefix('-')?.split_once("-of-")?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(index) || !digits(count) {
            return None;
        }
        let (index, count): (u32, u32) = (index.parse().ok()?, count.parse().ok()?);
        if count == 0 || count > MAX_TRAIN_FILES {
            return None;
        }
        return Some((
            SetKey {
                prefix,
                count: Some(count),
            },
            Some(index),
        ));
    }
    None
}

/// A filtered case, as VectorDBBench defines it (`backend/filter.py`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Filter {
    /// `id >= int(size × rate)`: the share `rate` of the rows is filtered out (VectorDBBench's
    /// `IntFilter` for 0.01 and 0.99, `NewIntFilter` for any rate).
    Int {
        /// The share of the rows filtered out, 0–1.
        rate: f64,
    },
    /// `labels == 'label_{P}p'`: the share `percentage` of the rows carries the label.
    Label {
        /// The share of the rows that pass, above 0 and at most 1.
        percentage: f64,
    },
}

impl Filter {
    /// VectorDBBench's `filter_rate`: the share of the rows filtered out.
    pub fn filter_rate(&self) -> f64 {
        match *self {
            Filter::Int { rate } => rate,
            Filter::Label { percentage } => 1.0 - percentage,
        }
    }

    /// The least id that passes an int filter over `size` rows (`int(size × rate)`, truncated as
    /// Python's `int` does); None for a label filter.
    pub fn int_value(&self, size: u64) -> Option<i64> {
        match *self {
            Filter::Int { rate } => Some((size as f64 * rate) as i64),
            Filter::Label { .. } => None,
        }
    }

    /// The label a label filter asks for (`label_5p`, `label_0.1p`); None for an int filter.
    pub fn label_value(&self) -> Option<String> {
        match *self {
            Filter::Int { .. } => None,
            Filter::Label { percentage } => {
                let p = percentage * 100.0;
                Some(percent_name("label", p, p >= 1.0))
            }
        }
    }

    /// The names of the ground-truth file of this filter, in the order they are looked for: for
    /// an int filter of 0.01 or 0.99 `neighbors_head_1p.parquet` or `neighbors_tail_1p.parquet`
    /// (VectorDBBench's older `IntFilter`), then `neighbors_int_{R}p.parquet` (`NewIntFilter`);
    /// for a label filter `neighbors_labels_label_{P}p.parquet`.
    pub fn ground_truth_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        match *self {
            Filter::Int { rate } => {
                if rate == 0.01 {
                    names.push("neighbors_head_1p.parquet".to_owned());
                } else if rate == 0.99 {
                    names.push("neighbors_tail_1p.parquet".to_owned());
                }
                let r = rate * 100.0;
                let whole = (1.0..=99.0).contains(&r);
                names.push(format!(
                    "neighbors_{}.parquet",
                    percent_name("int", r, whole)
                ));
            }
            Filter::Label { .. } => {
                let label = self.label_value().unwrap_or_default();
                names.push(format!("neighbors_labels_{label}.parquet"));
            }
        }
        names
    }
}

/// VectorDBBench's name of a percentage `p`: `{what}_{int(p)}p` when `whole`, else
/// `{what}_{p:.1f}p`.
fn percent_name(what: &str, p: f64, whole: bool) -> String {
    if whole {
        format!("{what}_{}p", p as i64)
    } else {
        format!("{what}_{p:.1}p")
    }
}

/// A filter that does not parse: `int:RATE` (0–1) or `label:PERCENTAGE` (above 0, at most 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad filter '{text}': expected int:RATE (0 to 1) or label:SHARE (above 0, at most 1)")]
pub struct FilterParseError {
    /// The text as given.
    pub text: String,
}

impl FromStr for Filter {
    type Err = FilterParseError;

    /// Parses `int:0.01`, `int:0.5`, `label:0.05`.
    fn from_str(text: &str) -> Result<Filter, FilterParseError> {
        let error = || FilterParseError {
            text: text.to_owned(),
        };
        let (kind, value) = text.split_once(':').ok_or_else(error)?;
        let value: f64 = value.trim().parse().map_err(|_| error())?;
        match kind.trim() {
            "int" if (0.0..=1.0).contains(&value) => Ok(Filter::Int { rate: value }),
            "label" if value > 0.0 && value <= 1.0 => Ok(Filter::Label { percentage: value }),
            _ => Err(error()),
        }
    }
}

/// The files of a VectorDBBench dataset folder.
#[derive(Debug, Clone)]
pub struct DatasetFolder {
    root: PathBuf,
    train_prefix: TrainPrefix,
    train: Vec<PathBuf>,
    /// The Parquet files directly in the folder, by name.
    files: BTreeMap<String, PathBuf>,
}

impl DatasetFolder {
    /// Reads the folder's file names: its training set must be whole. When several training sets
    /// are there (say `train.parquet` and `shuffle_train-NN-of-10.parquet`), `prefer` picks the
    /// prefix; two sets left (or none preferred) is an error naming them.
    pub fn open(root: &Path, prefer: Option<TrainPrefix>) -> Result<DatasetFolder, DatasetError> {
        let folder = root.display().to_string();
        let io_error = |source| DatasetError::Io {
            path: folder.clone(),
            source,
        };
        let mut files = BTreeMap::new();
        // Each set's files by index (two spellings of one index both kept, to be refused).
        let mut sets: BTreeMap<SetKey, Vec<(u32, PathBuf)>> = BTreeMap::new();
        // Names that look like training files but are not, with why.
        let mut skipped = Vec::new();
        for entry in std::fs::read_dir(root).map_err(io_error)? {
            let entry = entry.map_err(io_error)?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if !name.ends_with(".parquet") {
                continue;
            }
            match parse_train_name(&name) {
                Some((key, index)) => {
                    let set = sets.entry(key).or_default();
                    set.extend(index.map(|index| (index, entry.path())));
                }
                None if name.starts_with(TrainPrefix::Plain.name())
                    || name.starts_with(TrainPrefix::Shuffled.name()) =>
                {
                    skipped.push(name.clone());
                }
                None => {}
            }
            files.insert(name, entry.path());
        }
        let mut keys: Vec<SetKey> = sets.keys().copied().collect();
        if keys.len() > 1 {
            if let Some(prefix) = prefer {
                keys.retain(|key| key.prefix == prefix);
            }
        }
        let key = match keys[..] {
            [key] => key,
            [] => {
                let skipped = if skipped.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; skipped {}: not {{train|shuffle_train}}[-NN-of-MM].parquet with NN \
                         below MM",
                        skipped.join(", ")
                    )
                };
                return Err(DatasetError::NoTrainingSet { folder, skipped });
            }
            _ => {
                let names: Vec<String> = keys.iter().map(SetKey::to_string).collect();
                return Err(DatasetError::SeveralTrainingSets {
                    folder,
                    sets: names.join(", "),
                });
            }
        };
        let train = match key.count {
            None => vec![root.join(key.to_string())],
            Some(count) => {
                let mut indexed = sets.remove(&key).unwrap_or_default();
                indexed.sort();
                let name_of = |path: &PathBuf| {
                    path.file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                };
                if let Some((_, stray)) = indexed.iter().find(|(index, _)| *index >= count) {
                    return Err(DatasetError::StrayTrainFile {
                        folder,
                        name: name_of(stray),
                    });
                }
                if let Some(pair) = indexed.windows(2).find(|pair| pair[0].0 == pair[1].0) {
                    return Err(DatasetError::SeveralTrainingSets {
                        folder,
                        sets: format!("{} and {}", name_of(&pair[0].1), name_of(&pair[1].1)),
                    });
                }
                if let Some(missing) =
                    (0..count).find(|i| indexed.binary_search_by_key(i, |(i, _)| *i).is_err())
                {
                    return Err(DatasetError::MissingTrainFile {
                        folder,
                        name: train_file_name(key.prefix, missing, count),
                    });
                }
                indexed.into_iter().map(|(_, path)| path).collect()
            }
        };
        Ok(DatasetFolder {
            root: root.to_path_buf(),
            train_prefix: key.prefix,
            train,
            files,
        })
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The training set's prefix.
    pub fn train_prefix(&self) -> TrainPrefix {
        self.train_prefix
    }

    /// The training files, in order (`-00-of-MM` first).
    pub fn train_files(&self) -> &[PathBuf] {
        &self.train
    }

    /// The training set as one input (`cqlwire_vector::input::open_files`): its rows numbered
    /// across the files, `options.selection` (a row range, a shard) taken of the whole set.
    pub fn open_train(&self, options: &InputOptions) -> Result<Box<dyn BatchReader>, DatasetError> {
        Ok(input::open_files(&self.train, options)?)
    }

    /// `test.parquet`.
    pub fn test_file(&self) -> Result<&Path, DatasetError> {
        self.file(TEST_FILE)
    }

    /// `scalar_labels.parquet`.
    pub fn scalar_labels_file(&self) -> Result<&Path, DatasetError> {
        self.file(SCALAR_LABELS_FILE)
    }

    /// The ground truth of the unfiltered case (`neighbors.parquet`) or of `filter`: the first
    /// of [`Filter::ground_truth_names`] that exists.
    pub fn ground_truth_file(&self, filter: Option<&Filter>) -> Result<&Path, DatasetError> {
        let Some(filter) = filter else {
            return self.file(NEIGHBORS_FILE);
        };
        let names = filter.ground_truth_names();
        names
            .iter()
            .find_map(|name| self.files.get(name))
            .map(PathBuf::as_path)
            .ok_or_else(|| {
                let offered: Vec<String> = self
                    .filter_ground_truths()
                    .filter_map(filter_of_file)
                    .collect();
                let offered = if offered.is_empty() {
                    "; the folder has no filter's ground truth".to_owned()
                } else {
                    format!("; its filters: {}", offered.join(", "))
                };
                DatasetError::MissingFile {
                    folder: self.root.display().to_string(),
                    name: format!("{}{offered}", names.join(" or ")),
                }
            })
    }

    /// Every Parquet file directly in the folder.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.values().map(PathBuf::as_path)
    }

    /// The ground-truth files of filtered cases in the folder (`neighbors_*.parquet` but
    /// `neighbors.parquet`), by name.
    pub fn filter_ground_truths(&self) -> impl Iterator<Item = &str> {
        self.files
            .keys()
            .map(String::as_str)
            .filter(|name| name.starts_with("neighbors_"))
    }

    fn file(&self, name: &str) -> Result<&Path, DatasetError> {
        self.files
            .get(name)
            .map(PathBuf::as_path)
            .ok_or_else(|| DatasetError::MissingFile {
                folder: self.root.display().to_string(),
                name: name.to_owned(),
            })
    }
}

/// The `--filter` a filter's ground-truth file is for (`neighbors_int_50p.parquet` is `int:0.5`,
/// `neighbors_head_1p.parquet` `int:0.01`, `neighbors_labels_label_20p.parquet` `label:0.2`).
fn filter_of_file(name: &str) -> Option<String> {
    let stem = name.strip_prefix("neighbors_")?.strip_suffix(".parquet")?;
    let percent = |text: &str| -> Option<f64> {
        let value: f64 = text.strip_suffix('p')?.parse().ok()?;
        Some(value / 100.0)
    };
    match stem {
        "head_1p" => Some("int:0.01".to_owned()),
        "tail_1p" => Some("int:0.99".to_owned()),
        _ => {
            if let Some(rate) = stem.strip_prefix("int_").and_then(percent) {
                Some(format!("int:{rate}"))
            } else {
                let share = stem.strip_prefix("labels_label_").and_then(percent)?;
                Some(format!("label:{share}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn train_names_are_those_vectordbbench_writes() {
        let split = |prefix, count| SetKey {
            prefix,
            count: Some(count),
        };
        assert_eq!(
            parse_train_name("shuffle_train-03-of-10.parquet"),
            Some((split(TrainPrefix::Shuffled, 10), Some(3)))
        );
        assert_eq!(
            parse_train_name("train-100-of-120.parquet"),
            Some((split(TrainPrefix::Plain, 120), Some(100)))
        );
        assert_eq!(
            parse_train_name("train.parquet").map(|(key, _)| key.count),
            Some(None)
        );
        assert_eq!(
            parse_train_name("shuffle_train-00-of-03.parquet"),
            Some((split(TrainPrefix::Shuffled, 3), Some(0))),
            "a zero-padded count, as hand-made folders write it"
        );
        assert_eq!(
            parse_train_name("train-3-of-10.parquet"),
            Some((split(TrainPrefix::Plain, 10), Some(3)))
        );
        for other in [
            "train-00-of-0.parquet",
            "train-00-of-99999999999.parquet",
            "train-0x-of-10.parquet",
            "trainer.parquet",
            "test.parquet",
            "train-00-of-10.parq",
        ] {
            assert_eq!(parse_train_name(other), None, "{other}");
        }
    }

    #[test]
    fn a_filters_ground_truth_file_names_its_filter() {
        for (file, filter) in [
            ("neighbors_int_50p.parquet", "int:0.5"),
            ("neighbors_head_1p.parquet", "int:0.01"),
            ("neighbors_tail_1p.parquet", "int:0.99"),
            ("neighbors_int_0.1p.parquet", "int:0.001"),
            ("neighbors_labels_label_20p.parquet", "label:0.2"),
        ] {
            assert_eq!(filter_of_file(file).as_deref(), Some(filter), "{file}");
            let parsed: Filter = filter.parse().unwrap();
            assert!(
                parsed.ground_truth_names().iter().any(|n| n == file),
                "{file}"
            );
        }
        assert_eq!(filter_of_file("neighbors.parquet"), None);
    }

    #[test]
    fn int_filter_rates_parse_and_bound() {
        assert_eq!("int:0.01".parse(), Ok(Filter::Int { rate: 0.01 }));
        assert_eq!("label:0.05".parse(), Ok(Filter::Label { percentage: 0.05 }));
        for bad in [
            "int:1.5",
            "label:0",
            "label:-1",
            "int",
            "range:0.1",
            "int:x",
        ] {
            assert!(bad.parse::<Filter>().is_err(), "{bad}");
        }
        assert_eq!(Filter::Int { rate: 0.99 }.int_value(1000), Some(990));
        assert_eq!(Filter::Label { percentage: 0.05 }.int_value(1000), None);
    }
}
