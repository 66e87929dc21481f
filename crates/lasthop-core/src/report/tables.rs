//! The column tables of a run, independent of how they are stored (the Python layer writes each
//! as a Parquet file): named, typed columns of equal length, and builders for the tables every
//! world writes the same way — the per-interval time series, a TCP endpoint's trace and the delay
//! CDF. Column names and order are part of the results format, like the report's keys.
//!
//! Table names: "intervals", "delay_cdf", "queue/<link>:<a>-><b>", "wlan/<wlan>/<node>", "rates/<wlan>",
//! "tcp/<flow>", "tcp/<flow>/receiver", "packets/<flow>", "round_trips/<flow>" (an echo flow's).

use crate::metrics::{FlowMeter, IntervalRow};

/// One column of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    /// Missing values (no sample in the interval) are `None` and become nulls in Parquet.
    OptF64(Vec<Option<f64>>),
    U64(Vec<u64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table of columns, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// "intervals", "queue/<link>:<a>-><b>", "tcp/<flow>", "packets/<flow>" (see the module doc).
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: impl Into<String>) -> Self {
        Table { name: name.into(), columns: Vec::new() }
    }
    pub fn push(&mut self, name: &str, c: Column) {
        self.columns.push((name.to_string(), c));
    }
    /// Appends the rows of `other`, a table of the same columns (names, order and types: one
    /// builder made both); a table without columns takes `other`'s.
    pub fn append(&mut self, other: &Table) {
        if self.columns.is_empty() {
            self.columns = other.columns.clone();
            return;
        }
        assert_eq!(self.columns.len(), other.columns.len(), "table {}: appending a table of other columns", self.name);
        for ((name, mine), (theirs_name, theirs)) in self.columns.iter_mut().zip(&other.columns) {
            assert_eq!(name, theirs_name, "table {}: appending a table of other columns", self.name);
            match (mine, theirs) {
                (Column::F64(a), Column::F64(b)) => a.extend_from_slice(b),
                (Column::OptF64(a), Column::OptF64(b)) => a.extend_from_slice(b),
                (Column::U64(a), Column::U64(b)) => a.extend_from_slice(b),
                (Column::Str(a), Column::Str(b)) => a.extend_from_slice(b),
                _ => panic!("table {}: column {name} has another type in the appended table", self.name),
            }
        }
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|(_, c)| c.len()).unwrap_or(0)
    }
}

/// The "intervals" table under construction: one row per flow and interval (the meters'
/// [`IntervalRow`]s), flows one after the other.
#[derive(Default)]
pub struct IntervalColumns {
    flow: Vec<String>,
    t: Vec<f64>,
    tx_packets: Vec<u64>,
    rx_packets: Vec<u64>,
    lost_packets: Vec<u64>,
    thr_tx: Vec<f64>,
    thr_rx: Vec<f64>,
    goodput: Vec<f64>,
    delay_mean: Vec<Option<f64>>,
    delay_max: Vec<Option<f64>>,
    jitter_mean: Vec<Option<f64>>,
    jitter_max: Vec<Option<f64>>,
}

impl IntervalColumns {
    /// Appends the row of `flow` for one interval.
    pub fn push(&mut self, flow: &str, r: IntervalRow) {
        self.flow.push(flow.to_string());
        self.t.push(r.t_start_s);
        self.tx_packets.push(r.tx_packets);
        self.rx_packets.push(r.rx_packets);
        self.lost_packets.push(r.lost_packets);
        self.thr_tx.push(r.throughput_tx_bps);
        self.thr_rx.push(r.throughput_rx_bps);
        self.goodput.push(r.goodput_bps);
        self.delay_mean.push(r.delay_mean_ms);
        self.delay_max.push(r.delay_max_ms);
        self.jitter_mean.push(r.jitter_mean_ms);
        self.jitter_max.push(r.jitter_max_ms);
    }

    /// The finished "intervals" table.
    pub fn into_table(self) -> Table {
        let mut t = Table::new("intervals");
        t.push("flow", Column::Str(self.flow));
        t.push("t_start_s", Column::F64(self.t));
        t.push("tx_packets", Column::U64(self.tx_packets));
        t.push("rx_packets", Column::U64(self.rx_packets));
        t.push("lost_packets", Column::U64(self.lost_packets));
        t.push("throughput_tx_bps", Column::F64(self.thr_tx));
        t.push("throughput_rx_bps", Column::F64(self.thr_rx));
        t.push("goodput_bps", Column::F64(self.goodput));
        t.push("delay_mean_ms", Column::OptF64(self.delay_mean));
        t.push("delay_max_ms", Column::OptF64(self.delay_max));
        t.push("jitter_mean_ms", Column::OptF64(self.jitter_mean));
        t.push("jitter_max_ms", Column::OptF64(self.jitter_max));
        t
    }
}

