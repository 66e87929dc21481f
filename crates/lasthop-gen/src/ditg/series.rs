//! ITGDec's time series `-c <ms>` (combined_stats.dat), reproduced to every printed digit.
//!
//! Source: `elabsplit` and `mergeCombined` of D-ITG 2.8.1's `ITGDec.cpp`, checked against
//! Debian's binary. Each line is `Time Bitrate Delay Jitter Loss` (`%lf`, no header):
//! - intervals of `ms` start at the earliest rx of *all* flows (g); a flow's records close the
//!   intervals before them when rx − (start of the open interval) > ms/1000, and the open
//!   interval is then the `ceil((rx − g)·1000/ms) − 1`-th;
//! - per flow and interval: bitrate = payload bytes·8/ms (kbit/s; the last, partial interval
//!   also divided by the whole `ms`), delay = mean d in seconds, jitter = mean |d_i − d_{i−1}|
//!   in seconds (the first record of a flow adds a zero term; an interval whose only record
//!   is a flow's first prints 0; a flow of a single record prints `-nan` — ITGDec's 0/0),
//!   loss = *count* of sequence numbers skipped by the records of the interval;
//!   intervals before a flow's first record, and empty ones, print 0;
//! - each flow's values are printed with `%lf` into a temporary file and read back, so they
//!   are rounded to 6 decimals before the aggregate line **sums** them over flows (delay and
//!   jitter included); a line exists while any flow has one.
//!
//! ITGDec writes one temporary file per flow and merges them; lasthop makes a second pass over
//! the log with every flow's state at once and writes a line as soon as no flow can still add
//! to it (a flow's remaining record count is known from the first pass, so its last interval
//! closes at its last record). Memory is one state per flow plus the lines some flow may still
//! add to — a few in a log written in time order.
//!
//! Differences, on purpose: ITGDec names its temporary files by flowId and addresses only, so
//! two flows that differ only in their ports (two ITGSend runs at once) overwrite each other's
//! file and its series is garbage; lasthop keeps them apart. The aggregate adds the flows'
//! rounded values in the order their intervals close rather than ITGDec's flow order, which
//! cannot change a printed digit (each term has six decimals, so their sum is exact to far
//! below the last printed one).

use super::cfmt::{self, div, lf_round_trip};
use super::dec::Decoder;
use super::record::Record;
use super::DitgError;
use std::collections::VecDeque;
use std::io::Write;

/// Sums of the open interval of one flow (ITGDec's temp* and pkt* variables).
#[derive(Clone, Debug, Default)]
struct IntervalAcc {
    bytes: f64,
    jitter_sum: f64,
    /// Records since the jitter sum restarted, plus one (ITGDec's `pktjitter`).
    jitter_n: u64,
    last_delay: f64,
    delay_sum: f64,
    delay_n: u64,
    lost: u64,
    /// Records of the flow so far, and sequence numbers found missing so far.
    seen: u64,
    lost_total: u64,
}

/// One flow's series state.
#[derive(Clone, Debug)]
struct FlowSeries {
    remaining: u64,
    /// rx of the flow's first record (None before it); intervals ending before it print 0.
    first_rx: Option<f64>,
    closed: u64,
    open_start: f64,
    /// Before the flow starts, the first line it may add a non-zero value to.
    starts_at: u64,
    acc: IntervalAcc,
}

/// Bitrate, delay, jitter, loss of one line.
type Line = [f64; 4];

/// Lines a record closes before those no flow can add to any more are written.
const CLOSE_BATCH: u64 = 4096;

/// The most combined_stats.dat lines `-c` writes (a day of a log at `-c 1` is 86.4 million,
/// ~4 GB): a tiny interval over a long log, or a damaged timestamp, would otherwise fill the
/// disk for hours. [`MAX_SERIES_LINES_ENV`] raises it.
pub const MAX_SERIES_LINES: u64 = 100_000_000;
pub const MAX_SERIES_LINES_ENV: &str = "LASTHOP_MAX_DITG_LINES";

