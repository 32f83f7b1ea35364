//! Schema changes a job makes before it runs (a bench's table and index) and what the server says
//! of itself: one session, each change waited on until the nodes agree on the schema.

use crate::error::{LoadError, LoadErrorKind};
use crate::session::open_session;
use crate::session::SessionOptions;
use scylla::client::session::Session;
use scylla::statement::unprepared::Statement;
use std::time::Duration;

/// A session for schema statements on the cluster that [`SessionOptions`] name.
pub struct SchemaSession {
    session: Session,
    timeout: Duration,
}

impl std::fmt::Debug for SchemaSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaSession").finish_non_exhaustive()
    }
}

/// How long a schema change may take before it is an error: creating a table or an index on a
/// busy node takes seconds, far more than a query's request timeout.
const SCHEMA_TIMEOUT: Duration = Duration::from_secs(120);

impl SchemaSession {
    /// Connects with the login, TLS and timeouts of `options` (its keyspace is the one whose
    /// schema the session reads).
    pub async fn connect(options: &SessionOptions) -> Result<SchemaSession, LoadError> {
        let session = open_session(options, &options.keyspace).await?;
        Ok(SchemaSession {
            session,
            timeout: SCHEMA_TIMEOUT.max(options.request_timeout),
        })
    }

    /// The rows of a system table query, as a driver answer with rows.
    async fn rows(
        &self,
        query: &str,
        values: impl scylla::serialize::row::SerializeRow,
    ) -> Result<scylla::response::query_result::QueryRowsResult, LoadError> {
        let gone =
            |e: &dyn std::fmt::Display| LoadError::new(LoadErrorKind::ServerGone, e.to_string());
        let answer = self
            .session
            .query_unpaged(query, values)
            .await
            .map_err(|e| gone(&e))?;
        answer.into_rows_result().map_err(|e| gone(&e))
    }

    /// Whether the table exists, as `system_schema.tables` says (`keyspace` and `table` as the
    /// schema holds them: unquoted CQL names in lower case).
    pub async fn table_exists(&self, keyspace: &str, table: &str) -> Result<bool, LoadError> {
        let query = "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND \
                     table_name = ?";
        Ok(self.rows(query, (keyspace, table)).await?.rows_num() > 0)
    }

    /// Whether the keyspace exists, as `system_schema.keyspaces` says (its name as the schema
    /// holds it).
    pub async fn keyspace_exists(&self, keyspace: &str) -> Result<bool, LoadError> {
        let query = "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?";
        Ok(self.rows(query, (keyspace,)).await?.rows_num() > 0)
    }

    /// The keyspace's replication as `system_schema.keyspaces` holds it: `class` (the strategy's
    /// Java class) and, per data centre or `replication_factor`, the factor.
    pub async fn replication(
        &self,
        keyspace: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, LoadError> {
        let query = "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?";
        let rows = self.rows(query, (keyspace,)).await?;
        let replication = rows
            .maybe_first_row::<(std::collections::BTreeMap<String, String>,)>()
            .map_err(|e| LoadError::new(LoadErrorKind::ServerGone, e.to_string()))?;
        Ok(replication.map(|(map,)| map).unwrap_or_default())
    }

    /// The nodes of the cluster this session sees: the one answering and its peers.
    pub async fn nodes(&self) -> Result<usize, LoadError> {
        Ok(self
            .rows("SELECT peer FROM system.peers", ())
            .await?
            .rows_num()
            + 1)
    }

    /// The table of `keyspace` that holds the index `index` (names as the schema holds them),
    /// None when no table does: index names are unique in a keyspace.
    pub async fn index_table(
        &self,
        keyspace: &str,
        index: &str,
    ) -> Result<Option<String>, LoadError> {
        let query =
            "SELECT table_name, index_name FROM system_schema.indexes WHERE keyspace_name = ?";
        let rows = self.rows(query, (keyspace,)).await?;
        let gone =
            |e: &dyn std::fmt::Display| LoadError::new(LoadErrorKind::ServerGone, e.to_string());
        let rows = rows.rows::<(String, String)>().map_err(|e| gone(&e))?;
        for row in rows {
            let (table, name) = row.map_err(|e| gone(&e))?;
            if name == index {
                return Ok(Some(table));
            }
        }
        Ok(None)
    }

    /// Runs `statement` (a `CREATE`, `DROP` or `ALTER`) and waits until the nodes agree on the
    /// schema; the server's refusal is an error of kind [`LoadErrorKind::Statement`].
    pub async fn execute(&self, statement: &str) -> Result<(), LoadError> {
        let mut query = Statement::new(statement);
        query.set_request_timeout(Some(self.timeout));
        self.session.query_unpaged(query, ()).await.map_err(|e| {
            LoadError::new(
                LoadErrorKind::Statement,
                format!("the server refuses {statement:?}: {e}"),
            )
            .with_source(e)
        })?;
        self.session
            .await_schema_agreement()
            .await
            .map_err(|e| LoadError::new(LoadErrorKind::ServerGone, e.to_string()).with_source(e))?;
        Ok(())
    }

    /// What the server is: ScyllaDB when it has ScyllaDB's `system.versions` table (its version
    /// from there: ScyllaDB's `system.local` gives the Cassandra version it is compatible with),
    /// else Apache Cassandra with `system.local`'s `release_version`, e.g. `5.0.9`.
    pub async fn server(&self) -> Result<Server, LoadError> {
        let scylla = "SELECT version FROM system.versions WHERE key = 'local'";
        if let Ok(rows) = self.rows(scylla, ()).await {
            if let Ok(Some((Some(version),))) = rows.maybe_first_row::<(Option<String>,)>() {
                return Ok(Server {
                    product: Product::ScyllaDb,
                    version,
                });
            }
        }
        let rows = self
            .rows("SELECT release_version FROM system.local", ())
            .await?;
        let version = rows
            .maybe_first_row::<(Option<String>,)>()
            .map_err(|e| LoadError::new(LoadErrorKind::ServerGone, e.to_string()).with_source(e))?;
        Ok(Server {
            product: Product::Cassandra,
            version: version.and_then(|(v,)| v).unwrap_or_default(),
        })
    }
}

/// A server's product and release version, as [`SchemaSession::server`] reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Server {
    /// Which database it is.
    pub product: Product,
    /// Its release version, e.g. `5.0.9` (empty when the server does not say).
    pub version: String,
}

/// The databases the engine talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Product {
    /// Apache Cassandra.
    Cassandra,
    /// ScyllaDB.
    ScyllaDb,
}

impl Product {
    /// The product's name, e.g. `Apache Cassandra`.
    pub fn name(self) -> &'static str {
        match self {
            Product::Cassandra => "Apache Cassandra",
            Product::ScyllaDb => "ScyllaDB",
        }
    }
}

impl std::fmt::Display for Server {
    /// The product and its version, e.g. `Apache Cassandra 5.0.9`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.product.name(), self.version)
    }
}
