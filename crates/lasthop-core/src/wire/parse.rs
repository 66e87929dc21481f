//! Parse IPv4 + TCP/UDP bytes into [`Headers`] (RFC 791 §3.1, RFC 9293 §3.1–3.2, RFC 768).
//!
//! [`parse`] takes a complete packet, as read from a TUN device: the IPv4 total length must fit in
//! the bytes (bytes past it, e.g. link padding, are ignored). [`parse_capture`] takes a snap-length
//! capture such as lasthop's pcap records, where the payload may be missing: the lengths come from
//! the IPv4 total length, and only the headers must be present. Neither verifies checksums — a
//! processor forwards what it is given — [`verify_checksums`] does, with etherparse's calculators.
//!
//! Every malformed input is a [`WireError`], never a panic: etherparse validates the IPv4 and TCP
//! header lengths, this module the lengths between layers and each TCP option. Options the model
//! lacks (timestamps, and kinds etherparse does not know) are skipped by their length (RFC 9293
//! §3.1: an option not implemented must be ignored); a repeated option keeps its last value.

use super::{Headers, Ipv4Fields, Layer, WireError};
use crate::packet::{Protocol, SackBlock, SeqNum, TcpFlags, TcpHeader, MAX_SACK_BLOCKS};
use etherparse::err::{ipv4, tcp, LenError};
use etherparse::{IpNumber, Ipv4HeaderSlice, TcpOptionElement, TcpOptionReadError, TcpOptionsIterator, TcpSlice, UdpHeader, UdpHeaderSlice};

/// The headers of the complete IPv4 packet at the start of `bytes`.
pub fn parse(bytes: &[u8]) -> Result<Headers, WireError> {
    parse_as(bytes, true)
}

/// The headers of a capture that may end before the payload does (a pcap record with a snap
/// length); `payload_len` still comes from the IPv4 total length.
pub fn parse_capture(bytes: &[u8]) -> Result<Headers, WireError> {
    parse_as(bytes, false)
}

/// Checks the IPv4 header checksum and the TCP or UDP checksum (a UDP checksum of 0 means none
/// was sent, RFC 768) of the complete packet in `bytes`, using etherparse's own calculators.
pub fn verify_checksums(bytes: &[u8]) -> Result<(), WireError> {
    parse(bytes)?;
    let ip = Ipv4HeaderSlice::from_slice(bytes).map_err(ipv4_error)?;
    let check = |layer, found, expected| if found == expected { Ok(()) } else { Err(WireError::BadChecksum { layer, found, expected }) };
    check(Layer::Ipv4, ip.header_checksum(), ip.to_header().calc_header_checksum())?;
    let l4 = &bytes[ip.slice().len()..ip.total_len() as usize];
    if ip.protocol() == IpNumber::TCP {
        let t = TcpSlice::from_slice(l4).map_err(tcp_error)?;
        // parse() has checked the segment length against the 16-bit IPv4 total length.
        let expected = t.calc_checksum_ipv4(ip.source(), ip.destination()).unwrap_or(0);
        check(Layer::Tcp, t.checksum(), expected)
    } else {
        let u = UdpHeaderSlice::from_slice(l4).map_err(udp_error)?;
        let header = UdpHeader { checksum: 0, ..u.to_header() };
        let payload = &l4[8..u.length() as usize];
        let expected = header.calc_checksum_ipv4_raw(ip.source(), ip.destination(), payload).unwrap_or(0);
        if u.checksum() == 0 {
            return Ok(());
        }
        check(Layer::Udp, u.checksum(), expected)
    }
}

