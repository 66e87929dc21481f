//! Flow metrics, defined once for all three worlds (simulate, emulate, measure).
//!
//! Definitions (reference: `shared/reference/models.md` §8):
//! - one-way delay (RFC 7679): receive time of the last bit minus send time of the first bit;
//!   mean, min, p50/p95/p99, max. Percentiles are nearest-rank (the value at rank
//!   max(1, round(q·n))): exact up to 4 096 samples, beyond from an HDR histogram with 3
//!   significant digits (relative error ≤ 0.1 %, so memory does not grow with the number of
//!   packets), always clamped to the observed minimum and maximum.
//! - IPDV (RFC 3393) with the "consecutive sequence numbers" selection function:
//!   ipdv(i, i+1) = D(i+1) − D(i), undefined when either packet is lost. Jitter is reported as the
//!   mean, p99 and max of |IPDV|.
//! - the RFC 3550 §6.4.1 interarrival jitter estimator, J += (|D(i−1,i)| − J)/16, in arrival order;
//! - the D-ITG average jitter: mean |D_k − D_(k−1)| over consecutively *received* packets;
//! - loss (RFC 7680) split by cause: queue drop, link loss, MAC retry limit, unattributed (a
//!   real network measured end to end, where the cause cannot be seen), still in flight at the
//!   end, so that `sent = received + lost` holds exactly;
//! - throughput at the sender and the receiver counts IP bytes; goodput counts application
//!   payload bytes delivered in order to the receiving application.
//!
//! A [`FlowMeter`] takes events (`on_sent`, `on_received`, `on_dropped`, `on_delivered`) and
//! produces a [`FlowSummary`] plus per-interval rows.

use crate::time::{Duration, Time};
use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a packet did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// Tail drop at a full queue.
    Queue,
    /// Lost on the link (random loss, frame error, packet error generator).
    Link,
    /// Dropped by a MAC after its retry limit (802.11) or retransmission limit (RLC SDU discard).
    RetryLimit,
    /// Arrived at a reordering receiver after it had given up waiting (RLC WT): application loss.
    OutOfOrder,
    /// Absorbed by a mechanism on purpose (a duplicate ACK Snoop suppresses).
    Suppressed,
    /// Lost somewhere the observer cannot see: a real network measured end to end (the measure
    /// world), where a packet sent and not received within the loss timeout (RFC 7680 §2.4)
    /// has no known cause.
    Unattributed,
}

const IPDV_WINDOW: usize = 4096;

#[derive(Clone, Copy, Debug, Default)]
struct IntervalAcc {
    tx_packets: u64,
    tx_bytes: u64,
    rx_packets: u64,
    rx_bytes: u64,
    delivered_bytes: u64,
    lost_packets: u64,
    delay_sum_ns: u128,
    delay_max_ns: u64,
    ipdv_count: u64,
    ipdv_abs_sum_ns: u128,
    ipdv_abs_max_ns: u64,
}

/// One row of the per-interval time series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntervalRow {
    pub t_start_s: f64,
    pub tx_packets: u64,
    pub rx_packets: u64,
    pub lost_packets: u64,
    pub throughput_tx_bps: f64,
    pub throughput_rx_bps: f64,
    pub goodput_bps: f64,
    pub delay_mean_ms: Option<f64>,
    pub delay_max_ms: Option<f64>,
    pub jitter_mean_ms: Option<f64>,
    pub jitter_max_ms: Option<f64>,
}

/// Statistics of the one-way delay (RFC 7679) of the received packets, in milliseconds; every
/// field is null before the first packet arrives, and p50/p95/p99 always in a light meter
/// (which keeps no percentiles).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DelayStats {
    /// Mean one-way delay, ms.
    pub mean: Option<f64>,
    /// Population standard deviation of the one-way delay, ms.
    pub std: Option<f64>,
    /// Smallest one-way delay, ms.
    pub min: Option<f64>,
    /// Median (nearest rank), ms.
    pub p50: Option<f64>,
    /// 95th percentile (nearest rank), ms.
    pub p95: Option<f64>,
    /// 99th percentile (nearest rank), ms.
    pub p99: Option<f64>,
    /// Largest one-way delay, ms.
    pub max: Option<f64>,
}

/// Delay variation, in milliseconds; null while undefined (fewer than two packets, or no two
/// consecutive sequence numbers received).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JitterStats {
    /// Mean |IPDV| over consecutive sequence numbers (RFC 3393), ms.
    pub mean: Option<f64>,
    /// 99th percentile of |IPDV| (nearest rank), ms.
    pub p99: Option<f64>,
    /// Largest |IPDV|, ms.
    pub max: Option<f64>,
    /// RFC 3550 §6.4.1 interarrival jitter estimator after the last packet, ms.
    pub rfc3550: Option<f64>,
    /// D-ITG's average jitter (mean |ΔD| between consecutively received packets), ms.
    pub ditg: Option<f64>,
}

/// Lost packets of one direction by cause (RFC 7680 loss, split where the cause is known);
/// the causes add up to `lost_packets`, packets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LossByCause {
    /// Dropped by a queue (tail drop or AQM), packets.
    pub queue_drop: u64,
    /// Lost on a link (random loss, frame error, packet error generator), packets.
    pub link_loss: u64,
    /// Dropped by a MAC after its retry limit (802.11) or by RLC SDU discard, packets.
    pub retry_limit: u64,
    /// Dropped by a reordering receiver that gave up waiting (RLC), packets.
    pub out_of_order: u64,
    /// Absorbed on purpose by a mechanism (duplicate ACKs Snoop suppresses), packets.
    pub suppressed: u64,
    /// Lost where no cause can be seen: sent, and not received within the loss timeout on a
    /// real network measured end to end (the measure world; always 0 in a simulation), packets.
    pub unattributed: u64,
    /// Sent but neither received nor dropped when the run ended, packets.
    pub in_flight_at_end: u64,
}

