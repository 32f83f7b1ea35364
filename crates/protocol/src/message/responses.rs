//! ERROR bodies with each code's extra fields, and EVENT bodies of every kind.

use super::reader::{Reader, Step};
use super::reread::Reread;
use super::results::{schema_change, SchemaChange};
use crate::cursor::DecodeError;
use std::net::{IpAddr, SocketAddr};
use std::ops::Range;

type Result<T> = std::result::Result<T, DecodeError>;

/// The replicas that failed: a count before v5, a map of address to reason code from v5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failures {
    /// v3/v4: how many replicas failed.
    Count(i32),
    /// v5: each failed replica with its reason code.
    Reasons(FailureReasons),
}

/// The reason map of a v5 Read_failure or Write_failure, kept as where it is in the message's body
/// ([`super::Message::bytes`]), checked when the message was decoded: [`FailureReasons::iter`]
/// reads it again, so millions of entries take no more than their bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureReasons {
    /// The number of entries.
    count: usize,
    /// Where the entries are in the body.
    range: Range<usize>,
}

impl FailureReasons {
    /// The number of failed replicas.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Each failed replica's address and reason code, read from `body`, the body of the message.
    pub fn iter<'a>(&self, body: &'a [u8]) -> impl Iterator<Item = (IpAddr, u16)> + 'a {
        let mut reasons = Reread::new(body, &self.range);
        (0..self.count).map_while(move |_| {
            let len = reasons.byte()?;
            let address = reasons.take(len.into())?;
            let address = reasons.bytes(address);
            let address = match <[u8; 4]>::try_from(address) {
                Ok(v4) => IpAddr::from(v4),
                Err(_) => IpAddr::from(<[u8; 16]>::try_from(address).ok()?),
            };
            Some((address, reasons.short()?))
        })
    }
}

/// The extra fields of an error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorDetails {
    /// Codes without extra fields.
    None,
    /// Unavailable (0x1000).
    Unavailable {
        /// The consistency level asked for.
        consistency: u16,
        /// Replicas required.
        required: i32,
        /// Replicas alive.
        alive: i32,
    },
    /// Write_timeout (0x1100); in v5 a CAS write also gives the contentions.
    WriteTimeout {
        /// The consistency level asked for.
        consistency: u16,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
        /// `SIMPLE`, `BATCH`, `CAS`, …
        write_type: String,
        /// v5, CAS only: the contentions.
        contentions: Option<u16>,
    },
    /// Read_timeout (0x1200).
    ReadTimeout {
        /// The consistency level asked for.
        consistency: u16,
        /// Responses received.
        received: i32,
        /// Responses required.
        block_for: i32,
        /// Whether the replica asked for the data answered.
        data_present: bool,
    },
    /// Read_failure (0x1300).
    ReadFailure {
        /// The consistency level asked for.
        consistency: u16,
        /// Responses received.
        received: i32,
        /// Responses required.
        block_for: i32,
        /// The failed replicas.
        failures: Failures,
        /// Whether the replica asked for the data answered.
        data_present: bool,
    },
    /// Function_failure (0x1400).
    FunctionFailure {
        /// The function's keyspace.
        keyspace: String,
        /// The function.
        function: String,
        /// Its argument types.
        argument_types: Vec<String>,
    },
    /// Write_failure (0x1500).
    WriteFailure {
        /// The consistency level asked for.
        consistency: u16,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
        /// The failed replicas.
        failures: Failures,
        /// `SIMPLE`, `BATCH`, `CAS`, …
        write_type: String,
    },
    /// CAS_write_unknown (0x1700, v5).
    CasWriteUnknown {
        /// The consistency level asked for.
        consistency: u16,
        /// Acknowledgements received.
        received: i32,
        /// Acknowledgements required.
        block_for: i32,
    },
    /// Already_exists (0x2400).
    AlreadyExists {
        /// The keyspace.
        keyspace: String,
        /// The table (empty for a keyspace).
        table: String,
    },
    /// Unprepared (0x2500).
    Unprepared {
        /// The unknown prepared id.
        id: Vec<u8>,
    },
}

/// An ERROR body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorBody {
    /// The error code.
    pub code: i32,
    /// The server's message.
    pub message: String,
    /// The code's extra fields.
    pub details: ErrorDetails,
}

impl ErrorBody {
    /// The code's name in the specification (`Syntax_error`), `Unknown` for another code.
    pub fn name(&self) -> &'static str {
        match self.code {
            0x0000 => "Server_error",
            0x000A => "Protocol_error",
            0x0100 => "Bad_credentials",
            0x1000 => "Unavailable",
            0x1001 => "Overloaded",
            0x1002 => "Is_bootstrapping",
            0x1003 => "Truncate_error",
            0x1100 => "Write_timeout",
            0x1200 => "Read_timeout",
            0x1300 => "Read_failure",
            0x1400 => "Function_failure",
            0x1500 => "Write_failure",
            0x1600 => "CDC_write_failure",
            0x1700 => "CAS_write_unknown",
            0x2000 => "Syntax_error",
            0x2100 => "Unauthorized",
            0x2200 => "Invalid",
            0x2300 => "Config_error",
            0x2400 => "Already_exists",
            0x2500 => "Unprepared",
            _ => "Unknown",
        }
    }
}

