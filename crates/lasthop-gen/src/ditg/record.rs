//! D-ITG 2.8.1's binary log record, read and written.
//!
//! ITGSend (`-l`), ITGRecv (`-x`) and ITGLog write the same record: a packed C `struct info` of
//! 144 bytes in host byte order (little-endian on every platform Debian's d-itg runs on), no
//! header, no checksum. Python's `struct.Struct('<9I46s46sdd')`:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0, 4, 8, 12 | u32 | flowId, seqNum, srcPort, destPort |
//! | 16, 20 | u32 | txTime hour (of the UTC day), minute |
//! | 24, 28 | u32 | rxTime hour, minute |
//! | 32 | u32 | size (L4 payload bytes) |
//! | 36, 82 | char\[46\] | srcAddr, destAddr (NUL-padded text) |
//! | 128, 136 | f64 | txTime, rxTime seconds within the minute (µs resolution) |
//!
//! A sender log in one-way mode has tx = rx = the send time; a receiver log has tx from the
//! packet's payload and rx = the receive time. Times are *time of day* (`gettimeofday`), so a
//! flow across 00:00 UTC wraps; D-ITG's ITGDec ignores that (see [`super::dec`]).
//!
//! Reading is streaming ([`LogReader`], one record at a time through a buffered reader): a
//! multi-GB log is never held in memory. A file whose length is not a multiple of 144 ends in a
//! truncated record: ITGDec silently drops it (its `fread` returns 0 records); lasthop refuses
//! the file and names it and the byte offset, since a cut-off log usually means the writer died
//! or the file is not a D-ITG log at all. Addresses are kept as the raw 46 bytes, so a record
//! read and written again is byte-identical.

use super::DitgError;
use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::Path;

/// Bytes of one record.
pub const RECORD_LEN: usize = 144;
/// Bytes of an address field (INET6_ADDRSTRLEN).
pub const ADDR_LEN: usize = 46;

/// A time of day as D-ITG logs it: hour and minute as integers, seconds as a double.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeOfDay {
    pub hour: u32,
    pub minute: u32,
    pub second: f64,
}

impl TimeOfDay {
    /// Seconds since 00:00, computed as ITGDec does (`(double)h * 3600 + (double)m * 60 + s`,
    /// left to right), so that every rounding matches its output.
    pub fn seconds_of_day(&self) -> f64 {
        self.hour as f64 * 3600.0 + self.minute as f64 * 60.0 + self.second
    }

    /// The time of day `ns` nanoseconds after 00:00 UTC (taken modulo one day), at the
    /// microsecond resolution of D-ITG's `gettimeofday` timestamps (truncated, as D-ITG does).
    pub fn from_nanos_of_day(ns: u64) -> Self {
        let us = (ns / 1_000) % 86_400_000_000;
        let minute_us = us % 60_000_000;
        TimeOfDay {
            hour: (us / 3_600_000_000) as u32,
            minute: ((us / 60_000_000) % 60) as u32,
            // D-ITG: (double)(tv_sec % 60) + (double)tv_usec / 1e6
            second: (minute_us / 1_000_000) as f64 + (minute_us % 1_000_000) as f64 / 1e6,
        }
    }

    /// Whether ITGDec accepts this time: hour ≤ 24, minute ≤ 59, 0 ≤ second ≤ 59.999999 (a
    /// record failing this is one of its "error lines"; a NaN second passes, as in ITGDec).
    pub fn itgdec_valid(&self) -> bool {
        !(self.hour > 24 || self.minute > 59 || self.second > 59.999999 || self.second < 0.0)
    }
}

/// An address field: the text of an IPv4 or IPv6 address, NUL-padded to 46 bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr(pub [u8; ADDR_LEN]);

impl Addr {
    /// The field holding `text` (at most 45 bytes; longer text is cut, as `strncpy` would).
    pub fn new(text: &str) -> Self {
        let mut a = [0u8; ADDR_LEN];
        let n = text.len().min(ADDR_LEN - 1);
        a[..n].copy_from_slice(&text.as_bytes()[..n]);
        Addr(a)
    }

    /// The bytes up to the first NUL (what C's `strcmp` and `%s` see).
    pub fn text_bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(ADDR_LEN);
        &self.0[..end]
    }

    /// The same text with every byte after the first NUL zeroed (two fields C's `strcmp`
    /// finds equal are then equal).
    pub fn canonical(&self) -> Addr {
        let mut a = [0u8; ADDR_LEN];
        let t = self.text_bytes();
        a[..t.len()].copy_from_slice(t);
        Addr(a)
    }

    /// The address as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(self.text_bytes()).into_owned()
    }
}

