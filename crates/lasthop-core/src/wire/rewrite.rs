//! In-place rewrites of a real packet: a router's TTL decrement, the TCP advertised window (what SAP-LAW at the access point
//! and receiver-side awnd control, Koga et al., do to ACKs), the TCP acknowledgment number, and the
//! DSCP (layer-2 priority mapping). Each updates the checksum incrementally, RFC 1624 eqn. 3:
//!
//! ```text
//! HC' = ~(~HC + ~m + m')      (one's-complement sums; m, m' the old and new 16-bit word)
//! ```
//!
//! Eqn. 3 rather than RFC 1141's `HC' = HC + m + ~m'` (eqn. 2), which yields 0xffff where a full
//! recomputation yields 0x0000 (RFC 1624 §3–4). Touching only the changed words keeps the cost
//! independent of the packet size and leaves options the model does not know (timestamps) as they
//! were. The window and ACK are covered by the TCP checksum only; the TOS byte by the IPv4 header
//! checksum only (it is not in the pseudo-header, RFC 9293 §3.1).
//!
//! [`apply`] is the bridge back from the packet model: a mechanism changes a [`Packet`] parsed from
//! the bytes, and `apply` writes the changes it can (window, ACK, DSCP) and refuses, leaving the
//! bytes untouched, any other header change — those would need a re-emit, which loses the options
//! the model does not represent.

use super::parse::{fragment_error, ipv4_error};
use super::{node_id, parse, Layer, WireError};
use crate::packet::{Packet, Protocol, SeqNum, TcpFlags};
use etherparse::{IpNumber, Ipv4HeaderSlice};

/// RFC 1624 eqn. 3: the checksum `hc` after a 16-bit word of the data changes from `old` to `new`.
pub fn incremental_update(hc: u16, old: u16, new: u16) -> u16 {
    let sum = (!hc) as u32 + (!old) as u32 + new as u32;
    // At most 3 × 0xffff: two end-around carries fold it into 16 bits.
    let sum = (sum & 0xffff) + (sum >> 16);
    let sum = (sum & 0xffff) + (sum >> 16);
    !(sum as u16)
}

fn word(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

/// Sets the 16-bit word at `at` to `new` and updates the checksum at `sum_at`.
fn replace_word(buf: &mut [u8], sum_at: usize, at: usize, new: u16) {
    let hc = incremental_update(word(buf, sum_at), word(buf, at), new);
    buf[at..at + 2].copy_from_slice(&new.to_be_bytes());
    buf[sum_at..sum_at + 2].copy_from_slice(&hc.to_be_bytes());
}

/// Offset of the TCP header in `buf`, after checking that there is one to rewrite.
fn tcp_at(buf: &[u8]) -> Result<usize, WireError> {
    let ip = Ipv4HeaderSlice::from_slice(buf).map_err(ipv4_error)?;
    fragment_error(&ip)?;
    if ip.protocol() != IpNumber::TCP {
        return Err(WireError::NotTcp { protocol: ip.protocol().0 });
    }
    let at = ip.slice().len();
    if buf.len() < at + 20 {
        return Err(WireError::Truncated { layer: Layer::Tcp, needed: at + 20, got: buf.len() });
    }
    Ok(at)
}

/// Sets the TCP window field (as sent: scaled if window scaling is in use) and returns the old one.
pub fn set_tcp_window(buf: &mut [u8], window: u16) -> Result<u16, WireError> {
    let at = tcp_at(buf)?;
    let old = word(buf, at + 14);
    replace_word(buf, at + 16, at + 14, window);
    Ok(old)
}

/// Clears the TCP PSH flag and returns whether it was set (the data offset and flags share one
/// 16-bit word, bytes 12-13 of the header).
pub fn clear_tcp_push(buf: &mut [u8]) -> Result<bool, WireError> {
    let at = tcp_at(buf)?;
    let flags = word(buf, at + 12);
    let psh = TcpFlags::PSH as u16;
    if flags & psh == 0 {
        return Ok(false);
    }
    replace_word(buf, at + 16, at + 12, flags & !psh);
    Ok(true)
}

/// Sets the TCP acknowledgment number and returns the old one.
pub fn set_tcp_ack(buf: &mut [u8], ack: SeqNum) -> Result<SeqNum, WireError> {
    let at = tcp_at(buf)?;
    let old = SeqNum(u32::from_be_bytes([buf[at + 8], buf[at + 9], buf[at + 10], buf[at + 11]]));
    let new = ack.0.to_be_bytes();
    replace_word(buf, at + 16, at + 8, u16::from_be_bytes([new[0], new[1]]));
    replace_word(buf, at + 16, at + 10, u16::from_be_bytes([new[2], new[3]]));
    Ok(old)
}

/// Sets the DSCP (the upper 6 bits of the TOS byte; ECN bits kept) of any IPv4 packet and returns
/// the old one.
pub fn set_dscp(buf: &mut [u8], dscp: u8) -> Result<u8, WireError> {
    if dscp > 63 {
        return Err(WireError::OutOfRange { field: "dscp", value: dscp as u32 });
    }
    Ipv4HeaderSlice::from_slice(buf).map_err(ipv4_error)?;
    let old = buf[1] >> 2;
    // Bytes 0-1 are one 16-bit word: version/IHL and TOS.
    replace_word(buf, 10, 0, u16::from_be_bytes([buf[0], dscp << 2 | (buf[1] & 0x3)]));
    Ok(old)
}

/// Sets the ECN field (the TOS byte's low 2 bits, RFC 3168 §5) and returns the old one: a
/// queue's Congestion Experienced mark on a real packet.
pub fn set_ecn(buf: &mut [u8], ecn: u8) -> Result<u8, WireError> {
    if ecn > 3 {
        return Err(WireError::OutOfRange { field: "ecn", value: ecn as u32 });
    }
    Ipv4HeaderSlice::from_slice(buf).map_err(ipv4_error)?;
    let old = buf[1] & 0x3;
    replace_word(buf, 10, 0, u16::from_be_bytes([buf[0], (buf[1] & 0xfc) | ecn]));
    Ok(old)
}

/// A router's forwarding step (RFC 1812 §5.3.1): the TTL one lower and the header checksum
/// updated; `Ok(false)`, the bytes untouched, when the TTL is 1 or 0: the packet is discarded
/// there (no ICMP Time Exceeded is sent back).
pub fn decrement_ttl(buf: &mut [u8]) -> Result<bool, WireError> {
    Ipv4HeaderSlice::from_slice(buf).map_err(ipv4_error)?;
    let ttl = buf[8];
    if ttl <= 1 {
        return Ok(false);
    }
    // Bytes 8-9 are one 16-bit word: TTL and protocol.
    replace_word(buf, 10, 8, u16::from_be_bytes([ttl - 1, buf[9]]));
    Ok(true)
}

/// Which header fields [`apply`] rewrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    pub window: bool,
    pub ack: bool,
    pub dscp: bool,
}

