//! The receiver daemon (`lasthop gen recv`): serves sessions on its control port
//! ([`crate::control`]), each connection in a thread of its own; per session it opens a UDP
//! socket and a TCP listener on ephemeral ports of the control address (and a listener of its
//! own for each TCP flow that sets its receive buffer: set before `listen()`, so the
//! handshake's window scale and first window come from it), logs every packet that
//! arrives to record files ([`crate::records`]) and returns its counts and records to the sender.
//!
//! - UDP: `recvmmsg` batches on a socket with a large `SO_RCVBUF` ([`RCVBUF`], forced past
//!   `rmem_max` with `SO_RCVBUFFORCE` where allowed); receive time one clock read per batch, or
//!   each datagram's `SO_TIMESTAMPNS` kernel time (realtime clock only). Without kernel
//!   timestamps the socket takes joined datagrams (`UDP_GRO`: a sender's segmented batch
//!   arrives as one buffer) and the loop cuts them apart. In the round-trip meter each
//!   datagram is echoed back at once, its header's kind set to echo.
//! - TCP: one thread per connection reads messages (header, then `len` bytes), logging each
//!   when its last byte is read. The application's `read()`s are the flow's: at once, at a paced
//!   read rate, or a file loop's (paper 000's slow reader: `app_buffer` bytes per `read()`, a
//!   `receive_delay` Sleep after each); messages are taken from what those reads returned.
//! - Garbage (not a header, another session, an unknown flow, a length that is not the
//!   datagram's) is counted as malformed and dropped; duplicates and replays of this session are
//!   logged as they come (the results tell them apart). Memory per flow is a few counters; the
//!   records go to disk.
//! - Sessions ([`Limits`]): several at once (as D-ITG's ITGRecv serves several senders), at
//!   most `sessions`. A connection holds no session slot until its hello carried the token: it
//!   must say hello within `hello`, and at most `pending` connections wait for theirs, the
//!   oldest closed when another arrives, so idle connections cannot lock a sender out. Hello
//!   and setup must be through within `handshake`, and a running session that hears nothing
//!   on its control connection for `idle` is over (the sender sends a clock probe every
//!   [`crate::send::KEEPALIVE`]); TCP keepalive finds a peer that vanished. A session id
//!   already being served is refused (ids are random per run).
//! - Data ports: the receiver's choice (ephemeral), or one the sender names (D-ITG's `-rp`)
//!   from the unprivileged range [`MIN_DATA_PORT`]..=65535 only.
//!   However a session ends (done, the sender killed, a refused message, a limit), its data
//!   threads are stopped and joined and its sockets closed: the session's data owns them and
//!   stops them when dropped.
//! - Records go to `<out>/<session>/` (a directory that must not exist yet) or to a private
//!   temporary directory ([`crate::workdir`]: `lh-<pid>-recv-*`, mode 0700, an unpredictable
//!   name) removed after the session, or by the next start if the receiver was killed.
//! - SIGINT/SIGTERM (a flag set by signal-hook, polled every [`POLL`]): the data threads stop,
//!   the record files are flushed and synced, the session's `counts.json` is written, and a
//!   sender still connected gets `done` with what was logged (`interrupted: true`).
//!
//! Left out: IPv6-only data sockets; a limit on the total memory of many sessions beyond their
//! number.

use crate::clock::{boot_id, Clock};
use crate::control::{write_msg, LineReader, ControlError, FlowCounts, FlowSetup, Meter, Msg, Proto, PROTOCOL_VERSION};
use crate::header::{Header, Kind, HEADER_LEN};
use crate::mmsg::{enable_gro, enable_kernel_timestamps, segments, send_to, RecvBatch};
use crate::ditg::export::{append_records, epoch_shift, LogAddrs};
use crate::ditg::LogWriter;
use crate::records::{Record, RecordKind, RecordWriter};
use socket2::{Domain, SockRef, Socket, TcpKeepalive, Type};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Receive buffer asked for on the UDP socket: 32 MiB, about 0.5 s of 64-byte datagrams at
/// 600 kpkt/s counting the kernel's per-skb overhead.
pub const RCVBUF: usize = 32 << 20;
/// How often blocked calls look at the stop flags.
pub const POLL: Duration = Duration::from_millis(50);
/// The largest TCP message accepted, bytes (a larger length field is garbage).
pub const MAX_MESSAGE: u32 = 16 << 20;

/// Limits that keep one peer from holding the receiver (D-ITG's ITGRecv waits without end on a
/// connection that says nothing).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// From accept to `ready`: hello, the clock probes and setup must arrive within this.
    pub handshake: Duration,
    /// After setup, a session without a control message for this long is over (a sender sends
    /// a clock probe every [`crate::send::KEEPALIVE`] while it runs).
    pub idle: Duration,
    /// Authenticated sessions served at once; a hello beyond them is answered `error` (busy).
    pub sessions: usize,
    /// From accept to hello (at most `handshake`): a connection that has not authenticated by
    /// then is closed. A sender says hello in its first round trip.
    pub hello: Duration,
    /// Connections waiting to say hello; when another arrives the oldest is closed.
    pub pending: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { handshake: Duration::from_secs(30), idle: Duration::from_secs(30), sessions: 16, hello: Duration::from_secs(5), pending: 64 }
    }
}

/// The lowest data port a sender may name: ports below it are privileged (a root receiver
/// would otherwise bind them at a peer's word).
pub const MIN_DATA_PORT: u16 = 1024;

