//! The scenario's flows as real sockets in the endpoints' namespaces: TCP through the kernel's
//! own stack (congestion control per socket with `TCP_CONGESTION`: the scenario's `newreno` is
//! Linux `reno`, `cubic` and `bbr` are theirs), UDP datagrams on the core's traffic
//! [`Schedule`] (CBR, on/off, video: the same departures the simulator draws, from the same
//! random stream `flow/<name>/app`).
//!
//! A socket belongs to the network namespace of the thread that created it, for its whole
//! life: [`in_namespace`] creates sockets on a short-lived thread that has joined the
//! namespace with `setns(2)` (per thread for network namespaces), and any thread can use them
//! afterwards. Receivers are bound before the emulation starts; senders wait for their flow's
//! start time. A TCP sender writes until its stop time (or its byte count), then closes; the
//! receiver reads until the end of the stream.
//!
//! Mapped from the scenario: `variant`, `send_buffer`/`receive_buffer` (`SO_SNDBUF`/`SO_RCVBUF`;
//! Linux doubles the value for its bookkeeping and turns autotuning off), `initial_cwnd` (a
//! route attribute, see `netns`), `sack` (the namespace's `net.ipv4.tcp_sack`, set by the
//! caller). Left out: the simulator's `delayed_ack`, `nagle` (Linux defaults: delayed ACKs on,
//! Nagle on), RTO bounds, window scaling choices, paced reads and the file loop (a TCP flow is
//! a bulk writer here), TCP timestamps (Linux sends them; the model has none).
//!
//! This minimal sender and receiver stand in for the measure world's generator
//! (`lasthop-gen`), which will replace them once it can run in a namespace.

use crate::EmuError;
use lasthop_core::traffic::{fragments, Schedule};
use socket2::{Domain, Protocol as SockProto, SockAddr, Socket, Type};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration as StdDuration, Instant};

/// Runs `f` on a thread that has joined network namespace `ns` (a name under /run/netns).
pub fn in_namespace<T: Send + 'static>(ns: &str, f: impl FnOnce() -> std::io::Result<T> + Send + 'static) -> Result<T, EmuError> {
    let path = format!("{}/{ns}", crate::netns::NETNS_DIR);
    let file = std::fs::File::open(&path).map_err(|e| EmuError::Io { what: format!("opening {path}"), source: e })?;
    let what = format!("in namespace {ns}");
    std::thread::spawn(move || {
        // SAFETY: setns with a namespace file descriptor changes only this thread's network namespace.
        if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        f()
    })
    .join()
    .expect("a namespace thread does not panic")
    .map_err(|e| EmuError::Io { what, source: e })
}

/// One flow's sockets and parameters.
pub struct FlowSockets {
    pub name: String,
    pub sender: Socket,
    pub receiver: Socket,
    pub dst: SocketAddrV4,
    pub kind: FlowKind,
    /// When the flow starts and stops sending, from the emulation's start.
    pub start: StdDuration,
    pub stop: StdDuration,
}

pub enum FlowKind {
    /// A bulk TCP writer: `bytes` in all, or until stopped.
    Tcp { bytes: Option<u64> },
    /// Datagrams at the schedule's departures.
    Udp { schedule: Box<Schedule> },
}

/// Socket options of a TCP flow.
pub struct TcpOptions {
    /// Linux congestion control module name: "reno", "cubic" or "bbr".
    pub congestion: &'static str,
    pub send_buffer: u64,
    pub receive_buffer: u64,
}

/// The listening or bound receiver in `dst_ns` and the unconnected sender in `src_ns`.
pub fn open_flow(src_ns: &str, dst_ns: &str, src: SocketAddrV4, dst: SocketAddrV4, tcp: Option<&TcpOptions>) -> Result<(Socket, Socket), EmuError> {
    let (ty, proto) = if tcp.is_some() { (Type::STREAM, SockProto::TCP) } else { (Type::DGRAM, SockProto::UDP) };
    let rcvbuf = tcp.map(|t| t.receive_buffer);
    let receiver = in_namespace(dst_ns, move || {
        let s = Socket::new(Domain::IPV4, ty, Some(proto))?;
        s.set_reuse_address(true)?;
        if let Some(b) = rcvbuf {
            s.set_recv_buffer_size(b as usize)?;
        }
        s.bind(&SockAddr::from(dst))?;
        if ty == Type::STREAM {
            s.listen(1)?;
        }
        Ok(s)
    })?;
    let opts = tcp.map(|t| (t.congestion, t.send_buffer));
    let sender = in_namespace(src_ns, move || {
        let s = Socket::new(Domain::IPV4, ty, Some(proto))?;
        s.set_reuse_address(true)?;
        if let Some((cc, sndbuf)) = opts {
            s.set_tcp_congestion(cc.as_bytes())?;
            s.set_send_buffer_size(sndbuf as usize)?;
        }
        s.bind(&SockAddr::from(src))?;
        Ok(s)
    })?;
    Ok((sender, receiver))
}

