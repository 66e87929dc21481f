//! Per-packet records, streamed to disk as they happen (a `BufWriter` of fixed 32-byte records,
//! little-endian), so memory does not grow with a run's length; results are computed by reading
//! the files back ([`crate::results`]).
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | flow id |
//! | 4 | 4 | sequence number |
//! | 8 | 4 | payload bytes (header included) |
//! | 12 | 4 | kind: 0 sent (sender), 1 received (receiver), 2 echo received (sender, RTT meter) |
//! | 16 | 8 | send time, ns (sender's clock) |
//! | 24 | 8 | receive time, ns (the receiving end's clock); 0 in a "sent" record |
//!
//! The sender writes `sender.lhr`, the receiver `receiver.lhr` (in arrival order, duplicates and
//! replays included: deciding what they are is the results' job). Left out: D-ITG's binary log
//! format (the `ditg` module's job).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

pub const RECORD_LEN: usize = 32;

/// What a record says happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    Sent = 0,
    Received = 1,
    EchoReceived = 2,
}

/// One packet event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub flow: u32,
    pub seq: u32,
    pub bytes: u32,
    pub kind: RecordKind,
    pub tx_ns: u64,
    pub rx_ns: u64,
}

impl Record {
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
        b[0..4].copy_from_slice(&self.flow.to_le_bytes());
        b[4..8].copy_from_slice(&self.seq.to_le_bytes());
        b[8..12].copy_from_slice(&self.bytes.to_le_bytes());
        b[12..16].copy_from_slice(&(self.kind as u32).to_le_bytes());
        b[16..24].copy_from_slice(&self.tx_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.rx_ns.to_le_bytes());
        b
    }

    /// None for a record of an unknown kind (a damaged file).
    pub fn decode(b: &[u8; RECORD_LEN]) -> Option<Record> {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let kind = match u32_at(12) {
            0 => RecordKind::Sent,
            1 => RecordKind::Received,
            2 => RecordKind::EchoReceived,
            _ => return None,
        };
        Some(Record { flow: u32_at(0), seq: u32_at(4), bytes: u32_at(8), kind, tx_ns: u64_at(16), rx_ns: u64_at(24) })
    }
}

/// Appends records to a file through a 1 MiB buffer.
pub struct RecordWriter {
    out: BufWriter<File>,
    pub written: u64,
}

impl RecordWriter {
    pub fn create(path: &Path) -> io::Result<RecordWriter> {
        Ok(RecordWriter { out: BufWriter::with_capacity(1 << 20, File::create(path)?), written: 0 })
    }

    pub fn push(&mut self, r: &Record) -> io::Result<()> {
        self.written += 1;
        self.out.write_all(&r.encode())
    }

    /// Writes out the buffer and asks the kernel to keep the file (`fsync`): what a signal
    /// handler's exit path calls so no logged packet is lost.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_data()
    }
}

/// Reads a record file from the start; a trailing partial record (a file cut short) is ignored.
pub fn read_records(path: &Path) -> io::Result<impl Iterator<Item = Record>> {
    let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut b = [0u8; RECORD_LEN];
    Ok(std::iter::from_fn(move || loop {
        match r.read_exact(&mut b) {
            Ok(()) => {
                if let Some(rec) = Record::decode(&b) {
                    return Some(rec);
                }
            }
            Err(_) => return None,
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_a_file_and_a_cut_tail_is_ignored() {
        let dir = std::env::temp_dir().join(format!("lh-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.lhr");
        let recs: Vec<Record> = (0..1000u32)
            .map(|i| Record { flow: i % 3, seq: i, bytes: 40 + i, kind: RecordKind::Received, tx_ns: i as u64 * 7, rx_ns: u64::MAX - i as u64 })
            .collect();
        let mut w = RecordWriter::create(&p).unwrap();
        for r in &recs {
            w.push(r).unwrap();
        }
        w.flush().unwrap();
        drop(w);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1000 * RECORD_LEN as u64);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(&[1, 2, 3]).unwrap(); // a cut record
        let back: Vec<Record> = read_records(&p).unwrap().collect();
        assert_eq!(back, recs);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
