//! Real header bytes for the packet model: IPv4 (RFC 791) with TCP (RFC 9293, options MSS, window
//! scale, SACK-permitted, SACK blocks) or UDP (RFC 768), checksums included (RFC 1071). Payload
//! bytes are not modelled; they are zeros, so they add nothing to the checksums, only length.
//! Used for pcap captures now and by the emulator later.

use crate::packet::{Packet, Protocol};

/// The IPv4 address of node `id`: 10.x.y.z with x.y.z = id + 1.
pub fn node_address(id: u32) -> [u8; 4] {
    let n = id + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
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

/// The Internet checksum (RFC 1071) of `bytes`.
pub fn checksum(bytes: &[u8]) -> u16 {
    fold(sum16(bytes, 0))
}

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
pub fn write_headers(p: &Packet, ip_id: u16, out: &mut Vec<u8>) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{SeqNum, TcpFlags, TcpHeader};
    use crate::Time;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3 example: 0x0001 0xf203 0xf4f5 0xf6f7 sums (with carries) to 0xddf2.
        assert_eq!(checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), !0xddf2u16);
    }

    #[test]
    fn headers_have_the_model_lengths_and_valid_checksums() {
        let mut p = Packet {
            uid: 1,
            flow: 0,
            pkt_seq: 0,
            src: 0,
            dst: 1,
            sport: 1000,
            dport: 80,
            dscp: 46,
            proto: Protocol::Tcp,
            tcp: TcpHeader { seq: SeqNum(7), ack: SeqNum(9), flags: TcpFlags(TcpFlags::SYN), window: 1000, mss: Some(1460), wscale: Some(7), sack_permitted: true, ..TcpHeader::default() },
            payload_len: 0,
            sent_at: Time::ZERO,
        };
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
        // Verify the UDP checksum: pseudo-header + header sum to 0xffff.
        let mut acc = sum16(&[10, 0, 0, 1], 0);
        acc = sum16(&[10, 0, 0, 2], acc);
        acc += 17 + 108;
        assert_eq!(fold(sum16(&u[20..], acc)), 0);
    }
}
