use super::*;
use crate::types::tests::{collection, native, udt, vector};
use crate::value::Cell as BoundCell;
use cqlwire_vector::input::RowSelection;
use scylla::cluster::metadata::{CollectionType, NativeType};
use std::path::Path;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/convert/sample")
        .join(name)
}

fn options(path: PathBuf) -> DatasetOptions {
    DatasetOptions {
        path: Some(path),
        input: InputOptions {
            format: None,
            column: None,
            dataset: "train".to_string(),
            selection: RowSelection::All,
            batch_rows: 300,
            vectors_optional: false,
        },
        map: Vec::new(),
        row_number_column: None,
    }
}

fn column(
    name: &str,
    typ: scylla::cluster::metadata::ColumnType<'static>,
    role: ColumnRole,
) -> TableColumn {
    TableColumn {
        name: name.to_owned(),
        cql_type: crate::types::ServerType::new(typ).unwrap(),
        role,
    }
}

fn markers(table: &[TableColumn], names: &[&str]) -> Vec<BindMarker> {
    names
        .iter()
        .map(|name| {
            let column = table.iter().find(|c| c.name == *name).unwrap();
            BindMarker {
                name: column.name.clone(),
                cql_type: column.cql_type.clone(),
            }
        })
        .collect()
}

/// All rows of a dataset.
fn all_rows(dataset: &mut Dataset) -> Vec<Row> {
    let mut rows = Vec::new();
    while let Some(batch) = dataset.next_rows().unwrap() {
        rows.extend(batch);
    }
    rows
}

fn bytes(value: &Value) -> &[u8] {
    match value.cell() {
        BoundCell::Bytes(bytes) => bytes,
        other => panic!("not bytes: {other:?}"),
    }
}

#[test]
fn parquet_columns_map_by_name_and_values_are_the_reference_bytes() {
    let table = [
        column(
            "id",
            native(NativeType::BigInt),
            ColumnRole::PartitionKey(0),
        ),
        column("emb", vector(NativeType::Float, 128), ColumnRole::Regular),
        column("note", native(NativeType::Text), ColumnRole::Regular),
    ];
    let mut dataset = Dataset::open(&options(sample("train.parquet"))).unwrap();
    assert_eq!(dataset.table_columns(&table).unwrap(), ["emb", "id"]);
    dataset
        .bind(&markers(&table, &["id", "emb"]), &table)
        .unwrap();
    let rows = all_rows(&mut dataset);
    let expected = std::fs::read(sample("train.expected.bin")).unwrap();
    assert_eq!(rows.len(), 1000);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.number, i as u64);
        assert_eq!(
            bytes(&row.values[1]),
            &expected[i * 512..(i + 1) * 512],
            "row {i}"
        );
        let id = i64::from_be_bytes(bytes(&row.values[0]).try_into().unwrap());
        assert_eq!(row.key, format!("id={id}"));
    }
}

#[test]
fn rows_without_names_take_the_only_vector_column_and_their_numbers() {
    let table = [
        column("n", native(NativeType::Int), ColumnRole::PartitionKey(0)),
        column("v", vector(NativeType::Float, 128), ColumnRole::Regular),
    ];
    let mut options = options(sample("train.npy"));
    options.row_number_column = Some("n".into());
    options.input.selection = RowSelection::Range(990..1000);
    let mut dataset = Dataset::open(&options).unwrap();
    assert_eq!(dataset.first_row(), 990);
    assert_eq!(dataset.table_columns(&table).unwrap(), ["v", "n"]);
    dataset.bind(&markers(&table, &["n", "v"]), &table).unwrap();
    let rows = all_rows(&mut dataset);
    let numbers: Vec<u64> = rows.iter().map(|r| r.number).collect();
    assert_eq!(numbers, (990..1000).collect::<Vec<_>>());
    for row in &rows {
        assert_eq!(bytes(&row.values[0]), (row.number as i32).to_be_bytes());
    }
}

