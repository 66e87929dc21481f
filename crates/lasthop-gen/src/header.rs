//! The header at the start of every datagram (UDP) and message (TCP) the generator sends:
//! version 1, 40 bytes, big-endian (network order).
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 2 | magic `"LH"` |
//! | 2 | 1 | version (1) |
//! | 3 | 1 | kind: 0 data, 1 echo (the receiver's reply in the round-trip meter) |
//! | 4 | 4 | session: drawn by the sender per run; datagrams of another run are refused |
//! | 8 | 4 | flow id (0-based index of the flow in the run) |
//! | 12 | 4 | sequence number within the flow, from 0 |
//! | 16 | 4 | length of the whole datagram or message, header included, bytes |
//! | 20 | 4 | reserved, 0 |
//! | 24 | 8 | send time, ns, on the run's clock ([`crate::clock`]) |
//! | 32 | 8 | echo: in an echo, the receiver's receive time of the data it answers (its clock) |
//!
//! A payload smaller than the header is raised to [`HEADER_LEN`] (D-ITG raises to 16 B, 20 B
//! for TCP, for the same reason): the flow's sizes below 40 B are sent as 40 B, and the report
//! counts the bytes actually sent. The rest of a payload is zeros.
//!
//! Unlike D-ITG's payload (seconds of the day and microseconds), the send time is a full
//! nanosecond count, so the round-trip meter matches an echo to its packet by flow, sequence
//! number *and* the echoed send time, whatever the ratio of round trip to inter-departure
//! time (D-ITG combines the echoed seconds with the microseconds of the latest packet sent,
//! wrong as soon as the RTT exceeds the IDT).

/// Bytes of the header; the smallest datagram or message.
pub const HEADER_LEN: usize = 40;
/// `"LH"`.
pub const MAGIC: [u8; 2] = *b"LH";
pub const VERSION: u8 = 1;

/// What a datagram is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data = 0,
    Echo = 1,
}

/// A decoded header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub session: u32,
    pub flow: u32,
    pub seq: u32,
    pub len: u32,
    pub tx_ns: u64,
    pub echo_ns: u64,
}

/// Why bytes are not a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("shorter than the {HEADER_LEN}-byte header")]
    Short,
    #[error("not a lasthop datagram (bad magic)")]
    Magic,
    #[error("header version {0}, this build reads version {VERSION}")]
    Version(u8),
    #[error("unknown kind {0}")]
    Kind(u8),
    #[error("length field below the header's own length")]
    Length,
}

impl Header {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf` (which must hold them).
    pub fn write(&self, buf: &mut [u8]) {
        let b = &mut buf[..HEADER_LEN];
        b[0..2].copy_from_slice(&MAGIC);
        b[2] = VERSION;
        b[3] = self.kind as u8;
        b[4..8].copy_from_slice(&self.session.to_be_bytes());
        b[8..12].copy_from_slice(&self.flow.to_be_bytes());
        b[12..16].copy_from_slice(&self.seq.to_be_bytes());
        b[16..20].copy_from_slice(&self.len.to_be_bytes());
        b[20..24].copy_from_slice(&[0; 4]);
        b[24..32].copy_from_slice(&self.tx_ns.to_be_bytes());
        b[32..40].copy_from_slice(&self.echo_ns.to_be_bytes());
    }

    /// Reads a header from the start of `buf`; any byte string gives a header or an error.
    pub fn read(buf: &[u8]) -> Result<Header, HeaderError> {
        let b = buf.get(..HEADER_LEN).ok_or(HeaderError::Short)?;
        if b[0..2] != MAGIC {
            return Err(HeaderError::Magic);
        }
        if b[2] != VERSION {
            return Err(HeaderError::Version(b[2]));
        }
        let kind = match b[3] {
            0 => Kind::Data,
            1 => Kind::Echo,
            k => return Err(HeaderError::Kind(k)),
        };
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let len = u32_at(16);
        if (len as usize) < HEADER_LEN {
            return Err(HeaderError::Length);
        }
        Ok(Header { kind, session: u32_at(4), flow: u32_at(8), seq: u32_at(12), len, tx_ns: u64_at(24), echo_ns: u64_at(32) })
    }
}

/// The bytes a payload of `size` occupies on the wire: at least the header.
pub fn wire_payload(size: u32) -> u32 {
    size.max(HEADER_LEN as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h() -> Header {
        Header { kind: Kind::Echo, session: 0xDEAD_BEEF, flow: 3, seq: 70_000, len: 512, tx_ns: 1_700_000_000_123_456_789, echo_ns: 42 }
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let mut b = [0u8; HEADER_LEN];
        h().write(&mut b);
        // Offsets of the module doc's table, big-endian.
        assert_eq!(&b[0..4], &[b'L', b'H', 1, 1]);
        assert_eq!(&b[4..8], &[0xDE, 0xAD, 0xBE, 0xEF]);
        assert_eq!(&b[12..16], &70_000u32.to_be_bytes());
        assert_eq!(&b[16..20], &[0, 0, 2, 0]);
        assert_eq!(&b[24..32], &1_700_000_000_123_456_789u64.to_be_bytes());
        assert_eq!(Header::read(&b), Ok(h()));
    }

    #[test]
    fn truncated_or_foreign_bytes_are_refused_with_their_reason() {
        let mut b = [0u8; HEADER_LEN];
        h().write(&mut b);
        assert_eq!(Header::read(&b[..39]), Err(HeaderError::Short));
        let mut x = b;
        x[0] = b'X';
        assert_eq!(Header::read(&x), Err(HeaderError::Magic));
        let mut x = b;
        x[2] = 2;
        assert_eq!(Header::read(&x), Err(HeaderError::Version(2)));
        let mut x = b;
        x[3] = 9;
        assert_eq!(Header::read(&x), Err(HeaderError::Kind(9)));
        let mut x = b;
        x[16..20].copy_from_slice(&39u32.to_be_bytes());
        assert_eq!(Header::read(&x), Err(HeaderError::Length));
    }

    #[test]
    fn small_payloads_are_raised_to_the_header() {
        assert_eq!((wire_payload(0), wire_payload(39), wire_payload(40), wire_payload(1472)), (40, 40, 40, 1472));
    }

    proptest! {
        #[test]
        fn any_bytes_decode_or_fail_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = Header::read(&bytes);
        }

        #[test]
        fn garbage_after_a_valid_prefix_never_panics(flow in any::<u32>(), seq in any::<u32>(), tail in proptest::collection::vec(any::<u8>(), 0..40), cut in 0usize..41) {
            let mut b = vec![0u8; HEADER_LEN];
            Header { flow, seq, ..h() }.write(&mut b);
            b.truncate(cut);
            b.extend(tail);
            let _ = Header::read(&b);
        }

        #[test]
        fn every_header_round_trips(session in any::<u32>(), flow in any::<u32>(), seq in any::<u32>(), len in 40u32.., tx in any::<u64>(), echo in any::<u64>()) {
            let x = Header { kind: Kind::Data, session, flow, seq, len, tx_ns: tx, echo_ns: echo };
            let mut b = [0u8; HEADER_LEN];
            x.write(&mut b);
            prop_assert_eq!(Header::read(&b), Ok(x));
        }
    }
}
