//! Watches a table for a change that would make a prepared statement's bytes wrong.
//!
//! The bytes of each value are made for the type the server reported for its bind marker when
//! the statement was prepared, and the answers of a statement prepared with cached result
//! metadata are read with the types of that moment. When the table is dropped and created again
//! (or a column dropped and added back) with other types, the server forgets the prepared
//! statement, the driver prepares it again by itself and sends the same bytes: `float` bytes would
//! be stored as `int`s, and `bigint` cells read as two floats, without a word. The guard reads the
//! table's id and column types from `system_schema` when a job starts and again while it runs
//! (`load` every [`POLL`], `unload` and `search` before they report); the job ends at the first
//! difference.

use std::time::Duration;

use scylla::client::session::Session;
use scylla::value::Row;

/// How often the table is looked at.
pub(crate) const POLL: Duration = Duration::from_millis(250);

/// What identifies the table and the types of its columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableShape {
    /// The table's id, unique to each CREATE TABLE.
    id: String,
    /// (column, type), by column name.
    columns: Vec<(String, String)>,
}

impl TableShape {
    /// What changed from `self` to `now` during the `job` (`load`, `unload`, `search`), in words.
    pub(crate) fn change(
        &self,
        now: Option<&TableShape>,
        table: &str,
        job: &str,
    ) -> Option<String> {
        let Some(now) = now else {
            return Some(format!("the table {table} was dropped during the {job}"));
        };
        if now.id != self.id {
            return Some(format!(
                "the table {table} was dropped and created again during the {job}"
            ));
        }
        let changed: Vec<String> = self
            .columns
            .iter()
            .filter_map(|(name, typ)| {
                let now_type = now.columns.iter().find(|(n, _)| n == name).map(|(_, t)| t);
                match now_type {
                    Some(t) if t == typ => None,
                    Some(t) => Some(format!("{name} is now {t}, was {typ}")),
                    None => Some(format!("{name} was dropped")),
                }
            })
            .collect();
        (!changed.is_empty()).then(|| {
            format!(
                "the columns of {table} changed during the {job} ({})",
                changed.join("; ")
            )
        })
    }
}

/// The keyspace and table a guard watches, for which job.
#[derive(Debug, Clone)]
pub(crate) struct TableGuard {
    keyspace: String,
    table: String,
    job: &'static str,
    start: TableShape,
}

impl TableGuard {
    /// Reads the table's shape now, for the `job` named in messages; `None` when it cannot be
    /// read (the guard is then off).
    pub(crate) async fn start(
        session: &Session,
        keyspace: &str,
        table: &str,
        job: &'static str,
    ) -> Option<Self> {
        let start = read_shape(session, keyspace, table).await.ok()??;
        Some(TableGuard {
            keyspace: keyspace.to_owned(),
            table: table.to_owned(),
            job,
            start,
        })
    }

    /// [`check`](TableGuard::check) of an optional guard, as the error that ends the job.
    pub(crate) async fn refuse_change(
        guard: Option<&TableGuard>,
        session: &Session,
    ) -> Result<(), crate::error::LoadError> {
        let Some(guard) = guard else {
            return Ok(());
        };
        match guard.check(session).await {
            Some(change) => Err(crate::error::LoadError::new(
                crate::error::LoadErrorKind::TableChanged,
                change,
            )),
            None => Ok(()),
        }
    }

    /// Reads the table again: what changed since the start, or `None` when nothing did or the
    /// table cannot be read now (the run deals with an unreachable cluster itself).
    pub(crate) async fn check(&self, session: &Session) -> Option<String> {
        let now = read_shape(session, &self.keyspace, &self.table)
            .await
            .ok()?;
        let name = format!("{}.{}", self.keyspace, self.table);
        self.start.change(now.as_ref(), &name, self.job)
    }
}

/// The table's id and column types from `system_schema`; `Ok(None)` when there is no such table.
async fn read_shape(
    session: &Session,
    keyspace: &str,
    table: &str,
) -> Result<Option<TableShape>, Box<dyn std::error::Error + Send + Sync>> {
    let id_rows = session
        .query_unpaged(
            "SELECT id FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
            (keyspace, table),
        )
        .await?
        .into_rows_result()?;
    let Some(id) = id_rows.rows::<Row>()?.next().transpose()? else {
        return Ok(None);
    };
    let column_rows = session
        .query_unpaged(
            "SELECT column_name, type FROM system_schema.columns \
             WHERE keyspace_name = ? AND table_name = ?",
            (keyspace, table),
        )
        .await?
        .into_rows_result()?;
    let mut columns = Vec::new();
    for row in column_rows.rows::<(String, String)>()? {
        columns.push(row?);
    }
    columns.sort();
    Ok(Some(TableShape {
        id: format!("{:?}", id.columns),
        columns,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(id: &str, columns: &[(&str, &str)]) -> TableShape {
        TableShape {
            id: id.to_owned(),
            columns: columns
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
        }
    }

    #[test]
    fn a_new_table_id_or_column_type_is_a_change_and_an_added_column_is_not() {
        let start = shape("1", &[("emb", "vector<float, 64>"), ("id", "bigint")]);
        assert_eq!(start.change(Some(&start.clone()), "ks.t", "load"), None);
        let added = shape(
            "1",
            &[
                ("emb", "vector<float, 64>"),
                ("id", "bigint"),
                ("note", "text"),
            ],
        );
        assert_eq!(start.change(Some(&added), "ks.t", "load"), None);
        let recreated = shape("2", &[("emb", "vector<float, 64>"), ("id", "bigint")]);
        assert!(start
            .change(Some(&recreated), "ks.t", "search")
            .unwrap()
            .contains("dropped and created again during the search"));
        let retyped = shape("1", &[("emb", "vector<int, 64>"), ("id", "bigint")]);
        assert_eq!(
            start.change(Some(&retyped), "ks.t", "unload").unwrap(),
            "the columns of ks.t changed during the unload (emb is now vector<int, 64>, was \
             vector<float, 64>)"
        );
        assert!(start
            .change(None, "ks.t", "load")
            .unwrap()
            .contains("dropped during the load"));
    }
}
