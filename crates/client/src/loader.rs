//! Preparing the statement of a load on the table the connection layer read.

use scylla::client::session::Session;
use scylla::cluster::metadata::{CollectionType, ColumnType, NativeType};
use scylla::statement::prepared::PreparedStatement;

use crate::batch::{parse_storage, Bounds, DEFAULT_BATCH_BYTES};
use crate::error::{LoadError, LoadErrorKind, Setting};
use crate::options::LoadOptions;
use crate::session::{chosen_columns, ColumnRole, TableColumn, TableSession};
use crate::types::ServerType;
use cqlwire_codec::types::Identifier;
use std::fmt::Write as _;

/// A bind marker of the prepared statement: one value of every row goes to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindMarker {
    /// The marker's name: the column it binds, or e.g. `[ttl]` for `USING TTL ?`.
    pub name: String,
    /// The type the server expects.
    pub cql_type: ServerType,
}

/// A connected session with the target table's description and the prepared statement, ready to
/// [`run`](Loader::run).
pub struct Loader {
    pub(crate) session: Session,
    pub(crate) prepared: PreparedStatement,
    pub(crate) options: LoadOptions,
    columns: Vec<TableColumn>,
    markers: Vec<BindMarker>,
    /// For the default INSERT into a table with static columns: the statement of a static-only
    /// row (see [`StaticOnly`]).
    pub(crate) static_only: Option<StaticOnly>,
    /// Why a write of the statement must not be applied twice, if it must not.
    pub(crate) retry_unsafe: Option<RetryUnsafe>,
    /// How rows are gathered into batches, when they are.
    pub(crate) batch: Option<BatchPlan>,
}

/// How a load gathers rows into batches ([`LoadOptions::batch_rows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BatchPlan {
    /// The rows and bytes of a batch.
    pub(crate) bounds: Bounds,
    /// The bind markers whose values make a row's primary key (see [`Grouper::new`](crate::batch::Grouper::new)).
    pub(crate) key_markers: Vec<usize>,
}

/// Why a statement's write is not safe to apply twice, so that a request whose outcome is unknown
/// (a timeout, a lost connection) is not retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryUnsafe {
    /// A marker adds to a counter: applied twice, it adds twice.
    Counter,
    /// A marker writes a list that is not frozen: the server keys each element it writes anew, so
    /// the same write applied twice, at the same timestamp too, leaves every element twice.
    List,
}

impl RetryUnsafe {
    /// What applying the write twice would do, for a rejected row's reason.
    pub(crate) fn twice(self) -> &'static str {
        match self {
            RetryUnsafe::Counter => "applied twice, it would add to the counter twice",
            RetryUnsafe::List => "applied twice, it would leave the list's elements twice",
        }
    }

    /// The first reason among `markers`, if any.
    fn of(markers: &[BindMarker]) -> Option<RetryUnsafe> {
        let types = || markers.iter().map(|marker| marker.cql_type.column_type());
        if types().any(|t| matches!(t, ColumnType::Native(NativeType::Counter))) {
            Some(RetryUnsafe::Counter)
        } else if types().any(|t| {
            matches!(
                t,
                ColumnType::Collection {
                    frozen: false,
                    typ: CollectionType::List(_)
                }
            )
        }) {
            Some(RetryUnsafe::List)
        } else {
            None
        }
    }
}

/// The INSERT of a partition's static columns alone, for a row whose clustering and regular
/// columns are all null (what `unload` writes for a partition that has only static values): the
/// full INSERT would bind a null clustering key, which the server refuses.
pub(crate) struct StaticOnly {
    /// `INSERT INTO ks.t (partition key, static columns) VALUES (…)`.
    pub(crate) prepared: PreparedStatement,
    /// The full statement's markers that the static-only one binds, in its order.
    pub(crate) kept: Vec<usize>,
    /// The full statement's markers that must all be null for a row to be static-only.
    pub(crate) empty: Vec<usize>,
}

impl Loader {
    /// Connects to the cluster, reads the table's columns and prepares the statement (the given
    /// query, or an INSERT of the chosen columns), refusing a statement that cannot load rows.
    pub async fn connect(options: LoadOptions) -> Result<Loader, LoadError> {
        Self::connect_with(options, |_| Ok(None)).await
    }

