//! What a simulation reports: fills lasthop-core's typed [`RunReport`] and the column tables
//! from the simulation's meters and counters, at the end of a run or at any moment of it.
//!
//! Only the filling is simulator-specific; the format (keys, order, units, the table builders)
//! is defined once in `lasthop_core::report`, so the emulator and the traffic generator write
//! the same `summary.json` and tables. Taking a trace or the per-packet records moves them out
//! of the simulation: a second `output()` reports them empty.

use super::{FlowKind, PacketRecords, Simulation, TcpFlow, Transport};
use crate::results::{Drained, RunOutput};
use crate::tcp::TraceSample;
use lasthop_core::report::{
    self, delay_cdf_table, tcp_trace_table, AdvertisedWindows, BbrReport, EcnReport, Column, FlowReport, HostReport, IntervalColumns,
    ReverseSummary, RunHeader, RunReport, Table, TcpConnectionReport, TcpCounters, TcpReport, TcpTraceRow,
};
use lasthop_core::Time;
use lasthop_scenario::build::network::{drain_hop_traces, held_hop_trace_samples, hop_reports, processor_reports};
use std::collections::BTreeMap;

impl Simulation {
    /// The report and tables of the run so far.
    pub fn output(&mut self) -> RunOutput {
        let end = self.now;
        // Table order: intervals, then per flow its TCP traces and packet records, the delay
        // CDF, the queue traces of the links, those of the WLAN members.
        let mut intervals = IntervalColumns::default();
        let mut tables = Vec::new();
        let flows = self.flow_reports(end, &mut intervals, &mut tables);
        tables.push(delay_cdf_table(self.flows.iter().map(|f| (f.name.as_str(), &f.meters.forward))));
        let hops = hop_reports(&mut self.net.hops, &self.net.node_names, end, &mut tables);
        let header = RunHeader {
            scenario: serde_json::to_value(&self.scenario).expect("the scenario serializes"),
            seed: self.scenario.simulation.seed,
            simulated_s: end.as_secs_f64(),
            events_processed: self.run.events_processed,
            packets_in_network_at_end: self.net.packets.live() as u64,
        };
        let processors = processor_reports(&self.net.processors, &self.net.node_names);
        let report = RunReport::assemble(header, flows, hops, processors, self.host_reports(end));
        let mut all = vec![intervals.into_table()];
        all.extend(tables);
        RunOutput { report, tables: all }
    }

    /// The interval rows and trace samples recorded since the last drain, handed over (the run
    /// forgets them; recording goes on). The tables keep [`Simulation::output`]'s names and
    /// order; a table with no new rows is left out.
    pub fn drain(&mut self) -> Drained {
        let now = self.now;
        let mut drained = Drained::default();
        for f in &mut self.flows {
            let rows = f.meters.forward.take_interval_rows(now);
            if !rows.is_empty() {
                let mut columns = IntervalColumns::default();
                rows.into_iter().for_each(|r| columns.push(&f.name, r));
                drained.intervals.push(columns.into_table());
            }
            if let FlowKind::Tcp(t) = &mut f.kind {
                let (sender, receiver) = (t.client.drain_trace(), t.server.drain_trace());
                if !sender.is_empty() || !receiver.is_empty() {
                    drained.traces.push(tcp_trace_table(&format!("tcp/{}", f.name), sender.iter().map(trace_row)));
                    drained.traces.push(tcp_trace_table(&format!("tcp/{}/receiver", f.name), receiver.iter().map(trace_row)));
                }
            }
        }
        drained.traces.extend(drain_hop_traces(&mut self.net.hops, &self.net.node_names));
        drained
    }

    /// Interval rows and trace samples held in memory: what [`Simulation::drain`] would hand over
    /// (and more: the interval still running).
    pub fn held_rows(&self) -> usize {
        let flows: usize = self
            .flows
            .iter()
            .map(|f| {
                let traces = match &f.kind {
                    FlowKind::Tcp(t) => t.client.held_trace_samples() + t.server.held_trace_samples(),
                    FlowKind::Udp(_) => 0,
                };
                f.meters.forward.held_intervals() + traces
            })
            .sum();
        let hops = held_hop_trace_samples(&self.net.hops);
        flows + hops
    }

