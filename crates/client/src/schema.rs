//! Schema changes a job makes before it runs (a bench's table and index) and what the server says
//! of itself: one session, each change waited on until the nodes agree on the schema.

use crate::error::{LoadError, LoadErrorKind};
use crate::session::open_session;
use crate::session::SessionOptions;
use scylla::client::execution_profile::ExecutionProfileHandle;
use scylla::client::session::Session;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::unprepared::Statement;
use std::sync::Arc;
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

/// How long a schema change may take by default before it is an error: creating a table or an
/// index on a busy node takes seconds, far more than a query's request timeout, and a statement
/// can wait behind a vector index's build for minutes.
pub const SCHEMA_TIMEOUT: Duration = Duration::from_secs(600);

impl SchemaSession {
    /// Connects with the login, TLS and timeouts of `options` (its keyspace is the one whose
    /// schema the session reads).
    pub async fn connect(options: &SessionOptions) -> Result<SchemaSession, LoadError> {
        SchemaSession::connect_with(options, SCHEMA_TIMEOUT).await
    }

    /// [`SchemaSession::connect`] whose schema changes may take `timeout` (at least the request
    /// timeout of `options`).
    pub async fn connect_with(
        options: &SessionOptions,
        timeout: Duration,
    ) -> Result<SchemaSession, LoadError> {
        let session = open_session(options, &options.keyspace).await?;
        Ok(SchemaSession {
            session,
            timeout: timeout.max(options.request_timeout),
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

    /// The rows of a query of one node's own tables (`system_views` are each node's own), sent
    /// with that node's profile ([`SchemaSession::node_profiles`]), or None when it does not answer.
    async fn node_rows(
        &self,
        node: &ExecutionProfileHandle,
        query: &str,
        values: impl scylla::serialize::row::SerializeRow,
    ) -> Option<scylla::response::query_result::QueryRowsResult> {
        let mut statement = Statement::new(query);
        statement.set_execution_profile_handle(Some(node.clone()));
        let answer = self.session.query_unpaged(statement, values).await.ok()?;
        answer.into_rows_result().ok()
    }

    /// For each node the driver knows, the session's profile sending to that node alone.
    fn node_profiles(&self) -> Vec<ExecutionProfileHandle> {
        let cluster = self.session.get_cluster_state();
        let default = self.session.get_default_execution_profile_handle();
        cluster
            .get_nodes_info()
            .iter()
            .map(|node| {
                default
                    .pointee_to_builder()
                    .load_balancing_policy(SingleTargetLoadBalancingPolicy::new(
                        NodeIdentifier::Node(Arc::clone(node)),
                        None,
                    ))
                    .build()
                    .into_handle()
            })
            .collect()
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

    /// The state of the storage-attached index `index` of `keyspace` as Apache Cassandra 5's
    /// `system_views` show it (`sai_column_indexes`, `sai_sstable_indexes`,
    /// `sai_sstable_index_segments`), read from every node (each shows only its own): queryable
    /// when every node that answers says so, building when one does, the counts and sizes summed.
    /// None where no node has such a view or index.
    pub async fn index_state(&self, keyspace: &str, index: &str) -> Option<IndexState> {
        let mut total: Option<IndexState> = None;
        for node in self.node_profiles() {
            if let Some(state) = self.node_index_state(&node, keyspace, index).await {
                total = Some(total.map_or(state, |total| total.with(state)));
            }
        }
        total
    }

    /// [`SchemaSession::index_state`] on `node` alone.
    async fn node_index_state(
        &self,
        node: &ExecutionProfileHandle,
        keyspace: &str,
        index: &str,
    ) -> Option<IndexState> {
        let filter = "WHERE keyspace_name = ? AND index_name = ?";
        let query = format!(
            "SELECT is_queryable, is_building FROM system_views.sai_column_indexes {filter}"
        );
        let rows = self.node_rows(node, &query, (keyspace, index)).await?;
        let (queryable, building) = rows
            .maybe_first_row::<(Option<bool>, Option<bool>)>()
            .ok()??;
        let mut state = IndexState {
            queryable: queryable.unwrap_or(false),
            building: building.unwrap_or(false),
            nodes: 1,
            ..IndexState::default()
        };
        let query = format!(
            "SELECT cell_count, per_column_disk_size FROM system_views.sai_sstable_indexes {filter}"
        );
        if let Some(rows) = self.node_rows(node, &query, (keyspace, index)).await {
            if let Ok(rows) = rows.rows::<(Option<i64>, Option<i64>)>() {
                for (cells, bytes) in rows.flatten() {
                    state.sstables += 1;
                    state.cells += u64::try_from(cells.unwrap_or(0)).unwrap_or(0);
                    state.disk_bytes += u64::try_from(bytes.unwrap_or(0)).unwrap_or(0);
                }
            }
        }
        let query =
            format!("SELECT cell_count FROM system_views.sai_sstable_index_segments {filter}");
        if let Some(rows) = self.node_rows(node, &query, (keyspace, index)).await {
            state.segments = rows.rows_num() as u64;
        }
        Some(state)
    }

    /// How many SSTable tasks (compactions, index builds) run on `keyspace`.`table`, over every
    /// node (`system_views.sstable_tasks`, each node's own; 0 where a server has no such view).
    pub async fn sstable_tasks(&self, keyspace: &str, table: &str) -> usize {
        let query =
            "SELECT task_id FROM system_views.sstable_tasks WHERE keyspace_name = ? AND table_name = ?";
        let mut tasks = 0;
        for node in self.node_profiles() {
            if let Some(rows) = self.node_rows(&node, query, (keyspace, table)).await {
                tasks += rows.rows_num();
            }
        }
        tasks
    }

    /// Waits until every node shows the index `index` of `keyspace.table` queryable and built,
    /// and no compaction of the table runs on any ([`SchemaSession::index_state`],
    /// [`SchemaSession::sstable_tasks`]; a server without those views is taken as done), for at
    /// most `timeout`. Returns false when `control`'s stop flag ended the wait.
    pub async fn wait_until_built(
        &self,
        keyspace: &str,
        table: &str,
        index: &str,
        timeout: Duration,
        control: &crate::RunControl,
    ) -> Result<bool, LoadError> {
        let started = std::time::Instant::now();
        loop {
            let state = self.index_state(keyspace, index).await;
            let tasks = self.sstable_tasks(keyspace, table).await;
            if state.is_none_or(|s| s.queryable && !s.building) && tasks == 0 {
                return Ok(true);
            }
            if control.stop_requested() {
                return Ok(false);
            }
            if started.elapsed() >= timeout {
                return Err(LoadError::new(
                    LoadErrorKind::ServerGone,
                    format!(
                        "the index {index} was not built within {} s (building: {}, SSTable \
                         tasks running: {tasks})",
                        timeout.as_secs(),
                        state.is_some_and(|s| s.building)
                    ),
                ));
            }
            tokio::time::sleep(BUILT_PROBE_PAUSE).await;
        }
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
        self.session
            .query_unpaged(query, ())
            .await
            .map_err(|e| match e {
                // No answer is not a refusal: the server may still apply the change.
                scylla::errors::ExecutionError::RequestTimeout(_) => LoadError::new(
                    LoadErrorKind::ServerGone,
                    format!(
                        "the server did not answer {statement:?} within {} s (it may still \
                         apply it; a longer schema timeout waits for it)",
                        self.timeout.as_secs()
                    ),
                )
                .with_source(e),
                e => LoadError::new(
                    LoadErrorKind::Statement,
                    format!("the server refuses {statement:?}: {e}"),
                )
                .with_source(e),
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

/// The pause between two looks at an index's state.
const BUILT_PROBE_PAUSE: Duration = Duration::from_millis(500);

/// A storage-attached index's state over the nodes that answered ([`SchemaSession::index_state`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexState {
    /// Whether it answers queries.
    pub queryable: bool,
    /// Whether it is being built.
    pub building: bool,
    /// SSTables indexed (rows in memtables are not in any).
    pub sstables: u64,
    /// Index segments: one vector graph each, every one searched by a query.
    pub segments: u64,
    /// Rows (cells) indexed in SSTables.
    pub cells: u64,
    /// The index's size on disk, in bytes.
    pub disk_bytes: u64,
    /// The nodes whose state this is (each replica indexes its own copy of the rows).
    pub nodes: u64,
}

impl IndexState {
    /// The state of two sets of nodes together.
    fn with(self, other: IndexState) -> IndexState {
        IndexState {
            queryable: self.queryable && other.queryable,
            building: self.building || other.building,
            sstables: self.sstables + other.sstables,
            segments: self.segments + other.segments,
            cells: self.cells + other.cells,
            disk_bytes: self.disk_bytes + other.disk_bytes,
            nodes: self.nodes + other.nodes,
        }
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