/// The limit on `-c` lines: [`MAX_SERIES_LINES_ENV`] if set to a positive whole number, else
/// [`MAX_SERIES_LINES`].
fn max_series_lines() -> Result<u64, DitgError> {
    match std::env::var(MAX_SERIES_LINES_ENV) {
        Err(_) => Ok(MAX_SERIES_LINES),
        Ok(v) => v.trim().parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
            DitgError::Argument(format!("{MAX_SERIES_LINES_ENV}={v:?}: valid: a positive whole number of lines"))
        }),
    }
}

/// Streams the second pass over a log into combined_stats.dat lines.
pub struct CombinedStats {
    ms: f64,
    g: f64,
    flows: Vec<FlowSeries>,
    /// Lines not yet written, from line number `written` on.
    pending: VecDeque<Line>,
    written: u64,
    since_flush: u32,
    /// The most lines held at once (the memory bound: a batch while a record closes lines).
    most_held: usize,
}

impl CombinedStats {
    /// For intervals of `ms` milliseconds (> 0) over the flows the first pass found.
    pub fn new(first_pass: &Decoder, ms: f64) -> Result<Self, DitgError> {
        if !(ms > 0.0 && ms.is_finite()) {
            return Err(DitgError::Argument(format!("interval {ms} ms: the -c interval must be a positive number of milliseconds")));
        }
        let g = first_pass.first_rx();
        let lines = ((first_pass.last_rx() - g) * 1000.0 / ms).ceil() + 1.0;
        let max = max_series_lines()?;
        if lines.is_nan() || lines > max as f64 {
            return Err(DitgError::Argument(format!(
                "interval {ms} ms: the log spans {:.3} s, {lines:.0} lines of -c {ms}, above the {max} written at most; \
                 a longer interval, or {MAX_SERIES_LINES_ENV}=<lines> to raise the limit",
                first_pass.last_rx() - g
            )));
        }
        let flows = first_pass
            .flows()
            .iter()
            .map(|f| {
                // The line its first record will open: the lines it closes before are all 0.
                let rx0 = f.rx_of_first_record;
                let starts_at = if rx0 - g > ms / 1000.0 { lines_to_close(rx0, g, ms, 0) } else { 0 };
                FlowSeries { remaining: f.packets, first_rx: None, closed: 0, open_start: g, starts_at, acc: IntervalAcc::default() }
            })
            .collect();
        Ok(CombinedStats { ms, g, flows, pending: VecDeque::new(), written: 0, since_flush: 0, most_held: 0 })
    }

    /// One record of the log (in file order), of the flow `flow` of the first pass; records
    /// ITGDec rejects must be skipped by the caller, as in the first pass.
    pub fn push(&mut self, r: &Record, flow: usize, out: &mut impl Write) -> Result<(), DitgError> {
        let rx = r.rx.seconds_of_day();
        let d = rx - r.tx.seconds_of_day();
        let (ms, g) = (self.ms, self.g);
        let Some(f) = self.flows.get_mut(flow).filter(|f| f.remaining > 0) else {
            return Err(DitgError::Argument(format!("record of flow {} not seen by the first pass: the log changed while being read", r.flow_id)));
        };
        let first_rx = *f.first_rx.get_or_insert_with(|| {
            f.acc.last_delay = d;
            rx
        });
        if rx - f.open_start > ms / 1000.0 {
            // A record long after the previous one closes as many lines as fit between them
            // (82.8 million for 23 h at -c 1): written as they close, so memory holds a batch.
            let mut to_close = lines_to_close(rx, g, ms, f.closed);
            while to_close > 0 {
                let f = &mut self.flows[flow];
                let mut pending = Pending { lines: &mut self.pending, written: self.written };
                for _ in 0..to_close.min(CLOSE_BATCH) {
                    pending.add(f.closed, close_line(&mut f.acc, f.closed, ms, g, first_rx));
                    f.closed += 1;
                }
                to_close -= to_close.min(CLOSE_BATCH);
                self.most_held = self.most_held.max(self.pending.len());
                self.flush(out, false)?;
            }
            let f = &mut self.flows[flow];
            f.open_start = f.closed as f64 * ms / 1000.0 + g;
        }
        let f = &mut self.flows[flow];
        add_record(&mut f.acc, r, d);
        f.remaining -= 1;
        if f.remaining == 0 {
            Pending { lines: &mut self.pending, written: self.written }.add(f.closed, last_line(&f.acc, ms));
        }
        self.since_flush += 1;
        if self.since_flush >= 4096 || self.pending.len() > 4096 {
            self.since_flush = 0;
            self.flush(out, false)?;
        }
        Ok(())
    }