/// The metrics of one direction of a flow over its active period.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowSummary {
    /// Packets the sender sent, packets.
    pub sent_packets: u64,
    /// Lost in the network: queue drops, link losses, MAC/RLC discards, unattributed (Koga et al.'s
    /// "transport layer loss"), packets.
    pub transport_lost_packets: u64,
    /// Received but unusable: dropped for order at a reordering receiver, later than the
    /// flow's deadline, or reordered at an application that discards such packets
    /// ("application layer loss"), packets.
    pub application_lost_packets: u64,
    /// Received later than the flow's deadline after they were sent, packets.
    pub late_packets: u64,
    /// Arrived in time but after a packet sent later, at an application that discards those
    /// (`FlowMeter::set_discard_reordered`); not counted again when also late; packets.
    pub reordered_packets: u64,
    /// IP bytes sent (headers included), bytes.
    pub sent_bytes: u64,
    /// Packets received whole, packets.
    pub received_packets: u64,
    /// IP bytes received (headers included), bytes.
    pub received_bytes: u64,
    /// Packets lost: dropped for one of the causes in `lost_by_cause`, packets. Packets still
    /// in flight when the run ended are not lost (RFC 7680 §2.4 counts a packet lost only once
    /// it has not arrived within a timeout); `lost_by_cause.in_flight_at_end` counts them.
    pub lost_packets: u64,
    /// `lost_packets / (sent_packets − in flight at the end)`, a fraction in [0, 1]; null if
    /// nothing was sent that could have arrived.
    pub loss_ratio: Option<f64>,
    /// `lost_packets` split by cause.
    pub lost_by_cause: LossByCause,
    /// Application payload delivered in order to the receiving application, bytes.
    pub delivered_bytes: u64,
    /// The active period the rates divide by (start to stop, completion or the end), s.
    pub active_s: f64,
    /// `sent_bytes` over the active period, bit/s.
    pub throughput_tx_bps: f64,
    /// `received_bytes` over the active period, bit/s.
    pub throughput_rx_bps: f64,
    /// `delivered_bytes` over the active period, bit/s.
    pub goodput_bps: f64,
    /// One-way delay statistics, ms.
    pub delay_ms: DelayStats,
    /// Delay variation statistics, ms.
    pub jitter_ms: JitterStats,
}

/// The share of round trips responsiveness keeps: the best 95 % (draft-ietf-ippm-
/// responsiveness-08 §4.4, a one-sided trimmed mean).
pub const RPM_KEEP: f64 = 0.95;

/// Round trips of a flow whose receiver echoes each packet (`echo = true`): what an irtt or
/// UDP_RR probe under load measures, and the responsiveness it gives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundTrip {
    /// Echoes that came back, packets.
    pub echoes: u64,
    /// Requests or echoes lost on the way, packets.
    pub echoes_lost: u64,
    /// Round-trip time from a request's send time to its echo's arrival, ms.
    pub rtt_ms: DelayStats,
    /// The mean of the best 95 % of the round trips (the responsiveness draft's one-sided
    /// trimmed mean), ms.
    pub trimmed_mean_ms: Option<f64>,
    /// Responsiveness, round trips per minute: 60 000 / `trimmed_mean_ms` (draft-ietf-ippm-
    /// responsiveness-08 §4.4, from these probes alone, not the draft's HTTP/2 and TLS
    /// probes: an "RPM-equivalent"). Poor < 300, Fair 300-1000, Good 1000-6000, Excellent
    /// > 6000 (the draft's categories).
    pub rpm: Option<f64>,
}

/// Accumulates the metrics of one flow, direction sender → receiver.
#[derive(Debug)]
pub struct FlowMeter {
    interval: Duration,
    counts: Counts,
    losses: Losses,
    delay: DelayAcc,
    jitter: JitterAcc,
    /// The intervals from `first_interval` on ([`FlowMeter::take_interval_rows`] hands over and
    /// forgets the ones before it).
    intervals: Vec<IntervalAcc>,
    first_interval: usize,
    keep_intervals: bool,
    percentiles: bool,
}

/// What was sent and received.
#[derive(Debug, Default)]
struct Counts {
    sent_packets: u64,
    sent_bytes: u64,
    received_packets: u64,
    received_bytes: u64,
    delivered_bytes: u64,
}

/// Drops by cause, and the receiver's ordering and deadline rules that make a packet late or
/// reordered (application loss).
#[derive(Debug, Default)]
struct Losses {
    queue_drops: u64,
    link_losses: u64,
    retry_drops: u64,
    reorder_drops: u64,
    suppressed: u64,
    unattributed: u64,
    late: u64,
    reordered: u64,
    deadline_ns: Option<u64>,
    discard_reordered: bool,
    /// Highest per-flow sequence number received so far.
    max_seq_received: Option<u32>,
}

/// One-way delay (RFC 7679): moments and percentiles.
#[derive(Debug)]
struct DelayAcc {
    /// Empty for a meter without percentiles.
    delay_q: Quantiles,
    delay_sum_ns: u128,
    delay_sq_sum_ns2: f64,
    delay_min_ns: u64,
    delay_max_ns: u64,
}