/// Who holds the receiver: connections not yet authenticated (by ticket, oldest first, each
/// with a handle to close it) and authenticated sessions (by id: one slot each).
#[derive(Default)]
struct Admission {
    pending: Mutex<VecDeque<(u64, TcpStream)>>,
    next_ticket: AtomicU64,
    sessions: Mutex<BTreeSet<u32>>,
}

impl Admission {
    /// Registers a new connection as waiting for its hello; when `max` are waiting already the
    /// oldest is shut down (its thread then sees the connection closed and ends). Returns the
    /// ticket and whether one was evicted.
    fn wait_for_hello(&self, conn: &TcpStream, max: usize) -> (u64, bool) {
        let ticket = self.next_ticket.fetch_add(1, Ordering::Relaxed);
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut evicted = false;
        while pending.len() >= max.max(1) {
            if let Some((_, oldest)) = pending.pop_front() {
                let _ = oldest.shutdown(std::net::Shutdown::Both);
                evicted = true;
            }
        }
        if let Ok(handle) = conn.try_clone() {
            pending.push_back((ticket, handle));
        }
        (ticket, evicted)
    }

    fn said_hello(&self, ticket: u64) {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).retain(|(t, _)| *t != ticket);
    }

    /// Takes a session slot for `id`: Err says why not (the id is live, or every slot is held).
    fn take_slot(&self, id: u32, max: usize) -> Result<(), String> {
        let mut live = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if live.contains(&id) {
            return Err(format!(
                "session {id:08x} is already running on this receiver: a sender draws a new random id for every run, so this hello is a replay or a copy"
            ));
        }
        if live.len() >= max {
            return Err(format!("busy: this receiver serves {max} sessions at once; try again when one has ended"));
        }
        live.insert(id);
        Ok(())
    }

    fn release_slot(&self, id: u32) {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
    }
}

/// TCP keepalive of the control connection: a peer that vanished (host down, cable out) is
/// found within time + interval × retries = 25 s even when no limit above would notice.
const KEEPALIVE_TIME: Duration = Duration::from_secs(10);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;
/// A peer that does not read its control connection cannot block an answer longer than this.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// How the receiver runs.
pub struct RecvOptions {
    pub listen: SocketAddr,
    /// Required from senders when set; must be set to listen beyond loopback.
    pub token: Option<String>,
    /// Where each session's records and counts go (`<out>/<session>/`, a directory that must
    /// not exist yet); a private temporary directory (`mkdtemp`), removed after the session,
    /// when None.
    pub out: Option<PathBuf>,
    /// Serve this many sessions, then return (None: until a signal).
    pub sessions: Option<u32>,
    /// Use `SO_TIMESTAMPNS` receive times when the session's clock is realtime.
    pub kernel_timestamps: bool,
    /// Run the UDP receiving thread at real-time priority (`SCHED_FIFO`) where permitted.
    pub realtime: bool,
    pub limits: Limits,
    /// Also write every session's received packets to this D-ITG binary log (ITGRecv's `-l`),
    /// appended as each session ends.
    pub ditg_log: Option<PathBuf>,
}

/// The receiver's D-ITG log, shared by its sessions.
type DitgLog = Mutex<LogWriter<BufWriter<File>>>;

impl RecvOptions {
    /// A receiver on `listen` with the defaults: no token, temporary records, until a signal.
    pub fn new(listen: SocketAddr) -> Self {
        RecvOptions { listen, token: None, out: None, sessions: None, kernel_timestamps: false, realtime: false, limits: Limits::default(), ditg_log: None }
    }
}

/// What a finished receiver did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct RecvSummary {
    pub sessions: u32,
    pub malformed: u64,
    /// Control messages refused, connections that broke a limit and connections refused
    /// because the receiver was busy.
    pub control_errors: u64,
    pub interrupted: bool,
}

impl RecvSummary {
    fn add(&mut self, o: Outcome) {
        self.sessions += o.started as u32;
        self.malformed += o.malformed;
        self.control_errors += o.control_errors;
    }
}

/// What one connection's session did.
#[derive(Debug, Default)]
struct Outcome {
    started: bool,
    malformed: u64,
    control_errors: u64,
}

/// Checks the options before anything listens: beyond loopback a token is required.
pub fn check_listen(o: &RecvOptions) -> Result<(), String> {
    if !o.listen.ip().is_loopback() && !matches!(o.token.as_deref(), Some(t) if !t.is_empty()) {
        return Err(format!(
            "--listen {}: listening beyond loopback needs --token (a shared secret the sender gives with --token)",
            o.listen
        ));
    }
    Ok(())
}

/// The port a bound receiver listens on, for callers that asked for port 0.
pub fn bind(o: &RecvOptions) -> Result<TcpListener, String> {
    check_listen(o)?;
    TcpListener::bind(o.listen).map_err(|e| format!("--listen {}: cannot listen: {e}", o.listen))
}

