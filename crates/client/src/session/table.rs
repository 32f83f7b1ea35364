//! The table's schema as the server reports it, and the columns a job names in it.

use scylla::client::session::Session;
use scylla::cluster::metadata::{ColumnKind, Table};

use super::SessionOptions;
use super::{open_session, schema_name};
use crate::error::{LoadError, LoadErrorKind};
use crate::types::ServerType;

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

/// A session to the cluster of some [`SessionOptions`], with the description of their table: what
/// every command on a table starts from (hosts, login, TLS, consistency, timeout of `options`).
pub(crate) struct TableSession {
    /// The connected session.
    pub(crate) session: Session,
    /// The keyspace's name in the schema.
    pub(crate) keyspace: String,
    /// The table's name in the schema.
    pub(crate) table: String,
    /// The table's columns, partition key parts, clustering parts, then the others by name.
    pub(crate) columns: Vec<TableColumn>,
}

impl TableSession {
    /// Connects and reads the table's columns; an unknown keyspace or table is an error.
    pub(crate) async fn open(options: &SessionOptions) -> Result<TableSession, LoadError> {
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

/// The table `keyspace.table` (names as in the schema) of the cluster's metadata; an unknown
/// keyspace or table is an error that lists what there is.
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

/// The columns of `table`: partition key parts, clustering parts, then the others by name; a
/// column of a type without CQL syntax here is an error.
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use scylla::cluster::metadata::ColumnType;

    /// A table column of a driver type.
    pub(crate) fn column(name: &str, typ: ColumnType<'static>, role: ColumnRole) -> TableColumn {
        TableColumn {
            name: name.into(),
            cql_type: ServerType::new(typ).unwrap(),
            role,
        }
    }
}
