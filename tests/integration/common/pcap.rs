//! Captures made by the tests that need shapes no real conversation has (thousands of connections,
//! requests never answered, snaplen cuts, rotated files, damaged blocks): classic pcap or pcapng
//! files of Ethernet/IPv4/TCP packets, written by the rules of each format, carrying CQL v4 frames
//! built here. Nothing of cqlwire is used to make them; LZ4 bodies come from the C library.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

/// Link type of the packets written (Ethernet).
const LINKTYPE_ETHERNET: u32 = 1;

/// Largest TCP payload put in one packet.
pub const SEGMENT: usize = 32 << 10;

/// A packet as the file records it: time in microseconds, bytes captured, length on the wire.
pub struct Packet {
    pub micros: i64,
    pub data: Vec<u8>,
    pub wire_len: usize,
}

/// Where packets go: a pcap file, or a pcapng file with one interface.
pub struct Writer {
    out: BufWriter<File>,
    pcapng: bool,
    /// Bytes written so far (the offset of the next record or block).
    pub written: u64,
}

impl Writer {
    /// A classic pcap file (microseconds, little-endian, snaplen 262144).
    pub fn pcap(path: &Path) -> Writer {
        let mut w = Writer {
            out: BufWriter::new(File::create(path).unwrap()),
            pcapng: false,
            written: 0,
        };
        let mut header = Vec::new();
        header.extend(0xa1b2_c3d4u32.to_le_bytes());
        header.extend(2u16.to_le_bytes());
        header.extend(4u16.to_le_bytes());
        header.extend([0u8; 8]);
        header.extend(262_144u32.to_le_bytes());
        header.extend(LINKTYPE_ETHERNET.to_le_bytes());
        w.raw(&header);
        w
    }

    /// A pcapng file (little-endian): its section header and one Ethernet interface whose options
    /// are `if_options` (already encoded, without the end-of-options), microsecond timestamps
    /// unless an `if_tsresol` option says otherwise.
    pub fn pcapng(path: &Path, if_options: &[u8]) -> Writer {
        let mut w = Writer {
            out: BufWriter::new(File::create(path).unwrap()),
            pcapng: true,
            written: 0,
        };
        let mut shb = Vec::new();
        shb.extend(0x1a2b_3c4du32.to_le_bytes());
        shb.extend(1u16.to_le_bytes());
        shb.extend(0u16.to_le_bytes());
        shb.extend((-1i64).to_le_bytes());
        w.block(0x0a0d_0d0a, &shb);
        let mut idb = Vec::new();
        idb.extend((LINKTYPE_ETHERNET as u16).to_le_bytes());
        idb.extend(0u16.to_le_bytes());
        idb.extend(262_144u32.to_le_bytes());
        if !if_options.is_empty() {
            idb.extend(if_options);
            idb.extend([0u8; 4]);
        }
        w.block(1, &idb);
        w
    }

    /// Writes bytes as they are.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.out.write_all(bytes).unwrap();
        self.written += bytes.len() as u64;
    }

    /// A pcapng block of `kind` around `body` (padded to 4 bytes).
    pub fn block(&mut self, kind: u32, body: &[u8]) {
        self.raw(&pcapng_block(kind, body));
    }

    /// Writes one packet record (pcap) or enhanced packet block (pcapng).
    pub fn packet(&mut self, p: &Packet) {
        if self.pcapng {
            self.raw(&enhanced_packet_block(p, p.data.len()));
        } else {
            let mut record = Vec::with_capacity(16 + p.data.len());
            let seconds = p.micros.div_euclid(1_000_000) as u32;
            let micros = p.micros.rem_euclid(1_000_000) as u32;
            record.extend(seconds.to_le_bytes());
            record.extend(micros.to_le_bytes());
            record.extend((p.data.len() as u32).to_le_bytes());
            record.extend((p.wire_len as u32).to_le_bytes());
            record.extend(&p.data);
            self.raw(&record);
        }
    }

    /// Flushes and closes the file.
    pub fn finish(mut self) {
        self.out.flush().unwrap();
    }
}

/// A pcapng block of `kind` around `body`, padded to 4 bytes, its length before and after.
pub fn pcapng_block(kind: u32, body: &[u8]) -> Vec<u8> {
    let padded = body.len().div_ceil(4) * 4;
    let total = (12 + padded) as u32;
    let mut block = Vec::with_capacity(total as usize);
    block.extend(kind.to_le_bytes());
    block.extend(total.to_le_bytes());
    block.extend(body);
    block.resize(8 + padded, 0);
    block.extend(total.to_le_bytes());
    block
}

