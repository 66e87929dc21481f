//! PIE, Proportional Integral controller Enhanced (RFC 8033), as Linux's `pie` qdisc runs it
//! by default (net/sched/sch_pie.c, include/net/pie.h): a FIFO whose arrivals are dropped (or,
//! with `ecn`, ECN-capable ones marked while the probability is at most 10 %) with a probability
//! that a controller updates every `t_update` from the queueing delay:
//!
//! ```text
//! p = α·(qdelay − target) + β·(qdelay − qdelay_old), scaled down while the probability is small
//!     (÷2048 below 10⁻⁶ … ÷2 below 0.1), at most +2 % per update above 10 %;
//! drop_prob += p; ×0.98 while both delays are 0; +2 % above 250 ms; kept in [0, 1]
//! ```
//!
//! with RFC 8033's defaults (target 15 ms, t_update 15 ms, α 0.125 Hz, β 1.25 Hz, a 150 ms burst
//! allowance) and the queueing delay as Linux measures it without `dq_rate_estimator`: the
//! sojourn time of the packet last dequeued (0 once the queue is empty). An arrival is never
//! dropped while the queue holds at most two packets' worth, nor while the delay was under half
//! the target with a probability under 20 %; the draws are de-randomized as RFC 8033 §5.1
//! (accumulated probability: none below 0.85, always at 8.5). The controller's periodic update
//! runs lazily: every update due by an arrival or a departure runs then, in order.

use super::aqm::Queued;
use crate::rng::{uniform01, SimRng};
use crate::time::{Duration, Time};
use crate::units::QueueLimit;
use std::collections::VecDeque;

/// PIE's parameters (RFC 8033 §4 and Linux's defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    pub target: Duration,
    pub t_update: Duration,
    /// Per second.
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Duration,
    /// The mean packet size of RFC 8033's "2 × MEAN_PKTSIZE" floor, bytes.
    pub mtu: u32,
    /// Mark ECN-capable arrivals instead of dropping them while the probability is ≤ 10 %.
    pub ecn: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
            mtu: 1500,
            ecn: false,
        }
    }
}

/// A PIE queue of items `T`.
#[derive(Clone, Debug)]
pub struct Pie<T> {
    pub(super) q: VecDeque<Queued<T>>,
    pub(super) bytes: u64,
    limit: QueueLimit,
    params: PieParams,
    rng: SimRng,
    drop_prob: f64,
    accu_prob: f64,
    qdelay: Duration,
    qdelay_old: Duration,
    burst_allowance: Duration,
    next_update: Time,
    /// Arrivals the controller dropped (early drops, not tail drops).
    pub early_drops: u64,
}

impl<T: Copy> Pie<T> {
    pub fn new(limit: QueueLimit, params: PieParams, rng: SimRng) -> Self {
        Pie {
            q: VecDeque::new(),
            bytes: 0,
            limit,
            params,
            rng,
            drop_prob: 0.0,
            accu_prob: 0.0,
            qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst_allowance: params.max_burst,
            next_update: Time::ZERO + params.t_update,
            early_drops: 0,
        }
    }

    pub fn params(&self) -> &PieParams {
        &self.params
    }

    /// The current drop probability.
    pub fn drop_probability(&self) -> f64 {
        self.drop_prob
    }

    /// RFC 8033 §4's enqueue: `x` joins the queue, is marked CE, or is returned (dropped: full,
    /// or PIE's early drop, counted in `early_drops`).
    pub fn enqueue(&mut self, mut x: Queued<T>) -> Option<Queued<T>> {
        let now = x.enqueued;
        self.update_until(now);
        let full = match self.limit {
            QueueLimit::Packets(n) => self.q.len() as u64 >= n,
            QueueLimit::Bytes(b) => self.bytes + x.bytes as u64 > b,
        };
        if full {
            return Some(x);
        }
        let half_target = Duration(self.params.target.0 / 2);
        if self.drop_prob == 0.0 && self.qdelay < half_target && self.qdelay_old < half_target {
            self.burst_allowance = self.params.max_burst;
        }
        if self.burst_allowance == Duration::ZERO && self.drop_early(x.bytes) {
            if self.params.ecn && x.ect && self.drop_prob <= 0.1 {
                x.ce = true;
            } else {
                self.early_drops += 1;
                return Some(x);
            }
        }
        self.bytes += x.bytes as u64;
        self.q.push_back(x);
        None
    }

