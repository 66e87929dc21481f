//! The clocks of a measurement, and sleeping until an absolute time.
//!
//! - `CLOCK_MONOTONIC` is the default: it never steps, and it is one clock for every network
//!   namespace of a kernel (namespaces share it; only time namespaces, unused here, offset it),
//!   so on one host sender and receiver timestamps compare exactly and one-way delays are exact.
//! - `CLOCK_REALTIME` across hosts: both ends read their own, the signalling channel estimates
//!   their offset NTP-style ([`offset_from_probes`]) and the report carries its uncertainty
//!   (half the smallest round trip of the probes, the bound of RFC 5905's on-wire method).
//!   Unlike D-ITG's time of day (`gettimeofday` seconds of the day), nanoseconds since the epoch
//!   never wrap at midnight.
//!
//! Which clock a run uses is decided by the sender: monotonic when both ends report the same
//! kernel boot id (`/proc/sys/kernel/random/boot_id`), realtime otherwise.

use serde::{Deserialize, Serialize};

/// The clock both ends timestamp with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    Monotonic,
    Realtime,
}

impl Clock {
    fn id(self) -> libc::clockid_t {
        match self {
            Clock::Monotonic => libc::CLOCK_MONOTONIC,
            Clock::Realtime => libc::CLOCK_REALTIME,
        }
    }

    /// The clock's time now, ns.
    pub fn now_ns(self) -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid timespec; both clock ids exist on every Linux.
        unsafe { libc::clock_gettime(self.id(), &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

/// `CLOCK_MONOTONIC` now, ns.
pub fn mono_ns() -> u64 {
    Clock::Monotonic.now_ns()
}

/// Sleeps until `CLOCK_MONOTONIC` reads `deadline_ns` (`clock_nanosleep` with `TIMER_ABSTIME`:
/// an absolute deadline, so a signal or a late wake-up never adds up); returns at once for a
/// deadline in the past.
pub fn sleep_until_mono(deadline_ns: u64) {
    let ts = libc::timespec { tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t, tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long };
    loop {
        // SAFETY: valid clock id and timespec; the remainder pointer may be null with TIMER_ABSTIME.
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        if r != libc::EINTR {
            return;
        }
    }
}

/// This kernel's boot id: equal at both ends means one kernel, so one monotonic clock.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// One NTP-style probe: the sender's send time `t1`, the receiver's receive and reply times `t2`,
/// `t3` (its clock), the sender's receive time `t4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub t1: u64,
    pub t2: u64,
    pub t3: u64,
    pub t4: u64,
}

/// The receiver clock's offset from the sender's, and how sure it is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offset {
    /// Receiver clock minus sender clock, ns (θ of RFC 5905 §8).
    pub offset_ns: i64,
    /// Half the round trip of the probe it came from, ns: the true offset lies within ± this.
    pub uncertainty_ns: u64,
}

/// The offset from the probe with the smallest round trip (RFC 5905's clock filter keeps the
/// sample of least delay): θ = ((t2 − t1) + (t3 − t4)) / 2, δ = (t4 − t1) − (t3 − t2), ± δ/2.
pub fn offset_from_probes(probes: &[Probe]) -> Option<Offset> {
    probes
        .iter()
        .filter(|p| p.t4 >= p.t1 && p.t3 >= p.t2)
        .map(|p| {
            let rtt = (p.t4 - p.t1).saturating_sub(p.t3 - p.t2);
            let theta = ((p.t2 as i128 - p.t1 as i128) + (p.t3 as i128 - p.t4 as i128)) / 2;
            (rtt, theta as i64)
        })
        .min_by_key(|&(rtt, _)| rtt)
        .map(|(rtt, theta)| Offset { offset_ns: theta, uncertainty_ns: rtt / 2 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_is_rfc5905s_theta_of_the_least_delay_probe() {
        // Receiver 1 ms ahead; paths of 100 µs and 300 µs each way, replies after 10 µs.
        // Probe A: t1 = 0, t2 = 0 + 100 µs + 1 ms, t3 = t2 + 10 µs, t4 = 100+10+100 µs → θ = 1 ms,
        // δ = 200 µs. Probe B (asymmetric 300/100 µs): θ = 1.1 ms, δ = 400 µs. A is kept.
        let a = Probe { t1: 0, t2: 1_100_000, t3: 1_110_000, t4: 210_000 };
        let b = Probe { t1: 1_000_000, t2: 2_300_000, t3: 2_310_000, t4: 1_410_000 };
        let o = offset_from_probes(&[b, a]).unwrap();
        assert_eq!(o, Offset { offset_ns: 1_000_000, uncertainty_ns: 100_000 });
        assert_eq!(offset_from_probes(&[b]).unwrap().offset_ns, 1_100_000);
        assert_eq!(offset_from_probes(&[]), None);
    }

    #[test]
    fn sleeping_until_a_deadline_wakes_after_it() {
        let deadline = mono_ns() + 2_000_000;
        sleep_until_mono(deadline);
        assert!(mono_ns() >= deadline);
        let before = mono_ns();
        sleep_until_mono(before - 1_000_000_000); // 1 s in the past: returns at once
        // Not the 1 s it would sleep if it took the past deadline as relative; 50 ms of slack for a busy machine.
        assert!(mono_ns() - before < 50_000_000);
    }
}
