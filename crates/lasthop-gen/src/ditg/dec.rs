//! ITGDec's summary (`ITGDec LOG`, its `-v` output), reproduced to every printed digit.
//!
//! Source: `src/ITGDec/ITGDec.cpp` of D-ITG 2.8.1 (r1023), functions `main` and `setline`,
//! checked against Debian's `ITGDec` binary on logs of the real ITGSend/ITGRecv
//! (tests/data/ditg). Per flow — flowId, source and destination address and port, records in
//! file order, d_i = rx_i − tx_i in seconds of the day:
//! - total time = max rx − min rx; packets N; bytes Σ size;
//! - min, max, mean of d_i; standard deviation √(Σd²/N − mean²) (population, 0 if not > 0);
//! - average jitter Σ_{i≥2} |d_i − d_{i−1}| / (N − 1) over consecutive *received* records;
//! - bitrate bytes·8/1000/total time (kbit/s), packet rate N / total time (0 if time ≤ 0);
//! - dropped = maxSeq − N + duplicates, the first sequence number taken as 1 (so packets lost
//!   before the first received one count, those after the last never do); loss % =
//!   dropped / (N + dropped); average loss-burst size = dropped / loss events, where a loss
//!   event is a record that jumps past the next expected sequence number, taken back when a
//!   late record fills a gap. Its integer types are kept (u32 sequence numbers and event
//!   counts, u64 packet counts), wrap-arounds included.
//!
//! The TOTAL section is computed as ITGDec does, quirks included: delay mean and deviation
//! over all records; *jitter over consecutive records of the whole file, whatever their flows*;
//! total time from the earliest rx of any record to the latest last-rx of any flow; dropped
//! packets summed in a 32-bit counter and its percentage computed as `(u32)(100·dropped)`;
//! min/max start at 90000 / −86400 (printed as such for an empty log, with a `-nan` mean).
//! Times are time of day: a flow across midnight gets negative delays and total times, as in
//! ITGDec. Records with an hour > 24, a minute > 59 or a second outside [0, 59.999999] are
//! ITGDec's "error lines": counted and otherwise ignored.
//!
//! Memory is one entry per flow; records are streamed. Not reproduced: ITGDec's banner lines
//! (version, compile-time options), its stderr spinner, its options other than the summary
//! and `-c` (see [`super::series`]), its silent dropping of a truncated last record (lasthop
//! refuses the file), and address bytes that are not UTF-8 (printed as U+FFFD, ITGDec prints
//! them raw). The NaN signs of garbage records (a NaN second passes ITGDec's checks) are not
//! chased: the deliberate 0/0 cases (empty log, single-record series) print `-nan` as it does.

use super::cfmt::{self, div};
use super::record::{Addr, Record};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The identity of a flow in ITGDec: flowId, addresses (compared as C strings) and ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    pub flow_id: u32,
    pub src_addr: Addr,
    pub src_port: u32,
    pub dst_addr: Addr,
    pub dst_port: u32,
}

impl FlowKey {
    /// The key of a record; address bytes after the first NUL are ignored, as `strcmp` does.
    pub fn of(r: &Record) -> Self {
        FlowKey { flow_id: r.flow_id, src_addr: r.src_addr.canonical(), src_port: r.src_port, dst_addr: r.dst_addr.canonical(), dst_port: r.dst_port }
    }
}

/// Delay sums of one flow (or of the whole file), in seconds.
#[derive(Clone, Copy, Debug)]
struct DelayAcc {
    sum: f64,
    sq_sum: f64,
    min: f64,
    max: f64,
    last: f64,
    jitter_sum: f64,
}

/// ITGDec's sequence-number bookkeeping of one flow (`setline`), with its C integer types.
#[derive(Clone, Copy, Debug, Default)]
struct SeqAcc {
    lost: u64,
    dup: u32,
    max_seq: u32,
    loss_events: u32,
}

/// Sequence numbers start at 1 for ITGDec (`minSeq = 1` whatever the log holds).
const MIN_SEQ: u32 = 1;

impl SeqAcc {
    fn first(seq: u32) -> Self {
        SeqAcc { lost: 0, dup: 0, max_seq: seq, loss_events: 0 }
    }

