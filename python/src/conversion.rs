//! Python objects as the jobs' settings: hosts, the connection keywords, row ranges, shards,
//! column maps, counts and paths, each checked as the command line's flags are.

use crate::errors::{engine, usage};
use cqlwire_client::{parse_rename, ConnectionSettings, Password, SessionOptions};
use cqlwire_vector::input::{parse_rows, parse_shard};
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyRangeMethods, PyString};
use std::path::PathBuf;
use std::time::Duration;

/// `hosts`: a list of strings or one comma-separated string (`HOST[:PORT],...`).
pub(crate) struct Hosts(String);

impl<'a, 'py> FromPyObject<'a, 'py> for Hosts {
    type Error = PyErr;

    fn extract(hosts: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(text) = hosts.cast::<PyString>() {
            return Ok(Hosts(text.extract::<String>()?));
        }
        let hosts: Vec<String> = hosts.extract().map_err(|_| {
            crate::type_error("hosts must be a string (HOST[:PORT],...) or a list of strings")
        })?;
        Ok(Hosts(hosts.join(",")))
    }
}

/// A whole number of something (requests in flight, seconds, rows): any `int` from 0 to
/// 2**64 - 1, the job judging its bounds as the command line's flags do; a negative or larger
/// one is a usage error.
#[derive(Clone, Copy)]
pub(crate) struct Count(pub(crate) u64);

impl<'a, 'py> FromPyObject<'a, 'py> for Count {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match value.extract::<u64>() {
            Ok(n) => Ok(Count(n)),
            Err(error) if error.is_instance_of::<PyOverflowError>(value.py()) => Err(usage(
                value.py(),
                format!(
                    "{} is not a whole number from 0 to 2**64 - 1",
                    value.repr()?
                ),
            )),
            Err(error) => Err(error),
        }
    }
}

