//! Properties of the wire format as a whole: emit and parse invert each other, checksums verify
//! with etherparse's own calculators and with the independent RFC 1071 code, the pcap bytes are
//! those of the hand-written writer this module replaced, no input makes parsing or rewriting
//! panic, and every incremental checksum update equals a full recomputation.

use super::headers::emitted_options_len;
use super::*;
use crate::packet::{Packet, PacketMeta, Protocol, SackBlock, SeqNum, TcpFlags, TcpHeader, MAX_SACK_BLOCKS};
use crate::Time;
use etherparse::{Ipv4HeaderSlice, TcpSlice, UdpHeaderSlice};
use proptest::prelude::*;

/// The pcap writer before etherparse (commit 3000b64), kept verbatim as the reference the new
/// `write_headers` must match byte for byte.
#[allow(clippy::manual_is_multiple_of)] // verbatim
mod reference {
    use super::super::{checksum, fold, node_address, sum16};
    use crate::packet::{Packet, Protocol};

    fn tcp_options(p: &Packet, out: &mut Vec<u8>) {
        let start = out.len();
        if let Some(mss) = p.tcp.mss {
            out.extend_from_slice(&[2, 4]);
            out.extend_from_slice(&mss.to_be_bytes());
        }
        if p.tcp.sack_permitted {
            out.extend_from_slice(&[4, 2]);
        }
        if let Some(ws) = p.tcp.wscale {
            out.extend_from_slice(&[1, 3, 3, ws]); // NOP + window scale
        }
        if p.tcp.sack_len > 0 {
            out.extend_from_slice(&[1, 1, 5, 2 + 8 * p.tcp.sack_len]);
            for b in p.tcp.sack_blocks() {
                out.extend_from_slice(&b.start.0.to_be_bytes());
                out.extend_from_slice(&b.end.0.to_be_bytes());
            }
        }
        while (out.len() - start) % 4 != 0 {
            out.push(0); // end of option list / padding
        }
    }

    /// Appends the IPv4 + TCP/UDP headers of `p` to `out` and returns the full packet length on the
    /// wire (headers + payload). `ip_id` fills the IPv4 identification field.
    pub(super) fn write_headers(p: &Packet, ip_id: u16, out: &mut Vec<u8>) -> usize {
        // Transport header first (the IP total length depends on its options).
        let mut l4 = Vec::with_capacity(60);
        let proto = match p.proto {
            Protocol::Tcp => {
                l4.extend_from_slice(&p.sport.to_be_bytes());
                l4.extend_from_slice(&p.dport.to_be_bytes());
                l4.extend_from_slice(&p.tcp.seq.0.to_be_bytes());
                l4.extend_from_slice(&p.tcp.ack.0.to_be_bytes());
                l4.extend_from_slice(&[0, p.tcp.flags.0]);
                l4.extend_from_slice(&p.tcp.window.to_be_bytes());
                l4.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
                tcp_options(p, &mut l4);
                l4[12] = ((l4.len() / 4) as u8) << 4;
                6u8
            }
            Protocol::Udp => {
                l4.extend_from_slice(&p.sport.to_be_bytes());
                l4.extend_from_slice(&p.dport.to_be_bytes());
                l4.extend_from_slice(&((8 + p.payload_len) as u16).to_be_bytes());
                l4.extend_from_slice(&[0, 0]);
                17u8
            }
        };
        let l4_len = l4.len() + p.payload_len as usize;
        let total = 20 + l4_len;
        let (src, dst) = (node_address(p.src), node_address(p.dst));
        // Pseudo-header checksum over header bytes; the zero payload adds nothing.
        let mut acc = sum16(&src, 0);
        acc = sum16(&dst, acc);
        acc += proto as u32 + l4_len as u32;
        let c = fold(sum16(&l4, acc));
        let c = if proto == 17 && c == 0 { 0xffff } else { c };
        let at = if proto == 6 { 16 } else { 6 };
        l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = p.dscp << 2;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
        ip[6] = 0x40; // don't fragment
        ip[8] = 64;
        ip[9] = proto;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        let hc = checksum(&ip);
        ip[10..12].copy_from_slice(&hc.to_be_bytes());
        out.extend_from_slice(&ip);
        out.extend_from_slice(&l4);
        total
    }
}