#[test]
fn mappings_that_cannot_work_are_refused() {
    let two_vectors = [
        column("id", native(NativeType::Int), ColumnRole::PartitionKey(0)),
        column("a", vector(NativeType::Float, 128), ColumnRole::Regular),
        column("b", vector(NativeType::Float, 128), ColumnRole::Regular),
    ];
    let mut dataset = Dataset::open(&options(sample("train.npy"))).unwrap();
    let error = dataset.table_columns(&two_vectors).unwrap_err();
    assert_eq!(error.kind(), LoadErrorKind::Mapping);
    assert!(
        error.message().contains("several vector columns"),
        "{}",
        error.message()
    );
    assert_eq!(error.setting(), Some(Setting::Query));

    let mut renamed = options(sample("train.parquet"));
    renamed.map = vec![("nope".into(), "id".into())];
    let error = Dataset::open(&renamed).unwrap_err();
    assert!(error.message().contains("nope"), "{}", error.message());
    // The library names no flag: each face renders the setting its own way.
    assert!(!error.message().contains("--"), "{}", error.message());
    assert_eq!(error.setting(), Some(Setting::Map));

    // The sample Parquet file (id int64, emb list<float> of 128) against tables it cannot fill.
    let key = |typ| column("id", native(typ), ColumnRole::PartitionKey(0));
    let emb = |dimension| {
        column(
            "emb",
            vector(NativeType::Float, dimension),
            ColumnRole::Regular,
        )
    };
    let extra = column("extra", native(NativeType::Text), ColumnRole::Regular);
    for (table, names, says) in [
        (
            vec![key(NativeType::BigInt), emb(64)],
            &["id", "emb"][..],
            "128 elements",
        ),
        (
            vec![key(NativeType::Timestamp), emb(128)],
            &["id", "emb"],
            "timestamp",
        ),
        (
            vec![key(NativeType::BigInt), emb(128), extra],
            &["id", "emb", "extra"],
            "extra",
        ),
    ] {
        let mut dataset = Dataset::open(&options(sample("train.parquet"))).unwrap();
        let error = dataset.bind(&markers(&table, names), &table).unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::Mapping);
        assert!(error.message().contains(says), "{}", error.message());
    }
}

#[test]
fn a_value_out_of_range_makes_only_its_row_invalid() {
    // Row numbers beyond tinyint: rows 0..=127 bind, the others carry the range error.
    let table = [
        column(
            "n",
            native(NativeType::TinyInt),
            ColumnRole::PartitionKey(0),
        ),
        column("v", vector(NativeType::Float, 128), ColumnRole::Regular),
    ];
    let mut options = options(sample("train.npy"));
    options.row_number_column = Some("n".into());
    options.input.selection = RowSelection::Range(120..140);
    let mut dataset = Dataset::open(&options).unwrap();
    dataset.table_columns(&table).unwrap();
    dataset.bind(&markers(&table, &["n", "v"]), &table).unwrap();
    for row in all_rows(&mut dataset) {
        match row.values[0].cell() {
            BoundCell::Bytes(bytes) => {
                assert!(row.number <= 127);
                assert_eq!(bytes.as_ref(), [row.number as u8]);
            }
            BoundCell::Invalid(reason) => {
                assert!(row.number > 127);
                assert!(reason.contains("out of range"), "{reason}");
                assert_eq!(row.key, "n=?");
            }
            other => panic!("row {}: {other:?}", row.number),
        }
        assert_eq!(bytes(&row.values[1]).len(), 512);
    }
}

