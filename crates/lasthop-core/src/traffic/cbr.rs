//! Constant bit rate: `size` payload bytes every `interval`, the first at the source's start
//! (D-ITG's `-C rate -c size`, ns-3's `UdpClient`). No randomness: the schedule is the
//! arithmetic progression k · interval, in integer nanoseconds, so it never drifts.

use crate::time::Duration;
use crate::units::Bytes;

/// A CBR source's parameters (and, having no other state, the model itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbrParams {
    /// Payload bytes per message.
    pub size: Bytes,
    /// Inter-departure time.
    pub interval: Duration,
}

impl CbrParams {
    pub(super) fn departure_after(&self, last: Option<Duration>) -> Duration {
        last.map_or(Duration::ZERO, |t| t + self.interval)
    }

    pub(super) fn size_u32(&self) -> u32 {
        self.size.0 as u32
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Source, SourceParams};
    use super::*;
    use crate::rng::RngStreams;

    #[test]
    fn departures_are_exactly_k_intervals_after_the_start() {
        // The home scenario's game uplink (Palazzi et al. 2006 §4): 42 B every 60 ms. Hand
        // count: departure k leaves at k · 60 ms exactly, with no rounding drift after 10^5.
        let p = CbrParams { size: Bytes(42), interval: Duration::from_millis(60) };
        let mut s = Source::new(SourceParams::Cbr(p));
        let mut rng = RngStreams::new(1).stream("cbr");
        for k in 0..100_000u64 {
            let d = s.next(&mut rng);
            assert_eq!(d.at, Duration(k * 60_000_000), "departure {k}");
            assert_eq!(d.bytes, 42);
        }
    }

    #[test]
    fn cbr_draws_nothing_from_its_stream() {
        // A CBR flow must not shift the draws of anything sharing its stream.
        use rand_core::RngCore;
        let streams = RngStreams::new(3);
        let mut used = streams.stream("s");
        let mut s = Source::new(SourceParams::Cbr(CbrParams { size: Bytes(1), interval: Duration(7) }));
        for _ in 0..10 {
            s.next(&mut used);
        }
        assert_eq!(used.next_u64(), streams.stream("s").next_u64());
    }
}
