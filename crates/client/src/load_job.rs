//! The load job, as the command line and the Python module run it: its settings checked (a
//! rejects file that is the input, the bounds), the input opened, the session opened and the
//! statement prepared for it, the rejects file opened, the rows sent.
//!
//! The faces build a [`LoadJob`] from their arguments, [`prepare`](LoadJob::prepare) it, show a
//! progress display over [`PreparedLoad::rows`], and render the [`LoadReport`] or the
//! [`LoadError`] (whose report says where to resume).

use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::PathBuf;

use cqlwire_vector::input::{BatchReader, InputFormat, InputOptions, RowSelection};
use cqlwire_vector::output::refuse_same_file;

use crate::batch::MAX_BATCH_ROWS;
use crate::dataset::{Dataset, DatasetOptions};
use crate::error::{LoadError, LoadErrorKind, Setting};
use crate::feed::Mode;
use crate::loader::Loader;
use crate::options::{Concurrency, LoadOptions};
use crate::rejects::{CsvRejects, RejectSink};
use crate::report::{LoadReport, RunControl};
use crate::session::SessionOptions;

/// Where the rows of a load come from.
pub enum LoadSource {
    /// A file any input format reads (standard input for `None` or `-`).
    File {
        /// The file.
        path: Option<PathBuf>,
        /// Its format; `None`: from the extension, else the magic bytes.
        format: Option<InputFormat>,
        /// The vector column of a Parquet or Arrow file.
        column: Option<String>,
        /// The dataset of an HDF5 file.
        dataset: String,
        /// Rows START..END only (row numbers stay those of the whole file); not with `shard`.
        rows: Option<Range<u64>>,
        /// The K-th of N contiguous, balanced parts; not with `rows`.
        shard: Option<(u64, u64)>,
    },
    /// Rows already open, e.g. an array in memory, numbered from the reader's first row.
    Reader(Box<dyn BatchReader>),
}

/// One load: what it reads, how the input's columns fill the statement, how it sends and where
/// the rejected rows go. The session (hosts, table, login, consistency) is given to
/// [`prepare`](LoadJob::prepare).
pub struct LoadJob {
    /// The rows.
    pub source: LoadSource,
    /// Renames, input column → table column; an empty table column leaves the input column out.
    pub map: Vec<(String, String)>,
    /// The statement to prepare instead of the INSERT of the mapped columns.
    pub query: Option<String>,
    /// The table column that receives each row's number in the whole input.
    pub row_number_column: Option<String>,
    /// Requests in flight, from 1 to [`LoadJob::MAX_CONCURRENCY`]; `None`: an adaptive window.
    pub concurrency: Option<u64>,
    /// Rows a request may carry, from 1 (each row alone) to [`MAX_BATCH_ROWS`]: more gathers rows
    /// whose partitions share their replicas into UNLOGGED batches ([`LoadOptions::batch_rows`]);
    /// `None`: the loader's default.
    pub batch: Option<u64>,
    /// The bound of a batch's size, from 1 to [`LoadJob::MAX_BATCH_BYTES`]
    /// ([`LoadOptions::batch_bytes`]); `None`: the server's own bound.
    pub batch_bytes: Option<u64>,
    /// A CSV file the rejected rows are added to (row, key, error); never the input.
    pub rejects: Option<PathBuf>,
    /// Read, convert and bind every row; send none.
    pub dry_run: bool,
}

impl LoadJob {
    /// The most requests in flight that [`concurrency`](LoadJob::concurrency) may ask for.
    pub const MAX_CONCURRENCY: u64 = 100_000;

    /// The largest [`batch_bytes`](LoadJob::batch_bytes): 256 MiB, the largest frame Apache
    /// Cassandra accepts.
    pub const MAX_BATCH_BYTES: u64 = 256 << 20;

    /// A load of `source` with every setting at its default.
    pub fn new(source: LoadSource) -> Self {
        LoadJob {
            source,
            map: Vec::new(),
            query: None,
            row_number_column: None,
            concurrency: None,
            batch: None,
            batch_bytes: None,
            rejects: None,
            dry_run: false,
        }
    }

