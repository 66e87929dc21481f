//! Batched datagram I/O: `sendmmsg(2)` and `recvmmsg(2)` over preallocated buffers (one system
//! call for up to [`BATCH`] datagrams, no allocation per packet), and the kernel receive
//! timestamps of `SO_TIMESTAMPNS` (`CLOCK_REALTIME`, taken when the packet reached the socket).

use std::io;
use std::os::fd::RawFd;

/// Datagrams per system call.
pub const BATCH: usize = 64;
/// The largest UDP payload over IPv4.
pub const MAX_DATAGRAM: usize = 65_507;

/// Datagrams waiting to be sent on a connected socket.
pub struct SendBatch {
    bufs: Vec<Vec<u8>>,
    lens: Vec<usize>,
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
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
        SendBatch { bufs: vec![vec![0u8; max_len]; BATCH], lens: Vec::with_capacity(BATCH), iov: vec![zero_iov; BATCH], hdrs: vec![zero_hdr; BATCH] }
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
}

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
        RecvBatch {
            bufs: vec![vec![0u8; MAX_DATAGRAM + 1]; BATCH],
            iov: vec![zero_iov; BATCH],
            hdrs: vec![zero_hdr; BATCH],
            addrs: vec![zero_addr; BATCH],
            cmsg: vec![[0u64; 8]; BATCH],
        }
    }

    /// Waits (up to the socket's receive timeout) for at least one datagram and takes what is
    /// queued, up to [`BATCH`]; Ok(0) on timeout.
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        for i in 0..BATCH {
            self.iov[i] = libc::iovec { iov_base: self.bufs[i].as_mut_ptr().cast(), iov_len: self.bufs[i].len() };
            // SAFETY: zeroed header, then the fields recvmmsg fills.
            self.hdrs[i] = unsafe { std::mem::zeroed() };
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_iov = &mut self.iov[i];
            h.msg_iovlen = 1;
            h.msg_name = (&mut self.addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_control = self.cmsg[i].as_mut_ptr().cast();
            h.msg_controllen = std::mem::size_of::<[u64; 8]>() as _;
        }
        // SAFETY: every header points into buffers owned by self for the call's duration.
        let r = unsafe { libc::recvmmsg(fd, self.hdrs.as_mut_ptr(), BATCH as libc::c_uint, libc::MSG_WAITFORONE, std::ptr::null_mut()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ECONNREFUSED) => Ok(0),
                _ => Err(e),
            };
        }
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
}
