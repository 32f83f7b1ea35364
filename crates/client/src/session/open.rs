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
use crate::error::{LoadError, LoadErrorKind, Setting};

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
        .consistency(options.consistency.driver())
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
        // The driver's own advice names its builder; the way out is a setting of the job.
        if matches!(
            setup_error(&error),
            Some(ConnectionSetupRequestErrorKind::MissingAuthentication)
        ) {
            return LoadError::new(
                LoadErrorKind::Authentication,
                format!(
                    "cannot connect to {}: the server asks for a login and none was given",
                    hosts_text()
                ),
            )
            .with_setting(Setting::Username)
            .with_source(error);
        }
        let kind = if is_authentication_failure(&error) {
            LoadErrorKind::Authentication
        } else {
            LoadErrorKind::Connect
        };
        LoadError::new(kind, format!("cannot connect to {}: {error}", hosts_text()))
            .with_source(error)
    })
}

/// The error of the last connection's setup, when that is why no session could be made.
fn setup_error(error: &NewSessionError) -> Option<&ConnectionSetupRequestErrorKind> {
    let NewSessionError::MetadataError(MetadataError::ConnectionPoolError(
        ConnectionPoolError::Broken {
            last_connection_error: ConnectionError::ConnectionSetupRequestError(setup),
        },
    )) = error
    else {
        return None;
    };
    Some(setup.get_error())
}

fn is_authentication_failure(error: &NewSessionError) -> bool {
    let Some(setup) = setup_error(error) else {
        return false;
    };
    match setup {
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

    /// A server that speaks just enough of native protocol v4 to ask every connection for a
    /// login: SUPPORTED (no options) to OPTIONS, AUTHENTICATE (PasswordAuthenticator) to STARTUP.
    async fn server_asking_for_a_login() -> u16 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut header = [0u8; 9];
                    while socket.read_exact(&mut header).await.is_ok() {
                        let length = u32::from_be_bytes(header[5..9].try_into().unwrap());
                        let mut body = vec![0u8; length as usize];
                        if socket.read_exact(&mut body).await.is_err() {
                            return;
                        }
                        let (opcode, answer): (u8, Vec<u8>) = match header[4] {
                            // OPTIONS: SUPPORTED with an empty [string multimap].
                            0x05 => (0x06, vec![0, 0]),
                            // STARTUP: AUTHENTICATE with the authenticator's class as a [string].
                            0x01 => {
                                let class = b"org.apache.cassandra.auth.PasswordAuthenticator";
                                let mut body = (class.len() as u16).to_be_bytes().to_vec();
                                body.extend_from_slice(class);
                                (0x03, body)
                            }
                            _ => return,
                        };
                        // A response of the request's version, on its stream.
                        let mut frame = vec![0x80 | header[0], 0, header[2], header[3], opcode];
                        frame.extend_from_slice(&(answer.len() as u32).to_be_bytes());
                        frame.extend_from_slice(&answer);
                        if socket.write_all(&frame).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        port
    }

    #[tokio::test]
    async fn a_missing_login_names_the_username_setting_not_the_drivers_builder() {
        let port = server_asking_for_a_login().await;
        let host = Host::parse(&format!("127.0.0.1:{port}")).unwrap();
        let options = SessionOptions::new(vec![host], "ks", "t");
        let error = open_session(&options, "ks").await.unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::Authentication, "{error}");
        assert_eq!(
            error.message(),
            format!("cannot connect to 127.0.0.1:{port}: the server asks for a login and none was given")
        );
        assert_eq!(error.setting(), Some(Setting::Username));
        // The driver's own error is kept underneath, with its advice for its own API.
        let driver = error
            .source()
            .expect("the driver's error is kept")
            .to_string();
        assert!(driver.contains("SessionBuilder::user"), "{driver}");
    }

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
