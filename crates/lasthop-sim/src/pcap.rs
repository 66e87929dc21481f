//! pcap files (the libpcap format, nanosecond variant: magic 0xa1b23c4d) of raw IPv4 packets
//! (LINKTYPE_RAW = 101) built from the packet model. Only the headers are stored (the capture
//! length is the header length, the original length the full packet), as `tcpdump -s` would with
//! a short snap length: payload bytes are not modelled.

use lasthop_core::packet::Packet;
use lasthop_core::wire::write_headers;
use lasthop_core::Time;

#[derive(Debug)]
pub struct PcapWriter {
    buf: Vec<u8>,
    scratch: Vec<u8>,
    packets: u32,
}

impl Default for PcapWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PcapWriter {
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        buf.extend_from_slice(&65_535u32.to_le_bytes()); // snaplen
        buf.extend_from_slice(&101u32.to_le_bytes()); // LINKTYPE_RAW
        PcapWriter { buf, scratch: Vec::with_capacity(128), packets: 0 }
    }

    pub fn record(&mut self, t: Time, p: &Packet) {
        self.scratch.clear();
        // The IPv4 id is the packet's uid (mod 2^16), so one packet seen at two hops matches.
        let total = write_headers(p, p.uid as u16, &mut self.scratch);
        self.buf.extend_from_slice(&((t.0 / 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&((t.0 % 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&(self.scratch.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(&(total as u32).to_le_bytes());
        self.buf.extend_from_slice(&self.scratch);
        self.packets += 1;
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
    pub fn packets(&self) -> u32 {
        self.packets
    }
}
