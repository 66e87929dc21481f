//! Pacing departures on absolute deadlines.
//!
//! Every departure of a flow has an absolute deadline, `origin + flow start + departure offset`
//! (the core's [`lasthop_core::traffic::Schedule`] gives the offsets), on `CLOCK_MONOTONIC`. The
//! sender sleeps with `clock_nanosleep(TIMER_ABSTIME)` until [`SPIN_NS`] before the deadline,
//! then spins on the clock. A departure that leaves late does not move the next one: deadlines
//! come from the schedule, never from the previous send, so lateness is repaid (the next packets
//! leave as soon as they are due) and the count over a period is exact. D-ITG instead sleeps an
//! interval after each send (its bursty build resets its ticker on every packet), so every
//! overshoot of its sleeps (55–90 µs here) is lost for good: 60.7 % of a 10 kpkt/s flow.
//!
//! The thread's timer slack is set to 1 ns (`PR_SET_TIMERSLACK`; the default 50 µs is the
//! kernel allowing itself to wake that much later to batch wake-ups: measured here, a
//! 75 µs sleep overshoots by 67 µs at the median with the default slack, 16 µs with 1 ns).
//!
//! The spin margin is the trade between CPU and punctuality: a departure is late only when the
//! wake-up overshoots by more than the margin. On this machine class (a 2-vCPU VM) wake-ups
//! overshoot by 15–25 µs at the median and 45–70 µs at the 99th percentile, so the default
//! [`SPIN_NS`] of 50 µs covers all but the tail of them; it costs about half a core at
//! 10 kpkt/s (the thread's CPU time is reported as `send_thread_cpu_s`), 5 % at 1 kpkt/s.
//! `--spin-us` changes it: 25 µs halves the CPU and leaves more departures late, 100 µs at
//! 10 kpkt/s never sleeps (a pinned core). On a machine whose cores are busy with other work
//! the late departures come from waiting for a CPU, not from the wake-up, and no margin helps
//! (`--realtime` does).

use crate::clock::{mono_ns, sleep_until_mono};

/// Spin this long before a deadline instead of sleeping, by default (a wake-up from
/// `clock_nanosleep` with 1 ns of slack is 15–25 µs late at the median on this machine class,
/// 45–70 µs at the 99th percentile).
pub const SPIN_NS: u64 = 50_000;

/// What to do now to leave at a deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The deadline has passed (or is now): send.
    Go,
    /// Sleep until this absolute time, then look again.
    SleepUntil(u64),
    /// Within the spin margin: poll the clock.
    Spin,
}

/// The step towards `deadline` at time `now` with a spin margin of `spin`.
pub fn plan(now: u64, deadline: u64, spin: u64) -> Wait {
    if now >= deadline {
        Wait::Go
    } else if deadline - now > spin {
        Wait::SleepUntil(deadline - spin)
    } else {
        Wait::Spin
    }
}

/// The absolute deadline of a departure `at_ns` after a flow's start `start_ns`, itself counted
/// from the run's origin `origin_ns` (all on `CLOCK_MONOTONIC`); saturates rather than wraps.
pub fn deadline(origin_ns: u64, start_ns: u64, at_ns: u64) -> u64 {
    origin_ns.saturating_add(start_ns).saturating_add(at_ns)
}