    /// Writes the remaining lines.
    pub fn finish(mut self, out: &mut impl Write) -> Result<(), DitgError> {
        self.flush(out, true)
    }

    /// Writes every line no flow can add to any more (all of them at the end).
    fn flush(&mut self, out: &mut impl Write, all: bool) -> Result<(), DitgError> {
        let ready = if all {
            u64::MAX
        } else {
            self.flows
                .iter()
                .map(|f| match (f.remaining, f.first_rx) {
                    (0, _) => u64::MAX,
                    (_, Some(_)) => f.closed,
                    (_, None) => f.starts_at,
                })
                .min()
                .unwrap_or(u64::MAX)
        };
        while self.written < ready {
            let Some(p) = self.pending.pop_front() else { break };
            let t = lf_round_trip(self.written as f64 * self.ms / 1000.0);
            writeln!(out, "{} {} {} {} {}", cfmt::lf(t), cfmt::lf(p[0]), cfmt::lf(p[1]), cfmt::lf(p[2]), cfmt::lf(p[3]))
                .map_err(|e| DitgError::Io { path: "combined stats output".into(), source: e })?;
            self.written += 1;
        }
        Ok(())
    }
}

/// The lines not yet written.
struct Pending<'a> {
    lines: &'a mut VecDeque<Line>,
    written: u64,
}

impl Pending<'_> {
    /// Adds a flow's values of line `i`, as ITGDec reads them back (six decimals). A line
    /// already written can only get the zeros of a flow that had not started then.
    fn add(&mut self, i: u64, line: Line) {
        let Some(at) = i.checked_sub(self.written) else { return };
        let at = at as usize;
        if at >= self.lines.len() {
            self.lines.resize(at + 1, [0.0; 4]);
        }
        for (sum, v) in self.lines[at].iter_mut().zip(line) {
            *sum += lf_round_trip(v);
        }
    }
}

/// How many intervals a record at `rx` closes when `closed` are closed: ITGDec's
/// `(unsigned long)(ceil((rx − g)·1000/ms) − closed − 1)`, never negative where it is used.
fn lines_to_close(rx: f64, g: f64, ms: f64, closed: u64) -> u64 {
    let t = (rx - g) * 1000.0 / ms;
    (t.ceil() - closed as f64 - 1.0).max(0.0) as u64
}

/// Closes interval `i` of a flow whose first record arrived at `first_rx`.
fn close_line(a: &mut IntervalAcc, i: u64, ms: f64, g: f64, first_rx: f64) -> Line {
    // Intervals ending before the flow's first record print 0 (ITGDec's test, whose delay
    // variant groups the product differently).
    let before = (i + 1) as f64 * ms / 1000.0 + g < first_rx;
    let before_delay = (i + 1) as f64 * (ms / 1000.0) + g < first_rx;
    let bitrate = if before {
        0.0
    } else {
        let v = a.bytes * 8.0 / ms;
        a.bytes = 0.0;
        v
    };
    let jitter = if before {
        0.0
    } else {
        let v = if a.jitter_n > 1 {
            let v = a.jitter_sum / (a.jitter_n - 1) as f64;
            a.jitter_n = 1;
            v
        } else {
            0.0
        };
        a.jitter_sum = 0.0;
        v
    };
    let delay = if before_delay || a.delay_n == 0 {
        0.0
    } else {
        let v = a.delay_sum / a.delay_n as f64;
        a.delay_sum = 0.0;
        a.delay_n = 0;
        v
    };
    let loss = if before {
        0.0
    } else {
        let v = a.lost as f64;
        a.lost = 0;
        v
    };
    [bitrate, delay, jitter, loss]
}

