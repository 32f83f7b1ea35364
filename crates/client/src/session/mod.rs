//! The connection layer every job shares: where the cluster is and how to reach it (contact
//! points, login, TLS), opening a driver session with the rules of a job's requests, and reading
//! the table's schema as the server reports it.

mod consistency;
mod host;
mod login;
mod open;
mod retry;
mod settings;
mod table;
mod tls;

use std::time::Duration;

use crate::error::{LoadError, LoadErrorKind};

pub use consistency::Consistency;

pub use host::{Host, DEFAULT_PORT};
pub use login::{Credentials, Password, PASSWORD_VARIABLE};
pub(crate) use open::open_session;
pub use retry::RetryOptions;
pub use settings::ConnectionSettings;
pub(crate) use table::{chosen_columns, find_column, find_table, table_columns, TableSession};
pub use table::{ColumnRole, TableColumn};
pub use tls::TlsOptions;

/// Where the cluster and the table are, and the rules of every request a job sends there.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Contact points; the driver discovers the other nodes.
    pub hosts: Vec<Host>,
    /// Keyspace of the table, as written in CQL (unquoted names are case-insensitive).
    pub keyspace: String,
    /// Table, as written in CQL.
    pub table: String,
    /// Consistency of every request. Default `LOCAL_QUORUM`, the ScyllaDB driver's own default
    /// (a search asks for [`SearchOptions::CONSISTENCY`](crate::SearchOptions::CONSISTENCY) when
    /// the settings name none).
    pub consistency: Consistency,
    /// Client-side timeout of one request.
    pub request_timeout: Duration,
    /// Login, when the cluster uses `PasswordAuthenticator`.
    pub credentials: Option<Credentials>,
    /// Client TLS; `None` connects in plain text.
    pub tls: Option<TlsOptions>,
    /// LZ4-compress request bodies (off by default: float vectors hardly compress, and it costs
    /// client CPU; worth it over slow links with text-heavy rows).
    pub compression: bool,
}

impl SessionOptions {
    /// `keyspace.table` through `hosts`, everything else at its default.
    pub fn new(hosts: Vec<Host>, keyspace: impl Into<String>, table: impl Into<String>) -> Self {
        SessionOptions {
            hosts,
            keyspace: keyspace.into(),
            table: table.into(),
            consistency: Consistency::LocalQuorum,
            request_timeout: Duration::from_secs(12),
            credentials: None,
            tls: None,
            compression: false,
        }
    }

    /// The contact points as the user gave them, comma-separated (`127.0.0.1:9042`).
    pub fn hosts_text(&self) -> String {
        let hosts: Vec<String> = self.hosts.iter().map(Host::to_string).collect();
        hosts.join(",")
    }

    /// Splits `KS.TABLE` (each part plain or double-quoted) into the keyspace and table.
    pub fn with_table_name(hosts: Vec<Host>, name: &str) -> Result<Self, LoadError> {
        let (keyspace, table) = split_table_name(name)?;
        Ok(SessionOptions::new(hosts, keyspace, table))
    }
}

/// Splits `KS.TABLE` at the dot that is outside double quotes.
fn split_table_name(name: &str) -> Result<(String, String), LoadError> {
    let mut quoted = false;
    for (i, c) in name.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => {
                let (keyspace, table) = (&name[..i], &name[i + 1..]);
                if !keyspace.is_empty() && !table.is_empty() {
                    return Ok((keyspace.to_owned(), table.to_owned()));
                }
                break;
            }
            _ => {}
        }
    }
    Err(LoadError::new(
        LoadErrorKind::InvalidOption,
        format!("invalid table {name:?}: expected KEYSPACE.TABLE"),
    ))
}

/// The name an identifier written in CQL has in the schema: quoted names keep their case (`""`
/// is a quote), unquoted ones are lower-cased.
pub fn schema_name(identifier: &str) -> String {
    match identifier
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        Some(inner) => inner.replace("\"\"", "\""),
        None => identifier.to_lowercase(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    pub(crate) use super::table::tests::column;
    use super::*;

    #[test]
    fn table_names_split_outside_quotes() {
        assert_eq!(split_table_name("ks.t").unwrap(), ("ks".into(), "t".into()));
        assert_eq!(
            split_table_name("\"K.s\".\"T\"").unwrap(),
            ("\"K.s\"".into(), "\"T\"".into())
        );
        assert!(split_table_name("kst").is_err());
        assert!(split_table_name(".t").is_err());
        assert_eq!(schema_name("MyTable"), "mytable");
        assert_eq!(schema_name("\"My\"\"Table\""), "My\"Table");
    }
}