    /// Refuses settings that cannot work: a concurrency or batch out of bounds, rows selected two ways, a
    /// rejects file that is the input file (adding to it would change what is read). Nothing is
    /// read; [`prepare`](LoadJob::prepare) checks it too: call it first to refuse the job before
    /// anything else is asked (a password, say).
    pub fn check(&self) -> Result<(), LoadError> {
        let refuse = |message: String, setting| {
            Err(LoadError::new(LoadErrorKind::InvalidOption, message).with_setting(setting))
        };
        if let Some(n) = self
            .concurrency
            .filter(|n| !(1..=Self::MAX_CONCURRENCY).contains(n))
        {
            return refuse(
                format!(
                    "the concurrency must be between 1 and {}, not {n}",
                    Self::MAX_CONCURRENCY
                ),
                Setting::Concurrency,
            );
        }
        if let Some(n) = self.batch.filter(|n| !(1..=MAX_BATCH_ROWS).contains(n)) {
            return refuse(
                format!("a batch must hold 1 to {MAX_BATCH_ROWS} rows, not {n}"),
                Setting::Batch,
            );
        }
        if let Some(n) = self
            .batch_bytes
            .filter(|n| !(1..=Self::MAX_BATCH_BYTES).contains(n))
        {
            return refuse(
                format!(
                    "the batch bytes must be between 1 and {}, not {n}",
                    Self::MAX_BATCH_BYTES
                ),
                Setting::BatchBytes,
            );
        }
        let LoadSource::File {
            path, rows, shard, ..
        } = &self.source
        else {
            return Ok(());
        };
        if rows.is_some() && shard.is_some() {
            return refuse(
                "rows and a shard select the rows two ways: give one".to_owned(),
                Setting::Rows,
            );
        }
        match &self.rejects {
            Some(rejects) if refuse_same_file(path.as_deref(), Some(rejects)).is_err() => refuse(
                format!(
                    "the rejects file {} is the input: choose another file for the rejected rows",
                    rejects.display()
                ),
                Setting::Rejects,
            ),
            _ => Ok(()),
        }
    }

    /// [`check`](LoadJob::check)s the job, opens the input, connects for it
    /// ([`Loader::connect_for`]: the statement prepared and the input bound to its markers) and
    /// opens the rejects file (a file that is not a rejects file is refused, never written to).
    pub async fn prepare(self, session: SessionOptions) -> Result<PreparedLoad, LoadError> {
        self.check()?;
        let mut options = LoadOptions::new(session);
        options.query = self.query;
        if let Some(n) = self.concurrency {
            options.concurrency = Concurrency::Fixed(n as usize);
        }
        if let Some(n) = self.batch {
            options.batch_rows = n as usize;
        }
        options.batch_bytes = self.batch_bytes;
        let (mut dataset, selected) = match self.source {
            LoadSource::File {
                path,
                format,
                column,
                dataset,
                rows,
                shard,
            } => {
                let bounded = rows.as_ref().is_some_and(|r| r.end != u64::MAX) || shard.is_some();
                let options = DatasetOptions {
                    path,
                    input: InputOptions {
                        format,
                        column,
                        dataset,
                        selection: RowSelection::of(rows.clone(), shard),
                        batch_rows: DatasetOptions::BATCH_ROWS,
                        vectors_optional: true,
                    },
                    map: self.map,
                    row_number_column: self.row_number_column,
                };
                let opened = Dataset::open(&options)?;
                let end = |dataset: &Dataset| {
                    let rows_end = rows.as_ref().map(|r| r.end);
                    dataset.rows().map(|n| dataset.first_row() + n).or(rows_end)
                };
                let selected = bounded.then(|| end(&opened)).flatten();
                (opened, selected)
            }
            LoadSource::Reader(reader) => (
                Dataset::from_reader(reader, &self.map, self.row_number_column)?,
                None,
            ),
        };
        let loader = Loader::connect_for(options, &mut dataset).await?;
        let rejects = self
            .rejects
            .map(|path| {
                CsvRejects::append(&path).map_err(|e| {
                    LoadError::new(
                        LoadErrorKind::Rejects,
                        format!("cannot open {}: {e}", path.display()),
                    )
                    .with_source(e)
                })
            })
            .transpose()?;
        Ok(PreparedLoad {
            loader,
            dataset,
            rejects,
            selected,
            mode: if self.dry_run {
                Mode::DryRun
            } else {
                Mode::Write
            },
        })
    }
}