/// Delay variation: IPDV (RFC 3393), the RFC 3550 estimator and D-ITG's definition.
#[derive(Debug, Default)]
struct JitterAcc {
    ipdv_slots: Vec<(u32, i64)>, // (pkt_seq + 1, delay_ns); 0 = empty
    ipdv_abs_q: Quantiles,
    ipdv_abs_sum_ns: u128,
    ipdv_count: u64,
    ipdv_abs_max_ns: u64,
    rfc3550_j_ns: f64,
    last_transit_ns: Option<i64>,
    ditg_sum_ns: u128,
    ditg_count: u64,
}


/// Samples kept exactly before a meter switches to its histogram (32 KiB of values).
const EXACT_SAMPLES: usize = 4096;

/// The values whose percentiles a summary reports: exact while few, then an HDR histogram.
#[derive(Debug, Default)]
struct Quantiles {
    exact: Vec<u64>,
    hist: Option<Box<Histogram<u32>>>,
    n: u64,
    min: u64,
    max: u64,
}

impl Quantiles {
    fn record(&mut self, v: u64) {
        (self.min, self.max) = if self.n == 0 { (v, v) } else { (self.min.min(v), self.max.max(v)) };
        self.n += 1;
        if let Some(h) = self.hist.as_mut() {
            h.saturating_record(v.clamp(1, HIST_MAX_NS));
            return;
        }
        self.exact.push(v);
        if self.exact.len() > EXACT_SAMPLES {
            let mut h = Box::new(new_histogram());
            for &x in &self.exact {
                h.saturating_record(x.clamp(1, HIST_MAX_NS));
            }
            self.exact = Vec::new();
            self.hist = Some(h);
        }
    }

    /// Nearest rank of quantile `q`: max(1, round(q·n)), at most n.
    fn rank(&self, q: f64) -> u64 {
        ((q * self.n as f64 + 0.5) as u64).clamp(1, self.n)
    }

    /// The values at quantiles `qs` (ascending, 0..1); None before any sample. A histogram
    /// bucket's upper edge is clamped to the observed range, so no percentile exceeds the max.
    fn at(&self, qs: &[f64]) -> Option<Vec<u64>> {
        if self.n == 0 {
            return None;
        }
        let Some(h) = self.hist.as_ref() else {
            let mut sorted = self.exact.clone();
            sorted.sort_unstable();
            return Some(qs.iter().map(|&q| sorted[self.rank(q) as usize - 1]).collect());
        };
        let mut out = Vec::with_capacity(qs.len());
        let (mut k, mut cum, mut last) = (0, 0u64, self.max);
        for v in h.iter_recorded() {
            cum += v.count_since_last_iteration();
            last = h.highest_equivalent(v.value_iterated_to()).clamp(self.min, self.max);
            while k < qs.len() && cum >= self.rank(qs[k]) {
                out.push(last);
                k += 1;
            }
        }
        out.resize(qs.len(), last);
        Some(out)
    }
}

impl Quantiles {
    /// The mean of the smallest `keep` share of the values (a one-sided trimmed mean: the
    /// nearest rank of `keep` of them), ns; None before any sample. Past the exact samples each
    /// histogram bucket counts at its median equivalent value.
    fn trimmed_mean(&self, keep: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let k = self.rank(keep);
        let Some(h) = self.hist.as_ref() else {
            let mut sorted = self.exact.clone();
            sorted.sort_unstable();
            return Some(sorted[..k as usize].iter().map(|&v| v as f64).sum::<f64>() / k as f64);
        };
        let (mut left, mut sum) = (k, 0.0);
        for v in h.iter_recorded() {
            let take = v.count_since_last_iteration().min(left);
            sum += take as f64 * h.median_equivalent(v.value_iterated_to()).clamp(self.min, self.max) as f64;
            left -= take;
            if left == 0 {
                break;
            }
        }
        Some(sum / k as f64)
    }
}

/// Histogram of nanosecond values from 1 ns to one hour, 3 significant digits (~130 KB).
fn new_histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("valid histogram bounds")
}

const HIST_MAX_NS: u64 = 3_600_000_000_000;

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

impl FlowMeter {
    pub fn new(interval: Duration) -> Self {
        assert!(interval.0 > 0, "interval must be positive");
        FlowMeter {
            interval,
            counts: Counts::default(),
            losses: Losses::default(),
            delay: DelayAcc { delay_q: Quantiles::default(), delay_sum_ns: 0, delay_sq_sum_ns2: 0.0, delay_min_ns: u64::MAX, delay_max_ns: 0 },
            jitter: JitterAcc::default(),
            intervals: Vec::new(),
            first_interval: 0,
            keep_intervals: true,
            percentiles: true,
        }
    }

    /// Packets received more than `deadline` after they were sent count as late (application
    /// loss in the sense of Koga et al.: the playout deadline was missed).
    pub fn set_deadline(&mut self, deadline: Duration) {
        self.losses.deadline_ns = Some(deadline.0);
    }

    /// The receiving application drops a packet that arrives after one sent later: its playout
    /// point has passed it. Koga et al. count such out-of-order delivery as application loss
    /// ("out-of-order packet delivery causes a large loss probability", Sect. 5.1).
    pub fn set_discard_reordered(&mut self) {
        self.losses.discard_reordered = true;
    }

    /// A light meter: counts, means and maxima only — no per-interval series and no
    /// percentile histograms (for directions nobody plots, such as TCP ACKs).
    pub fn light(interval: Duration) -> Self {
        FlowMeter { keep_intervals: false, percentiles: false, ..FlowMeter::new(interval) }
    }

