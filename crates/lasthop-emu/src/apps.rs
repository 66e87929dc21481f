//! The scenario's TCP flows as real sockets in the endpoints' namespaces, through the kernel's
//! own stack (congestion control per socket with `TCP_CONGESTION`: the scenario's `newreno` is
//! Linux `reno`, `cubic` and `bbr` are theirs). UDP flows are sessions of the measure world's
//! generator (`crate::generator`); both start their threads in a namespace with the helpers
//! here.
//!
//! A socket belongs to the network namespace of the thread that created it, for its whole
//! life: [`in_namespace`] creates sockets on a short-lived thread that has joined the
//! namespace with `setns(2)` (per thread for network namespaces), and any thread can use them
//! afterwards. Receivers are bound before the emulation starts; senders wait for their flow's
//! start time. A TCP sender writes until its stop time (or its byte count), then closes; the
//! receiver reads until the end of the stream.
//!
//! Mapped from the scenario: `variant`, `send_buffer` (`SO_SNDBUF`; Linux doubles the value for
//! its bookkeeping and turns autotuning off), `receive_buffer` (the payload the receiver may
//! hold, as the simulator counts it: the emulator clamps the receiver's advertised window to it,
//! `observe::Observer::receiver_window`, and `SO_RCVBUF` is twice it so that the kernel's own
//! window, which pays for each packet's memory, never binds first), `initial_cwnd` and `rto_min`
//! (route attributes, see `netns`), `sack` (the namespace's `net.ipv4.tcp_sack`), and the
//! namespace settings `netns::TCP_AS_MODELLED` (no timestamps, no slow start after idle).
//! Left out: the simulator's `delayed_ack`, `nagle` (Linux defaults: delayed ACKs on, Nagle
//! on), `rto_max`, window scaling choices, paced reads and the file loop (a TCP flow is a bulk
//! writer here).
//!
//! Each TCP flow's sockets are read with `TCP_INFO` every `observe::TCP_INFO_PERIOD` by a third
//! thread of the flow (a socket can be read from any thread): the whole series for a traced flow
//! (`probes.tcp`), the last reading of each end for every flow (the run's kernel counters).


use crate::observe::{TcpInfoSample, TCP_INFO_PERIOD};
use crate::EmuError;
use lasthop_core::Time;
use socket2::{Domain, Protocol as SockProto, SockAddr, Socket, Type};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
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

/// Starts `f` on a thread that has joined network namespace `ns` for its whole life: every
/// socket it creates, and every thread it starts, belongs to that namespace (threads inherit
/// their creator's namespaces).
pub fn spawn_in_namespace<T: Send + 'static>(
    ns: &str,
    name: String,
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<JoinHandle<Result<T, String>>, EmuError> {
    let path = format!("{}/{ns}", crate::netns::NETNS_DIR);
    let file = std::fs::File::open(&path).map_err(|e| EmuError::Io { what: format!("opening {path}"), source: e })?;
    let ns = ns.to_string();
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            // SAFETY: setns with a namespace file descriptor changes only this thread's network namespace.
            if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(format!("joining namespace {ns}: {}", std::io::Error::last_os_error()));
            }
            f()
        })
        .map_err(|e| EmuError::Io { what: "starting a thread".into(), source: e })
}

/// One TCP flow's sockets and parameters.
pub struct FlowSockets {
    pub name: String,
    pub sender: Socket,
    pub receiver: Socket,
    pub dst: SocketAddrV4,
    /// A bulk writer: `bytes` in all, or until stopped.
    pub bytes: Option<u64>,
    /// When the flow starts and stops sending, from the emulation's start.
    pub start: StdDuration,
    pub stop: StdDuration,
    /// When the run ends (sampling stops), from the emulation's start.
    pub end: StdDuration,
    /// Keep every TCP_INFO sample (the flow is in `probes.tcp`), not only the last.
    pub trace: bool,
}

/// Socket options of a TCP flow.
pub struct TcpOptions {
    /// Linux congestion control module name: "reno", "cubic" or "bbr".
    pub congestion: &'static str,
    pub send_buffer: u64,
    pub receive_buffer: u64,
}

