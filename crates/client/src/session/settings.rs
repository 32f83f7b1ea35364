//! The connection as a face's text settings give it (command-line flags, keyword arguments).

use std::path::PathBuf;
use std::time::Duration;

use scylla::statement::Consistency;

use super::{parse_consistency, Credentials, Host, SessionOptions, TlsOptions};
use crate::error::{LoadError, LoadErrorKind};

/// The connection as text settings give it (command-line flags, keyword arguments): parsed and
/// checked into [`SessionOptions`] by [`ConnectionSettings::options`].
#[derive(Debug, Clone)]
pub struct ConnectionSettings {
    /// Contact points, `HOST[:PORT][,HOST[:PORT]…]`.
    pub hosts: String,
    /// The table, `KEYSPACE.TABLE`.
    pub table: String,
    /// Consistency level by name (when `None`: `LOCAL_QUORUM`, or the default that
    /// [`options_with_default_consistency`](ConnectionSettings::options_with_default_consistency) is given).
    pub consistency: Option<String>,
    /// Timeout of one request (at least one second is used).
    pub timeout: Duration,
    /// Login.
    pub credentials: Option<Credentials>,
    /// Connect with TLS (also implied by a CA file or a client certificate).
    pub tls: bool,
    /// CA certificates (PEM) that sign the server's certificate.
    pub tls_ca: Option<PathBuf>,
    /// Client certificate and its private key (PEM).
    pub tls_client: Option<(PathBuf, PathBuf)>,
}

impl ConnectionSettings {
    /// Settings for `table` through `hosts`, everything else at its default.
    pub fn new(hosts: impl Into<String>, table: impl Into<String>) -> Self {
        ConnectionSettings {
            hosts: hosts.into(),
            table: table.into(),
            consistency: None,
            timeout: Duration::from_secs(12),
            credentials: None,
            tls: false,
            tls_ca: None,
            tls_client: None,
        }
    }

    /// The library's options for this connection, everything else at its default (consistency
    /// `LOCAL_QUORUM` when the settings name none).
    pub fn options(&self) -> Result<SessionOptions, LoadError> {
        self.options_with_default_consistency(Consistency::LocalQuorum)
    }

    /// The library's options for this connection, with `consistency` when the settings name no
    /// level, everything else at its default.
    pub fn options_with_default_consistency(
        &self,
        consistency: Consistency,
    ) -> Result<SessionOptions, LoadError> {
        let hosts = Host::parse_list(&self.hosts)?;
        let mut options = SessionOptions::with_table_name(hosts, &self.table)?;
        options.consistency = match &self.consistency {
            Some(level) => parse_consistency(level)?,
            None => consistency,
        };
        if self.timeout < Duration::from_secs(1) {
            return Err(LoadError::new(
                LoadErrorKind::InvalidOption,
                format!(
                    "a request timeout of {} s leaves no time to answer: give at least 1 s",
                    self.timeout.as_secs_f64()
                ),
            ));
        }
        options.request_timeout = self.timeout;
        options.credentials = self.credentials.clone();
        if self.tls || self.tls_ca.is_some() || self.tls_client.is_some() {
            options.tls = Some(TlsOptions {
                ca_file: self.tls_ca.clone(),
                client_cert: self.tls_client.clone(),
                ..TlsOptions::default()
            });
        }
        Ok(options)
    }
}
