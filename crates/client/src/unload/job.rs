//! The unload into files, as the command line and the Python module run it: the output's format
//! and the settings that go with it checked, the session opened, the output (and the ids file)
//! opened atomically, the scan written into them, both put in place only when it all succeeded.

use std::io;
use std::path::{Path, PathBuf};

use cqlwire_vector::input::named;
use cqlwire_vector::output::{refuse_same_file, same_destination, Output, OutputError};

use super::{
    IdsFormat, UnloadControl, UnloadFormat, UnloadOptions, UnloadReport, UnloadWriter, Unloader,
    VectorColumnError,
};
use crate::error::{LoadError, Setting, SettingNames};

/// One unload into files: where, in which format, and what a format reads. Its other settings
/// (the session, the condition, the scan's sizes) are the [`UnloadOptions`] given to
/// [`run`](UnloadJob::run).
#[derive(Debug, Clone, Default)]
pub struct UnloadJob {
    /// The output file; `None` or `-`: standard output (npy and fbin need a file).
    pub output: Option<PathBuf>,
    /// The format; `None`: from the output's extension ([`UnloadFormat::for_output`]).
    pub format: Option<UnloadFormat>,
    /// The columns of a Parquet or Arrow output, in order, as written in CQL; `None`: every column.
    /// It sets [`UnloadOptions::columns`].
    pub columns: Option<Vec<String>>,
    /// The vector column of an npy, fbin, raw or hex output; `None`: the table's only one.
    pub column: Option<String>,
    /// A file that takes the partition keys of a vector output's rows, in the same order: `.npy`
    /// (int64, for one integer key column), else CSV.
    pub ids: Option<PathBuf>,
}