    /// Every flow's report; its interval rows go to `intervals`, its traces and packet records
    /// to `tables`.
    fn flow_reports(&mut self, end: Time, intervals: &mut IntervalColumns, tables: &mut Vec<Table>) -> Vec<FlowReport> {
        let live_max: BTreeMap<usize, u32> = self.live_awnd.iter().map(|l| (l.flow, l.window.max_retransmissions)).collect();
        let mut reports = Vec::with_capacity(self.flows.len());
        for (fi, f) in self.flows.iter_mut().enumerate() {
            let stop = f.period.stop.min(end);
            let completed = match &f.kind {
                FlowKind::Tcp(t) => t.completed_at,
                FlowKind::Udp(_) => None,
            };
            let active = completed.unwrap_or(stop).since(f.period.start);
            let forward = f.meters.forward.summary(active);
            let reverse = ReverseSummary::from(&f.meters.reverse.summary(active));
            let round_trip = f.echo.then(|| f.meters.reverse.round_trip(active, forward.lost_packets));
            let connection = match &mut f.kind {
                FlowKind::Tcp(t) => {
                    let connection = tcp_connection(t, f.period.start, live_max.get(&fi).copied());
                    let trace = t.client.take_trace();
                    if !trace.is_empty() || self.scenario.probes.tcp.contains(&f.name) {
                        tables.push(tcp_trace_table(&format!("tcp/{}", f.name), trace.iter().map(trace_row)));
                        let rtrace = t.server.take_trace();
                        tables.push(tcp_trace_table(&format!("tcp/{}/receiver", f.name), rtrace.iter().map(trace_row)));
                    }
                    Some(connection)
                }
                FlowKind::Udp(_) => None,
            };
            for row in f.meters.forward.interval_rows(end) {
                intervals.push(&f.name, row);
            }
            if f.echo {
                tables.push(report::round_trip_table(&f.name, &f.meters.reverse.interval_rows(end)));
            }
            if let Some(r) = f.meters.records.take() {
                tables.push(packet_table(&f.name, r));
            }
            reports.push(FlowReport {
                name: f.name.clone(),
                transport: match f.transport {
                    Transport::Tcp => report::Transport::Tcp,
                    Transport::Udp => report::Transport::Udp,
                },
                src: self.net.node_names[f.ends.src as usize].clone(),
                dst: self.net.node_names[f.ends.dst as usize].clone(),
                start_s: f.period.start.as_secs_f64(),
                stop_s: stop.as_secs_f64(),
                forward,
                reverse,
                round_trip,
                connection,
            });
        }
        reports
    }

    /// The hosts whose work takes time (an instant device has nothing to report).
    fn host_reports(&self, end: Time) -> Vec<HostReport> {
        (0..self.net.n_nodes)
            .filter(|&n| !self.hosts.devices[n].is_instant())
            .map(|n| HostReport {
                node: self.net.node_names[n].clone(),
                cpu_busy_s: self.hosts.cpus[n].busy().as_secs_f64(),
                cpu_utilization: self.hosts.cpus[n].busy().as_secs_f64() / end.as_secs_f64().max(1e-12),
            })
            .collect()
    }
}

/// The TCP part of a flow's report: response time and the connection's end state.
fn tcp_connection(t: &TcpFlow, start: Time, awnd_max_retransmissions: Option<u32>) -> TcpConnectionReport {
    let st = &t.client.stats;
    TcpConnectionReport {
        response_time_s: t.completed_at.map(|c| c.since(start).as_secs_f64()),
        tcp: TcpReport {
            state: format!("{:?}", t.client.state()),
            sender: TcpCounters {
                segments_sent: st.segments_sent,
                retransmitted_segments: st.retransmitted_segments,
                fast_retransmits: st.fast_retransmits,
                timeouts: st.timeouts,
                persist_probes: st.persist_probes,
                rtt_samples: st.rtt_samples,
            },
            final_cwnd_bytes: t.client.cwnd(),
            srtt_ms: t.client.srtt().map(|d| d.as_millis_f64()),
            rto_ms: t.client.rto().as_millis_f64(),
            windows: AdvertisedWindows {
                receiver_zero_windows: t.server.stats.zero_windows_advertised,
                receiver_min_open_window_bytes: t.server.stats.min_open_window_advertised,
                sender_min_open_window_bytes: st.min_open_window_advertised,
            },
            bytes_stored: t.file.as_ref().map(|f| f.receiver.written),
            bytes_read: t.read_total,
            receiver_awnd_cap_bytes: t.server.awnd_cap(),
            bbr: t.client.bbr_state().map(|(bw, rtt, mode)| BbrReport {
                btl_bw_bps: bw,
                rtprop_ms: rtt.map(|r| r.as_millis_f64()),
                mode: mode.to_string(),
            }),
            receiver_awnd_max_retransmissions: awnd_max_retransmissions,
            ecn: t.client.config().ecn.then_some(EcnReport {
                negotiated: t.client.ecn.negotiated,
                ce_received: t.server.ecn.ce_received,
                ece_received: t.client.ecn.ece_received,
                cwnd_reductions: t.client.ecn.reductions,
            }),
        },
    }
}

/// A TCP trace sample in report units. The initial ssthresh is "arbitrarily high" (RFC 5681),
/// represented by a huge number here: null until the first loss.
fn trace_row(s: &TraceSample) -> TcpTraceRow {
    TcpTraceRow {
        time_s: s.time.as_secs_f64(),
        event: s.event.name().to_string(),
        cwnd_bytes: s.cwnd,
        ssthresh_bytes: (s.ssthresh < 1 << 40).then_some(s.ssthresh as f64),
        peer_window_bytes: s.peer_window,
        advertised_window_bytes: s.adv_window,
        flight_bytes: s.flight,
        srtt_ms: s.srtt.map(|d| d.as_millis_f64()),
        rto_ms: s.rto.as_millis_f64(),
        rtt_sample_ms: s.rtt_sample.map(|d| d.as_millis_f64()),
    }
}


/// The table "packets/<flow>": one row per packet of a flow with per-packet records on.
fn packet_table(flow: &str, r: PacketRecords) -> Table {
    let mut t = Table::new(format!("packets/{flow}"));
    t.push("pkt_seq", Column::U64(r.pkt_seq));
    t.push("sent_s", Column::F64(r.sent_ns.iter().map(|&n| n as f64 / 1e9).collect()));
    t.push("received_s", Column::OptF64(r.received_ns));
    t.push("bytes", Column::U64(r.bytes));
    t.push("outcome", Column::Str(r.outcome));
    t
}