    /// A further record of the flow; `received` already counts it.
    fn push(&mut self, seq: u32, received: u64) {
        self.max_seq = self.max_seq.max(seq);
        if seq as u64 > self.lost.wrapping_add(received) {
            self.loss_events = self.loss_events.wrapping_add(1);
        }
        let span = self.max_seq.wrapping_sub(MIN_SEQ).wrapping_add(1) as u64;
        if span < received.wrapping_sub(self.dup as u64) {
            // More records than sequence numbers: the excess are duplicates.
            self.dup = (self.max_seq.wrapping_neg().wrapping_add(MIN_SEQ) as u64).wrapping_add(received).wrapping_sub(1) as u32;
            self.lost = 0;
        } else {
            let lost = (self.max_seq.wrapping_sub(MIN_SEQ) as u64).wrapping_sub(received).wrapping_add(self.dup as u64).wrapping_add(1);
            if lost < self.lost {
                self.loss_events = self.loss_events.wrapping_sub(1); // a late record filled a gap
            }
            self.lost = lost;
        }
    }
}

/// One flow as ITGDec accumulates it.
#[derive(Clone, Debug)]
pub struct FlowAcc {
    pub key: FlowKey,
    /// Records decoded (N).
    pub packets: u64,
    bytes: f64,
    first_rx: f64,
    last_rx: f64,
    /// rx of the flow's first record in file order (where its `-c` series starts).
    pub(crate) rx_of_first_record: f64,
    delay: DelayAcc,
    seq: SeqAcc,
}

impl FlowAcc {
    fn new(key: FlowKey, r: &Record, rx: f64, d: f64) -> Self {
        FlowAcc {
            key,
            packets: 1,
            bytes: r.size as f64,
            first_rx: rx,
            last_rx: rx,
            rx_of_first_record: rx,
            delay: DelayAcc { sum: d, sq_sum: d * d, min: d, max: d, last: d, jitter_sum: 0.0 },
            seq: SeqAcc::first(r.seq),
        }
    }

    fn push(&mut self, r: &Record, rx: f64, d: f64) {
        self.bytes += r.size as f64;
        self.packets += 1;
        let a = &mut self.delay;
        a.sum += d;
        a.sq_sum += d * d;
        if d > a.max {
            a.max = d;
        }
        if d < a.min {
            a.min = d;
        }
        if rx < self.first_rx {
            self.first_rx = rx;
        }
        if rx > self.last_rx {
            self.last_rx = rx;
        }
        a.jitter_sum += (a.last - d).abs();
        a.last = d;
        self.seq.push(r.seq, self.packets);
    }
}