#[test]
fn a_text_value_nested_in_a_list_map_struct_or_dictionary_makes_only_its_row_invalid() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/damaged_text");
    // `row column path` of each value that is not UTF-8, as the fixture generator wrote them.
    let listed = std::fs::read_to_string(fixtures.join("nested.bad")).unwrap();
    let bad: Vec<Vec<&str>> = listed.lines().map(|l| l.split(' ').collect()).collect();
    let text = || native(NativeType::Text);
    let list = || collection(false, CollectionType::List(Box::new(text())));
    let map = collection(
        false,
        CollectionType::Map(Box::new(text()), Box::new(text())),
    );
    let author = udt(
        false,
        "person",
        vec![("name", text()), ("n", native(NativeType::Int))],
    );
    let table = [
        column(
            "id",
            native(NativeType::BigInt),
            ColumnRole::PartitionKey(0),
        ),
        column("emb", vector(NativeType::Float, 4), ColumnRole::Regular),
        column("tags", list(), ColumnRole::Regular),
        column("author", author, ColumnRole::Regular),
        column("attrs", map, ColumnRole::Regular),
        column("notes", list(), ColumnRole::Regular),
        column("kind", text(), ColumnRole::Regular),
    ];
    let names: Vec<&str> = table.iter().map(|c| c.name.as_str()).collect();
    for name in ["nested.parquet", "nested.arrow", "nested.arrows"] {
        let mut dataset = Dataset::open(&options(fixtures.join(name))).unwrap();
        dataset.table_columns(&table).unwrap();
        dataset.bind(&markers(&table, &names), &table).unwrap();
        let rows = all_rows(&mut dataset);
        assert_eq!(rows.len(), 5000, "{name}");
        for row in rows {
            let invalid: Vec<(usize, &str)> = row
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, value)| match value.cell() {
                    BoundCell::Invalid(reason) => Some((i, reason.as_str())),
                    _ => None,
                })
                .collect();
            let listed = bad.iter().find(|b| b[0] == row.number.to_string());
            let Some(&[_, column, path]) = listed.map(Vec::as_slice) else {
                assert!(invalid.is_empty(), "{name} row {}: {invalid:?}", row.number);
                continue;
            };
            let at = names.iter().position(|n| *n == column).unwrap();
            let [(index, reason)] = invalid[..] else {
                panic!("{name} row {}: {invalid:?}", row.number);
            };
            assert_eq!(index, at, "{name} row {}: {reason}", row.number);
            let prefix = format!("column {column}: its value");
            assert!(reason.starts_with(&prefix), "{name}: {reason}");
            assert!(reason.contains(path), "{name}: {reason}");
            assert!(reason.contains("is not UTF-8 text ("), "{name}: {reason}");
        }
    }
}

/// A dataset of record batches with the columns `id` (int64), `n` (int64) and `note` (text) and no
/// list column, read without vectors when `vectors_optional`.
fn scalar_rows(vectors_optional: bool) -> Result<Dataset, String> {
    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("n", DataType::Int64, false),
        Field::new("note", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![7, -2])),
            Arc::new(Int64Array::from(vec![1, 40])),
            Arc::new(StringArray::from(vec![Some("a"), None])),
        ],
    )
    .unwrap();
    let reader = cqlwire_vector::input::open_record_batches(
        "rows",
        &schema,
        std::iter::once(Ok(batch)),
        None,
        0,
        10,
        vectors_optional,
    )
    .map_err(|e| e.to_string())?;
    Dataset::from_reader(reader, &[], None).map_err(|e| e.to_string())
}

#[test]
fn an_input_without_a_list_column_loads_its_columns_only_when_vectors_are_optional() {
    let refused = scalar_rows(false).unwrap_err();
    assert!(refused.contains("no list-typed column"), "{refused}");

    let table = [
        column(
            "id",
            native(NativeType::BigInt),
            ColumnRole::PartitionKey(0),
        ),
        column("n", native(NativeType::Int), ColumnRole::Regular),
        column("note", native(NativeType::Text), ColumnRole::Regular),
    ];
    let mut dataset = scalar_rows(true).unwrap();
    assert_eq!(dataset.table_columns(&table).unwrap(), ["id", "n", "note"]);
    let (statement, numbered) = dataset.create_table("ks", "t");
    assert_eq!(
        statement,
        "CREATE TABLE ks.t (id bigint PRIMARY KEY, n bigint, note text)"
    );
    assert!(!numbered);
    dataset
        .bind(&markers(&table, &["id", "n", "note"]), &table)
        .unwrap();
    let rows = all_rows(&mut dataset);
    assert_eq!(rows.len(), 2);
    assert_eq!(bytes(&rows[0].values[0]), 7i64.to_be_bytes());
    assert_eq!(bytes(&rows[0].values[1]), 1i32.to_be_bytes());
    assert_eq!(bytes(&rows[0].values[2]), b"a");
    assert!(matches!(rows[1].values[2].cell(), BoundCell::Null));
    assert_eq!(rows[1].key, "id=-2");
}