fn parse_as(bytes: &[u8], complete: bool) -> Result<Headers, WireError> {
    let ip = Ipv4HeaderSlice::from_slice(bytes).map_err(ipv4_error)?;
    let header_len = ip.slice().len();
    let total = ip.total_len() as usize;
    if total < header_len {
        return Err(WireError::BadTotalLength { total_len: ip.total_len(), header_len });
    }
    if complete && bytes.len() < total {
        return Err(WireError::Truncated { layer: Layer::Ipv4, needed: total, got: bytes.len() });
    }
    fragment_error(&ip)?;
    let fields = Ipv4Fields {
        src: ip.source(),
        dst: ip.destination(),
        dscp: ip.dcp().value(),
        ecn: ip.ecn().value(),
        ident: ip.identification(),
        ttl: ip.ttl(),
        dont_fragment: ip.dont_fragment(),
    };
    // The transport bytes present, and the transport length the IPv4 header declares.
    let l4 = &bytes[header_len..total.min(bytes.len())];
    let l4_len = total - header_len;
    match ip.protocol() {
        IpNumber::TCP => {
            let t = TcpSlice::from_slice(l4).map_err(tcp_error)?;
            let mut tcp = TcpHeader {
                seq: SeqNum(t.sequence_number()),
                ack: SeqNum(t.acknowledgment_number()),
                // Byte 13 of the TCP header: CWR ECE URG ACK PSH RST SYN FIN.
                flags: TcpFlags(t.header_slice()[13]),
                window: t.window_size(),
                ..TcpHeader::default()
            };
            tcp_options(t.options(), &mut tcp)?;
            let payload_len = (l4_len - t.header_len()) as u32;
            Ok(Headers { ip: fields, proto: Protocol::Tcp, sport: t.source_port(), dport: t.destination_port(), tcp, payload_len })
        }
        IpNumber::UDP => {
            let u = UdpHeaderSlice::from_slice(l4).map_err(udp_error)?;
            let length = u.length();
            if !(8..=l4_len).contains(&(length as usize)) {
                return Err(WireError::BadUdpLength { length, available: l4_len });
            }
            let payload_len = length as u32 - 8;
            let tcp = TcpHeader::default();
            Ok(Headers { ip: fields, proto: Protocol::Udp, sport: u.source_port(), dport: u.destination_port(), tcp, payload_len })
        }
        other => Err(WireError::UnsupportedProtocol { protocol: other.0 }),
    }
}

/// Reads the modelled options out of `options` into `tcp`.
fn tcp_options(options: &[u8], tcp: &mut TcpHeader) -> Result<(), WireError> {
    let mut it = TcpOptionsIterator::from_slice(options);
    loop {
        let at = it.rest();
        match it.next() {
            None => return Ok(()),
            Some(Ok(option)) => model_option(option, tcp),
            Some(Err(TcpOptionReadError::UnknownId(kind))) => {
                // etherparse stops at a kind it does not know; skip it by its length and go on.
                let Some(&len) = at.get(1) else {
                    return Err(WireError::Truncated { layer: Layer::TcpOption, needed: 2, got: 1 });
                };
                if len < 2 {
                    return Err(WireError::BadTcpOption { kind, len });
                }
                let Some(rest) = at.get(len as usize..) else {
                    return Err(WireError::Truncated { layer: Layer::TcpOption, needed: len as usize, got: at.len() });
                };
                it = TcpOptionsIterator::from_slice(rest);
            }
            Some(Err(TcpOptionReadError::UnexpectedSize { option_id, size })) => {
                return Err(WireError::BadTcpOption { kind: option_id, len: size });
            }
            Some(Err(TcpOptionReadError::UnexpectedEndOfSlice { expected_len, actual_len, .. })) => {
                return Err(WireError::Truncated { layer: Layer::TcpOption, needed: expected_len as usize, got: actual_len });
            }
        }
    }
}

fn model_option(option: TcpOptionElement, tcp: &mut TcpHeader) {
    match option {
        TcpOptionElement::MaximumSegmentSize(mss) => tcp.mss = Some(mss),
        TcpOptionElement::WindowScale(ws) => tcp.wscale = Some(ws),
        TcpOptionElement::SelectiveAcknowledgementPermitted => tcp.sack_permitted = true,
        TcpOptionElement::SelectiveAcknowledgement(first, rest) => {
            let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
            let mut n = 0;
            for (start, end) in std::iter::once(first).chain(rest.into_iter().flatten()) {
                blocks[n] = SackBlock { start: SeqNum(start), end: SeqNum(end) };
                n += 1;
            }
            (tcp.sack, tcp.sack_len) = (blocks, n as u8);
        }
        TcpOptionElement::Noop | TcpOptionElement::Timestamp(..) => {}
    }
}