impl std::fmt::Debug for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.text())
    }
}

/// One log record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Record {
    pub flow_id: u32,
    pub seq: u32,
    pub src_port: u32,
    pub dst_port: u32,
    pub tx: TimeOfDay,
    pub rx: TimeOfDay,
    /// L4 payload bytes.
    pub size: u32,
    pub src_addr: Addr,
    pub dst_addr: Addr,
}

fn u32_at(b: &[u8; RECORD_LEN], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn f64_at(b: &[u8; RECORD_LEN], at: usize) -> f64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    f64::from_le_bytes(x)
}

impl Record {
    pub fn decode(b: &[u8; RECORD_LEN]) -> Self {
        let mut src = [0u8; ADDR_LEN];
        let mut dst = [0u8; ADDR_LEN];
        src.copy_from_slice(&b[36..82]);
        dst.copy_from_slice(&b[82..128]);
        Record {
            flow_id: u32_at(b, 0),
            seq: u32_at(b, 4),
            src_port: u32_at(b, 8),
            dst_port: u32_at(b, 12),
            tx: TimeOfDay { hour: u32_at(b, 16), minute: u32_at(b, 20), second: f64_at(b, 128) },
            rx: TimeOfDay { hour: u32_at(b, 24), minute: u32_at(b, 28), second: f64_at(b, 136) },
            size: u32_at(b, 32),
            src_addr: Addr(src),
            dst_addr: Addr(dst),
        }
    }

    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
        let words = [
            self.flow_id,
            self.seq,
            self.src_port,
            self.dst_port,
            self.tx.hour,
            self.tx.minute,
            self.rx.hour,
            self.rx.minute,
            self.size,
        ];
        for (i, w) in words.iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        b[36..82].copy_from_slice(&self.src_addr.0);
        b[82..128].copy_from_slice(&self.dst_addr.0);
        b[128..136].copy_from_slice(&self.tx.second.to_le_bytes());
        b[136..144].copy_from_slice(&self.rx.second.to_le_bytes());
        b
    }

    /// The one-way delay as ITGDec computes it: rx − tx in seconds of the day.
    pub fn itgdec_delay(&self) -> f64 {
        self.rx.seconds_of_day() - self.tx.seconds_of_day()
    }

    /// Whether ITGDec decodes this record (else it counts it among its "error lines").
    pub fn itgdec_valid(&self) -> bool {
        self.tx.itgdec_valid() && self.rx.itgdec_valid()
    }
}

/// Reads records one at a time from a log.
pub struct LogReader<R: Read> {
    inner: R,
    name: String,
    offset: u64,
    done: bool,
}

impl LogReader<BufReader<File>> {
    /// Opens a log file for streaming.
    pub fn open(path: &Path) -> Result<Self, DitgError> {
        // A FIFO or a device would block or never end: a log is a regular file.
        lasthop_scenario::input::regular_file(path).map_err(|why| DitgError::io(path, std::io::Error::new(std::io::ErrorKind::InvalidInput, why)))?;
        let f = File::open(path).map_err(|e| DitgError::io(path, e))?;
        Ok(LogReader::new(BufReader::with_capacity(1 << 20, f), path.display().to_string()))
    }
}

impl<R: Read> LogReader<R> {
    /// Reads from `inner`; `name` names the source in errors.
    pub fn new(inner: R, name: impl Into<String>) -> Self {
        LogReader { inner, name: name.into(), offset: 0, done: false }
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next record, None at the end, or an error naming the file and the byte offset of a
    /// truncated record.
    pub fn next_record(&mut self) -> Result<Option<Record>, DitgError> {
        if self.done {
            return Ok(None);
        }
        let mut buf = [0u8; RECORD_LEN];
        let mut got = 0;
        while got < RECORD_LEN {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.done = true;
                    return Err(DitgError::Io { path: self.name.clone(), source: e });
                }
            }
        }
        if got == 0 {
            self.done = true;
            return Ok(None);
        }
        if got < RECORD_LEN {
            self.done = true;
            return Err(DitgError::Truncated { path: self.name.clone(), offset: self.offset, len: got });
        }
        self.offset += RECORD_LEN as u64;
        Ok(Some(Record::decode(&buf)))
    }
}

