//! Results of a measured run, computed by the core's meters ([`FlowMeter`]) from both ends'
//! record files, into the core's report types ([`RunReport`]) and tables: the same
//! `summary.json` keys, intervals, delay CDF and per-packet tables as a simulated run. The
//! records go through [`crate::account`], the path a D-ITG import takes too.
//!
//! How the records become metric events (all times on the sender's clock, counted from the
//! run's origin; a receive time is the receiver's clock minus the estimated offset):
//! - each sent record is `on_sent`; each received record `on_received` (its first copy only:
//!   a copy of a sequence number already received is a duplicate and counted apart; one that
//!   arrives after a higher sequence number is counted as reordered), then `on_delivered` with
//!   its payload;
//! - tail loss: a packet the sender logged that the receiver did not log before the loss
//!   timeout after the sender's `stop` is lost, cause `unattributed` (RFC 7680 §2.4: lost once
//!   it has not arrived within a reasonable time); the sender's count is known, so unlike
//!   ITGDec the packets after the last one received count too. If the receiver was interrupted
//!   they are left "in flight at the end" instead: nobody waited for them.
//! - IP bytes are the payload plus the UDP/IPv4 headers (28 B; 48 B over IPv6); for TCP the
//!   payload plus 40 B per message (segmentation is not seen from user space).
//! - round trip (RTT meter): each echo, first copy per sequence number, gives the echo's arrival
//!   minus the send time it carries back — its own packet's, so correct at any RTT/IDT ratio.
//!
//! What the core's report cannot say goes into the `measure` block of summary.json: the clock,
//! its offset and uncertainty, per flow the packets requested and the shortfall, send lateness,
//! time blocked in `send()`, duplicates, reordering, round-trip statistics, and the receiver's
//! count of malformed datagrams. A TCP flow's connection state comes from `TCP_INFO`; the
//! counters Linux does not expose there (fast retransmits, timeouts, persist probes, RTT samples,
//! advertised windows) are reported as 0 / null.

use crate::account::{self, FlowAccount, FlowEntry, SeqSet};
use crate::clock::Clock;
use crate::control::{Meter, Proto};
use crate::plan::Plan;
use crate::records::{read_records, RecordKind};
use crate::send::{FlowSent, Measured, TcpInfo};
use lasthop_core::metrics::{DelayStats, DropCause, FlowMeter};
use lasthop_core::report::{
    AdvertisedWindows, Column, RunHeader, RunReport, Table, TcpConnectionReport, TcpCounters, TcpReport, Transport,
};
use lasthop_core::{Duration, Time};
use serde::Serialize;
use std::path::Path;

/// A measured run's output: the report, the tables and the measure world's own block.
pub struct GenOutput {
    pub report: RunReport,
    pub tables: Vec<Table>,
    pub measure: MeasureReport,
}

/// The `measure` block of summary.json.
#[derive(Clone, Debug, Serialize)]
pub struct MeasureReport {
    /// "monotonic" (one kernel: exact) or "realtime" (two hosts: offset estimated).
    pub clock: Clock,
    /// Receiver clock minus sender clock applied to receive times, ns.
    pub clock_offset_ns: i64,
    /// The applied offset is within ± this of the truth, ns (half the least probe RTT).
    pub clock_offset_uncertainty_ns: u64,
    /// The probes' estimate (also when one kernel's clock makes it unnecessary), ns.
    pub measured_offset_ns: Option<i64>,
    pub meter: Meter,
    /// A packet not received this long after the end is lost, s.
    pub loss_timeout_s: f64,
    /// The run was cut short (a signal at either end).
    pub interrupted: bool,
    /// Datagrams or messages the receiver refused as garbage (not a header, another session,
    /// an unknown flow, a length that is not the datagram's).
    pub receiver_malformed: u64,
    /// Control messages the receiver refused.
    pub receiver_control_errors: u64,
    /// Records of the receiver that name no packet the sender sent (forged or corrupted).
    pub unmatched_records: u64,
    pub flows: Vec<MeasureFlow>,
}

