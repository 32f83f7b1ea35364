//! From a captured packet to its TCP segment: the link-layer header by LINKTYPE, then IPv4/IPv6
//! (extension headers included) and TCP through `etherparse`, without copying.
//!
//! Link types: Ethernet (1, VLAN tags included), Linux cooked SLL (113) and SLL2 (276), BSD
//! loopback NULL (0, address family in either byte order) and LOOP (108, network order), raw IP
//! (101, and the DLT values 12 and 14 some systems write), IPv4 (228) and IPv6 (229). TCP checksums
//! are not verified: captures on the sending host carry unfinished checksums (offload).

use std::net::{IpAddr, SocketAddr};

use etherparse::{EtherType, NetSlice, SlicedPacket, TransportSlice};

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
    /// TCP payload.
    pub payload: &'a [u8],
}

/// Why a packet carries no TCP segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotTcp {
    /// A link type this reader does not know (its LINKTYPE number).
    UnsupportedLink(i32),
    /// Not IP (ARP, other EtherTypes or address families).
    NotIp,
    /// IP, but not TCP (UDP, ICMP…), or a fragment of a fragmented datagram.
    NotTcp,
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

/// Parses the packet `data` of link type `linktype` down to its TCP segment.
pub fn tcp_segment(linktype: i32, data: &[u8]) -> Result<Segment<'_>, NotTcp> {
    let sliced = match linktype {
        LINKTYPE_ETHERNET => SlicedPacket::from_ethernet(data),
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
            SlicedPacket::from_ether_type(EtherType(protocol), rest)
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
            SlicedPacket::from_ip(&data[4..])
        }
        LINKTYPE_RAW | DLT_RAW_12 | DLT_RAW_14 | LINKTYPE_IPV4 | LINKTYPE_IPV6 => {
            SlicedPacket::from_ip(data)
        }
        other => return Err(NotTcp::UnsupportedLink(other)),
    }
    .map_err(|e| NotTcp::Malformed(e.to_string()))?;
    let (src, dst) = match &sliced.net {
        Some(NetSlice::Ipv4(ip)) => (
            IpAddr::V4(ip.header().source_addr()),
            IpAddr::V4(ip.header().destination_addr()),
        ),
        Some(NetSlice::Ipv6(ip)) => (
            IpAddr::V6(ip.header().source_addr()),
            IpAddr::V6(ip.header().destination_addr()),
        ),
        Some(NetSlice::Arp(_)) | None => return Err(NotTcp::NotIp),
    };
    let Some(TransportSlice::Tcp(tcp)) = sliced.transport else {
        return Err(NotTcp::NotTcp);
    };
    Ok(Segment {
        src: SocketAddr::new(src, tcp.source_port()),
        dst: SocketAddr::new(dst, tcp.destination_port()),
        seq: tcp.sequence_number(),
        syn: tcp.syn(),
        ack: tcp.ack(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        payload: tcp.payload(),
    })
}
