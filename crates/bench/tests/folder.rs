//! A dataset folder in VectorDBBench's layout (fixtures/bench/folder, written by
//! fixtures/bench/generate.py with pyarrow and NumPy) read back, and damaged folders and files
//! refused in one line.

use arrow_array::{ArrayRef, Float32Array, Int64Array, ListArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field};
use cqlwire_bench::folder::{DatasetFolder, Filter, TrainPrefix};
use cqlwire_bench::truth::{GroundTruth, Queries, ScalarLabels};
use cqlwire_bench::DatasetError;
use cqlwire_testkit::fixture;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn described() -> Value {
    let text = std::fs::read_to_string(fixture("bench/folder.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn folder() -> DatasetFolder {
    DatasetFolder::open(&fixture("bench/folder"), None).unwrap()
}

fn names(paths: &[PathBuf]) -> Vec<String> {
    let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    paths.iter().map(name).collect()
}

#[test]
fn the_fixture_folder_reads_as_generated() {
    let expected = described();
    let folder = folder();
    assert_eq!(folder.train_prefix(), TrainPrefix::Shuffled);
    let train: Vec<&str> = expected["train_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names(folder.train_files()), train);
    let queries = Queries::read(folder.test_file().unwrap()).unwrap();
    let test_ids: Vec<i64> = expected["test_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(queries.ids(), test_ids);
    assert_eq!(
        queries.dimension() as u64,
        expected["dimension"].as_u64().unwrap()
    );
    assert_eq!(queries.vector(0).len(), queries.dimension());
    assert!(queries.vector(queries.len()).is_empty());
    for (name, lists) in expected["ground_truth"].as_object().unwrap() {
        let path = fixture("bench/folder").join(name);
        let truth = GroundTruth::read(&path).unwrap();
        truth.check_queries(queries.len()).unwrap();
        truth
            .check_ids(0..expected["rows"].as_i64().unwrap())
            .unwrap();
        for (query, list) in lists.as_array().unwrap().iter().enumerate() {
            let list: Vec<i64> = list
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            assert_eq!(truth.list(query), list, "{name} query {query}");
        }
    }
    let labels = ScalarLabels::read(folder.scalar_labels_file().unwrap()).unwrap();
    assert_eq!(labels.len() as u64, expected["rows"].as_u64().unwrap());
    assert_eq!(
        labels.count("label_20p") as u64,
        expected["label_20p_rows"].as_u64().unwrap()
    );
    assert!(matches!(labels.label(0), Some("label_20p" | "label_80p")));
    assert_eq!(labels.label(-1), None);
}

#[test]
fn the_training_set_reads_as_one_input_and_shards_as_one() {
    use cqlwire_vector::input::{InputFormat, InputOptions, RowSelection};
    let options = |selection| InputOptions {
        format: Some(InputFormat::Parquet),
        column: Some("emb".into()),
        dataset: String::new(),
        selection,
        batch_rows: 64,
        vectors_optional: false,
    };
    let folder = folder();
    let rows = described()["rows"].as_u64().unwrap();
    let mut ids = Vec::new();
    for k in 1..=4 {
        let mut reader = folder
            .open_train(&options(RowSelection::Shard { k, n: 4 }))
            .unwrap();
        assert_eq!(reader.dimension(), 8);
        let mut next_row = (rows * (k - 1)) / 4;
        while let Some(batch) = reader.next_batch().unwrap() {
            assert_eq!(batch.first_row, next_row);
            next_row += batch.rows as u64;
            let columns = batch.columns.unwrap();
            let column = columns.column_by_name("id").unwrap();
            let column = column.as_any().downcast_ref::<Int64Array>().unwrap();
            ids.extend(column.values().iter().copied());
        }
        assert_eq!(next_row, (rows * k) / 4);
    }
    // Every training id once: the shuffled files hold the ids 0..rows between them.
    ids.sort_unstable();
    assert_eq!(ids, (0..rows as i64).collect::<Vec<_>>());
}

#[test]
fn each_filter_finds_its_ground_truth_file() {
    let folder = folder();
    let file = |filter: &str| {
        let filter: Filter = filter.parse().unwrap();
        let path = folder
            .ground_truth_file(Some(&filter))
            .map(Path::to_path_buf);
        path.map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
    };
    assert_eq!(file("int:0.01").unwrap(), "neighbors_head_1p.parquet");
    assert_eq!(file("int:0.99").unwrap(), "neighbors_tail_1p.parquet");
    assert_eq!(file("int:0.5").unwrap(), "neighbors_int_50p.parquet");
    assert_eq!(
        file("label:0.2").unwrap(),
        "neighbors_labels_label_20p.parquet"
    );
    let error = file("int:0.3").unwrap_err().to_string();
    assert!(
        error.ends_with(
            "no neighbors_int_30p.parquet; its filters: int:0.01, int:0.5, \
             label:0.2, int:0.99"
        ),
        "{error}"
    );
    let unfiltered = folder.ground_truth_file(None).unwrap();
    assert!(unfiltered.ends_with("neighbors.parquet"));
    assert_eq!(folder.filter_ground_truths().count(), 4);
}

/// A folder holding empty files of these names.
fn folder_of(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in names {
        std::fs::write(dir.path().join(name), b"").unwrap();
    }
    dir
}

fn open_error(names: &[&str], prefer: Option<TrainPrefix>) -> String {
    let dir = folder_of(names);
    let error = DatasetFolder::open(dir.path(), prefer)
        .unwrap_err()
        .to_string();
    assert!(!error.contains('\n'), "{error}");
    error
}

#[test]
fn an_incomplete_or_ambiguous_training_set_is_refused_by_name() {
    let error = open_error(&["train-00-of-3.parquet", "train-02-of-3.parquet"], None);
    assert!(error.ends_with("lacks train-01-of-3.parquet"), "{error}");
    let error = open_error(&["test.parquet", "train.csv"], None);
    assert!(error.contains("no training set"), "{error}");
    let both = [
        "train.parquet",
        "shuffle_train-00-of-2.parquet",
        "shuffle_train-01-of-2.parquet",
    ];
    let error = open_error(&both, None);
    assert!(
        error.contains("train.parquet, shuffle_train-NN-of-2.parquet"),
        "{error}"
    );
    let dir = folder_of(&both);
    let plain = DatasetFolder::open(dir.path(), Some(TrainPrefix::Plain)).unwrap();
    assert_eq!(names(plain.train_files()), ["train.parquet"]);
    let shuffled = DatasetFolder::open(dir.path(), Some(TrainPrefix::Shuffled)).unwrap();
    assert_eq!(names(shuffled.train_files()).len(), 2);
    let split_twice = ["train-00-of-1.parquet", "train.parquet"];
    assert!(open_error(&split_twice, Some(TrainPrefix::Plain)).contains("several"));
    // Ordered by number, not by name: 100 after 99.
    let many: Vec<String> = (0..101)
        .map(|i| format!("train-{i:02}-of-101.parquet"))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let dir = folder_of(&many);
    let read = DatasetFolder::open(dir.path(), None).unwrap();
    assert_eq!(names(read.train_files()), many);
}

fn write_parquet(dir: &Path, name: &str, columns: Vec<(&str, ArrayRef)>) -> PathBuf {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let path = dir.join(name);
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path
}

fn int64(values: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

fn lists(lists: &[&[i64]]) -> ArrayRef {
    let item = Arc::new(Field::new("item", DataType::Int64, true));
    let values = Int64Array::from_iter_values(lists.iter().flat_map(|l| l.iter().copied()));
    let offsets = arrow_buffer::OffsetBuffer::from_lengths(lists.iter().map(|l| l.len()));
    Arc::new(ListArray::new(item, offsets, Arc::new(values), None))
}

fn text(values: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(values.to_vec()))
}

fn one_line(error: DatasetError, expected: &str) {
    let text = error.to_string();
    assert!(text.contains(expected) && !text.contains('\n'), "{text}");
}

#[test]
fn hostile_ground_truth_files_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let ids = || int64(&[Some(0), Some(1)]);
    let negative = write_parquet(
        dir.path(),
        "n1.parquet",
        vec![("id", ids()), ("neighbors_id", lists(&[&[1, 2], &[3, -4]]))],
    );
    let error = GroundTruth::read(&negative).unwrap_err();
    assert!(
        !error.to_string().contains("9223372036854775807"),
        "{error}"
    );
    one_line(error, "row 1 holds a negative id -4");
    let empty = write_parquet(
        dir.path(),
        "n2.parquet",
        vec![("id", ids()), ("neighbors_id", lists(&[&[], &[]]))],
    );
    assert!(GroundTruth::read(&empty).is_err());
    let good = write_parquet(
        dir.path(),
        "n3.parquet",
        vec![("id", ids()), ("neighbors_id", lists(&[&[1, 2], &[3, 9]]))],
    );
    let truth = GroundTruth::read(&good).unwrap();
    one_line(
        truth.check_ids(0..5).unwrap_err(),
        "row 1 holds id 9, outside the training ids 0..5",
    );
    one_line(
        truth.check_queries(3).unwrap_err(),
        "2 neighbour lists for 3 queries",
    );
    let missing = write_parquet(
        dir.path(),
        "n4.parquet",
        vec![("id", ids()), ("emb", lists(&[&[1], &[2]]))],
    );
    one_line(
        GroundTruth::read(&missing).unwrap_err(),
        "no column 'neighbors_id'",
    );
    // The fixture cut short, and bytes that are no Parquet at all.
    let whole = std::fs::read(fixture("bench/folder/neighbors.parquet")).unwrap();
    for (name, bytes) in [
        ("cut.parquet", &whole[..whole.len() / 2]),
        ("junk.parquet", b"PAR1junk".as_slice()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        assert!(GroundTruth::read(&path).is_err());
        assert!(ScalarLabels::read(&path).is_err());
        assert!(Queries::read(&path).is_err());
    }
}

#[test]
fn hostile_label_and_query_files_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let labels =
        |name: &str, columns| ScalarLabels::read(&write_parquet(dir.path(), name, columns));
    let ok = labels(
        "l0.parquet",
        vec![
            ("id", int64(&[Some(7), Some(3)])),
            ("labels", text(&[Some("a"), None])),
        ],
    )
    .unwrap();
    assert_eq!(
        (ok.label(7), ok.label(3), ok.label(0)),
        (Some("a"), None, None)
    );
    assert_eq!(ok.names(), ["a"]);
    let cases = [
        (vec![("id", int64(&[Some(1)]))], "no column 'labels'"),
        (
            vec![("id", int64(&[Some(1)])), ("labels", int64(&[Some(5)]))],
            "column 'labels' has type Int64; expected text",
        ),
        (
            vec![("id", text(&[Some("1")])), ("labels", text(&[Some("a")]))],
            "column 'id' has type Utf8; expected int64",
        ),
        (
            vec![
                ("id", int64(&[Some(1), None])),
                ("labels", text(&[Some("a"), Some("b")])),
            ],
            "row 1 has no id",
        ),
        (
            vec![
                ("id", int64(&[Some(4), Some(4)])),
                ("labels", text(&[Some("a"), Some("b")])),
            ],
            "row 1 repeats id 4",
        ),
    ];
    for (i, (columns, expected)) in cases.into_iter().enumerate() {
        one_line(
            labels(&format!("l{}.parquet", i + 1), columns).unwrap_err(),
            expected,
        );
    }
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let vectors = ListArray::new(
        item,
        arrow_buffer::OffsetBuffer::from_lengths([2, 2]),
        Arc::new(Float32Array::from(vec![1.0, 2.0, 3.0, 4.0])),
        Some(arrow_buffer::NullBuffer::from(vec![true, false])),
    );
    let whole = ListArray::new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        arrow_buffer::OffsetBuffer::from_lengths([2, 2]),
        Arc::new(Float32Array::from(vec![1.0, 2.0, 3.0, 4.0])),
        None,
    );
    let path = write_parquet(
        dir.path(),
        "q1.parquet",
        vec![
            ("id", int64(&[Some(1), Some(2)])),
            ("emb", Arc::new(vectors.clone())),
        ],
    );
    one_line(Queries::read(&path).unwrap_err(), "row 1 has no emb");
    let path = write_parquet(
        dir.path(),
        "q2.parquet",
        vec![
            ("key", int64(&[Some(1), Some(2)])),
            ("emb", Arc::new(whole)),
        ],
    );
    one_line(Queries::read(&path).unwrap_err(), "no column 'id'");
}

/// Every row of the training set read through [`WithFilterColumn`]: (id, added column).
fn with_filter_column(filter: Filter) -> Vec<(i64, Option<String>)> {
    use arrow_array::Array;
    use cqlwire_bench::filtered::{FilterColumn, WithFilterColumn};
    use cqlwire_vector::input::{BatchReader, InputOptions, RowSelection};
    let folder = folder();
    let options = InputOptions {
        format: None,
        column: Some("emb".to_owned()),
        dataset: String::new(),
        selection: RowSelection::All,
        batch_rows: 64,
        vectors_optional: false,
    };
    let column = FilterColumn::new(filter, 300);
    let labels = ScalarLabels::read(folder.scalar_labels_file().unwrap()).unwrap();
    let inner = folder.open_train(&options).unwrap();
    let mut reader = WithFilterColumn::new(inner, &column, Some(labels)).unwrap();
    let schema = reader.passthrough_schema().unwrap();
    assert_eq!(schema.fields().last().unwrap().name(), column.column);
    let mut rows = Vec::new();
    while let Some(batch) = reader.next_batch().unwrap() {
        let columns = batch.columns.unwrap();
        let ids = columns["id"].as_any().downcast_ref::<Int64Array>().unwrap();
        let added = &columns[column.column];
        for (i, id) in ids.values().iter().enumerate() {
            let value = if let Some(copy) = added.as_any().downcast_ref::<Int64Array>() {
                Some(copy.value(i).to_string())
            } else {
                let labels = added.as_any().downcast_ref::<StringArray>().unwrap();
                Some(labels.value(i).to_owned()).filter(|_| labels.is_valid(i))
            };
            rows.push((*id, value));
        }
    }
    rows
}

#[test]
fn an_int_filter_loads_a_copy_of_each_id() {
    let rows = with_filter_column(Filter::Int { rate: 0.5 });
    assert_eq!(rows.len(), 300);
    for (id, copy) in rows {
        assert_eq!(copy, Some(id.to_string()));
    }
}

#[test]
fn a_label_filter_loads_each_ids_label_from_the_labels_file() {
    let labels = ScalarLabels::read(folder().scalar_labels_file().unwrap()).unwrap();
    let rows = with_filter_column(Filter::Label { percentage: 0.2 });
    assert_eq!(rows.len(), 300);
    let marked = rows
        .iter()
        .filter(|(_, label)| label.as_deref() == Some("label_20p"))
        .count() as u64;
    assert_eq!(marked, described()["label_20p_rows"].as_u64().unwrap());
    for (id, label) in rows {
        assert_eq!(label.as_deref(), labels.label(id));
    }
}