/// One flow's measure-world figures.
#[derive(Clone, Debug, Serialize)]
pub struct MeasureFlow {
    pub name: String,
    /// Packets the flow's schedule asked for before its stop (TCP: messages), packets.
    pub requested_packets: u64,
    /// Packets the sender got out, packets.
    pub sent_packets: u64,
    /// 1 − sent / requested: how far the flow fell short of its requested rate.
    pub shortfall: Option<f64>,
    /// Datagrams the kernel refused to send, packets.
    pub send_errors: u64,
    /// Mean and largest lateness of departures after their deadline, µs.
    pub send_late_mean_us: Option<f64>,
    pub send_late_max_us: f64,
    /// Time spent blocked in `send()`/`write()` (TCP: the socket buffer was full), s.
    pub send_blocked_s: f64,
    /// CPU time (user + system) of the thread that sent the flow, s; the UDP flows of a run
    /// share one thread and each reports its whole time.
    pub send_thread_cpu_s: f64,
    /// From the first packet sent to the last, s: `sent_packets` over it is the rate achieved
    /// (a flow asking for more than the host can send is late, and repays it by sending longer).
    pub send_span_s: Option<f64>,
    /// Copies of an already received sequence number, packets.
    pub duplicates: u64,
    /// Packets that arrived after one with a higher sequence number, packets.
    pub reordered: u64,
    /// Round-trip time by echo (RTT meter, UDP), ms; null otherwise.
    pub rtt_ms: Option<DelayStats>,
    /// Echoes that did not come back (RTT meter), packets.
    pub echo_lost: Option<u64>,
    /// TCP: the sending and receiving sockets' buffers as the kernel reports them
    /// (`SO_SNDBUF`, `SO_RCVBUF`: Linux doubles what is set, socket(7); autotuned ones show their
    /// start), bytes; null for UDP.
    pub so_sndbuf_bytes: Option<u64>,
    pub so_rcvbuf_bytes: Option<u64>,
    /// TCP: the congestion control the sending socket ran ("reno", "cubic", "bbr"...: the
    /// flow's `tcp.variant` where the file gives one, the host's default otherwise).
    pub tcp_congestion: Option<String>,
    /// TCP: the receiving socket's delayed-ACK bound (`TCP_DELACK_MAX_US` read back) where the
    /// flows file sets `tcp.delayed_ack`, ms.
    pub receiver_delack_max_ms: Option<f64>,
    /// TCP: the `tcp` fields the flows file writes that no socket option sets, each with what
    /// sets it on Linux (the run used the host's setting instead).
    pub tcp_not_applied: Vec<String>,
}

/// Per-packet tables under construction.
#[derive(Default)]
struct PacketCols {
    seq: Vec<u64>,
    sent_s: Vec<f64>,
    received_s: Vec<Option<f64>>,
    bytes: Vec<u64>,
    outcome: Vec<String>,
}

/// Rows of a per-packet table handed over at a time when the tables are streamed.
pub const PACKET_CHUNK_ROWS: usize = 1 << 16;

/// What becomes of the per-packet tables (`packets/<flow>`, `packets/<flow>/receiver`).
pub enum PacketTables<'a> {
    /// Not built.
    Off,
    /// Built whole, with the other tables (a run's memory then grows with its packets).
    InMemory,
    /// Handed to `sink` in pieces of at most `rows` rows ([`PACKET_CHUNK_ROWS`] in the
    /// bindings) as they fill (each table's pieces in order, at least one per table), so memory
    /// stays bounded: what remains is the receive time of each packet sent, 8 bytes a packet.
    Streamed { rows: usize, sink: &'a mut dyn FnMut(Table) -> Result<(), String> },
}

impl PacketTables<'_> {
    fn wanted(&self) -> bool {
        !matches!(self, PacketTables::Off)
    }

    /// Hands `c` over if it is full (or, with `last`, whatever it holds).
    fn spill(&mut self, c: &mut PacketCols, name: &str, last: bool) -> Result<(), String> {
        if let PacketTables::Streamed { rows, sink } = self {
            if last || c.seq.len() >= (*rows).max(1) {
                sink(std::mem::take(c).table(name.to_string()))?;
            }
        }
        Ok(())
    }
}

impl PacketCols {
    fn table(self, name: String) -> Table {
        let mut t = Table::new(name);
        t.push("pkt_seq", Column::U64(self.seq));
        t.push("sent_s", Column::F64(self.sent_s));
        t.push("received_s", Column::OptF64(self.received_s));
        t.push("bytes", Column::U64(self.bytes));
        t.push("outcome", Column::Str(self.outcome));
        t
    }
}