/// One sample of a TCP endpoint's state, in report units.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpTraceRow {
    /// When the sample was taken, s.
    pub time_s: f64,
    /// What caused it ("ack", "dup_ack", "fast_retransmit", "timeout", ...).
    pub event: String,
    /// Congestion window, bytes.
    pub cwnd_bytes: u64,
    /// Slow-start threshold, bytes; None while still "arbitrarily high" (RFC 5681).
    pub ssthresh_bytes: Option<f64>,
    /// The window the peer last advertised, bytes.
    pub peer_window_bytes: u64,
    /// The window this endpoint last advertised, bytes.
    pub advertised_window_bytes: u64,
    /// Bytes sent and not yet acknowledged, bytes.
    pub flight_bytes: u64,
    /// Smoothed RTT (RFC 6298), ms; None before the first sample.
    pub srtt_ms: Option<f64>,
    /// Retransmission timeout, ms.
    pub rto_ms: f64,
    /// The RTT sample this event took, ms, if any.
    pub rtt_sample_ms: Option<f64>,
}

/// The table "tcp/<flow>" (or "tcp/<flow>/receiver") named `name`, one row per trace sample.
pub fn tcp_trace_table(name: &str, rows: impl IntoIterator<Item = TcpTraceRow>) -> Table {
    // Columns sized once from the iterator's length: a long trace is the largest output a run
    // has, and growing ten vectors by doubling would hold up to twice its memory.
    let rows = rows.into_iter();
    let n = rows.size_hint().0;
    let (mut time, mut event, mut cwnd, mut ssthresh, mut peer) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut adv, mut flight, mut srtt, mut rto, mut sample) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for r in rows {
        time.push(r.time_s);
        event.push(r.event);
        cwnd.push(r.cwnd_bytes);
        ssthresh.push(r.ssthresh_bytes);
        peer.push(r.peer_window_bytes);
        adv.push(r.advertised_window_bytes);
        flight.push(r.flight_bytes);
        srtt.push(r.srtt_ms);
        rto.push(r.rto_ms);
        sample.push(r.rtt_sample_ms);
    }
    let mut t = Table::new(name);
    t.push("time_s", Column::F64(time));
    t.push("event", Column::Str(event));
    t.push("cwnd_bytes", Column::U64(cwnd));
    t.push("ssthresh_bytes", Column::OptF64(ssthresh));
    t.push("peer_window_bytes", Column::U64(peer));
    t.push("advertised_window_bytes", Column::U64(adv));
    t.push("flight_bytes", Column::U64(flight));
    t.push("srtt_ms", Column::OptF64(srtt));
    t.push("rto_ms", Column::F64(rto));
    t.push("rtt_sample_ms", Column::OptF64(sample));
    t
}

/// The quantiles of the delay CDF: 0, 0.01, ..., 1.
fn cdf_quantiles() -> Vec<f64> {
    (0..=100).map(|k| k as f64 / 100.0).collect()
}

/// The "delay_cdf" table: per flow with at least one received packet, its one-way delay (ms)
/// at quantiles 0, 0.01, ..., 1 (the meter's percentile rule, so it agrees with the summary).
pub fn delay_cdf_table<'a>(flows: impl IntoIterator<Item = (&'a str, &'a FlowMeter)>) -> Table {
    let qs = cdf_quantiles();
    let (mut flow, mut quantile, mut delay) = (Vec::new(), Vec::new(), Vec::new());
    for (name, meter) in flows {
        if let Some(d) = meter.delay_quantiles(&qs) {
            flow.resize(flow.len() + qs.len(), name.to_string());
            quantile.extend(qs.iter().copied());
            delay.extend(d);
        }
    }
    let mut t = Table::new("delay_cdf");
    t.push("flow", Column::Str(flow));
    t.push("quantile", Column::F64(quantile));
    t.push("delay_ms", Column::F64(delay));
    t
}

