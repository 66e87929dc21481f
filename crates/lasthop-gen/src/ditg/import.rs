//! D-ITG logs → lasthop's results: each flow's records fed to the core's
//! [`FlowMeter`] (RFC 7679 delay, RFC 3393 IPDV, RFC 3550 and D-ITG jitter, RFC 7680 loss,
//! percentiles), reported with the core's [`RunReport`] and tables, so `lasthop import-ditg`
//! writes the same results directory as `lasthop run`.
//!
//! What it counts that ITGDec does not:
//! - **tail loss**: with the sender's log (`-l`), every sequence number sent and never
//!   received is lost, after the last received one too (ITGDec never compares the two logs).
//!   With the receiver's log alone, loss is inferred from the gaps below the highest sequence
//!   number received (ITGDec's count) and the summary says the tail is not counted;
//! - duplicates are counted once (a second copy of a sequence number is not a packet received);
//! - time of day is unwrapped: a flow across 00:00 UTC keeps positive delays (times more than
//!   12 h before the first record are taken as the next day).
//!
//! Mapping: a flow is ITGDec's (flowId, addresses, ports), named `flow<id>` (plus
//! `-<src>:<port>` when two flows share an id); `src`/`dst` are `address:port`. Time 0 is the
//! earliest time in either log. A sent packet is a sender-log record at its tx time (a
//! receiver-log record when there is no sender log); received at rx with the tx of the
//! payload; a loss is timed at its send time (gaps of a receiver-only import at the tx of the
//! record that revealed them). D-ITG logs L4 payload sizes: bytes sent/received add the UDP
//! (8) or TCP (20, no options) and IPv4 (20) or IPv6 (40) headers; goodput counts payload.
//! The log has no protocol field: the caller says it ([`ImportOptions::transport`]); a D-ITG
//! "packet" of a TCP flow is one of its messages, not a segment. The active period of a flow is
//! its first to its last send time.
//!
//! Round trip (`ITGSend -m rttm`): the sender's log then holds one record per echo that came
//! back, its receive time the echo's arrival (a one-way sender log repeats the send time, so
//! the two are told apart by the records themselves). Alone, such a log is imported as ITGDec
//! reads it: each echo a packet sent at tx and received at rx, its delay the round trip, loss
//! the sequence numbers missing below the highest echoed (out or back alike; the tail is not
//! counted); the summary's `scenario.delay` says so. With the receiver's log too, the flows
//! are the one-way ones as usual and each flow's round trip is reported beside them
//! (`scenario.flows.<flow>.round_trip_ms`, first echo per sequence number), measured right:
//! from the send time the packet itself carried (the receiver's log has it) to its echo's
//! arrival. D-ITG's sender log gets the send time wrong whenever the round trip exceeds the
//! inter-departure time (it pairs the echoed seconds with the µs of the latest packet sent:
//! a 207 ms stall logged as 0.95 ms); `round_trip_ms_itgdec` keeps its reading and
//! `echoes_with_wrong_send_time` counts the records it got wrong (off by more than 1 µs).
//! This keeps each received packet's send time (some 20 bytes a packet), the one import whose
//! memory grows with the log.
//!
//! The records go through the same [`crate::account`] as lasthop's own records do (one
//! [`FlowAccount`] per flow, one [`account::report`]), so an import and a measured run count
//! alike.
//!
//! Memory: one meter per flow plus one bit per sequence number seen (in 8 KB blocks); the logs
//! are streamed (read up to four times). A receiver-only import infers at most 2^26 lost
//! packets per flow (each goes through the meter); beyond, it asks for the sender's log.

use super::dec::FlowKey;
use super::record::{LogReader, Record};
use super::DitgError;
use crate::account::{self, FlowAccount, FlowEntry, SeqSet};
use lasthop_core::metrics::{DropCause, FlowMeter};
use lasthop_core::report::{RunHeader, RunReport, Table, Transport};
use lasthop_core::{Duration, Time};
use lasthop_scenario::MAX_INTERVAL_ROWS;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// How to import.
#[derive(Clone, Copy, Debug)]
pub struct ImportOptions {
    /// Interval of the per-interval table.
    pub interval: Duration,
    /// The flows' transport protocol (D-ITG's log does not record it).
    pub transport: Transport,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { interval: Duration(100_000_000), transport: Transport::Udp }
    }
}

