//! pcap and pcapng files read as a stream from any [`Read`], one record at a time, through
//! `pcap-parser`'s streaming readers (a bounded, reused buffer; packets are borrowed from it).
//!
//! The format is chosen by the first four bytes: `0a0d0d0a` is pcapng (either byte order, several
//! sections and interfaces with their own link types and timestamp resolutions), the pcap magics
//! `a1b2c3d4` (microseconds) and `a1b23c4d` (nanoseconds) in either byte order (and the Kuznetsov
//! variant `a1b2cd34`) are pcap. Broken records become [`Problem`]s with their offset in the file
//! and reading goes on where the format allows it: a pcapng block of a plausible length is skipped
//! (one the parser rejects, or whose contents run past its length),
//! while a pcap record header with an impossible length leaves no way to find the next record, so
//! the file ends there. A truncated last record is reported.

use std::io::{self, Cursor, Read};

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{LegacyPcapReader, PcapBlockOwned, PcapError, PcapNGReader};

use super::{Problem, Timestamp};

/// Initial size of the read buffer.
const BUFFER_START: usize = 256 * 1024;
/// Largest record (pcap) or block (pcapng) accepted: the read buffer grows up to this size.
pub const MAX_RECORD: usize = 16 * 1024 * 1024;
/// Largest pcapng section header block read while detecting the format.
const MAX_SECTION_HEADER: usize = 64 * 1024;

/// The container format of a capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// Classic libpcap file.
    Pcap,
    /// pcapng file.
    Pcapng,
}

/// One captured packet as stored in the file: its link type, time, and the captured bytes.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    /// Offset of the record (pcap) or block (pcapng) in the file.
    pub offset: u64,
    /// The link-layer header type (LINKTYPE_* number) of the interface the packet came from.
    pub linktype: i32,
    /// Capture time.
    pub timestamp: Timestamp,
    /// Length of the packet on the wire (may exceed `data.len()` when the snapshot length cut it).
    pub wire_len: u32,
    /// The captured bytes, starting with the link-layer header.
    pub data: &'a [u8],
}

/// What [`PacketReader::next_record`] produced.
#[derive(Debug)]
#[non_exhaustive]
pub enum Record<'a> {
    /// A captured packet.
    Packet(Packet<'a>),
    /// A broken record or block; reading may go on.
    Problem(Problem),
    /// A record that carries no packet (pcapng interface, statistics, name resolution blocks…).
    Other,
}

/// A capture file that cannot be read at all (not a capture, or an I/O error).
#[derive(Debug, thiserror::Error)]
#[error("{message} at byte {offset}")]
#[non_exhaustive]
pub struct FileError {
    /// Offset in the file where reading failed.
    pub offset: u64,
    /// What went wrong.
    pub message: String,
}

/// One pcapng interface: its link type and clock.
#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: i32,
    /// Timestamp units per second.
    units_per_second: u64,
    /// Seconds added to every timestamp.
    offset_seconds: i64,
}

/// What the reader knows of the file beyond the parser: link types, clocks, byte order.
#[derive(Debug, Default)]
struct State {
    /// pcap: the link type and whether timestamps are in nanoseconds.
    legacy_linktype: i32,
    nanoseconds: bool,
    /// pcapng: the interfaces of the current section, and its byte order.
    interfaces: Vec<Interface>,
    big_endian: bool,
}

/// Streaming reader of the packets of a pcap or pcapng file.
pub struct PacketReader<'r> {
    inner: Box<dyn PcapReaderIterator + 'r>,
    format: Format,
    /// Offset in the file of the start of `inner`'s data.
    offset: u64,
    state: State,
    capacity: usize,
    /// Length of the record last returned, consumed from the buffer on the next call.
    pending_consume: usize,
    finished: bool,
}

impl std::fmt::Debug for PacketReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketReader")
            .field("format", &self.format)
            .field("offset", &self.offset)
            .finish()
    }
}