/// Serves sessions, each connection in a thread of its own (up to `o.limits.pending` waiting
/// for hello and `o.limits.sessions` authenticated at once), until `stop` is set or
/// `o.sessions` sessions are done; then waits for the sessions still running (they end at
/// `stop`, or by the limits). Never panics on input.
pub fn serve(listener: TcpListener, o: &RecvOptions, stop: &AtomicBool) -> Result<RecvSummary, String> {
    // What killed receivers and senders left (best effort: `lasthop emu clean` reports failures).
    let _ = crate::workdir::remove_stale();
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let ditg = match &o.ditg_log {
        Some(p) => Some(Mutex::new(LogWriter::create(p).map_err(|e| format!("--ditg-log: {e}"))?)),
        None => None,
    };
    let admission = Admission::default();
    let mut summary = RecvSummary::default();
    std::thread::scope(|scope| {
        let mut running: Vec<std::thread::ScopedJoinHandle<'_, Outcome>> = Vec::new();
        loop {
            let (done, still): (Vec<_>, Vec<_>) = running.into_iter().partition(|h| h.is_finished());
            running = still;
            for h in done {
                summary.add(h.join().unwrap_or_default());
            }
            if stop.load(Ordering::Relaxed) || matches!(o.sessions, Some(n) if summary.sessions >= n) {
                break;
            }
            let (conn, peer) = match listener.accept() {
                Ok(c) => c,
                Err(_) => {
                    // Nobody waiting, or no descriptor left (EMFILE): look again shortly.
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            let (ticket, evicted) = admission.wait_for_hello(&conn, o.limits.pending);
            summary.control_errors += evicted as u64;
            let (admission, ditg) = (&admission, ditg.as_ref());
            running.push(scope.spawn(move || Session::new(conn, peer, o, admission, ticket, ditg).serve(stop)));
        }
        for h in running {
            summary.add(h.join().unwrap_or_default());
        }
    });
    summary.interrupted = stop.load(Ordering::Relaxed);
    Ok(summary)
}

/// Why a session ended early: a refused control message or a broken limit (counted where
/// refused), or the connection failed.
#[derive(Debug)]
enum SessionEnd {
    Control,
    Io,
}

/// One sender's session.
struct Session<'a> {
    conn: TcpStream,
    peer: SocketAddr,
    o: &'a RecvOptions,
    admission: &'a Admission,
    /// Its place among the connections waiting for hello, until it said hello.
    ticket: Option<u64>,
    /// The id whose session slot it holds, released when it ends.
    id: Option<u32>,
    ditg: Option<&'a DitgLog>,
    malformed: Arc<AtomicU64>,
    control_errors: u64,
    started: bool,
    data: Option<Data>,
}

/// The data side of a session while it runs. Dropping it stops and joins its threads (which
/// own the data sockets) and removes a temporary directory, whichever way the session ended.
struct Data {
    flows: Vec<FlowSetup>,
    clock: Clock,
    /// The UDP and TCP data sockets' addresses.
    sockets: (SocketAddr, SocketAddr),
    received: Arc<Vec<AtomicU64>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Vec<FlowCounts>>>,
    dir: PathBuf,
    temporary: bool,
}

impl Data {
    /// Stops the data threads, waits for them (their record files flushed) and adds up what
    /// they logged. A second call finds no thread and returns zeros.
    fn stop_and_join(&mut self) -> Vec<FlowCounts> {
        self.stop.store(true, Ordering::Relaxed);
        let mut counts = vec![FlowCounts::default(); self.flows.len()];
        for t in self.threads.drain(..) {
            for (c, part) in counts.iter_mut().zip(t.join().unwrap_or_default()) {
                c.received += part.received;
                c.bytes += part.bytes;
                c.so_rcvbuf = c.so_rcvbuf.max(part.so_rcvbuf);
                c.delack_max_us = c.delack_max_us.max(part.delack_max_us);
            }
        }
        counts
    }
}

impl Drop for Data {
    fn drop(&mut self) {
        self.stop_and_join();
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        drop(self.data.take());
        if let Some(ticket) = self.ticket.take() {
            self.admission.said_hello(ticket);
        }
        if let Some(id) = self.id.take() {
            self.admission.release_slot(id);
        }
    }
}

impl<'a> Session<'a> {
    fn new(conn: TcpStream, peer: SocketAddr, o: &'a RecvOptions, admission: &'a Admission, ticket: u64, ditg: Option<&'a DitgLog>) -> Self {
        Session { conn, peer, o, admission, ticket: Some(ticket), id: None, ditg, malformed: Arc::new(AtomicU64::new(0)), control_errors: 0, started: false, data: None }
    }

    /// Runs the session to its end, whatever it is: a session cut short after setup (the
    /// sender gone, a refused message, a limit) has its data threads stopped and joined and
    /// its counts written, as a finished one.
    fn serve(mut self, stop: &AtomicBool) -> Outcome {
        let _ended_early = self.run(stop).is_err();
        if let Some(mut d) = self.data.take() {
            let counts = d.stop_and_join();
            self.write_counts(&d, &counts, stop.load(Ordering::Relaxed), true);
            self.export(&d);
        }
        Outcome { started: self.started, malformed: self.malformed.load(Ordering::Relaxed), control_errors: self.control_errors }
    }

    fn reply(&mut self, m: &Msg) -> Result<(), SessionEnd> {
        write_msg(&mut self.conn, m).map_err(|_| SessionEnd::Io)
    }

    fn refuse<T>(&mut self, why: String) -> Result<T, SessionEnd> {
        self.control_errors += 1;
        let _ = write_msg(&mut self.conn, &Msg::Error { message: why });
        Err(SessionEnd::Control)
    }

    /// Reads the next control message, polling `stop`; Ok(None) when stopped. Past
    /// `deadline` the session is refused with `late`.
    fn next(&mut self, r: &mut LineReader<BufReader<TcpStream>>, stop: &AtomicBool, deadline: Instant, late: &str) -> Result<Option<Msg>, SessionEnd> {
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            match r.read_msg() {
                Ok(m) => return Ok(Some(m)),
                Err(ControlError::Io(e)) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    if Instant::now() >= deadline {
                        return self.refuse(late.to_string());
                    }
                }
                Err(ControlError::Io(_)) | Err(ControlError::Closed) => return Err(SessionEnd::Io),
                Err(e) => return self.refuse(e.to_string()),
            }
        }
    }

    fn run(&mut self, stop: &AtomicBool) -> Result<(), SessionEnd> {
        let _ = self.conn.set_nonblocking(false);
        let _ = self.conn.set_read_timeout(Some(POLL));
        let _ = self.conn.set_write_timeout(Some(WRITE_TIMEOUT));
        let _ = self.conn.set_nodelay(true);
        let ka = TcpKeepalive::new().with_time(KEEPALIVE_TIME).with_interval(KEEPALIVE_INTERVAL).with_retries(KEEPALIVE_RETRIES);
        let _ = SockRef::from(&self.conn).set_tcp_keepalive(&ka);
        let mut r = LineReader::new(BufReader::new(self.conn.try_clone().map_err(|_| SessionEnd::Io)?));
        let limits = self.o.limits;
        let accepted = Instant::now();
        let hello_limit = limits.hello.min(limits.handshake);
        // 1. hello: version and token first, nothing else is read before them, and no session
        // slot is held until they are right.
        let late = format!("no hello within {hello_limit:?} of connecting (the hello limit): the connection is closed");
        let hello = self.next(&mut r, stop, accepted + hello_limit, &late);
        if let Some(ticket) = self.ticket.take() {
            self.admission.said_hello(ticket);
        }
        let (session, port) = match hello? {
            Some(Msg::Hello { version, session, token, data_port }) => {
                if version != PROTOCOL_VERSION {
                    return self.refuse(format!("protocol version {version}; this receiver speaks version {PROTOCOL_VERSION}"));
                }
                if self.o.token.is_some() && token != self.o.token {
                    return self.refuse("wrong or missing token (give the receiver's --token to the sender)".into());
                }
                let port = data_port.unwrap_or(0);
                if port != 0 && port < MIN_DATA_PORT {
                    return self.refuse(format!(
                        "data port {port}: valid: {MIN_DATA_PORT} to 65535 (ports below {MIN_DATA_PORT} are privileged), or none for the receiver's choice"
                    ));
                }
                if let Err(why) = self.admission.take_slot(session, limits.sessions) {
                    return self.refuse(why);
                }
                self.id = Some(session);
                (session, port)
            }
            Some(other) => return self.refuse(format!("expected hello, got {}", kind(&other))),
            None => return Ok(()),
        };
        let mut deadline = accepted + limits.handshake;
        let ip = self.conn.local_addr().map(|a| a.ip()).unwrap_or(self.o.listen.ip());
        let (udp, tcp) = match (udp_socket(ip, port), TcpListener::bind((ip, port))) {
            (Ok(u), Ok(t)) => (u, t),
            (Err(e), _) | (_, Err(e)) => return self.refuse(format!("data port {port}: {e}")),
        };
        let ports = (udp.local_addr().map_or(0, |a| a.port()), tcp.local_addr().map_or(0, |a| a.port()));
        self.reply(&Msg::Welcome { version: PROTOCOL_VERSION, boot_id: boot_id(), udp_port: ports.0, tcp_port: ports.1 })?;
        let mut sockets = Some((udp, tcp));
        let mut clock = Clock::Monotonic;
        let mut loss_timeout = Duration::from_secs(1);
        let mut late = format!("no setup within {:?} of connecting (the handshake limit): the session is closed", limits.handshake);
        loop {
            let Some(m) = self.next(&mut r, stop, deadline, &late)? else {
                // Signalled: what was logged is kept and handed over.
                return self.finish(None, loss_timeout, true);
            };
            if self.data.is_some() {
                deadline = Instant::now() + limits.idle;
            }
            match m {
                Msg::ClockProbe { t1 } => {
                    let t2 = clock_now_for_probe(clock);
                    self.reply(&Msg::ClockReply { t1, t2, t3: clock_now_for_probe(clock) })?;
                }
                Msg::Setup { clock: c, meter, flows, loss_timeout_ns } if self.data.is_none() => {
                    if flows.iter().enumerate().any(|(i, f)| f.id as usize != i) || flows.len() > 65_536 {
                        return self.refuse("setup: flow ids must be 0, 1, 2... in order (at most 65536 flows)".into());
                    }
                    clock = c;
                    loss_timeout = Duration::from_nanos(loss_timeout_ns.min(60_000_000_000));
                    if let Err(why) = check_delayed_acks(&flows) {
                        return self.refuse(why);
                    }
                    let (udp, tcp) = sockets.take().expect("sockets are taken once, at setup");
                    let own = match own_listeners(ip, &flows) {
                        Ok(own) => own,
                        Err(why) => return self.refuse(why),
                    };
                    let tcp_ports = own.iter().map(|(id, l)| (*id, l.local_addr().map_or(0, |a| a.port()))).collect();
                    let d = match self.start_data(session, udp, TcpListeners { shared: tcp, own }, flows, c, meter) {
                        Ok(d) => d,
                        Err(why) => return self.refuse(why),
                    };
                    self.data = Some(d);
                    self.started = true;
                    deadline = Instant::now() + limits.idle;
                    late = format!("no control message for {:?} (the idle limit; a running sender sends one every {:?}): the session is over", limits.idle, crate::send::KEEPALIVE);
                    self.reply(&Msg::Ready { tcp_ports })?;
                }
                Msg::Stop { sent } if self.data.is_some() => return self.finish(Some(sent), loss_timeout, false),
                other => return self.refuse(format!("unexpected {} at this point of the session", kind(&other))),
            }
        }
    }

    /// The session's record directory: `<out>/<session>` (created here; one that exists is
    /// refused rather than mixed), or a private temporary one.
    fn records_dir(&self, session: u32) -> Result<(PathBuf, bool), String> {
        match &self.o.out {
            Some(out) => {
                let dir = out.join(format!("{session:08x}"));
                std::fs::create_dir_all(out).and_then(|_| std::fs::create_dir(&dir)).map_err(|e| {
                    format!("the receiver cannot keep this session's records in {}: {e} (each session needs a directory of its own)", dir.display())
                })?;
                Ok((dir, false))
            }
            None => crate::workdir::private_dir("recv").map(|d| (d, true)).map_err(|e| format!("the receiver cannot create a temporary directory for the records: {e}")),
        }
    }

    fn start_data(&self, session: u32, udp: UdpSocket, tcp: TcpListeners, flows: Vec<FlowSetup>, clock: Clock, meter: Meter) -> Result<Data, String> {
        let TcpListeners { shared: tcp, own } = tcp;
        let (dir, temporary) = self.records_dir(session)?;
        let received: Arc<Vec<AtomicU64>> = Arc::new(flows.iter().map(|_| AtomicU64::new(0)).collect());
        let stop = Arc::new(AtomicBool::new(false));
        // From here on the directory is the Data's: dropped on any error below, it is removed.
        let sockets = (udp.local_addr().map_err(|e| e.to_string())?, tcp.local_addr().map_err(|e| e.to_string())?);
        let mut data = Data { flows: flows.clone(), clock, sockets, received: received.clone(), stop: stop.clone(), threads: Vec::new(), dir: dir.clone(), temporary };
        let ctx = DataCtx { session, flows, clock, received, stop, malformed: self.malformed.clone() };
        let kernel_ts = self.o.kernel_timestamps && clock == Clock::Realtime;
        if kernel_ts {
            enable_kernel_timestamps(udp.as_raw_fd()).map_err(|e| format!("SO_TIMESTAMPNS: {e}"))?;
        } else {
            // Joined datagrams share one receive time, as one recvmmsg batch does anyway; with
            // kernel timestamps each keeps its own.
            enable_gro(udp.as_raw_fd());
        }
        let path = dir.join("recv-udp.lhr");
        let w = RecordWriter::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let c = ctx.clone();
        let realtime = self.o.realtime;
        data.threads.push(std::thread::spawn(move || {
            // Real time: SCHED_FIFO, and idle CPUs kept polling while the session receives
            // (a halted virtual CPU wakes the thread late; `CpuLatencyRequest`).
            if realtime {
                crate::pacer::realtime_priority();
            }
            let _awake = realtime.then(crate::pacer::CpuLatencyRequest::zero).and_then(Result::ok);
            udp_loop(udp, w, c, meter == Meter::Rtt, kernel_ts)
        }));
        for (id, l) in own {
            let (d, c) = (dir.clone(), ctx.clone());
            data.threads.push(std::thread::spawn(move || tcp_accept_loop(l, d, format!("recv-tcp-flow{id:05}"), c)));
        }
        data.threads.push(std::thread::spawn(move || tcp_accept_loop(tcp, dir, "recv-tcp".into(), ctx)));
        Ok(data)
    }

    /// Writes the session's `counts.json` beside its records (kept only with `--out`).
    fn write_counts(&self, d: &Data, counts: &[FlowCounts], interrupted: bool, aborted: bool) {
        if d.temporary {
            return;
        }
        let counts_json = serde_json::json!({
            "flows": d.flows.iter().zip(counts).map(|(f, c)| serde_json::json!({"name": f.name, "received": c.received, "bytes": c.bytes})).collect::<Vec<_>>(),
            "malformed": self.malformed.load(Ordering::Relaxed),
            "control_errors": self.control_errors,
            "interrupted": interrupted,
            "aborted": aborted,
            "peer": self.peer.to_string(),
        });
        let _ = std::fs::write(d.dir.join("counts.json"), serde_json::to_string_pretty(&counts_json).unwrap_or_default() + "\n");
    }

    /// Appends the session's received packets to the receiver's D-ITG log, if it keeps one
    /// (after the sender has its answer: a long session takes a while). A failure to write is
    /// reported on stderr; the session and its answer are not affected.
    fn export(&self, d: &Data) {
        let Some(log) = self.ditg else { return };
        let addrs = LogAddrs { src: self.peer, udp_dst: d.sockets.0, tcp_dst: d.sockets.1 };
        let protos: Vec<Proto> = d.flows.iter().map(|f| f.proto).collect();
        let shift = epoch_shift(d.clock);
        let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
        let written = record_files(&d.dir).iter().try_for_each(|f| append_records(&mut log, f, RecordKind::Received, false, &protos, &addrs, shift).map(drop));
        if let Err(e) = written.and_then(|_| log.flush()) {
            eprintln!("--ditg-log: {e}");
        }
    }

    /// Waits for the sender's counts or the loss timeout, stops the data threads, flushes the
    /// records and answers `done` followed by the records.
    fn finish(&mut self, sent: Option<Vec<u64>>, loss_timeout: Duration, interrupted: bool) -> Result<(), SessionEnd> {
        let Some(mut d) = self.data.take() else { return Ok(()) };
        if let Some(sent) = &sent {
            let t0 = Instant::now();
            let all_in = || sent.iter().zip(d.received.iter()).all(|(s, r)| r.load(Ordering::Relaxed) >= *s);
            while t0.elapsed() < loss_timeout && !all_in() {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let counts = d.stop_and_join();
        let files = record_files(&d.dir);
        let bytes: u64 = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
        let malformed = self.malformed.load(Ordering::Relaxed);
        self.write_counts(&d, &counts, interrupted, false);
        let done = Msg::Done { counts, malformed, control_errors: self.control_errors, records_bytes: bytes, interrupted };
        let sent_ok = write_msg(&mut self.conn, &done).is_ok() && send_files(&mut self.conn, &files).is_ok();
        self.export(&d);
        drop(d); // a temporary directory goes
        if sent_ok {
            Ok(())
        } else {
            Err(SessionEnd::Io)
        }
    }
}

fn clock_now_for_probe(c: Clock) -> u64 {
    c.now_ns()
}

fn kind(m: &Msg) -> String {
    serde_json::to_value(m).ok().and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string)).unwrap_or_default()
}

