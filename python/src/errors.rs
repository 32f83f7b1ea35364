//! The exceptions of every job and how each job's errors map to them: `UsageError` for what the
//! command line refuses with exit code 2 (the job's `is_usage()`), `JobFailed` for what it exits 1
//! on. `LoadError` and `LoadFailed`, their first names, are the same classes.

use crate::reports::LoadReport;
use cqlwire_bench::case::CaseError;
use cqlwire_bench::DatasetError;
use cqlwire_client::{
    LoadError as EngineError, LoadErrorKind, SearchError, Setting, SettingNames, UnloadError,
};
use cqlwire_vector::input::InputError;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    cqlwire,
    UsageError,
    PyValueError,
    "What the command line refuses with exit code 2: an invalid option or keywords that do not go \
     together, an output that is an input, a table, column or statement the server does not have \
     or refuses, an input that cannot fill the statement. Nothing was written. `kind` names the \
     reason. Also named `LoadError`."
);
pyo3::create_exception!(
    cqlwire,
    JobFailed,
    PyRuntimeError,
    "What the command line exits 1 on: a run that could not start or finish (no connection, a \
     refused login, a damaged input, a file that cannot be read or written, the cluster gone \
     mid-run). `kind` names the reason; `report` (a LoadReport of a load, else None) has the rows \
     confirmed and `resume_from`, the row to start again from. Also named `LoadFailed`."
);

/// The library's settings as the keywords (`vector_column`), and `vector_column=` as the way out.
pub(crate) struct Keywords;

impl SettingNames for Keywords {
    fn name(&self, setting: Setting) -> String {
        setting.name().to_owned()
    }

    fn hint(&self, setting: Setting) -> String {
        format!("{}=", self.name(setting))
    }
}

/// The exception: `UsageError` when `usage`, else `JobFailed`, with its `kind` and `report`.
fn raise(
    py: Python<'_>,
    usage: bool,
    kind: &str,
    message: String,
    report: Option<LoadReport>,
) -> PyErr {
    let err = if usage {
        UsageError::new_err(message)
    } else {
        JobFailed::new_err(message)
    };
    let value = err.value(py);
    let set = value.setattr("kind", kind).and_then(|()| match report {
        Some(report) => value.setattr("report", Py::new(py, report)?),
        None => value.setattr("report", py.None()),
    });
    match set {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A job's error of no engine kind (`kind` `no_index`, `stopped`, `output`, `input`, …).
pub(crate) fn failure(
    py: Python<'_>,
    usage: bool,
    kind: &str,
    message: impl Into<String>,
) -> PyErr {
    raise(py, usage, kind, message.into(), None)
}

/// A usage error raised before the engine is reached (kind `invalid_option`).
pub(crate) fn usage(py: Python<'_>, message: impl Into<String>) -> PyErr {
    engine_error(
        py,
        &EngineError::new(LoadErrorKind::InvalidOption, message),
        Vec::new(),
    )
}

/// An engine error, its setting named as a keyword; a load's carries its report and `rejects`,
/// the rejected rows kept.
pub(crate) fn engine_error(
    py: Python<'_>,
    error: &EngineError,
    rejects: Vec<(u64, String, String)>,
) -> PyErr {
    let message = match error.setting() {
        Some(Setting::Username) => {
            format!("{} (log in with username= and password=)", error.message())
        }
        Some(setting) => format!("{} ({})", error.message(), Keywords.hint(setting)),
        None => error.message().to_owned(),
    };
    let report = error
        .report()
        .map(|report| LoadReport::new(report, rejects));
    raise(py, error.is_usage(), error.kind().name(), message, report)
}

/// An engine error with no rows behind it.
pub(crate) fn engine(py: Python<'_>) -> impl Fn(EngineError) -> PyErr + '_ {
    move |error| engine_error(py, &error, Vec::new())
}

/// An input error: usage for an option the input cannot take, else a failed run.
pub(crate) fn input_error(py: Python<'_>, error: InputError) -> PyErr {
    let kind = match error {
        InputError::Options(_) => LoadErrorKind::InvalidOption,
        _ => LoadErrorKind::Input,
    };
    engine_error(py, &EngineError::new(kind, error.to_string()), Vec::new())
}

/// A search job's error: `kind` `no_index` for a column without a vector index, `stopped` for a
/// stopped wait for the index, `input` for a query file that cannot be read, `output` for a
/// results file that cannot be written.
pub(crate) fn search_error(py: Python<'_>, error: SearchError) -> PyErr {
    let kind = match &error {
        SearchError::Search(error) => return engine_error(py, error, Vec::new()),
        SearchError::ResultsIsInput(_) => return usage(py, error.to_string()),
        SearchError::NoIndex { .. } => "no_index",
        SearchError::Stopped { .. } => "stopped",
        SearchError::QueryFile(_) => "input",
        _ => "output",
    };
    failure(py, error.is_usage(), kind, error.to_string())
}

/// An unload job's error: `kind` `stopped` for a stopped scan, `output` for the output or the ids
/// file.
pub(crate) fn unload_error(py: Python<'_>, error: UnloadError) -> PyErr {
    let error = match error {
        UnloadError::VectorColumn(error) => {
            error.into_load_error(&Keywords.hint(Setting::VectorColumn))
        }
        UnloadError::Unload(error) => error,
        error if error.is_usage() => return usage(py, error.message(&Keywords)),
        UnloadError::Stopped => return failure(py, false, "stopped", "the unload was stopped"),
        other => return failure(py, false, "output", other.to_string()),
    };
    engine_error(py, &error, Vec::new())
}

/// A bench case's error.
pub(crate) fn case_error(py: Python<'_>, error: CaseError) -> PyErr {
    let usage_error = error.is_usage();
    match error {
        CaseError::Engine(error) => engine_error(py, &error, Vec::new()),
        CaseError::Search(error) => search_error(py, error),
        CaseError::TableExists(table) => usage(
            py,
            format!("table {table} exists: drop it first, or pass drop=True"),
        ),
        CaseError::Stopped(_) => failure(py, false, "stopped", error.to_string()),
        CaseError::Output(_) | CaseError::Write(_) => {
            failure(py, usage_error, "output", error.to_string())
        }
        other if usage_error => usage(py, other.to_string()),
        other => failure(py, false, "input", other.to_string()),
    }
}

/// A bench dataset's error.
pub(crate) fn dataset_error(py: Python<'_>, error: DatasetError) -> PyErr {
    if error.is_usage() {
        usage(py, error.to_string())
    } else {
        failure(py, false, "input", error.to_string())
    }
}