/// Streams records into ITGDec's per-flow and whole-file sums.
#[derive(Clone, Debug)]
pub struct Decoder {
    flows: Vec<FlowAcc>,
    index: BTreeMap<FlowKey, usize>,
    all: DelayAcc,
    /// Earliest rx of any valid record (ITGDec's `secfirstline_gl`, 90000 before any).
    first_rx: f64,
    valid: u64,
    errors: u64,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            flows: Vec::new(),
            index: BTreeMap::new(),
            all: DelayAcc { sum: 0.0, sq_sum: 0.0, min: 0.0, max: 0.0, last: 0.0, jitter_sum: 0.0 },
            first_rx: 90000.0,
            valid: 0,
            errors: 0,
        }
    }
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// One record, in file order. Returns false for one of ITGDec's "error lines".
    pub fn push(&mut self, r: &Record) -> bool {
        if !r.itgdec_valid() {
            self.errors += 1;
            return false;
        }
        let tx = r.tx.seconds_of_day();
        let rx = r.rx.seconds_of_day();
        let d = rx - tx;
        let key = FlowKey::of(r);
        match self.index.get(&key) {
            Some(&i) => self.flows[i].push(r, rx, d),
            None => {
                self.index.insert(key, self.flows.len());
                self.flows.push(FlowAcc::new(key, r, rx, d));
            }
        }
        self.all.sum += d;
        self.all.sq_sum += d * d;
        if rx < self.first_rx {
            self.first_rx = rx;
        }
        if self.valid > 0 {
            self.all.jitter_sum += (self.all.last - d).abs();
        }
        self.all.last = d;
        self.valid += 1;
        true
    }

    /// Flows in order of first appearance.
    pub fn flows(&self) -> &[FlowAcc] {
        &self.flows
    }

    /// The index of a record's flow (after it was pushed).
    pub fn flow_index(&self, r: &Record) -> Option<usize> {
        self.index.get(&FlowKey::of(r)).copied()
    }

    /// Earliest rx of any valid record, seconds of the day (90000 before any).
    pub fn first_rx(&self) -> f64 {
        self.first_rx
    }

    /// Latest rx of any valid record, seconds of the day (the first rx before any).
    pub fn last_rx(&self) -> f64 {
        self.flows.iter().map(|f| f.last_rx).fold(self.first_rx, f64::max)
    }

    /// Records ITGDec rejects (its "error lines").
    pub fn error_lines(&self) -> u64 {
        self.errors
    }

    /// ITGDec's summary.
    pub fn summary(&self) -> Summary {
        let flows: Vec<FlowStats> = self.flows.iter().map(FlowStats::of).collect();
        let total = self.total();
        Summary { empty: self.valid == 0, flows, total }
    }

    fn total(&self) -> TotalStats {
        let (mut last_rx, mut packets, mut bytes) = (0.0f64, 0.0f64, 0.0f64);
        let (mut max_delay, mut min_delay) = (-86400.0f64, 90000.0f64);
        let (mut lost, mut loss_events) = (0u32, 0u32);
        for f in &self.flows {
            packets += f.packets as f64;
            bytes += f.bytes;
            lost = (lost as u64).wrapping_add(f.seq.lost) as u32;
            loss_events = loss_events.wrapping_add(f.seq.loss_events);
            if last_rx < f.last_rx {
                last_rx = f.last_rx;
            }
            if max_delay < f.delay.max {
                max_delay = f.delay.max;
            }
            if min_delay > f.delay.min {
                min_delay = f.delay.min;
            }
        }
        let mean = div(self.all.sum, packets);
        let var = div(self.all.sq_sum, packets) - mean * mean;
        TotalStats {
            flows: self.flows.len() as u64,
            total_time: last_rx - self.first_rx,
            packets,
            min_delay,
            max_delay,
            mean_delay: mean,
            jitter: if packets > 1.0 { self.all.jitter_sum / (packets - 1.0) } else { 0.0 },
            std_delay: if var > 0.0 { var.sqrt() } else { 0.0 },
            bytes,
            lost,
            loss_events,
            error_lines: self.errors,
        }
    }
}

/// One flow's block of the summary, as ITGDec computes it.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowStats {
    pub key: FlowKey,
    pub total_time: f64,
    pub packets: u64,
    pub min_delay: f64,
    pub max_delay: f64,
    pub mean_delay: f64,
    pub jitter: f64,
    pub std_delay: f64,
    pub bytes: f64,
    pub lost: u64,
    pub loss_events: u32,
}

impl FlowStats {
    fn of(f: &FlowAcc) -> Self {
        let n = f.packets as f64;
        let mean = f.delay.sum / n;
        let var = f.delay.sq_sum / n - mean * mean;
        FlowStats {
            key: f.key,
            total_time: f.last_rx - f.first_rx,
            packets: f.packets,
            min_delay: f.delay.min,
            max_delay: f.delay.max,
            mean_delay: mean,
            jitter: if f.packets > 1 { f.delay.jitter_sum / (f.packets - 1) as f64 } else { 0.0 },
            std_delay: if var > 0.0 { var.sqrt() } else { 0.0 },
            bytes: f.bytes,
            lost: f.seq.lost,
            loss_events: f.seq.loss_events,
        }
    }
}

/// The TOTAL section.
#[derive(Clone, Debug, PartialEq)]
pub struct TotalStats {
    pub flows: u64,
    pub total_time: f64,
    pub packets: f64,
    pub min_delay: f64,
    pub max_delay: f64,
    pub mean_delay: f64,
    pub jitter: f64,
    pub std_delay: f64,
    pub bytes: f64,
    pub lost: u32,
    pub loss_events: u32,
    pub error_lines: u64,
}

/// ITGDec's summary: per-flow blocks and the TOTAL section.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub empty: bool,
    pub flows: Vec<FlowStats>,
    pub total: TotalStats,
}

const RULE: &str = "----------------------------------------------------------";

impl Summary {
    /// The text ITGDec prints on stdout after its two banner lines.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if self.empty {
            s.push_str("Empty log file\n");
        }
        for f in &self.flows {
            write_flow(&mut s, f);
        }
        write_total(&mut s, &self.total);
        s
    }
}

fn line(s: &mut String, label: &str, value: String, unit: &str) {
    let _ = writeln!(s, "{label:<25}= {value}{unit}");
}