/// The session's record files, UDP first then TCP connections in the order they were accepted.
fn record_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "lhr")).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn send_files(w: &mut TcpStream, files: &[PathBuf]) -> io::Result<()> {
    let _ = w.set_write_timeout(Some(Duration::from_secs(30)));
    for f in files {
        io::copy(&mut std::fs::File::open(f)?, w)?;
    }
    w.flush()
}

fn udp_socket(ip: IpAddr, port: u16) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(SocketAddr::new(ip, 0)), Type::DGRAM, None)?;
    // SO_RCVBUFFORCE passes rmem_max for a privileged process; otherwise the capped request.
    if s.set_recv_buffer_size(RCVBUF).is_ok() {
        let v = RCVBUF as libc::c_int;
        // SAFETY: an int option on a valid socket.
        unsafe { libc::setsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, (&v as *const libc::c_int).cast(), 4) };
    }
    s.bind(&SocketAddr::new(ip, port).into())?;
    s.set_read_timeout(Some(POLL))?;
    Ok(s.into())
}

/// What every data thread of a session shares.
#[derive(Clone)]
struct DataCtx {
    session: u32,
    flows: Vec<FlowSetup>,
    clock: Clock,
    received: Arc<Vec<AtomicU64>>,
    stop: Arc<AtomicBool>,
    malformed: Arc<AtomicU64>,
}