/// An enhanced packet block of interface 0 whose captured-length field says `caplen` (the data
/// is `p.data`, whatever that says).
pub fn enhanced_packet_block(p: &Packet, caplen: usize) -> Vec<u8> {
    let units = p.micros as u64;
    let mut body = Vec::with_capacity(20 + p.data.len());
    body.extend(0u32.to_le_bytes());
    body.extend(((units >> 32) as u32).to_le_bytes());
    body.extend((units as u32).to_le_bytes());
    body.extend((caplen as u32).to_le_bytes());
    body.extend((p.wire_len as u32).to_le_bytes());
    body.extend(&p.data);
    pcapng_block(6, &body)
}

/// TCP flag bits.
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

/// One TCP connection between 10.0.0.1:`client_port` and 10.0.0.2:`server_port`, making its
/// packets with consecutive sequence numbers.
pub struct Tcp {
    pub client_port: u16,
    pub server_port: u16,
    /// Next sequence number of each side: client, server.
    pub seq: [u32; 2],
}

impl Tcp {
    /// A connection whose initial sequence numbers derive from the client port.
    pub fn new(client_port: u16, server_port: u16) -> Tcp {
        let isn = u32::from(client_port).wrapping_mul(2_654_435_761);
        Tcp {
            client_port,
            server_port,
            seq: [isn, isn ^ 0x5555_5555],
        }
    }

