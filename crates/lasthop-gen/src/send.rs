//! The sender (`lasthop gen send`): sets a session up with a receiver over the signalling
//! channel ([`crate::control`]), estimates the clock offset, sends the plan's flows and collects
//! both ends' records into one work directory, from which [`crate::results`] computes the report.
//!
//! - UDP flows share one thread and one connected socket: the flows are merged by next due time,
//!   the thread waits for the earliest deadline ([`crate::pacer`]), then sends everything due
//!   by then in one `sendmmsg` batch (video frames longer than a packet leave as back-to-back
//!   fragments, as in the simulator). Each datagram's header carries its send time, read as it
//!   joins the batch. Towards a loopback address a batch of equal-size datagrams leaves as one
//!   segmented write (UDP GSO, [`crate::mmsg`]).
//! - Each TCP flow has its own thread and connection and writes messages with blocking
//!   `write()`s: paced by the flow's schedule (CBR over TCP) or back to back (bulk, file). The
//!   time spent inside `write()` (the socket buffer full: the network limits the flow) is
//!   summed as `send_blocked_s`, apart from network delay; a flow that could not keep up has
//!   sent fewer messages than requested by its stop (`shortfall`). Linux's `TCP_INFO` gives
//!   the connection's end state.
//! - Round-trip meter: a second thread reads the receiver's echoes on the UDP socket and logs
//!   them; [`crate::results`] matches each echo to its packet by flow, sequence number and the
//!   echoed send time.
//!
//! Every thread logs to its own record file; nothing per packet is kept in memory.

use crate::clock::{boot_id, mono_ns, offset_from_probes, Clock, Offset, Probe};
use crate::control::{write_msg, LineReader, FlowCounts, Meter, Msg, Proto, PROTOCOL_VERSION};
use crate::ditg::export::{append_records, epoch_shift, LogAddrs};
use crate::ditg::LogWriter;
use crate::header::{wire_payload, Header, Kind, HEADER_LEN};
use crate::mmsg::{RecvBatch, SendBatch};
use crate::pacer::{deadline, realtime_priority, thread_cpu_ns, tighten_timer_slack, wait_until};
use crate::plan::{SocketTcp, FlowPlan, Plan};
use crate::records::{Record, RecordKind, RecordWriter};
use lasthop_core::traffic::{fragments, Schedule};
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Clock probes exchanged before the run.
pub const PROBES: usize = 16;
/// Message size of bulk transfers without a file loop (iperf3 writes 128 KiB; smaller messages
/// give more delay samples).
pub const BULK_MESSAGE: u64 = 16 * 1024;
/// Time from the end of the setup to the run's origin, so every thread is waiting at its start.
const LEAD_NS: u64 = 50_000_000;
/// While the flows run, a clock probe goes to the receiver this often, so that its idle limit
/// ([`crate::recv::Limits::idle`]) tells a live sender from a vanished one.
pub const KEEPALIVE: Duration = Duration::from_secs(5);

/// How the sender runs.
pub struct SendOptions {
    /// The receiver's control address, `HOST[:PORT]` (port 9000 when omitted).
    pub to: String,
    pub token: Option<String>,
    pub meter: Meter,
    /// A packet not received this long after the sender's last counts as lost (RFC 7680 §2.4).
    pub loss_timeout_ns: u64,
    /// Where both ends' record files go.
    pub work_dir: PathBuf,
    /// The receiver's data port to use (D-ITG's `-rp`); ephemeral when None.
    pub data_port: Option<u16>,
    /// Run the sending threads at real-time priority (`SCHED_FIFO`) where permitted.
    pub realtime: bool,
    /// Also write the sender's packets as a D-ITG binary log here (ITGSend's `-l`).
    pub ditg_log: Option<PathBuf>,
    /// The run's origin on `CLOCK_MONOTONIC`, ns, when the caller fixes it (the emulator runs
    /// one session per flow, all on its own clock); None: [`LEAD_NS`] after the setup. Only
    /// with one kernel's clock (a realtime session ignores it).
    pub origin_mono_ns: Option<u64>,
    /// How long before each deadline the pacer stops sleeping and spins on the clock, ns
    /// ([`crate::pacer::SPIN_NS`] by default): more CPU for fewer late departures.
    pub spin_ns: u64,
    /// Send batches of equal-size UDP datagrams as one segmented write (UDP GSO,
    /// [`crate::mmsg`]); None: only towards a loopback address, where nothing on the way can
    /// tell the difference.
    pub gso: Option<bool>,
}