impl DataCtx {
    /// The flow a header belongs to, if it is this session's data of a flow over `proto`.
    fn flow_of(&self, h: &Header, proto: Proto) -> Option<usize> {
        let i = h.flow as usize;
        (h.session == self.session && h.kind == Kind::Data && self.flows.get(i).is_some_and(|f| f.proto == proto)).then_some(i)
    }
    fn bad(&self) {
        self.malformed.fetch_add(1, Ordering::Relaxed);
    }
}

fn udp_loop(udp: UdpSocket, mut w: RecordWriter, ctx: DataCtx, echo: bool, kernel_ts: bool) -> Vec<FlowCounts> {
    let mut counts = vec![FlowCounts::default(); ctx.flows.len()];
    let mut batch = RecvBatch::new();
    let mut echo_buf = vec![0u8; crate::mmsg::MAX_DATAGRAM];
    let fd = udp.as_raw_fd();
    while !ctx.stop.load(Ordering::Relaxed) {
        let n = match batch.recv(fd) {
            Ok(n) => n,
            Err(_) => break,
        };
        let now = ctx.clock.now_ns();
        for i in 0..n {
            let (buf, truncated) = batch.datagram(i);
            let rx = if kernel_ts { batch.kernel_ts(i).unwrap_or(now) } else { now };
            // Datagrams the kernel joined (UDP_GRO) are cut apart here; each is checked alone.
            for d in segments(buf, batch.gro_size(i)) {
                let h = match Header::read(d) {
                    Ok(h) if !truncated && h.len as usize == d.len() => h,
                    _ => {
                        ctx.bad();
                        continue;
                    }
                };
                let Some(f) = ctx.flow_of(&h, Proto::Udp) else {
                    ctx.bad();
                    continue;
                };
                counts[f].received += 1;
                counts[f].bytes += d.len() as u64;
                ctx.received[f].fetch_add(1, Ordering::Relaxed);
                if w.push(&Record { flow: h.flow, seq: h.seq, bytes: h.len, kind: RecordKind::Received, tx_ns: h.tx_ns, rx_ns: rx }).is_err() {
                    ctx.stop.store(true, Ordering::Relaxed);
                }
                if echo {
                    let e = &mut echo_buf[..d.len()];
                    e.copy_from_slice(d);
                    Header { kind: Kind::Echo, echo_ns: rx, ..h }.write(e);
                    let (a, l) = batch.addr(i);
                    let _ = send_to(fd, e, a, l);
                }
            }
        }
    }
    let _ = w.flush();
    counts
}

