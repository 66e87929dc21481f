//! Per-packet records → the core's meters → a [`RunReport`] and its tables: the one path the
//! measure world's results take, whether the records are lasthop's own ([`crate::results`]) or
//! D-ITG's binary logs ([`crate::ditg::import`]).
//!
//! A [`FlowAccount`] keeps one flow's [`FlowMeter`] and the bookkeeping between the records
//! and the meter that both sources need:
//! - a sequence number is sent once ([`FlowAccount::sent`]) and received once
//!   ([`FlowAccount::received`]): a later copy is a duplicate, counted apart and not fed to the
//!   meter (a duplicate is not a packet received); a first copy that arrives after a higher
//!   sequence number is counted as reordered;
//! - a packet sent and never received is lost at its send time ([`FlowAccount::lost`]), once
//!   per sequence number, with the cause the source knows;
//! - the first and last send time and the last receive time, from which the callers decide a
//!   flow's active period.
//!
//! [`report`] then turns the accounts into the core's report types, the same way for both
//! sources: per flow the forward summary over its active period, an empty reverse direction,
//! the per-interval rows up to the end of the run and the delay CDF table.
//!
//! Sequence numbers are kept one bit each in blocks of 2^16 allocated where used, so a stray
//! sequence number of 4·10^9 costs one block and a small index, not 512 MB.

use lasthop_core::metrics::{DropCause, FlowMeter, FlowSummary};
use lasthop_core::report::{
    delay_cdf_table, FlowReport, HopReports, IntervalColumns, ProcessorReports, ReverseSummary, RunHeader, RunReport, Table,
    TcpConnectionReport, Transport,
};
use lasthop_core::{Duration, Time};

/// A set of sequence numbers: one bit each, in blocks of 2^16 allocated where used.
#[derive(Default)]
pub struct SeqSet(Vec<Option<Box<[u64; 1024]>>>);

impl SeqSet {
    pub fn contains(&self, s: u32) -> bool {
        let (b, w, bit) = ((s >> 16) as usize, (s as usize & 0xFFFF) / 64, s % 64);
        self.0.get(b).and_then(|x| x.as_ref()).is_some_and(|x| x[w] >> bit & 1 == 1)
    }
    /// Inserts; false if it was there.
    pub fn insert(&mut self, s: u32) -> bool {
        let (b, w, bit) = ((s >> 16) as usize, (s as usize & 0xFFFF) / 64, s % 64);
        if b >= self.0.len() {
            self.0.resize_with(b + 1, || None);
        }
        let block = self.0[b].get_or_insert_with(|| Box::new([0; 1024]));
        let had = block[w] >> bit & 1 == 1;
        block[w] |= 1 << bit;
        !had
    }
}

/// One flow's meter and the bookkeeping between its records and the meter.
pub struct FlowAccount {
    pub meter: FlowMeter,
    sent: SeqSet,
    /// Sequence numbers received, and those already counted lost (each is settled once).
    settled: SeqSet,
    max_seq: Option<u32>,
    pub duplicates: u64,
    pub reordered: u64,
    pub first_tx: Option<Time>,
    pub last_tx: Time,
    pub last_rx: Option<Time>,
}

impl FlowAccount {
    pub fn new(meter: FlowMeter) -> Self {
        FlowAccount { meter, sent: SeqSet::default(), settled: SeqSet::default(), max_seq: None, duplicates: 0, reordered: 0, first_tx: None, last_tx: Time(0), last_rx: None }
    }

    /// Packet `seq` of `bytes` IP bytes left at `tx`; counted once per sequence number.
    /// Returns whether it was new.
    pub fn sent(&mut self, tx: Time, seq: u32, bytes: u32) -> bool {
        if !self.sent.insert(seq) {
            return false;
        }
        self.meter.on_sent(tx, bytes);
        self.first_tx = Some(self.first_tx.map_or(tx, |t| t.min(tx)));
        self.last_tx = self.last_tx.max(tx);
        true
    }

    pub fn was_sent(&self, seq: u32) -> bool {
        self.sent.contains(seq)
    }

    pub fn was_received(&self, seq: u32) -> bool {
        self.settled.contains(seq)
    }

    /// The highest sequence number received so far (first copies).
    pub fn max_seq(&self) -> Option<u32> {
        self.max_seq
    }