    /// As [`connect`](Loader::connect), with the columns of the default INSERT chosen by `choose`
    /// from the table's columns once they are read (`None` keeps [`LoadOptions::columns`]; the choice
    /// is ignored when [`LoadOptions::query`] is given, but `choose` is called either way).
    pub async fn connect_with<F>(mut options: LoadOptions, choose: F) -> Result<Loader, LoadError>
    where
        F: FnOnce(&[TableColumn]) -> Result<Option<Vec<String>>, LoadError>,
    {
        let TableSession {
            session,
            keyspace,
            table: table_name,
            columns,
        } = TableSession::open(&options.session).await?;
        if let Some(chosen) = choose(&columns)? {
            options.columns = Some(chosen);
        }
        let statement = match &options.query {
            Some(query) => query.clone(),
            None => default_insert(&keyspace, &table_name, &columns, options.columns.as_deref())?,
        };
        let mut prepared = session.prepare(statement.as_str()).await.map_err(|error| {
            LoadError::new(
                LoadErrorKind::Statement,
                format!("the server refused to prepare {statement:?}: {error}"),
            )
            .with_source(error)
        })?;
        let markers = bind_markers(&prepared)?;
        if prepared.is_confirmed_lwt()
            || prepared.get_current_result_set_col_specs().get().len() > 0
        {
            return Err(LoadError::new(
                LoadErrorKind::Statement,
                format!(
                    "{statement:?} returns rows (a SELECT or a conditional IF statement): \
                     load with a plain INSERT or UPDATE"
                ),
            ));
        }
        let retry_unsafe = RetryUnsafe::of(&markers);
        prepared.set_is_idempotent(retry_unsafe.is_none());
        let batch = match options.batch_rows {
            0 | 1 => None,
            _ if retry_unsafe == Some(RetryUnsafe::Counter) => None,
            rows => Some(BatchPlan {
                bounds: Bounds {
                    rows,
                    bytes: batch_bytes(&session, options.batch_bytes).await,
                },
                key_markers: key_markers(&columns, &markers),
            }),
        };
        let static_only = match options.query {
            Some(_) => None,
            None => {
                let idempotent = retry_unsafe.is_none();
                let table = (&keyspace[..], &table_name[..]);
                static_only(&session, table, &columns, &markers, idempotent).await?
            }
        };
        Ok(Loader {
            session,
            prepared,
            options,
            columns,
            markers,
            static_only,
            retry_unsafe,
            batch,
        })
    }

    /// The table's columns: partition key parts, clustering parts, then the others by name.
    pub fn columns(&self) -> &[TableColumn] {
        &self.columns
    }

    /// The prepared statement's bind markers, in the order of every row's values.
    pub fn bind_markers(&self) -> &[BindMarker] {
        &self.markers
    }

    /// The CQL text of the prepared statement.
    pub fn statement(&self) -> &str {
        self.prepared.get_statement()
    }

    /// The options the loader was made with.
    pub fn options(&self) -> &LoadOptions {
        &self.options
    }
}

/// The bound of a batch's bytes: `given` lowered to the server's `batch_size_fail_threshold` when
/// `system_views.settings` shows it; without `given`, that threshold or [`DEFAULT_BATCH_BYTES`].
async fn batch_bytes(session: &Session, given: Option<u64>) -> u64 {
    let threshold = async {
        let result = session
            .query_unpaged(
                "SELECT name, value FROM system_views.settings WHERE name IN \
                 ('batch_size_fail_threshold', 'batch_size_fail_threshold_in_kb')",
                (),
            )
            .await
            .ok()?
            .into_rows_result()
            .ok()?;
        let mut rows = result.rows::<(String, Option<String>)>().ok()?;
        rows.find_map(|row| row.ok()?.1.as_deref().and_then(parse_storage))
    }
    .await;
    match (given, threshold) {
        (Some(given), Some(threshold)) => given.min(threshold),
        (Some(bytes), None) | (None, Some(bytes)) => bytes,
        (None, None) => DEFAULT_BATCH_BYTES,
    }
}