/// The report and tables of an import (what the simulator's `output()` gives for a run).
pub struct Imported {
    pub report: RunReport,
    pub tables: Vec<Table>,
}

/// Most packets a receiver-only import infers lost in one flow (each is fed to the meter).
const MAX_GAP_PACKETS: u64 = 1 << 26;

/// One flow being imported.
struct FlowIn {
    key: FlowKey,
    account: FlowAccount,
    /// Receiver-only: sequence ranges found missing, with the time they were found.
    gaps: Vec<(u32, u32, Time)>,
    gap_packets: u64,
    not_in_sender_log: u64,
    /// Round trips from a round-trip sender log imported beside the receiver's log.
    round_trip: Option<RoundTrip>,
    /// Send time of each sequence number as the receiver's log gives it (the first copy),
    /// kept only for a round-trip import with both logs: one entry per record, whatever the
    /// sequence numbers (a hostile log's 4·10^9 allocates nothing).
    sent_at: HashMap<u32, Time>,
}

/// A flow's round trips: from the send time the packet carried, and as ITGDec reads D-ITG's
/// sender log.
struct RoundTrip {
    meter: FlowMeter,
    itgdec: FlowMeter,
    /// Sequence numbers already echoed (the first copy counts).
    echoed: SeqSet,
    wrong_send_time: u64,
}

/// Seconds of the day → nanoseconds since the import's time 0 (time of day unwrapped around
/// the first record's).
#[derive(Clone, Copy)]
struct Clock {
    first: f64,
    origin: f64,
}

impl Clock {
    fn unwrap(&self, s: f64) -> f64 {
        let d = s - self.first;
        if d < -43200.0 {
            d + 86400.0
        } else if d > 43200.0 {
            d - 86400.0
        } else {
            d
        }
    }
    fn at(&self, s: f64) -> Time {
        Time(((self.unwrap(s) - self.origin) * 1e9).round().max(0.0) as u64)
    }
}

fn each_record(path: &Path, mut f: impl FnMut(&Record) -> Result<(), DitgError>) -> Result<(), DitgError> {
    for r in LogReader::open(path)? {
        let r = r?;
        if r.itgdec_valid() && r.tx.second.is_finite() && r.rx.second.is_finite() {
            f(&r)?;
        }
    }
    Ok(())
}

fn header_bytes(r: &Record, transport: Transport) -> u32 {
    let ip = if r.src_addr.text_bytes().contains(&b':') { 40 } else { 20 };
    ip + match transport {
        Transport::Udp => 8,
        Transport::Tcp => 20,
    }
}

struct Importer {
    opts: ImportOptions,
    /// Keep each received packet's send time (a round-trip import with both logs).
    keep_send_times: bool,
    clock: Clock,
    flows: Vec<FlowIn>,
    index: BTreeMap<FlowKey, usize>,
    records: u64,
}

impl Importer {
    fn flow(&mut self, r: &Record) -> &mut FlowIn {
        let key = FlowKey::of(r);
        let i = *self.index.entry(key).or_insert(self.flows.len());
        if i == self.flows.len() {
            let account = FlowAccount::new(FlowMeter::new(self.opts.interval));
            self.flows.push(FlowIn { key, account, gaps: Vec::new(), gap_packets: 0, not_in_sender_log: 0, round_trip: None, sent_at: HashMap::new() });
        }
        &mut self.flows[i]
    }

    fn sender_pass(&mut self, path: &Path) -> Result<(), DitgError> {
        let (clock, transport) = (self.clock, self.opts.transport);
        each_record(path, |r| {
            self.records += 1;
            let f = self.flow(r);
            f.account.sent(clock.at(r.tx.seconds_of_day()), r.seq, r.size + header_bytes(r, transport));
            Ok(())
        })
    }