    /// RFC 8033 §4.1 `drop_early` with §5.1's de-randomization.
    fn drop_early(&mut self, bytes: u32) -> bool {
        let mean = self.params.mtu as u64;
        let half_target = Duration(self.params.target.0 / 2);
        if (self.qdelay_old < half_target && self.drop_prob < 0.2) || self.bytes + bytes as u64 <= 2 * mean {
            return false;
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += self.drop_prob;
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            self.accu_prob = 0.0;
            return true;
        }
        if uniform01(&mut self.rng) < self.drop_prob {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }

    /// The head at `now`; its sojourn is the controller's queueing delay.
    pub fn dequeue(&mut self, now: Time) -> Option<Queued<T>> {
        self.update_until(now);
        let x = self.q.pop_front()?;
        self.bytes -= x.bytes as u64;
        self.qdelay = if self.q.is_empty() { Duration::ZERO } else { now - x.enqueued };
        Some(x)
    }

    /// Every periodic update due by `now`, in order.
    fn update_until(&mut self, now: Time) {
        while self.next_update <= now {
            self.calculate_drop_prob();
            self.next_update = self.next_update + self.params.t_update;
        }
    }

    /// RFC 8033 §4.2 `calculate_drop_prob` (and §4.3's burst allowance).
    fn calculate_drop_prob(&mut self) {
        let (q, old, target) = (self.qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64(), self.params.target.as_secs_f64());
        let mut p = self.params.alpha * (q - target) + self.params.beta * (q - old);
        p /= match self.drop_prob {
            d if d < 0.000_001 => 2048.0,
            d if d < 0.000_01 => 512.0,
            d if d < 0.000_1 => 128.0,
            d if d < 0.001 => 32.0,
            d if d < 0.01 => 8.0,
            d if d < 0.1 => 2.0,
            _ => 1.0,
        };
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        if self.qdelay == Duration::ZERO && self.qdelay_old == Duration::ZERO {
            self.drop_prob *= 0.98;
        }
        if q > 0.25 {
            self.drop_prob += 0.02;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.qdelay_old = self.qdelay;
        self.burst_allowance = Duration(self.burst_allowance.0.saturating_sub(self.params.t_update.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStreams;

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn the_controller_steps_as_rfc_8033_computes_it() {
        // A queue held at 40 ms of delay (every dequeued packet waited 40 ms): the first update
        // at 15 ms sees qdelay 40 ms, qdelay_old 0: p = 0.125 · (0.040 − 0.015) + 1.25 · 0.040
        // = 0.053125, ÷2048 (probability 0) = 2.594e-5; the second (old 40 ms): p = 0.003125,
        // ÷128 (probability between 1e-5 and 1e-4) = 2.441e-5: 5.035e-5 in all (by hand).
        let mut fresh: Pie<u32> = Pie::new(QueueLimit::Packets(1000), PieParams::default(), RngStreams::new(1).stream("pie"));
        fresh.qdelay = Duration::from_millis(40); // as a dequeue would have measured it
        fresh.update_until(ms(15));
        assert!((fresh.drop_prob - 0.053_125 / 2048.0).abs() < 1e-12, "{}", fresh.drop_prob);
        fresh.update_until(ms(30));
        let want = 0.053_125 / 2048.0 + 0.003_125 / 128.0;
        assert!((fresh.drop_prob - want).abs() < 1e-12, "{}", fresh.drop_prob);
    }

    #[test]
    fn a_standing_queue_is_held_near_the_target() {
        // 12 Mb/s of arrivals (1500 B every 1 ms) into a link serving 10 Mb/s (one every 1.2 ms):
        // the backlog grows until PIE's drops take the excess (about 1/6 of arrivals), the
        // delay settling near the 15 ms target (between 5 and 40 ms over the last 10 s), far
        // below the 1000-packet limit's 1.2 s.
        let mut pie: Pie<u32> = Pie::new(QueueLimit::Packets(1000), PieParams::default(), RngStreams::new(3).stream("pie"));
        let (mut next_arrival, mut next_departure) = (0u64, 0u64);
        let mut delays = Vec::new();
        let end = 30_000_000_000u64;
        let mut i = 0;
        while next_arrival < end {
            if next_arrival <= next_departure {
                pie.enqueue(Queued::new(i, 1500, 0, Time(next_arrival)));
                i += 1;
                next_arrival += 1_000_000;
            } else {
                if let Some(x) = pie.dequeue(Time(next_departure)) {
                    if next_departure > 20_000_000_000 {
                        delays.push((Time(next_departure) - x.enqueued).as_secs_f64());
                    }
                }
                next_departure += 1_200_000;
            }
        }
        let mean = delays.iter().sum::<f64>() / delays.len() as f64;
        assert!((0.005..0.040).contains(&mean), "mean delay {mean}");
        let dropped = pie.early_drops as f64 / i as f64;
        assert!((0.12..0.22).contains(&dropped), "dropped {dropped}");
    }
}