/// Fragments are refused: a later one has no transport header, and the first one's payload
/// length is not the datagram's.
pub(super) fn fragment_error(ip: &Ipv4HeaderSlice) -> Result<(), WireError> {
    let offset = ip.fragments_offset().value();
    if ip.more_fragments() || offset != 0 {
        return Err(WireError::Fragment { offset, more: ip.more_fragments() });
    }
    Ok(())
}

fn len_error(layer: Layer, e: LenError) -> WireError {
    WireError::Truncated { layer, needed: e.required_len, got: e.len }
}

pub(super) fn ipv4_error(e: ipv4::HeaderSliceError) -> WireError {
    match e {
        ipv4::HeaderSliceError::Len(e) => len_error(Layer::Ipv4, e),
        ipv4::HeaderSliceError::Content(ipv4::HeaderError::UnexpectedVersion { version_number }) => WireError::NotIpv4 { version: version_number },
        ipv4::HeaderSliceError::Content(ipv4::HeaderError::HeaderLengthSmallerThanHeader { ihl }) => WireError::BadHeaderLength { ihl },
    }
}

fn tcp_error(e: tcp::HeaderSliceError) -> WireError {
    match e {
        tcp::HeaderSliceError::Len(e) => len_error(Layer::Tcp, e),
        tcp::HeaderSliceError::Content(tcp::HeaderError::DataOffsetTooSmall { data_offset }) => WireError::BadDataOffset { data_offset },
    }
}