/// Computes the report and tables; the per-packet tables of both ends ("packets/<flow>" by
/// the sender's records, "packets/<flow>/receiver" in arrival order) as `packet_tables` says.
pub fn compute(plan: &Plan, m: &Measured, mut packet_tables: PacketTables) -> Result<GenOutput, String> {
    let packets = packet_tables.wanted();
    let names: Vec<(String, String)> = plan.flows.iter().map(|f| (format!("packets/{}", f.name), format!("packets/{}/receiver", f.name))).collect();
    let n = plan.flows.len();
    let rel = |ns: u64| Time(ns.saturating_sub(m.origin_ns));
    let rx_rel = |rx: u64| rel((rx as i128 - m.offset.offset_ns as i128).max(0) as u64);
    let secs = |t: Time| t.0 as f64 / 1e9;
    let wire = |f: usize, b: u32| match plan.flows[f].proto {
        Proto::Udp => b + m.ip_overhead,
        Proto::Tcp => b + 40,
    };
    let mut accounts: Vec<FlowAccount> = plan
        .flows
        .iter()
        .map(|f| {
            let mut mt = FlowMeter::new(plan.interval);
            if let Some(d) = f.deadline {
                mt.set_deadline(d);
            }
            if f.discard_reordered {
                mt.set_discard_reordered();
            }
            FlowAccount::new(mt)
        })
        .collect();
    // A sequence number at or past the packets the sender asked for names no packet it sent.
    let sent_seq = |f: usize, seq: u32| (seq as u64) < m.flows[f].requested;
    let mut unmatched = 0u64;
    let mut rx_at: Vec<Vec<f64>> = if packets { m.flows.iter().map(|s| vec![f64::NAN; s.requested as usize]).collect() } else { Vec::new() };
    let mut recv_cols: Vec<PacketCols> = (0..if packets { n } else { 0 }).map(|_| PacketCols::default()).collect();
    let open = |p: &Path| read_records(p).map_err(|e| format!("{}: {e}", p.display()));
    // Sends first (in the order each thread logged them).
    let mut end = Time(plan.duration_ns);
    let mut span = vec![None::<(u64, u64)>; n];
    for f in &m.sender_files {
        for r in open(f)?.filter(|r| r.kind == RecordKind::Sent && (r.flow as usize) < n) {
            accounts[r.flow as usize].sent(rel(r.tx_ns), r.seq, wire(r.flow as usize, r.bytes));
            let sp = &mut span[r.flow as usize];
            *sp = Some(sp.map_or((r.tx_ns, r.tx_ns), |(a, b)| (a.min(r.tx_ns), b.max(r.tx_ns))));
            // A late sender sends past the planned end: the time series covers it.
            end = end.max(rel(r.tx_ns));
        }
    }
    for r in open(&m.receiver_file)? {
        let f = r.flow as usize;
        if f >= n || r.kind != RecordKind::Received || !sent_seq(f, r.seq) {
            unmatched += 1;
            continue;
        }
        let (now, sent_at) = (rx_rel(r.rx_ns), rel(r.tx_ns));
        let first = accounts[f].received(now, sent_at, r.seq, wire(f, r.bytes), r.bytes as u64);
        if packets {
            let c = &mut recv_cols[f];
            c.seq.push(r.seq as u64);
            c.sent_s.push(secs(sent_at));
            c.received_s.push(Some(secs(now)));
            c.bytes.push(r.bytes as u64);
            c.outcome.push(if first { "received" } else { "duplicate" }.into());
            if first {
                if let Some(x) = rx_at[f].get_mut(r.seq as usize) {
                    *x = secs(now);
                }
            }
            packet_tables.spill(c, &names[f].1, false)?;
        }
        if first {
            end = end.max(now);
        }
    }
    // Tail loss, and the sender's per-packet tables.
    let mut send_cols: Vec<PacketCols> = (0..if packets { n } else { 0 }).map(|_| PacketCols::default()).collect();
    let mut rtt: Vec<Option<(FlowMeter, SeqSet)>> = (0..n).map(|_| None).collect();
    for f in &m.sender_files {
        for r in open(f)? {
            let fi = r.flow as usize;
            if fi >= n {
                continue;
            }
            match r.kind {
                RecordKind::Sent => {
                    let got = accounts[fi].was_received(r.seq);
                    if !got && !m.interrupted {
                        accounts[fi].lost(rel(r.tx_ns), r.seq, DropCause::Unattributed);
                    }
                    if packets {
                        let c = &mut send_cols[fi];
                        let at = rx_at[fi].get(r.seq as usize).copied().filter(|x| !x.is_nan());
                        c.seq.push(r.seq as u64);
                        c.sent_s.push(secs(rel(r.tx_ns)));
                        c.received_s.push(at);
                        c.bytes.push(r.bytes as u64);
                        c.outcome.push(match (got, m.interrupted) {
                            (true, _) => "received",
                            (false, false) => "unattributed",
                            (false, true) => "in_flight",
                        }
                        .into());
                        packet_tables.spill(c, &names[fi].0, false)?;
                    }
                }
                RecordKind::EchoReceived => {
                    let slot = rtt[fi].get_or_insert_with(|| (FlowMeter::new(plan.interval), SeqSet::default()));
                    if sent_seq(fi, r.seq) && slot.1.insert(r.seq) && r.rx_ns >= r.tx_ns {
                        slot.0.on_received(rel(r.rx_ns), rel(r.tx_ns), r.seq, r.bytes);
                    }
                }
                RecordKind::Received => {}
            }
        }
    }
    let mut entries = Vec::with_capacity(n);
    let mut completions = Vec::with_capacity(n);
    let mut measure_flows = Vec::with_capacity(n);
    for (i, f) in plan.flows.iter().enumerate() {
        let s = &m.flows[i];
        let a = &accounts[i];
        let finite = f.volume_bytes().is_some();
        let all_in = a.meter.received_packets() == s.sent && s.sent > 0;
        let completed = (finite && all_in).then_some(a.last_rx).flatten();
        completions.push(completed);
        // A finite transfer's active period ends when it completed.
        let stop = completed.map_or(f.stop_ns, |t| t.0);
        let active = Duration(stop.saturating_sub(f.start_ns));
        entries.push(FlowEntry {
            name: f.name.clone(),
            transport: match f.proto {
                Proto::Udp => Transport::Udp,
                Proto::Tcp => Transport::Tcp,
            },
            src: f.src.clone(),
            dst: f.dst.clone(),
            start: Time(f.start_ns),
            stop: Time(stop),
            account: a,
        });
        let rtt_i = rtt[i].as_ref().map(|(mt, _)| (mt, a.meter.received_packets()));
        let mut mf = measure_flow(&f.name, s, a.duplicates, a.reordered, rtt_i, active);
        if f.proto == Proto::Tcp {
            mf.so_sndbuf_bytes = Some(s.so_sndbuf);
            mf.so_rcvbuf_bytes = m.received.get(i).map(|c| c.so_rcvbuf);
            let n = s.congestion.iter().position(|&b| b == 0).unwrap_or(16);
            mf.tcp_congestion = (n > 0).then(|| String::from_utf8_lossy(&s.congestion[..n]).into_owned());
            mf.tcp_not_applied = f.not_applied.clone();
            mf.receiver_delack_max_ms = m.received.get(i).map(|c| c.delack_max_us).filter(|&us| us > 0).map(|us| us as f64 / 1e3);
        }
        mf.send_span_s = span[i].map(|(a, b)| (b - a) as f64 / 1e9);
        measure_flows.push(mf);
    }
    let events: u64 = m.flows.iter().map(|s| s.sent).sum::<u64>() + m.received.iter().map(|c| c.received).sum::<u64>();
    let header = RunHeader {
        scenario: plan.configuration.clone(),
        seed: plan.seed,
        simulated_s: plan.duration_ns as f64 / 1e9,
        events_processed: events,
        packets_in_network_at_end: 0,
    };
    let connection = |i: usize, forward: &lasthop_core::metrics::FlowSummary| {
        let f = &plan.flows[i];
        (f.proto == Proto::Tcp).then(|| TcpConnectionReport {
            response_time_s: completions[i].map(|t: Time| (t.0.saturating_sub(f.start_ns)) as f64 / 1e9),
            tcp: tcp_report(m.flows[i].tcp.unwrap_or_default(), forward.received_bytes.saturating_sub(40 * forward.received_packets)),
        })
    };
    let (mut report, mut tables, in_flight) = account::report(header, &entries, plan.interval, end, connection);
    report.header.packets_in_network_at_end = in_flight;
    // The round-trip meter's echoes give each UDP flow its round trips and responsiveness, as
    // an echo flow's in the simulator (requests lost: the forward direction's losses).
    for (i, slot) in rtt.iter().enumerate() {
        if let Some((mt, _)) = slot {
            let active = entries[i].stop.since(entries[i].start);
            report.flows[i].round_trip = Some(mt.round_trip(active, report.flows[i].forward.lost_packets));
            tables.push(lasthop_core::report::round_trip_table(&report.flows[i].name, &mt.interval_rows(end)));
        }
    }
    if packets {
        for ((mut s, mut r), (sn, rn)) in send_cols.into_iter().zip(recv_cols).zip(names) {
            if let PacketTables::Streamed { .. } = packet_tables {
                packet_tables.spill(&mut s, &sn, true)?;
                packet_tables.spill(&mut r, &rn, true)?;
            } else {
                tables.push(s.table(sn));
                tables.push(r.table(rn));
            }
        }
    }
    let measure = MeasureReport {
        clock: m.clock,
        clock_offset_ns: m.offset.offset_ns,
        clock_offset_uncertainty_ns: m.offset.uncertainty_ns,
        measured_offset_ns: m.measured_offset.map(|o| o.offset_ns),
        meter: m.meter,
        loss_timeout_s: m.loss_timeout_ns as f64 / 1e9,
        interrupted: m.interrupted,
        receiver_malformed: m.malformed,
        receiver_control_errors: m.control_errors,
        unmatched_records: unmatched,
        flows: measure_flows,
    };
    Ok(GenOutput { report, tables, measure })
}