/// Why an unload job failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UnloadError {
    /// A vector column or an ids file with a format that holds columns (Parquet, Arrow).
    #[error("{}", self.message(&SnakeCase))]
    VectorSettings,
    /// Columns with a vector format (npy, fbin, raw, hex), which holds one vector column.
    #[error("{}", self.message(&SnakeCase))]
    ColumnsOfVectorFormat,
    /// The output and the ids file are one file.
    #[error("{}", self.message(&SnakeCase))]
    SameFiles,
    /// A vector format has no column to read: name it (see
    /// [`VectorColumnError::into_load_error`]).
    #[error(transparent)]
    VectorColumn(VectorColumnError),
    /// The session, the table, the scan or the writer refused or failed.
    #[error(transparent)]
    Unload(#[from] LoadError),
    /// The stop flag (or the receiver of the pages gone) ended the scan before it read every
    /// range.
    #[error("the unload was stopped")]
    Stopped,
    /// The output or the ids file could not be created.
    #[error(transparent)]
    OutputOpen(OutputError),
    /// The header of the output or of the ids file could not be written (the writer's
    /// [`UnloadWriteError::Io`](super::UnloadWriteError::Io), which is the source).
    #[error("{0}")]
    OutputHeader(#[source] super::UnloadWriteError),
    /// The output or the ids file could not be written or put in place.
    #[error(transparent)]
    OutputWrite(io::Error),
}

impl UnloadError {
    /// Whether the caller asked for something that cannot work (settings that do not go with the
    /// format, one file named twice, an unknown table or column): a face shows it as a usage
    /// error (exit code 2). A stopped scan and an output that cannot be created or written are
    /// failures.
    pub fn is_usage(&self) -> bool {
        match self {
            UnloadError::VectorSettings
            | UnloadError::ColumnsOfVectorFormat
            | UnloadError::SameFiles
            | UnloadError::VectorColumn(_) => true,
            UnloadError::Unload(error) => error.is_usage(),
            UnloadError::Stopped
            | UnloadError::OutputOpen(_)
            | UnloadError::OutputHeader(_)
            | UnloadError::OutputWrite(_) => false,
        }
    }

    /// The message, naming settings as `names` spells them.
    pub fn message(&self, names: &dyn SettingNames) -> String {
        match self {
            UnloadError::VectorSettings => format!(
                "{} and {} go with the npy, fbin, raw and hex formats; a parquet or arrow output \
                 takes {}",
                names.name(Setting::VectorColumn),
                names.name(Setting::Ids),
                names.name(Setting::Columns)
            ),
            UnloadError::ColumnsOfVectorFormat => format!(
                "{} goes with the parquet and arrow formats; the npy, fbin, raw and hex formats \
                 take one vector column ({})",
                names.name(Setting::Columns),
                names.hint(Setting::VectorColumn)
            ),
            UnloadError::SameFiles => {
                "the output and the ids file are the same file; name two files".to_owned()
            }
            other => other.to_string(),
        }
    }
}

/// The settings' own names, for [`Display`](std::fmt::Display).
struct SnakeCase;

impl SettingNames for SnakeCase {
    fn name(&self, setting: Setting) -> String {
        setting.name().to_owned()
    }
}

/// Phases of an unload job, for a progress display. Every method does nothing by default.
pub trait UnloadObserver: Send + Sync {
    /// The scan of `ranges` token ranges starts; its live counters are the control's `progress`.
    fn scan_started(&self, _ranges: usize) {}
    /// The scan ended.
    fn scan_ended(&self) {}
}

/// No display.
impl UnloadObserver for () {}

/// What an unload job wrote.
#[derive(Debug, Clone)]
pub struct UnloadOutcome {
    /// What the scan read (its rows include those left out).
    pub report: UnloadReport,
    /// Rows of a vector format left out because their vector is null.
    pub skipped: u64,
    /// The format written.
    pub format: UnloadFormat,
}

impl UnloadJob {
    /// The format written: the one asked for, else by the output's extension.
    pub fn format(&self) -> UnloadFormat {
        self.format
            .unwrap_or_else(|| UnloadFormat::for_output(named(self.output.as_deref())))
    }

    /// Checks the settings that go with the format and refuses an ids file that is the output;
    /// [`run`](UnloadJob::run) checks them too: call it first to refuse the job before anything
    /// else is asked (a password, say).
    pub fn check(&self) -> Result<UnloadFormat, UnloadError> {
        let format = self.format();
        if format.holds_columns() {
            if self.column.is_some() || self.ids.is_some() {
                return Err(UnloadError::VectorSettings);
            }
        } else if self.columns.is_some() {
            return Err(UnloadError::ColumnsOfVectorFormat);
        }
        if let (Some(ids), output) = (&self.ids, self.output.as_deref()) {
            if same_destination(Some(ids), output) || refuse_same_file(Some(ids), output).is_err() {
                return Err(UnloadError::SameFiles);
            }
        }
        Ok(format)
    }

    /// Runs the job: [`check`](UnloadJob::check); the session opened with the columns the format
    /// reads; the output and the ids file opened (atomic outputs: call it after the stop flag's
    /// signal handlers are registered); the scan written into them ([`Unloader::run_into`]); both
    /// put in place, the ids file first. A stopped scan or any error leaves both files as they
    /// were.
    pub async fn run(
        self,
        mut options: UnloadOptions,
        control: &UnloadControl,
        observer: &dyn UnloadObserver,
    ) -> Result<UnloadOutcome, UnloadError> {
        let format = self.check()?;
        let UnloadJob {
            output,
            columns,
            column,
            ids,
            ..
        } = self;
        options.columns = columns;
        let mut no_vector = None;
        let connected = Unloader::connect_with(options, |table, options| {
            if !format.holds_columns() {
                options
                    .read_vector(table, format, column.as_deref(), ids.is_some())
                    .map_err(|error| {
                        no_vector = Some(error.clone());
                        error.into_load_error(Setting::VectorColumn.name())
                    })?;
            }
            Ok(())
        })
        .await;
        let unloader = match (connected, no_vector) {
            (Ok(unloader), _) => unloader,
            (Err(_), Some(error)) => return Err(UnloadError::VectorColumn(error)),
            (Err(error), None) => return Err(error.into()),
        };
        let output = open(output.as_deref(), format.is_binary())?;
        let ids = match &ids {
            Some(path) => Some((open(Some(path), true)?, IdsFormat::from_extension(path))),
            None => None,
        };
        let writer = UnloadWriter::new(format, &unloader.schema(), output, ids)?;
        observer.scan_started(unloader.range_count());
        let (scanned, written) = unloader.run_into(writer, control).await;
        observer.scan_ended();
        // A write error stopped the scan: it is the cause to report.
        let writer = written.map_err(UnloadError::OutputWrite)?;
        let report = scanned?;
        let skipped = writer.skipped();
        let (output, ids) = writer.finish().map_err(UnloadError::OutputWrite)?;
        if let Some(ids) = ids {
            ids.commit().map_err(UnloadError::OutputWrite)?;
        }
        output.commit().map_err(UnloadError::OutputWrite)?;
        Ok(UnloadOutcome {
            report,
            skipped,
            format,
        })
    }
}

/// An output file (standard output for `None` or `-`), written atomically and without a sync: an
/// unload can be run again.
fn open(path: Option<&Path>, binary: bool) -> Result<Output, UnloadError> {
    Output::open(path, binary)
        .map(Output::without_sync)
        .map_err(UnloadError::OutputOpen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line's spelling.
    struct Flags;

    impl SettingNames for Flags {
        fn name(&self, setting: Setting) -> String {
            format!("--{}", setting.name().replace('_', "-"))
        }
    }

    #[test]
    fn settings_that_do_not_go_with_the_format_are_refused() {
        let job = |output: &str, column: Option<&str>, columns: bool| UnloadJob {
            output: Some(PathBuf::from(output)),
            column: column.map(str::to_owned),
            columns: columns.then(|| vec!["id".to_owned()]),
            ..UnloadJob::default()
        };
        assert_eq!(
            job("a.npy", Some("emb"), false).check().unwrap(),
            UnloadFormat::Npy
        );
        assert_eq!(job("-", None, true).check().unwrap(), UnloadFormat::Parquet);
        let error = job("a.parquet", Some("emb"), false).check().unwrap_err();
        assert_eq!(
            error.to_string(),
            "vector_column and ids go with the npy, fbin, raw and hex formats; a parquet or \
             arrow output takes columns"
        );
        let error = job("a.fbin", None, true).check().unwrap_err();
        assert_eq!(
            error.message(&Flags),
            "--columns goes with the parquet and arrow formats; the npy, fbin, raw and hex \
             formats take one vector column (--vector-column)"
        );
        let dir = tempfile::tempdir().unwrap();
        let mut same = job(dir.path().join("a.npy").to_str().unwrap(), None, false);
        same.ids = Some(dir.path().join(".").join("a.npy"));
        assert!(matches!(same.check(), Err(UnloadError::SameFiles)));
        assert!(same.check().unwrap_err().is_usage());
    }
}
