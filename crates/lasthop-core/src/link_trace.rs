//! Trace-driven link directions: Mahimahi's `mm-link` trace format and delivery rule (mahimahi
//! src/frontend/link_queue.cc, `LinkQueue`), so that the public cellular capacity traces replay
//! here as they do under mm-link.
//!
//! A trace is one line per *delivery opportunity*: a whole number of milliseconds since the
//! trace's start, never decreasing (a timestamp repeats for several opportunities in one
//! millisecond), the last above 0. The trace loops: opportunity i of pass k is at k·T + tᵢ, T the
//! last timestamp (mm-link adds T to its base at each wrap, so a trace holding just "1" is one
//! opportunity per millisecond). Each opportunity carries up to [`OPPORTUNITY_BYTES`] of the
//! queue's packets in order; a packet that does not fit in what is left of one goes on in the
//! next (partial use), and an opportunity that finds no packet is lost. A packet uses only
//! opportunities after it arrived (mm-link burns those up to now before it queues a packet).
//!
//! Left out: mm-link refuses a packet above 1504 bytes; here it takes several opportunities.

use crate::rng::{standard_normal, uniform01};
use crate::{Duration, Time};
use rand_core::RngCore;

/// What one delivery opportunity carries: mm-link's `PACKET_SIZE`, 1504 bytes ("default max
/// TUN payload size"): one 1500-byte IP packet and 4 bytes of the next.
pub const OPPORTUNITY_BYTES: u32 = 1504;

const MS: u64 = 1_000_000;

/// A delivery-opportunity trace (module doc), as mm-link loads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    times_ms: Vec<u32>,
}

/// What is wrong with a trace: the line (from 1; 0 for the file as a whole) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub problem: String,
}

/// The largest timestamp accepted: 2³² − 1 ms, about 49 days.
pub const MAX_TIMESTAMP_MS: u64 = u32::MAX as u64;

impl DeliveryTrace {
    /// Reads mm-link's format: one whole number of milliseconds per line, no empty line, never
    /// decreasing, at least one line, the last above 0 (mm-link's own checks; a line's trailing
    /// carriage return is allowed).
    pub fn parse(text: &str) -> Result<DeliveryTrace, TraceError> {
        let mut times_ms = Vec::new();
        let body = text.strip_suffix('\n').unwrap_or(text);
        if !text.is_empty() {
            for (n, raw) in body.split('\n').enumerate() {
                let line = raw.strip_suffix('\r').unwrap_or(raw);
                let err = |problem: String| TraceError { line: n + 1, problem };
                if line.is_empty() {
                    return Err(err("is empty; valid: one whole number of milliseconds per line (mm-link refuses empty lines)".into()));
                }
                let ms = match line.parse::<u64>() {
                    Ok(ms) if ms <= MAX_TIMESTAMP_MS => ms as u32,
                    Ok(_) => return Err(err(format!("{line} is above the largest timestamp, {MAX_TIMESTAMP_MS} ms"))),
                    Err(_) => return Err(err(format!("{} is not a timestamp; valid: a whole number of milliseconds (0, 1, 2, ...)", shown(line)))),
                };
                if let Some(&last) = times_ms.last() {
                    if ms < last {
                        return Err(err(format!("{ms} comes after {last}: timestamps must never decrease")));
                    }
                }
                times_ms.push(ms);
            }
        }
        match times_ms.last() {
            None => Err(TraceError { line: 0, problem: "holds no timestamp; valid: one whole number of milliseconds per line".into() }),
            Some(0) => Err(TraceError { line: times_ms.len(), problem: "ends at 0 ms: a trace must last a nonzero time (its last timestamp is its period)".into() }),
            Some(_) => Ok(DeliveryTrace { times_ms }),
        }
    }

    /// Delivery opportunities in one pass of the trace.
    pub fn opportunities(&self) -> usize {
        self.times_ms.len()
    }

    /// The trace's period T: its last timestamp.
    pub fn period(&self) -> Duration {
        Duration(self.period_ns())
    }

    fn period_ns(&self) -> u64 {
        *self.times_ms.last().expect("a trace is never empty") as u64 * MS
    }

    /// The mean capacity, b/s: a pass's opportunities of 1504 bytes over its period.
    pub fn mean_bps(&self) -> f64 {
        self.opportunities() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / self.period().as_secs_f64()
    }

    /// The time of opportunity `at`.
    pub fn time(&self, at: Cursor) -> Time {
        Time(at.pass * self.period_ns() + self.times_ms[at.index] as u64 * MS)
    }

