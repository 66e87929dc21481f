//! Emit IPv4 + TCP/UDP headers as bytes (RFC 791, RFC 9293 §3.1, RFC 768) with their checksums
//! (RFC 1071; the TCP/UDP sum covers the pseudo-header, the header and the payload).
//!
//! Two entry points: [`emit`] writes the headers of a whole packet in front of a payload already in
//! the buffer (a real packet, for the emulator); [`write_headers`] appends only the headers of a
//! simulator packet whose payload is not modelled — it is taken as zeros, which add nothing to a
//! checksum, only length (a snap-length pcap record). Both go through one function, so a pcap
//! shows exactly the headers the emulator would send.
//!
//! Layout choices (kept byte-identical to the pcap output that predates etherparse): IHL 5, no IPv4
//! options; TCP options in the order MSS, SACK-permitted, NOP + window scale, NOP NOP + SACK
//! blocks, then zero padding (end of option list) to a 4-byte boundary; urgent pointer 0; a UDP
//! checksum that computes to 0 is sent as 0xffff (RFC 768: 0 means "no checksum").

use super::headers::{emitted_options_len, Headers};
use crate::packet::{Packet, Protocol, TcpFlags};
use etherparse::checksum::Sum16BitWords;
use etherparse::{IpDscp, IpEcn, IpFragOffset, IpNumber, Ipv4Header, Ipv4Options, TcpOptionElement, TcpOptionWriteError, UdpHeader};

/// Why headers cannot be emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error("TCP options need {needed} bytes, a TCP header has room for 40")]
    OptionsTooLong { needed: usize },
    #[error("packet of {total} bytes exceeds the IPv4 maximum of 65535")]
    TooLong { total: usize },
    #[error("buffer of {got} bytes cannot hold the {needed}-byte packet")]
    BufferTooSmall { needed: usize, got: usize },
    #[error("{field} = {value} is out of range for its header field")]
    OutOfRange { field: &'static str, value: u32 },
}

/// Most header bytes [`emit`] writes: IPv4 20 + TCP 60.
pub const MAX_HEADER_LEN: usize = 80;

/// Writes the headers of `h` into `buf[..h.header_len()]`, in front of the payload, which must
/// already be in `buf[h.header_len()..h.total_len()]` (the checksum covers it). Returns the packet
/// length `h.total_len()`; bytes past it are left alone.
pub fn emit(h: &Headers, buf: &mut [u8]) -> Result<usize, EmitError> {
    let (header_len, total) = (h.header_len(), h.total_len());
    if buf.len() < total {
        return Err(EmitError::BufferTooSmall { needed: total, got: buf.len() });
    }
    let (head, rest) = buf.split_at_mut(header_len);
    emit_headers(h, Some(&rest[..h.payload_len as usize]), head)?;
    Ok(total)
}

/// Appends the IPv4 + TCP/UDP headers of the simulator packet `p` to `out` and returns the full
/// packet length on the wire (headers + payload). `ip_id` fills the IPv4 identification field.
/// The payload is not modelled: it counts in the lengths as zeros and adds nothing to checksums.
pub fn write_headers(p: &Packet, ip_id: u16, out: &mut Vec<u8>) -> usize {
    let h = Headers::from_packet(p, ip_id);
    let mut head = [0u8; MAX_HEADER_LEN];
    // The simulator's TCP sends at most four SACK blocks and never SACK blocks beside SYN
    // options, so its options fit in 40 bytes; a packet that does not is a broken invariant.
    let n = emit_headers(&h, None, &mut head).expect("a simulator packet's headers fit in an IPv4/TCP header");
    out.extend_from_slice(&head[..n]);
    h.total_len()
}