fn measure_flow(name: &str, s: &FlowSent, duplicates: u64, reordered: u64, rtt: Option<(&FlowMeter, u64)>, active: Duration) -> MeasureFlow {
    MeasureFlow {
        name: name.to_string(),
        requested_packets: s.requested,
        sent_packets: s.sent,
        shortfall: (s.requested > 0).then(|| 1.0 - s.sent as f64 / s.requested as f64),
        send_errors: s.send_errors,
        send_late_mean_us: (s.requested > 0).then(|| s.late_sum_ns as f64 / s.requested as f64 / 1e3),
        send_late_max_us: s.late_max_ns as f64 / 1e3,
        send_blocked_s: s.blocked_ns as f64 / 1e9,
        send_thread_cpu_s: s.cpu_ns as f64 / 1e9,
        send_span_s: None,
        duplicates,
        reordered,
        rtt_ms: rtt.map(|(mt, _)| mt.summary(active).delay_ms),
        echo_lost: rtt.map(|(mt, forward_received)| forward_received.saturating_sub(mt.received_packets())),
        so_sndbuf_bytes: None,
        so_rcvbuf_bytes: None,
        tcp_congestion: None,
        receiver_delack_max_ms: None,
        tcp_not_applied: Vec::new(),
    }
}

/// Linux `TCP_INFO` state numbers (include/net/tcp_states.h) as the report's CamelCase names.
fn tcp_state(s: u8) -> &'static str {
    match s {
        1 => "Established",
        2 => "SynSent",
        3 => "SynReceived",
        4 => "FinWait1",
        5 => "FinWait2",
        6 => "TimeWait",
        7 => "Closed",
        8 => "CloseWait",
        9 => "LastAck",
        10 => "Listen",
        11 => "Closing",
        _ => "Unknown",
    }
}

fn tcp_report(t: TcpInfo, bytes_read: u64) -> TcpReport {
    TcpReport {
        state: tcp_state(t.state).into(),
        sender: TcpCounters {
            segments_sent: t.segs_out,
            retransmitted_segments: t.total_retrans,
            fast_retransmits: 0,
            timeouts: 0,
            persist_probes: 0,
            rtt_samples: 0,
        },
        final_cwnd_bytes: t.cwnd_bytes,
        srtt_ms: (t.srtt_us > 0).then(|| t.srtt_us as f64 / 1e3),
        rto_ms: t.rto_us as f64 / 1e3,
        windows: AdvertisedWindows { receiver_zero_windows: 0, receiver_min_open_window_bytes: None, sender_min_open_window_bytes: None },
        bytes_stored: None,
        bytes_read,
        receiver_awnd_cap_bytes: None,
        bbr: None,
        receiver_awnd_max_retransmissions: None,
        ecn: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_states_are_named_as_the_simulator_names_them() {
        assert_eq!((tcp_state(1), tcp_state(6), tcp_state(99)), ("Established", "TimeWait", "Unknown"));
    }
}
