//! Raw byte streams without a capture around them: one connection given as its two directions
//! (Wireshark's "Follow TCP stream" raw, or hex), read in turns so that each response is decoded
//! after the request it answers.

use super::conn::{Conn, FEED_PIECE};
use super::pending::PendingTotals;
use super::tls::TlsLayer;
use super::Inspector;
use crate::capture::{Connection, Timestamp};
use crate::record::Record;
use cqlwire_protocol::stream::StreamEvent;
use cqlwire_tls::looks_like_tls;
use std::io::{self, Read};

/// Bytes read from the start of a raw stream to tell a TLS record from a CQL frame.
const TLS_PROBE: usize = 16;

impl Inspector {
    /// Decodes one connection given as its two raw byte streams (either may be absent), reading
    /// them in turns so each response is decoded after the request it answers. `label` names the
    /// connection. Read errors stop the run; malformed bytes are reported and skipped; streams
    /// that start with a TLS record are a connection over TLS: named
    /// ([`TlsRecord`](crate::TlsRecord)) and, with a key log, decrypted, their records read one
    /// at a time.
    pub fn raw<'a>(
        &mut self,
        label: &str,
        client: Option<&'a mut dyn Read>,
        server: Option<&'a mut dyn Read>,
        sink: &mut dyn FnMut(Record),
    ) -> io::Result<()> {
        let any: std::net::SocketAddr = ([0, 0, 0, 0], 0).into();
        let connection = Connection {
            id: 1,
            initiator: any,
            responder: any,
            syn_seen: true,
        };
        let mut c = Conn::new(connection, Some(true), &self.options);
        c.label = label.to_string();
        let mut inputs = [client, server];
        let mut heads = [Vec::new(), Vec::new()];
        for (input, head) in inputs.iter_mut().zip(&mut heads) {
            if let Some(reader) = input.as_mut() {
                reader.take(TLS_PROBE as u64).read_to_end(head)?;
            }
        }
        // A stream that starts with a TLS record is CQL over TLS: named as a packet capture of the
        // same bytes names it (version, SNI, cipher), and decrypted with a key log. Its records
        // are read one at a time, each side's decrypted messages queued like plaintext ones.
        let tls = heads.iter().any(|head| looks_like_tls(head));
        let mut streams: Vec<Option<Box<dyn Read + '_>>> = inputs
            .into_iter()
            .zip(heads)
            .map(|(input, head)| {
                input.map(|input| Box::new(io::Cursor::new(head).chain(input)) as Box<dyn Read>)
            })
            .collect();
        if tls {
            let mut layer = TlsLayer::new(&self.options, false);
            layer.queue_only = true;
            c.tls = Some(layer);
        }
        let totals = &mut self.pending;
        let mut buf = vec![0u8; FEED_PIECE];
        // Reads the next piece of side `i` (a TLS record, or up to FEED_PIECE bytes) into the
        // connection; false at its end (then the side's decoder is finished).
        let mut read = |c: &mut Conn,
                        i: usize,
                        totals: &mut PendingTotals,
                        sink: &mut dyn FnMut(Record)|
         -> io::Result<bool> {
            let Some(input) = streams[i].as_mut() else {
                return Ok(false);
            };
            let n = if tls {
                next_record(input, &mut buf)?;
                buf.len()
            } else {
                buf.resize(FEED_PIECE, 0);
                input.read(&mut buf)?
            };
            if n == 0 {
                streams[i] = None;
                let mut out = Vec::new();
                c.decoders[i].finish(&mut out);
                c.queues[i].extend(out);
                return Ok(false);
            }
            if tls {
                c.feed_tls(i, &buf[..n], Timestamp(0), totals, sink);
            } else {
                c.feed(i, &buf[..n]);
            }
            Ok(true)
        };
        // The handshake: one record each in turns, the client's first (each side's flight before
        // the other's next records), until a message is decrypted.
        if tls {
            let mut more = [true, true];
            while more.iter().any(|&m| m) && c.queues.iter().all(|q| q.is_empty()) {
                for (i, m) in more.iter_mut().enumerate() {
                    if *m && c.queues.iter().all(|q| q.is_empty()) {
                        *m = read(&mut c, i, totals, sink)?;
                    }
                }
            }
        }
        // Makes sure side `i` has something queued, reading more of its input; false at its end.
        let mut fill = |c: &mut Conn,
                        i: usize,
                        totals: &mut PendingTotals,
                        sink: &mut dyn FnMut(Record)|
         -> io::Result<bool> {
            while c.queues[i].is_empty() {
                if !read(c, i, totals, sink)? {
                    return Ok(!c.queues[i].is_empty());
                }
            }
            Ok(true)
        };
        loop {
            // The server's next message goes first when it answers a pending request (or is an
            // event or a problem); else the client's next request.
            let server_next = fill(&mut c, 1, totals, sink)?
                && match c.queues[1].front() {
                    Some(StreamEvent::Envelope(e)) => {
                        e.header.stream < 0 || c.pending.contains(e.header.stream)
                    }
                    _ => true,
                };
            if server_next {
                c.drain_one(1, Timestamp(0), totals, sink);
            } else if fill(&mut c, 0, totals, sink)? {
                c.drain_one(0, Timestamp(0), totals, sink);
            } else if !c.drain_one(1, Timestamp(0), totals, sink) {
                break;
            }
        }
        c.close(Timestamp(0), totals, sink);
        Ok(())
    }
}

/// Reads the next TLS record of `stream` (its 5-byte header and the length it declares, at most
/// 64 KiB) into `record`: fewer bytes at the stream's end, none after it.
fn next_record(stream: &mut dyn Read, record: &mut Vec<u8>) -> io::Result<()> {
    record.clear();
    stream
        .take(cqlwire_tls::HEADER_LEN as u64)
        .read_to_end(record)?;
    if let [_, _, _, high, low] = record[..] {
        let length = u16::from_be_bytes([high, low]);
        stream.take(u64::from(length)).read_to_end(record)?;
    }
    Ok(())
}