impl Rewritten {
    pub fn any(self) -> bool {
        self.window || self.ack || self.dscp
    }
}

/// Writes back into the complete packet `buf` what a mechanism changed in `p`, the packet model of
/// those bytes (`parse` + `Headers::to_packet`): the TCP window, the TCP ACK and the DSCP, each with
/// an incremental checksum update. Any other header field of `p` that differs from the bytes is an
/// [`WireError::Unwritable`] error, and then nothing is written. Simulator metadata is not compared.
pub fn apply(p: &Packet, buf: &mut [u8]) -> Result<Rewritten, WireError> {
    let h = parse(buf)?;
    let same = |field, equal: bool| if equal { Ok(()) } else { Err(WireError::Unwritable { field }) };
    same("src", node_id(h.ip.src) == Some(p.src))?;
    same("dst", node_id(h.ip.dst) == Some(p.dst))?;
    same("proto", h.proto == p.proto)?;
    same("sport", h.sport == p.sport)?;
    same("dport", h.dport == p.dport)?;
    same("payload_len", h.payload_len == p.payload_len)?;
    if p.dscp > 63 {
        return Err(WireError::OutOfRange { field: "dscp", value: p.dscp as u32 });
    }
    let tcp = p.proto == Protocol::Tcp;
    if tcp {
        let (a, b) = (&h.tcp, &p.tcp);
        same("tcp.seq", a.seq == b.seq)?;
        same("tcp.flags", a.flags == b.flags)?;
        same("tcp.mss", a.mss == b.mss)?;
        same("tcp.wscale", a.wscale == b.wscale)?;
        same("tcp.sack_permitted", a.sack_permitted == b.sack_permitted)?;
        same("tcp.sack", a.sack_len == b.sack_len && a.sack_blocks() == b.sack_blocks())?;
    }
    let mut done = Rewritten::default();
    if h.ip.dscp != p.dscp {
        set_dscp(buf, p.dscp)?;
        done.dscp = true;
    }
    if tcp && h.tcp.window != p.tcp.window {
        set_tcp_window(buf, p.tcp.window)?;
        done.window = true;
    }
    if tcp && h.tcp.ack != p.tcp.ack {
        set_tcp_ack(buf, p.tcp.ack)?;
        done.ack = true;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{PacketMeta, TcpFlags, TcpHeader};
    use crate::wire::{checksum, emit, verify_checksums, Headers};
    use crate::Time;

    #[test]
    fn rfc1624_section4_example() {
        // RFC 1624 §4: header checksum HC = 0xDD2F over data whose one's-complement sum is
        // C = ~HC = 0x22D0; a field m = 0x5555 changes to m' = 0x3285. Eqn. 3 gives
        // ~(0x22D0 + 0xAAAA + 0x3285) = ~0xFFFF = 0x0000, where eqn. 2 (RFC 1141) gives 0xFFFF.
        assert_eq!(incremental_update(0xdd2f, 0x5555, 0x3285), 0x0000);
        let eqn2 = {
            let s = 0xdd2fu32 + 0x5555 + (!0x3285u16) as u32;
            ((s & 0xffff) + (s >> 16)) as u16
        };
        assert_eq!(eqn2, 0xffff, "RFC 1141's update lands on the other zero");
        // Data with that sum: 0x5555 + 0xCD7A = 0x122CF → 0x22CF + 1 = 0x22D0. The full RFC 1071
        // recomputation before and after the change gives the same two checksums.
        assert_eq!(checksum(&[0x55, 0x55, 0xcd, 0x7a]), 0xdd2f);
        assert_eq!(checksum(&[0x32, 0x85, 0xcd, 0x7a]), 0x0000);
    }

    fn ack_packet() -> Packet {
        Packet {
            uid: 5,
            flow: 1,
            pkt_seq: 2,
            src: 1,
            dst: 0,
            sport: 80,
            dport: 1000,
            dscp: 0,
            ecn: 0,
            proto: Protocol::Tcp,
            tcp: TcpHeader { seq: SeqNum(100), ack: SeqNum(4_000_000_000), flags: TcpFlags(TcpFlags::ACK), window: 65_535, ..TcpHeader::default() },
            payload_len: 0,
            sent_at: Time(1),
        }
    }

    fn bytes_of(p: &Packet) -> Vec<u8> {
        let h = Headers::from_packet(p, 9);
        let mut buf = vec![0u8; h.total_len()];
        emit(&h, &mut buf).unwrap();
        buf
    }

    #[test]
    fn apply_writes_back_what_a_mechanism_changed() {
        let p = ack_packet();
        let mut buf = bytes_of(&p);
        let mut q = crate::wire::parse(&buf).unwrap().to_packet(p.meta()).unwrap();
        assert_eq!(q, p);
        assert_eq!(apply(&q, &mut buf), Ok(Rewritten::default()), "an unchanged packet leaves the bytes alone");
        // SAP-LAW lowers the window, a Snoop-like agent rewrites the ACK, a priority map the DSCP.
        q.tcp.window = 5_840;
        q.tcp.ack = SeqNum(12);
        q.dscp = 46;
        assert_eq!(apply(&q, &mut buf), Ok(Rewritten { window: true, ack: true, dscp: true }));
        assert_eq!(verify_checksums(&buf), Ok(()));
        assert_eq!(buf, bytes_of(&q), "the rewrite equals emitting the changed packet afresh");
        assert_eq!(crate::wire::parse(&buf).unwrap().to_packet(PacketMeta::default()).unwrap().tcp, q.tcp);
    }

    #[test]
    fn apply_refuses_other_changes_and_writes_nothing() {
        let p = ack_packet();
        let mut buf = bytes_of(&p);
        let before = buf.clone();
        let mut q = p;
        q.tcp.window = 1;
        q.tcp.seq = SeqNum(101);
        assert_eq!(apply(&q, &mut buf), Err(WireError::Unwritable { field: "tcp.seq" }));
        assert_eq!(buf, before, "a refused apply leaves every byte as it was");
        let mut q = p;
        q.dst = 7;
        assert_eq!(apply(&q, &mut buf), Err(WireError::Unwritable { field: "dst" }));
        let mut q = p;
        q.dscp = 64;
        assert_eq!(apply(&q, &mut buf), Err(WireError::OutOfRange { field: "dscp", value: 64 }));
        assert_eq!(buf, before);
    }

    #[test]
    fn tcp_rewrites_refuse_udp_and_short_buffers() {
        let mut p = ack_packet();
        p.proto = Protocol::Udp;
        let mut buf = bytes_of(&p);
        assert_eq!(set_tcp_window(&mut buf, 1), Err(WireError::NotTcp { protocol: 17 }));
        assert_eq!(set_dscp(&mut buf, 10), Ok(0));
        assert_eq!(verify_checksums(&buf), Ok(()), "the DSCP is not in the UDP pseudo-header");
        let mut tcp = bytes_of(&ack_packet());
        assert_eq!(set_tcp_ack(&mut tcp[..39], SeqNum(1)), Err(WireError::Truncated { layer: Layer::Tcp, needed: 40, got: 39 }));
    }
}