    fn record_quantile(q: &mut Quantiles, enabled: bool, v: u64) {
        if enabled {
            q.record(v);
        }
    }

    fn slot(&mut self, t: Time) -> &mut IntervalAcc {
        let i = if self.keep_intervals { (t.0 / self.interval.0) as usize } else { 0 };
        // Every event lands at `now`, never in an interval that has ended and been taken.
        debug_assert!(i >= self.first_interval, "an event at {t:?} in an interval already taken");
        let i = i.saturating_sub(self.first_interval);
        if i >= self.intervals.len() {
            self.intervals.resize(i + 1, IntervalAcc::default());
        }
        &mut self.intervals[i]
    }

    /// A packet of `bytes` IP bytes left the sender.
    pub fn on_sent(&mut self, now: Time, bytes: u32) {
        self.counts.sent_packets += 1;
        self.counts.sent_bytes += bytes as u64;
        let s = self.slot(now);
        s.tx_packets += 1;
        s.tx_bytes += bytes as u64;
    }

    /// A packet was lost in the network.
    pub fn on_dropped(&mut self, now: Time, cause: DropCause) {
        match cause {
            DropCause::Queue => self.losses.queue_drops += 1,
            DropCause::Link => self.losses.link_losses += 1,
            DropCause::RetryLimit => self.losses.retry_drops += 1,
            DropCause::OutOfOrder => self.losses.reorder_drops += 1,
            DropCause::Suppressed => self.losses.suppressed += 1,
            DropCause::Unattributed => self.losses.unattributed += 1,
        }
        self.slot(now).lost_packets += 1;
    }

    /// Application payload delivered in order to the receiving application (goodput).
    pub fn on_delivered(&mut self, now: Time, bytes: u64) {
        self.counts.delivered_bytes += bytes;
        self.slot(now).delivered_bytes += bytes;
    }

    /// The packet with per-flow sequence `pkt_seq`, sent at `sent_at`, arrived whole at `now`.
    pub fn on_received(&mut self, now: Time, sent_at: Time, pkt_seq: u32, bytes: u32) {
        let delay = now.0 as i64 - sent_at.0 as i64;
        let delay_u = delay.max(0) as u64;
        self.counts.received_packets += 1;
        self.counts.received_bytes += bytes as u64;
        if self.losses.deadline_ns.is_some_and(|d| delay_u > d) {
            self.losses.late += 1;
        } else if self.losses.discard_reordered && self.losses.max_seq_received.is_some_and(|m| pkt_seq < m) {
            self.losses.reordered += 1;
        }
        self.losses.max_seq_received = Some(self.losses.max_seq_received.map_or(pkt_seq, |m| m.max(pkt_seq)));
        Self::record_quantile(&mut self.delay.delay_q, self.percentiles, delay_u);
        self.delay.delay_sum_ns += delay_u as u128;
        self.delay.delay_sq_sum_ns2 += (delay_u as f64) * (delay_u as f64);
        self.delay.delay_min_ns = self.delay.delay_min_ns.min(delay_u);
        self.delay.delay_max_ns = self.delay.delay_max_ns.max(delay_u);
        {
            let s = self.slot(now);
            s.rx_packets += 1;
            s.rx_bytes += bytes as u64;
            s.delay_sum_ns += delay_u as u128;
            s.delay_max_ns = s.delay_max_ns.max(delay_u);
        }
        // RFC 3550 and D-ITG both work in arrival order on the transit time.
        if let Some(prev) = self.jitter.last_transit_ns {
            let d = (delay - prev).unsigned_abs();
            self.jitter.rfc3550_j_ns += (d as f64 - self.jitter.rfc3550_j_ns) / 16.0;
            self.jitter.ditg_sum_ns += d as u128;
            self.jitter.ditg_count += 1;
        }
        self.jitter.last_transit_ns = Some(delay);
        self.record_ipdv(now, pkt_seq, delay);
    }

    /// RFC 3393 with consecutive sequence numbers: pair this packet with seq−1 and seq+1 if they
    /// arrived (the latter only when reordered), using a bounded window of recent delays.
    fn record_ipdv(&mut self, now: Time, pkt_seq: u32, delay: i64) {
        if self.jitter.ipdv_slots.is_empty() {
            self.jitter.ipdv_slots = vec![(0, 0); IPDV_WINDOW];
        }
        let idx = |s: u32| s as usize % IPDV_WINDOW;
        let tag = |s: u32| s.wrapping_add(1);
        let prev = pkt_seq.wrapping_sub(1);
        let next = pkt_seq.wrapping_add(1);
        let mut pairs = [None, None];
        if pkt_seq != 0 && self.jitter.ipdv_slots[idx(prev)].0 == tag(prev) {
            pairs[0] = Some(delay - self.jitter.ipdv_slots[idx(prev)].1);
        }
        if self.jitter.ipdv_slots[idx(next)].0 == tag(next) {
            pairs[1] = Some(self.jitter.ipdv_slots[idx(next)].1 - delay);
        }
        self.jitter.ipdv_slots[idx(pkt_seq)] = (tag(pkt_seq), delay);
        for v in pairs.into_iter().flatten() {
            let a = v.unsigned_abs();
            Self::record_quantile(&mut self.jitter.ipdv_abs_q, self.percentiles, a);
            self.jitter.ipdv_abs_sum_ns += a as u128;
            self.jitter.ipdv_count += 1;
            self.jitter.ipdv_abs_max_ns = self.jitter.ipdv_abs_max_ns.max(a);
            let s = self.slot(now);
            s.ipdv_count += 1;
            s.ipdv_abs_sum_ns += a as u128;
            s.ipdv_abs_max_ns = s.ipdv_abs_max_ns.max(a);
        }
    }