impl<R: Read> Iterator for LogReader<R> {
    type Item = Result<Record, DitgError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// What a generator knows about one packet, for [`LogWriter::write_packet`].
#[derive(Clone, Copy, Debug)]
pub struct PacketLog<'a> {
    pub flow_id: u32,
    pub seq: u32,
    pub src: (&'a str, u16),
    pub dst: (&'a str, u16),
    /// Send time, nanoseconds since 00:00 UTC of any day (taken modulo one day).
    pub tx_ns_of_day: u64,
    /// Receive time (the send time again in a sender's one-way log), same clock.
    pub rx_ns_of_day: u64,
    /// L4 payload bytes.
    pub size: u32,
}

/// Writes a D-ITG binary log that ITGDec decodes.
pub struct LogWriter<W: Write> {
    out: W,
    name: String,
    records: u64,
}

impl LogWriter<BufWriter<File>> {
    /// Creates (truncates) a log file.
    pub fn create(path: &Path) -> Result<Self, DitgError> {
        let f = File::create(path).map_err(|e| DitgError::io(path, e))?;
        Ok(LogWriter::new(BufWriter::with_capacity(1 << 16, f), path.display().to_string()))
    }
}

impl<W: Write> LogWriter<W> {
    pub fn new(out: W, name: impl Into<String>) -> Self {
        LogWriter { out, name: name.into(), records: 0 }
    }

    pub fn write_record(&mut self, r: &Record) -> Result<(), DitgError> {
        self.out.write_all(&r.encode()).map_err(|e| DitgError::Io { path: self.name.clone(), source: e })?;
        self.records += 1;
        Ok(())
    }

    /// One packet, its times as UTC times of day at µs resolution.
    pub fn write_packet(&mut self, p: &PacketLog<'_>) -> Result<(), DitgError> {
        self.write_record(&Record {
            flow_id: p.flow_id,
            seq: p.seq,
            src_port: p.src.1 as u32,
            dst_port: p.dst.1 as u32,
            tx: TimeOfDay::from_nanos_of_day(p.tx_ns_of_day),
            rx: TimeOfDay::from_nanos_of_day(p.rx_ns_of_day),
            size: p.size,
            src_addr: Addr::new(p.src.0),
            dst_addr: Addr::new(p.dst.0),
        })
    }

    /// Writes out what is buffered (the file then holds every record written so far).
    pub fn flush(&mut self) -> Result<(), DitgError> {
        self.out.flush().map_err(|e| DitgError::Io { path: self.name.clone(), source: e })
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flushes and returns the inner writer.
    pub fn finish(mut self) -> Result<W, DitgError> {
        self.out.flush().map_err(|e| DitgError::Io { path: self.name.clone(), source: e })?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec() -> Record {
        Record {
            flow_id: 3,
            seq: 7,
            src_port: 40000,
            dst_port: 8999,
            tx: TimeOfDay { hour: 23, minute: 59, second: 59.999999 },
            rx: TimeOfDay { hour: 0, minute: 0, second: 0.000012 },
            size: 512,
            src_addr: Addr::new("10.0.0.1"),
            dst_addr: Addr::new("fe80::1"),
        }
    }

    #[test]
    fn encode_decode_round_trip_and_layout() {
        let r = rec();
        let b = r.encode();
        assert_eq!(Record::decode(&b), r);
        // Offsets of the format table (D-ITG's struct info, ITG.h): seq at 4, size at 32,
        // srcAddr at 36, destAddr at 82, tx seconds at 128.
        assert_eq!(&b[4..8], &7u32.to_le_bytes());
        assert_eq!(&b[32..36], &512u32.to_le_bytes());
        assert_eq!(&b[36..44], b"10.0.0.1");
        assert_eq!(&b[82..89], b"fe80::1");
        assert_eq!(&b[128..136], &59.999999f64.to_le_bytes());
    }

    #[test]
    fn truncated_record_names_file_and_offset() {
        let mut bytes = rec().encode().to_vec();
        bytes.extend_from_slice(&rec().encode()[..100]);
        let mut rd = LogReader::new(&bytes[..], "x.log");
        assert!(rd.next_record().unwrap().is_some());
        let e = rd.next_record().unwrap_err().to_string();
        assert!(e.contains("x.log") && e.contains("byte 144") && e.contains("100 of"), "{e}");
        assert!(rd.next_record().unwrap().is_none());
    }

    #[test]
    fn time_of_day_from_nanos() {
        // 13:05:07.123456789 -> 13, 5, 7.123456 (µs truncated, as gettimeofday gives).
        let ns = ((13 * 3600 + 5 * 60 + 7) * 1_000_000_000u64) + 123_456_789;
        let t = TimeOfDay::from_nanos_of_day(ns);
        assert_eq!((t.hour, t.minute, t.second), (13, 5, 7.123456));
        // One day later: the same time of day.
        assert_eq!(TimeOfDay::from_nanos_of_day(ns + 86_400_000_000_000), t);
    }
}
