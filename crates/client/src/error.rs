//! The error type of every fallible operation of the loader.

use std::fmt;

use crate::report::LoadReport;

/// What went wrong, for callers that react differently (exit codes, hints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// An option has an invalid value (host list, consistency name, table name, ...).
    InvalidOption,
    /// A TLS file could not be read or the TLS configuration was refused.
    Tls,
    /// No connection to the cluster could be made.
    Connect,
    /// The server refused the credentials (or wants credentials and none were given).
    Authentication,
    /// The keyspace or table does not exist on the server.
    UnknownTable,
    /// A column named by the caller does not exist in the table.
    UnknownColumn,
    /// The statement would leave a primary key column without a value.
    MissingKeyColumn,
    /// The server refused to prepare the statement, or it cannot be used for loading.
    Statement,
    /// A column or bind marker has a type that has no CQL syntax here.
    UnsupportedType,
    /// The input's columns cannot fill the statement's bind markers (a marker no input column
    /// fills, a type the input cannot give, a `--map` naming a column the input lacks).
    Mapping,
    /// The input could not be read (a malformed file, a ragged row); rows before it were loaded.
    Input,
    /// The cluster stopped answering during a load and retrying did not help: the run was drained and
    /// [`LoadError::report`] says how far it got.
    ServerGone,
    /// The table was dropped, created again or had a column's type changed during the run: a load
    /// was drained and [`LoadError::report`] resumes at the run's first row; an unload writes no
    /// output and a search gives no report (their answers were read with the old types).
    TableChanged,
    /// Writing the rejects file failed; the run was drained and [`LoadError::report`] says how far it got.
    Rejects,
}

impl LoadErrorKind {
    /// Whether the caller asked for something that cannot work (an invalid option, a table,
    /// column or statement the server does not have or refuses, a mapping that cannot fill the
    /// statement, a type without CQL syntax): nothing was sent, and running again unchanged fails
    /// again. The other kinds are about the data or the cluster.
    pub fn is_usage(self) -> bool {
        matches!(
            self,
            LoadErrorKind::InvalidOption
                | LoadErrorKind::UnknownTable
                | LoadErrorKind::UnknownColumn
                | LoadErrorKind::MissingKeyColumn
                | LoadErrorKind::Statement
                | LoadErrorKind::Mapping
                | LoadErrorKind::UnsupportedType
        )
    }

    /// The kind's name, in snake case (`unknown_table`), as a face shows it (the `kind` of a
    /// Python exception).
    pub fn name(self) -> &'static str {
        match self {
            LoadErrorKind::InvalidOption => "invalid_option",
            LoadErrorKind::Tls => "tls",
            LoadErrorKind::Connect => "connect",
            LoadErrorKind::Authentication => "authentication",
            LoadErrorKind::UnknownTable => "unknown_table",
            LoadErrorKind::UnknownColumn => "unknown_column",
            LoadErrorKind::MissingKeyColumn => "missing_key_column",
            LoadErrorKind::Statement => "statement",
            LoadErrorKind::UnsupportedType => "unsupported_type",
            LoadErrorKind::Mapping => "mapping",
            LoadErrorKind::Input => "input",
            LoadErrorKind::ServerGone => "server_gone",
            LoadErrorKind::TableChanged => "table_changed",
            LoadErrorKind::Rejects => "rejects",
        }
    }
}

/// A setting of a job that an error points to as the way out. The library names it neutrally;
/// each face renders it its own way (`--map` on the command line, `map=` in Python).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Setting {
    /// The renames of input columns to table columns.
    Map,
    /// The statement to prepare instead of the default INSERT.
    Query,
    /// The table column that takes each row's number.
    RowNumberColumn,
    /// The column returned for each row of a search.
    Key,
    /// The columns of an unload's Parquet or Arrow output.
    Columns,
    /// The table's vector column that an unload's npy, fbin, raw or hex output holds.
    VectorColumn,
    /// The file that takes the partition keys of an unload's vector output.
    Ids,
    /// The client certificate of a TLS connection.
    TlsCert,
    /// The client certificate's private key.
    TlsKey,
    /// The user to log in as (the password comes with it: the caller's own, or the environment's
    /// `CQLWIRE_PASSWORD`).
    Username,
    /// Requests in flight.
    Concurrency,
    /// Rows a load's request may carry.
    Batch,
    /// The bound of a load's batch in bytes.
    BatchBytes,
    /// The rows of the input read.
    Rows,
    /// The file that takes a load's rejected rows.
    Rejects,
    /// Rows asked of each query of a search.
    K,
    /// Queries sent before the measured ones.
    Warmup,
}