/// Live progress for a caller that polls (the CLI's bar).
#[derive(Default)]
pub struct Progress {
    /// Packets (datagrams and TCP messages) sent so far.
    pub sent: AtomicU64,
    /// `CLOCK_MONOTONIC` of the run's origin once started, else 0.
    pub origin_ns: AtomicU64,
}

/// What one flow's sender did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowSent {
    /// Packets the schedule asked for before the flow's stop (datagrams; TCP messages); for a
    /// bulk transfer, the messages it wrote.
    pub requested: u64,
    pub sent: u64,
    pub sent_bytes: u64,
    /// Datagrams the kernel refused (counted in neither sent nor received).
    pub send_errors: u64,
    /// How late departures left after their deadline: sum and maximum, ns.
    pub late_sum_ns: u64,
    pub late_max_ns: u64,
    /// Time inside blocking `write()` calls (TCP), ns.
    pub blocked_ns: u64,
    /// CPU time (user + system) of the thread that sent the flow, ns; UDP flows share one
    /// thread, so each reports that thread's whole time.
    pub cpu_ns: u64,
    /// TCP: the sending socket's `SO_SNDBUF` as the kernel reports it (Linux doubles what is
    /// set, socket(7)), bytes.
    pub so_sndbuf: u64,
    /// TCP: the congestion control the socket ran (`TCP_CONGESTION`, NUL-padded; at most
    /// TCP_CA_NAME_MAX = 16 bytes).
    pub congestion: [u8; 16],
    /// TCP: the connection's state at the end (`TCP_INFO`).
    pub tcp: Option<TcpInfo>,
}

/// What Linux's `TCP_INFO` says of a connection at the end of its transfer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpInfo {
    pub state: u8,
    pub segs_out: u64,
    pub total_retrans: u64,
    pub cwnd_bytes: u64,
    pub srtt_us: u32,
    pub rto_us: u32,
}

/// Everything a run leaves for the results.
pub struct Measured {
    pub clock: Clock,
    /// The receiver clock's offset from the sender's; exactly 0 for one kernel's monotonic clock.
    pub offset: Offset,
    /// The probes' estimate even when it is not applied (one kernel).
    pub measured_offset: Option<Offset>,
    pub meter: Meter,
    /// CLOCK of the run's origin (sender clock), ns: times in the report count from it.
    pub origin_ns: u64,
    pub flows: Vec<FlowSent>,
    pub received: Vec<FlowCounts>,
    pub malformed: u64,
    pub control_errors: u64,
    pub interrupted: bool,
    pub sender_files: Vec<PathBuf>,
    pub receiver_file: PathBuf,
    pub loss_timeout_ns: u64,
    /// IP and UDP header bytes per datagram: 28 over IPv4, 48 over IPv6.
    pub ip_overhead: u32,
}

fn err(context: &str) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{context}: {e}")
}