    /// The round trips of an echo flow, measured by the meter of its echoes (whose "one-way"
    /// delay runs from the request's send time to the echo's arrival), and the responsiveness
    /// they give.
    /// `requests_lost`: the requests that never reached the echoing end.
    pub fn round_trip(&self, active: Duration, requests_lost: u64) -> RoundTrip {
        let s = self.summary(active);
        let trimmed = self.delay.delay_q.trimmed_mean(RPM_KEEP).map(ms);
        RoundTrip {
            echoes: s.received_packets,
            echoes_lost: requests_lost + s.lost_packets,
            rtt_ms: s.delay_ms,
            trimmed_mean_ms: trimmed,
            rpm: trimmed.filter(|&t| t > 0.0).map(|t| 60_000.0 / t),
        }
    }

    /// One-way delay (ms) at each quantile in `qs` (ascending, 0..1), for a CDF plot; None
    /// before any sample. The same rule as the summary's percentiles, so the two agree.
    pub fn delay_quantiles(&self, qs: &[f64]) -> Option<Vec<f64>> {
        self.delay.delay_q.at(qs).map(|v| v.into_iter().map(|ns| ms(ns as f64)).collect())
    }

    pub fn sent_packets(&self) -> u64 {
        self.counts.sent_packets
    }
    pub fn received_packets(&self) -> u64 {
        self.counts.received_packets
    }
    pub fn dropped_packets(&self) -> u64 {
        self.losses.queue_drops + self.losses.link_losses + self.losses.retry_drops + self.losses.reorder_drops + self.losses.suppressed + self.losses.unattributed
    }
    pub fn delivered_bytes(&self) -> u64 {
        self.counts.delivered_bytes
    }