/// Lowers this thread's timer slack to 1 ns (Linux `prctl(PR_SET_TIMERSLACK)`).
pub fn tighten_timer_slack() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes an unsigned long and touches no memory.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Asks for `SCHED_FIFO` (priority 10) for this thread, so that on a busy machine the pacer's
/// wake-ups are not queued behind other processes; false when not permitted. The thread sleeps
/// between departures and spins at most [`SPIN_NS`], and the kernel's real-time throttling
/// (`sched_rt_runtime_us`) bounds it anyway.
pub fn realtime_priority() -> bool {
    let p = libc::sched_param { sched_priority: 10 };
    // SAFETY: a valid sched_param for the calling thread (pid 0).
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// A PM QoS request that keeps every CPU out of idle states with a wake-up latency above 0 µs
/// while it lives: the kernel's `/dev/cpu_dma_latency` (Documentation/power/pm_qos_interface.rst)
/// holds the request as long as the file stays open and drops it when it is closed — at the
/// latest when the process exits, SIGKILL included, so nothing outlives the run. It is what
/// `cyclictest` does by default. On a virtual machine whose idle vCPU halts (the `haltpoll` or
/// `acpi_idle` driver), a sleeping thread is woken only when the host runs the vCPU again: on
/// this 2-vCPU VM a 10 Mb/s emulation's releases were late by 0.8-17 ms at p99 with halting and
/// 75-551 µs with the request held (medians 1.7 ms and 284 µs; BENCHMARKS.md). Idle CPUs poll
/// instead, so they show as busy for the run; a CPU with work to do is not slowed. Needs write
/// access to the device (root).
#[derive(Debug)]
pub struct CpuLatencyRequest {
    _device: std::fs::File,
}

impl CpuLatencyRequest {
    /// The device that takes the request.
    pub const DEVICE: &'static str = "/dev/cpu_dma_latency";

    /// Asks for 0 µs; the error says why the kernel refused (no such device, no permission).
    pub fn zero() -> std::io::Result<Self> {
        use std::io::Write;
        let mut device = std::fs::OpenOptions::new().write(true).open(Self::DEVICE)?;
        // The device takes the latency as a binary s32 (or as hex text); 0: never idle deeper
        // than polling.
        device.write_all(&0i32.to_ne_bytes())?;
        Ok(CpuLatencyRequest { _device: device })
    }
}

/// The calling thread's CPU time so far (user + system, `getrusage(RUSAGE_THREAD)`), ns.
pub fn thread_cpu_ns() -> u64 {
    // SAFETY: an all-zero rusage is valid; getrusage fills it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) } != 0 {
        return 0;
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(u.ru_utime) + ns(u.ru_stime)
}

/// Blocks until `CLOCK_MONOTONIC` reaches `deadline`; returns the time it read on leaving (at
/// or after the deadline).
pub fn wait_until(deadline: u64, spin: u64) -> u64 {
    loop {
        let now = mono_ns();
        match plan(now, deadline, spin) {
            Wait::Go => return now,
            Wait::SleepUntil(t) => sleep_until_mono(t),
            Wait::Spin => std::hint::spin_loop(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's current aggregate CPU latency request, µs (reading the device gives it as a
    /// binary s32); None where it cannot be read (no root, no device).
    fn cpu_latency_us() -> Option<i32> {
        let bytes = std::fs::read(CpuLatencyRequest::DEVICE).ok()?;
        Some(i32::from_ne_bytes(bytes.get(..4)?.try_into().ok()?))
    }

    #[test]
    fn cpu_latency_request_holds_zero_until_dropped() {
        let Some(before) = cpu_latency_us() else {
            eprintln!("skipped: {} cannot be read here (needs root)", CpuLatencyRequest::DEVICE);
            return;
        };
        let request = CpuLatencyRequest::zero().expect("the device read, so it can be written");
        // The kernel takes the smallest request of all (pm_qos_interface.rst): ours is 0.
        assert_eq!(cpu_latency_us(), Some(0));
        drop(request);
        // Closing the device withdraws it: back to what it was (the kernel's default is
        // 2 000 000 000 µs, PM_QOS_CPU_LATENCY_DEFAULT_VALUE), unless another process holds 0.
        assert_eq!(cpu_latency_us(), Some(before));
        if before == 0 {
            eprintln!("note: another request already held 0 µs, so the withdrawal was not observable");
        }
    }

    #[test]
    fn plan_sleeps_to_the_spin_margin_then_spins_then_goes() {
        // Deadline 1 000 000 ns, margin 25 µs: sleep until 975 000, spin from there, go at it.
        assert_eq!(plan(0, 1_000_000, 25_000), Wait::SleepUntil(975_000));
        assert_eq!(plan(975_000, 1_000_000, 25_000), Wait::Spin);
        assert_eq!(plan(999_999, 1_000_000, 25_000), Wait::Spin);
        assert_eq!(plan(1_000_000, 1_000_000, 25_000), Wait::Go);
        assert_eq!(plan(5_000_000, 1_000_000, 25_000), Wait::Go, "late: go at once");
        assert_eq!(plan(0, 10_000, 25_000), Wait::Spin, "a deadline inside the margin is spun for");
    }

    #[test]
    fn lateness_is_repaid_because_deadlines_come_from_the_schedule() {
        // A 10 kpkt/s CBR flow (100 µs IDT) starting 1 s after an origin of 5 s. Whatever a send
        // took, packet k's deadline is origin + start + k·100 µs: after a 350 µs stall at packet
        // 10, packets 11..13 are already due (they leave back to back) and packet 14 is on time.
        let origin = 5_000_000_000;
        let d = |k: u64| deadline(origin, 1_000_000_000, k * 100_000);
        assert_eq!(d(0), 6_000_000_000);
        let stalled_until = d(10) + 350_000;
        let due: Vec<u64> = (11..15).filter(|&k| plan(stalled_until, d(k), SPIN_NS) == Wait::Go).collect();
        assert_eq!(due, vec![11, 12, 13]);
        assert_eq!(d(14) - d(10), 400_000, "no drift: four IDTs whatever happened in between");
        assert_eq!(deadline(u64::MAX - 1, 5, 5), u64::MAX);
    }
}