/// Runs the plan against a receiver. Errors are one line naming what failed.
pub fn send(plan: &mut Plan, o: &SendOptions, stop: &AtomicBool, progress: &Progress) -> Result<Measured, String> {
    // What killed senders and receivers left (best effort: `lasthop emu clean` reports failures).
    let _ = crate::workdir::remove_stale();
    check_congestion(plan)?;
    check_socket_settings(plan)?;
    let addr = resolve(&o.to)?;
    let conn = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| format!("--to {}: cannot reach a receiver there: {e}", o.to))?;
    let _ = conn.set_nodelay(true);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10) + Duration::from_nanos(o.loss_timeout_ns)));
    let mut w = conn.try_clone().map_err(err("control connection"))?;
    let mut r = LineReader::new(BufReader::new(conn));
    // Random, from the OS: a receiver refuses a second session with a live id, and datagrams
    // of another run (an old sender, a replay) carry another id.
    let session = {
        use rand_core::RngCore;
        let mut b = [0u8; 4];
        rand_core::OsRng.try_fill_bytes(&mut b).map_err(|e| format!("cannot draw a session id from the operating system: {e}"))?;
        u32::from_le_bytes(b)
    };
    let ask = |w: &mut TcpStream, r: &mut LineReader<BufReader<TcpStream>>, m: Msg| -> Result<Msg, String> {
        write_msg(w, &m).map_err(err("control connection"))?;
        match read_reply(r) {
            Ok(Msg::Error { message }) => Err(format!("the receiver refused: {message}")),
            Ok(m) => Ok(m),
            Err(e) => Err(e.to_string()),
        }
    };
    let (peer_boot, udp_port, tcp_port) = match ask(&mut w, &mut r, Msg::Hello { version: PROTOCOL_VERSION, session, token: o.token.clone(), data_port: o.data_port })? {
        Msg::Welcome { version, boot_id, udp_port, tcp_port } if version == PROTOCOL_VERSION => (boot_id, udp_port, tcp_port),
        other => return Err(format!("the receiver answered {other:?} to hello")),
    };
    let clock = if !peer_boot.is_empty() && peer_boot == boot_id() { Clock::Monotonic } else { Clock::Realtime };
    let mut probes = Vec::with_capacity(PROBES);
    for _ in 0..PROBES {
        let t1 = clock.now_ns();
        if let Msg::ClockReply { t1: e1, t2, t3 } = ask(&mut w, &mut r, Msg::ClockProbe { t1 })? {
            let t4 = clock.now_ns();
            if e1 == t1 {
                probes.push(Probe { t1, t2, t3, t4 });
            }
        }
    }
    let measured_offset = offset_from_probes(&probes);
    let offset = match clock {
        Clock::Monotonic => Offset { offset_ns: 0, uncertainty_ns: 0 },
        Clock::Realtime => measured_offset.ok_or("the clock offset could not be estimated (no valid probe reply)")?,
    };
    let flows = plan.flows.iter().map(FlowPlan::setup).collect();
    let own_ports = match ask(&mut w, &mut r, Msg::Setup { clock, meter: o.meter, flows, loss_timeout_ns: o.loss_timeout_ns })? {
        Msg::Ready { tcp_ports } => tcp_ports,
        other => return Err(format!("the receiver answered {other:?} to setup")),
    };
    std::fs::create_dir_all(&o.work_dir).map_err(err(&o.work_dir.display().to_string()))?;
    let origin_mono = match (o.origin_mono_ns, clock) {
        (Some(t), Clock::Monotonic) => t,
        _ => mono_ns() + LEAD_NS,
    };
    // The origin on the run's clock: the same instant read on `clock`.
    let origin_ns = match clock {
        Clock::Monotonic => origin_mono,
        Clock::Realtime => Clock::Realtime.now_ns() + LEAD_NS,
    };
    progress.origin_ns.store(origin_mono, Ordering::Relaxed);
    let progress_sent = Arc::new(AtomicU64::new(0));
    let ctx = SendCtx { session, clock, origin_mono, stop_all: Arc::new(AtomicBool::new(false)), sent: progress_sent.clone(), realtime: o.realtime, spin_ns: o.spin_ns, gso: o.gso.unwrap_or(addr.ip().is_loopback()) };
    // Real time: idle CPUs kept polling for the run (a halted virtual CPU wakes the pacer late:
    // at 10 kpkt/s on this VM the IDT p99 error went from 282 to 32 µs, medians; BENCHMARKS.md).
    let _awake = o.realtime.then(crate::pacer::CpuLatencyRequest::zero).and_then(Result::ok);
    let mut sender_files = Vec::new();
    let mut handles: Vec<(Vec<u32>, std::thread::JoinHandle<Vec<FlowSent>>)> = Vec::new();
    let udp_ids: Vec<u32> = plan.flows.iter().filter(|f| f.proto == Proto::Udp).map(|f| f.id).collect();
    let mut echo = None;
    if !udp_ids.is_empty() {
        let sock = UdpSocket::bind(SocketAddr::new(if addr.is_ipv4() { [0, 0, 0, 0].into() } else { std::net::Ipv6Addr::UNSPECIFIED.into() }, 0))
            .map_err(err("UDP socket"))?;
        sock.connect(SocketAddr::new(addr.ip(), udp_port)).map_err(err("UDP socket"))?;
        let path = o.work_dir.join("sender-udp.lhr");
        let wr = RecordWriter::create(&path).map_err(err(&path.display().to_string()))?;
        sender_files.push(path);
        if o.meter == Meter::Rtt {
            let path = o.work_dir.join("sender-echo.lhr");
            let ew = RecordWriter::create(&path).map_err(err(&path.display().to_string()))?;
            sender_files.push(path);
            let es = sock.try_clone().map_err(err("UDP socket"))?;
            let _ = es.set_read_timeout(Some(Duration::from_millis(50)));
            let (c, n) = (ctx.clone(), plan.flows.len());
            let done = Arc::new(AtomicBool::new(false));
            let d2 = done.clone();
            echo = Some((done, std::thread::spawn(move || echo_loop(es, ew, c, n, &d2))));
        }
        let flows: Vec<UdpFlow> = plan.flows.iter_mut().filter(|f| f.proto == Proto::Udp).map(|f| UdpFlow::new(f, origin_mono)).collect();
        let c = ctx.clone();
        handles.push((udp_ids, std::thread::spawn(move || udp_loop(sock, flows, wr, c))));
    }
    for f in plan.flows.iter_mut().filter(|f| f.proto == Proto::Tcp) {
        let path = o.work_dir.join(format!("sender-tcp-{:05}.lhr", f.id));
        let wr = RecordWriter::create(&path).map_err(err(&path.display().to_string()))?;
        sender_files.push(path);
        let job = TcpJob::new(f);
        let port = own_ports.iter().find(|(id, _)| *id == f.id).map_or(tcp_port, |&(_, p)| p);
        let (c, to) = (ctx.clone(), SocketAddr::new(addr.ip(), port));
        handles.push((vec![f.id], std::thread::spawn(move || vec![tcp_flow(to, job, wr, c)])));
    }
    // Wait for the senders, relaying a stop request and progress, and keeping the session
    // alive on the receiver (the replies are skipped when reading `done`).
    let mut keepalive = std::time::Instant::now() + KEEPALIVE;
    while handles.iter().any(|(_, h)| !h.is_finished()) {
        if stop.load(Ordering::Relaxed) {
            ctx.stop_all.store(true, Ordering::Relaxed);
        }
        if std::time::Instant::now() >= keepalive {
            let _ = write_msg(&mut w, &Msg::ClockProbe { t1: clock.now_ns() });
            keepalive += KEEPALIVE;
        }
        progress.sent.store(progress_sent.load(Ordering::Relaxed), Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(20));
    }
    progress.sent.store(progress_sent.load(Ordering::Relaxed), Ordering::Relaxed);
    let mut sent = vec![FlowSent::default(); plan.flows.len()];
    for (ids, h) in handles {
        let stats = h.join().map_err(|_| "a sending thread failed".to_string())?;
        for (id, s) in ids.into_iter().zip(stats) {
            sent[id as usize] = s;
        }
    }
    let counts: Vec<u64> = sent.iter().map(|s| s.sent).collect();
    // A receiver stopped by a signal has already answered `done` and closed: the write may
    // fail while its answer waits to be read.
    let stop_written = write_msg(&mut w, &Msg::Stop { sent: counts });
    let done = loop {
        match read_reply(&mut r) {
            Ok(Msg::ClockReply { .. }) => continue, // answers to the keepalive probes
            Err(e) => break Err(stop_written.err().map_or(e, |w| format!("control connection: {w}"))),
            other => break other,
        }
    };
    if let Some((flag, h)) = echo {
        flag.store(true, Ordering::Relaxed);
        let _ = h.join();
    }
    let (received, malformed, control_errors, records_bytes, interrupted) = match done? {
        Msg::Done { counts, malformed, control_errors, records_bytes, interrupted } => (counts, malformed, control_errors, records_bytes, interrupted),
        Msg::Error { message } => return Err(format!("the receiver refused: {message}")),
        other => return Err(format!("the receiver answered {other:?} to stop")),
    };
    let receiver_file = o.work_dir.join("receiver.lhr");
    let mut out = std::fs::File::create(&receiver_file).map_err(err(&receiver_file.display().to_string()))?;
    let got = io::copy(&mut r.inner().by_ref().take(records_bytes), &mut out).map_err(err("receiving the receiver's records"))?;
    if got != records_bytes {
        return Err(format!("the receiver's records were cut short: {got} of {records_bytes} bytes"));
    }
    if let Some(path) = &o.ditg_log {
        let src = w.local_addr().map_err(err("control connection"))?;
        let addrs = LogAddrs { src, udp_dst: SocketAddr::new(addr.ip(), udp_port), tcp_dst: SocketAddr::new(addr.ip(), tcp_port) };
        let protos: Vec<Proto> = plan.flows.iter().map(|f| f.proto).collect();
        let echoes = o.meter == Meter::Rtt;
        write_ditg_log(path, &sender_files, echoes, &protos, &addrs, epoch_shift(clock)).map_err(|e| format!("--ditg-log: {e}"))?;
    }
    Ok(Measured {
        clock,
        offset,
        measured_offset,
        meter: o.meter,
        origin_ns,
        flows: sent,
        received,
        malformed,
        control_errors,
        interrupted: interrupted || stop.load(Ordering::Relaxed),
        sender_files,
        receiver_file,
        loss_timeout_ns: o.loss_timeout_ns,
        ip_overhead: if addr.is_ipv4() { 28 } else { 48 },
    })
}

