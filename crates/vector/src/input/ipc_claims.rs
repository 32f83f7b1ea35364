//! Checks the uncompressed length that each compressed buffer of an Arrow IPC record batch declares
//! (its first 8 bytes) before arrow-ipc allocates that much to decompress it: a claim beyond what
//! the codec can make of the compressed bytes, or beyond [`MAX_BUFFER`], is an error, so a hostile
//! file cannot make the process ask for terabytes and abort.
//!
//! Streams go through [`CheckedStream`] (only the body of a message with compressed buffers is held
//! while it is checked); files are checked once from their footer ([`check_file`]).
//!
//! Both also have their schema's text fields (top-level or nested, see [`text::ipc_text_tags`]) read
//! as binary, so that a value that is not UTF-8 damages its row only: the stream's schema message is
//! rewritten as it passes, the file's footer through [`TaggedFile`]; each keeps the schema as
//! declared.

use super::text;
use arrow_ipc::{CompressionType, Message, MessageHeader, RecordBatch};
use arrow_schema::Schema;
use std::io::{self, Read, Seek, SeekFrom};

/// The most an LZ4 frame expands: one byte of a match length stands for 255 bytes of output.
const LZ4_RATIO: u64 = 255;
/// The most a zstd frame expands: a 4-byte RLE block stands for a 128 KiB block.
const ZSTD_RATIO: u64 = 32_768;
/// Room for frame headers and a first block, whatever the ratio.
const SLACK: u64 = 64 << 10;
/// The largest uncompressed buffer accepted (a record batch this large is split by any writer).
const MAX_BUFFER: u64 = 4 << 30;

/// The continuation marker before each message's metadata length.
const CONTINUATION: [u8; 4] = [0xff; 4];

/// The record batch of a message (its own, or its dictionary's) when its buffers are compressed.
fn compressed_batch<'a>(message: &Message<'a>) -> Option<RecordBatch<'a>> {
    let batch = match message.header_type() {
        MessageHeader::RecordBatch => message.header_as_record_batch(),
        MessageHeader::DictionaryBatch => message
            .header_as_dictionary_batch()
            .and_then(|dictionary| dictionary.data()),
        _ => None,
    };
    batch.filter(|batch| batch.compression().is_some())
}

/// Checks the claims of a message's compressed buffers; `read8(offset)` reads the 8 bytes at
/// `offset` in the body (`None` past its end: arrow-ipc reports that itself).
fn check_message(
    message: &Message<'_>,
    mut read8: impl FnMut(u64) -> io::Result<Option<[u8; 8]>>,
) -> io::Result<()> {
    let Some(batch) = compressed_batch(message) else {
        return Ok(());
    };
    let Some(compression) = batch.compression() else {
        return Ok(());
    };
    let (codec, ratio) = match compression.codec() {
        CompressionType::LZ4_FRAME => ("an LZ4", LZ4_RATIO),
        _ => ("a zstd", ZSTD_RATIO),
    };
    for buffer in batch.buffers().into_iter().flatten() {
        let (Ok(offset), Ok(length)) = (
            u64::try_from(buffer.offset()),
            u64::try_from(buffer.length()),
        ) else {
            continue;
        };
        if length < 8 {
            continue;
        }
        let Some(prefix) = read8(offset)? else {
            continue;
        };
        // -1: the bytes that follow are not compressed; 0: no data.
        let Ok(claim) = u64::try_from(i64::from_le_bytes(prefix)) else {
            continue;
        };
        let most = ((length - 8) * ratio + SLACK).min(MAX_BUFFER);
        if claim > most {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{codec} buffer of {length} bytes declares {claim} bytes uncompressed, \
                     more than the {most} it can hold"
                ),
            ));
        }
    }
    Ok(())
}

/// An Arrow IPC stream read through, message by message, with the compressed buffers' claims
/// checked before arrow-ipc sees them. Bodies without compressed buffers pass straight through.
pub(crate) struct CheckedStream<R> {
    inner: R,
    /// Bytes to hand out before reading on: a message's prefix and metadata, and the body of a
    /// message with compressed buffers.
    ready: Vec<u8>,
    /// How much of `ready` was handed out.
    served: usize,
    /// Body bytes still to pass straight through.
    passthrough: u64,
    /// Set once the framing is not understood: everything passes through (arrow-ipc reports it).
    opaque: bool,
    /// The schema as the stream declares it, when its text fields are read as binary.
    declared: Option<Schema>,
}