fn write_flow(s: &mut String, f: &FlowStats) {
    let k = &f.key;
    let _ = writeln!(s, "{RULE}\nFlow number: {}\nFrom {}:{}\nTo    {}:{}\n{RULE}", k.flow_id, k.src_addr.text(), k.src_port, k.dst_addr.text(), k.dst_port);
    let t = f.total_time;
    line(s, "Total time", cfmt::f(t, 13, 6), " s");
    line(s, "Total packets", cfmt::u(f.packets, 13), "");
    line(s, "Minimum delay", cfmt::f(f.min_delay, 13, 6), " s");
    line(s, "Maximum delay", cfmt::f(f.max_delay, 13, 6), " s");
    line(s, "Average delay", cfmt::f(f.mean_delay, 13, 6), " s");
    line(s, "Average jitter", cfmt::f(f.jitter, 13, 6), " s");
    line(s, "Delay standard deviation", cfmt::f(f.std_delay, 13, 6), " s");
    line(s, "Bytes received", cfmt::f(f.bytes, 13, 0), "");
    let (bitrate, rate) = if t > 0.0 { (f.bytes * 8.0 / 1000.0 / t, f.packets as f64 / t) } else { (0.0, 0.0) };
    line(s, "Average bitrate", cfmt::f(bitrate, 13, 6), " Kbit/s");
    line(s, "Average packet rate", cfmt::f(rate, 13, 6), " pkt/s");
    if f.packets > 0 && f.lost > 0 {
        let pct = 100.0 * f.lost as f64 / f.packets.wrapping_add(f.lost) as f64;
        line(s, "Packets dropped", format!("{} ({} %)", cfmt::u(f.lost, 13), cfmt::f(pct, 3, 2)), "");
        line(s, "Average loss-burst size", cfmt::f(div(f.lost as f64, f.loss_events as f64), 13, 6), " pkt");
    } else {
        line(s, "Packets dropped", format!("{} ({} %)", cfmt::u(0, 13), cfmt::f(0.0, 3, 2)), "");
        line(s, "Average loss-burst size", cfmt::f(0.0, 13, 6), " pkt");
    }
    let _ = writeln!(s, "{RULE}");
}

fn write_total(s: &mut String, t: &TotalStats) {
    let _ = writeln!(s, "\n__________________________________________________________\n****************  TOTAL RESULTS   ******************\n__________________________________________________________");
    line(s, "Number of flows", cfmt::u(t.flows, 13), "");
    line(s, "Total time", cfmt::f(t.total_time, 13, 6), " s");
    line(s, "Total packets", cfmt::f(t.packets, 13, 0), "");
    line(s, "Minimum delay", cfmt::f(t.min_delay, 13, 6), " s");
    line(s, "Maximum delay", cfmt::f(t.max_delay, 13, 6), " s");
    line(s, "Average delay", cfmt::f(t.mean_delay, 13, 6), " s");
    line(s, "Average jitter", cfmt::f(t.jitter, 13, 6), " s");
    line(s, "Delay standard deviation", cfmt::f(t.std_delay, 13, 6), " s");
    line(s, "Bytes received", cfmt::f(t.bytes, 13, 0), "");
    let tt = t.total_time;
    let (bitrate, rate) = if tt > 0.0 { (t.bytes * 8.0 / 1000.0 / tt, t.packets / tt) } else { (0.0, 0.0) };
    line(s, "Average bitrate", cfmt::f(bitrate, 13, 6), " Kbit/s");
    line(s, "Average packet rate", cfmt::f(rate, 13, 6), " pkt/s");
    if t.packets > 0.0 && t.lost > 0 {
        // (double)(100 * pktloss / (pktrecv + pktloss)): the product in ITGDec's u32.
        let pct = 100u32.wrapping_mul(t.lost) as f64 / (t.packets + t.lost as f64);
        line(s, "Packets dropped", format!("{} ({} %)", cfmt::u(t.lost as u64, 13), cfmt::f(pct, 3, 2)), "");
        line(s, "Average loss-burst size", cfmt::f(div(t.lost as f64, t.loss_events as f64), 13, 6), " pkt");
    } else {
        line(s, "Packets dropped", format!("{} ({} %)", cfmt::f(0.0, 13, 0), cfmt::f(0.0, 3, 2)), "");
        line(s, "Average loss-burst size", cfmt::f(0.0, 13, 0), " pkt");
    }
    line(s, "Error lines", cfmt::u(t.error_lines, 13), "");
    let _ = writeln!(s, "{RULE}");
}
