//! The options of the commands that work on a live table (`load`, `search`, `unload`): contact points, the
//! table, consistency, timeout, login and TLS, as one group of flags and as the library's
//! [`SessionOptions`]; the password, read from the environment or a prompt; and the exit code of the
//! engine's errors.

use super::CliError;
use cqlwire_client::{
    ConnectionSettings, LoadError, LoadErrorKind, Password, SessionOptions, Setting, SettingNames,
    PASSWORD_VARIABLE,
};
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

/// The cluster, the table and how to reach them.
#[derive(Debug, clap::Args)]
pub struct Connection {
    /// Contact points, HOST[:PORT][,HOST[:PORT]…] (port 9042 by default; ScyllaDB's shard-aware
    /// port is found by the driver).
    #[arg(long, value_name = "HOSTS")]
    pub hosts: String,
    /// The table, KEYSPACE.TABLE.
    #[arg(long, value_name = "KS.TABLE")]
    pub table: String,
    /// Consistency level of every request [default: LOCAL_QUORUM for load and unload, LOCAL_ONE
    /// for search (the level Cassandra runs ANN queries at)].
    #[arg(long, value_name = "LEVEL")]
    pub consistency: Option<String>,
    /// Timeout of one request, in seconds (at least 1): load and unload retry a request that takes
    /// longer, search counts it as a failed query.
    #[arg(long, value_name = "SECONDS", default_value_t = 12)]
    pub timeout: u64,
    /// Log in as this user; the password comes from the CQLWIRE_PASSWORD environment variable, else a
    /// prompt on the terminal (it is never an argument).
    #[arg(long, value_name = "USER")]
    pub username: Option<String>,
    /// Connect with TLS (the server's certificate and host name are verified).
    #[arg(long)]
    pub tls: bool,
    /// CA certificates (PEM) that sign the server's certificate [default: the system's].
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM), for servers that require one; with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl Connection {
    /// The library's options for this connection (the password read now), everything else at its
    /// default.
    pub fn options(&self) -> Result<SessionOptions, CliError> {
        self.settings()?.options().map_err(engine_error)
    }

    /// The connection as the library's settings (the password read now).
    pub fn settings(&self) -> Result<ConnectionSettings, CliError> {
        let mut settings = ConnectionSettings {
            consistency: self.consistency.clone(),
            timeout: Duration::from_secs(self.timeout),
            username: self.username.clone(),
            tls: self.tls,
            tls_ca: self.tls_ca.clone(),
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            ..ConnectionSettings::new(&self.hosts, &self.table)
        };
        if let Some(user) = settings.user_without_password().map_err(engine_error)? {
            let password = prompt_password(user)?;
            settings.password = Some(password);
        }
        Ok(settings)
    }
}

/// The library's settings as the command line's flags: `--row-number-column`.
pub struct Flags;

impl SettingNames for Flags {
    fn name(&self, setting: Setting) -> String {
        format!("--{}", setting.name().replace('_', "-"))
    }
}

/// The engine's error with the exit code it deserves: options, mapping and schema are usage.
pub fn engine_error(error: LoadError) -> CliError {
    let message = match error.setting() {
        // The login's advice below names the flag.
        Some(Setting::Username) => error.message().to_owned(),
        Some(setting) => format!("{} ({})", error.message(), Flags.hint(setting)),
        None => error.message().to_owned(),
    };
    match error.kind() {
        LoadErrorKind::Authentication => CliError::data(format!(
            "{message} (log in with --username; the password comes from {PASSWORD_VARIABLE} or a \
             prompt)"
        )),
        kind if kind.is_usage() => CliError::usage(message),
        _ => CliError::data(message),
    }
}

/// The password of `user`, asked on the terminal.
fn prompt_password(user: &str) -> Result<Password, CliError> {
    if !io::stdin().is_terminal() {
        return Err(CliError::usage(format!(
            "--username {user} needs a password: set {PASSWORD_VARIABLE} (no terminal to ask on)"
        )));
    }
    rpassword::prompt_password(format!("password for {user}: "))
        .map(Password::new)
        .map_err(|e| CliError::data(format!("cannot read the password: {e}")))
}
