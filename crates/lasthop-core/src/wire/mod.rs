//! Real packet bytes for the header model: parse and emit IPv4 (RFC 791) carrying TCP (RFC 9293;
//! options MSS, window scale RFC 7323, SACK-permitted and SACK blocks RFC 2018) or UDP (RFC 768),
//! checksums included (RFC 1071), and rewrite a TCP window, a TCP ACK or the DSCP of a real packet
//! in place with an incremental checksum update (RFC 1624 eqn. 3). This is how one header type —
//! [`crate::packet::TcpHeader`] inside [`crate::packet::Packet`] — reaches every world: the
//! simulator builds packets directly, the pcap writer emits them, the emulator parses packets read
//! from TUN devices, lets the same sans-I/O mechanism change them and writes the changes back.
//!
//! ```text
//! bytes --parse--> Headers --to_packet(meta)--> Packet --mechanism--> Packet --apply--> bytes
//! Packet --Headers::from_packet--> Headers --emit / write_headers--> bytes
//! ```
//!
//! Map:
//! - [`headers`] [`Headers`] / [`Ipv4Fields`]: the header repr, and its link to `Packet` (node ids
//!   are IPv4 addresses through [`node_address`] / [`node_id`]; flow/uid metadata come from the caller)
//! - [`parse`](parse()) complete packets, [`parse_capture`] snap-length captures, [`verify_checksums`]
//! - [`emit`] a whole packet into a buffer, [`write_headers`] header bytes only (the pcap writer)
//! - [`rewrite`] in-place [`set_tcp_window`], [`set_tcp_ack`], [`set_dscp`], and [`apply`], which
//!   writes back what a mechanism changed in a `Packet`
//!
//! A processor on real packets (the emulator's loop, one packet read from a TUN device):
//!
//! ```
//! use lasthop_core::packet::{Packet, PacketMeta, Protocol, SeqNum, TcpFlags, TcpHeader};
//! use lasthop_core::{wire, Time};
//! # let ack = Packet { uid: 0, flow: 0, pkt_seq: 0, src: 1, dst: 0, sport: 80, dport: 40_000, dscp: 0, ecn: 0,
//! #     proto: Protocol::Tcp, payload_len: 0, sent_at: Time::ZERO,
//! #     tcp: TcpHeader { ack: SeqNum(1), flags: TcpFlags(TcpFlags::ACK), window: 65_535, ..TcpHeader::default() } };
//! # let mut bytes = vec![0u8; 40];
//! # wire::emit(&wire::Headers::from_packet(&ack, 1), &mut bytes).unwrap();
//! let meta = PacketMeta { uid: 17, flow: 0, pkt_seq: 0, sent_at: Time::ZERO }; // the world's bookkeeping
//! let mut p = wire::parse(&bytes)?.to_packet(meta)?;
//! p.tcp.window = p.tcp.window.min(8_760); // what SAP-LAW or receiver awnd control decides
//! let done = wire::apply(&p, &mut bytes)?;
//! assert!(done.window && wire::verify_checksums(&bytes).is_ok());
//! # Ok::<(), wire::WireError>(())
//! ```
//!
//! The byte work is done by `etherparse` (no std, no alloc): its header types lay out the bytes and
//! its slices validate lengths. `smoltcp::wire` (features `proto-ipv4`, `medium-ip`) was the other
//! candidate and was not taken because it keeps at most three SACK blocks (the model and RFC 2018
//! allow four; a fourth would be silently dropped), clamps a window scale above 14 on parse (a
//! processor must see the header as sent), returns one opaque `Error` for every malformed input, and
//! cannot parse a snap-length capture (an IPv4 total length beyond the captured bytes is an error).
//! etherparse keeps four SACK blocks, reports typed errors, writes options in the order given (so
//! the pcap bytes stay what they were) and needs only `arrayvec`. Its one gap — its option iterator
//! stops at an option kind it does not know — is closed in [`parse`](parse()): unknown options are
//! skipped by their length, as RFC 9293 §3.1 requires.
//!
//! Left out: IPv4 options are parsed past but never emitted (IHL 5); fragments are rejected (a
//! mechanism needs the transport header); TCP timestamps and other options the model lacks are
//! skipped by parse and not emitted (an in-place rewrite keeps them, so the emulator should prefer
//! [`apply`] to re-emitting); the urgent pointer is emitted as zero and not parsed; no IPv6.