/// Writes the headers into `head` (at least `h.header_len()` bytes) and returns their length.
/// `payload` is the payload if present, `None` for `h.payload_len` zero bytes not captured.
fn emit_headers(h: &Headers, payload: Option<&[u8]>, head: &mut [u8]) -> Result<usize, EmitError> {
    let header_len = h.header_len();
    let total = h.total_len();
    if total > u16::MAX as usize {
        return Err(EmitError::TooLong { total });
    }
    // Every check before the first byte is written: a failed emit leaves the buffer as it was.
    let out_of_range = |field, value: u8| EmitError::OutOfRange { field, value: value as u32 };
    let dscp = IpDscp::try_new(h.ip.dscp).map_err(|_| out_of_range("dscp", h.ip.dscp))?;
    let ecn = IpEcn::try_new(h.ip.ecn).map_err(|_| out_of_range("ecn", h.ip.ecn))?;
    let tcp = match h.proto {
        Protocol::Tcp => Some(tcp_header(h)?),
        Protocol::Udp => None,
    };
    let l4_len = (total - 20) as u16;
    let pseudo = |protocol: IpNumber| {
        Sum16BitWords::new().add_4bytes(h.ip.src).add_4bytes(h.ip.dst).add_2bytes([0, protocol.0]).add_2bytes(l4_len.to_be_bytes())
    };
    let payload = payload.unwrap_or(&[]);
    // etherparse sums in native byte order: `to_ne_bytes` of its result is the field on the wire
    // (what its own headers store as `sum.to_be()` and write with `to_be_bytes`).
    let protocol = match tcp {
        Some(t) => {
            head[20..header_len].copy_from_slice(&t.to_bytes());
            debug_assert_eq!(t.header_len(), header_len - 20, "emitted_options_len follows tcp_header");
            let sum = pseudo(IpNumber::TCP).add_slice(&head[20..header_len]).add_slice(payload);
            head[36..38].copy_from_slice(&sum.ones_complement().to_ne_bytes());
            IpNumber::TCP
        }
        None => {
            let u = UdpHeader { source_port: h.sport, destination_port: h.dport, length: l4_len, checksum: 0 };
            head[20..28].copy_from_slice(&u.to_bytes());
            let sum = pseudo(IpNumber::UDP).add_slice(&head[20..28]).add_slice(payload);
            head[26..28].copy_from_slice(&sum.to_ones_complement_with_no_zero().to_ne_bytes());
            IpNumber::UDP
        }
    };
    let mut ip = Ipv4Header {
        dscp,
        ecn,
        total_len: total as u16,
        identification: h.ip.ident,
        dont_fragment: h.ip.dont_fragment,
        more_fragments: false,
        fragment_offset: IpFragOffset::ZERO,
        time_to_live: h.ip.ttl,
        protocol,
        header_checksum: 0,
        source: h.ip.src,
        destination: h.ip.dst,
        options: Ipv4Options::default(),
    };
    ip.header_checksum = ip.calc_header_checksum();
    head[..20].copy_from_slice(&ip.to_bytes());
    Ok(header_len)
}

