//! pcap files (the libpcap format, nanosecond variant: magic 0xa1b23c4d) of raw IPv4 packets
//! (LINKTYPE_RAW = 101), for every world: the simulator records packets of the header model
//! ([`PcapWriter::record`]: only the headers are stored — the capture length is the header
//! length, the original length the full packet — as `tcpdump -s` would with a short snap
//! length, since payload bytes are not modelled); the emulator records the real bytes it
//! carries ([`PcapWriter::record_bytes`], cut at a snap length if asked).
//!
//! The convention both follow: a packet leaving a node is recorded when its transmission
//! starts on the interface (the hop contract's `HopEvent::Transmit`: a packet a queue drops is
//! never recorded), a packet reaching a node when it arrives. Timestamps are nanoseconds since
//! the Unix epoch as the caller gives them (the simulator: its clock from 0; the emulator: the
//! wall-clock time of its start plus the model's time). The writer keeps the records in memory
//! and writes the whole file at the end: no I/O here.

use crate::packet::Packet;
use crate::wire::write_headers;
use crate::Time;

/// A capture in progress: records in the order they were taken, each with its timestamp. A
/// WLAN reports a frame's transmission when it decides the exchange, a little ahead of the
/// simulated clock, so [`PcapWriter::file`] orders the records by time (ties keep their order).
#[derive(Debug, Default)]
pub struct PcapWriter {
    /// (timestamp, start, end) of each record's header bytes in `data`, and its original length.
    records: Vec<(Time, u32, u32, u32)>,
    data: Vec<u8>,
}

impl PcapWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the headers of a modelled packet `p` at `t`.
    pub fn record(&mut self, t: Time, p: &Packet) {
        let start = self.data.len() as u32;
        // The IPv4 id is the packet's uid (mod 2^16), so one packet seen at two hops matches.
        let total = write_headers(p, p.uid as u16, &mut self.data);
        self.records.push((t, start, self.data.len() as u32, total as u32));
    }

    /// Records a real packet's bytes at `t`, at most `snaplen` of them (the original length is
    /// the whole packet's).
    pub fn record_bytes(&mut self, t: Time, bytes: &[u8], snaplen: usize) {
        let start = self.data.len() as u32;
        self.data.extend_from_slice(&bytes[..bytes.len().min(snaplen)]);
        self.records.push((t, start, self.data.len() as u32, bytes.len() as u32));
    }

    /// The complete pcap file.
    pub fn file(&self) -> Vec<u8> {
        let mut order: Vec<usize> = (0..self.records.len()).collect();
        order.sort_by_key(|&i| self.records[i].0);
        let mut buf = Vec::with_capacity(24 + self.data.len() + 16 * self.records.len());
        buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        buf.extend_from_slice(&65_535u32.to_le_bytes()); // snaplen
        buf.extend_from_slice(&101u32.to_le_bytes()); // LINKTYPE_RAW
        for i in order {
            let (t, start, end, total) = self.records[i];
            buf.extend_from_slice(&((t.0 / 1_000_000_000) as u32).to_le_bytes());
            buf.extend_from_slice(&((t.0 % 1_000_000_000) as u32).to_le_bytes());
            buf.extend_from_slice(&(end - start).to_le_bytes());
            buf.extend_from_slice(&total.to_le_bytes());
            buf.extend_from_slice(&self.data[start as usize..end as usize]);
        }
        buf
    }

    pub fn packets(&self) -> u32 {
        self.records.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_bytes_are_stored_up_to_the_snap_length_in_time_order() {
        let mut w = PcapWriter::new();
        w.record_bytes(Time(2_000_000_001), &[0x45; 60], 65_535);
        w.record_bytes(Time(1_500_000_000), &[0x46; 100], 40);
        let f = w.file();
        // 24-byte global header, then per record 16 bytes + the stored bytes (hand count).
        assert_eq!(f.len(), 24 + 16 + 40 + 16 + 60);
        assert_eq!(&f[0..4], &0xa1b2_3c4du32.to_le_bytes(), "nanosecond pcap");
        let u32_at = |i: usize| u32::from_le_bytes(f[i..i + 4].try_into().unwrap());
        // The earlier record comes first: 1 s + 500 000 000 ns, 40 of 100 bytes.
        assert_eq!((u32_at(24), u32_at(28), u32_at(32), u32_at(36)), (1, 500_000_000, 40, 100));
        assert_eq!(f[40], 0x46);
        let second = 24 + 16 + 40;
        assert_eq!((u32_at(second), u32_at(second + 4), u32_at(second + 8), u32_at(second + 12)), (2, 1, 60, 60));
    }
}
