//! The `tcp` table's per-socket settings ([`SocketTcp`]) on a Linux TCP socket, and the check
//! that this kernel takes them before anything is sent.
//!
//! Three options are Linux 6.15's (include/uapi/linux/tcp.h; the libc crate does not name them
//! yet): `TCP_RTO_MAX_MS` 44, `TCP_RTO_MIN_US` 45, `TCP_DELACK_MAX_US` 46. An older kernel
//! refuses them with ENOPROTOOPT, a value outside the kernel's range with EINVAL; both become an
//! error naming the flow, the field and what Linux allows.

use crate::plan::SocketTcp;
use std::io;
use std::os::fd::AsRawFd;

const TCP_RTO_MAX_MS: libc::c_int = 44;
const TCP_RTO_MIN_US: libc::c_int = 45;
const TCP_DELACK_MAX_US: libc::c_int = 46;

fn set_int(fd: &impl AsRawFd, opt: libc::c_int, value: u32) -> io::Result<()> {
    let v = libc::c_int::try_from(value).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a c_int option value, its size given.
    let r = unsafe {
        libc::setsockopt(fd.as_raw_fd(), libc::IPPROTO_TCP, opt, (&v as *const libc::c_int).cast(), std::mem::size_of::<libc::c_int>() as libc::socklen_t)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One setting that failed: the `tcp` field, its value as written, and the kernel's error.
#[derive(Debug)]
pub struct Refused {
    pub field: &'static str,
    pub value: String,
    pub error: io::Error,
}

impl Refused {
    /// The message for flow `flow`: the field, the value, why, and what Linux allows.
    pub fn message(&self, flow: &str) -> String {
        let allowed = match self.field {
            "mss" => "88 B to 32767 B (TCP_MAXSEG, tcp(7))",
            "rto_min" => {
                "a socket may only lower its minimum RTO: 2 jiffies to 200 ms (TCP_RTO_MIN_US, Linux 6.15+); the route's rto_min raises it \
                 (ip route change ... rto_min 1s, as lasthop emu does for its nodes)"
            }
            "rto_max" => "1 s to 120 s (TCP_RTO_MAX_MS, Linux 6.15+)",
            _ => "2 jiffies to 200 ms (TCP_DELACK_MAX_US, Linux 6.15+: the longest Linux delays an ACK)",
        };
        let why = match self.error.raw_os_error() {
            Some(libc::ENOPROTOOPT) => "this kernel has no such socket option".to_string(),
            _ => self.error.to_string(),
        };
        format!("flow {flow:?}: tcp.{} = {} cannot be set on a socket here ({why}); Linux allows {allowed}", self.field, self.value)
    }
}

/// Sets the sender's side of `t` on `s` (before `connect()`): MSS and the RTO bounds.
pub fn apply_sender(s: &socket2::Socket, t: &SocketTcp) -> Result<(), Refused> {
    if let Some(m) = t.mss {
        s.set_mss(m).map_err(|error| Refused { field: "mss", value: format!("{m}B"), error })?;
    }
    if let Some(us) = t.rto_min_us {
        set_int(s, TCP_RTO_MIN_US, us).map_err(|error| Refused { field: "rto_min", value: format!("{}ms", us as f64 / 1e3), error })?;
    }
    if let Some(ms) = t.rto_max_ms {
        set_int(s, TCP_RTO_MAX_MS, ms).map_err(|error| Refused { field: "rto_max", value: format!("{}s", ms as f64 / 1e3), error })?;
    }
    Ok(())
}

fn get_int(fd: &impl AsRawFd, opt: libc::c_int) -> io::Result<u32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a c_int option value and its size.
    let r = unsafe { libc::getsockopt(fd.as_raw_fd(), libc::IPPROTO_TCP, opt, (&mut v as *mut libc::c_int).cast(), &mut len) };
    if r == 0 {
        Ok(v as u32)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The receiver's delayed-ACK bound as the kernel holds it (whole jiffies), µs.
pub fn delack_max_us(s: &impl AsRawFd) -> io::Result<u32> {
    get_int(s, TCP_DELACK_MAX_US)
}

/// Sets the receiver's delayed-ACK bound on `s` (`tcp.delayed_ack`).
pub fn apply_delack_max(s: &impl AsRawFd, us: u32) -> Result<(), Refused> {
    set_int(s, TCP_DELACK_MAX_US, us).map_err(|error| Refused { field: "delayed_ack", value: format!("{}ms", us as f64 / 1e3), error })
}

/// Asks the kernel to acknowledge what is queued now and what arrives next at once
/// (`TCP_QUICKACK`; Linux leaves quick-ACK mode by itself, so a receiver re-arms it after each
/// read).
pub fn quickack(s: &impl std::os::fd::AsFd) {
    let _ = socket2::SockRef::from(s).set_quickack(true);
}

/// Tries every setting of `t` on a fresh socket of this host: the run is refused before it
/// sends if the kernel would refuse one (an old kernel, a value out of its range).
pub fn check(flow: &str, t: &SocketTcp) -> Result<(), String> {
    let probe = || socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, Some(socket2::Protocol::TCP)).map_err(|e| format!("a TCP socket: {e}"));
    apply_sender(&probe()?, t).map_err(|r| r.message(flow))?;
    if let Some(us) = t.delack_max_us {
        apply_delack_max(&probe()?, us).map_err(|r| r.message(flow))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernel_takes_the_settings_in_linux_s_ranges_and_refuses_the_others_by_name() {
        // Ranges from net/ipv4/tcp.c (do_tcp_setsockopt, Linux 6.15+): TCP_RTO_MIN_US up to
        // TCP_RTO_MIN = 200 ms, TCP_RTO_MAX_MS 1 000 to 120 000, TCP_DELACK_MAX_US up to 200 ms.
        if check("f", &SocketTcp { rto_min_us: Some(200_000), ..SocketTcp::default() }).is_err() {
            eprintln!("skipped: this kernel predates Linux 6.15's TCP_RTO_MIN_US");
            return;
        }
        let ok = SocketTcp { mss: Some(1000), rto_min_us: Some(50_000), rto_max_ms: Some(60_000), delack_max_us: Some(100_000), quickack: false };
        assert_eq!(check("f", &ok), Ok(()));
        let e = check("bulk", &SocketTcp { rto_min_us: Some(1_000_000), ..SocketTcp::default() }).unwrap_err();
        assert!(e.starts_with(r#"flow "bulk": tcp.rto_min = 1000ms cannot be set on a socket here"#) && e.contains("the route's rto_min raises it"), "{e}");
        let e = check("bulk", &SocketTcp { rto_max_ms: Some(600_000), ..SocketTcp::default() }).unwrap_err();
        assert!(e.contains("tcp.rto_max = 600s") && e.contains("1 s to 120 s"), "{e}");
        let e = check("bulk", &SocketTcp { delack_max_us: Some(500_000), ..SocketTcp::default() }).unwrap_err();
        assert!(e.contains("tcp.delayed_ack = 500ms"), "{e}");
        assert!(check("bulk", &SocketTcp { mss: Some(20), ..SocketTcp::default() }).unwrap_err().contains("tcp.mss = 20B"));
    }
}
