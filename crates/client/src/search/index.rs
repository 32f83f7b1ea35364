//! The vector index of a column, as `system_schema.indexes` describes it.

use std::collections::HashMap;

use super::exact::Similarity;
use cqlwire_codec::types::Identifier;
use scylla::client::session::Session;

use super::SearchError;
use crate::error::{one_line, LoadError, LoadErrorKind};
use crate::session::schema_name;

/// An index on the searched column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorIndex {
    /// The index's name.
    pub name: String,
    /// Its similarity function (`similarity_function` in its options; cosine when absent, the
    /// server's default).
    pub similarity: Similarity,
}

/// The index on `column` of `keyspace.table` (names as in the schema), or
/// [`SearchError::NoIndex`], which shows the statement that creates one.
pub(crate) async fn find(
    session: &Session,
    keyspace: &str,
    table: &str,
    column: &str,
) -> Result<VectorIndex, SearchError> {
    let failed = |error: &dyn std::fmt::Display| {
        LoadError::new(
            LoadErrorKind::Statement,
            format!("cannot read the indexes of {keyspace}.{table}: {error}"),
        )
    };
    let rows = session
        .query_unpaged(
            "SELECT index_name, options FROM system_schema.indexes \
             WHERE keyspace_name = ? AND table_name = ?",
            (keyspace, table),
        )
        .await
        .map_err(|e| failed(&e))?
        .into_rows_result()
        .map_err(|e| failed(&e))?;
    let mut indexes = Vec::new();
    for row in rows
        .rows::<(String, HashMap<String, String>)>()
        .map_err(|e| failed(&e))?
    {
        indexes.push(row.map_err(|e| failed(&e))?);
    }
    choose(&indexes, keyspace, table, column)
}

/// The first index whose target is `column`.
fn choose(
    indexes: &[(String, HashMap<String, String>)],
    keyspace: &str,
    table: &str,
    column: &str,
) -> Result<VectorIndex, SearchError> {
    for (name, options) in indexes {
        let target = options.get("target").map(String::as_str).unwrap_or("");
        if schema_name(target) != column && target != column {
            continue;
        }
        let similarity = match options.get("similarity_function") {
            None => Similarity::Cosine,
            Some(value) => value.parse().map_err(|e| {
                LoadError::new(LoadErrorKind::Statement, format!("index {name}: {e}"))
            })?,
        };
        return Ok(VectorIndex {
            name: name.clone(),
            similarity,
        });
    }
    Err(SearchError::NoIndex {
        keyspace: keyspace.to_owned(),
        table: table.to_owned(),
        column: column.to_owned(),
    })
}

/// The message of [`SearchError::NoIndex`]: what is missing and the statement that creates it.
pub(super) fn no_index_message(keyspace: &str, table: &str, column: &str) -> String {
    one_line(&format!(
        "{keyspace}.{table} has no vector index on {column}, and ANN queries need one: create it \
         with CREATE CUSTOM INDEX ON {}.{}({}) USING 'StorageAttachedIndex' WITH OPTIONS = \
         {{'similarity_function': 'cosine'}} (or 'dot_product', 'euclidean'), then wait for it \
         to build",
        Identifier(keyspace),
        Identifier(table),
        Identifier(column)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(name: &str, options: &[(&str, &str)]) -> (String, HashMap<String, String>) {
        let options = options
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        (name.to_owned(), options)
    }

    #[test]
    fn the_index_on_the_column_gives_its_similarity_function() {
        let indexes = [
            index("by_title", &[("target", "title")]),
            index(
                "by_emb",
                &[
                    ("class_name", "StorageAttachedIndex"),
                    ("similarity_function", "EUCLIDEAN"),
                    ("target", "emb"),
                ],
            ),
        ];
        let found = choose(&indexes, "ks", "t", "emb").unwrap();
        assert_eq!(found.name, "by_emb");
        assert_eq!(found.similarity, Similarity::Euclidean);
        let quoted = [index("i", &[("target", "\"Emb\"")])];
        assert_eq!(
            choose(&quoted, "ks", "t", "Emb").unwrap().similarity,
            Similarity::Cosine
        );
    }

    #[test]
    fn a_column_without_an_index_gets_the_statement_that_creates_one() {
        let error = choose(&[index("i", &[("target", "title")])], "ks", "My T", "emb").unwrap_err();
        assert!(matches!(error, SearchError::NoIndex { .. }), "{error:?}");
        assert!(
            error.to_string().contains(
                "CREATE CUSTOM INDEX ON ks.\"My T\"(emb) USING 'StorageAttachedIndex' WITH OPTIONS = \
                 {'similarity_function': 'cosine'}"
            ),
            "{error}"
        );
    }
}