/// Writes the sent records of `files` as a D-ITG sender log (ITGSend's `-l`); with `echoes`
/// (the RTT meter) a UDP flow's echoes, as ITGSend logs them in `-m rttm`.
fn write_ditg_log(path: &Path, files: &[PathBuf], echoes: bool, protos: &[Proto], addrs: &LogAddrs, shift: i128) -> Result<(), crate::ditg::DitgError> {
    let mut log = LogWriter::create(path)?;
    for f in files {
        append_records(&mut log, f, RecordKind::Sent, echoes, protos, addrs, shift)?;
    }
    log.finish().map(drop)
}

/// The receiver's next message, however long it takes to arrive (the stream's read timeout
/// bounds each wait; a partial line is completed).
fn read_reply(r: &mut LineReader<BufReader<TcpStream>>) -> Result<Msg, String> {
    loop {
        match r.read_msg() {
            Ok(m) => return Ok(m),
            Err(crate::control::ControlError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock && e.to_string() == "partial line" => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn resolve(to: &str) -> Result<SocketAddr, String> {
    let with_port = if to.parse::<SocketAddr>().is_ok() || to.rsplit_once(':').is_some_and(|(h, p)| !h.ends_with(':') && p.parse::<u16>().is_ok()) {
        to.to_string()
    } else {
        format!("{to}:{}", crate::control::DEFAULT_PORT)
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| format!("--to {to}: not a host or HOST:PORT ({e})"))?
        .next()
        .ok_or_else(|| format!("--to {to}: the name has no address"))
}

/// What every sending thread shares.
#[derive(Clone)]
struct SendCtx {
    session: u32,
    clock: Clock,
    origin_mono: u64,
    stop_all: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    realtime: bool,
    spin_ns: u64,
    gso: bool,
}

impl SendCtx {
    /// Prepares a sending thread: 1 ns timer slack, and real-time priority if asked for.
    fn pace_thread(&self) {
        tighten_timer_slack();
        if self.realtime {
            realtime_priority();
        }
    }

    fn stopped(&self) -> bool {
        self.stop_all.load(Ordering::Relaxed)
    }
    /// Waits for an absolute monotonic deadline, looking at the stop flag every 50 ms; false
    /// when stopped first.
    fn wait(&self, due: u64) -> bool {
        loop {
            if self.stopped() {
                return false;
            }
            let now = mono_ns();
            if due <= now + 50_000_000 {
                wait_until(due, self.spin_ns);
                return true;
            }
            crate::clock::sleep_until_mono(now + 50_000_000);
        }
    }
}

/// A UDP flow being sent.
struct UdpFlow {
    id: u32,
    schedule: Schedule,
    start_ns: u64,
    /// Departures at or after this offset from the flow's start are not sent.
    until_ns: u64,
    max_packet: u32,
    due: u64,
    seq: u32,
    done: bool,
}

impl UdpFlow {
    fn new(f: &mut FlowPlan, origin: u64) -> UdpFlow {
        let schedule = f.messages.take().expect("a UDP flow has a message schedule");
        let until_ns = f.stop_ns.saturating_sub(f.start_ns);
        let first = schedule.due().at.0;
        UdpFlow {
            id: f.id,
            max_packet: schedule.max_packet(),
            schedule,
            start_ns: f.start_ns,
            until_ns,
            due: deadline(origin, f.start_ns, first),
            seq: 0,
            done: first >= until_ns,
        }
    }
}

fn udp_loop(sock: UdpSocket, mut flows: Vec<UdpFlow>, mut w: RecordWriter, ctx: SendCtx) -> Vec<FlowSent> {
    ctx.pace_thread();
    let largest = flows.iter().map(|f| wire_payload(f.max_packet) as usize).max().unwrap_or(HEADER_LEN);
    let mut batch = SendBatch::new(largest);
    batch.use_gso(ctx.gso);
    let mut pending: Vec<Record> = Vec::with_capacity(crate::mmsg::BATCH);
    // Indexed by flow id (the records carry it).
    let mut stats = vec![FlowSent::default(); flows.iter().map(|f| f.id as usize + 1).max().unwrap_or(0)];
    let fd = sock.as_raw_fd();
    while let Some(due) = flows.iter().filter(|f| !f.done).map(|f| f.due).min() {
        if !ctx.wait(due) {
            break;
        }
        let now = mono_ns();
        for f in flows.iter_mut() {
            while !f.done && f.due <= now {
                let dep = f.schedule.pop();
                for size in fragments(dep.bytes, f.max_packet) {
                    if batch.is_full() {
                        flush(&mut batch, &mut pending, &mut stats, fd, &mut w, &ctx);
                    }
                    // Each packet's own send time, read as it joins the batch (it leaves in the
                    // batch's system call): a sender that is behind fills many batches in one
                    // round, and a time read once per round would date them all too early.
                    let t = mono_ns();
                    let tx = if ctx.clock == Clock::Monotonic { t } else { ctx.clock.now_ns() };
                    let st = &mut stats[f.id as usize];
                    let late = t.saturating_sub(f.due);
                    st.late_sum_ns += late;
                    st.late_max_ns = st.late_max_ns.max(late);
                    let len = wire_payload(size);
                    let h = Header { kind: Kind::Data, session: ctx.session, flow: f.id, seq: f.seq, len, tx_ns: tx, echo_ns: 0 };
                    h.write(batch.push(len as usize));
                    pending.push(Record { flow: f.id, seq: f.seq, bytes: len, kind: RecordKind::Sent, tx_ns: tx, rx_ns: 0 });
                    f.seq = f.seq.wrapping_add(1);
                    stats[f.id as usize].requested += 1;
                }
                let next = f.schedule.due().at.0;
                f.done = next >= f.until_ns;
                f.due = deadline(ctx.origin_mono, f.start_ns, next);
            }
        }
        flush(&mut batch, &mut pending, &mut stats, fd, &mut w, &ctx);
    }
    flush(&mut batch, &mut pending, &mut stats, fd, &mut w, &ctx);
    let _ = w.flush();
    let cpu_ns = thread_cpu_ns();
    flows.iter().map(|f| FlowSent { cpu_ns, ..stats[f.id as usize] }).collect()
}

/// Sends the batch; logs the datagrams that left, counts the ones refused.
fn flush(batch: &mut SendBatch, pending: &mut Vec<Record>, stats: &mut [FlowSent], fd: i32, w: &mut RecordWriter, ctx: &SendCtx) {
    if batch.is_empty() {
        return;
    }
    let (n, _) = batch.send(fd);
    for (i, r) in pending.drain(..).enumerate() {
        let s = &mut stats[r.flow as usize];
        if i < n {
            s.sent += 1;
            s.sent_bytes += r.bytes as u64;
            let _ = w.push(&r);
        } else {
            s.send_errors += 1;
        }
    }
    ctx.sent.fetch_add(n as u64, Ordering::Relaxed);
}

fn echo_loop(sock: UdpSocket, mut w: RecordWriter, ctx: SendCtx, flows: usize, done: &AtomicBool) {
    let mut batch = RecvBatch::new();
    let fd = sock.as_raw_fd();
    while !done.load(Ordering::Relaxed) {
        let Ok(n) = batch.recv(fd) else { break };
        let now = ctx.clock.now_ns();
        for i in 0..n {
            let (d, truncated) = batch.datagram(i);
            match Header::read(d) {
                Ok(h) if !truncated && h.kind == Kind::Echo && h.session == ctx.session && (h.flow as usize) < flows && h.len as usize == d.len() => {
                    let _ = w.push(&Record { flow: h.flow, seq: h.seq, bytes: h.len, kind: RecordKind::EchoReceived, tx_ns: h.tx_ns, rx_ns: now });
                }
                _ => {}
            }
        }
    }
    let _ = w.flush();
}

/// A TCP flow's job, moved into its thread.
struct TcpJob {
    id: u32,
    start_ns: u64,
    until_ns: u64,
    schedule: Option<Schedule>,
    volume: Option<u64>,
    message: u64,
    send_delay_ns: u64,
    send_buffer: Option<u64>,
    nodelay: bool,
    congestion: Option<&'static str>,
    socket: SocketTcp,
}

impl TcpJob {
    fn new(f: &mut FlowPlan) -> TcpJob {
        let fl = f.file_loop();
        TcpJob {
            id: f.id,
            start_ns: f.start_ns,
            until_ns: f.stop_ns.saturating_sub(f.start_ns),
            schedule: f.messages.take(),
            volume: f.volume_bytes(),
            message: fl.map_or(BULK_MESSAGE, |l| l.message.0).max(HEADER_LEN as u64),
            send_delay_ns: fl.map_or(0, |l| l.send_delay.0),
            send_buffer: f.buffers.send,
            nodelay: f.nodelay,
            congestion: f.congestion,
            socket: f.socket,
        }
    }
}

fn tcp_flow(to: SocketAddr, mut job: TcpJob, mut w: RecordWriter, ctx: SendCtx) -> FlowSent {
    ctx.pace_thread();
    let mut st = FlowSent::default();
    let Ok(mut s) = tcp_connect(to, &job) else {
        st.send_errors += 1;
        return st;
    };
    let sock = socket2::SockRef::from(&s);
    st.so_sndbuf = sock.send_buffer_size().unwrap_or(0) as u64;
    if let Ok(name) = sock.tcp_congestion() {
        let n = name.iter().position(|&b| b == 0).unwrap_or(name.len()).min(16);
        st.congestion[..n].copy_from_slice(&name[..n]);
    }
    let mut buf = vec![0u8; job.message.max(job.schedule.as_ref().map_or(0, |s| wire_payload(s.max_packet()) as u64)) as usize];
    let start = deadline(ctx.origin_mono, job.start_ns, 0);
    let end = deadline(ctx.origin_mono, job.start_ns, job.until_ns);
    let mut seq = 0u32;
    let mut written = 0u64;
    if ctx.wait(start) {
        loop {
            // The next message: its deadline and size.
            let (due, size) = match job.schedule.as_mut() {
                Some(sch) => {
                    let d = sch.due();
                    if d.at.0 >= job.until_ns {
                        break;
                    }
                    sch.pop();
                    (deadline(ctx.origin_mono, job.start_ns, d.at.0), wire_payload(d.bytes) as u64)
                }
                None => {
                    let left = job.volume.map_or(u64::MAX, |v| v.saturating_sub(written));
                    if left == 0 || mono_ns() >= end {
                        break;
                    }
                    (0, left.min(job.message).max(HEADER_LEN as u64))
                }
            };
            st.requested += 1;
            if due > 0 && !ctx.wait(due) {
                break;
            }
            if ctx.stopped() {
                break;
            }
            let t0 = mono_ns();
            if due > 0 {
                let late = t0.saturating_sub(due);
                st.late_sum_ns += late;
                st.late_max_ns = st.late_max_ns.max(late);
            }
            let tx = ctx.clock.now_ns();
            let len = size as u32;
            if buf.len() < len as usize {
                buf.resize(len as usize, 0);
            }
            Header { kind: Kind::Data, session: ctx.session, flow: job.id, seq, len, tx_ns: tx, echo_ns: 0 }.write(&mut buf);
            if s.write_all(&buf[..len as usize]).is_err() {
                st.send_errors += 1;
                break;
            }
            st.blocked_ns += mono_ns() - t0;
            st.sent += 1;
            st.sent_bytes += size;
            written += size;
            ctx.sent.fetch_add(1, Ordering::Relaxed);
            let _ = w.push(&Record { flow: job.id, seq, bytes: len, kind: RecordKind::Sent, tx_ns: tx, rx_ns: 0 });
            seq = seq.wrapping_add(1);
            if job.send_delay_ns > 0 {
                crate::clock::sleep_until_mono(mono_ns() + job.send_delay_ns);
            }
        }
    }
    st.tcp = tcp_info(&s);
    let _ = s.shutdown(std::net::Shutdown::Write);
    // Wait for the receiver to close (it has read everything) so the transfer is complete.
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut sink = [0u8; 64];
    let _ = s.read(&mut sink);
    let _ = w.flush();
    st.cpu_ns = thread_cpu_ns();
    st
}

/// Refuses a run whose flows ask for a congestion control this host cannot give a socket,
/// before anything is sent (the kernel names what it has in
/// /proc/sys/net/ipv4/tcp_available_congestion_control).
fn check_congestion(plan: &Plan) -> Result<(), String> {
    plan.flows.iter().filter(|f| f.proto == Proto::Tcp).try_for_each(|f| f.congestion.map_or(Ok(()), |cc| congestion_available(&f.name, cc)))
}

/// Refuses a run whose flows' socket settings this host's kernel would refuse (the sender's
/// and the receiver's alike: a receiver on another kernel checks its own at setup).
fn check_socket_settings(plan: &Plan) -> Result<(), String> {
    plan.flows.iter().filter(|f| f.proto == Proto::Tcp).try_for_each(|f| crate::sockopt::check(&f.name, &f.socket))
}

fn congestion_available(flow: &str, cc: &str) -> Result<(), String> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, Some(socket2::Protocol::TCP)).map_err(|e| format!("a TCP socket: {e}"))?;
    s.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
        let have = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap_or_default();
        format!("flow {flow:?}: tcp.variant asks for Linux's {cc:?} congestion control, which this host cannot give a socket ({e}); available here: {}", have.trim())
    })
}

