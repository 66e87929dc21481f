//! Batched datagram I/O: `sendmmsg(2)` and `recvmmsg(2)` over preallocated buffers (one system
//! call for up to [`BATCH`] datagrams, no allocation per packet), and the kernel receive
//! timestamps of `SO_TIMESTAMPNS` (`CLOCK_REALTIME`, taken when the packet reached the socket).
//!
//! UDP generic segmentation offload (`UDP_SEGMENT`, Linux ≥ 4.18, udp(7)): a batch of datagrams
//! of one size (the last may be shorter) can leave in one `sendmsg` that the kernel cuts into
//! those datagrams. The stack then runs once per batch instead of once per datagram, which on
//! loopback (where the receiving socket does the cutting) is most of a datagram's cost: several
//! times the packet rate for the same CPU. Each datagram keeps its own header and bytes; what
//! changes is that a qdisc on the way (a `tc` shaper on a real interface) sees the batch as one
//! packet until the device cuts it, so the sender turns it on by itself only towards a loopback
//! address (see `send::SendOptions::gso`). Batches of mixed sizes, or too large for one
//! datagram, go through `sendmmsg`; a kernel that refuses `UDP_SEGMENT` turns it off for good.

use std::io;
use std::os::fd::RawFd;

/// Datagrams per system call.
pub const BATCH: usize = 64;
/// The largest UDP payload over IPv4.
pub const MAX_DATAGRAM: usize = 65_507;
/// `UDP_SEGMENT` and `UDP_GRO` of include/uapi/linux/udp.h (the libc crate has them only for
/// some targets).
const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;

/// Datagrams waiting to be sent on a connected socket.
pub struct SendBatch {
    bufs: Vec<Vec<u8>>,
    lens: Vec<usize>,
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    /// Send batches of one datagram size with `UDP_SEGMENT`.
    gso: bool,
    /// The control message of a segmented send (a cmsghdr and a u16, aligned).
    cmsg: [u64; 4],
}

// SAFETY: the raw pointers in `iov`/`hdrs` are rebuilt from `bufs` before every call and never
// dereferenced elsewhere.
unsafe impl Send for SendBatch {}