/// The most TCP flows of one session with a listener of their own (a bound on the sockets and
/// threads a sender can make the receiver open).
pub const MAX_OWN_LISTENERS: usize = 256;

/// A session's TCP listeners: the one the flows share and those of flows with their own.
struct TcpListeners {
    shared: TcpListener,
    own: Vec<(u32, TcpListener)>,
}

/// A listener of its own for each TCP flow that sets its receive buffer, set before `listen()`
/// (the connection's window scale and first window come from it, and it is the kernel's buffer
/// from the first byte); the other flows share the session's listener and keep the kernel's
/// autotuned buffers.
/// Refuses a setup whose delayed-ACK bound this receiver's kernel would refuse (the sender
/// checked its own kernel; the receiver may run another).
fn check_delayed_acks(flows: &[FlowSetup]) -> Result<(), String> {
    flows.iter().filter(|f| f.proto == Proto::Tcp).try_for_each(|f| {
        f.delack_max_us.map_or(Ok(()), |us| crate::sockopt::check(&f.name, &crate::plan::SocketTcp { delack_max_us: Some(us), ..Default::default() }))
    })
}

fn own_listeners(ip: std::net::IpAddr, flows: &[FlowSetup]) -> Result<Vec<(u32, TcpListener)>, String> {
    let asking = flows.iter().filter(|f| f.proto == Proto::Tcp && f.receive_buffer.is_some()).count();
    if asking > MAX_OWN_LISTENERS {
        return Err(format!("setup: {asking} TCP flows set their receive buffer; a session may have at most {MAX_OWN_LISTENERS} (each is a listener and a thread)"));
    }
    flows
        .iter()
        .filter(|f| f.proto == Proto::Tcp)
        .filter_map(|f| f.receive_buffer.map(|b| (f.id, b)))
        .map(|(id, b)| {
            let s = socket2::Socket::new(socket2::Domain::for_address(SocketAddr::new(ip, 0)), socket2::Type::STREAM, Some(socket2::Protocol::TCP))
                .and_then(|s| s.set_recv_buffer_size(b as usize).map(|_| s))
                .and_then(|s| s.bind(&SocketAddr::new(ip, 0).into()).map(|_| s))
                .and_then(|s| s.listen(4).map(|_| s))
                .map_err(|e| format!("flow {id}: a listener with a {b}-byte receive buffer: {e}"))?;
            Ok((id, s.into()))
        })
        .collect()
}