    /// The opportunity after `at`.
    pub fn next(&self, at: Cursor) -> Cursor {
        if at.index + 1 == self.times_ms.len() {
            Cursor { pass: at.pass + 1, index: 0 }
        } else {
            Cursor { pass: at.pass, index: at.index + 1 }
        }
    }

    /// The first opportunity strictly after `now` (those at or before it are gone).
    pub fn first_after(&self, now: Time) -> Cursor {
        let period = self.period_ns();
        let pass = now.0 / period;
        let into = now.0 - pass * period;
        let index = self.times_ms.partition_point(|&t| t as u64 * MS <= into);
        if index == self.times_ms.len() {
            Cursor { pass: pass + 1, index: 0 }
        } else {
            Cursor { pass, index }
        }
    }

    /// Opportunities at or before `end` (the trace starting at 0).
    pub fn opportunities_until(&self, end: Time) -> u64 {
        let period = self.period_ns();
        let passes = end.0 / period;
        let into = end.0 - passes * period;
        passes * self.times_ms.len() as u64 + self.times_ms.partition_point(|&t| t as u64 * MS <= into) as u64
    }

    /// The capacity in each `bin` of the first `span` (the trace looping), b/s: what `lasthop
    /// trace` plots. An opportunity at a bin's boundary counts in the bin it starts.
    pub fn capacity_bps(&self, bin: Duration, span: Duration) -> Vec<f64> {
        let bins = span.0.div_ceil(bin.0.max(1)) as usize;
        let mut counts = vec![0u64; bins];
        let mut at = Cursor { pass: 0, index: 0 };
        loop {
            let t = self.time(at);
            if t.0 >= span.0 {
                break;
            }
            counts[(t.0 / bin.0) as usize] += 1;
            at = self.next(at);
        }
        counts.iter().map(|&c| c as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / bin.as_secs_f64()).collect()
    }
}

/// A synthetic cellular trace, for bundling where recorded traces' licences do not allow it (and
/// for sweeps over a link's variability). The model: the link's delivery rate λ (opportunities
/// per second) moves as a random walk — Winstein et al.'s model of a cellular link in Sprout
/// (NSDI 2013, §3.1: "λ varies as Brownian motion") — pulled back towards its mean so that a
/// long trace keeps it (an Ornstein–Uhlenbeck process): each millisecond λ ← λ + θ(μ − λ)·Δt +
/// σ·√Δt·Z, with θ = 1 / `correlation`, σ = `std`·√(2θ) (its stationary deviation is `std`),
/// held in [0, 3μ]; that millisecond then holds a Poisson(λ · 1 ms) number of opportunities
/// (Knuth's product of uniforms). The last millisecond always holds one, so the trace's period
/// is `length`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Synthetic {
    pub mean_bps: f64,
    pub std_bps: f64,
    pub correlation: Duration,
    pub length: Duration,
}

impl Synthetic {
    /// The trace this model draws from `rng`.
    pub fn draw(&self, rng: &mut impl RngCore) -> DeliveryTrace {
        let per_opportunity = OPPORTUNITY_BYTES as f64 * 8.0;
        let (mu, std) = (self.mean_bps / per_opportunity, self.std_bps / per_opportunity);
        let theta = 1.0 / self.correlation.as_secs_f64();
        let sigma = std * (2.0 * theta).sqrt();
        let dt = 1e-3;
        let ms = (self.length.0 / MS).max(1) as u32;
        let mut lambda = mu;
        let mut times_ms = Vec::new();
        for t in 1..=ms {
            lambda = (lambda + theta * (mu - lambda) * dt + sigma * dt.sqrt() * standard_normal(rng)).clamp(0.0, 3.0 * mu);
            let n = poisson(rng, lambda * dt).max(u64::from(t == ms));
            times_ms.extend(std::iter::repeat(t).take(n as usize));
        }
        DeliveryTrace { times_ms }
    }
}

/// A Poisson draw of small mean by Knuth's product of uniforms (a fixed formula, so a seed gives
/// the same trace on every platform).
fn poisson(rng: &mut impl RngCore, mean: f64) -> u64 {
    let limit = (-mean).exp();
    let (mut n, mut product) = (0u64, uniform01(rng));
    while product > limit {
        n += 1;
        product *= uniform01(rng);
    }
    n
}

impl DeliveryTrace {
    /// The trace in mm-link's format: one timestamp per line.
    pub fn to_text(&self) -> String {
        let mut text = String::with_capacity(self.times_ms.len() * 6);
        for t in &self.times_ms {
            text.push_str(&t.to_string());
            text.push('\n');
        }
        text
    }
}

/// A line as a message may show it: short, or cut.
fn shown(line: &str) -> String {
    let cut: String = line.chars().take(24).collect();
    if cut.len() < line.len() {
        format!("{cut:?}...")
    } else {
        format!("{cut:?}")
    }
}

