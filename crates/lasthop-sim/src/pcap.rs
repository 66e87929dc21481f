//! pcap files (the libpcap format, nanosecond variant: magic 0xa1b23c4d) of raw IPv4 packets
//! (LINKTYPE_RAW = 101) built from the packet model. Only the headers are stored (the capture
//! length is the header length, the original length the full packet), as `tcpdump -s` would with
//! a short snap length: payload bytes are not modelled.

use lasthop_core::packet::Packet;
use lasthop_core::wire::write_headers;
use lasthop_core::Time;

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

    pub fn record(&mut self, t: Time, p: &Packet) {
        let start = self.data.len() as u32;
        // The IPv4 id is the packet's uid (mod 2^16), so one packet seen at two hops matches.
        let total = write_headers(p, p.uid as u16, &mut self.data);
        self.records.push((t, start, self.data.len() as u32, total as u32));
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