fn arb_tcp() -> impl Strategy<Value = TcpHeader> {
    let blocks = proptest::array::uniform4((any::<u32>(), any::<u32>()));
    let fields = (any::<u32>(), any::<u32>(), any::<u8>(), any::<u16>(), proptest::option::of(any::<u16>()), proptest::option::of(any::<u8>()), any::<bool>());
    (fields, 0..=MAX_SACK_BLOCKS as u8, blocks)
        .prop_map(|((seq, ack, flags, window, mss, wscale, sack_permitted), sack_len, blocks)| {
            let mut sack = [SackBlock::default(); MAX_SACK_BLOCKS];
            for (s, (start, end)) in sack.iter_mut().zip(blocks).take(sack_len as usize) {
                *s = SackBlock { start: SeqNum(start), end: SeqNum(end) };
            }
            TcpHeader { seq: SeqNum(seq), ack: SeqNum(ack), flags: TcpFlags(flags), window, mss, wscale, sack_permitted, sack_len, sack }
        })
        .prop_filter("TCP options fit in 40 bytes", |t| emitted_options_len(t) <= 40)
}

fn arb_ip() -> impl Strategy<Value = Ipv4Fields> {
    (any::<[u8; 4]>(), any::<[u8; 4]>(), 0..64u8, 0..4u8, any::<u16>(), any::<u8>(), any::<bool>())
        .prop_map(|(src, dst, dscp, ecn, ident, ttl, dont_fragment)| Ipv4Fields { src, dst, dscp, ecn, ident, ttl, dont_fragment })
}

fn arb_proto() -> impl Strategy<Value = Protocol> {
    prop_oneof![Just(Protocol::Tcp), Just(Protocol::Udp)]
}

/// Headers of any packet emit accepts, with payload lengths up to 3000 bytes (odd ones too).
fn arb_headers(proto: impl Strategy<Value = Protocol>) -> impl Strategy<Value = Headers> {
    (arb_ip(), proto, any::<u16>(), any::<u16>(), arb_tcp(), 0..3000u32).prop_map(|(ip, proto, sport, dport, tcp, payload_len)| {
        let tcp = if proto == Protocol::Tcp { tcp } else { TcpHeader::default() };
        Headers { ip, proto, sport, dport, tcp, payload_len }
    })
}

/// The bytes of `h` with a payload drawn from `seed` (xorshift64: the bytes need only vary).
fn packet_bytes(h: &Headers, seed: u64) -> Vec<u8> {
    let mut buf = vec![0u8; h.total_len()];
    let mut x = seed | 1;
    for b in &mut buf[h.header_len()..] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    assert_eq!(emit(h, &mut buf), Ok(h.total_len()));
    buf
}

/// The TCP or UDP checksum by full RFC 1071 recomputation (pseudo-header, header with the
/// checksum field zeroed, payload), and the IPv4 header checksum likewise.
fn recomputed(buf: &[u8]) -> (u16, u16) {
    let mut ip = buf[..20].to_vec();
    ip[10..12].fill(0);
    let mut l4 = buf[20..].to_vec();
    let at = if buf[9] == 6 { 16 } else { 6 };
    l4[at..at + 2].fill(0);
    let mut pseudo = buf[12..20].to_vec();
    pseudo.extend_from_slice(&[0, buf[9]]);
    pseudo.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    pseudo.extend_from_slice(&l4);
    let l4_sum = checksum(&pseudo);
    // RFC 768: a UDP checksum that computes to zero is sent as all ones (zero means "none").
    let l4_sum = if buf[9] == 17 && l4_sum == 0 { 0xffff } else { l4_sum };
    (checksum(&ip), l4_sum)
}

fn stored(buf: &[u8]) -> (u16, u16) {
    let at = 20 + if buf[9] == 6 { 16 } else { 6 };
    (u16::from_be_bytes([buf[10], buf[11]]), u16::from_be_bytes([buf[at], buf[at + 1]]))
}

/// Checks the three checksums with etherparse's calculators directly (not through `verify_checksums`).
fn etherparse_agrees(buf: &[u8]) {
    let ip = Ipv4HeaderSlice::from_slice(buf).unwrap();
    assert_eq!(ip.header_checksum(), ip.to_header().calc_header_checksum());
    let l4 = &buf[20..];
    if buf[9] == 6 {
        let t = TcpSlice::from_slice(l4).unwrap();
        assert_eq!(t.checksum(), t.calc_checksum_ipv4(ip.source(), ip.destination()).unwrap());
    } else {
        let u = UdpHeaderSlice::from_slice(l4).unwrap();
        let h = etherparse::UdpHeader { checksum: 0, ..u.to_header() };
        assert_eq!(u.checksum(), h.calc_checksum_ipv4_raw(ip.source(), ip.destination(), &l4[8..]).unwrap());
    }
}

fn sim_packet(h: &Headers, meta: PacketMeta) -> Packet {
    h.to_packet(meta).expect("addresses drawn from node_address")
}