/// An EVENT body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// TOPOLOGY_CHANGE: `NEW_NODE` or `REMOVED_NODE` and the node.
    TopologyChange {
        /// The change.
        change: String,
        /// The node.
        address: SocketAddr,
    },
    /// STATUS_CHANGE: `UP` or `DOWN` and the node.
    StatusChange {
        /// The change.
        change: String,
        /// The node.
        address: SocketAddr,
    },
    /// SCHEMA_CHANGE.
    SchemaChange(SchemaChange),
}

impl Event {
    /// The event type: `TOPOLOGY_CHANGE`, `STATUS_CHANGE` or `SCHEMA_CHANGE`.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::TopologyChange { .. } => "TOPOLOGY_CHANGE",
            Event::StatusChange { .. } => "STATUS_CHANGE",
            Event::SchemaChange(_) => "SCHEMA_CHANGE",
        }
    }
}

/// The failures of Read_failure/Write_failure: a count before v5, a reason map from v5.
fn failures(r: &mut Reader<'_>, version: u8) -> Result<Failures> {
    if version < 5 {
        return Ok(Failures::Count(r.int("failures")?));
    }
    let count = r.int_count("failure count", 7)?;
    let start = r.cursor.pos();
    for i in 0..count {
        r.within(Step::Item("failure", i), |r| {
            r.inetaddr("endpoint")?;
            r.short("reason code")
        })?;
    }
    Ok(Failures::Reasons(FailureReasons {
        count,
        range: start..r.cursor.pos(),
    }))
}

/// A `data_present` byte.
fn data_present(r: &mut Reader<'_>) -> Result<bool> {
    Ok(r.byte("data present")? != 0)
}

/// An ERROR body.
pub(crate) fn error(r: &mut Reader<'_>, version: u8) -> Result<ErrorBody> {
    let start = r.cursor.pos();
    let code = r.cursor.i32("error code")?;
    let mut body = ErrorBody {
        code,
        message: String::new(),
        details: ErrorDetails::None,
    };
    let name = body.name();
    r.line(start, || format!("code 0x{code:04x} ({name})"));
    body.message = r.server_text("message")?;
    body.details = match code {
        0x1000 => ErrorDetails::Unavailable {
            consistency: r.consistency("consistency")?,
            required: r.int("required")?,
            alive: r.int("alive")?,
        },
        0x1100 => {
            let consistency = r.consistency("consistency")?;
            let received = r.int("received")?;
            let block_for = r.int("block for")?;
            let write_type = r.string("write type")?;
            let contentions = if version >= 5 && write_type == "CAS" && r.cursor.left() >= 2 {
                Some(r.short("contentions")?)
            } else {
                None
            };
            ErrorDetails::WriteTimeout {
                consistency,
                received,
                block_for,
                write_type,
                contentions,
            }
        }
        0x1200 => ErrorDetails::ReadTimeout {
            consistency: r.consistency("consistency")?,
            received: r.int("received")?,
            block_for: r.int("block for")?,
            data_present: data_present(r)?,
        },
        0x1300 => ErrorDetails::ReadFailure {
            consistency: r.consistency("consistency")?,
            received: r.int("received")?,
            block_for: r.int("block for")?,
            failures: failures(r, version)?,
            data_present: data_present(r)?,
        },
        0x1400 => ErrorDetails::FunctionFailure {
            keyspace: r.string("keyspace")?,
            function: r.string("function")?,
            argument_types: r.string_list("argument types")?,
        },
        0x1500 => ErrorDetails::WriteFailure {
            consistency: r.consistency("consistency")?,
            received: r.int("received")?,
            block_for: r.int("block for")?,
            failures: failures(r, version)?,
            write_type: r.string("write type")?,
        },
        0x1700 => ErrorDetails::CasWriteUnknown {
            consistency: r.consistency("consistency")?,
            received: r.int("received")?,
            block_for: r.int("block for")?,
        },
        0x2400 => ErrorDetails::AlreadyExists {
            keyspace: r.string("keyspace")?,
            table: r.string("table")?,
        },
        0x2500 => ErrorDetails::Unprepared {
            id: r.short_bytes("prepared id")?.to_vec(),
        },
        _ => ErrorDetails::None,
    };
    Ok(body)
}

/// An EVENT body.
pub(crate) fn event(r: &mut Reader<'_>) -> Result<Event> {
    let start = r.cursor.pos();
    let kind = r.string("event type")?;
    Ok(match kind.as_str() {
        "TOPOLOGY_CHANGE" => Event::TopologyChange {
            change: r.string("change")?,
            address: r.inet("node")?,
        },
        "STATUS_CHANGE" => Event::StatusChange {
            change: r.string("change")?,
            address: r.inet("node")?,
        },
        "SCHEMA_CHANGE" => Event::SchemaChange(schema_change(r)?),
        other => return Err(r.error(start, format!("unknown event type {other:?}"))),
    })
}
