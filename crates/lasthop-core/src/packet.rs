//! The packet model: the IPv4, TCP and UDP header fields that TCP and the papers' mechanisms read
//! and write, plus ids for tracing. No payload bytes are carried — only their length — so a packet
//! is a small `Copy` value that lives in an arena and moves by id.
//!
//! Wire sizes follow RFC 791 / 9293 / 768: IPv4 20 B, TCP 20 B + options padded to 4 B, UDP 8 B.
//! TCP options modelled: MSS (4 B), window scale (3 B, RFC 7323), SACK-permitted (2 B) and SACK
//! blocks (2 + 8n B, RFC 2018). Timestamps are not modelled (the papers' TCPs have none).
//!
//! A [`Packet`] is a header representation plus simulator metadata, so a mechanism sees the same
//! header type in every world ([`crate::wire`] parses real bytes into it and writes changes back):
//!
//! | field | kind | on the wire |
//! |---|---|---|
//! | `src`, `dst` | header | IPv4 source / destination, node id ↔ address by `wire::node_address` / `wire::node_id` |
//! | `sport`, `dport` | header | TCP or UDP ports |
//! | `dscp` | header | IPv4 DS field, upper 6 bits of the old TOS (RFC 2474) |
//! | `proto` | header | IPv4 protocol, 6 or 17 |
//! | `tcp` | header | the TCP header and its modelled options (default for UDP) |
//! | `payload_len` | header | IPv4 total length − IPv4, TCP/UDP header lengths |
//! | `uid`, `flow`, `pkt_seq`, `sent_at` | metadata ([`PacketMeta`]) | none: the simulator's tracing and one-way metrics |
//!
//! Header fields not in the packet (IPv4 id, TTL, DF, ECN) live in `wire::Headers`; the
//! simulator's values for them are fixed (`wire::Headers::from_packet`).

use crate::time::Time;
use std::cmp::Ordering;
use std::ops::{Add, Sub};

pub const IPV4_HEADER_BYTES: u32 = 20;
pub const TCP_HEADER_BYTES: u32 = 20;
pub const UDP_HEADER_BYTES: u32 = 8;
pub const MAX_SACK_BLOCKS: usize = 4;

pub type NodeId = u32;
pub type FlowId = u32;

/// A 32-bit TCP sequence number with modular comparison (RFC 9293 §3.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeqNum(pub u32);

impl Add<u32> for SeqNum {
    type Output = SeqNum;
    fn add(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(n))
    }
}
impl Sub<SeqNum> for SeqNum {
    type Output = i64;
    /// Signed distance `self - other`, valid while the two are less than 2^31 apart.
    fn sub(self, other: SeqNum) -> i64 {
        self.0.wrapping_sub(other.0) as i32 as i64
    }
}
impl PartialOrd for SeqNum {
    fn partial_cmp(&self, other: &SeqNum) -> Option<Ordering> {
        Some((*self - *other).cmp(&0))
    }
}
impl SeqNum {
    pub fn max(self, other: SeqNum) -> SeqNum {
        if self >= other { self } else { other }
    }
    pub fn min(self, other: SeqNum) -> SeqNum {
        if self <= other { self } else { other }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);
impl TcpFlags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    /// ECN-Echo (RFC 3168 §6.1): on a SYN, ECN wanted (with CWR); after it, "a CE mark arrived".
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced (RFC 3168 §6.1.2): the sender reduced its window after an ECE.
    pub const CWR: u8 = 0x80;
    pub fn has(self, f: u8) -> bool {
        self.0 & f != 0
    }
}

/// One SACK block: the half-open range [start, end) received out of order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SackBlock {
    pub start: SeqNum,
    pub end: SeqNum,
}

/// The TCP header fields of a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    pub seq: SeqNum,
    pub ack: SeqNum,
    pub flags: TcpFlags,
    /// The 16-bit window field as sent on the wire (scaled if window scaling is in use).
    pub window: u16,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub sack_len: u8,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
}

impl TcpHeader {
    pub fn options_len(&self) -> u32 {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.wscale.is_some() {
            n += 3;
        }
        if self.sack_permitted {
            n += 2;
        }
        if self.sack_len > 0 {
            n += 2 + 8 * self.sack_len as u32;
        }
        n.div_ceil(4) * 4
    }
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_len as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Tcp,
    Udp,
}