    fn receiver_pass(&mut self, path: &Path, with_sender: bool) -> Result<(), DitgError> {
        let (clock, transport, keep) = (self.clock, self.opts.transport, self.keep_send_times);
        each_record(path, |r| {
            self.records += 1;
            let f = self.flow(r);
            if f.account.was_received(r.seq) {
                f.account.duplicates += 1;
                return Ok(());
            }
            let (tx, rx) = (clock.at(r.tx.seconds_of_day()), clock.at(r.rx.seconds_of_day()));
            let bytes = r.size + header_bytes(r, transport);
            let max_seq = f.account.max_seq().unwrap_or(0);
            // Receiver-only, or a packet the sender's log lacks: it was sent, at tx.
            if f.account.sent(tx, r.seq, bytes) {
                f.not_in_sender_log += with_sender as u64;
                if !with_sender && r.seq > max_seq.saturating_add(1) {
                    f.gap_packets += (r.seq - max_seq - 1) as u64;
                    if f.gap_packets > MAX_GAP_PACKETS {
                        return Err(DitgError::Argument(format!(
                            "{}: flow {} skips {} sequence numbers (up to {}): more than the {MAX_GAP_PACKETS} lost packets \
                             a receiver-only import infers; give the sender's log too",
                            path.display(),
                            r.flow_id,
                            f.gap_packets,
                            r.seq
                        )));
                    }
                    f.gaps.push((max_seq + 1, r.seq - 1, tx));
                }
            }
            f.account.received(rx, tx, r.seq, bytes, r.size as u64);
            if keep {
                f.sent_at.insert(r.seq, tx);
            }
            Ok(())
        })
    }

    /// A round-trip sender log beside the receiver's: each flow's echoes into its round-trip
    /// meters, from the send time the receiver's log gives (the packet's own) and from the
    /// sender log's (ITGDec's reading).
    fn round_trip_pass(&mut self, path: &Path) -> Result<(), DitgError> {
        let (clock, interval, transport) = (self.clock, self.opts.interval, self.opts.transport);
        each_record(path, |r| {
            let f = self.flow(r);
            let known = f.sent_at.get(&r.seq).copied();
            let rt = f.round_trip.get_or_insert_with(|| RoundTrip {
                meter: FlowMeter::new(interval),
                itgdec: FlowMeter::new(interval),
                echoed: SeqSet::default(),
                wrong_send_time: 0,
            });
            if !rt.echoed.insert(r.seq) {
                return Ok(());
            }
            let (back, logged_tx) = (clock.at(r.rx.seconds_of_day()), clock.at(r.tx.seconds_of_day()));
            let bytes = r.size + header_bytes(r, transport);
            let tx = known.unwrap_or(logged_tx);
            rt.wrong_send_time += (tx.0.abs_diff(logged_tx.0) > 1_000) as u64;
            rt.meter.on_received(back, tx, r.seq, bytes);
            rt.itgdec.on_received(back, logged_tx, r.seq, bytes);
            Ok(())
        })
    }

    /// With the sender's log: every packet sent and not received is lost, at its send time.
    fn loss_pass(&mut self, path: &Path) -> Result<(), DitgError> {
        let clock = self.clock;
        each_record(path, |r| {
            self.flow(r).account.lost(clock.at(r.tx.seconds_of_day()), r.seq, DropCause::Link);
            Ok(())
        })
    }

    /// Receiver only: the gaps still open are lost (sent and dropped at the time found; their
    /// size is unknown, so they add no bytes).
    fn close_gaps(&mut self) {
        for f in &mut self.flows {
            for &(from, to, t) in &f.gaps {
                for s in from..=to {
                    if f.account.sent(t, s, 0) {
                        f.account.lost(t, s, DropCause::Link);
                    }
                }
            }
        }
    }
}