/// What a flow's application threads report when they end.
#[derive(Debug, Default, Clone)]
pub struct AppReport {
    pub name: String,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub error: Option<String>,
}

/// Starts the sender and receiver threads of a flow; `stop` ends them early.
pub fn spawn(f: FlowSockets, t0: Instant, stop: Arc<AtomicBool>) -> JoinHandle<AppReport> {
    std::thread::spawn(move || {
        let mut report = AppReport { name: f.name.clone(), ..AppReport::default() };
        let stopping = stop.clone();
        let (receiver, is_tcp) = (f.receiver, matches!(f.kind, FlowKind::Tcp { .. }));
        let rx = std::thread::spawn(move || receive(receiver, is_tcp, &stopping));
        let sent = send(f.sender, f.dst, f.kind, t0 + f.start, t0 + f.stop, &stop);
        match sent {
            Ok(n) => report.bytes_sent = n,
            Err(e) => report.error = Some(format!("sender: {e}")),
        }
        match rx.join().expect("the receiver does not panic") {
            Ok(n) => report.bytes_received = n,
            Err(e) if report.error.is_none() => report.error = Some(format!("receiver: {e}")),
            Err(_) => {}
        }
        report
    })
}

fn sleep_until(t: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(StdDuration::from_millis(50)));
    }
}

fn send(s: Socket, dst: SocketAddrV4, kind: FlowKind, start: Instant, stop_at: Instant, stop: &AtomicBool) -> std::io::Result<u64> {
    if !sleep_until(start, stop) {
        return Ok(0);
    }
    let mut sent = 0u64;
    match kind {
        FlowKind::Tcp { bytes } => {
            s.set_write_timeout(Some(StdDuration::from_millis(50)))?;
            s.connect_timeout(&SockAddr::from(dst), stop_at.saturating_duration_since(Instant::now()).max(StdDuration::from_millis(1)))?;
            let mut stream: std::net::TcpStream = s.into();
            let chunk = vec![0u8; 64 * 1024];
            while !stop.load(Ordering::Relaxed) && Instant::now() < stop_at {
                let want = bytes.map_or(chunk.len() as u64, |b| (b - sent).min(chunk.len() as u64)) as usize;
                if want == 0 {
                    break;
                }
                match stream.write(&chunk[..want]) {
                    Ok(n) => sent += n as u64,
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                    Err(e) => return Err(e),
                }
            }
            let _ = stream.shutdown(std::net::Shutdown::Write);
        }
        FlowKind::Udp { mut schedule } => {
            let max = schedule.max_packet();
            let payload = vec![0u8; max as usize];
            let to = SockAddr::from(dst);
            loop {
                let d = schedule.pop();
                let at = start + StdDuration::from_nanos(d.at.0);
                if at >= stop_at || !sleep_until(at, stop) {
                    break;
                }
                // A message longer than a packet (a video frame) leaves as back-to-back
                // datagrams, as in the simulator, never as IP fragments.
                for n in fragments(d.bytes, max) {
                    if s.send_to(&payload[..n as usize], &to).is_ok() {
                        sent += n as u64;
                    }
                }
            }
        }
    }
    Ok(sent)
}

fn receive(s: Socket, is_tcp: bool, stop: &AtomicBool) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut got = 0u64;
    s.set_read_timeout(Some(StdDuration::from_millis(50)))?;
    let mut conn = if is_tcp {
        s.set_nonblocking(true)?;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(0);
            }
            match s.accept() {
                Ok((c, _)) => {
                    c.set_nonblocking(false)?;
                    c.set_read_timeout(Some(StdDuration::from_millis(50)))?;
                    break std::net::TcpStream::from(c);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(StdDuration::from_millis(5)),
                Err(e) => return Err(e),
            }
        }
    } else {
        let udp: std::net::UdpSocket = s.into();
        while !stop.load(Ordering::Relaxed) {
            if let Ok(n) = udp.recv(&mut buf) {
                got += n as u64;
            }
        }
        return Ok(got);
    };
    while !stop.load(Ordering::Relaxed) {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got += n as u64,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// The address of node `id` on port `port`.
pub fn address(id: u32, port: u16) -> SocketAddrV4 {
    let a = lasthop_core::wire::node_address(id);
    SocketAddrV4::new(Ipv4Addr::new(a[0], a[1], a[2], a[3]), port)
}