/// A packet in flight. `Copy` and allocation-free.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Unique per run, for tracing.
    pub uid: u64,
    pub flow: FlowId,
    /// Per-flow transmission counter (each retransmission gets a new one): the sequence used
    /// for one-way metrics (IPDV pairs consecutive values, RFC 3393).
    pub pkt_seq: u32,
    pub src: NodeId,
    pub dst: NodeId,
    pub sport: u16,
    pub dport: u16,
    pub dscp: u8,
    /// The IP header's ECN field ([`ecn`]'s codepoints).
    pub ecn: u8,
    pub proto: Protocol,
    pub tcp: TcpHeader,
    pub payload_len: u32,
    /// When the sender put the first bit on the wire: the wire time T of RFC 7679.
    pub sent_at: Time,
}

/// The codepoints of the IP header's ECN field (RFC 3168 §5).
pub mod ecn {
    pub const NOT_ECT: u8 = 0b00;
    pub const ECT1: u8 = 0b01;
    pub const ECT0: u8 = 0b10;
    /// Congestion Experienced: set by a queue instead of dropping an ECN-capable packet.
    pub const CE: u8 = 0b11;

    /// Whether a packet with this field is ECN-capable (may be marked instead of dropped).
    pub fn capable(field: u8) -> bool {
        field == ECT0 || field == ECT1
    }
}

/// The simulator-only part of a [`Packet`]: what no header carries. A world that reads packets
/// off a wire supplies it when it turns parsed headers into a `Packet` (`wire::Headers::to_packet`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketMeta {
    pub uid: u64,
    pub flow: FlowId,
    pub pkt_seq: u32,
    pub sent_at: Time,
}

impl Packet {
    /// The simulator metadata of this packet (see the module table).
    pub fn meta(&self) -> PacketMeta {
        PacketMeta { uid: self.uid, flow: self.flow, pkt_seq: self.pkt_seq, sent_at: self.sent_at }
    }
    pub fn header_len(&self) -> u32 {
        IPV4_HEADER_BYTES
            + match self.proto {
                Protocol::Tcp => TCP_HEADER_BYTES + self.tcp.options_len(),
                Protocol::Udp => UDP_HEADER_BYTES,
            }
    }
    /// Bytes on the wire at the IP layer (what a link serializes).
    pub fn wire_len(&self) -> u32 {
        self.header_len() + self.payload_len
    }
    /// Sequence space consumed: payload plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload_len + self.tcp.flags.has(TcpFlags::SYN) as u32 + self.tcp.flags.has(TcpFlags::FIN) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(proto: Protocol, payload: u32) -> Packet {
        Packet {
            uid: 0,
            flow: 0,
            pkt_seq: 0,
            src: 0,
            dst: 1,
            sport: 1,
            dport: 2,
            dscp: 0,
            ecn: 0,
            proto,
            tcp: TcpHeader::default(),
            payload_len: payload,
            sent_at: Time::ZERO,
        }
    }

    #[test]
    fn header_bytes_follow_the_rfcs() {
        assert_eq!(pkt(Protocol::Udp, 1472).wire_len(), 1500); // 20 + 8 + 1472
        assert_eq!(pkt(Protocol::Tcp, 1460).wire_len(), 1500); // 20 + 20 + 1460
        let mut syn = pkt(Protocol::Tcp, 0);
        syn.tcp.mss = Some(1460);
        syn.tcp.wscale = Some(7);
        syn.tcp.sack_permitted = true;
        // 4 + 3 + 2 = 9 option bytes, padded to 12: a 32-byte TCP header.
        assert_eq!(syn.header_len(), 20 + 32);
        let mut sack = pkt(Protocol::Tcp, 0);
        sack.tcp.sack_len = 3;
        // 2 + 24 = 26, padded to 28.
        assert_eq!(sack.tcp.options_len(), 28);
    }

    #[test]
    fn sequence_numbers_compare_across_wraparound() {
        let a = SeqNum(u32::MAX - 10);
        let b = a + 20;
        assert_eq!(b.0, 9);
        assert!(a < b);
        assert_eq!(b - a, 20);
        assert_eq!(a - b, -20);
    }
}
