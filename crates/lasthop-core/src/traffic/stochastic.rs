//! A D-ITG-style stochastic source: each message's inter-departure time (IDT) and payload size
//! drawn from a [`Dist`], optionally in on/off bursts whose period lengths are drawn too
//! (D-ITG 2.8.1 `ITGSend` with `-C/-U/-E/-N/-O/-V/-Y/-G/-W/-Ft`, `-c/-u/.../-Fs`, `-B`, `-z`,
//! `-k`; its presets are in [`presets`](super::presets)). The timing is the schedule D-ITG
//! means, not the one it achieves: no sleep overshoot (`../shared/reference/ditg.md`, item 1).
//!
//! What a draw becomes, following `src/ITGSend/ITGSend.cpp` (line numbers of 2.8.1-r1023):
//! - **Sizes** are cut to an integer toward zero (`(int) PktSize->Next()`, 3091/3305) and then
//!   clamped to [`min_size`, `max_size`] (3105–3113, 3317–3327): D-ITG raises a payload below
//!   its metadata (16 B for UDP with the default `-p 0`, `StandardMinPayloadSize` in
//!   `common/ITG.cpp` 48) and cuts one above `MAX_PAYLOAD_SIZE` = 64 000 B (`common/ITG.h` 314).
//!   So a normal size of mean 20 B and sd 10 B sends 16-byte packets for every draw below 16.
//!   A non-finite draw (D-ITG: undefined behaviour of the cast) is taken as `min_size`.
//! - **IDTs** that are negative or zero send the next message at once. That is what the
//!   Debian/Unix build does (`unix.mk` defines `BURSTY`, whose loop resets its lateness
//!   counter before each packet, 3143, so the credit a negative wait would give is lost); a
//!   build without `BURSTY` and with `-j 1` would carry the negative part into the next wait.
//!   An IDT above [`MAX_IDT`] (a heavy tail's rare giant) waits `MAX_IDT`, past any run's end.
//!   IDTs are rounded to the nanosecond (D-ITG sleeps in microseconds).
//! - **Bursts** (`-B`, 3121–3124 and 3473–3490): an on period is drawn, messages follow the
//!   IDT law while the time spent since the period began is below its length (each IDT waited
//!   is subtracted from what is left, and the period ends when nothing is left), then the off
//!   period is slept and a new on period drawn. So an on period carries at least one message,
//!   and the off period starts after the IDT that crossed the on period's end — unlike
//!   [`OnOffParams`](super::OnOffParams), whose off period starts exactly at the on period's
//!   end. Negative period draws count as zero.
//! - **Limits** (`-z` count, `-k` bytes; 2971–2986, 3473–3496): after `max_messages`
//!   messages, or once `max_bytes` have been sent (the last message may pass the limit, as
//!   D-ITG checks after sending), the source is due at [`NEVER`]. D-ITG's `-k` counts KiB.
//!
//! The order of draws on the stream, fixed for reproducibility: the first message draws its on
//! period (bursty sources only), then its size; each later message draws its IDT, then (when
//! the IDT ended an on period) the off period and the next on period, then its size.
//!
//! Left out: D-ITG's payload metadata itself (a world's business) and its `-Fp` payload files.

use super::dist::{Dist, Sampler};
use super::NEVER;
use crate::time::Duration;
use rand_core::RngCore;

/// D-ITG's smallest UDP payload with its default metadata (`-p 0`): flow id, sequence number,
/// seconds and microseconds, four 32-bit words (`common/ITG.cpp` 48). TCP adds 4 B of size.
pub const DITG_MIN_PAYLOAD: u32 = 16;
/// D-ITG's largest payload, `MAX_PAYLOAD_SIZE` (`common/ITG.h` 314).
pub const DITG_MAX_PAYLOAD: u32 = 64_000;
/// The longest wait between two messages: 10^6 s (11.6 days), longer than any run.
pub const MAX_IDT: Duration = Duration(1_000_000 * 1_000_000_000);

/// On/off bursts (D-ITG `-B`): period lengths in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Bursts {
    pub on: Dist,
    pub off: Dist,
}

/// A stochastic source's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct StochasticParams {
    /// Inter-departure time, in nanoseconds.
    pub idt: Dist,
    /// Payload bytes per message.
    pub size: Dist,
    /// On/off periods; `None` sends without pause.
    pub bursts: Option<Bursts>,
    /// When the first message leaves, from the source's start (a D-ITG `-Ft` file's first
    /// value, ITGSend.cpp 1612 and 2581).
    pub first: Duration,
    /// Stop after this many messages (D-ITG `-z`).
    pub max_messages: Option<u64>,
    /// Stop once this many payload bytes have been sent (D-ITG `-k`).
    pub max_bytes: Option<u64>,
    /// Drawn sizes are clamped to [min_size, max_size] bytes.
    pub min_size: u32,
    pub max_size: u32,
    /// Largest datagram payload: a longer message leaves as several packets, as IP would
    /// fragment D-ITG's datagram (`ditg.md` item 7).
    pub max_packet: u32,
}