impl SendBatch {
    /// Room for [`BATCH`] datagrams of up to `max_len` bytes.
    pub fn new(max_len: usize) -> SendBatch {
        let zero_iov = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 };
        // SAFETY: an all-zero mmsghdr is a valid "empty" header.
        let zero_hdr: libc::mmsghdr = unsafe { std::mem::zeroed() };
        SendBatch {
            bufs: vec![vec![0u8; max_len]; BATCH],
            lens: Vec::with_capacity(BATCH),
            iov: vec![zero_iov; BATCH],
            hdrs: vec![zero_hdr; BATCH],
            gso: false,
            cmsg: [0; 4],
        }
    }

    /// Sends batches of one datagram size as one segmented `sendmsg` (UDP GSO) from now on.
    pub fn use_gso(&mut self, on: bool) {
        self.gso = on;
    }

    /// Whether segmented sends are on (false after the kernel refused one).
    pub fn gso(&self) -> bool {
        self.gso
    }

    /// The segment size if the queued datagrams can leave as one segmented send: at least two,
    /// all of the first's size but the last (which may be shorter), within one UDP datagram.
    fn gso_size(&self) -> Option<usize> {
        let n = self.lens.len();
        let size = *self.lens.first()?;
        let total: usize = self.lens.iter().sum();
        let uniform = self.lens[..n - 1].iter().all(|&l| l == size) && self.lens[n - 1] <= size;
        (self.gso && n >= 2 && uniform && size > 0 && total <= MAX_DATAGRAM).then_some(size)
    }

    /// One `sendmsg` with `UDP_SEGMENT`: Ok(true) when it left, Ok(false) when the kernel does not
    /// segment here (GSO then stays off), Err for an error of the send itself.
    fn send_segmented(&mut self, fd: RawFd, size: usize) -> io::Result<bool> {
        let n = self.lens.len();
        for i in 0..n {
            self.iov[i] = libc::iovec { iov_base: self.bufs[i].as_mut_ptr().cast(), iov_len: self.lens[i] };
        }
        // SAFETY: an all-zero msghdr is valid; the fields set point into self for the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = self.iov.as_mut_ptr();
        msg.msg_iovlen = n as _;
        msg.msg_control = self.cmsg.as_mut_ptr().cast();
        // SAFETY: CMSG_SPACE/CMSG_FIRSTHDR/CMSG_DATA over a buffer of CMSG_SPACE(2) ≤ 32 bytes.
        unsafe {
            msg.msg_controllen = libc::CMSG_SPACE(2) as _;
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_UDP;
            (*c).cmsg_type = UDP_SEGMENT;
            (*c).cmsg_len = libc::CMSG_LEN(2) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), size as u16);
        }
        // SAFETY: msg points at live iovecs and control data owned by self.
        let r = unsafe { libc::sendmsg(fd, &msg, 0) };
        if r >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // No segmentation here (an old kernel, a device without checksum offload, a segment
            // over the path's MTU): plain datagrams from now on.
            Some(libc::EINVAL) | Some(libc::EIO) | Some(libc::ENOPROTOOPT) | Some(libc::EOPNOTSUPP) => {
                self.gso = false;
                Ok(false)
            }
            _ => Err(e),
        }
    }

    pub fn len(&self) -> usize {
        self.lens.len()
    }
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }
    pub fn is_full(&self) -> bool {
        self.lens.len() == BATCH
    }

    /// The next slot's buffer (zeroed beyond what the caller writes), of length `len`.
    pub fn push(&mut self, len: usize) -> &mut [u8] {
        let i = self.lens.len();
        self.lens.push(len);
        &mut self.bufs[i][..len]
    }

    /// Sends the batch (repeating after a partial send); returns how many left, which is fewer
    /// than queued only after an error the kernel reported for the first unsent one. Empties
    /// the batch.
    pub fn send(&mut self, fd: RawFd) -> (usize, Option<io::Error>) {
        let n = self.lens.len();
        if let Some(size) = self.gso_size() {
            let mut retries = 0;
            loop {
                match self.send_segmented(fd, size) {
                    Ok(true) => {
                        self.lens.clear();
                        return (n, None);
                    }
                    Ok(false) => break, // GSO is off now: sendmmsg below
                    Err(e) => match e.raw_os_error() {
                        Some(libc::EINTR) => continue,
                        Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::ECONNREFUSED) if retries < 100 => {
                            retries += 1;
                            std::thread::sleep(std::time::Duration::from_micros(50));
                        }
                        _ => {
                            self.lens.clear();
                            return (0, Some(e));
                        }
                    },
                }
            }
        }
        for i in 0..n {
            self.iov[i] = libc::iovec { iov_base: self.bufs[i].as_mut_ptr().cast(), iov_len: self.lens[i] };
            // SAFETY: zeroed header, then the fields sendmmsg reads.
            self.hdrs[i] = unsafe { std::mem::zeroed() };
            self.hdrs[i].msg_hdr.msg_iov = &mut self.iov[i];
            self.hdrs[i].msg_hdr.msg_iovlen = 1;
        }
        let mut done = 0;
        let mut err = None;
        let mut retries = 0;
        while done < n {
            // SAFETY: hdrs[done..n] point into live buffers owned by self.
            let r = unsafe { libc::sendmmsg(fd, self.hdrs[done..].as_mut_ptr(), (n - done) as libc::c_uint, 0) };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // A full device queue or an ICMP error of an earlier datagram: try again
                    // a few times, then give the rest up as unsent.
                    Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::ECONNREFUSED) if retries < 100 => {
                        retries += 1;
                        std::thread::sleep(std::time::Duration::from_micros(50));
                        continue;
                    }
                    _ => {
                        err = Some(e);
                        break;
                    }
                }
            }
            done += r as usize;
        }
        self.lens.clear();
        (done, err)
    }
}

/// Buffers for receiving a batch, with the sender's address and kernel timestamp of each.
pub struct RecvBatch {
    bufs: Vec<Vec<u8>>,
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    addrs: Vec<libc::sockaddr_storage>,
    cmsg: Vec<[u64; 8]>,
    /// Headers the last call filled (the kernel rewrote their lengths and flags).
    filled: usize,
}

// SAFETY: the raw pointers in `iov`/`hdrs` point into the heap buffers of the other vectors,
// which are never resized, so they stay valid wherever the struct moves.
unsafe impl Send for RecvBatch {}