/// The bind markers whose values make a row's primary key: those of the partition key and
/// clustering columns, or of the partition key alone when a marker writes a static column (the
/// static cells of two rows of a partition are one).
fn key_markers(columns: &[TableColumn], markers: &[BindMarker]) -> Vec<usize> {
    let role = |marker: &BindMarker| {
        columns
            .iter()
            .find(|column| column.name == marker.name)
            .map(|column| column.role)
    };
    let statics = markers
        .iter()
        .any(|marker| role(marker) == Some(ColumnRole::Static));
    (0..markers.len())
        .filter(|&i| match role(&markers[i]) {
            Some(ColumnRole::PartitionKey(_)) => true,
            Some(ColumnRole::Clustering(_)) => !statics,
            _ => false,
        })
        .collect()
}

/// `INSERT INTO ks.t (c1, c2, ...) VALUES (?, ?, ...)` of `chosen` (as written in CQL) or of every
/// column, after checking that each chosen column exists and that every key column is there.
fn default_insert(
    keyspace: &str,
    table: &str,
    columns: &[TableColumn],
    chosen: Option<&[String]>,
) -> Result<String, LoadError> {
    let names: Vec<&str> = chosen_columns(columns, chosen, keyspace, table)?
        .iter()
        .map(|column| column.name.as_str())
        .collect();
    let missing: Vec<&str> = columns
        .iter()
        .filter(|column| {
            matches!(
                column.role,
                ColumnRole::PartitionKey(_) | ColumnRole::Clustering(_)
            ) && !names.contains(&column.name.as_str())
        })
        .map(|column| column.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(LoadError::new(
            LoadErrorKind::MissingKeyColumn,
            format!(
                "the INSERT into {keyspace}.{table} has no value for primary key column(s) {}: \
                 give the input a column for each (or a row-number column)",
                missing.join(", ")
            ),
        ));
    }
    if let Some(counter) = columns.iter().find(|column| {
        matches!(
            column.cql_type.column_type(),
            ColumnType::Native(NativeType::Counter)
        )
    }) {
        return Err(LoadError::new(
            LoadErrorKind::Statement,
            format!(
                "{keyspace}.{table} is a counter table (column {}): counters take \
                 `UPDATE ... SET c = c + ?`, give it as the query",
                counter.name
            ),
        )
        .with_setting(Setting::Query));
    }
    let mut statement = format!(
        "INSERT INTO {}.{} (",
        Identifier(keyspace),
        Identifier(table)
    );
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            statement.push_str(", ");
        }
        let _ = write!(statement, "{}", Identifier(name));
    }
    statement.push_str(") VALUES (");
    statement.push_str(&vec!["?"; names.len()].join(", "));
    statement.push(')');
    Ok(statement)
}

fn bind_markers(prepared: &PreparedStatement) -> Result<Vec<BindMarker>, LoadError> {
    prepared
        .get_variable_col_specs()
        .iter()
        .map(|spec| {
            let cql_type = ServerType::new(spec.typ().clone().into_owned()).map_err(|error| {
                LoadError::new(
                    LoadErrorKind::UnsupportedType,
                    format!("bind marker {}: {error}", spec.name()),
                )
            })?;
            Ok(BindMarker {
                name: spec.name().to_owned(),
                cql_type,
            })
        })
        .collect()
}