/// Reads until `buf` holds `len` bytes or the input ends.
fn read_up_to(reader: &mut dyn Read, buf: &mut Vec<u8>, len: usize) -> io::Result<()> {
    while buf.len() < len {
        let start = buf.len();
        buf.resize(len, 0);
        match reader.read(&mut buf[start..]) {
            Ok(0) => {
                buf.truncate(start);
                return Ok(());
            }
            Ok(n) => buf.truncate(start + n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(start),
            Err(e) => {
                buf.truncate(start);
                return Err(e);
            }
        }
    }
    Ok(())
}

fn io_error(offset: u64, e: io::Error) -> FileError {
    FileError {
        offset,
        message: format!("cannot read the capture: {e}"),
    }
}

/// The format a file's first four bytes announce.
fn detect(magic: [u8; 4]) -> Option<Format> {
    match magic {
        [0x0a, 0x0d, 0x0d, 0x0a] => Some(Format::Pcapng),
        [0xa1, 0xb2, 0xc3, 0xd4]
        | [0xd4, 0xc3, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0x3c, 0x4d]
        | [0x4d, 0x3c, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0xcd, 0x34]
        | [0x34, 0xcd, 0xb2, 0xa1] => Some(Format::Pcap),
        _ => None,
    }
}

/// Where a packet's bytes lie in the reader's buffer, or what else the block was.
enum Classified {
    Packet {
        linktype: i32,
        timestamp: Timestamp,
        wire_len: u32,
        start: usize,
        len: usize,
    },
    Problem(String),
    Other,
}

impl State {
    /// Learns from a block and locates its packet relative to `base`, the start of the buffer.
    fn classify(&mut self, block: PcapBlockOwned<'_>, base: usize) -> Classified {
        let locate = |data: &[u8]| data.as_ptr() as usize - base;
        match block {
            PcapBlockOwned::LegacyHeader(header) => {
                self.legacy_linktype = header.network.0;
                self.nanoseconds = header.is_nanosecond_precision();
                Classified::Other
            }
            PcapBlockOwned::Legacy(record) => {
                let fraction = if self.nanoseconds {
                    i64::from(record.ts_usec)
                } else {
                    i64::from(record.ts_usec) * 1000
                };
                Classified::Packet {
                    linktype: self.legacy_linktype,
                    timestamp: Timestamp(i64::from(record.ts_sec) * 1_000_000_000 + fraction),
                    wire_len: record.origlen,
                    start: locate(record.data),
                    len: record.data.len(),
                }
            }
            PcapBlockOwned::NG(Block::SectionHeader(shb)) => {
                self.interfaces.clear();
                self.big_endian = shb.big_endian();
                Classified::Other
            }
            PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => match idb.ts_resolution() {
                Some(units_per_second) => {
                    self.interfaces.push(Interface {
                        linktype: idb.linktype.0,
                        units_per_second,
                        offset_seconds: idb.ts_offset(),
                    });
                    Classified::Other
                }
                None => {
                    // Keep the interface numbering; its packets get a clear problem each.
                    self.interfaces.push(Interface {
                        linktype: idb.linktype.0,
                        units_per_second: 0,
                        offset_seconds: 0,
                    });
                    Classified::Problem(format!(
                        "pcapng interface {} has an unusable timestamp resolution {:#04x}",
                        self.interfaces.len() - 1,
                        idb.if_tsresol
                    ))
                }
            },
            PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                let Some(interface) = self.interfaces.get(epb.if_id as usize) else {
                    return Classified::Problem(format!(
                        "pcapng packet on undeclared interface {}",
                        epb.if_id
                    ));
                };
                if interface.units_per_second == 0 {
                    return Classified::Problem("pcapng packet on an unusable interface".into());
                }
                let units = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                // `if_tsoffset` is signed: a negative one gives times before 1970.
                let nanos = i128::from(units) * 1_000_000_000
                    / i128::from(interface.units_per_second)
                    + i128::from(interface.offset_seconds) * 1_000_000_000;
                // The pcapng data field is padded to 4 bytes: the packet is its first caplen bytes.
                let len = (epb.caplen as usize).min(epb.data.len());
                Classified::Packet {
                    linktype: interface.linktype,
                    timestamp: Timestamp::clamped(nanos),
                    wire_len: epb.origlen,
                    start: locate(epb.data),
                    len,
                }
            }
            PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                let Some(interface) = self.interfaces.first() else {
                    return Classified::Problem("pcapng simple packet before any interface".into());
                };
                Classified::Packet {
                    linktype: interface.linktype,
                    timestamp: Timestamp(0),
                    wire_len: spb.origlen,
                    start: locate(spb.data),
                    len: (spb.origlen as usize).min(spb.data.len()),
                }
            }
            PcapBlockOwned::NG(_) => Classified::Other,
        }
    }
}

