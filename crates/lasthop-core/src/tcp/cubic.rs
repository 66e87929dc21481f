//! CUBIC congestion control (RFC 9438): window growth in congestion avoidance in place of
//! NewReno's one segment per RTT, and the β = 0.7 multiplicative decrease. Slow start is RFC
//! 5681's; loss recovery stays the socket's (RFC 6582 / RFC 6675), as RFC 9438 §4.7 allows.
//!
//! ```text
//! W_cubic(t) = C·(t − K)³ + W_max,   K = ∛(W_max·(1 − β)/C),   C = 0.4, β = 0.7
//! ```
//!
//! with fast convergence (§4.6), the Reno-friendly estimate W_est (§4.3, α = 3(1 − β)/(1 + β))
//! and the target clamp to [cwnd, 1.5·cwnd] (§4.4). The curve works in segments and seconds;
//! `on_ack` and `on_congestion` convert from and to the byte window. Left out: HyStart++ (slow
//! start is RFC 5681's).

use super::cc::CongestionWindow;
use crate::{Duration, Time};

pub const C: f64 = 0.4;
pub const BETA: f64 = 0.7;

/// CUBIC's window (bytes) and its curve state (segments, seconds).
#[derive(Clone, Debug)]
pub struct Cubic {
    pub window: CongestionWindow,
    mss: u64,
    w_max: f64,
    k: f64,
    epoch: Option<Time>,
    w_est: f64,
}

impl Cubic {
    /// `mss` is the endpoint's own; slow start and the initial window are RFC 5681's.
    pub fn new(mss: u32, initial_segments: Option<u32>) -> Self {
        let mss = mss as u64;
        Cubic { window: CongestionWindow::initial(mss, initial_segments), mss, w_max: 0.0, k: 0.0, epoch: None, w_est: 0.0 }
    }

    pub fn k(&self) -> f64 {
        self.k
    }
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// W_cubic(t) in segments, t in seconds since the epoch.
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }

    /// New data acknowledged outside recovery: RFC 5681 slow start below ssthresh, else CUBIC's
    /// growth (never below the current window).
    pub fn on_ack(&mut self, acked: u64, now: Time, rtt: Duration) {
        if self.window.in_slow_start() {
            self.window.slow_start(acked);
        } else {
            let mss = self.mss as f64;
            let w = self.avoid(now, self.window.cwnd as f64 / mss, acked as f64 / mss, rtt);
            self.window.cwnd = (w * mss).max(self.window.cwnd as f64) as u64;
        }
    }

    /// A congestion event with `flight` bytes outstanding: ssthresh = β·min(cwnd, FlightSize)
    /// (RFC 9438 §4.6), at least 2 SMSS.
    pub fn on_congestion(&mut self, flight: u64) {
        let mss = self.mss as f64;
        let w = self.window.cwnd.min(flight.max(self.mss)) as f64 / mss;
        self.window.ssthresh = ((self.reduce(w) * mss) as u64).max(2 * self.mss);
    }

    /// A retransmission timeout: a congestion event when `recompute_ssthresh` (RFC 9438 §4.8
    /// defers to RFC 5681), then cwnd = one segment.
    pub fn on_timeout(&mut self, flight: u64, recompute_ssthresh: bool) {
        if recompute_ssthresh {
            self.on_congestion(flight);
        }
        self.window.cwnd = self.mss;
    }

    /// The curve after a congestion event at `cwnd` segments: returns the reduced window.
    fn reduce(&mut self, cwnd: f64) -> f64 {
        // Fast convergence: a flow that lost before reaching its previous W_max yields.
        self.w_max = if cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        let reduced = (cwnd * BETA).max(2.0);
        self.k = (self.w_max * (1.0 - BETA) / C).cbrt();
        self.epoch = None;
        self.w_est = reduced;
        reduced
    }

    /// Congestion avoidance in segments: `acked` segments acknowledged at `now` with `cwnd`
    /// segments; returns the new window.
    fn avoid(&mut self, now: Time, cwnd: f64, acked: f64, rtt: Duration) -> f64 {
        let epoch = *self.epoch.get_or_insert_with(|| {
            // An epoch that starts without a loss (after slow start): W_max is the current window.
            if self.w_max <= 0.0 {
                self.w_max = cwnd;
                self.k = 0.0;
                self.w_est = cwnd;
            }
            now
        });
        let t = now.since(epoch).as_secs_f64();
        let target = self.w_cubic(t + rtt.as_secs_f64()).clamp(cwnd, 1.5 * cwnd);
        self.w_est += 3.0 * (1.0 - BETA) / (1.0 + BETA) * acked / cwnd;
        let cubic = cwnd + (target - cwnd) / cwnd * acked;
        cubic.max(self.w_est)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_and_the_plateau_follow_rfc9438() {
        let mut c = Cubic::new(1000, None);
        // Loss at 100 segments: cwnd -> 70, K = ∛(100 · 0.3 / 0.4) = ∛75 = 4.2172 s.
        assert_eq!(c.reduce(100.0), 70.0);
        assert!((c.k() - 4.2172).abs() < 1e-4);
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9, "W_cubic(0) = β·W_max");
        assert!((c.w_cubic(c.k()) - 100.0).abs() < 1e-9, "the plateau at W_max after K seconds");
        // A second loss below W_max (fast convergence): W_max = 80 · (1 + 0.7) / 2 = 68.
        c.reduce(80.0);
        assert!((c.w_max() - 68.0).abs() < 1e-9);
    }

    #[test]
    fn growth_is_concave_then_convex_around_w_max() {
        let mut c = Cubic::new(1000, None);
        let mut cwnd = c.reduce(100.0);
        let rtt = Duration::from_millis(100);
        let mut at = Vec::new();
        // One ACK per segment, cwnd segments per 100 ms round trip, for 8 s.
        for round in 0..80u64 {
            let now = Time(round * 100_000_000);
            let n = cwnd as u64;
            for _ in 0..n {
                cwnd = c.avoid(now, cwnd, 1.0, rtt);
            }
            at.push(cwnd);
        }
        // Near K (4.2 s ≈ round 42) cwnd sits close to W_max = 100; it climbs fast before (concave)
        // and beyond (convex).
        assert!((at[41] - 100.0).abs() < 3.0, "{}", at[41]);
        assert!(at[10] - at[0] > at[41] - at[31], "concave: slower growth approaching W_max");
        assert!(at[79] - at[69] > at[51] - at[41], "convex: faster growth leaving W_max");
    }
}
