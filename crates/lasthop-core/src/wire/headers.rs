//! The header representation between bytes and the packet model: every IPv4/TCP/UDP field that
//! lasthop parses or emits, as plain values. [`Headers`] mirrors the header half of
//! [`Packet`] (same `proto`, ports, [`TcpHeader`], `payload_len`) and adds the IPv4 fields the
//! simulator never varies ([`Ipv4Fields`]: addresses instead of node ids, id, TTL, DF, ECN).
//!
//! Turning headers into a `Packet` needs what no header carries — the flow, the uid, the
//! transmission counter, the send time — so the caller passes it as a [`PacketMeta`]. Node ids and
//! addresses map one to one through [`node_address`] / [`node_id`]; an emulator addresses its
//! namespaces by that plan, and an address outside it is an error, not a guess.

use super::{node_address, node_id, WireError};
use crate::packet::{Packet, PacketMeta, Protocol, TcpHeader, IPV4_HEADER_BYTES, TCP_HEADER_BYTES, UDP_HEADER_BYTES};

/// The TTL the simulator's packets carry (Linux's default, `net.ipv4.ip_default_ttl`).
pub const DEFAULT_TTL: u8 = 64;

/// The IPv4 header fields (RFC 791 §3.1) other than length, protocol and checksum, which follow
/// from the rest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ipv4Fields {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// Differentiated Services code point (RFC 2474): the upper 6 bits of the old TOS byte, 0..=63.
    pub dscp: u8,
    /// Explicit Congestion Notification (RFC 3168): the lower 2 bits, 0..=3.
    pub ecn: u8,
    /// Identification.
    pub ident: u16,
    pub ttl: u8,
    pub dont_fragment: bool,
}

/// The headers of one IPv4 packet carrying TCP or UDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headers {
    pub ip: Ipv4Fields,
    pub proto: Protocol,
    pub sport: u16,
    pub dport: u16,
    /// The TCP header; `TcpHeader::default()` for UDP.
    pub tcp: TcpHeader,
    /// Transport payload bytes: IPv4 total length minus the IPv4 and TCP/UDP header lengths.
    pub payload_len: u32,
}

/// Bytes of TCP options as [`emit`](super::emit()) lays them out: MSS (4), SACK-permitted (2),
/// NOP + window scale (4), NOP NOP + SACK (4 + 8n), padded to a multiple of 4. This can exceed
/// [`TcpHeader::options_len`], which packs the options without NOPs (e.g. window scale + SACK-permitted:
/// 5 → 8 here and there, but SACK-permitted + one SACK block: 12 there, 16 here); the simulator
/// never sends such combinations.
pub(crate) fn emitted_options_len(tcp: &TcpHeader) -> usize {
    let mut n = 0;
    if tcp.mss.is_some() {
        n += 4;
    }
    if tcp.sack_permitted {
        n += 2;
    }
    if tcp.wscale.is_some() {
        n += 4;
    }
    if tcp.sack_len > 0 {
        n += 4 + 8 * tcp.sack_len as usize;
    }
    n.div_ceil(4) * 4
}

impl Headers {
    /// The headers the simulator's packet `p` has on the wire: addresses from node ids, IPv4 id
    /// `ident` (the pcap writer passes the uid), TTL 64, DF set, its ECN field. The DSCP is masked to its
    /// 6 bits, as the pcap writer always did.
    pub fn from_packet(p: &Packet, ident: u16) -> Headers {
        Headers {
            ip: Ipv4Fields {
                src: node_address(p.src),
                dst: node_address(p.dst),
                dscp: p.dscp & 0x3f,
                ecn: p.ecn & 0x3,
                ident,
                ttl: DEFAULT_TTL,
                dont_fragment: true,
            },
            proto: p.proto,
            sport: p.sport,
            dport: p.dport,
            tcp: match p.proto {
                Protocol::Tcp => p.tcp,
                Protocol::Udp => TcpHeader::default(),
            },
            payload_len: p.payload_len,
        }
    }