/// Connects a TCP flow's socket with the flow's options set first: `SO_SNDBUF` before the
/// handshake (as an application sets it before `connect()`), Nagle off if asked, the `tcp`
/// table's MSS and RTO bounds ([`crate::sockopt`]).
fn tcp_connect(to: SocketAddr, job: &TcpJob) -> std::io::Result<TcpStream> {
    let s = socket2::Socket::new(socket2::Domain::for_address(to), socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    if let Some(b) = job.send_buffer {
        s.set_send_buffer_size(b as usize)?;
    }
    crate::sockopt::apply_sender(&s, &job.socket).map_err(|r| r.error)?;
    s.set_nodelay(job.nodelay)?;
    if let Some(cc) = job.congestion {
        s.set_tcp_congestion(cc.as_bytes())?;
    }
    s.connect_timeout(&to.into(), Duration::from_secs(5))?;
    Ok(s.into())
}

fn tcp_info(s: &TcpStream) -> Option<TcpInfo> {
    // SAFETY: an all-zero tcp_info is valid; getsockopt writes at most `len` bytes into it.
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe { libc::getsockopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, (&mut ti as *mut libc::tcp_info).cast(), &mut len) };
    (r == 0).then(|| TcpInfo {
        state: ti.tcpi_state,
        segs_out: ti.tcpi_segs_out as u64,
        total_retrans: ti.tcpi_total_retrans as u64,
        cwnd_bytes: ti.tcpi_snd_cwnd as u64 * ti.tcpi_snd_mss as u64,
        srtt_us: ti.tcpi_rtt,
        rto_us: ti.tcpi_rto,
    })
}

/// The record files of a finished run, for callers that move them into a results directory.
pub fn record_files(m: &Measured) -> Vec<&Path> {
    m.sender_files.iter().map(PathBuf::as_path).chain(std::iter::once(m.receiver_file.as_path())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_congestion_control_the_host_lacks_is_refused_naming_the_flow_and_what_it_has() {
        // "reno" is built into every Linux kernel (net/ipv4/tcp_cong.c); no module is named this.
        assert_eq!(congestion_available("f", "reno"), Ok(()));
        let e = congestion_available("fast", "lh-no-such-cc").unwrap_err();
        assert!(e.starts_with(r#"flow "fast": tcp.variant asks for Linux's "lh-no-such-cc" congestion control"#), "{e}");
        assert!(e.contains("available here: ") && e.contains("reno"), "{e}");
    }
}