/// An opportunity of a looping trace: pass `pass`, line `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    pub pass: u64,
    pub index: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time(n * MS)
    }

    #[test]
    fn parse_takes_mm_links_format_and_names_the_line_at_fault() {
        let t = DeliveryTrace::parse("0\n0\n5\n").unwrap();
        assert_eq!((t.opportunities(), t.period()), (3, Duration::from_millis(5)));
        // Three opportunities of 1504 B every 5 ms: 3 · 1504 · 8 / 0.005 = 7.2192 Mb/s.
        assert!((t.mean_bps() - 7_219_200.0).abs() < 1e-6);
        assert_eq!(DeliveryTrace::parse("1\r\n2\r\n").unwrap().opportunities(), 2, "CRLF lines");
        let err = |text: &str| DeliveryTrace::parse(text).unwrap_err();
        assert_eq!(err("1\n\n2\n").line, 2);
        assert!(err("1\n\n2\n").problem.contains("is empty"));
        assert_eq!(err("3\n2\n").line, 2);
        assert!(err("3\n2\n").problem.contains("2 comes after 3"));
        assert!(err("1\nx7\n").problem.contains("\"x7\" is not a timestamp"));
        assert!(err("-4\n").problem.contains("not a timestamp"));
        assert_eq!(err("").line, 0);
        assert!(err("0\n0\n").problem.contains("ends at 0 ms"));
        assert!(err("99999999999\n").problem.contains("above the largest timestamp"));
    }

    #[test]
    fn opportunities_loop_with_the_period_and_those_at_now_are_gone() {
        // "0 0 5": opportunities at 0, 0, 5 | 5, 5, 10 | 10, 10, 15 ... (k · 5 + tᵢ).
        let t = DeliveryTrace::parse("0\n0\n5\n").unwrap();
        let mut at = Cursor { pass: 0, index: 0 };
        let mut times = Vec::new();
        for _ in 0..7 {
            times.push(t.time(at).0 / MS);
            at = t.next(at);
        }
        assert_eq!(times, [0, 0, 5, 5, 5, 10, 10]);
        assert_eq!(t.time(t.first_after(ms(0))), ms(5));
        // All three at 5 ms are gone: next is pass 1's last line, at 10 ms.
        assert_eq!(t.first_after(ms(5)), Cursor { pass: 1, index: 2 });
        assert_eq!(t.time(t.first_after(Time(4_999_999))), ms(5));
        assert_eq!(t.opportunities_until(ms(0)), 2);
        assert_eq!(t.opportunities_until(ms(5)), 5);
        assert_eq!(t.opportunities_until(ms(9)), 5);
        // 10 ms of "1": one opportunity per ms at 1..=10, 12.032 Mb/s in each 2 ms bin but the
        // first (at 0 ms none: the first is at 1 ms).
        let one = DeliveryTrace::parse("1\n").unwrap();
        assert_eq!(one.opportunities_until(ms(10)), 10);
        let cap = one.capacity_bps(Duration::from_millis(2), Duration::from_millis(10));
        assert_eq!(cap.len(), 5);
        assert!((cap[0] - 6_016_000.0).abs() < 1e-6 && (cap[1] - 12_032_000.0).abs() < 1e-6, "{cap:?}");
    }

    #[test]
    fn a_synthetic_trace_keeps_its_mean_and_varies_as_asked() {
        // 12 Mb/s ± 4 Mb/s, 1 s correlation, 120 s: the mean within 10 % (about 120 correlation
        // times: the sample mean's deviation is about 4 / √60 ≈ 0.5 Mb/s), the per-second
        // capacities' deviation within a factor 2 of 4 Mb/s (each second also averages the walk),
        // and the text reads back as the same trace.
        let m = Synthetic { mean_bps: 12e6, std_bps: 4e6, correlation: Duration::from_secs(1), length: Duration::from_secs(120) };
        let t = m.draw(&mut crate::rng::RngStreams::new(3).stream("trace"));
        assert_eq!(t.period(), Duration::from_secs(120));
        assert!((t.mean_bps() / 12e6 - 1.0).abs() < 0.1, "{}", t.mean_bps());
        let per_s = t.capacity_bps(Duration::from_secs(1), Duration::from_secs(120));
        let mean = per_s.iter().sum::<f64>() / per_s.len() as f64;
        let std = (per_s.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / per_s.len() as f64).sqrt();
        assert!((2e6..8e6).contains(&std), "{std}");
        assert_eq!(DeliveryTrace::parse(&t.to_text()).unwrap(), t);
    }
}