impl Count {
    /// The count as a size (saturated: a count past `usize` is past every bound).
    pub(crate) fn size(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

/// The connection keywords shared by `load`, `unload` and `search`, as the engine's settings.
pub(crate) struct ConnectionKeywords(ConnectionSettings);

impl ConnectionKeywords {
    /// `hosts`, `table` and the connection keywords among `rest` (consistency, timeout, username,
    /// password, tls, tls_ca, tls_cert, tls_key); another keyword is a `TypeError`.
    pub(crate) fn new(
        Hosts(hosts): Hosts,
        table: String,
        rest: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut settings = ConnectionSettings::new(hosts, table);
        for (name, value) in rest.into_iter().flat_map(|rest| rest.iter()) {
            let name: String = name.extract()?;
            match name.as_str() {
                "consistency" => settings.consistency = value.extract()?,
                "timeout" => settings.timeout = Duration::from_secs(value.extract::<Count>()?.0),
                "username" => settings.username = value.extract()?,
                "password" => {
                    settings.password = value.extract::<Option<String>>()?.map(Password::new)
                }
                "tls" => settings.tls = value.extract()?,
                "tls_ca" => settings.tls_ca = value.extract()?,
                "tls_cert" => settings.tls_cert = value.extract()?,
                "tls_key" => settings.tls_key = value.extract()?,
                other => {
                    return Err(crate::type_error(format!(
                        "unexpected keyword argument '{other}'"
                    )))
                }
            }
        }
        Ok(ConnectionKeywords(settings))
    }

    /// The engine's options for this connection.
    pub(crate) fn options(self, py: Python<'_>) -> PyResult<SessionOptions> {
        self.settings(py)?.options().map_err(engine(py))
    }

    /// The engine's settings: the password from `password=`, else `CQLWIRE_PASSWORD`.
    pub(crate) fn settings(self, py: Python<'_>) -> PyResult<ConnectionSettings> {
        let ConnectionKeywords(mut settings) = self;
        if let Some(user) = settings.user_without_password().map_err(engine(py))? {
            return Err(usage(
                py,
                format!(
                    "username {user} needs a password: pass password= or set {}",
                    cqlwire_client::PASSWORD_VARIABLE
                ),
            ));
        }
        Ok(settings)
    }
}

/// The table's vector column of `search` and `unload`: `vector_column=`, or `column=`, its older
/// spelling; both given is a usage error.
pub(crate) fn one_vector_column(
    py: Python<'_>,
    vector_column: Option<String>,
    column: Option<String>,
) -> PyResult<Option<String>> {
    match (vector_column, column) {
        (Some(_), Some(_)) => Err(usage(
            py,
            "vector_column and column (its older name) are the same keyword: give one",
        )),
        (named, older) => Ok(named.or(older)),
    }
}

/// A row range, the keyword `name`: `"START..END"` (either bound may be left out),
/// `range(START, END)` or `(START, END)` with END None for the end.
pub(crate) fn rows_argument(rows: &Bound<'_, PyAny>, name: &str) -> PyResult<std::ops::Range<u64>> {
    let py = rows.py();
    if let Ok(text) = rows.cast::<PyString>() {
        return parse_rows(&text.extract::<String>()?).map_err(|e| usage(py, e));
    }
    if let Ok(range) = rows.cast::<pyo3::types::PyRange>() {
        if range.step()? != 1 {
            return Err(usage(py, format!("{name} must be a range with step 1")));
        }
        let bound = |value: isize| {
            u64::try_from(value).map_err(|_| {
                usage(
                    py,
                    format!("{name} must not be negative (row numbers start at 0), not {value}"),
                )
            })
        };
        let (start, end) = (bound(range.start()?)?, bound(range.stop()?)?);
        if start > end {
            return Err(usage(
                py,
                format!("the range {start}..{end} ends before it starts"),
            ));
        }
        return Ok(start..end);
    }
    let (start, end): (u64, Option<u64>) = rows.extract().map_err(|_| {
        crate::type_error(format!(
            "{name} must be \"START..END\", range(START, END) or (START, END)"
        ))
    })?;
    let end = end.unwrap_or(u64::MAX);
    if start > end {
        return Err(usage(
            py,
            format!("the range {start}..{end} ends before it starts"),
        ));
    }
    Ok(start..end)
}

/// A part of the input: `"K/N"` or `(K, N)`.
pub(crate) struct Shard(pub(crate) (u64, u64));

impl<'a, 'py> FromPyObject<'a, 'py> for Shard {
    type Error = PyErr;

    fn extract(shard: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = shard.py();
        let text = match shard.cast::<PyString>() {
            Ok(text) => text.extract::<String>()?,
            Err(_) => {
                let (k, n): (u64, u64) = shard
                    .extract()
                    .map_err(|_| crate::type_error("shard must be \"K/N\" or (K, N)"))?;
                format!("{k}/{n}")
            }
        };
        parse_shard(&text).map(Shard).map_err(|e| usage(py, e))
    }
}

/// `map` as (input column, table column) pairs: a dict, pairs, or `"IN=COL,..."`.
pub(crate) struct Renames(pub(crate) Vec<(String, String)>);

impl<'a, 'py> FromPyObject<'a, 'py> for Renames {
    type Error = PyErr;

    fn extract(map: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        renames(&map).map(Renames)
    }
}

/// The pairs of [`Renames`].
fn renames(map: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    let py = map.py();
    let pairs: Vec<(String, String)> = if let Ok(text) = map.cast::<PyString>() {
        text.extract::<String>()?
            .split(',')
            .map(|pair| parse_rename(pair).map_err(|e| usage(py, e)))
            .collect::<PyResult<_>>()?
    } else if let Ok(dict) = map.cast::<PyDict>() {
        dict.iter()
            .map(|(k, v)| {
                Ok((
                    k.extract()?,
                    v.extract::<Option<String>>()?.unwrap_or_default(),
                ))
            })
            .collect::<PyResult<_>>()?
    } else {
        map.extract().map_err(|_| {
            crate::type_error("map must be a dict, a list of pairs or \"INPUT=COLUMN,...\"")
        })?
    };
    if let Some((from, _)) = pairs.iter().find(|(from, _)| from.is_empty()) {
        return Err(usage(py, format!("expected INPUT=COLUMN, not '={from}'")));
    }
    Ok(pairs)
}

/// A path keyword: `str` or `os.PathLike`.
pub(crate) fn path_argument(value: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    value
        .extract()
        .map_err(|_| crate::type_error(format!("{what} must be a path")))
}
