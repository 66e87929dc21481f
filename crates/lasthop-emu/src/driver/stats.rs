//! What the driver counts for the run report's `emulator` section: packets read and written,
//! what it could not route, and how late releases and timer wake-ups were (histograms).

use crate::steering::Steering;

/// What the driver counted, for the run report's `emulator` section.
#[derive(Clone, Debug, Default)]
pub struct DriverStats {
    pub packets_read: u64,
    pub packets_written: u64,
    /// Bytes from a namespace that are not an IPv4 packet lasthop can route.
    pub malformed: u64,
    /// IPv4 packets to an address that is no endpoint of the scenario (or the sender itself).
    pub unroutable: u64,
    /// Packets that belong to no flow (a ping, a shell's traffic), routed all the same.
    pub other_packets: u64,
    /// The generator's signalling packets, passed between namespaces outside the models.
    pub signalling_packets: u64,
    pub write_errors: u64,
    /// Packets a router (a node inside the emulator) discarded because their TTL ran out.
    pub ttl_expired: u64,
    /// Kernel TCP data segments whose PSH flag was cleared (`LoopOptions::clear_push`).
    pub push_flags_cleared: u64,
    /// How late packets were written after the time the model scheduled, ns: a histogram in
    /// powers of two (bucket k holds lateness in [2^(k-1), 2^k)), and the maximum.
    pub lateness_log2: [u64; 32],
    /// The same releases below [`FINE_LATENESS_US`] µs in 1 µs buckets (the quantiles' resolution
    /// where the 100 µs target lies; the powers of two straddle it with 65–131 µs).
    pub lateness_us: Vec<u64>,
    pub lateness_max_ns: u64,
    pub wakeups: u64,
    /// How late `ppoll` returned after its timeout, per µs below [`FINE_LATENESS_US`] (the
    /// timer's wake-up latency, apart from the loop's own work).
    pub wake_lateness_us: Vec<u64>,
    /// True if the driver thread runs under SCHED_FIFO.
    pub realtime: bool,
    /// The spin before each due event ([`super::Driver::set_spin`]), ns.
    pub spin_ns: u64,
    /// True if the run held the kernel's CPU wake-up latency at 0 µs (`LoopOptions::keep_cpus_awake`).
    pub cpus_kept_awake: bool,
    /// Why the kernel refused that request, if it was made and refused.
    pub cpus_kept_awake_error: Option<String>,
    /// The receive steering in force: the driver pinned to its CPU (`LoopOptions::steering`).
    pub steering: Option<Steering>,
    /// What of the steering could not be set (a device's `rps_cpus`, the driver's affinity).
    pub steering_error: Option<String>,
}

/// Lateness below this many µs is histogrammed per µs.
pub const FINE_LATENESS_US: usize = 4096;

impl DriverStats {
    pub(super) fn late(&mut self, ns: u64) {
        let k = (64 - ns.leading_zeros()) as usize;
        self.lateness_log2[k.min(31)] += 1;
        self.lateness_max_ns = self.lateness_max_ns.max(ns);
        let us = (ns / 1000) as usize;
        if us < FINE_LATENESS_US {
            if self.lateness_us.is_empty() {
                self.lateness_us = vec![0; FINE_LATENESS_US];
            }
            self.lateness_us[us] += 1;
        }
    }

    pub(super) fn wake_late(&mut self, ns: u64) {
        if self.wake_lateness_us.is_empty() {
            self.wake_lateness_us = vec![0; FINE_LATENESS_US];
        }
        self.wake_lateness_us[((ns / 1000) as usize).min(FINE_LATENESS_US - 1)] += 1;
    }

    /// The timer wake-up latency below which a fraction `q` of timed-out sleeps woke, µs (the
    /// upper edge of its 1 µs bucket; the last bucket holds everything beyond).
    pub fn wake_quantile_us(&self, q: f64) -> Option<u64> {
        let total: u64 = self.wake_lateness_us.iter().sum();
        let mut seen = 0;
        for (us, &c) in self.wake_lateness_us.iter().enumerate() {
            seen += c;
            if total > 0 && seen as f64 >= q * total as f64 {
                return Some(us as u64 + 1);
            }
        }
        None
    }

    /// The lateness below which a fraction `q` of releases fell: the upper edge of its bucket
    /// (1 µs wide below [`FINE_LATENESS_US`] µs, a power of two above), at most the maximum.
    pub fn lateness_quantile_ns(&self, q: f64) -> Option<u64> {
        let total: u64 = self.lateness_log2.iter().sum();
        if total == 0 {
            return None;
        }
        let mut seen = 0;
        for (us, &c) in self.lateness_us.iter().enumerate() {
            seen += c;
            if seen as f64 >= q * total as f64 {
                return Some(((us as u64 + 1) * 1000).min(self.lateness_max_ns));
            }
        }
        let mut seen = 0;
        for (k, &c) in self.lateness_log2.iter().enumerate() {
            seen += c;
            if seen as f64 >= q * total as f64 {
                return Some(if k == 0 { 0 } else { (1u64 << k).min(self.lateness_max_ns) });
            }
        }
        Some(self.lateness_max_ns)
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles_come_from_microsecond_buckets_then_powers_of_two() {
        let mut s = DriverStats::default();
        // 98 releases 3.2 µs late (bucket [3, 4) µs), 2 at 70 µs: the p50 edge is 4 000 ns, the
        // p99 edge 71 000 ns → capped at the maximum seen, 70 000 ns.
        for _ in 0..98 {
            s.late(3_200);
        }
        s.late(70_000);
        s.late(70_000);
        assert_eq!(s.lateness_quantile_ns(0.5), Some(4_000));
        assert_eq!(s.lateness_quantile_ns(0.99), Some(70_000));
        assert_eq!(DriverStats::default().lateness_quantile_ns(0.5), None);
        // 990 at 80.5 µs, 10 at 5 ms (beyond the fine range, bucket [4.19, 8.39) ms): p99 is
        // 81 µs, the 100 µs target's side of the old 65–131 µs bucket; p999 the 5 ms maximum.
        let mut s = DriverStats::default();
        for _ in 0..990 {
            s.late(80_500);
        }
        for _ in 0..10 {
            s.late(5_000_000);
        }
        assert_eq!(s.lateness_quantile_ns(0.99), Some(81_000));
        assert_eq!(s.lateness_quantile_ns(0.999), Some(5_000_000));
    }
}
