//! Retransmission timeout estimation, RFC 6298: SRTT/RTTVAR with α = 1/8, β = 1/4, K = 4,
//! RTO = SRTT + max(G, K·RTTVAR) clamped to [min, max], doubled on every backoff. Karn's
//! algorithm (no samples from retransmitted segments) is applied by the caller, which only
//! times segments that were sent once.

use crate::Duration;

/// Clock granularity G of RFC 6298 §2: the simulator's clock is exact; 1 ms matches the
/// reference worked example and common stacks.
pub const CLOCK_GRANULARITY: Duration = Duration::from_millis(1);

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt_ns: Option<f64>,
    rttvar_ns: f64,
    rto: Duration,
    min: Duration,
    max: Duration,
    backoffs: u32,
    /// A coarse retransmission clock (BSD's 500 ms slow timer, OPNET's "timer granularity"):
    /// G of RFC 6298 §2 and every RTO a whole number of ticks. `None`: the exact clock above.
    tick: Option<Duration>,
}

impl RttEstimator {
    pub fn new(initial: Duration, min: Duration, max: Duration) -> Self {
        RttEstimator { srtt_ns: None, rttvar_ns: 0.0, rto: initial.max(min).min(max), min, max, backoffs: 0, tick: None }
    }

    /// The same estimator on a clock that ticks every `tick` (must be > 0).
    pub fn with_tick(mut self, tick: Option<Duration>) -> Self {
        self.tick = tick;
        self.rto = self.on_ticks(self.rto);
        self
    }

    /// `d` rounded up to whole ticks (unchanged on the exact clock).
    fn on_ticks(&self, d: Duration) -> Duration {
        match self.tick {
            Some(t) if t.0 > 0 => Duration(d.0.div_ceil(t.0).saturating_mul(t.0)),
            _ => d,
        }
    }

    /// Feeds one RTT measurement R (RFC 6298 §2.2–2.3) and recomputes the RTO.
    pub fn sample(&mut self, r: Duration) {
        let r = r.0 as f64;
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(r);
                self.rttvar_ns = r / 2.0;
            }
            Some(srtt) => {
                // RTTVAR uses the old SRTT, so it is updated first.
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (srtt - r).abs();
                self.srtt_ns = Some(0.875 * srtt + 0.125 * r);
            }
        }
        self.backoffs = 0;
        self.rto = self.on_ticks(self.raw_rto().max(self.min)).min(self.max);
    }

    /// SRTT + max(G, 4·RTTVAR) before clamping.
    pub fn raw_rto(&self) -> Duration {
        let srtt = self.srtt_ns.unwrap_or(0.0);
        let g = self.tick.unwrap_or(CLOCK_GRANULARITY);
        Duration((srtt + (4.0 * self.rttvar_ns).max(g.0 as f64)).round() as u64)
    }

    /// Exponential backoff after a timeout (RFC 6298 §5.5), bounded by the maximum.
    pub fn back_off(&mut self) {
        self.backoffs += 1;
        self.rto = (self.rto * 2).min(self.max);
    }

    /// RFC 6298 §5.7: if the SYN timed out and no sample exists, use 3 s once data flows.
    pub fn after_syn_timeout(&mut self) {
        if self.srtt_ns.is_none() {
            self.rto = self.on_ticks(self.rto.max(Duration::from_secs(3))).min(self.max);
        }
    }

    pub fn rto(&self) -> Duration {
        self.rto
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt_ns.map(|s| Duration(s.round() as u64))
    }
    pub fn rttvar(&self) -> Duration {
        Duration(self.rttvar_ns.round() as u64)
    }
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_worked_example() {
        // models.md §7.4 / tcp_models_output.md: samples 100, 120, 80 ms, G = 1 ms give
        // SRTT/RTTVAR/raw RTO 100/50/300, 102.5/42.5/272.5, 99.6875/37.5/249.6875 ms.
        let mut e = RttEstimator::new(Duration::from_secs(1), Duration::from_millis(1), Duration::from_secs(60));
        let expect = [(100, 100.0, 50.0, 300.0), (120, 102.5, 42.5, 272.5), (80, 99.6875, 37.5, 249.6875)];
        for (r, srtt, var, raw) in expect {
            e.sample(Duration::from_millis(r));
            assert!((e.srtt().unwrap().as_millis_f64() - srtt).abs() < 1e-5);
            assert!((e.rttvar().as_millis_f64() - var).abs() < 1e-5);
            assert!((e.raw_rto().as_millis_f64() - raw).abs() < 1e-5);
        }
        // With the RFC's 1 s minimum all three are lifted to 1 s.
        let mut e = RttEstimator::new(Duration::from_secs(1), Duration::from_secs(1), Duration::from_secs(60));
        e.sample(Duration::from_millis(100));
        assert_eq!(e.rto(), Duration::from_secs(1));
    }

    #[test]
    fn a_coarse_clock_rounds_the_rto_up_to_whole_ticks() {
        // Paper 003's OPNET TCP: 0.5 s granularity, RTO min 0.5 s. Samples 100 ms then 300 ms:
        // SRTT 100, RTTVAR 50 -> raw 100 + max(500, 200) = 600 ms -> 2 ticks = 1 s (hand count);
        // then RTTVAR 0.75*50 + 0.25*200 = 87.5, SRTT 125 -> 125 + 500 = 625 ms -> 1 s.
        let tick = Some(Duration::from_millis(500));
        let mut e = RttEstimator::new(Duration::from_millis(700), Duration::from_millis(500), Duration::from_secs(64)).with_tick(tick);
        assert_eq!(e.rto(), Duration::from_secs(1), "the initial RTO is lifted to whole ticks too");
        e.sample(Duration::from_millis(100));
        assert_eq!(e.raw_rto(), Duration::from_millis(600));
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.sample(Duration::from_millis(300));
        assert_eq!(e.raw_rto(), Duration::from_millis(625));
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_secs(2));
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let mut e = RttEstimator::new(Duration::from_secs(1), Duration::from_secs(1), Duration::from_secs(5));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_secs(2));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_secs(4));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_secs(5));
    }
}