impl StochasticParams {
    /// IDT and size laws with D-ITG's defaults for the rest: no bursts, no limits, sizes within
    /// [16 B, 64 000 B], messages up to a 1500-byte MTU's 1472-byte UDP payload per packet.
    pub fn new(idt: Dist, size: Dist) -> StochasticParams {
        StochasticParams {
            idt,
            size,
            bursts: None,
            first: Duration::ZERO,
            max_messages: None,
            max_bytes: None,
            min_size: DITG_MIN_PAYLOAD,
            max_size: DITG_MAX_PAYLOAD,
            max_packet: 1472,
        }
    }
}

/// A draw in nanoseconds as a wait: negative, zero or NaN → 0, above [`MAX_IDT`] → `MAX_IDT`.
pub fn wait_of(ns: f64) -> Duration {
    if ns.is_nan() || ns <= 0.0 {
        Duration::ZERO
    } else if ns >= MAX_IDT.0 as f64 {
        MAX_IDT
    } else {
        Duration(ns.round() as u64)
    }
}

/// A draw in bytes as a payload size: truncated toward zero, then clamped to [min, max]; a
/// non-finite draw gives `min`.
pub fn size_of(bytes: f64, min: u32, max: u32) -> u32 {
    if !bytes.is_finite() || bytes < min as f64 {
        min
    } else if bytes > max as f64 {
        max
    } else {
        (bytes.trunc() as u32).clamp(min, max)
    }
}

#[derive(Clone, Debug)]
pub(super) struct Stochastic {
    idt: Sampler,
    size: Sampler,
    bursts: Option<(Sampler, Sampler)>,
    first: Duration,
    max_messages: u64,
    max_bytes: u64,
    min_size: u32,
    max_size: u32,
    max_packet: u32,
    sent: u64,
    bytes: u64,
    /// Nanoseconds of the current on period not yet used.
    on_left: f64,
}

impl Stochastic {
    pub(super) fn new(p: &StochasticParams) -> Stochastic {
        let max_size = p.max_size.max(p.min_size.max(1));
        Stochastic {
            idt: p.idt.sampler(),
            size: p.size.sampler(),
            bursts: p.bursts.as_ref().map(|b| (b.on.sampler(), b.off.sampler())),
            first: p.first,
            max_messages: p.max_messages.unwrap_or(u64::MAX),
            max_bytes: p.max_bytes.unwrap_or(u64::MAX),
            min_size: p.min_size.max(1),
            max_size,
            max_packet: p.max_packet.max(1),
            sent: 0,
            bytes: 0,
            on_left: 0.0,
        }
    }

    pub(super) fn max_packet(&self) -> u32 {
        self.max_packet
    }

    /// The next message after one sent at `last` (the first when `None`): when and how large.
    pub(super) fn next(&mut self, last: Option<Duration>, rng: &mut impl RngCore) -> (Duration, u32) {
        if self.sent >= self.max_messages || self.bytes >= self.max_bytes {
            return (NEVER, 0);
        }
        let at = match last {
            None => {
                if let Some((on, _)) = &mut self.bursts {
                    self.on_left = wait_of(on.draw(rng)).0 as f64;
                }
                self.first
            }
            Some(last) => {
                let wait = wait_of(self.idt.draw(rng));
                let mut at = last + wait;
                if let Some((on, off)) = &mut self.bursts {
                    self.on_left -= wait.0 as f64;
                    if self.on_left <= 0.0 {
                        at = at + wait_of(off.draw(rng));
                        self.on_left = wait_of(on.draw(rng)).0 as f64;
                    }
                }
                at
            }
        };
        let size = size_of(self.size.draw(rng), self.min_size, self.max_size);
        self.sent += 1;
        self.bytes += size as u64;
        (at, size)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Departure, Schedule, SourceParams};
    use super::*;
    use crate::rng::RngStreams;

    fn ms(x: f64) -> f64 {
        x * 1e6
    }

    fn schedule(p: StochasticParams, seed: u64) -> Schedule {
        Schedule::new(SourceParams::Stochastic(p), RngStreams::new(seed).stream("flow/s/app"))
    }

    #[test]
    fn sizes_are_truncated_then_clamped_as_ditg_does() {
        // ITGSend.cpp 3305–3327: (int) cast toward zero, then [16, 64000].
        assert_eq!(size_of(100.9, 16, 64_000), 100);
        assert_eq!(size_of(15.99, 16, 64_000), 16);
        assert_eq!(size_of(-3.0, 16, 64_000), 16);
        assert_eq!(size_of(1e12, 16, 64_000), 64_000);
        assert_eq!(size_of(f64::NAN, 16, 64_000), 16);
        assert_eq!(size_of(f64::INFINITY, 16, 64_000), 16);
    }