    /// Packet `seq`, sent at `tx`, of `bytes` IP bytes carrying `payload` bytes to the
    /// application, arrived at `rx`. Returns true for its first copy (fed to the meter), false
    /// for a duplicate.
    pub fn received(&mut self, rx: Time, tx: Time, seq: u32, bytes: u32, payload: u64) -> bool {
        if !self.settled.insert(seq) {
            self.duplicates += 1;
            return false;
        }
        if self.max_seq.is_some_and(|m| seq < m) {
            self.reordered += 1;
        }
        self.max_seq = Some(self.max_seq.map_or(seq, |m| m.max(seq)));
        self.meter.on_received(rx, tx, seq, bytes);
        self.meter.on_delivered(rx, payload);
        self.last_rx = Some(self.last_rx.map_or(rx, |t| t.max(rx)));
        true
    }

    /// Packet `seq`, sent at `tx` and never received, is lost (once per sequence number, so a
    /// sequence number logged twice is lost once).
    pub fn lost(&mut self, tx: Time, seq: u32, cause: DropCause) {
        if self.settled.insert(seq) {
            self.meter.on_dropped(tx, cause);
        }
    }
}

/// How the report names one flow and the period it was active.
pub struct FlowEntry<'a> {
    pub name: String,
    pub transport: Transport,
    pub src: String,
    pub dst: String,
    /// Its active period: the summary's rates are over `stop − start`.
    pub start: Time,
    pub stop: Time,
    pub account: &'a FlowAccount,
}

/// The report of measured flows: the header given, the flows' forward summaries, per-interval
/// rows up to `end` and the delay CDF table. `connection(i, forward)` gives flow i's TCP
/// connection report, if the source knows one. Also returns the packets in flight at the end
/// (sent, neither received nor lost), summed over the flows.
pub fn report(
    header: RunHeader,
    flows: &[FlowEntry<'_>],
    interval: Duration,
    end: Time,
    mut connection: impl FnMut(usize, &FlowSummary) -> Option<TcpConnectionReport>,
) -> (RunReport, Vec<Table>, u64) {
    let mut intervals = IntervalColumns::default();
    let mut reports = Vec::with_capacity(flows.len());
    let mut in_flight = 0;
    for (i, f) in flows.iter().enumerate() {
        let active = f.stop.since(f.start);
        let forward = f.account.meter.summary(active);
        in_flight += forward.lost_by_cause.in_flight_at_end;
        for row in f.account.meter.interval_rows(end) {
            intervals.push(&f.name, row);
        }
        reports.push(FlowReport {
            name: f.name.clone(),
            transport: f.transport,
            src: f.src.clone(),
            dst: f.dst.clone(),
            start_s: f.start.as_secs_f64(),
            stop_s: f.stop.as_secs_f64(),
            connection: connection(i, &forward),
            forward,
            reverse: ReverseSummary::from(&FlowMeter::light(interval).summary(active)),
            round_trip: None,
        });
    }
    let cdf = delay_cdf_table(flows.iter().map(|f| (f.name.as_str(), &f.account.meter)));
    // A real path measured end to end: no hop or processor of lasthop's on it to report.
    let report = RunReport::assemble(header, reports, HopReports::default(), ProcessorReports::default(), Vec::new());
    (report, vec![intervals.into_table(), cdf], in_flight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sequence_number_is_sent_received_or_lost_once() {
        let mut a = FlowAccount::new(FlowMeter::new(Duration(100_000_000)));
        for s in 0..5 {
            assert!(a.sent(Time(s as u64 * 10), s, 100));
        }
        assert!(!a.sent(Time(99), 2, 100), "a second send of 2");
        // 0, 2, 1 (reordered), 2 again (duplicate), 4; 3 lost twice over, counted once.
        assert!(a.received(Time(100), Time(0), 0, 100, 60));
        assert!(a.received(Time(120), Time(20), 2, 100, 60));
        assert!(a.received(Time(130), Time(10), 1, 100, 60));
        assert!(!a.received(Time(140), Time(20), 2, 100, 60));
        assert!(a.received(Time(150), Time(40), 4, 100, 60));
        a.lost(Time(30), 3, DropCause::Link);
        a.lost(Time(30), 3, DropCause::Link);
        a.lost(Time(0), 0, DropCause::Link); // received: not lost
        assert_eq!((a.duplicates, a.reordered, a.max_seq(), a.last_rx), (1, 1, Some(4), Some(Time(150))));
        assert_eq!((a.meter.sent_packets(), a.meter.received_packets(), a.meter.dropped_packets(), a.meter.delivered_bytes()), (5, 4, 1, 240));
        assert_eq!((a.first_tx, a.last_tx), (Some(Time(0)), Time(40)));
    }

    #[test]
    fn a_stray_sequence_number_costs_one_block() {
        let mut s = SeqSet::default();
        assert!(s.insert(4_000_000_000) && !s.insert(4_000_000_000));
        assert!(s.contains(4_000_000_000) && !s.contains(3));
        assert_eq!(s.0.iter().filter(|b| b.is_some()).count(), 1);
    }
}