impl Default for RecvBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl RecvBatch {
    pub fn new() -> RecvBatch {
        let zero_iov = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 };
        // SAFETY: all-zero headers and addresses are valid initial values.
        let (zero_hdr, zero_addr): (libc::mmsghdr, libc::sockaddr_storage) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
        let mut b = RecvBatch {
            bufs: vec![vec![0u8; MAX_DATAGRAM + 1]; BATCH],
            iov: vec![zero_iov; BATCH],
            hdrs: vec![zero_hdr; BATCH],
            addrs: vec![zero_addr; BATCH],
            cmsg: vec![[0u64; 8]; BATCH],
            filled: BATCH,
        };
        for i in 0..BATCH {
            b.iov[i] = libc::iovec { iov_base: b.bufs[i].as_mut_ptr().cast(), iov_len: b.bufs[i].len() };
            let h = &mut b.hdrs[i].msg_hdr;
            h.msg_iov = &mut b.iov[i];
            h.msg_iovlen = 1;
            h.msg_name = (&mut b.addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_control = b.cmsg[i].as_mut_ptr().cast();
        }
        b
    }

    /// Waits (up to the socket's receive timeout) for at least one datagram and takes what is
    /// queued, up to [`BATCH`]; Ok(0) on timeout. The headers point into the buffers once and
    /// for all ([`RecvBatch::new`]); only what the kernel rewrote in the last call is reset.
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        for hdr in &mut self.hdrs[..self.filled] {
            hdr.msg_len = 0;
            let h = &mut hdr.msg_hdr;
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_controllen = std::mem::size_of::<[u64; 8]>() as _;
            h.msg_flags = 0;
        }
        // SAFETY: every header points into buffers owned by self for the call's duration.
        let r = unsafe { libc::recvmmsg(fd, self.hdrs.as_mut_ptr(), BATCH as libc::c_uint, libc::MSG_WAITFORONE, std::ptr::null_mut()) };
        if r < 0 {
            self.filled = 0;
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ECONNREFUSED) => Ok(0),
                _ => Err(e),
            };
        }
        self.filled = r as usize;
        Ok(r as usize)
    }

    /// Datagram `i` of the last batch; `truncated` when it was longer than the buffer.
    pub fn datagram(&self, i: usize) -> (&[u8], bool) {
        let h = &self.hdrs[i];
        let len = (h.msg_len as usize).min(self.bufs[i].len());
        (&self.bufs[i][..len], h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0)
    }

    /// The sender's address of datagram `i`.
    pub fn addr(&self, i: usize) -> (&libc::sockaddr_storage, libc::socklen_t) {
        (&self.addrs[i], self.hdrs[i].msg_hdr.msg_namelen)
    }

    /// The segment size of datagram `i` when the kernel delivered several datagrams of one
    /// flow joined (`UDP_GRO`, [`enable_gro`]): they are cut at every `size` bytes, the last
    /// may be shorter. None for a datagram delivered alone.
    pub fn gro_size(&self, i: usize) -> Option<usize> {
        let h = &self.hdrs[i].msg_hdr;
        // SAFETY: as in kernel_ts.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(h);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == UDP_GRO {
                    let size: libc::c_int = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    return usize::try_from(size).ok().filter(|&s| s > 0);
                }
                c = libc::CMSG_NXTHDR(h, c);
            }
        }
        None
    }

    /// The `SO_TIMESTAMPNS` receive time of datagram `i` (`CLOCK_REALTIME`, ns), if the kernel
    /// attached one.
    pub fn kernel_ts(&self, i: usize) -> Option<u64> {
        let h = &self.hdrs[i].msg_hdr;
        // SAFETY: CMSG_* walk the control buffer the kernel filled, within msg_controllen.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(h);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPNS {
                    let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                c = libc::CMSG_NXTHDR(h, c);
            }
        }
        None
    }
}