    /// An Ethernet/IPv4/TCP packet from the client (or the server) with `flags`, sequence
    /// number `seq` and `payload`.
    pub fn packet_with_seq(
        &self,
        from_client: bool,
        flags: u8,
        seq: u32,
        payload: &[u8],
    ) -> Vec<u8> {
        let (src, dst, sport, dport) = if from_client {
            (
                [10, 0, 0, 1],
                [10, 0, 0, 2],
                self.client_port,
                self.server_port,
            )
        } else {
            (
                [10, 0, 0, 2],
                [10, 0, 0, 1],
                self.server_port,
                self.client_port,
            )
        };
        let ack = self.seq[usize::from(from_client)];
        let mut p = Vec::with_capacity(54 + payload.len());
        p.extend([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
        let total = (20 + 20 + payload.len()) as u16;
        p.extend([
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ]);
        p.extend(src);
        p.extend(dst);
        let mut sum = 0u32;
        for pair in p[14..34].chunks(2) {
            sum += u32::from(u16::from_be_bytes([pair[0], pair[1]]));
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        let checksum = !(sum as u16);
        p[24..26].copy_from_slice(&checksum.to_be_bytes());
        p.extend(sport.to_be_bytes());
        p.extend(dport.to_be_bytes());
        p.extend(seq.to_be_bytes());
        p.extend(if flags & ACK != 0 { ack } else { 0 }.to_be_bytes());
        p.extend([0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        p.extend(payload);
        p
    }

    /// A packet from one side at its next sequence number (advanced past the payload, and past
    /// SYN and FIN).
    pub fn packet(&mut self, from_client: bool, flags: u8, payload: &[u8]) -> Vec<u8> {
        let side = usize::from(!from_client);
        let p = self.packet_with_seq(from_client, flags, self.seq[side], payload);
        let advance = payload.len() as u32 + u32::from(flags & (SYN | FIN) != 0);
        self.seq[side] = self.seq[side].wrapping_add(advance);
        p
    }

    /// The three packets of the handshake.
    pub fn handshake(&mut self) -> Vec<Vec<u8>> {
        vec![
            self.packet(true, SYN, &[]),
            self.packet(false, SYN | ACK, &[]),
            self.packet(true, ACK, &[]),
        ]
    }

    /// `bytes` from one side in packets of at most [`SEGMENT`] bytes.
    pub fn send(&mut self, from_client: bool, bytes: &[u8]) -> Vec<Vec<u8>> {
        bytes
            .chunks(SEGMENT)
            .map(|chunk| self.packet(from_client, PSH | ACK, chunk))
            .collect()
    }
}

/// Packets captured whole, one microsecond apart from `start`.
pub fn timed(start: i64, packets: Vec<Vec<u8>>) -> Vec<Packet> {
    packets
        .into_iter()
        .enumerate()
        .map(|(i, data)| Packet {
            micros: start + i as i64,
            wire_len: data.len(),
            data,
        })
        .collect()
}

/// The packets of a classic little-endian microsecond pcap file (what tcpdump writes on Linux and
/// the captures of fixtures/inspect are), read by the rules of the format.
pub fn read_pcap(path: &Path) -> Vec<Packet> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        bytes[..4],
        0xa1b2_c3d4u32.to_le_bytes(),
        "{}",
        path.display()
    );
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let mut packets = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let captured = u32_at(at + 8) as usize;
        packets.push(Packet {
            micros: i64::from(u32_at(at)) * 1_000_000 + i64::from(u32_at(at + 4)),
            wire_len: u32_at(at + 12) as usize,
            data: bytes[at + 16..at + 16 + captured].to_vec(),
        });
        at += 16 + captured;
    }
    assert_eq!(at, bytes.len(), "{}", path.display());
    packets
}

/// The TCP source and destination ports and the payload start of an Ethernet/IPv4/TCP packet.
pub fn tcp_ports(data: &[u8]) -> Option<(u16, u16, usize)> {
    if data.len() < 34 || data[12..14] != [0x08, 0x00] || data[23] != 6 {
        return None;
    }
    let tcp = 14 + usize::from(data[14] & 0x0f) * 4;
    let port = |at: usize| u16::from_be_bytes([data[at], data[at + 1]]);
    let header = usize::from(data.get(tcp + 12)? >> 4) * 4;
    Some((port(tcp), port(tcp + 2), tcp + header))
}

/// Writes `packets` to a new pcap file at `path`.
pub fn write_pcap(path: &Path, packets: &[Packet]) {
    let mut w = Writer::pcap(path);
    for p in packets {
        w.packet(p);
    }
    w.finish();
}

/// A CQL frame: version byte (direction bit included), flags, stream, opcode, body.
pub fn frame(version: u8, flags: u8, stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
    let mut f = vec![version, flags];
    f.extend(stream.to_be_bytes());
    f.push(opcode);
    f.extend((body.len() as u32).to_be_bytes());
    f.extend(body);
    f
}

/// A QUERY body: the `[long string]` text, consistency ONE, no flags.
pub fn query_body(text: &[u8]) -> Vec<u8> {
    let mut body = (text.len() as u32).to_be_bytes().to_vec();
    body.extend(text);
    body.extend([0, 1, 0]);
    body
}

/// A v4 LZ4 frame body: the uncompressed length (big-endian) and the C library's block.
pub fn lz4_body(plain: &[u8]) -> Vec<u8> {
    let block = lz4::block::compress(plain, None, false).unwrap();
    [&(plain.len() as u32).to_be_bytes()[..], &block].concat()
}

/// A STARTUP body with the `[string map]` `options`.
pub fn startup_body(options: &[(&str, &str)]) -> Vec<u8> {
    let string = |s: &str| [&(s.len() as u16).to_be_bytes()[..], s.as_bytes()].concat();
    let mut body = (options.len() as u16).to_be_bytes().to_vec();
    for (k, v) in options {
        body.extend(string(k));
        body.extend(string(v));
    }
    body
}

/// What a run of the binary did.
pub struct Ran {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Fails with the exit status and standard error unless the run succeeded.
    pub fn assert_success(&self, what: &str) {
        assert!(
            self.status.success(),
            "{what}: exit {:?}, signal {:?}: {}",
            self.status.code(),
            self.status.signal(),
            self.stderr
        );
    }
}

/// Runs `cqlwire ARGS` with at most `mib` MiB of address space (`ulimit -v`, the ceiling of the
/// other memory tests: going over it fails an allocation, which aborts the run), its output in
/// files. `mib` counts the binary's own mappings as they were when the ceilings were set
/// ([`super::CALIBRATED_OWN_MIB`]); what they have grown by since is added, so the room left for
/// the run's data stays the same.
pub fn run_limited(mib: u64, args: &[&std::ffi::OsStr]) -> Ran {
    let grown = super::own_address_space_mib().saturating_sub(super::CALIBRATED_OWN_MIB);
    let mib = mib + grown;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stdout");
    let err = dir.path().join("stderr");
    let status = Command::new("bash")
        .arg("-c")
        .arg("ulimit -v $1; exec \"$2\" \"${@:3}\"")
        .arg("bash")
        .arg((mib << 10).to_string())
        .arg(super::binary())
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .status()
        .unwrap();
    let text = |path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    Ran {
        status,
        stdout: text(&out),
        stderr: text(&err),
    }
}