/// Serves the connections of `listener`, each logging to `dir/<name>-<n>.lhr`.
fn tcp_accept_loop(listener: TcpListener, dir: PathBuf, name: String, ctx: DataCtx) -> Vec<FlowCounts> {
    let _ = listener.set_nonblocking(true);
    let mut conns: Vec<JoinHandle<Vec<FlowCounts>>> = Vec::new();
    let mut counts = vec![FlowCounts::default(); ctx.flows.len()];
    while !ctx.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((s, _)) if conns.len() < 4 * ctx.flows.len().max(1) => {
                let path = dir.join(format!("{name}-{:05}.lhr", conns.len()));
                let c = ctx.clone();
                conns.push(std::thread::spawn(move || match RecordWriter::create(&path) {
                    Ok(w) => tcp_conn(s, w, c),
                    Err(_) => Vec::new(),
                }));
            }
            Ok(_) => ctx.bad(), // more connections than flows can use: dropped
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    for t in conns {
        for (c, part) in counts.iter_mut().zip(t.join().unwrap_or_default()) {
            c.received += part.received;
            c.bytes += part.bytes;
            c.so_rcvbuf = c.so_rcvbuf.max(part.so_rcvbuf);
            c.delack_max_us = c.delack_max_us.max(part.delack_max_us);
        }
    }
    counts
}

/// How the receiving application calls `read()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reads {
    /// Whatever is there, at once.
    AtOnce,
    /// `size`-byte chunks no faster than `rate` bit/s (absolute deadlines, as the pacer).
    Paced { rate: u64, size: u64 },
    /// A file loop's reader (paper 000): at most `size` bytes per `read()`, then a sleep of
    /// `sleep_ns` (its `Sleep()` between calls; the next read waits for it).
    FileLoop { size: u64, sleep_ns: u64 },
}

/// The receiving application's socket: `read()`s as [`Reads`] says, each into an application
/// buffer from which the messages (header, then body) are taken, so a read's size is the
/// application's, not a message part's.
struct PacedRead {
    inner: TcpStream,
    reads: Reads,
    /// Re-arm `TCP_QUICKACK` after every read (`tcp.delayed_ack_enabled = false`).
    quickack: bool,
    next_ns: u64,
    app: Vec<u8>,
    at: usize,
    end: usize,
}

impl PacedRead {
    /// Until the first header names the flow (and so how its application reads), only that
    /// header is read.
    fn new(inner: TcpStream) -> PacedRead {
        PacedRead { inner, reads: Reads::AtOnce, quickack: false, next_ns: 0, app: vec![0; HEADER_LEN], at: 0, end: 0 }
    }

    fn set_reads(&mut self, reads: Reads) {
        self.reads = reads;
        self.app.resize(64 * 1024, 0);
    }
}

