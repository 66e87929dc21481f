//! Receive steering: the driver and the kernel's receive path on different CPUs.
//!
//! A packet the driver writes into a TUN device is taken in by the kernel inside that `write()`
//! (`tun_get_user` → `netif_receive_skb`): IP, TCP, the ACK it answers with, all on the driver's
//! CPU and on the driver's time. With RPS on the device's receive queue (the kernel's
//! Documentation/networking/scaling.rst: `queues/rx-0/rps_cpus`), the kernel queues the packet to
//! another CPU's backlog instead and returns. So, with `EmuOptions::steer_receives` (opt-in: it
//! changes when the kernel's ACKs come back; EMULATION.md), the driver pins itself to one CPU
//! (the last this process may use) and every TUN steers its receives to the others: the
//! emulator's loop and the namespaces' TCP stacks share no CPU. On this 2-CPU machine iperf3
//! across an unconstrained link went from 1.08 to 1.82 Gb/s, medians (BENCHMARKS.md). With one
//! CPU there is nothing to steer.

use std::io;

/// Which CPU the driver runs on and which take the TUN devices' receives.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Steering {
    pub driver_cpu: usize,
    pub rps_cpus: Vec<usize>,
}

impl Steering {
    /// The driver on the last of `allowed` (CPU 0 usually takes the device interrupts), the
    /// receives on the rest; None when fewer than two CPUs are allowed.
    pub fn split(allowed: &[usize]) -> Option<Steering> {
        let (&driver_cpu, rest) = allowed.split_last()?;
        (!rest.is_empty()).then(|| Steering { driver_cpu, rps_cpus: rest.to_vec() })
    }

    /// [`Steering::split`] of the CPUs this process may run on.
    pub fn for_this_process() -> Option<Steering> {
        Steering::split(&allowed_cpus().ok()?)
    }

    /// The `rps_cpus` value: a hexadecimal CPU bitmap in 32-bit groups separated by commas, most
    /// significant first, as the kernel's `bitmap_parse` reads it.
    pub fn mask(&self) -> String {
        let top = self.rps_cpus.iter().max().map_or(0, |&c| c / 32);
        let mut groups = vec![0u32; top + 1];
        for &c in &self.rps_cpus {
            groups[c / 32] |= 1 << (c % 32);
        }
        groups.iter().rev().map(|g| format!("{g:08x}")).collect::<Vec<_>>().join(",")
    }

    /// Steers the receives of device `dev`, still in this process's network namespace (the
    /// setting stays with the device when it moves to another).
    pub fn apply(&self, dev: &str) -> Result<(), String> {
        let path = format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus");
        std::fs::write(&path, self.mask()).map_err(|e| format!("{path}: {e}"))
    }
}

/// The CPUs the calling thread may run on (sched_getaffinity), ascending.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid cpu_set_t of the size given; pid 0 is the calling thread.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: CPU_ISSET reads the set within CPU_SETSIZE.
    Ok((0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect())
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: as in allowed_cpus; CPU_SET writes within the set for cpu < CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: set is a valid cpu_set_t of the size given; pid 0 is the calling thread.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_takes_the_last_cpu_and_the_rest_receive() {
        assert_eq!(Steering::split(&[0, 1]), Some(Steering { driver_cpu: 1, rps_cpus: vec![0] }));
        assert_eq!(Steering::split(&[2, 5, 7]), Some(Steering { driver_cpu: 7, rps_cpus: vec![2, 5] }));
        assert_eq!(Steering::split(&[3]), None, "one CPU: nothing to steer to");
        assert_eq!(Steering::split(&[]), None);
    }

    #[test]
    fn the_mask_is_the_kernels_bitmap_format() {
        // CPU 0 alone: bit 0 of the first 32-bit group.
        assert_eq!(Steering { driver_cpu: 1, rps_cpus: vec![0] }.mask(), "00000001");
        // CPUs 0-2 and 4: 0b1_0111 = 0x17.
        assert_eq!(Steering { driver_cpu: 3, rps_cpus: vec![0, 1, 2, 4] }.mask(), "00000017");
        // CPU 33 is bit 1 of the second group, printed first: "00000002,00000001" with CPU 0.
        assert_eq!(Steering { driver_cpu: 40, rps_cpus: vec![0, 33] }.mask(), "00000002,00000001");
    }

    #[test]
    fn this_thread_may_run_on_some_cpu_and_can_be_pinned_to_one_of_them() {
        let allowed = allowed_cpus().unwrap();
        assert!(!allowed.is_empty());
        let cpu = *allowed.last().unwrap();
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![cpu]);
        })
        .join()
        .unwrap();
    }
}