/// The listening receiver in `dst_ns` and the unconnected sender in `src_ns`.
pub fn open_flow(src_ns: &str, dst_ns: &str, src: SocketAddrV4, dst: SocketAddrV4, tcp: &TcpOptions) -> Result<(Socket, Socket), EmuError> {
    let rcvbuf = tcp.receive_buffer;
    let receiver = in_namespace(dst_ns, move || {
        let s = Socket::new(Domain::IPV4, Type::STREAM, Some(SockProto::TCP))?;
        s.set_reuse_address(true)?;
        // The scenario's receive buffer is payload, as the simulator's receiver counts it: the
        // emulator clamps the advertised window to it (`Observer::receiver_window`), and the
        // kernel's buffer, which also pays for each packet's overhead (a TUN packet's skb uses
        // about 1.6× its bytes), is 4× that (SO_RCVBUF doubled by the kernel), so that a full
        // out-of-order queue in a loss recovery does not shrink the window below it.
        s.set_recv_buffer_size((2 * rcvbuf).min(i32::MAX as u64) as usize)?;
        s.bind(&SockAddr::from(dst))?;
        s.listen(1)?;
        Ok(s)
    })?;
    let (cc, sndbuf) = (tcp.congestion, tcp.send_buffer);
    let sender = in_namespace(src_ns, move || {
        let s = Socket::new(Domain::IPV4, Type::STREAM, Some(SockProto::TCP))?;
        s.set_reuse_address(true)?;
        s.set_tcp_congestion(cc.as_bytes())?;
        s.set_send_buffer_size(sndbuf as usize)?;
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
    /// TCP_INFO samples of the sender's and the receiver's socket (only the last one of each
    /// unless the flow is traced).
    pub sender_info: Vec<TcpInfoSample>,
    pub receiver_info: Vec<TcpInfoSample>,
}

/// Starts the sender and receiver threads of a flow; `stop` ends them early.
pub fn spawn(f: FlowSockets, t0: Instant, stop: Arc<AtomicBool>) -> JoinHandle<AppReport> {
    std::thread::spawn(move || {
        let mut report = AppReport { name: f.name.clone(), ..AppReport::default() };
        let stopping = stop.clone();
        let receiver = f.receiver;
        let accepted: Arc<OnceLock<Socket>> = Arc::new(OnceLock::new());
        let accepted_rx = accepted.clone();
        let rx = std::thread::spawn(move || receive(receiver, &stopping, &accepted_rx));
        let sampler = match f.sender.try_clone() {
            Ok(sender) => {
                let (stopping, trace, until) = (stop.clone(), f.trace, t0 + f.end);
                Some(std::thread::spawn(move || sample(&sender, &accepted, t0, until, trace, &stopping)))
            }
            Err(e) => {
                report.error = Some(format!("sender: duplicating the socket for TCP_INFO: {e}"));
                None
            }
        };
        let sent = send(f.sender, f.dst, f.bytes, t0 + f.start, t0 + f.stop, &stop);
        match sent {
            Ok(n) => report.bytes_sent = n,
            Err(e) => report.error = Some(format!("sender: {e}")),
        }
        match rx.join().expect("the receiver does not panic") {
            Ok(n) => report.bytes_received = n,
            Err(e) if report.error.is_none() => report.error = Some(format!("receiver: {e}")),
            Err(_) => {}
        }
        if let Some(s) = sampler {
            (report.sender_info, report.receiver_info) = s.join().expect("the sampler does not panic");
        }
        report
    })
}

/// Reads both ends' TCP_INFO every `TCP_INFO_PERIOD` (on absolute deadlines) until `until` or
/// `stop`; keeps every sample if `trace`, else the last of each end.
fn sample(sender: &Socket, receiver: &OnceLock<Socket>, t0: Instant, until: Instant, trace: bool, stop: &AtomicBool) -> (Vec<TcpInfoSample>, Vec<TcpInfoSample>) {
    let (mut snd, mut rcv) = (Vec::new(), Vec::new());
    let keep = |v: &mut Vec<TcpInfoSample>, s: TcpInfoSample| {
        if !trace {
            v.clear();
        }
        v.push(s);
    };
    let mut next = Instant::now();
    while next < until && sleep_until(next, stop) {
        let at = Time(Instant::now().saturating_duration_since(t0).as_nanos() as u64);
        if let Ok(Some(s)) = TcpInfoSample::read(sender.as_raw_fd(), at) {
            keep(&mut snd, s);
        }
        if let Some(r) = receiver.get() {
            if let Ok(Some(s)) = TcpInfoSample::read(r.as_raw_fd(), at) {
                keep(&mut rcv, s);
            }
        }
        next += TCP_INFO_PERIOD;
    }
    (snd, rcv)
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

fn send(s: Socket, dst: SocketAddrV4, bytes: Option<u64>, start: Instant, stop_at: Instant, stop: &AtomicBool) -> std::io::Result<u64> {
    // A flow that starts at or after the end (its start clipped to the run) never sends.
    if start >= stop_at || !sleep_until(start, stop) {
        return Ok(0);
    }
    let mut sent = 0u64;
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
    Ok(sent)
}

/// Accepts the flow's connection (a duplicate of it goes to `accepted`, for TCP_INFO) and reads
/// until the end of the stream.
fn receive(s: Socket, stop: &AtomicBool, accepted: &OnceLock<Socket>) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut got = 0u64;
    s.set_nonblocking(true)?;
    let mut conn = loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(0);
        }
        match s.accept() {
            Ok((c, _)) => {
                let _ = accepted.set(c.try_clone()?);
                c.set_nonblocking(false)?;
                c.set_read_timeout(Some(StdDuration::from_millis(50)))?;
                break std::net::TcpStream::from(c);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(StdDuration::from_millis(5)),
            Err(e) => return Err(e),
        }
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