fn udp_error(e: LenError) -> WireError {
    len_error(Layer::Udp, e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::checksum;

    /// Fills in the IPv4 header checksum and the TCP checksum of a hand-built packet with the
    /// independent RFC 1071 code, so the tests below do not trust the code they test.
    fn seal(mut b: Vec<u8>) -> Vec<u8> {
        let total = b.len();
        b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        b[10..12].fill(0);
        let hc = checksum(&b[..20]);
        b[10..12].copy_from_slice(&hc.to_be_bytes());
        let mut pseudo = b[12..20].to_vec();
        pseudo.extend_from_slice(&[0, b[9]]);
        pseudo.extend_from_slice(&((total - 20) as u16).to_be_bytes());
        let at = if b[9] == 6 { 36 } else { 26 };
        b[at..at + 2].fill(0);
        pseudo.extend_from_slice(&b[20..]);
        let c = checksum(&pseudo);
        b[at..at + 2].copy_from_slice(&c.to_be_bytes());
        b
    }

    fn ipv4(proto: u8) -> Vec<u8> {
        vec![0x45, 0x00, 0, 0, 0x12, 0x34, 0x40, 0x00, 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]
    }

    /// A SYN as Linux 6.x sends it by default: MSS 1460, SACK-permitted, timestamps, NOP, window
    /// scale 7 (the option order of `tcp_options_write`), plus a TCP Fast Open cookie (kind 34)
    /// that neither etherparse nor the model knows.
    fn linux_syn() -> Vec<u8> {
        let mut b = ipv4(6);
        b.extend_from_slice(&[0x9c, 0x40, 0x00, 0x50, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0xb0, 0x02, 0xfa, 0xf0, 0, 0, 0, 0]);
        b.extend_from_slice(&[2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7]);
        b.extend_from_slice(&[34, 6, 0xaa, 0xbb, 0xcc, 0xdd]);
        b.extend_from_slice(&[1, 0]); // NOP, end of options: 28 option bytes, data offset 12 words
        b[32] = 12 << 4;
        seal(b)
    }

    #[test]
    fn a_linux_syn_parses_with_its_timestamp_and_fast_open_skipped() {
        let b = linux_syn();
        let h = parse(&b).expect("a Linux SYN parses");
        assert_eq!((h.sport, h.dport), (40_000, 80));
        assert_eq!(h.tcp.seq, SeqNum(0xdead_beef));
        assert_eq!(h.tcp.flags, TcpFlags(TcpFlags::SYN));
        assert_eq!(h.tcp.window, 64_240);
        assert_eq!((h.tcp.mss, h.tcp.wscale, h.tcp.sack_permitted), (Some(1460), Some(7), true));
        assert_eq!(h.payload_len, 0);
        assert_eq!((h.ip.ident, h.ip.ttl, h.ip.dont_fragment), (0x1234, 64, true));
        assert_eq!(verify_checksums(&b), Ok(()), "etherparse agrees with the RFC 1071 checksums");
    }

    #[test]
    fn malformed_packets_get_their_own_error() {
        let good = linux_syn();
        let with = |i: usize, v: u8| {
            let mut b = good.clone();
            b[i] = v;
            b
        };
        assert_eq!(parse(&with(0, 0x65)), Err(WireError::NotIpv4 { version: 6 }));
        assert_eq!(parse(&with(0, 0x44)), Err(WireError::BadHeaderLength { ihl: 4 }));
        assert_eq!(parse(&with(3, 19)), Err(WireError::BadTotalLength { total_len: 19, header_len: 20 }));
        assert_eq!(parse(&with(3, 200)), Err(WireError::Truncated { layer: Layer::Ipv4, needed: 200, got: 68 }));
        assert_eq!(parse(&with(6, 0x20)), Err(WireError::Fragment { offset: 0, more: true }));
        assert_eq!(parse(&with(7, 3)), Err(WireError::Fragment { offset: 3, more: false }));
        assert_eq!(parse(&with(9, 1)), Err(WireError::UnsupportedProtocol { protocol: 1 }));
        assert_eq!(parse(&with(32, 4 << 4)), Err(WireError::BadDataOffset { data_offset: 4 }));
        assert_eq!(parse(&with(32, 15 << 4)), Err(WireError::Truncated { layer: Layer::Tcp, needed: 60, got: 48 }));
        // MSS with length 5; the unknown kind 34 with length 1 and with length 60.
        assert_eq!(parse(&with(41, 5)), Err(WireError::BadTcpOption { kind: 2, len: 5 }));
        assert_eq!(parse(&with(61, 1)), Err(WireError::BadTcpOption { kind: 34, len: 1 }));
        assert_eq!(parse(&with(61, 60)), Err(WireError::Truncated { layer: Layer::TcpOption, needed: 60, got: 8 }));
        let mut bad_sum = good.clone();
        bad_sum[36] ^= 1;
        assert!(matches!(verify_checksums(&bad_sum), Err(WireError::BadChecksum { layer: Layer::Tcp, .. })));
        let mut bad_ip_sum = good.clone();
        bad_ip_sum[10] ^= 1;
        assert!(matches!(verify_checksums(&bad_ip_sum), Err(WireError::BadChecksum { layer: Layer::Ipv4, .. })));
    }

    #[test]
    fn udp_lengths_are_checked_against_the_ipv4_payload() {
        let mut b = ipv4(17);
        b.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 0, 12, 0, 0, 1, 2, 3, 4]);
        let b = seal(b);
        let h = parse(&b).unwrap();
        assert_eq!((h.proto, h.sport, h.dport, h.payload_len), (Protocol::Udp, 5000, 5001, 4));
        assert_eq!(verify_checksums(&b), Ok(()));
        let mut long = b.clone();
        long[25] = 13;
        assert_eq!(parse(&long), Err(WireError::BadUdpLength { length: 13, available: 12 }));
        long[25] = 7;
        assert_eq!(parse(&long), Err(WireError::BadUdpLength { length: 7, available: 12 }));
        let mut unsummed = b.clone();
        unsummed[26..28].fill(0);
        assert_eq!(verify_checksums(&unsummed), Ok(()), "UDP checksum 0: none was computed (RFC 768)");
    }

    #[test]
    fn a_capture_needs_only_the_headers() {
        let mut b = ipv4(17);
        b.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 0x05, 0xc8, 0, 0]);
        // IPv4 total length 1500 (a full-size datagram), 28 bytes captured.
        b[2..4].copy_from_slice(&1500u16.to_be_bytes());
        assert_eq!(parse_capture(&b).map(|h| h.payload_len), Ok(1472));
        assert_eq!(parse(&b), Err(WireError::Truncated { layer: Layer::Ipv4, needed: 1500, got: 28 }));
        assert_eq!(parse_capture(&b[..27]), Err(WireError::Truncated { layer: Layer::Udp, needed: 8, got: 7 }));
    }
}
