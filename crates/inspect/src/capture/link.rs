//! From a captured packet to its TCP segment: the link-layer header by LINKTYPE, then IPv4/IPv6
//! (extension headers included) and TCP through `etherparse`, without copying.
//!
//! Link types: Ethernet (1, VLAN tags included), Linux cooked SLL (113) and SLL2 (276), BSD
//! loopback NULL (0, address family in either byte order) and LOOP (108, network order), raw IP
//! (101, and the DLT values 12 and 14 some systems write), IPv4 (228) and IPv6 (229). TCP checksums
//! are not verified: captures on the sending host carry unfinished checksums (offload).
//!
//! A packet the capture cut short (its snapshot length, `tcpdump -s`) is read as far as it was
//! captured: its segment carries the captured part of its payload and says how many bytes of it
//! were not captured, from the IP length fields.

use std::net::{IpAddr, SocketAddr};

use etherparse::{
    EtherType, LaxNetSlice, LaxSlicedPacket, NetSlice, SlicedPacket, TcpSlice, TransportSlice,
};

/// A TCP segment cut out of a packet; `payload` borrows the packet.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    /// Sender.
    pub src: SocketAddr,
    /// Receiver.
    pub dst: SocketAddr,
    /// Sequence number.
    pub seq: u32,
    /// SYN flag.
    pub syn: bool,
    /// ACK flag.
    pub ack: bool,
    /// FIN flag.
    pub fin: bool,
    /// RST flag.
    pub rst: bool,
    /// TCP payload, as far as it was captured.
    pub payload: &'a [u8],
    /// For a packet the capture cut short (its snapshot length): what of it is missing.
    pub cut: Option<Cut>,
}

/// What the capture cut off a packet (its snapshot length, `tcpdump -s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Bytes of the packet captured, link-layer header included.
    pub captured: u32,
    /// Bytes of the TCP payload after [`Segment::payload`] that were not captured.
    pub missing: u32,
}

/// Why a packet carries no TCP segment.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotTcp {
    /// A link type this reader does not know (its LINKTYPE number).
    UnsupportedLink(i32),
    /// Not IP (ARP, other EtherTypes or address families).
    NotIp,
    /// IP, but not TCP (UDP, ICMP…).
    NotTcp,
    /// A fragment of a fragmented IP datagram (fragments are not reassembled).
    Fragment,
    /// Broken headers: the message says what.
    Malformed(String),
}

const LINKTYPE_NULL: i32 = 0;
const LINKTYPE_ETHERNET: i32 = 1;
const DLT_RAW_12: i32 = 12;
const DLT_RAW_14: i32 = 14;
const LINKTYPE_RAW: i32 = 101;
const LINKTYPE_LOOP: i32 = 108;
const LINKTYPE_LINUX_SLL: i32 = 113;
const LINKTYPE_IPV4: i32 = 228;
const LINKTYPE_IPV6: i32 = 229;
const LINKTYPE_LINUX_SLL2: i32 = 276;

/// Length of the Linux cooked v1 header; its protocol (an EtherType) is its last two bytes.
const SLL_HEADER_LEN: usize = 16;
/// Length of the Linux cooked v2 header; its protocol (an EtherType) is its first two bytes.
const SLL2_HEADER_LEN: usize = 20;

/// Whether a BSD loopback address family is IPv4 or IPv6 (the IPv6 value differs per system).
fn loopback_family_is_ip(family: u32) -> bool {
    matches!(family, 2 | 10 | 24 | 28 | 30)
}

/// Where the network layer of a packet starts, as etherparse's constructors take it.
enum Network<'a> {
    /// An Ethernet frame.
    Ethernet(&'a [u8]),
    /// A payload of this EtherType.
    EtherType(EtherType, &'a [u8]),
    /// An IPv4 or IPv6 datagram.
    Ip(&'a [u8]),
}

/// Cuts the link-layer header of link type `linktype` off `data`.
fn network(linktype: i32, data: &[u8]) -> Result<Network<'_>, NotTcp> {
    Ok(match linktype {
        LINKTYPE_ETHERNET => Network::Ethernet(data),
        // Cooked headers by hand: etherparse refuses SLL headers of loopback devices (ARPHRD 772),
        // which is what `tcpdump -i any` writes for `lo`.
        LINKTYPE_LINUX_SLL | LINKTYPE_LINUX_SLL2 => {
            let (len, at) = if linktype == LINKTYPE_LINUX_SLL {
                (SLL_HEADER_LEN, 14)
            } else {
                (SLL2_HEADER_LEN, 0)
            };
            let Some(rest) = data.get(len..) else {
                return Err(NotTcp::Malformed("Linux cooked header truncated".into()));
            };
            let protocol = u16::from_be_bytes([data[at], data[at + 1]]);
            Network::EtherType(EtherType(protocol), rest)
        }
        LINKTYPE_NULL | LINKTYPE_LOOP => {
            let Some(&[a, b, c, d]) = data.get(..4) else {
                return Err(NotTcp::Malformed("loopback header truncated".into()));
            };
            let family = if linktype == LINKTYPE_LOOP {
                u32::from_be_bytes([a, b, c, d])
            } else {
                // Written in the capturing host's byte order: the family is a small number.
                let le = u32::from_le_bytes([a, b, c, d]);
                if le > 0xffff {
                    le.swap_bytes()
                } else {
                    le
                }
            };
            if !loopback_family_is_ip(family) {
                return Err(NotTcp::NotIp);
            }
            Network::Ip(&data[4..])
        }
        LINKTYPE_RAW | DLT_RAW_12 | DLT_RAW_14 | LINKTYPE_IPV4 | LINKTYPE_IPV6 => Network::Ip(data),
        other => return Err(NotTcp::UnsupportedLink(other)),
    })
}

/// The segment of `tcp` sent from `src` to `dst` (addresses without ports).
fn segment<'a>(src: IpAddr, dst: IpAddr, tcp: &TcpSlice<'a>, cut: Option<Cut>) -> Segment<'a> {
    Segment {
        src: SocketAddr::new(src, tcp.source_port()),
        dst: SocketAddr::new(dst, tcp.destination_port()),
        seq: tcp.sequence_number(),
        syn: tcp.syn(),
        ack: tcp.ack(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        payload: tcp.payload(),
        cut,
    }
}