impl<R: Read> CheckedStream<R> {
    /// Wraps the stream `inner`.
    pub(crate) fn new(inner: R) -> Self {
        CheckedStream {
            inner,
            ready: Vec::new(),
            served: 0,
            passthrough: 0,
            opaque: false,
            declared: None,
        }
    }

    /// The schema as the stream declares it, when its text fields are read as binary (after the
    /// schema message was read).
    pub(crate) fn declared_schema(&self) -> Option<&Schema> {
        self.declared.as_ref()
    }

    /// Reads into `ready` the next message's prefix and metadata, and its body when it has
    /// compressed buffers (then checked); false at the end of the input.
    fn next_message(&mut self) -> io::Result<bool> {
        self.ready.clear();
        self.served = 0;
        let start = (&mut self.inner).take(4).read_to_end(&mut self.ready)?;
        if start < 4 {
            return Ok(start > 0);
        }
        if self.ready[..4] == CONTINUATION {
            (&mut self.inner).take(4).read_to_end(&mut self.ready)?;
        }
        let prefix = self.ready.len();
        let Some(length) = self.ready.last_chunk::<4>().map(|b| i32::from_le_bytes(*b)) else {
            return Ok(true);
        };
        let Ok(length) = u64::try_from(length) else {
            self.opaque = true;
            return Ok(true);
        };
        // Grows with the bytes that arrive: a false length costs a short read, not its size.
        (&mut self.inner)
            .take(length)
            .read_to_end(&mut self.ready)?;
        let Ok(message) = arrow_ipc::root_as_message(&self.ready[prefix..]) else {
            self.opaque = true;
            return Ok(true);
        };
        let body = u64::try_from(message.bodyLength()).unwrap_or(0);
        if compressed_batch(&message).is_none() {
            let tagged = message
                .header_as_schema()
                .filter(|_| self.declared.is_none())
                .map(|schema| {
                    (
                        arrow_ipc::convert::try_fb_to_schema(schema),
                        text::ipc_text_tags(schema),
                    )
                });
            if let Some((Ok(declared), tags)) = tagged.filter(|(_, tags)| !tags.is_empty()) {
                for (at, tag) in tags {
                    if let Some(byte) = self.ready.get_mut(prefix + at) {
                        *byte = tag;
                    }
                }
                self.declared = Some(declared);
            }
            self.passthrough = body;
            return Ok(true);
        }
        let mut bytes = Vec::new();
        (&mut self.inner).take(body).read_to_end(&mut bytes)?;
        // The metadata is parsed again: `message` borrows `ready`, which takes the body next.
        let message = arrow_ipc::root_as_message(&self.ready[prefix..])
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        check_message(&message, |offset| {
            let at = usize::try_from(offset).unwrap_or(usize::MAX);
            Ok(bytes
                .get(at..at.saturating_add(8))
                .and_then(|b| b.try_into().ok()))
        })?;
        self.ready.extend_from_slice(&bytes);
        Ok(true)
    }
}

impl<R: Read> Read for CheckedStream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.served < self.ready.len() {
                let n = buf.len().min(self.ready.len() - self.served);
                buf[..n].copy_from_slice(&self.ready[self.served..self.served + n]);
                self.served += n;
                return Ok(n);
            }
            if self.opaque {
                return self.inner.read(buf);
            }
            if self.passthrough > 0 {
                let most = usize::try_from(self.passthrough).unwrap_or(usize::MAX);
                let len = buf.len().min(most);
                let n = self.inner.read(&mut buf[..len])?;
                self.passthrough -= n as u64;
                return Ok(n);
            }
            if !self.next_message()? {
                return Ok(0);
            }
        }
    }
}

