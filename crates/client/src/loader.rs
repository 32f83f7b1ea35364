//! Connecting, reading the table, preparing the statement.

use std::sync::Arc;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::cluster::metadata::{ColumnKind, ColumnType, NativeType, Table};
use scylla::errors::{
    ConnectionError, ConnectionPoolError, ConnectionSetupRequestErrorKind, DbError, MetadataError,
    NewSessionError,
};
use scylla::frame::Compression;
use scylla::policies::retry::FallthroughRetryPolicy;
use scylla::statement::prepared::PreparedStatement;

use crate::error::{LoadError, LoadErrorKind, Setting};
use crate::options::{schema_name, LoadOptions};
use crate::types::ServerType;
use cqlwire_codec::types::Identifier;
use std::fmt::Write as _;

/// The role of a column in its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ColumnRole {
    /// Part `n` (0-based) of the partition key.
    PartitionKey(usize),
    /// Part `n` (0-based) of the clustering key.
    Clustering(usize),
    /// A static column.
    Static,
    /// A regular column.
    Regular,
}

/// A column of the target table, as the server describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableColumn {
    /// Name in the schema (case as stored).
    pub name: String,
    /// Type, with its frozen flags.
    pub cql_type: ServerType,
    /// Key part, static or regular.
    pub role: ColumnRole,
}

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
        } = TableSession::open(&options).await?;
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
        // Retrying is safe unless a marker adds to a counter.
        let idempotent = !markers.iter().any(|marker| {
            matches!(
                marker.cql_type.column_type(),
                ColumnType::Native(NativeType::Counter)
            )
        });
        prepared.set_is_idempotent(idempotent);
        let static_only = match options.query {
            Some(_) => None,
            None => static_only(&session, &keyspace, &table_name, &columns, &markers).await?,
        };
        Ok(Loader {
            session,
            prepared,
            options,
            columns,
            markers,
            static_only,
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

/// A session to the cluster of some [`LoadOptions`], with the description of their table: what
/// every command on a table starts from (hosts, login, TLS, consistency, timeout of `options`).
pub(crate) struct TableSession {
    /// The connected session.
    pub(crate) session: Session,
    /// The keyspace's name in the schema.
    pub(crate) keyspace: String,
    /// The table's name in the schema.
    pub(crate) table: String,
    /// The table's columns, as [`Loader::columns`] orders them.
    pub(crate) columns: Vec<TableColumn>,
}

impl TableSession {
    /// Connects and reads the table's columns; an unknown keyspace or table is an error.
    pub(crate) async fn open(options: &LoadOptions) -> Result<TableSession, LoadError> {
        let keyspace = schema_name(&options.keyspace);
        let table = schema_name(&options.table);
        let session = open_session(options, &keyspace).await?;
        let columns = {
            let state = session.get_cluster_state();
            table_columns(find_table(&state, &keyspace, &table)?)?
        };
        Ok(TableSession {
            session,
            keyspace,
            table,
            columns,
        })
    }
}

pub(crate) async fn open_session(
    options: &LoadOptions,
    keyspace: &str,
) -> Result<Session, LoadError> {
    if options.hosts.is_empty() {
        return Err(LoadError::new(
            LoadErrorKind::InvalidOption,
            "no host given",
        ));
    }
    // Retries are this crate's: the driver's policy would retry out of sight of the counters.
    let profile = ExecutionProfile::builder()
        .consistency(options.consistency)
        .request_timeout(Some(options.request_timeout))
        .retry_policy(Arc::new(FallthroughRetryPolicy::new()))
        .build();
    let mut builder = SessionBuilder::new()
        .known_nodes(options.hosts.iter().map(ToString::to_string))
        .default_execution_profile_handle(profile.into_handle())
        .keyspaces_to_fetch([keyspace.to_owned()])
        .compression(options.compression.then_some(Compression::Lz4));
    if let Some(credentials) = &options.credentials {
        builder = builder.user(&credentials.username, credentials.password.expose());
    }
    if let Some(tls) = &options.tls {
        builder = builder.tls_context(Some(crate::tls::client_config(tls)?));
    }
    // The driver waits much longer for a node that accepts the connection but never answers
    // (a minute, then blames a keepalive): the whole setup gets the request timeout.
    let hosts_text = || {
        let hosts: Vec<String> = options.hosts.iter().map(ToString::to_string).collect();
        hosts.join(",")
    };
    let timeout = options.request_timeout;
    let built = tokio::time::timeout(timeout, builder.connection_timeout(timeout).build())
        .await
        .map_err(|_| {
            LoadError::new(
                LoadErrorKind::Connect,
                format!(
                    "cannot connect to {}: no answer within {:.1} s (the request timeout)",
                    hosts_text(),
                    timeout.as_secs_f64()
                ),
            )
        })?;
    built.map_err(|error| {
        let kind = if is_authentication_failure(&error) {
            LoadErrorKind::Authentication
        } else {
            LoadErrorKind::Connect
        };
        LoadError::new(kind, format!("cannot connect to {}: {error}", hosts_text()))
    })
}

fn is_authentication_failure(error: &NewSessionError) -> bool {
    let NewSessionError::MetadataError(MetadataError::ConnectionPoolError(
        ConnectionPoolError::Broken {
            last_connection_error: ConnectionError::ConnectionSetupRequestError(setup),
        },
    )) = error
    else {
        return false;
    };
    match setup.get_error() {
        ConnectionSetupRequestErrorKind::DbError(DbError::AuthenticationError, _) => true,
        other => {
            // Missing credentials and authenticator failures have no DbError of their own.
            let text = other.to_string();
            text.contains("authenticat") || text.contains("Authenticat")
        }
    }
}

pub(crate) fn find_table<'a>(
    state: &'a scylla::cluster::ClusterState,
    keyspace: &str,
    table: &str,
) -> Result<&'a Table, LoadError> {
    let unknown = |message: String| LoadError::new(LoadErrorKind::UnknownTable, message);
    let metadata = state
        .get_keyspace(keyspace)
        .ok_or_else(|| unknown(format!("keyspace {keyspace} does not exist")))?;
    metadata.tables.get(table).ok_or_else(|| {
        let mut names: Vec<&str> = metadata.tables.keys().map(String::as_str).collect();
        names.sort_unstable();
        let known = if names.is_empty() {
            "it has no tables".to_owned()
        } else {
            format!("its tables: {}", names.join(", "))
        };
        unknown(format!("table {keyspace}.{table} does not exist ({known})"))
    })
}