/// Simulator packets as the engine makes them: node ids, DSCP within 6 bits only sometimes (the
/// pcap writer masks it), leftover TCP fields on UDP packets (neither writer emits them).
fn arb_sim_packet() -> impl Strategy<Value = Packet> {
    (any::<u64>(), 0..100_000u32, 0..100_000u32, any::<u16>(), any::<u16>(), any::<u8>(), arb_proto(), arb_tcp(), 0..65_000u32).prop_map(
        |(uid, src, dst, sport, dport, dscp, proto, tcp, payload_len)| Packet {
            uid,
            flow: 0,
            pkt_seq: 0,
            src,
            dst,
            sport,
            dport,
            dscp,
            ecn: 0,
            proto,
            tcp,
            payload_len,
            sent_at: Time::ZERO,
        },
    )
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn emit_then_parse_gives_back_every_header_field(h in arb_headers(arb_proto()), seed in any::<u64>(), padding in 0..8usize) {
        let mut buf = packet_bytes(&h, seed);
        etherparse_agrees(&buf);
        prop_assert_eq!(verify_checksums(&buf), Ok(()));
        prop_assert_eq!(stored(&buf), recomputed(&buf), "the independent RFC 1071 code agrees");
        // Link-layer padding after the IPv4 total length is not part of the packet.
        buf.extend(std::iter::repeat_n(0xa5, padding));
        prop_assert_eq!(parse(&buf), Ok(h));
        prop_assert_eq!(parse_capture(&buf[..h.header_len()]), Ok(h));
    }

    #[test]
    fn a_simulator_packet_round_trips_through_bytes(mut h in arb_headers(arb_proto()), src in 0..(1u32 << 24) - 1, dst in 0..(1u32 << 24) - 1, uid in any::<u64>(), seed in any::<u64>()) {
        (h.ip.src, h.ip.dst) = (node_address(src), node_address(dst));
        (h.ip.ttl, h.ip.dont_fragment, h.ip.ecn) = (DEFAULT_TTL, true, 0);
        let meta = PacketMeta { uid, flow: 7, pkt_seq: 3, sent_at: Time(99) };
        let p = sim_packet(&h, meta);
        prop_assert_eq!((p.src, p.dst), (src, dst));
        prop_assert_eq!(Headers::from_packet(&p, h.ip.ident), h);
        let back = parse(&packet_bytes(&h, seed)).and_then(|g| g.to_packet(meta));
        prop_assert_eq!(back, Ok(p));
    }

    #[test]
    fn write_headers_matches_the_hand_written_writer_byte_for_byte(p in arb_sim_packet()) {
        let (mut new, mut old) = (Vec::new(), Vec::new());
        let total = write_headers(&p, p.uid as u16, &mut new);
        prop_assert_eq!(total, reference::write_headers(&p, p.uid as u16, &mut old));
        prop_assert_eq!(&new, &old);
        // A pcap record is a capture of the headers: it parses back to the packet's headers.
        prop_assert_eq!(parse_capture(&new), Ok(Headers::from_packet(&p, p.uid as u16)));
        // With the zero payload appended it is a complete packet whose checksums verify.
        new.resize(total, 0);
        etherparse_agrees(&new);
    }

    #[test]
    fn every_truncation_is_rejected_with_a_typed_error(h in arb_headers(arb_proto()), seed in any::<u64>()) {
        let buf = packet_bytes(&h, seed);
        for cut in 0..buf.len() {
            let short = &buf[..cut];
            prop_assert!(matches!(parse(short), Err(WireError::Truncated { .. })), "cut at {} of {}", cut, buf.len());
            match parse_capture(short) {
                Ok(g) => prop_assert!(cut >= h.header_len() && g == h, "a capture parses once its headers are complete"),
                Err(e) => prop_assert!(cut < h.header_len() && matches!(e, WireError::Truncated { .. }), "{e:?} at {cut}"),
            }
        }
    }

    #[test]
    fn rewrites_keep_checksums_equal_to_a_full_recomputation(h in arb_headers(Just(Protocol::Tcp)), seed in any::<u64>(), window in any::<u16>(), ack in any::<u32>(), dscp in 0..64u8) {
        let mut buf = packet_bytes(&h, seed);
        prop_assert_eq!(set_tcp_window(&mut buf, window), Ok(h.tcp.window));
        prop_assert_eq!(stored(&buf), recomputed(&buf), "after the window rewrite");
        prop_assert_eq!(set_tcp_ack(&mut buf, SeqNum(ack)), Ok(h.tcp.ack));
        prop_assert_eq!(stored(&buf), recomputed(&buf), "after the ACK rewrite");
        prop_assert_eq!(set_dscp(&mut buf, dscp), Ok(h.ip.dscp));
        prop_assert_eq!(stored(&buf), recomputed(&buf), "after the DSCP rewrite");
        prop_assert_eq!(clear_tcp_push(&mut buf), Ok(h.tcp.flags.has(TcpFlags::PSH)));
        prop_assert_eq!(stored(&buf), recomputed(&buf), "after clearing PSH");
        prop_assert_eq!(clear_tcp_push(&mut buf), Ok(false), "PSH is clear now");
        prop_assert_eq!(decrement_ttl(&mut buf), Ok(h.ip.ttl > 1), "forwarded unless the TTL runs out");
        prop_assert_eq!(stored(&buf), recomputed(&buf), "after the TTL decrement");
        prop_assert_eq!(set_ecn(&mut buf, 3), Ok(h.ip.ecn));
        prop_assert_eq!(stored(&buf), recomputed(&buf), "after the CE mark");
        etherparse_agrees(&buf);
        let mut want = h;
        (want.tcp.window, want.tcp.ack, want.ip.dscp) = (window, SeqNum(ack), dscp);
        want.ip.ttl = if h.ip.ttl > 1 { h.ip.ttl - 1 } else { h.ip.ttl };
        want.ip.ecn = 3;
        want.tcp.flags.0 &= !TcpFlags::PSH;
        prop_assert_eq!(parse(&buf), Ok(want), "only the rewritten fields changed");
    }

    #[test]
    fn apply_equals_emitting_the_changed_packet(mut h in arb_headers(arb_proto()), seed in any::<u64>(), window in any::<Option<u16>>(), ack in any::<Option<u32>>(), dscp in proptest::option::of(0..64u8)) {
        (h.ip.src, h.ip.dst) = (node_address(1), node_address(2));
        let mut buf = packet_bytes(&h, seed);
        let mut p = sim_packet(&parse(&buf).unwrap(), PacketMeta::default());
        p.tcp.window = window.unwrap_or(p.tcp.window);
        p.tcp.ack = ack.map(SeqNum).unwrap_or(p.tcp.ack);
        p.dscp = dscp.unwrap_or(p.dscp);
        let done = apply(&p, &mut buf).unwrap();
        let tcp = h.proto == Protocol::Tcp;
        prop_assert_eq!(done, Rewritten { window: tcp && p.tcp.window != h.tcp.window, ack: tcp && p.tcp.ack != h.tcp.ack, dscp: p.dscp != h.ip.dscp });
        let mut want = h;
        want.ip.dscp = p.dscp;
        if tcp {
            (want.tcp.window, want.tcp.ack) = (p.tcp.window, p.tcp.ack);
        }
        prop_assert_eq!(buf, packet_bytes(&want, seed), "incremental updates land on the checksums a fresh emit computes");
    }
}