/// The footer of an Arrow IPC file and where it starts; None when it cannot be found.
fn read_footer<F: Read + Seek>(file: &mut F) -> io::Result<Option<(u64, Vec<u8>)>> {
    let end = file.seek(SeekFrom::End(0))?;
    let mut tail = [0u8; 10];
    if end < 10 + 8 {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(end - 10))?;
    file.read_exact(&mut tail)?;
    let Ok(footer_length) = arrow_ipc::reader::read_footer_length(tail) else {
        return Ok(None);
    };
    let Some(footer_start) = (end - 10).checked_sub(footer_length as u64) else {
        return Ok(None);
    };
    let mut footer = vec![0; footer_length];
    file.seek(SeekFrom::Start(footer_start))?;
    file.read_exact(&mut footer)?;
    Ok(Some((footer_start, footer)))
}

/// An Arrow IPC file whose footer's text fields read as binary (see [`TaggedFile::open`]).
pub(crate) struct TaggedFile<F> {
    inner: F,
    /// Position of the next byte read.
    position: u64,
    /// (file offset, byte) written over what the file holds there.
    tags: Vec<(u64, u8)>,
}

impl<F: Read + Seek> TaggedFile<F> {
    /// Wraps `file` so that the type tags of its footer schema's text fields read as binary;
    /// returns it and the schema as the footer declares it (None when no field is retagged).
    pub(crate) fn open(mut file: F) -> io::Result<(TaggedFile<F>, Option<Schema>)> {
        let mut tags = Vec::new();
        let mut declared = None;
        if let Some((start, footer)) = read_footer(&mut file)? {
            let schema = arrow_ipc::root_as_footer(&footer)
                .ok()
                .and_then(|footer| footer.schema());
            if let Some(schema) = schema {
                let found = text::ipc_text_tags(schema);
                if let (false, Ok(schema)) = (
                    found.is_empty(),
                    arrow_ipc::convert::try_fb_to_schema(schema),
                ) {
                    tags = found
                        .into_iter()
                        .map(|(at, tag)| (start + at as u64, tag))
                        .collect();
                    declared = Some(schema);
                }
            }
        }
        let position = file.seek(SeekFrom::Start(0))?;
        Ok((
            TaggedFile {
                inner: file,
                position,
                tags,
            },
            declared,
        ))
    }
}

impl<F: Read> Read for TaggedFile<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let read = self.position..self.position + n as u64;
        for &(at, tag) in &self.tags {
            if read.contains(&at) {
                if let Some(byte) = buf.get_mut((at - read.start) as usize) {
                    *byte = tag;
                }
            }
        }
        self.position = read.end;
        Ok(n)
    }
}

impl<F: Seek> Seek for TaggedFile<F> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.position = self.inner.seek(to)?;
        Ok(self.position)
    }
}

/// Checks every record batch and dictionary of an Arrow IPC file, found from its footer; a file
/// whose footer cannot be read is left to arrow-ipc to report.
pub(crate) fn check_file<F: Read + Seek>(file: &mut F) -> io::Result<()> {
    let Some((_, footer)) = read_footer(file)? else {
        return Ok(());
    };
    let Ok(footer) = arrow_ipc::root_as_footer(&footer) else {
        return Ok(());
    };
    let blocks = footer.recordBatches().into_iter().flatten();
    for block in blocks.chain(footer.dictionaries().into_iter().flatten()) {
        let (Ok(offset), Ok(length)) = (
            u64::try_from(block.offset()),
            u64::try_from(block.metaDataLength()),
        ) else {
            continue;
        };
        let mut metadata = Vec::new();
        file.seek(SeekFrom::Start(offset))?;
        (&mut *file).take(length).read_to_end(&mut metadata)?;
        let skip = if metadata.starts_with(&CONTINUATION) {
            8
        } else {
            4
        };
        let Some(Ok(message)) = metadata.get(skip..).map(arrow_ipc::root_as_message) else {
            continue;
        };
        let body = offset + length;
        check_message(&message, |at| {
            let mut prefix = [0u8; 8];
            file.seek(SeekFrom::Start(body.saturating_add(at)))?;
            match file.read_exact(&mut prefix) {
                Ok(()) => Ok(Some(prefix)),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
                Err(e) => Err(e),
            }
        })?;
    }
    file.seek(SeekFrom::Start(0))?;
    Ok(())
}