#[test]
fn an_integer_column_adds_to_a_counter_as_an_eight_byte_bigint() {
    let table = [
        column(
            "id",
            native(NativeType::BigInt),
            ColumnRole::PartitionKey(0),
        ),
        column("n", native(NativeType::Counter), ColumnRole::Regular),
    ];
    // The markers of `UPDATE ks.t SET n = n + ? WHERE id = ?`.
    let mut dataset = scalar_rows(true).unwrap();
    dataset
        .bind(&markers(&table, &["n", "id"]), &table)
        .unwrap();
    let rows = all_rows(&mut dataset);
    assert_eq!(bytes(&rows[1].values[0]), 40i64.to_be_bytes());
    assert_eq!(bytes(&rows[1].values[1]), (-2i64).to_be_bytes());

    let text = [
        column(
            "id",
            native(NativeType::BigInt),
            ColumnRole::PartitionKey(0),
        ),
        column("note", native(NativeType::Counter), ColumnRole::Regular),
    ];
    let mut dataset = scalar_rows(true).unwrap();
    let refused = dataset
        .bind(&markers(&text, &["note", "id"]), &text)
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("cannot be added to a counter"),
        "{refused}"
    );
}

/// A Parquet file as `unload` writes a table `(id bigint, a_tags list<int>, vec vector<float, 4>)`:
/// its columns in the table's order, the list column before the vector column.
fn list_before_vector(path: &Path, rows: &[(i64, Vec<i32>, [f32; 4])]) {
    use arrow_array::builder::{FixedSizeListBuilder, Float32Builder, Int32Builder, ListBuilder};
    use arrow_array::{Int64Array, RecordBatch};

    let mut tags = ListBuilder::new(Int32Builder::new());
    let mut vectors = FixedSizeListBuilder::new(Float32Builder::new(), 4);
    for (_, row_tags, vector) in rows {
        tags.values().append_slice(row_tags);
        tags.append(true);
        vectors.values().append_slice(vector);
        vectors.append(true);
    }
    let ids = Int64Array::from_iter_values(rows.iter().map(|row| row.0));
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as ArrayRef),
        ("a_tags", Arc::new(tags.finish()) as ArrayRef),
        ("vec", Arc::new(vectors.finish()) as ArrayRef),
    ])
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

#[test]
fn the_tables_only_vector_column_is_filled_though_a_list_column_comes_first() {
    // Lists of one length read as vectors too; lists of several lengths do not.
    let even = [
        (7, vec![1, 2], [1.0, -2.5, 0.0, 3.25]),
        (9, vec![3, 4], [0.5, 0.25, -0.125, 8.0]),
    ];
    let ragged = [
        (7, vec![1, 2], [1.0, -2.5, 0.0, 3.25]),
        (9, vec![], [0.5, 0.25, -0.125, 8.0]),
    ];
    for rows in [even, ragged] {
        fills_the_vector_column_from_vec(&rows);
    }
}

fn fills_the_vector_column_from_vec(rows: &[(i64, Vec<i32>, [f32; 4])]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unloaded.parquet");
    list_before_vector(&path, rows);
    let table = [
        column(
            "id",
            native(NativeType::BigInt),
            ColumnRole::PartitionKey(0),
        ),
        column(
            "a_tags",
            collection(
                false,
                CollectionType::List(Box::new(native(NativeType::Int))),
            ),
            ColumnRole::Regular,
        ),
        column("vec", vector(NativeType::Float, 4), ColumnRole::Regular),
    ];
    let mut dataset = Dataset::open(&options(path)).unwrap();
    let mut columns = dataset.table_columns(&table).unwrap();
    assert_eq!(columns.remove(0), "vec");
    columns.sort();
    assert_eq!(columns, ["a_tags", "id"]);
    dataset
        .bind(&markers(&table, &["id", "a_tags", "vec"]), &table)
        .unwrap();
    let loaded = all_rows(&mut dataset);
    assert_eq!(loaded.len(), rows.len());
    for (row, (id, tags, vector)) in loaded.iter().zip(rows) {
        assert_eq!(bytes(&row.values[0]), id.to_be_bytes());
        // A list<int> value: the count, then each element behind its 4-byte length.
        let mut list = (tags.len() as i32).to_be_bytes().to_vec();
        for tag in tags {
            list.extend_from_slice(&4i32.to_be_bytes());
            list.extend_from_slice(&tag.to_be_bytes());
        }
        assert_eq!(bytes(&row.values[1]), list);
        let floats: Vec<u8> = vector.iter().flat_map(|x| x.to_be_bytes()).collect();
        assert_eq!(bytes(&row.values[2]), floats);
    }
}