impl Read for PacedRead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.end {
            let want = match self.reads {
                Reads::AtOnce => self.app.len(),
                Reads::Paced { size, .. } | Reads::FileLoop { size, .. } => (size.max(1) as usize).min(self.app.len()),
            };
            let mut app = std::mem::take(&mut self.app);
            let n = self.socket_read(&mut app[..want]);
            self.app = app;
            if self.quickack {
                crate::sockopt::quickack(&self.inner);
            }
            self.at = 0;
            self.end = n?;
        }
        let n = out.len().min(self.end - self.at);
        out[..n].copy_from_slice(&self.app[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl PacedRead {
    /// One `read()` of the application on its socket, waiting first for its pace or sleep.
    fn socket_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.reads == Reads::AtOnce {
            return self.inner.read(buf);
        }
        let now = crate::clock::mono_ns();
        if self.next_ns > now {
            crate::clock::sleep_until_mono(self.next_ns.min(now + POLL.as_nanos() as u64));
            if crate::clock::mono_ns() < self.next_ns {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "paced"));
            }
        }
        let n = self.inner.read(buf)?;
        self.next_ns = match self.reads {
            Reads::Paced { rate, .. } => self.next_ns.max(now) + n as u64 * 8 * 1_000_000_000 / rate.max(1),
            Reads::FileLoop { sleep_ns, .. } => crate::clock::mono_ns() + sleep_ns,
            Reads::AtOnce => 0,
        };
        Ok(n)
    }
}

impl Reads {
    fn of(f: &FlowSetup) -> Reads {
        match (f.paced_reads, f.file_reads) {
            (Some((rate, size)), _) => Reads::Paced { rate, size },
            (None, Some((size, sleep_ns))) => Reads::FileLoop { size, sleep_ns },
            (None, None) => Reads::AtOnce,
        }
    }
}

fn tcp_conn(s: TcpStream, mut w: RecordWriter, ctx: DataCtx) -> Vec<FlowCounts> {
    let mut counts = vec![FlowCounts::default(); ctx.flows.len()];
    let _ = s.set_read_timeout(Some(POLL));
    let _ = s.set_nonblocking(false);
    let mut r = PacedRead::new(s);
    let mut head = [0u8; HEADER_LEN];
    let mut scratch = vec![0u8; 64 * 1024];
    let mut flow: Option<usize> = None;
    'messages: while !ctx.stop.load(Ordering::Relaxed) {
        if !fill(&mut r, &mut head, &ctx.stop) {
            break;
        }
        let h = match Header::read(&head) {
            Ok(h) if h.len <= MAX_MESSAGE => h,
            _ => {
                ctx.bad(); // a stream out of step cannot be resynchronized: the connection ends
                break;
            }
        };
        let f = match (ctx.flow_of(&h, Proto::Tcp), flow) {
            (Some(f), None) => {
                // The flow's receiving socket from its first message on: how its application
                // reads, and its delayed ACKs (the handshake's own ACKs are the kernel's).
                r.set_reads(Reads::of(&ctx.flows[f]));
                r.quickack = ctx.flows[f].quickack;
                if let Some(us) = ctx.flows[f].delack_max_us {
                    if crate::sockopt::apply_delack_max(&r.inner, us).is_ok() {
                        counts[f].delack_max_us = crate::sockopt::delack_max_us(&r.inner).unwrap_or(0) as u64;
                    }
                }
                counts[f].so_rcvbuf = socket2::SockRef::from(&r.inner).recv_buffer_size().unwrap_or(0) as u64;
                f
            }
            (Some(f), Some(g)) if f == g => f,
            _ => {
                ctx.bad();
                break;
            }
        };
        flow = Some(f);
        let mut left = h.len as usize - HEADER_LEN;
        while left > 0 {
            let k = left.min(scratch.len());
            if !fill(&mut r, &mut scratch[..k], &ctx.stop) {
                break 'messages;
            }
            left -= k;
        }
        let rx = ctx.clock.now_ns();
        counts[f].received += 1;
        counts[f].bytes += h.len as u64;
        ctx.received[f].fetch_add(1, Ordering::Relaxed);
        if w.push(&Record { flow: h.flow, seq: h.seq, bytes: h.len, kind: RecordKind::Received, tx_ns: h.tx_ns, rx_ns: rx }).is_err() {
            break;
        }
    }
    let _ = w.flush();
    counts
}

/// Fills `buf` from the stream, polling `stop`; false at the end of the stream or when stopped.
fn fill(r: &mut impl Read, buf: &mut [u8], stop: &AtomicBool) -> bool {
    let mut at = 0;
    while at < buf.len() {
        match r.read(&mut buf[at..]) {
            Ok(0) => return false,
            Ok(n) => at += n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted) => {
                if stop.load(Ordering::Relaxed) {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_with_their_own_receive_buffer_get_a_listener_with_it_up_to_a_bound() {
        let flow = |id: u32, proto, receive_buffer| FlowSetup { id, name: format!("f{id}"), proto, paced_reads: None, file_reads: None, receive_buffer, delack_max_us: None, quickack: false };
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let own = own_listeners(ip, &[flow(0, Proto::Tcp, Some(16_384)), flow(1, Proto::Tcp, None), flow(2, Proto::Udp, Some(16_384))]).unwrap();
        assert_eq!(own.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![0], "only TCP flows that set one");
        // socket(7): the kernel doubles SO_RCVBUF; accepted connections inherit the listener's.
        assert_eq!(socket2::SockRef::from(&own[0].1).recv_buffer_size().unwrap(), 32_768);
        let many: Vec<FlowSetup> = (0..=MAX_OWN_LISTENERS as u32).map(|i| flow(i, Proto::Tcp, Some(8192))).collect();
        let e = own_listeners(ip, &many).unwrap_err();
        assert!(e.contains("257 TCP flows") && e.contains("at most 256"), "{e}");
    }
}