pub mod emit;
pub mod headers;
pub mod parse;
pub mod rewrite;

#[cfg(test)]
mod tests;

pub use emit::{emit, write_headers, EmitError};
pub use headers::{Headers, Ipv4Fields, DEFAULT_TTL};
pub use parse::{parse, parse_capture, verify_checksums};
pub use rewrite::{apply, clear_tcp_push, decrement_ttl, incremental_update, set_dscp, set_ecn, set_tcp_ack, set_tcp_window, Rewritten};

use crate::packet::NodeId;

/// The IPv4 address of node `id`: 10.x.y.z with x.y.z = id + 1.
pub fn node_address(id: u32) -> [u8; 4] {
    let n = id + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The node whose [`node_address`] is `addr`, or `None` for an address outside that plan
/// (not in 10.0.0.0/8, or 10.0.0.0 itself).
pub fn node_id(addr: [u8; 4]) -> Option<NodeId> {
    let n = u32::from_be_bytes([0, addr[1], addr[2], addr[3]]);
    (addr[0] == 10 && n > 0).then(|| n - 1)
}

fn sum16(bytes: &[u8], mut acc: u32) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u32) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The Internet checksum (RFC 1071) of `bytes`: the one's complement of their one's-complement
/// sum in 16-bit words. Written here independently of etherparse, so tests can use it as the full
/// recomputation that an incremental update must match.
pub fn checksum(bytes: &[u8]) -> u16 {
    fold(sum16(bytes, 0))
}

/// Where a malformed packet went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Ipv4,
    Tcp,
    TcpOption,
    Udp,
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layer::Ipv4 => "IPv4 header",
            Layer::Tcp => "TCP header",
            Layer::TcpOption => "TCP option",
            Layer::Udp => "UDP header",
        })
    }
}

/// Why bytes are not a packet lasthop can read or rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("truncated {layer}: needs {needed} bytes, {got} present")]
    Truncated { layer: Layer, needed: usize, got: usize },
    #[error("not IPv4: version {version}")]
    NotIpv4 { version: u8 },
    #[error("IPv4 header length {ihl} words is below the minimum of 5")]
    BadHeaderLength { ihl: u8 },
    #[error("IPv4 total length {total_len} is smaller than the {header_len}-byte header")]
    BadTotalLength { total_len: u16, header_len: usize },
    #[error("IPv4 fragment (offset {offset} × 8 B, more fragments: {more}): reassembly is not modelled")]
    Fragment { offset: u16, more: bool },
    #[error("IP protocol {protocol} is neither TCP (6) nor UDP (17)")]
    UnsupportedProtocol { protocol: u8 },
    #[error("IP protocol {protocol} is not TCP (6): there is no TCP header to rewrite")]
    NotTcp { protocol: u8 },
    #[error("TCP data offset {data_offset} words is below the minimum of 5")]
    BadDataOffset { data_offset: u8 },
    #[error("TCP option kind {kind} has invalid length {len}")]
    BadTcpOption { kind: u8, len: u8 },
    #[error("UDP length {length} is outside 8..={available} (the IPv4 payload)")]
    BadUdpLength { length: u16, available: usize },
    #[error("{layer} checksum is {found:#06x}, the contents sum to {expected:#06x}")]
    BadChecksum { layer: Layer, found: u16, expected: u16 },
    #[error("address {}.{}.{}.{} is not a lasthop node address (10.0.0.0/8, see node_address)", addr[0], addr[1], addr[2], addr[3])]
    UnknownAddress { addr: [u8; 4] },
    #[error("{field} = {value} is out of range for its header field")]
    OutOfRange { field: &'static str, value: u32 },
    #[error("the packet's {field} differs from the bytes, and only the TCP window, the TCP ACK and the DSCP can be rewritten in place")]
    Unwritable { field: &'static str },
}
