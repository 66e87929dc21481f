//! A TUN device (Linux `Documentation/networking/tuntap.rst`): opened on /dev/net/tun with
//! `IFF_TUN | IFF_NO_PI`, so each `read` returns one IP packet exactly as the namespace's stack
//! sent it (no packet-information prefix, no Ethernet header) and each `write` injects one into
//! that stack as if it had arrived on the device. Non-blocking: the driver reads until `EAGAIN`
//! after each wake-up (a batch), and never waits on one device.
//!
//! The device belongs to this file descriptor (not `TUNSETPERSIST`), so it disappears when the
//! emulator exits, however it exits; moving it into a namespace keeps the descriptor working.
//! Left out: multi-queue TUN (`IFF_MULTI_QUEUE`) and offloads (`IFF_VNET_HDR`, which would hand
//! over 64 KB GSO super-packets that a link model must not see as one packet).

use crate::EmuError;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// An open TUN device.
#[derive(Debug)]
pub struct Tun {
    file: File,
    pub name: String,
}

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

impl Tun {
    /// Creates TUN device `name` (≤ 15 bytes) in this process's namespace.
    pub fn create(name: &str) -> Result<Tun, EmuError> {
        if name.len() >= libc::IFNAMSIZ {
            return Err(EmuError::Unsupported(format!("interface name {name:?} is longer than 15 bytes")));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .map_err(|e| EmuError::Io { what: "opening /dev/net/tun".into(), source: e })?;
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short, _pad: [0; 22] };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes a struct ifreq (40 bytes, name then a union whose
        // first member is the flags); IfReq has that layout and outlives the call.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReq) };
        if rc < 0 {
            return Err(EmuError::Io { what: format!("creating TUN device {name} (ioctl TUNSETIFF)"), source: io::Error::last_os_error() });
        }
        Ok(Tun { file, name: name.to_string() })
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// One packet into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: buf is valid for buf.len() bytes of writes.
        let n = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock {
            Ok(None)
        } else {
            Err(e)
        }
    }

    /// Injects one packet into the namespace's stack.
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        // SAFETY: packet is valid for packet.len() bytes of reads.
        let n = unsafe { libc::write(self.fd(), packet.as_ptr().cast(), packet.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}