/// Time 0 and the end of the import: the earliest and latest time of any valid record; and
/// the number of flows.
fn clock_of(logs: &[&Path]) -> Result<(Clock, f64, usize), DitgError> {
    let mut first: Option<f64> = None;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut flows = std::collections::BTreeSet::new();
    for path in logs {
        each_record(path, |r| {
            flows.insert(FlowKey::of(r));
            let (tx, rx) = (r.tx.seconds_of_day(), r.rx.seconds_of_day());
            let c = Clock { first: *first.get_or_insert(tx), origin: 0.0 };
            for t in [c.unwrap(tx), c.unwrap(rx)] {
                lo = lo.min(t);
                hi = hi.max(t);
            }
            Ok(())
        })?;
    }
    match first {
        Some(first) => Ok((Clock { first, origin: lo }, hi - lo, flows.len())),
        None => Err(DitgError::Argument(format!(
            "{}: no record to import (the log is empty or every record has an invalid time)",
            logs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Whether a sender log was written in D-ITG's round-trip mode (`ITGSend -m rttm`): a record
/// whose receive time is not its send time is an echo's (a one-way sender log repeats the send
/// time in every record). The first 1 000 valid records decide, so a long log is not read once
/// more for it.
pub fn is_round_trip_log(path: &Path) -> Result<bool, DitgError> {
    let mut seen = 0;
    for r in LogReader::open(path)? {
        let r = r?;
        if !r.itgdec_valid() {
            continue;
        }
        if (r.tx.hour, r.tx.minute, r.tx.second.to_bits()) != (r.rx.hour, r.rx.minute, r.rx.second.to_bits()) {
            return Ok(true);
        }
        seen += 1;
        if seen == 1_000 {
            break;
        }
    }
    Ok(false)
}

/// Imports a sender log (`-l`, one-way or round-trip) and/or a receiver log (`-x`); at least one.
pub fn import_logs(sender: Option<&Path>, receiver: Option<&Path>, opts: &ImportOptions) -> Result<Imported, DitgError> {
    let logs: Vec<&Path> = sender.into_iter().chain(receiver).collect();
    if logs.is_empty() {
        return Err(DitgError::Argument("import needs a sender log, a receiver log or both".into()));
    }
    let round_trip = match sender {
        Some(s) => is_round_trip_log(s)?,
        None => false,
    };
    let (clock, span_s, flows) = clock_of(&logs)?;
    let max_flows = std::env::var(MAX_IMPORT_FLOWS_ENV).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(MAX_IMPORT_FLOWS);
    check_flow_count(flows, max_flows, &logs)?;
    check_interval_rows(opts.interval, span_s, flows)?;
    let keep_send_times = round_trip && receiver.is_some();
    let mut im = Importer { opts: *opts, keep_send_times, clock, flows: Vec::new(), index: BTreeMap::new(), records: 0 };
    match (sender, receiver) {
        // The echoes alone: read as ITGDec reads them, each back at its rx.
        (Some(s), None) if round_trip => im.receiver_pass(s, false)?,
        (Some(s), _) => im.sender_pass(s)?,
        (None, _) => {}
    }
    if let Some(r) = receiver {
        im.receiver_pass(r, sender.is_some())?;
    }
    match sender {
        Some(s) if receiver.is_some() => {
            im.loss_pass(s)?;
            if round_trip {
                im.round_trip_pass(s)?;
            }
        }
        _ => im.close_gaps(),
    }
    // One past the last event, so that its interval is reported.
    let end = Time((span_s * 1e9).round() as u64 + 1);
    let logs = Logs { sender, receiver, round_trip };
    Ok(report(im, &logs, end, span_s))
}

/// What was imported, for the summary's description.
struct Logs<'a> {
    sender: Option<&'a Path>,
    receiver: Option<&'a Path>,
    /// The sender's log is a round-trip one.
    round_trip: bool,
}

/// The per-interval table of `flows` flows over `span_s` seconds must keep within the budget
/// a scenario has ([`MAX_INTERVAL_ROWS`]): a day-long log at a 1 µs interval would otherwise
/// ask for 8.6·10^10 interval slots per flow.
/// The most flows an import holds: each keeps its meters (~100 KB: the IPDV window, the
/// histograms), so 4 096 flows take ~400 MB; [`MAX_IMPORT_FLOWS_ENV`] raises it.
pub const MAX_IMPORT_FLOWS: usize = 4096;
pub const MAX_IMPORT_FLOWS_ENV: &str = "LASTHOP_MAX_IMPORT_FLOWS";

/// Refuses logs of more than `max` flows before any flow's meters exist.
fn check_flow_count(flows: usize, max: usize, logs: &[&Path]) -> Result<(), DitgError> {
    if flows <= max {
        return Ok(());
    }
    let names = logs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
    Err(DitgError::Argument(format!(
        "{names}: {flows} flows (distinct flow id, addresses and ports), above the {max} an import holds (each keeps its \
         meters, ~100 KB); {MAX_IMPORT_FLOWS_ENV}=<flows> raises the limit"
    )))
}

fn check_interval_rows(interval: Duration, span_s: f64, flows: usize) -> Result<(), DitgError> {
    if interval.0 == 0 {
        return Err(DitgError::Argument("--interval 0: the interval must be positive, e.g. 100ms".into()));
    }
    let span = (span_s * 1e9).round() as u64;
    // Slots 0 ..= span / interval, as the meters fill them.
    let rows = (span / interval.0 + 1).saturating_mul(flows as u64);
    if rows > MAX_INTERVAL_ROWS {
        // The smallest interval whose span / interval + 1 rows per flow fit: span / interval
        // below the rows each flow may have.
        let per_flow = MAX_INTERVAL_ROWS / flows as u64;
        if per_flow == 0 {
            return Err(DitgError::Argument(format!(
                "the logs hold {flows} flows, more than the {MAX_INTERVAL_ROWS} per-interval rows a run may keep at any interval"
            )));
        }
        let floor = Duration(span / per_flow + 1);
        return Err(DitgError::Argument(format!(
            "--interval {interval} gives {rows} per-interval rows (the logs span {} / interval × {flows} flows), above the budget of \
             {MAX_INTERVAL_ROWS}; valid: an interval of at least {floor}",
            Duration(span)
        )));
    }
    Ok(())
}

fn flow_names(flows: &[FlowIn]) -> Vec<String> {
    let mut per_id: BTreeMap<u32, usize> = BTreeMap::new();
    for f in flows {
        *per_id.entry(f.key.flow_id).or_default() += 1;
    }
    flows
        .iter()
        .map(|f| match per_id[&f.key.flow_id] {
            1 => format!("flow{}", f.key.flow_id),
            _ => format!("flow{}-{}:{}", f.key.flow_id, f.key.src_addr.text(), f.key.src_port),
        })
        .collect()
}

fn report(im: Importer, logs: &Logs, end: Time, span_s: f64) -> Imported {
    let (sender, receiver) = (logs.sender, logs.receiver);
    let names = flow_names(&im.flows);
    let mut notes = serde_json::Map::new();
    let mut entries = Vec::with_capacity(im.flows.len());
    for (f, name) in im.flows.iter().zip(&names) {
        entries.push(FlowEntry {
            name: name.clone(),
            transport: im.opts.transport,
            src: format!("{}:{}", f.key.src_addr.text(), f.key.src_port),
            dst: format!("{}:{}", f.key.dst_addr.text(), f.key.dst_port),
            start: f.account.first_tx.unwrap_or(Time(0)),
            stop: f.account.last_tx,
            account: &f.account,
        });
        let mut note = json!({"flow_id": f.key.flow_id, "duplicates": f.account.duplicates, "received_not_in_sender_log": f.not_in_sender_log});
        if let Some(rt) = &f.round_trip {
            let active = Duration(f.account.last_tx.0.saturating_sub(f.account.first_tx.unwrap_or(Time(0)).0));
            note["round_trip_ms"] = json!(rt.meter.summary(active).delay_ms);
            note["round_trip_ms_itgdec"] = json!(rt.itgdec.summary(active).delay_ms);
            note["echoes"] = json!(rt.meter.received_packets());
            note["echoes_with_wrong_send_time"] = json!(rt.wrong_send_time);
        }
        notes.insert(name.clone(), note);
    }
    let both = sender.is_some() && receiver.is_some();
    let configuration = json!({
        "world": "measure",
        "source": "D-ITG 2.8.1 binary logs",
        "sender_log": sender.map(|p| p.display().to_string()),
        "receiver_log": receiver.map(|p| p.display().to_string()),
        "tail_loss_counted": both,
        "meter": if logs.round_trip { "rttm" } else { "owdm" },
        "delay": if logs.round_trip && !both {
            "round trip: each echo's arrival at the sender minus its send time (ITGSend -m rttm), as ITGDec reads the sender's log"
        } else {
            "one way: receive time minus send time"
        },
        "loss": if both {
            "sent (sender log) minus received (receiver log), after the last received packet too"
        } else if logs.round_trip {
            "echoes missing below the highest sequence number echoed (ITGDec's count: lost on the way out or back alike); loss after the last echo is not counted"
        } else if receiver.is_some() {
            "gaps below the highest sequence number received (ITGDec's count); loss after the last received packet is not counted"
        } else {
            "sender log only: nothing is known to be received"
        },
        "bytes": "D-ITG payload sizes plus UDP/TCP and IPv4/IPv6 headers; goodput counts payload",
        "time_origin_s_of_day": im.clock.first + im.clock.origin,
        "flows": notes,
    });
    let header = RunHeader { scenario: configuration, seed: 0, simulated_s: span_s, events_processed: im.records, packets_in_network_at_end: 0 };
    let (report, tables, _in_flight) = account::report(header, &entries, im.opts.interval, end, |_, _| None);
    Imported { report, tables }
}

#[cfg(test)]
mod tests {
    #[test]
    fn logs_of_more_flows_than_an_import_holds_are_refused_naming_the_limit() {
        // 20 000 one-record flows took 1.97 GB (issue 24); refused before any meter exists.
        let logs = [Path::new("many.log")];
        assert!(check_flow_count(4096, MAX_IMPORT_FLOWS, &logs).is_ok());
        let e = check_flow_count(20_000, MAX_IMPORT_FLOWS, &logs).unwrap_err().to_string();
        assert!(e.starts_with("many.log: 20000 flows") && e.contains("above the 4096 an import holds"), "{e}");
        assert!(e.contains("LASTHOP_MAX_IMPORT_FLOWS=<flows> raises the limit"), "{e}");
    }

    use super::*;

    #[test]
    fn the_interval_budget_is_the_scenarios_and_the_error_gives_the_smallest_interval() {
        // A day (86 400 s) at 1 µs: 8.64·10^10 + 1 rows for one flow.
        let e = check_interval_rows(Duration(1_000), 86_400.0, 1).unwrap_err().to_string();
        assert!(e.contains("--interval 1us gives 86400000001 per-interval rows (the logs span 24h"), "{e}");
        // The smallest valid interval: 86 400 s / 10^6 + 1 ns = 86 400 001 ns (10^6 rows).
        assert!(e.contains("valid: an interval of at least 86400001ns"), "{e}");
        assert!(check_interval_rows(Duration(86_400_001), 86_400.0, 1).is_ok());
        assert!(check_interval_rows(Duration(86_400_000), 86_400.0, 1).is_err(), "10^6 + 1 rows");
        // Two flows over 10 s at 10 µs: 2 × (10^6 + 1) rows; 20 µs fits.
        assert!(check_interval_rows(Duration(10_000), 10.0, 2).is_err());
        let e = check_interval_rows(Duration(10_000), 10.0, 2).unwrap_err().to_string();
        assert!(e.contains("at least 20001ns"), "10 s / (10^6 / 2 rows) + 1 ns: {e}");
        assert!(check_interval_rows(Duration(20_001), 10.0, 2).is_ok());
        assert!(check_interval_rows(Duration(20_000), 10.0, 2).is_err(), "2 × (500 000 + 1) rows");
    }
}