/// Sends `buf` to the address of a received datagram (the echo of the round-trip meter).
pub fn send_to(fd: RawFd, buf: &[u8], addr: &libc::sockaddr_storage, len: libc::socklen_t) -> io::Result<()> {
    // SAFETY: buf and addr are valid for the call.
    let r = unsafe { libc::sendto(fd, buf.as_ptr().cast(), buf.len(), 0, (addr as *const libc::sockaddr_storage).cast(), len) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Asks the kernel to deliver datagrams of one flow that arrive together joined (`UDP_GRO`,
/// udp(7)): one buffer and one `UDP_GRO` control message with their size, cut apart by the
/// reader ([`RecvBatch::gro_size`]). Segmented sends ([`SendBatch::use_gso`]) then reach the
/// receiver as they were sent, never cut into datagrams on loopback. False when the kernel
/// does not offer it.
pub fn enable_gro(fd: RawFd) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: a valid int option.
    unsafe { libc::setsockopt(fd, libc::SOL_UDP, UDP_GRO, (&on as *const libc::c_int).cast(), 4) == 0 }
}

/// The datagrams within received buffer `d` whose segment size is `gro` (None: `d` is one).
pub fn segments(d: &[u8], gro: Option<usize>) -> impl Iterator<Item = &[u8]> {
    // An empty datagram is one (malformed) datagram, where `chunks` would yield none.
    let empty = d.is_empty().then_some(d);
    empty.into_iter().chain(d.chunks(gro.unwrap_or(d.len()).max(1)))
}

/// Turns on `SO_TIMESTAMPNS` (kernel receive timestamps) on a socket.
pub fn enable_kernel_timestamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a valid int option.
    let r = unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, (&on as *const libc::c_int).cast(), 4) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_batch_sent_with_sendmmsg_arrives_whole_through_recvmmsg() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_millis(500))).unwrap();
        enable_kernel_timestamps(rx.as_raw_fd()).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        let mut b = SendBatch::new(100);
        for i in 0..10u8 {
            b.push(40 + i as usize)[0] = i;
        }
        assert_eq!(b.send(tx.as_raw_fd()).0, 10);
        assert!(b.is_empty());
        let mut r = RecvBatch::new();
        let mut got = Vec::new();
        while got.len() < 10 {
            let n = r.recv(rx.as_raw_fd()).unwrap();
            assert!(n > 0, "timed out with {} of 10", got.len());
            for i in 0..n {
                let (d, trunc) = r.datagram(i);
                assert!(!trunc);
                assert!(r.kernel_ts(i).is_some(), "SO_TIMESTAMPNS attached");
                got.push((d[0], d.len()));
            }
        }
        assert_eq!(got, (0..10u8).map(|i| (i, 40 + i as usize)).collect::<Vec<_>>());
    }

    #[test]
    fn a_segmented_batch_arrives_as_its_datagrams() {
        // 20 datagrams of 64 bytes and a last one of 50, each starting with its index: with
        // UDP_SEGMENT the kernel must cut the one send at every 64 bytes (udp(7)), so the
        // receiver sees 21 datagrams of 64 (and 50) bytes in order, as sendmmsg would give.
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_millis(500))).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        let mut b = SendBatch::new(100);
        b.use_gso(true);
        for i in 0..21u8 {
            b.push(if i == 20 { 50 } else { 64 })[0] = i;
        }
        assert_eq!(b.gso_size(), Some(64));
        assert_eq!(b.send(tx.as_raw_fd()).0, 21);
        let mut r = RecvBatch::new();
        let mut got = Vec::new();
        while got.len() < 21 {
            let n = r.recv(rx.as_raw_fd()).unwrap();
            assert!(n > 0, "timed out with {} of 21", got.len());
            got.extend((0..n).map(|i| (r.datagram(i).0[0], r.datagram(i).0.len())));
        }
        let want: Vec<(u8, usize)> = (0..21u8).map(|i| (i, if i == 20 { 50 } else { 64 })).collect();
        assert_eq!(got, want);
        assert!(b.gso(), "loopback segments UDP on Linux ≥ 4.18: the send above was one segmented write");
        // A receiver with UDP_GRO gets the same 21 datagrams as one buffer of 64-byte segments.
        let rx2 = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx2.set_read_timeout(Some(std::time::Duration::from_millis(500))).unwrap();
        assert!(enable_gro(rx2.as_raw_fd()));
        tx.connect(rx2.local_addr().unwrap()).unwrap();
        for i in 0..21u8 {
            b.push(if i == 20 { 50 } else { 64 })[0] = i;
        }
        assert_eq!(b.send(tx.as_raw_fd()).0, 21);
        let mut got = Vec::new();
        while got.len() < 21 {
            let n = r.recv(rx2.as_raw_fd()).unwrap();
            assert!(n > 0, "timed out with {} of 21", got.len());
            for i in 0..n {
                got.extend(segments(r.datagram(i).0, r.gro_size(i)).map(|s| (s[0], s.len())));
            }
        }
        assert_eq!(got, want);
        // Mixed sizes (a longer one after a shorter) cannot be one segmented send.
        b.push(40);
        b.push(64);
        assert_eq!(b.gso_size(), None);
    }
}