/// A load connected, its input open and bound to the prepared statement: ready to
/// [`run`](PreparedLoad::run).
pub struct PreparedLoad {
    loader: Loader,
    dataset: Dataset,
    rejects: Option<CsvRejects<File>>,
    selected: Option<u64>,
    mode: Mode,
}

impl PreparedLoad {
    /// The rows the run reads, when the input says.
    pub fn rows(&self) -> Option<u64> {
        self.dataset.rows()
    }

    /// The end of the rows a file's `rows` or `shard` selected (exclusive), for a resume point
    /// that stays within the selection; `None` when the selection runs to the input's end.
    pub fn selection_end(&self) -> Option<u64> {
        self.selected
    }

    /// Sends every row ([`Loader::load`]; in a dry run, binds and checks it): each rejected row
    /// goes to the rejects file when the job names one, and to `also` when given. `control.stop`
    /// drains the run, whose report then says where to resume.
    pub async fn run(
        self,
        control: &RunControl,
        also: Option<&mut dyn RejectSink>,
    ) -> Result<LoadReport, LoadError> {
        let mut sink = Both {
            file: self.rejects,
            also,
        };
        self.loader
            .load(self.dataset, &mut sink, control, self.mode)
            .await
    }
}

/// The rejects file and the face's own list, each when present.
struct Both<'a> {
    file: Option<CsvRejects<File>>,
    also: Option<&'a mut dyn RejectSink>,
}

impl RejectSink for Both<'_> {
    fn reject(&mut self, row: u64, key: &str, error: &str) -> io::Result<()> {
        if let Some(file) = &mut self.file {
            file.reject(row, key, error)?;
        }
        match &mut self.also {
            Some(also) => also.reject(row, key, error),
            None => Ok(()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(file) = &mut self.file {
            file.flush()?;
        }
        match &mut self.also {
            Some(also) => also.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &std::path::Path) -> LoadJob {
        LoadJob::new(LoadSource::File {
            path: Some(path.to_path_buf()),
            format: None,
            column: None,
            dataset: "train".into(),
            rows: None,
            shard: None,
        })
    }

    #[test]
    fn a_rejects_file_that_is_the_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("base.npy");
        std::fs::write(&input, b"x").unwrap();
        let mut job = file(&input);
        job.rejects = Some(dir.path().join("rejects.csv"));
        assert!(job.check().is_ok());
        job.rejects = Some(dir.path().join(".").join("base.npy"));
        let error = job.check().unwrap_err();
        assert!(error.kind().is_usage());
        assert_eq!(error.setting(), Some(Setting::Rejects));
        assert!(error.message().contains("is the input"), "{error}");
    }

    #[test]
    fn the_concurrency_and_the_selection_are_bounded() {
        let mut job = file(std::path::Path::new("base.npy"));
        for n in [0, LoadJob::MAX_CONCURRENCY + 1, 1 << 40] {
            job.concurrency = Some(n);
            let error = job.check().unwrap_err();
            assert_eq!(error.setting(), Some(Setting::Concurrency), "{n}");
        }
        job.concurrency = Some(LoadJob::MAX_CONCURRENCY);
        assert!(job.check().is_ok());
        for n in [0, MAX_BATCH_ROWS + 1] {
            job.batch = Some(n);
            assert_eq!(
                job.check().unwrap_err().setting(),
                Some(Setting::Batch),
                "{n}"
            );
        }
        job.batch = Some(MAX_BATCH_ROWS);
        for n in [0, LoadJob::MAX_BATCH_BYTES + 1] {
            job.batch_bytes = Some(n);
            let error = job.check().unwrap_err();
            assert_eq!(error.setting(), Some(Setting::BatchBytes), "{n}");
        }
        job.batch_bytes = Some(LoadJob::MAX_BATCH_BYTES);
        assert!(job.check().is_ok());
        if let LoadSource::File { rows, shard, .. } = &mut job.source {
            *rows = Some(0..10);
            *shard = Some((1, 2));
        }
        assert_eq!(job.check().unwrap_err().setting(), Some(Setting::Rows));
    }
}
