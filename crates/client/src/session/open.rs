//! Opening a driver session with the rules of a job's requests.

use std::sync::Arc;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{
    ConnectionError, ConnectionPoolError, ConnectionSetupRequestErrorKind, DbError, MetadataError,
    NewSessionError,
};
use scylla::frame::Compression;
use scylla::policies::retry::FallthroughRetryPolicy;

use super::SessionOptions;
use crate::error::{LoadError, LoadErrorKind};

/// A driver session to the cluster of `options` (its login, TLS, compression, and every request
/// at its consistency and timeout, never retried by the driver), reading the schema of `keyspace`.
pub(crate) async fn open_session(
    options: &SessionOptions,
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
        builder = builder.tls_context(Some(super::tls::client_config(tls)?));
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
            .with_source(error)
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

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;
    use crate::session::Host;

    #[tokio::test]
    async fn a_refused_connection_keeps_the_drivers_error_as_its_source() {
        // A port that was just free: nothing listens there, the connection is refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let host = Host::parse(&format!("127.0.0.1:{port}")).unwrap();
        let options = SessionOptions::new(vec![host], "ks", "t");
        let error = open_session(&options, "ks").await.unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::Connect);
        let source = error.source().expect("the driver's error is kept");
        let driver = source
            .downcast_ref::<NewSessionError>()
            .expect("the source is the driver's NewSessionError");
        assert!(error.message().ends_with(&driver.to_string()), "{error}");
    }
}