/// The line ITGDec writes at the end of a flow's records (its open interval).
fn last_line(a: &IntervalAcc, ms: f64) -> Line {
    [a.bytes * 8.0 / ms, a.delay_sum / a.delay_n as f64, div(a.jitter_sum, a.jitter_n.wrapping_sub(1) as f64), a.lost as f64]
}

fn add_record(a: &mut IntervalAcc, r: &Record, d: f64) {
    a.bytes += r.size as f64;
    a.jitter_sum += (d - a.last_delay).abs();
    a.jitter_n += 1;
    a.last_delay = d;
    a.delay_sum += d;
    a.delay_n += 1;
    a.seen += 1;
    let seq = r.seq as u64;
    if seq > a.seen.wrapping_add(a.lost_total) {
        a.lost = a.lost.wrapping_add(seq.wrapping_sub(a.seen).wrapping_sub(a.lost_total));
        a.lost_total = seq.wrapping_sub(a.seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ditg::record::{Addr, TimeOfDay};

    fn record(seq: u32, hour: u32) -> Record {
        Record {
            flow_id: 1,
            seq,
            src_port: 9000,
            dst_port: 8999,
            tx: TimeOfDay { hour, minute: 0, second: 0.0 },
            rx: TimeOfDay { hour, minute: 0, second: 0.010 },
            size: 512,
            src_addr: Addr::new("10.0.0.1"),
            dst_addr: Addr::new("10.0.0.2"),
        }
    }

    /// Counts the lines written, holding none of them.
    #[derive(Default)]
    struct LineCount(u64);

    impl Write for LineCount {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.iter().filter(|&&b| b == b'\n').count() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_record_hours_after_the_previous_writes_its_lines_as_they_close() {
        // Two records of one flow 1 h apart, -c 1: the second closes ceil(3 600 000) − 1 =
        // 3 599 999 one-millisecond intervals (hand count with ITGDec's rule, module doc), and the
        // last record adds the last line: 3 600 000 lines. They are written while the record
        // closes them: at most a batch is held (issue 24: a 23 h gap held 82.8 million lines,
        // 2.2 GB, until the process aborted).
        let (a, b) = (record(0, 0), record(1, 1));
        let mut dec = Decoder::new();
        dec.push(&a);
        dec.push(&b);
        let mut out = LineCount::default();
        let mut cs = CombinedStats::new(&dec, 1.0).unwrap();
        cs.push(&a, 0, &mut out).unwrap();
        cs.push(&b, 0, &mut out).unwrap();
        assert!(cs.most_held <= 4096 + 1, "{} lines held at once (a batch is 4 096)", cs.most_held);
        cs.finish(&mut out).unwrap();
        assert_eq!(out.0, 3_600_000);
    }

    #[test]
    fn a_series_past_the_line_limit_is_refused_before_a_line_is_written() {
        // 23 h between two records at -c 0.001 ms: 82 800 s / 1 µs + 1 = 8.28e10 lines (hand
        // count), far above the 1e8 written at most; 1 h at -c 1 (3.6e6 lines) stays within it.
        let mut dec = Decoder::new();
        dec.push(&record(0, 0));
        dec.push(&record(1, 23));
        let e = CombinedStats::new(&dec, 0.001).err().expect("refused").to_string();
        assert!(e.contains("82800.000 s") && e.contains("82800000001 lines") && e.contains("above the 100000000"), "{e}");
        assert!(e.contains("LASTHOP_MAX_DITG_LINES=<lines>"), "{e}");
        let mut hour = Decoder::new();
        hour.push(&record(0, 0));
        hour.push(&record(1, 1));
        assert!(CombinedStats::new(&hour, 1.0).is_ok());
    }
}