enum Step {
    Block(usize, Classified),
    End,
    Refill,
    Grow,
    Truncated,
    ReadError,
    Corrupt(String),
}

impl<'r> PacketReader<'r> {
    /// Detects the format from the first bytes of `reader` and reads the file header.
    pub fn new<R: Read + 'r>(mut reader: R) -> Result<Self, FileError> {
        let mut head = Vec::with_capacity(64);
        read_up_to(&mut reader, &mut head, 4).map_err(|e| io_error(0, e))?;
        let Ok(magic) = <[u8; 4]>::try_from(&head[..]) else {
            return Err(FileError {
                offset: 0,
                message: "input too short for a pcap or pcapng header".into(),
            });
        };
        let Some(format) = detect(magic) else {
            return Err(FileError {
                offset: 0,
                message: format!(
                    "not a pcap or pcapng capture (magic {:02x}{:02x}{:02x}{:02x})",
                    magic[0], magic[1], magic[2], magic[3]
                ),
            });
        };
        // pcap-parser parses the file header from its first read: hand it the whole header at once.
        let header_len = match format {
            Format::Pcap => 24,
            Format::Pcapng => {
                read_up_to(&mut reader, &mut head, 12).map_err(|e| io_error(0, e))?;
                if head.len() < 12 {
                    return Err(FileError {
                        offset: 0,
                        message: "truncated pcapng section header".into(),
                    });
                }
                let bytes = [head[4], head[5], head[6], head[7]];
                let len = match [head[8], head[9], head[10], head[11]] {
                    [0x1a, 0x2b, 0x3c, 0x4d] => u32::from_be_bytes(bytes),
                    _ => u32::from_le_bytes(bytes),
                } as usize;
                if !(28..=MAX_SECTION_HEADER).contains(&len) {
                    return Err(FileError {
                        offset: 4,
                        message: format!("implausible pcapng section header length {len}"),
                    });
                }
                len
            }
        };
        read_up_to(&mut reader, &mut head, header_len).map_err(|e| io_error(0, e))?;
        let name = match format {
            Format::Pcap => "pcap",
            Format::Pcapng => "pcapng",
        };
        let header_error = |e: PcapError<&[u8]>| FileError {
            offset: 0,
            message: format!("bad {name} file header ({e})"),
        };
        let input = Cursor::new(head).chain(reader);
        let inner: Box<dyn PcapReaderIterator + 'r> = match format {
            Format::Pcap => {
                Box::new(LegacyPcapReader::new(BUFFER_START, input).map_err(header_error)?)
            }
            Format::Pcapng => {
                Box::new(PcapNGReader::new(BUFFER_START, input).map_err(header_error)?)
            }
        };
        Ok(PacketReader {
            inner,
            format,
            offset: 0,
            state: State::default(),
            capacity: BUFFER_START,
            pending_consume: 0,
            finished: false,
        })
    }

    /// The container format detected.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The next record, `Ok(None)` at the end of the file. An `Err` is a read error of the input.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, FileError> {
        if self.pending_consume > 0 {
            self.inner.consume(self.pending_consume);
            self.pending_consume = 0;
        }
        loop {
            if self.finished {
                return Ok(None);
            }
            // pcap-parser 0.17 subtracts 12 from a pcapng block length it only checked against 8
            // (an overflow): refuse such a block here.
            if self.format == Format::Pcapng {
                if let Some(len) = self.block_length().filter(|&len| len < 12) {
                    let detail = format!("block length {len} is below 12");
                    return Ok(Some(Record::Problem(self.skip_corrupt(detail))));
                }
            }
            // `next` does not move the buffer, so positions relative to its start stay valid.
            let base = self.inner.data().as_ptr() as usize;
            let step = match self.inner.next() {
                Ok((len, block)) => Step::Block(len, self.state.classify(block, base)),
                Err(PcapError::Eof) => Step::End,
                Err(PcapError::Incomplete(_)) => Step::Refill,
                Err(PcapError::BufferTooSmall) => Step::Grow,
                Err(PcapError::UnexpectedEof) => Step::Truncated,
                Err(PcapError::ReadError) => Step::ReadError,
                Err(e) => Step::Corrupt(e.to_string()),
            };
            let offset = self.offset;
            match step {
                Step::Block(len, classified) => {
                    self.offset += len as u64;
                    match classified {
                        Classified::Packet {
                            linktype,
                            timestamp,
                            wire_len,
                            start,
                            len: data_len,
                        } => {
                            self.pending_consume = len;
                            let data = &self.inner.data()[start..start + data_len];
                            return Ok(Some(Record::Packet(Packet {
                                offset,
                                linktype,
                                timestamp,
                                wire_len,
                                data,
                            })));
                        }
                        Classified::Problem(message) => {
                            self.inner.consume(len);
                            return Ok(Some(Record::Problem(Problem { offset, message })));
                        }
                        Classified::Other => self.inner.consume(len),
                    }
                }
                Step::End => {
                    self.finished = true;
                    return Ok(None);
                }
                // The parser wants more than the block's own length holds (a packet longer than
                // its block): the block lies, and its length says where the next one starts.
                Step::Refill if self.whole_block_buffered() => {
                    let detail = "its contents run past its length".to_string();
                    return Ok(Some(Record::Problem(self.skip_corrupt(detail))));
                }
                Step::Refill => {
                    if self.inner.refill().is_err() {
                        return Err(FileError {
                            offset,
                            message: "cannot read the capture (read error)".into(),
                        });
                    }
                }
                Step::Grow if self.inner.data().len() < self.capacity => {
                    // Grow only for bytes that arrived: fill the buffer first (a record claiming
                    // more than the input holds ends as a truncated record instead).
                    if self.inner.refill().is_err() {
                        return Err(FileError {
                            offset,
                            message: "cannot read the capture (read error)".into(),
                        });
                    }
                }
                Step::Grow => {
                    if self.capacity >= MAX_RECORD || !self.inner.grow(self.capacity * 2) {
                        self.finished = true;
                        return Ok(Some(Record::Problem(Problem {
                            offset,
                            message: format!(
                                "record longer than {} MiB: the rest of the file cannot be read",
                                MAX_RECORD >> 20
                            ),
                        })));
                    }
                    self.capacity *= 2;
                }
                Step::Truncated => {
                    self.finished = true;
                    let left = self.inner.data().len();
                    if left == 0 {
                        return Ok(None);
                    }
                    return Ok(Some(Record::Problem(Problem {
                        offset,
                        message: format!(
                            "truncated last record: the file ends {left} bytes into it"
                        ),
                    })));
                }
                Step::ReadError => {
                    return Err(FileError {
                        offset,
                        message: "cannot read the capture (read error)".into(),
                    })
                }
                Step::Corrupt(detail) => {
                    return Ok(Some(Record::Problem(self.skip_corrupt(detail))));
                }
            }
        }
    }

    /// Whether the buffer holds a whole pcapng block by its length field (a plausible one).
    fn whole_block_buffered(&self) -> bool {
        let data = self.inner.data();
        self.format == Format::Pcapng
            && self
                .block_length()
                .is_some_and(|len| len >= 12 && len.is_multiple_of(4) && len <= data.len())
    }

    /// The length field of the pcapng block at the start of the buffer, when buffered.
    fn block_length(&self) -> Option<usize> {
        let &[a, b, c, d] = self.inner.data().get(4..8)? else {
            return None;
        };
        let bytes = [a, b, c, d];
        Some(if self.state.big_endian {
            u32::from_be_bytes(bytes)
        } else {
            u32::from_le_bytes(bytes)
        } as usize)
    }

    /// A block the parser rejected: skipped when its length field is plausible (pcapng), else the
    /// end of what can be read.
    fn skip_corrupt(&mut self, detail: String) -> Problem {
        let offset = self.offset;
        let skip = self
            .whole_block_buffered()
            .then(|| self.block_length())
            .flatten();
        match skip {
            Some(len) => {
                self.inner.consume(len);
                self.offset += len as u64;
                Problem {
                    offset,
                    message: format!("corrupt pcapng block of {len} bytes skipped ({detail})"),
                }
            }
            None => {
                self.finished = true;
                Problem {
                    offset,
                    message: format!(
                        "corrupt record, the rest of the file cannot be read ({detail})"
                    ),
                }
            }
        }
    }
}