/// The static-only INSERT of a default INSERT's `markers` into a table with static columns among
/// them and clustering columns (see [`StaticOnly`]), `idempotent` as the default INSERT is;
/// `None` for any other table.
async fn static_only(
    session: &Session,
    (keyspace, table): (&str, &str),
    columns: &[TableColumn],
    markers: &[BindMarker],
    idempotent: bool,
) -> Result<Option<StaticOnly>, LoadError> {
    let role = |marker: &BindMarker| {
        columns
            .iter()
            .find(|column| column.name == marker.name)
            .map(|column| column.role)
    };
    let (mut kept, mut empty, mut statics) = (Vec::new(), Vec::new(), false);
    for (i, marker) in markers.iter().enumerate() {
        match role(marker) {
            Some(ColumnRole::PartitionKey(_)) => kept.push(i),
            Some(ColumnRole::Static) => {
                statics = true;
                kept.push(i);
            }
            _ => empty.push(i),
        }
    }
    let clustered = columns
        .iter()
        .any(|column| matches!(column.role, ColumnRole::Clustering(_)));
    if !statics || !clustered {
        return Ok(None);
    }
    let names: Vec<String> = kept
        .iter()
        .map(|&i| Identifier(&markers[i].name).to_string())
        .collect();
    let statement = format!(
        "INSERT INTO {}.{} ({}) VALUES ({})",
        Identifier(keyspace),
        Identifier(table),
        names.join(", "),
        vec!["?"; names.len()].join(", ")
    );
    let mut prepared = session.prepare(statement.as_str()).await.map_err(|error| {
        LoadError::new(
            LoadErrorKind::Statement,
            format!("the server refused to prepare {statement:?}: {error}"),
        )
        .with_source(error)
    })?;
    prepared.set_is_idempotent(idempotent);
    Ok(Some(StaticOnly {
        prepared,
        kept,
        empty,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::tests::column;
    use crate::types::tests::{collection, native, vector};

    fn table() -> Vec<TableColumn> {
        vec![
            column(
                "id",
                native(NativeType::BigInt),
                ColumnRole::PartitionKey(0),
            ),
            column("Part", native(NativeType::Int), ColumnRole::Clustering(0)),
            column(
                "embedding",
                vector(NativeType::Float, 3),
                ColumnRole::Regular,
            ),
            column("title", native(NativeType::Text), ColumnRole::Regular),
        ]
    }

    #[test]
    fn the_default_insert_names_every_column_quoted_where_needed() {
        let statement = default_insert("ks", "docs", &table(), None).unwrap();
        assert_eq!(
            statement,
            "INSERT INTO ks.docs (id, \"Part\", embedding, title) VALUES (?, ?, ?, ?)"
        );
        let chosen = [
            "embedding".to_owned(),
            "ID".to_owned(),
            "\"Part\"".to_owned(),
        ];
        let statement = default_insert("ks", "My Table", &table(), Some(&chosen)).unwrap();
        assert_eq!(
            statement,
            "INSERT INTO ks.\"My Table\" (embedding, id, \"Part\") VALUES (?, ?, ?)"
        );
    }

    #[test]
    fn an_insert_without_a_key_column_is_refused_naming_it() {
        let chosen = ["embedding".to_owned(), "id".to_owned()];
        let error = default_insert("ks", "docs", &table(), Some(&chosen)).unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::MissingKeyColumn);
        assert!(
            error.message().contains("primary key column(s) Part"),
            "{error}"
        );
    }

    #[test]
    fn unknown_and_repeated_columns_are_refused() {
        let error =
            default_insert("ks", "docs", &table(), Some(&["id".into(), "vec".into()])).unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::UnknownColumn);
        assert!(error.message().contains("no column vec"), "{error}");
        let error =
            default_insert("ks", "docs", &table(), Some(&["id".into(), "ID".into()])).unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::InvalidOption);
    }

    #[test]
    fn a_counter_table_needs_a_query() {
        let mut columns = table();
        columns.push(column(
            "hits",
            native(NativeType::Counter),
            ColumnRole::Regular,
        ));
        let error = default_insert("ks", "docs", &columns, None).unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::Statement);
        assert_eq!(error.setting(), Some(Setting::Query));
    }

    fn markers(types: Vec<ColumnType<'static>>) -> Vec<BindMarker> {
        types
            .into_iter()
            .enumerate()
            .map(|(i, typ)| BindMarker {
                name: format!("c{i}"),
                cql_type: ServerType::new(typ).unwrap(),
            })
            .collect()
    }

    #[test]
    fn only_counters_and_unfrozen_lists_are_unsafe_to_write_twice() {
        let list = || CollectionType::List(Box::new(native(NativeType::BigInt)));
        let set = CollectionType::Set(Box::new(native(NativeType::BigInt)));
        let safe = markers(vec![
            native(NativeType::BigInt),
            vector(NativeType::Float, 3),
            collection(true, list()),
            collection(false, set),
        ]);
        assert_eq!(RetryUnsafe::of(&safe), None);
        let with_list = markers(vec![native(NativeType::BigInt), collection(false, list())]);
        assert_eq!(RetryUnsafe::of(&with_list), Some(RetryUnsafe::List));
        let with_counter = markers(vec![collection(false, list()), native(NativeType::Counter)]);
        assert_eq!(RetryUnsafe::of(&with_counter), Some(RetryUnsafe::Counter));
    }
}