    /// The simulator packet with these headers and the metadata `meta`. Fails if an address is not
    /// a node address ([`node_id`]).
    pub fn to_packet(&self, meta: PacketMeta) -> Result<Packet, WireError> {
        let node = |addr| node_id(addr).ok_or(WireError::UnknownAddress { addr });
        Ok(Packet {
            uid: meta.uid,
            flow: meta.flow,
            pkt_seq: meta.pkt_seq,
            src: node(self.ip.src)?,
            dst: node(self.ip.dst)?,
            sport: self.sport,
            dport: self.dport,
            dscp: self.ip.dscp,
            ecn: self.ip.ecn,
            proto: self.proto,
            tcp: self.tcp,
            payload_len: self.payload_len,
            sent_at: meta.sent_at,
        })
    }

    /// Bytes of the IPv4 and TCP/UDP headers as emitted.
    pub fn header_len(&self) -> usize {
        IPV4_HEADER_BYTES as usize
            + match self.proto {
                Protocol::Tcp => TCP_HEADER_BYTES as usize + emitted_options_len(&self.tcp),
                Protocol::Udp => UDP_HEADER_BYTES as usize,
            }
    }

    /// Bytes of the whole packet as emitted (the IPv4 total length).
    pub fn total_len(&self) -> usize {
        self.header_len() + self.payload_len as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{SackBlock, SeqNum, TcpFlags};
    use crate::Time;

    fn packet(proto: Protocol) -> Packet {
        Packet {
            uid: 77,
            flow: 3,
            pkt_seq: 9,
            src: 4,
            dst: 70_000,
            sport: 5001,
            dport: 80,
            dscp: 46,
            ecn: 0,
            proto,
            tcp: TcpHeader { seq: SeqNum(1), ack: SeqNum(2), flags: TcpFlags(TcpFlags::ACK), window: 512, ..TcpHeader::default() },
            payload_len: 1000,
            sent_at: Time(123_456),
        }
    }

    #[test]
    fn a_packet_survives_the_trip_through_headers() {
        let p = packet(Protocol::Tcp);
        let h = Headers::from_packet(&p, 7);
        // Node 70 000 is 10.x.y.z with x.y.z = 70 001 = 0x01_11_71.
        assert_eq!(h.ip.dst, [10, 0x01, 0x11, 0x71]);
        assert_eq!(h.to_packet(p.meta()), Ok(p));
    }

    #[test]
    fn udp_headers_carry_no_tcp_fields() {
        let p = packet(Protocol::Udp);
        let h = Headers::from_packet(&p, 0);
        assert_eq!(h.tcp, TcpHeader::default(), "a UDP packet's leftover TCP fields are not on the wire");
        assert_eq!(h.header_len(), 28);
        assert_eq!(h.total_len(), 1028);
    }

    #[test]
    fn an_address_outside_the_plan_is_an_error() {
        let mut h = Headers::from_packet(&packet(Protocol::Tcp), 0);
        h.ip.src = [192, 0, 2, 1];
        assert_eq!(h.to_packet(PacketMeta::default()), Err(WireError::UnknownAddress { addr: [192, 0, 2, 1] }));
        h.ip.src = [10, 0, 0, 0];
        assert!(h.to_packet(PacketMeta::default()).is_err(), "10.0.0.0 is no node's address (ids start at 10.0.0.1)");
    }

    #[test]
    fn emitted_option_lengths_match_the_model_for_what_tcp_sends() {
        // A SYN (MSS, SACK-permitted, window scale): 4 + 2 + 4 = 10 B on the wire, padded to 12;
        // the model counts 4 + 3 + 2 = 9, padded to 12. An ACK with n SACK blocks: 4 + 8n both ways.
        let syn = TcpHeader { mss: Some(1460), wscale: Some(7), sack_permitted: true, ..TcpHeader::default() };
        assert_eq!(emitted_options_len(&syn), 12);
        assert_eq!(emitted_options_len(&syn), syn.options_len() as usize);
        for n in 1..=4u8 {
            let mut ack = TcpHeader { sack_len: n, ..TcpHeader::default() };
            ack.sack[0] = SackBlock { start: SeqNum(1), end: SeqNum(2) };
            assert_eq!(emitted_options_len(&ack), 4 + 8 * n as usize);
            assert_eq!(emitted_options_len(&ack), ack.options_len() as usize);
        }
    }
}