/// The etherparse TCP header of `h`, checksum zero.
fn tcp_header(h: &Headers) -> Result<etherparse::TcpHeader, EmitError> {
    let tcp = &h.tcp;
    if tcp.sack_len as usize > tcp.sack.len() {
        return Err(EmitError::OutOfRange { field: "sack_len", value: tcp.sack_len as u32 });
    }
    let mut t = etherparse::TcpHeader::new(h.sport, h.dport, tcp.seq.0, tcp.window);
    t.acknowledgment_number = tcp.ack.0;
    let f = tcp.flags;
    (t.fin, t.syn, t.rst, t.psh, t.ack) = (f.has(TcpFlags::FIN), f.has(TcpFlags::SYN), f.has(TcpFlags::RST), f.has(TcpFlags::PSH), f.has(TcpFlags::ACK));
    (t.urg, t.ece, t.cwr) = (f.has(0x20), f.has(0x40), f.has(0x80));
    const NOOP: TcpOptionElement = TcpOptionElement::Noop;
    let mut opts = [NOOP; 7];
    let mut n = 0;
    let mut push = |e| {
        opts[n] = e;
        n += 1;
    };
    if let Some(mss) = tcp.mss {
        push(TcpOptionElement::MaximumSegmentSize(mss));
    }
    if tcp.sack_permitted {
        push(TcpOptionElement::SelectiveAcknowledgementPermitted);
    }
    if let Some(ws) = tcp.wscale {
        push(NOOP);
        push(TcpOptionElement::WindowScale(ws));
    }
    if let [first, rest @ ..] = tcp.sack_blocks() {
        let mut more = [None; 3];
        for (m, b) in more.iter_mut().zip(rest) {
            *m = Some((b.start.0, b.end.0));
        }
        push(NOOP);
        push(NOOP);
        push(TcpOptionElement::SelectiveAcknowledgement((first.start.0, first.end.0), more));
    }
    t.set_options(&opts[..n]).map_err(|TcpOptionWriteError::NotEnoughSpace(_)| EmitError::OptionsTooLong { needed: emitted_options_len(tcp) })?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{SeqNum, TcpHeader};
    use crate::wire::checksum;
    use crate::Time;

    fn syn() -> Packet {
        Packet {
            uid: 1,
            flow: 0,
            pkt_seq: 0,
            src: 0,
            dst: 1,
            sport: 1000,
            dport: 80,
            dscp: 46,
            ecn: 0,
            proto: Protocol::Tcp,
            tcp: TcpHeader { seq: SeqNum(7), ack: SeqNum(9), flags: TcpFlags(TcpFlags::SYN), window: 1000, mss: Some(1460), wscale: Some(7), sack_permitted: true, ..TcpHeader::default() },
            payload_len: 0,
            sent_at: Time::ZERO,
        }
    }

    #[test]
    fn headers_have_the_model_lengths_and_valid_checksums() {
        let mut p = syn();
        let mut buf = Vec::new();
        let len = write_headers(&p, 1, &mut buf);
        assert_eq!(len as u32, p.wire_len(), "the bytes agree with the model's header sizes");
        assert_eq!(buf.len(), 20 + 32);
        assert_eq!(checksum(&buf[..20]), 0, "a valid IPv4 header sums to zero");
        assert_eq!(buf[1], 46 << 2);
        p.proto = Protocol::Udp;
        p.payload_len = 100;
        let mut u = Vec::new();
        assert_eq!(write_headers(&p, 2, &mut u), 128);
        // The UDP checksum by hand (RFC 768): pseudo-header 10.0.0.1, 10.0.0.2, protocol 17,
        // length 108, then the 8 header bytes; the 100 zero payload bytes add nothing.
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 2, 0, 17, 0, 108];
        pseudo.extend_from_slice(&u[20..]);
        assert_eq!(checksum(&pseudo), 0, "pseudo-header + header sum to 0xffff");
    }

    #[test]
    fn a_syn_has_the_byte_layout_of_the_pcap_writer() {
        // Hand-assembled from RFC 9293 §3.1 and the option order of this module: ports 1000 → 80,
        // seq 7, ack 9, data offset 8 words, SYN, window 1000, then MSS 1460, SACK-permitted,
        // NOP + window scale 7, two bytes of end-of-options padding.
        let mut buf = Vec::new();
        write_headers(&syn(), 1, &mut buf);
        let tcp = &buf[20..];
        assert_eq!(&tcp[..4], &[0x03, 0xe8, 0x00, 0x50]);
        assert_eq!(&tcp[4..12], &[0, 0, 0, 7, 0, 0, 0, 9]);
        assert_eq!(&tcp[12..16], &[0x80, 0x02, 0x03, 0xe8]);
        assert_eq!(&tcp[18..20], &[0, 0], "urgent pointer");
        assert_eq!(&tcp[20..], &[2, 4, 0x05, 0xb4, 4, 2, 1, 3, 3, 7, 0, 0]);
        // IPv4: version 4 / IHL 5, DSCP 46 (EF), length 52, id 1, DF, TTL 64, TCP, 10.0.0.1 → 10.0.0.2.
        assert_eq!(&buf[..10], &[0x45, 0xb8, 0, 52, 0, 1, 0x40, 0, 64, 6]);
        assert_eq!(&buf[12..20], &[10, 0, 0, 1, 10, 0, 0, 2]);
    }

    #[test]
    fn emit_checks_room_range_and_size() {
        let mut h = Headers::from_packet(&syn(), 0);
        let mut small = [0u8; 40];
        assert_eq!(emit(&h, &mut small), Err(EmitError::BufferTooSmall { needed: 52, got: 40 }));
        let mut buf = [0u8; 100];
        h.ip.dscp = 64;
        assert_eq!(emit(&h, &mut buf), Err(EmitError::OutOfRange { field: "dscp", value: 64 }));
        assert_eq!(buf, [0u8; 100], "a failed emit writes nothing");
        h.ip.dscp = 0;
        h.ip.ecn = 4;
        assert_eq!(emit(&h, &mut buf), Err(EmitError::OutOfRange { field: "ecn", value: 4 }));
        h.ip.ecn = 0;
        // SYN options (12 B) + four SACK blocks (36 B) = 48 B > 40.
        h.tcp.sack_len = 4;
        assert_eq!(emit(&h, &mut buf), Err(EmitError::OptionsTooLong { needed: 48 }));
        assert_eq!(buf, [0u8; 100], "a failed emit writes nothing");
        h.tcp.sack_len = 5;
        assert_eq!(emit(&h, &mut buf), Err(EmitError::OutOfRange { field: "sack_len", value: 5 }));
        h.tcp.sack_len = 0;
        // 20 + 32 + 65 484 = 65 536: one byte over.
        h.payload_len = 65_484;
        let mut big = vec![0u8; 65_536];
        assert_eq!(emit(&h, &mut big), Err(EmitError::TooLong { total: 65_536 }));
        h.payload_len = 65_483;
        assert_eq!(emit(&h, &mut big), Ok(65_535), "the largest IPv4 packet");
    }
}
