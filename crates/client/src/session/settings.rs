//! The connection as a face's text settings give it (command-line flags, keyword arguments).

use std::path::PathBuf;
use std::time::Duration;

use super::{
    Consistency, Credentials, Host, Password, SessionOptions, TlsOptions, PASSWORD_VARIABLE,
};
use crate::error::{LoadError, LoadErrorKind, Setting};

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
    /// Log in as this role, with [`password`](ConnectionSettings::password).
    pub username: Option<String>,
    /// The login's password when the caller was handed one; else
    /// [`user_without_password`](ConnectionSettings::user_without_password) reads
    /// [`PASSWORD_VARIABLE`].
    pub password: Option<Password>,
    /// Connect with TLS (also implied by a CA file or a client certificate).
    pub tls: bool,
    /// CA certificates (PEM) that sign the server's certificate.
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM), for servers that require one; with `tls_key`.
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM); with `tls_cert`.
    pub tls_key: Option<PathBuf>,
}

impl ConnectionSettings {
    /// Settings for `table` through `hosts`, everything else at its default.
    pub fn new(hosts: impl Into<String>, table: impl Into<String>) -> Self {
        ConnectionSettings {
            hosts: hosts.into(),
            table: table.into(),
            consistency: None,
            timeout: Duration::from_secs(12),
            username: None,
            password: None,
            tls: false,
            tls_ca: None,
            tls_cert: None,
            tls_key: None,
        }
    }

    /// The user whose password is still missing: a username given without a password while
    /// [`PASSWORD_VARIABLE`] holds none (when it holds one, it becomes the password now). The
    /// caller then asks for it (a prompt) or says how to give it.
    pub fn user_without_password(&mut self) -> Result<Option<&str>, LoadError> {
        if self.username.is_some() && self.password.is_none() {
            self.password = Password::from_environment()?;
        }
        Ok(match (&self.username, &self.password) {
            (Some(user), None) => Some(user),
            _ => None,
        })
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
            Some(level) => level.parse()?,
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
        options.credentials = match (&self.username, &self.password) {
            (None, _) => None,
            (Some(user), Some(password)) => Some(Credentials {
                username: user.clone(),
                password: password.clone(),
            }),
            (Some(user), None) => {
                return Err(LoadError::new(
                    LoadErrorKind::InvalidOption,
                    format!("username {user} needs a password: set {PASSWORD_VARIABLE}"),
                ))
            }
        };
        // A certificate without its key (or a key without its certificate) names the missing one.
        let unpaired = |missing| {
            LoadError::new(
                LoadErrorKind::InvalidOption,
                "a client certificate and its private key go together",
            )
            .with_setting(missing)
        };
        let client_cert = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some((cert.clone(), key.clone())),
            (None, None) => None,
            (Some(_), None) => return Err(unpaired(Setting::TlsKey)),
            (None, Some(_)) => return Err(unpaired(Setting::TlsCert)),
        };
        if self.tls || self.tls_ca.is_some() || client_cert.is_some() {
            options.tls = Some(TlsOptions {
                ca_file: self.tls_ca.clone(),
                client_cert,
                ..TlsOptions::default()
            });
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_password_makes_the_login_and_a_lone_certificate_is_refused() {
        let mut settings = ConnectionSettings::new("db1", "ks.t");
        settings.username = Some("loader".into());
        settings.password = Some(Password::new("s3cret"));
        assert_eq!(settings.user_without_password().unwrap(), None);
        let options = settings.options().unwrap();
        let credentials = options.credentials.unwrap();
        assert_eq!(
            (credentials.username.as_str(), credentials.password),
            ("loader", Password::new("s3cret"))
        );

        settings.tls_cert = Some("client.pem".into());
        let error = settings.options().unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::InvalidOption);
        assert_eq!(error.setting(), Some(Setting::TlsKey));
        settings.tls_key = Some("client.key".into());
        let lone_key = ConnectionSettings {
            tls_cert: None,
            ..settings.clone()
        };
        assert_eq!(
            lone_key.options().unwrap_err().setting(),
            Some(Setting::TlsCert)
        );
        let tls = settings.options().unwrap().tls.unwrap();
        assert_eq!(
            tls.client_cert,
            Some(("client.pem".into(), "client.key".into()))
        );
    }
}