    /// The summary over an active period of `active` (the flow's start to its stop or the end).
    pub fn summary(&self, active: Duration) -> FlowSummary {
        let dropped = self.losses.queue_drops + self.losses.link_losses + self.losses.retry_drops + self.losses.reorder_drops + self.losses.suppressed + self.losses.unattributed;
        // Saturating: a meter that only sees receptions (a receiver-side log, duplicates) can
        // count more packets received than sent.
        let in_flight = self.counts.sent_packets.saturating_sub(self.counts.received_packets + dropped);
        let lost = dropped;
        let settled = self.counts.sent_packets.max(self.counts.received_packets + dropped) - in_flight;
        let secs = active.as_secs_f64();
        let rate = |bytes: u64| if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 };
        let n = self.counts.received_packets;
        let have = n > 0;
        let q = |h: &Quantiles, p: f64| h.at(&[p]).map(|v| ms(v[0] as f64));
        let mean_ns = if have { self.delay.delay_sum_ns as f64 / n as f64 } else { 0.0 };
        let var = if have { (self.delay.delay_sq_sum_ns2 / n as f64 - mean_ns * mean_ns).max(0.0) } else { 0.0 };
        let jit = self.jitter.ipdv_count > 0;
        FlowSummary {
            sent_packets: self.counts.sent_packets,
            transport_lost_packets: self.losses.queue_drops + self.losses.link_losses + self.losses.retry_drops + self.losses.unattributed,
            application_lost_packets: self.losses.reorder_drops + self.losses.late + self.losses.reordered,
            late_packets: self.losses.late,
            reordered_packets: self.losses.reordered,
            sent_bytes: self.counts.sent_bytes,
            received_packets: self.counts.received_packets,
            received_bytes: self.counts.received_bytes,
            lost_packets: lost,
            loss_ratio: (settled > 0).then(|| lost as f64 / settled as f64),
            lost_by_cause: LossByCause {
                queue_drop: self.losses.queue_drops,
                link_loss: self.losses.link_losses,
                retry_limit: self.losses.retry_drops,
                out_of_order: self.losses.reorder_drops,
                suppressed: self.losses.suppressed,
                unattributed: self.losses.unattributed,
                in_flight_at_end: in_flight,
            },
            delivered_bytes: self.counts.delivered_bytes,
            active_s: secs,
            throughput_tx_bps: rate(self.counts.sent_bytes),
            throughput_rx_bps: rate(self.counts.received_bytes),
            goodput_bps: rate(self.counts.delivered_bytes),
            delay_ms: DelayStats {
                mean: have.then(|| ms(mean_ns)),
                std: have.then(|| ms(var.sqrt())),
                min: have.then(|| ms(self.delay.delay_min_ns as f64)),
                p50: q(&self.delay.delay_q, 0.50),
                p95: q(&self.delay.delay_q, 0.95),
                p99: q(&self.delay.delay_q, 0.99),
                max: have.then(|| ms(self.delay.delay_max_ns as f64)),
            },
            jitter_ms: JitterStats {
                mean: jit.then(|| ms(self.jitter.ipdv_abs_sum_ns as f64 / self.jitter.ipdv_count as f64)),
                p99: q(&self.jitter.ipdv_abs_q, 0.99),
                max: jit.then(|| ms(self.jitter.ipdv_abs_max_ns as f64)),
                rfc3550: (n > 1).then(|| ms(self.jitter.rfc3550_j_ns)),
                ditg: (self.jitter.ditg_count > 0).then(|| ms(self.jitter.ditg_sum_ns as f64 / self.jitter.ditg_count as f64)),
            },
        }
    }

    /// Per-interval rows up to `end` (intervals with no traffic are included, as zeros), from
    /// the first one not yet taken by [`FlowMeter::take_interval_rows`].
    pub fn interval_rows(&self, end: Time) -> Vec<IntervalRow> {
        let n = (end.0.div_ceil(self.interval.0)) as usize;
        (self.first_interval..n.max(self.first_interval)).map(|i| self.interval_row(i)).collect()
    }

    /// The rows of the intervals that ended by `now` and were not taken before, handed over and
    /// forgotten, so that a long run streams its series instead of holding it. An interval that
    /// ended is final: every event lands at the time it happens, and time only moves forward.
    pub fn take_interval_rows(&mut self, now: Time) -> Vec<IntervalRow> {
        if !self.keep_intervals {
            return Vec::new();
        }
        let ended = (now.0 / self.interval.0) as usize;
        if ended <= self.first_interval {
            return Vec::new();
        }
        let rows = (self.first_interval..ended).map(|i| self.interval_row(i)).collect();
        self.intervals.drain(..(ended - self.first_interval).min(self.intervals.len()));
        self.first_interval = ended;
        rows
    }

    /// Intervals held in memory (not yet taken).
    pub fn held_intervals(&self) -> usize {
        self.intervals.len()
    }

    /// The row of interval `i` (counted from the start of the run).
    fn interval_row(&self, i: usize) -> IntervalRow {
        let secs = self.interval.as_secs_f64();
        let a = i.checked_sub(self.first_interval).and_then(|k| self.intervals.get(k)).copied().unwrap_or_default();
        IntervalRow {
            t_start_s: (i as u64 * self.interval.0) as f64 / 1e9,
            tx_packets: a.tx_packets,
            rx_packets: a.rx_packets,
            lost_packets: a.lost_packets,
            throughput_tx_bps: a.tx_bytes as f64 * 8.0 / secs,
            throughput_rx_bps: a.rx_bytes as f64 * 8.0 / secs,
            goodput_bps: a.delivered_bytes as f64 * 8.0 / secs,
            delay_mean_ms: (a.rx_packets > 0).then(|| ms(a.delay_sum_ns as f64 / a.rx_packets as f64)),
            delay_max_ms: (a.rx_packets > 0).then(|| ms(a.delay_max_ns as f64)),
            jitter_mean_ms: (a.ipdv_count > 0).then(|| ms(a.ipdv_abs_sum_ns as f64 / a.ipdv_count as f64)),
            jitter_max_ms: (a.ipdv_count > 0).then(|| ms(a.ipdv_abs_max_ns as f64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// The worked example of models.md §8 (computed independently by `ippm_metrics.py`):
    /// 10 packets every 20 ms, delays 50, 52, 49, 55, lost, 51, 70, 48, 50, 53 ms, packet 7
    /// overtakes packet 6.
    fn worked_example() -> FlowMeter {
        worked_example_with(|_| {})
    }

    fn worked_example_with(setup: impl Fn(&mut FlowMeter)) -> FlowMeter {
        let mut m = FlowMeter::new(Duration(100 * MS));
        setup(&mut m);
        let delays = [Some(50), Some(52), Some(49), Some(55), None, Some(51), Some(70), Some(48), Some(50), Some(53)];
        let mut arrivals: Vec<(u64, u64, u32)> = Vec::new();
        for (i, d) in delays.iter().enumerate() {
            let sent = i as u64 * 20 * MS;
            m.on_sent(Time(sent), 100);
            if let Some(d) = d {
                arrivals.push((sent + d * MS, sent, i as u32));
            }
        }
        m.on_dropped(Time(4 * 20 * MS + 1), DropCause::Link);
        arrivals.sort();
        for (rx, tx, seq) in arrivals {
            m.on_received(Time(rx), Time(tx), seq, 100);
        }
        m
    }

    #[test]
    fn worked_example_matches_reference_script() {
        let s = worked_example().summary(Duration(200 * MS));
        // ippm_output.txt: loss 0.100, mean delay 53.111 ms, std 6.297 ms.
        assert_eq!(s.lost_packets, 1);
        assert_eq!(s.loss_ratio, Some(0.1));
        assert!((s.delay_ms.mean.unwrap() - 53.111).abs() < 1e-3);
        assert!((s.delay_ms.std.unwrap() - 6.297).abs() < 1e-3);
        // IPDV (consecutive seq) = 2, −3, 6, 19, −22, 2, 3 ms: mean |IPDV| 8.143 ms, max 22 ms.
        assert!((s.jitter_ms.mean.unwrap() - 8.142857).abs() < 1e-5);
        assert!((s.jitter_ms.max.unwrap() - 22.0).abs() < 1e-9);
        // RFC 3550 J after the last packet = 3.3939 ms; D-ITG average jitter = 7.8750 ms.
        assert!((s.jitter_ms.rfc3550.unwrap() - 3.3939).abs() < 1e-4);
        assert!((s.jitter_ms.ditg.unwrap() - 7.875).abs() < 1e-9);
        // A small sample is exact: sorted delays 48 49 50 50 51 52 53 55 70 -> nearest-rank
        // median (rank round(4.5) = 5) 51 ms, p99 (rank 9) 70 ms.
        assert_eq!(s.delay_ms.p50, Some(51.0), "{:?}", s.delay_ms);
        assert_eq!(s.delay_ms.p99, Some(70.0));
        assert_eq!(s.delay_ms.min, Some(48.0));
    }

    #[test]
    fn reordered_packets_count_as_application_loss_once() {
        // In the worked example packet 7 (sent 140 ms, 48 ms) overtakes packet 6 (sent 120 ms,
        // 70 ms): with a discarding application packet 6 is lost to it, once. With a 60 ms
        // deadline packet 6 is late as well and counts as late only.
        let mut m = worked_example_with(|m| m.set_discard_reordered());
        let s = m.summary(Duration(200 * MS));
        assert_eq!((s.reordered_packets, s.late_packets, s.application_lost_packets), (1, 0, 1));
        m = worked_example_with(|m| {
            m.set_discard_reordered();
            m.set_deadline(Duration(60 * MS));
        });
        let s = m.summary(Duration(200 * MS));
        assert_eq!((s.reordered_packets, s.late_packets, s.application_lost_packets), (0, 1, 1));
        assert_eq!(worked_example().summary(Duration(200 * MS)).application_lost_packets, 0, "off by default");
    }

    #[test]
    fn the_cdf_agrees_with_the_summary_percentiles() {
        let m = worked_example();
        let s = m.summary(Duration(200 * MS));
        let q = m.delay_quantiles(&[0.0, 0.5, 0.95, 0.99, 1.0]).unwrap();
        assert_eq!(Some(q[1]), s.delay_ms.p50);
        assert_eq!(Some(q[2]), s.delay_ms.p95);
        assert_eq!(Some(q[3]), s.delay_ms.p99);
        assert_eq!((q[0], q[4]), (48.0, 70.0));
    }

    #[test]
    fn histogram_percentiles_never_exceed_the_observed_maximum() {
        // 10 000 delays 1.000..10.999 ms then one of 76.1488 ms (the case where p99 came out as
        // 76.1528 ms: the top histogram bucket's upper edge). p99 is rank 9 901 of 10 001:
        // 10.900 ms within 0.1 %; the p100 is the maximum itself.
        let mut m = FlowMeter::new(Duration(100 * MS));
        for i in 0..10_000u64 {
            m.on_received(Time(20 * MS + i * 1000), Time(20 * MS + i * 1000 - MS - i * 1000 % (10 * MS)), i as u32, 100);
        }
        m.on_received(Time(200 * MS), Time(200 * MS - 76_148_800), 10_000, 100);
        let s = m.summary(Duration(100 * MS));
        let q = m.delay_quantiles(&[0.99, 1.0]).unwrap();
        assert_eq!(q[1], 76.1488, "the top quantile is the maximum, not the bucket's edge");
        assert!(s.delay_ms.p99.unwrap() <= s.delay_ms.max.unwrap());
        assert!((s.delay_ms.p99.unwrap() - 10.9).abs() / 10.9 < 0.001, "{:?}", s.delay_ms);
    }

    #[test]
    fn losses_and_in_flight_account_for_every_sent_packet() {
        let mut m = FlowMeter::new(Duration(100 * MS));
        for i in 0..10 {
            m.on_sent(Time(i * MS), 1000);
        }
        m.on_dropped(Time(5 * MS), DropCause::Queue);
        m.on_dropped(Time(6 * MS), DropCause::Link);
        for i in 0..6 {
            m.on_received(Time(i * MS + 10 * MS), Time(i * MS), i as u32, 1000);
        }
        let s = m.summary(Duration(100 * MS));
        assert_eq!(s.lost_by_cause, LossByCause { queue_drop: 1, link_loss: 1, retry_limit: 0, out_of_order: 0, suppressed: 0, unattributed: 0, in_flight_at_end: 2 });
        assert_eq!(s.sent_packets, s.received_packets + s.lost_packets + s.lost_by_cause.in_flight_at_end);
        // Hand count: 2 dropped of the 8 whose fate is known (RFC 7680: the 2 in flight are not
        // lost); counting them would give 4 / 10.
        assert_eq!((s.lost_packets, s.loss_ratio), (2, Some(0.25)));
    }

    #[test]
    fn unattributed_losses_are_transport_losses_that_close_the_count() {
        // A measured flow: 10 sent, 7 received, the sender's count says 3 never arrived within
        // the timeout and nothing tells where: 3 unattributed, 3 / 10 lost, none in flight.
        let mut m = FlowMeter::new(Duration(100 * MS));
        for i in 0..10 {
            m.on_sent(Time(i * MS), 100);
        }
        for i in 0..7 {
            m.on_received(Time(i * MS + MS), Time(i * MS), i as u32, 100);
        }
        for _ in 0..3 {
            m.on_dropped(Time(20 * MS), DropCause::Unattributed);
        }
        let s = m.summary(Duration(100 * MS));
        assert_eq!((s.lost_by_cause.unattributed, s.lost_by_cause.in_flight_at_end), (3, 0));
        assert_eq!((s.lost_packets, s.transport_lost_packets, s.loss_ratio), (3, 3, Some(0.3)));
    }

    #[test]
    fn interval_rows_split_throughput_by_time() {
        let mut m = FlowMeter::new(Duration(100 * MS));
        // 10 packets of 1250 B in the first 100 ms = 1 Mb/s, none in the second.
        for i in 0..10 {
            m.on_sent(Time(i * 10 * MS), 1250);
            m.on_received(Time(i * 10 * MS + MS), Time(i * 10 * MS), i as u32, 1250);
        }
        let rows = m.interval_rows(Time(200 * MS));
        assert_eq!(rows.len(), 2);
        assert!((rows[0].throughput_rx_bps - 1e6).abs() < 1e-6);
        assert_eq!(rows[1].rx_packets, 0);
        assert_eq!(rows[0].jitter_mean_ms, Some(0.0));
    }

    /// The worked example's events in time order, `take_interval_rows` called between them.
    fn worked_example_taken_at(takes: &[u64]) -> (Vec<IntervalRow>, FlowMeter) {
        let mut m = FlowMeter::new(Duration(30 * MS));
        let delays = [Some(50), Some(52), Some(49), Some(55), None, Some(51), Some(70), Some(48), Some(50), Some(53)];
        // (time, what): 0 = sent, 1 = received (seq), 2 = the loss.
        let mut events: Vec<(u64, u8, u32)> = Vec::new();
        for (i, d) in delays.iter().enumerate() {
            let sent = i as u64 * 20 * MS;
            events.push((sent, 0, i as u32));
            if let Some(d) = d {
                events.push((sent + d * MS, 1, i as u32));
            }
        }
        events.push((4 * 20 * MS + 1, 2, 4));
        events.sort();
        let mut taken = Vec::new();
        let mut next_take = takes.iter().peekable();
        for (t, what, seq) in events {
            while let Some(&&at) = next_take.peek() {
                if at > t {
                    break;
                }
                taken.extend(m.take_interval_rows(Time(at)));
                next_take.next();
            }
            match what {
                0 => m.on_sent(Time(t), 100),
                1 => m.on_received(Time(t), Time(seq as u64 * 20 * MS), seq, 100),
                _ => m.on_dropped(Time(t), DropCause::Link),
            }
        }
        (taken, m)
    }

    #[test]
    fn interval_rows_taken_during_a_run_are_the_rows_of_the_whole_run() {
        // Taking the ended intervals at any moments (inside an interval, on its boundary, twice
        // at one time) and then the rest at the end gives exactly the rows of one call at the
        // end: 253 ms of 30 ms intervals = 9 rows (ceil(253/30)).
        let end = Time(253 * MS);
        let (_, whole) = worked_example_taken_at(&[]);
        let want = whole.interval_rows(end);
        assert_eq!(want.len(), 9);
        let (mut got, m) = worked_example_taken_at(&[10 * MS, 60 * MS, 60 * MS, 95 * MS, 150 * MS]);
        // Taken at 150 ms: intervals 0-4 (0-150 ms) are handed over, none is held before 150 ms.
        assert_eq!(got.len(), 5);
        // Held: intervals 5-7 (150-240 ms); the last event, packet 9 received at 233 ms, is in 7.
        assert_eq!(m.held_intervals(), 3, "the taken intervals are no longer held");
        got.extend(m.interval_rows(end));
        assert_eq!(got, want);
        assert_eq!(m.summary(Duration(200 * MS)).received_packets, 9, "the summary does not depend on taking");
    }
}

/// Jain's fairness index of `xs` (Jain, Chiu, Hawe, DEC-TR-301, 1984): (Σx)² / (n Σx²), 1 when
/// all are equal, 1/n when one has everything. None for no values or all zero.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    (squares > 0.0).then(|| sum * sum / (xs.len() as f64 * squares))
}

#[cfg(test)]
mod round_trip_tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn responsiveness_is_60000_over_the_best_95_percents_mean() {
        // Round trips of 1, 2, ..., 100 ms: the best 95 % are 1..=95 ms (nearest rank 95 of
        // 100), their mean 48 ms, so RPM = 60 000 / 48 = 1250 (draft-ietf-ippm-responsiveness).
        let mut m = FlowMeter::new(Duration::from_millis(100));
        for i in 1..=100u64 {
            m.on_sent(Time(i * 1000 * MS), 64);
            m.on_received(Time(i * 1000 * MS + i * MS), Time(i * 1000 * MS), i as u32, 64);
        }
        let rt = m.round_trip(Duration::from_secs(101), 2);
        assert_eq!((rt.echoes, rt.echoes_lost), (100, 2));
        assert_eq!(rt.trimmed_mean_ms, Some(48.0));
        assert_eq!(rt.rpm, Some(1250.0));
        assert_eq!(rt.rtt_ms.p99, Some(99.0));
    }

    #[test]
    fn the_trimmed_mean_past_the_exact_samples_comes_from_the_histogram() {
        // 9 500 round trips of 10 ms and 500 of 1 s (10 000: past the 4 096 exact samples). The
        // best 95 % are exactly the 10 ms ones: 10 ms within the histogram's 0.1 %, ~6000 RPM.
        let mut m = FlowMeter::new(Duration::from_millis(100));
        for i in 0..10_000u64 {
            let rtt = if i % 20 == 0 { 1000 * MS } else { 10 * MS };
            m.on_sent(Time(i * MS), 64);
            m.on_received(Time(i * MS + rtt), Time(i * MS), i as u32, 64);
        }
        let rt = m.round_trip(Duration::from_secs(20), 0);
        let t = rt.trimmed_mean_ms.unwrap();
        assert!((t / 10.0 - 1.0).abs() < 1e-3, "{t}");
        assert!((rt.rpm.unwrap() / 6000.0 - 1.0).abs() < 1e-3);
    }
}

#[cfg(test)]
mod jain_tests {
    use super::jain_index;

    #[test]
    fn jains_index_of_known_allocations() {
        // Equal shares: 1; one of four has all: 1/4; (1, 2, 3): 36 / (3 · 14) = 0.857142…
        assert_eq!(jain_index(&[2.0; 5]), Some(1.0));
        assert_eq!(jain_index(&[0.0, 0.0, 7.0, 0.0]), Some(0.25));
        assert!((jain_index(&[1.0, 2.0, 3.0]).unwrap() - 6.0 / 7.0).abs() < 1e-15);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }
}