    #[test]
    fn negative_and_giant_waits_are_clamped() {
        assert_eq!(wait_of(-5e6), Duration::ZERO);
        assert_eq!(wait_of(f64::NAN), Duration::ZERO);
        assert_eq!(wait_of(2.4), Duration(2));
        assert_eq!(wait_of(1e300), MAX_IDT);
    }

    #[test]
    fn a_normal_idt_with_negative_draws_sends_at_once_and_never_goes_back_in_time() {
        // Normal(1 ms, 2 ms): P(draw ≤ 0) = Φ(−0.5) = 0.3085. Those gaps are exactly zero, the
        // others are the draws: mean gap = E[max(X, 0)] = μΦ(μ/σ) + σφ(μ/σ)
        // = 1·0.69146 + 2·0.35207 = 1.39560 ms; sd of max(X,0) ≤ 2 ms, so 3σ/√n < 0.0134 ms.
        let p = StochasticParams::new(Dist::normal(ms(1.0), ms(2.0)).unwrap(), Dist::constant(100.0).unwrap());
        let d: Vec<Departure> = schedule(p, 3).take(200_001).collect();
        let gaps: Vec<f64> = d.windows(2).map(|w| (w[1].at.0 - w[0].at.0) as f64).collect();
        let zero = gaps.iter().filter(|&&g| g == 0.0).count() as f64 / gaps.len() as f64;
        assert!((zero - 0.30854).abs() < 3.0 * (0.30854f64 * 0.69146 / 2e5).sqrt(), "zero gaps {zero}");
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64 / 1e6;
        assert!((mean - 1.39560).abs() < 0.0134, "mean gap {mean} ms");
    }

    #[test]
    fn limits_stop_after_the_count_or_once_the_bytes_are_reached() {
        // -z 5: exactly five messages, then NEVER.
        let mut p = StochasticParams::new(Dist::constant(ms(10.0)).unwrap(), Dist::constant(300.0).unwrap());
        p.max_messages = Some(5);
        let d: Vec<Departure> = schedule(p.clone(), 1).take(7).collect();
        assert_eq!(d[4], Departure { at: Duration::from_millis(40), bytes: 300 });
        assert_eq!(d[5].at, NEVER);
        assert_eq!(d[6].at, NEVER);
        // -k: 1000 B of 300-byte messages: 300, 600, 900 are below, the 4th reaches 1200.
        p.max_messages = None;
        p.max_bytes = Some(1000);
        let d: Vec<Departure> = schedule(p, 1).take(5).collect();
        assert_eq!(d.iter().filter(|d| d.at != NEVER).count(), 4);
    }

    #[test]
    fn bursts_start_the_off_period_after_the_wait_that_crossed_the_on_period() {
        // IDT 1 ms, on 2.5 ms, off 10 ms, all constant (D-ITG -C 1000 -B C 2.5 C 10, in ms):
        // messages at 0, 1, 2 ms; the wait from 2 to 3 ms uses up the on period, so the next
        // message leaves at 3 + 10 = 13 ms, then 14, 15, then 26 (hand count).
        let mut p = StochasticParams::new(Dist::constant(ms(1.0)).unwrap(), Dist::constant(64.0).unwrap());
        p.bursts = Some(Bursts { on: Dist::constant(ms(2.5)).unwrap(), off: Dist::constant(ms(10.0)).unwrap() });
        let at: Vec<u64> = schedule(p, 1).take(8).map(|d| d.at.0 / 1_000_000).collect();
        assert_eq!(at, vec![0, 1, 2, 13, 14, 15, 26, 27]);
    }

    #[test]
    fn an_on_period_shorter_than_an_idt_still_carries_one_message() {
        // D-ITG's do … while (OnDuration > 0) sends before it checks: on 0.5 ms < IDT 1 ms.
        let mut p = StochasticParams::new(Dist::constant(ms(1.0)).unwrap(), Dist::constant(64.0).unwrap());
        p.bursts = Some(Bursts { on: Dist::constant(ms(0.5)).unwrap(), off: Dist::constant(ms(4.0)).unwrap() });
        let at: Vec<u64> = schedule(p, 1).take(4).map(|d| d.at.0 / 1_000_000).collect();
        assert_eq!(at, vec![0, 5, 10, 15]);
    }

    #[test]
    fn a_cycle_of_values_wraps_round_and_the_first_departure_can_be_offset() {
        let mut p = StochasticParams::new(
            Dist::cycle(vec![ms(5.0), ms(7.0)]).unwrap(),
            Dist::cycle(vec![100.0, 200.0, 300.0]).unwrap(),
        );
        p.first = Duration::from_millis(3);
        let d: Vec<(u64, u32)> = schedule(p, 1).take(5).map(|d| (d.at.0 / 1_000_000, d.bytes)).collect();
        assert_eq!(d, vec![(3, 100), (8, 200), (15, 300), (20, 100), (27, 200)]);
    }
}