impl Setting {
    /// The setting's name, in snake case (`row_number_column`).
    pub fn name(self) -> &'static str {
        match self {
            Setting::Map => "map",
            Setting::Query => "query",
            Setting::RowNumberColumn => "row_number_column",
            Setting::Key => "key",
            Setting::Columns => "columns",
            Setting::VectorColumn => "vector_column",
            Setting::Ids => "ids",
            Setting::TlsCert => "tls_cert",
            Setting::TlsKey => "tls_key",
            Setting::Username => "username",
            Setting::Concurrency => "concurrency",
            Setting::Batch => "batch",
            Setting::BatchBytes => "batch_bytes",
            Setting::Rows => "rows",
            Setting::Rejects => "rejects",
            Setting::K => "k",
            Setting::Warmup => "warmup",
        }
    }
}

/// How a face spells the settings that a message names: `--vector-column` on the command line,
/// `vector_column` (and `vector_column=` as the way out) in Python.
pub trait SettingNames {
    /// The setting as a sentence names it ("vector_column and ids go with …").
    fn name(&self, setting: Setting) -> String;
    /// The setting named as the way out, after a message ("… (vector_column=)"); by default its
    /// [`name`](SettingNames::name).
    fn hint(&self, setting: Setting) -> String {
        self.name(setting)
    }
}

/// The error underneath a [`LoadError`]: the driver's or the reader's own.
type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error of the loader: a kind, a one-line message, the setting that is the way out (if one is),
/// the error it was made from (the driver's, the reader's), and, for errors that end a started
/// run, the report of what was confirmed before it ended (with the row to resume from).
#[derive(Debug)]
pub struct LoadError {
    kind: LoadErrorKind,
    message: String,
    setting: Option<Setting>,
    source: Option<Source>,
    report: Option<Box<LoadReport>>,
}

impl LoadError {
    /// An error of `kind` with a one-line `message`.
    pub fn new(kind: LoadErrorKind, message: impl Into<String>) -> Self {
        LoadError {
            kind,
            message: one_line(&message.into()),
            setting: None,
            source: None,
            report: None,
        }
    }

    /// Keeps `source`, the error this one was made from, for [`std::error::Error::source`]; the
    /// message is unchanged.
    pub(crate) fn with_source(mut self, source: impl Into<Source>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// Names the setting that is the way out of this error (see [`Setting`]).
    pub(crate) fn with_setting(mut self, setting: Setting) -> Self {
        self.setting = Some(setting);
        self
    }

    /// The setting that is the way out of this error, which the message leaves for the caller to
    /// name in its own terms.
    pub fn setting(&self) -> Option<Setting> {
        self.setting
    }

    /// Attaches the report of the run this error ended.
    pub(crate) fn with_report(mut self, report: LoadReport) -> Self {
        self.report = Some(Box::new(report));
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> LoadErrorKind {
        self.kind
    }

    /// Whether the caller asked for something that cannot work ([`LoadErrorKind::is_usage`]).
    pub fn is_usage(&self) -> bool {
        self.kind.is_usage()
    }

    /// The one-line message (without the kind).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For an error that ended a started run: the rows confirmed, rejected and retried until then
    /// and [`LoadReport::resume_from`], the first row not acknowledged.
    pub fn report(&self) -> Option<&LoadReport> {
        self.report.as_deref()
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(report) = &self.report {
            write!(f, " ({} rows confirmed", report.written)?;
            if let Some(row) = report.resume_from {
                write!(f, ", resume from row {row}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

/// `text` on one line: line breaks and other control characters become spaces, runs of spaces one.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
            continue;
        }
        out.push(c);
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_without_control_characters() {
        assert_eq!(one_line("a\nb\r\n\tc  d \n"), "a b c d");
        let error = LoadError::new(LoadErrorKind::Statement, "line 1\nline 2");
        assert_eq!(error.to_string(), "line 1 line 2");
    }

    #[test]
    fn a_run_error_names_the_confirmed_rows_and_the_resume_point() {
        let report = LoadReport {
            written: 7,
            resume_from: Some(9),
            ..LoadReport::default()
        };
        let error = LoadError::new(LoadErrorKind::ServerGone, "gone").with_report(report);
        assert_eq!(
            error.to_string(),
            "gone (7 rows confirmed, resume from row 9)"
        );
        assert_eq!(error.report().unwrap().resume_from, Some(9));
    }

    #[test]
    fn the_source_is_the_error_it_was_made_from_and_the_message_is_unchanged() {
        use std::error::Error as _;
        let io = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "cut short");
        let error = LoadError::new(LoadErrorKind::Input, io.to_string()).with_source(io);
        assert_eq!(error.to_string(), "cut short");
        let source = error.source().unwrap().downcast_ref::<std::io::Error>();
        assert_eq!(source.unwrap().kind(), std::io::ErrorKind::UnexpectedEof);
        assert!(LoadError::new(LoadErrorKind::Input, "x").source().is_none());
    }
}