pub(crate) fn table_columns(table: &Table) -> Result<Vec<TableColumn>, LoadError> {
    let role_of = |name: &str, kind: ColumnKind| {
        if let Some(i) = table.partition_key.iter().position(|key| key == name) {
            ColumnRole::PartitionKey(i)
        } else if let Some(i) = table.clustering_key.iter().position(|key| key == name) {
            ColumnRole::Clustering(i)
        } else if kind == ColumnKind::Static {
            ColumnRole::Static
        } else {
            ColumnRole::Regular
        }
    };
    let mut columns = table
        .columns
        .iter()
        .map(|(name, column)| {
            let cql_type = ServerType::new(column.typ.clone()).map_err(|error| {
                LoadError::new(
                    LoadErrorKind::UnsupportedType,
                    format!("column {name}: {error}"),
                )
            })?;
            Ok(TableColumn {
                name: name.clone(),
                cql_type,
                role: role_of(name, column.kind.clone()),
            })
        })
        .collect::<Result<Vec<_>, LoadError>>()?;
    columns.sort_by(|a, b| {
        let rank = |column: &TableColumn| match column.role {
            ColumnRole::PartitionKey(i) => (0, i),
            ColumnRole::Clustering(i) => (1, i),
            ColumnRole::Static | ColumnRole::Regular => (2, 0),
        };
        rank(a).cmp(&rank(b)).then_with(|| a.name.cmp(&b.name))
    });
    Ok(columns)
}

/// The column of `keyspace.table` named `written`: the column of exactly that name (a name that
/// comes from an input file or the schema, such as `Emb`), else the one CQL means by it (`Emb` is
/// `emb`, `"Emb"` is `Emb`); or an error listing the table's columns.
pub(crate) fn find_column<'a>(
    columns: &'a [TableColumn],
    written: &str,
    keyspace: &str,
    table: &str,
) -> Result<&'a TableColumn, LoadError> {
    let name = schema_name(written);
    columns
        .iter()
        .find(|column| column.name == written)
        .or_else(|| columns.iter().find(|column| column.name == name))
        .ok_or_else(|| {
            let known: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            LoadError::new(
                LoadErrorKind::UnknownColumn,
                format!(
                    "table {keyspace}.{table} has no column {written} (its columns: {})",
                    known.join(", ")
                ),
            )
        })
}

/// The columns `chosen` names (as written in CQL), in its order, each existing and named once;
/// `None` names every column.
pub(crate) fn chosen_columns<'a>(
    columns: &'a [TableColumn],
    chosen: Option<&[String]>,
    keyspace: &str,
    table: &str,
) -> Result<Vec<&'a TableColumn>, LoadError> {
    let Some(chosen) = chosen else {
        return Ok(columns.iter().collect());
    };
    let mut out: Vec<&TableColumn> = Vec::with_capacity(chosen.len());
    for written in chosen {
        let column = find_column(columns, written, keyspace, table)?;
        if out.iter().any(|c| c.name == column.name) {
            return Err(LoadError::new(
                LoadErrorKind::InvalidOption,
                format!("column {written} is given twice"),
            ));
        }
        out.push(column);
    }
    Ok(out)
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
/// them and clustering columns (see [`StaticOnly`]); `None` for any other table.
async fn static_only(
    session: &Session,
    keyspace: &str,
    table: &str,
    columns: &[TableColumn],
    markers: &[BindMarker],
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
    })?;
    prepared.set_is_idempotent(true);
    Ok(Some(StaticOnly {
        prepared,
        kept,
        empty,
    }))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::types::tests::{native, vector};

    /// A table column of a driver type.
    pub(crate) fn column(name: &str, typ: ColumnType<'static>, role: ColumnRole) -> TableColumn {
        TableColumn {
            name: name.into(),
            cql_type: ServerType::new(typ).unwrap(),
            role,
        }
    }

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
}
