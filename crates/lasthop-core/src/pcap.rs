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
//! wall-clock time of its start plus the model's time). [`PcapWriter`] keeps the records in
//! memory and gives the whole file at the end; [`PcapStream`] gives the file as it goes, holding
//! only the records of a short reordering horizon, for captures too long to hold. No I/O here:
//! the caller writes the bytes.

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
        file_header(&mut buf);
        for i in order {
            let (t, start, end, total) = self.records[i];
            record(&mut buf, t, &self.data[start as usize..end as usize], total);
        }
        buf
    }

    pub fn packets(&self) -> u32 {
        self.records.len() as u32
    }
}

/// The pcap global header: nanosecond timestamps, snap length 65 535, LINKTYPE_RAW.
fn file_header(buf: &mut Vec<u8>) {
    buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    buf.extend_from_slice(&2u16.to_le_bytes());
    buf.extend_from_slice(&4u16.to_le_bytes());
    buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
    buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
    buf.extend_from_slice(&65_535u32.to_le_bytes()); // snaplen
    buf.extend_from_slice(&101u32.to_le_bytes()); // LINKTYPE_RAW
}

/// One record: its header (time, stored and original length) and the stored bytes.
fn record(buf: &mut Vec<u8>, t: Time, stored: &[u8], original_len: u32) {
    buf.extend_from_slice(&((t.0 / 1_000_000_000) as u32).to_le_bytes());
    buf.extend_from_slice(&((t.0 % 1_000_000_000) as u32).to_le_bytes());
    buf.extend_from_slice(&(stored.len() as u32).to_le_bytes());
    buf.extend_from_slice(&original_len.to_le_bytes());
    buf.extend_from_slice(stored);
}

/// A capture written as it goes: the same file [`PcapWriter::file`] gives, in pieces. Records
/// may come a little out of time order (a WLAN reports a transmission when it decides the
/// exchange); each is held until the capture has seen one `horizon` later, then written in
/// time order (ties keep their order). A record older than what was already written — later
/// than the horizon allowed — is written at once and counted in [`PcapStream::late`].
#[derive(Debug)]
pub struct PcapStream {
    horizon: Time,
    /// (time, arrival order) → (stored bytes, original length), until written.
    held: std::collections::BTreeMap<(Time, u64), (Vec<u8>, u32)>,
    taken: u64,
    latest: Time,
    written_up_to: Time,
    pending: Vec<u8>,
    /// Records that came after later ones had been written (beyond the horizon).
    pub late: u64,
}

impl PcapStream {
    /// A stream whose first bytes ([`PcapStream::move_ready`]) are the file's header.
    pub fn new(horizon: crate::Duration) -> Self {
        let mut pending = Vec::with_capacity(24);
        file_header(&mut pending);
        PcapStream { horizon: Time(horizon.0), held: Default::default(), taken: 0, latest: Time(0), written_up_to: Time(0), pending, late: 0 }
    }

    /// Takes a real packet's bytes at `t`, at most `snaplen` of them.
    pub fn record_bytes(&mut self, t: Time, bytes: &[u8], snaplen: usize) {
        let stored = bytes[..bytes.len().min(snaplen)].to_vec();
        if t < self.written_up_to {
            self.late += 1;
            record(&mut self.pending, t, &stored, bytes.len() as u32);
            return;
        }
        self.held.insert((t, self.taken), (stored, bytes.len() as u32));
        self.taken += 1;
        self.latest = self.latest.max(t);
        let until = Time(self.latest.0.saturating_sub(self.horizon.0));
        while let Some(entry) = self.held.first_entry() {
            if entry.key().0 >= until {
                break;
            }
            let ((at, _), (stored, len)) = entry.remove_entry();
            record(&mut self.pending, at, &stored, len);
            self.written_up_to = at;
        }
    }

    /// Appends the bytes ready to be written to `out` (and forgets them; the stream keeps its
    /// buffer, so a packet at a time costs no allocation).
    pub fn move_ready(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.pending);
    }

    /// Appends every record still held, in time order, to `out`: the end of the file.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        for ((at, _), (stored, len)) in std::mem::take(&mut self.held) {
            record(&mut self.pending, at, &stored, len);
        }
        self.move_ready(out);
    }

    /// Records held, waiting for the horizon.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_writes_the_same_file_as_the_writer_holding_only_its_horizon() {
        // 1 000 records 100 µs apart, every tenth reported 3 ms ahead of its neighbours (a WLAN
        // deciding an exchange early); a 10 ms horizon. The streamed file is the writer's byte
        // for byte, and the stream holds only the records of its horizon.
        let mut w = PcapWriter::new();
        let mut st = PcapStream::new(crate::Duration(10_000_000));
        let mut file = Vec::new();
        st.move_ready(&mut file);
        let mut most_held = 0;
        for i in 0..1000u64 {
            let t = Time(1_000_000_000 + i * 100_000 + if i % 10 == 0 { 3_000_000 } else { 0 });
            let bytes = vec![(i % 251) as u8; 40 + (i % 7) as usize];
            w.record_bytes(t, &bytes, 44);
            st.record_bytes(t, &bytes, 44);
            st.move_ready(&mut file);
            most_held = most_held.max(st.held());
        }
        st.finish(&mut file);
        assert_eq!(file, w.file());
        assert_eq!(st.late, 0);
        // Records 100 µs apart: a 10 ms horizon plus a record 3 ms ahead holds at most
        // (10 + 3) ms / 100 µs + 1 = 131 (hand count).
        assert!(most_held <= 131, "{most_held}");
        // One from before what was written is written at once and counted.
        let mut st = PcapStream::new(crate::Duration(1_000));
        st.record_bytes(Time(10_000), &[1; 20], 65_535);
        st.record_bytes(Time(20_000), &[2; 20], 65_535);
        st.record_bytes(Time(5_000), &[3; 20], 65_535);
        assert_eq!(st.late, 1);
    }

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
