//! On/off source: CBR at `rate` (one `size`-byte message every IDT = size · 8 / rate) during on
//! periods, silence during off periods; period lengths constant or exponential with the given
//! means (the shape of ns-3's `OnOffApplication` and D-ITG's `-B`; the timing inside a period
//! is this model's own). The first on period starts with the source.
//!
//! Every on period starts with a message and sends while the next departure still falls inside
//! it, so a period of length L carries ⌈L/IDT⌉ messages, not L/IDT: with exponential on periods
//! of mean μ the mean count is 1/(1 − e^(−IDT/μ)) ≈ μ/IDT + 1/2, and the long-run rate is that
//! count · size · 8 / (mean on + mean off) — above rate · on/(on + off) by half a message per
//! period. Exponential lengths are rounded to whole nanoseconds, at least 1 ns. Left out:
//! Pareto periods (ns-2's `Application/Traffic/Pareto`).

use crate::rng::exponential;
use crate::time::Duration;
use crate::units::{BitRate, Bytes};
use rand_core::RngCore;

/// Distribution of on and off period lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Periods {
    Constant,
    Exponential,
}

/// An on/off source's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOffParams {
    /// Payload bytes per message.
    pub size: Bytes,
    /// Sending rate while on.
    pub rate: BitRate,
    /// Mean on period.
    pub on: Duration,
    /// Mean off period.
    pub off: Duration,
    pub periods: Periods,
}

#[derive(Clone, Debug)]
pub(super) struct OnOff {
    size: u32,
    /// Inter-departure time while on.
    interval: Duration,
    on: Duration,
    off: Duration,
    periods: Periods,
    /// End of the current on period, from the source's start.
    on_until: Duration,
}

impl OnOff {
    pub(super) fn new(p: OnOffParams) -> OnOff {
        OnOff {
            size: p.size.0 as u32,
            interval: p.rate.tx_time(p.size.0),
            on: p.on,
            off: p.off,
            periods: p.periods,
            on_until: Duration::ZERO,
        }
    }

    pub(super) fn size(&self) -> u32 {
        self.size
    }

    fn draw(&self, mean: Duration, rng: &mut impl RngCore) -> Duration {
        match self.periods {
            Periods::Constant => mean,
            Periods::Exponential => Duration(exponential(rng, mean.0 as f64).round().max(1.0) as u64),
        }
    }

    /// When the message after one sent at `last` leaves (the first one when `None`). Draws the
    /// first on period, then at each period's end the off period before the on period.
    pub(super) fn departure_after(&mut self, last: Option<Duration>, rng: &mut impl RngCore) -> Duration {
        let Some(last) = last else {
            self.on_until = self.draw(self.on, rng);
            return Duration::ZERO;
        };
        let next = last + self.interval;
        if next < self.on_until {
            return next;
        }
        let next_on = self.on_until + self.draw(self.off, rng);
        self.on_until = next_on + self.draw(self.on, rng);
        next_on
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Departure, Schedule, SourceParams};
    use super::*;
    use crate::rng::RngStreams;

    fn params(on_ms: u64, off_ms: u64, periods: Periods) -> OnOffParams {
        // 1000 B at 8 Mb/s: one message per millisecond while on.
        OnOffParams {
            size: Bytes(1000),
            rate: BitRate(8_000_000),
            on: Duration::from_millis(on_ms),
            off: Duration::from_millis(off_ms),
            periods,
        }
    }

    fn departures(p: OnOffParams, seed: u64, horizon: Duration) -> Vec<Departure> {
        let s = Schedule::new(SourceParams::OnOff(p), RngStreams::new(seed).stream("onoff"));
        s.take_while(|d| d.at < horizon).collect()
    }

    #[test]
    fn constant_periods_pause_for_the_off_time() {
        // Hand count: messages at 0, 1, 2 ms (on for 3 ms), the next on period at 3 + 10 = 13 ms.
        let at: Vec<u64> = departures(params(3, 10, Periods::Constant), 1, Duration::from_millis(30))
            .iter()
            .map(|d| d.at.0 / 1_000_000)
            .collect();
        assert_eq!(at, vec![0, 1, 2, 13, 14, 15, 26, 27, 28]);
    }

    #[test]
    fn constant_periods_send_rate_times_duty_cycle_exactly() {
        // 3 messages per 13 ms cycle: over 13 s exactly 3000 messages, 3 MB, i.e.
        // rate · on/(on + off) = 8 Mb/s · 3/13 (IDT divides the on period, so no half message).
        let d = departures(params(3, 10, Periods::Constant), 1, Duration::from_secs(13));
        assert_eq!(d.len(), 3000);
        assert_eq!(d.iter().map(|d| d.bytes as u64).sum::<u64>(), 3_000_000);
    }

    #[test]
    fn exponential_periods_have_the_requested_mean() {
        // Exponential with mean μ has σ = μ; the sample mean of n draws lies within 3σ/√n of μ
        // (CLT, 99.7 %). And P(X > 3μ) = e^(−3) = 0.0498, within 3·√(p(1−p)/n).
        let o = OnOff::new(params(10, 40, Periods::Exponential));
        let mut rng = RngStreams::new(5).stream("periods");
        let n = 100_000;
        let mu = 40e6;
        let xs: Vec<f64> = (0..n).map(|_| o.draw(Duration::from_millis(40), &mut rng).0 as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let bound = 3.0 * mu / (n as f64).sqrt();
        assert!((mean - mu).abs() < bound, "mean off period {mean:.0} ns, μ = {mu}, 3σ/√n = {bound:.0}");
        let p = (-3.0f64).exp();
        let tail = xs.iter().filter(|&&x| x > 3.0 * mu).count() as f64 / n as f64;
        assert!((tail - p).abs() < 3.0 * (p * (1.0 - p) / n as f64).sqrt(), "P(X > 3μ) = {tail}");
    }

    #[test]
    fn exponential_periods_long_run_rate_is_the_renewal_reward_rate() {
        // Renewal-reward: rate = E[messages per cycle] · size · 8 / E[cycle], with
        // E[N] = Σ_{k≥1} P(L > (k−1)·IDT) = 1/(1 − e^(−IDT/μ_on)) for exponential L (module doc).
        // IDT 1 ms, μ_on 10 ms, μ_off 40 ms: E[N] = 10.508, rate = 1.6813 Mb/s, while the
        // fluid formula rate · on/(on + off) gives 1.6 Mb/s.
        let p = params(10, 40, Periods::Exponential);
        let expected = 8000.0 / (1.0 - (-0.1f64).exp()) / 0.050;
        let fluid = 8e6 * 10.0 / 50.0;
        // Batch means: 50 batches of 100 s (≈ 2000 cycles each, nearly independent) give the
        // standard error of the long-run rate by the CLT.
        let batch = Duration::from_secs(100);
        let mut bits = [0.0f64; 50];
        for d in departures(p, 11, batch * 50) {
            bits[(d.at.0 / batch.0) as usize] += d.bytes as f64 * 8.0;
        }
        let rates: Vec<f64> = bits.iter().map(|b| b / 100.0).collect();
        let mean = rates.iter().sum::<f64>() / 50.0;
        let sd = (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / 49.0).sqrt();
        let se = sd / 50f64.sqrt();
        assert!((mean - expected).abs() < 3.0 * se, "rate {mean:.0} b/s, expected {expected:.0} ± {:.0}", 3.0 * se);
        // The half message per on period is real: the fluid formula is many standard errors off.
        assert!((mean - fluid).abs() > 10.0 * se, "rate {mean:.0} b/s vs fluid {fluid:.0}, se {se:.0}");
    }
}