proptest! {
    #![proptest_config(config(20_000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
        exercise(bytes);
    }

    #[test]
    fn corrupted_packets_never_panic(h in arb_headers(arb_proto()), seed in any::<u64>(), flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..6), cut in any::<proptest::sample::Index>()) {
        // Random bytes rarely get past the version nibble; corrupting a valid packet reaches the
        // deeper checks (lengths between layers, option walking, rewrites on odd headers).
        let mut buf = packet_bytes(&h, seed);
        for (i, v) in flips {
            let i = i.index(buf.len());
            buf[i] = v;
        }
        let cut = cut.index(buf.len() + 1);
        buf.truncate(cut);
        exercise(buf);
    }
}

/// Every entry point on hostile bytes: each returns, with a value or an error.
fn exercise(bytes: Vec<u8>) {
    let _ = parse(&bytes);
    let _ = parse_capture(&bytes);
    let _ = verify_checksums(&bytes);
    let mut b = bytes.clone();
    let _ = set_tcp_window(&mut b, 1);
    let _ = set_tcp_ack(&mut b, SeqNum(1));
    let _ = set_dscp(&mut b, 46);
    if let Ok(h) = parse(&bytes) {
        let mut b = bytes.clone();
        if let Ok(mut p) = h.to_packet(PacketMeta::default()) {
            p.tcp.window = p.tcp.window.wrapping_add(1);
            assert!(apply(&p, &mut b).is_ok(), "a parsed packet's own window can be written back");
        }
    }
}

#[test]
fn rfc1071_example() {
    // RFC 1071 §3 example: 0x0001 0xf203 0xf4f5 0xf6f7 sums (with carries) to 0xddf2.
    assert_eq!(checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), !0xddf2u16);
}

#[test]
fn node_ids_and_addresses_map_one_to_one() {
    // id 0 is 10.0.0.1; id 2^24 − 2 is the last one, 10.255.255.255.
    for id in [0, 1, 254, 255, 256, 65_535, 70_000, (1 << 24) - 2] {
        assert_eq!(node_id(node_address(id)), Some(id));
    }
    assert_eq!(node_address(0), [10, 0, 0, 1]);
    assert_eq!(node_address((1 << 24) - 2), [10, 255, 255, 255]);
    assert_eq!(node_id([10, 0, 0, 0]), None);
    assert_eq!(node_id([11, 0, 0, 1]), None);
}