/// Parses the packet `data` of link type `linktype` down to its TCP segment; `wire_len` is the
/// packet's length on the wire, more than `data` holds when the capture cut it short.
pub fn tcp_segment(linktype: i32, data: &[u8], wire_len: u32) -> Result<Segment<'_>, NotTcp> {
    let network = network(linktype, data)?;
    let sliced = match &network {
        Network::Ethernet(data) => SlicedPacket::from_ethernet(data),
        Network::EtherType(kind, data) => SlicedPacket::from_ether_type(*kind, data),
        Network::Ip(data) => SlicedPacket::from_ip(data),
    };
    let sliced = match sliced {
        Ok(sliced) => sliced,
        Err(_) if (data.len() as u64) < u64::from(wire_len) => {
            let captured = data.len() as u32;
            return cut_segment(&network, captured, wire_len - captured);
        }
        Err(e) => return Err(NotTcp::Malformed(e.to_string())),
    };
    let (src, dst, fragmented) = match &sliced.net {
        Some(NetSlice::Ipv4(ip)) => (
            IpAddr::V4(ip.header().source_addr()),
            IpAddr::V4(ip.header().destination_addr()),
            ip.payload().fragmented,
        ),
        Some(NetSlice::Ipv6(ip)) => (
            IpAddr::V6(ip.header().source_addr()),
            IpAddr::V6(ip.header().destination_addr()),
            ip.payload().fragmented,
        ),
        Some(NetSlice::Arp(_)) | None => return Err(NotTcp::NotIp),
    };
    match sliced.transport {
        Some(TransportSlice::Tcp(tcp)) => Ok(segment(src, dst, &tcp, None)),
        _ if fragmented => Err(NotTcp::Fragment),
        _ => Err(NotTcp::NotTcp),
    }
}

/// The segment of a packet the capture cut to `captured` bytes, `lost` bytes short of its length
/// on the wire, read with lax length checks: its payload as far as captured, and the bytes missing
/// after it by the IP length fields (by `lost` when they are unusable, e.g. 0 under segmentation
/// offload; never more than `lost`).
fn cut_segment<'a>(network: &Network<'a>, captured: u32, lost: u32) -> Result<Segment<'a>, NotTcp> {
    let malformed = |e: &dyn std::fmt::Display| NotTcp::Malformed(e.to_string());
    let sliced = match *network {
        Network::Ethernet(data) => {
            LaxSlicedPacket::from_ethernet(data).map_err(|e| malformed(&e))?
        }
        Network::EtherType(kind, data) => LaxSlicedPacket::from_ether_type(kind, data),
        Network::Ip(data) => LaxSlicedPacket::from_ip(data).map_err(|e| malformed(&e))?,
    };
    // The IP addresses, where the datagram starts, and its length by its header.
    let (src, dst, start, length, fragmented) = match &sliced.net {
        Some(LaxNetSlice::Ipv4(ip)) => (
            IpAddr::V4(ip.header().source_addr()),
            IpAddr::V4(ip.header().destination_addr()),
            ip.header().slice().as_ptr() as usize,
            usize::from(ip.header().total_len()),
            ip.payload().fragmented,
        ),
        Some(LaxNetSlice::Ipv6(ip)) => (
            IpAddr::V6(ip.header().source_addr()),
            IpAddr::V6(ip.header().destination_addr()),
            ip.header().slice().as_ptr() as usize,
            40 + usize::from(ip.header().payload_length()),
            ip.payload().fragmented,
        ),
        Some(LaxNetSlice::Arp(_)) | None => {
            return Err(match &sliced.stop_err {
                Some((e, _)) => malformed(e),
                None => NotTcp::NotIp,
            })
        }
    };
    let tcp = match sliced.transport {
        Some(TransportSlice::Tcp(tcp)) => tcp,
        _ if fragmented => return Err(NotTcp::Fragment),
        _ => {
            return Err(match &sliced.stop_err {
                Some((e, _)) => malformed(e),
                None => NotTcp::NotTcp,
            })
        }
    };
    // Bytes of the datagram before the payload (IP and TCP headers); the payload pointer is
    // inside the datagram.
    let payload = tcp.payload();
    let in_datagram = payload.as_ptr() as usize - start + payload.len();
    let by_ip = length.checked_sub(in_datagram).filter(|_| length > 0);
    let missing = by_ip.map_or(lost, |n| u32::try_from(n).unwrap_or(u32::MAX).min(lost));
    Ok(segment(src, dst, &tcp, Some(Cut { captured, missing })))
}