/// An echo flow's round trips per interval (`rows`: the interval rows of the meter of its
/// echoes, whose delay runs from a request's send time to its echo's arrival), each in the
/// interval its echo came back in: what flent's UDP ping series plot.
pub fn round_trip_table(flow: &str, rows: &[IntervalRow]) -> Table {
    let mut t = Table::new(format!("round_trips/{flow}"));
    t.push("t_start_s", Column::F64(rows.iter().map(|r| r.t_start_s).collect()));
    t.push("echoes", Column::U64(rows.iter().map(|r| r.rx_packets).collect()));
    t.push("rtt_mean_ms", Column::OptF64(rows.iter().map(|r| r.delay_mean_ms).collect()));
    t.push("rtt_max_ms", Column::OptF64(rows.iter().map(|r| r.delay_max_ms).collect()));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Duration, Time};

    #[test]
    fn appending_a_table_adds_its_rows_column_by_column() {
        let mut a = Table::new("t");
        a.push("flow", Column::Str(vec!["x".into()]));
        a.push("v", Column::OptF64(vec![None]));
        let mut b = Table::new("t");
        b.push("flow", Column::Str(vec!["y".into(), "y".into()]));
        b.push("v", Column::OptF64(vec![Some(1.0), None]));
        a.append(&b);
        assert_eq!(a.column("flow"), Some(&Column::Str(vec!["x".into(), "y".into(), "y".into()])));
        assert_eq!(a.column("v").map(Column::len), Some(3));
        let mut empty = Table::new("t");
        empty.append(&b);
        assert_eq!(empty, b);
    }

    fn names(t: &Table) -> Vec<&str> {
        t.columns.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn interval_table_keeps_its_column_order_and_nulls() {
        // Two 100 ms intervals of one flow: 10 packets of 1250 B in the first (1 Mb/s, as in the
        // meter's own test), none in the second, whose delay and jitter are therefore null.
        let mut m = FlowMeter::new(Duration::from_millis(100));
        for i in 0..10u64 {
            m.on_sent(Time(i * 10_000_000), 1250);
            m.on_received(Time(i * 10_000_000 + 1_000_000), Time(i * 10_000_000), i as u32, 1250);
        }
        let mut cols = IntervalColumns::default();
        for r in m.interval_rows(Time(200_000_000)) {
            cols.push("f", r);
        }
        let t = cols.into_table();
        assert_eq!(t.name, "intervals");
        let expected = [
            "flow", "t_start_s", "tx_packets", "rx_packets", "lost_packets", "throughput_tx_bps", "throughput_rx_bps",
            "goodput_bps", "delay_mean_ms", "delay_max_ms", "jitter_mean_ms", "jitter_max_ms",
        ];
        assert_eq!(names(&t), expected);
        assert_eq!(t.rows(), 2);
        assert_eq!(t.column("t_start_s"), Some(&Column::F64(vec![0.0, 0.1])));
        assert_eq!(t.column("throughput_rx_bps"), Some(&Column::F64(vec![1e6, 0.0])));
        assert_eq!(t.column("delay_mean_ms"), Some(&Column::OptF64(vec![Some(1.0), None])), "1 ms each; none in the second");
    }

    #[test]
    fn tcp_trace_table_has_one_row_per_sample_in_report_units() {
        let row = |time_s, event: &str, ssthresh| TcpTraceRow {
            time_s,
            event: event.to_string(),
            cwnd_bytes: 14_600,
            ssthresh_bytes: ssthresh,
            peer_window_bytes: 65_535,
            advertised_window_bytes: 65_535,
            flight_bytes: 2920,
            srtt_ms: Some(50.0),
            rto_ms: 1000.0,
            rtt_sample_ms: None,
        };
        let t = tcp_trace_table("tcp/bulk", [row(0.5, "ack", None), row(0.75, "timeout", Some(7300.0))]);
        assert_eq!(t.name, "tcp/bulk");
        let expected = [
            "time_s", "event", "cwnd_bytes", "ssthresh_bytes", "peer_window_bytes", "advertised_window_bytes", "flight_bytes",
            "srtt_ms", "rto_ms", "rtt_sample_ms",
        ];
        assert_eq!(names(&t), expected);
        assert_eq!(t.column("event"), Some(&Column::Str(vec!["ack".into(), "timeout".into()])));
        assert_eq!(t.column("ssthresh_bytes"), Some(&Column::OptF64(vec![None, Some(7300.0)])));
    }

    #[test]
    fn delay_cdf_has_101_quantiles_per_flow_that_received_anything() {
        // Delays 1..=100 ms: nearest rank max(1, round(q·100)) gives q·100 ms, except q = 0
        // (rank 1, 1 ms). A flow that received nothing has no rows.
        let mut m = FlowMeter::new(Duration::from_millis(100));
        for i in 1..=100u64 {
            m.on_received(Time(i * 2_000_000), Time(i * 1_000_000), i as u32, 100);
        }
        let silent = FlowMeter::new(Duration::from_millis(100));
        let t = delay_cdf_table([("a", &m), ("silent", &silent)]);
        assert_eq!(names(&t), ["flow", "quantile", "delay_ms"]);
        assert_eq!(t.rows(), 101);
        let Some(Column::F64(d)) = t.column("delay_ms") else { panic!("delay_ms is f64") };
        assert_eq!((d[0], d[1], d[50], d[99], d[100]), (1.0, 1.0, 50.0, 99.0, 100.0));
    }
}
