//! What a sender will send: the flows of a flows file (the scenario's `[[flows]]` vocabulary,
//! loaded by [`lasthop_scenario::flows_from_toml_str`]) or of D-ITG-like command-line flags
//! (turned into the same vocabulary by [`ditg_flow_toml`]), each converted by the scenario's own
//! [`flow_app`] into core traffic: a [`Schedule`] of departures or a [`Transfer`]. The generator
//! has no traffic model of its own; a flow sends here what it sends in a simulation, draw for
//! draw (same seed, same stream `flow/<name>/app`).
//!
//! A flows file reaches every app kind of the scenario, D-ITG's stochastic laws, presets and
//! `-z`/`-k` limits included (they are core traffic), and a flow starts where the simulator starts it (`start` plus
//! its `start_jitter` draw, `Flow::start_time`). Left out: command-line flags for D-ITG's other
//! laws (only `-T -C -c -t -a -rp` are parsed; the others are written in a flows file).

use crate::control::{FlowSetup, Proto};
use lasthop_core::rng::RngStreams;
use lasthop_core::traffic::{Calls, FileLoop, Schedule, Transfer, Volume};
use lasthop_core::Duration;
use lasthop_scenario::build::traffic::flow_app;
use lasthop_scenario::{flows_from_toml_str, CcVariant, Scenario, Transport};

/// One flow to send.
pub struct FlowPlan {
    pub id: u32,
    pub name: String,
    /// The sending and receiving nodes' names (the flows file's `src`/`dst`).
    pub src: String,
    pub dst: String,
    pub proto: Proto,
    /// From the run's origin, ns.
    pub start_ns: u64,
    /// When it stops sending, from the run's origin, ns (its stop, or the run's end).
    pub stop_ns: u64,
    /// Departures (CBR, on/off, video); None for byte transfers.
    pub messages: Option<Schedule>,
    pub transfer: Transfer,
    /// Packets later than this count as late (the flow's playout deadline).
    pub deadline: Option<Duration>,
    pub discard_reordered: bool,
    /// TCP socket buffers the flows file sets (`tcp.send_buffer`, `tcp.receive_buffer`), bytes;
    /// None keeps the kernel's autotuning (setting one turns it off for that socket).
    pub buffers: SocketBuffers,
    /// TCP: Nagle's algorithm off (`TCP_NODELAY`) when the flow says `tcp.nagle = false`.
    pub nodelay: bool,
    /// TCP: the Linux congestion control (`TCP_CONGESTION`: "reno", "cubic", "bbr") the flows
    /// file asks for with `tcp.variant`; None keeps the host's default.
    pub congestion: Option<&'static str>,
    /// TCP: the rest of the `tcp` table a socket can take, where the flows file writes it.
    pub socket: SocketTcp,
    /// TCP: the fields of the `tcp` table the flows file writes that no socket option sets,
    /// each with what does set it (reported, and warned about, never silently dropped).
    pub not_applied: Vec<String>,
}

/// The fields of a flow's `tcp` table that Linux lets one socket set (tcp(7); the three timers
/// since Linux 6.15), where the flows file writes them. Each is applied before the handshake on
/// the end it concerns; one the kernel refuses stops the run before sending, naming the field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketTcp {
    /// `tcp.mss`: the sender's `TCP_MAXSEG` (its segments' payload), bytes.
    pub mss: Option<u32>,
    /// `tcp.rto_min`: the sender's `TCP_RTO_MIN_US`, µs. Linux only lowers it (2 jiffies to
    /// 200 ms); the route's `rto_min` raises it.
    pub rto_min_us: Option<u32>,
    /// `tcp.rto_max`: the sender's `TCP_RTO_MAX_MS` (1 s to 120 s), ms.
    pub rto_max_ms: Option<u32>,
    /// `tcp.delayed_ack`: the receiver's `TCP_DELACK_MAX_US`, µs: the longest it delays an ACK
    /// (Linux's delay adapts between 40 ms, or this if lower, and this).
    pub delack_max_us: Option<u32>,
    /// `tcp.delayed_ack_enabled = false`: the receiver re-arms `TCP_QUICKACK` after every read
    /// (Linux clears it by itself), so every segment is acknowledged at once.
    pub quickack: bool,
}

/// The `tcp` fields no socket option sets, and what sets them on Linux.
const NOT_PER_SOCKET: [(&str, &str); 17] = [
    ("sack", "the host's sysctl net.ipv4.tcp_sack (lasthop emu sets it per node namespace)"),
    ("window_scale", "the host's sysctl net.ipv4.tcp_window_scaling"),
    ("initial_cwnd", "the route's initcwnd (ip route change ... initcwnd N; lasthop emu sets it)"),
    ("rto_initial", "Linux's fixed 1 s initial RTO (RFC 6298)"),
    ("dupack_threshold", "the host's sysctl net.ipv4.tcp_reordering"),
    ("ca_increase", "the kernel's congestion control (byte counting in Linux's reno)"),
    ("limited_transmit", "the kernel (Linux always uses RFC 3042 limited transmit)"),
    ("abc_limit", "the kernel (Linux's slow start adds every segment acknowledged: abc_limit = 2)"),
    ("partial_ack_timer", "the kernel (Linux restarts the timer on every partial ACK: slow_but_steady)"),
    ("recovery_exit", "the kernel (Linux ends recovery at ssthresh)"),
    ("push", "the kernel (Linux pushes at the end of every write and ACKs a pushed full segment at once: linux)"),
    ("window_edge", "the kernel (Linux fills the window's edge with a sub-MSS segment: linux)"),
    ("recovery_window", "the kernel (Linux's recovery is PRR: prr)"),
    ("receive_window", "the kernel (Linux grows its window from 64 KB, ACKing each step: linux)"),
    ("timer_granularity", "the kernel's timer (jiffies)"),
    ("window_update", "the kernel (Linux announces a window as soon as reads open it: immediate)"),
    ("receiver_awnd", "paper 004's window, which needs the W-CDMA link's state (lasthop emu applies it)"),
];

/// A TCP flow's socket buffers as the flows file gives them, bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketBuffers {
    pub send: Option<u64>,
    pub receive: Option<u64>,
}

impl FlowPlan {
    /// What the receiver is told.
    pub fn setup(&self) -> FlowSetup {
        let paced_reads = match self.transfer.calls {
            Calls::PacedReads(p) => Some((p.rate.bps(), p.size.0)),
            _ => None,
        };
        let file_reads = self.file_loop().map(|l| (l.app_buffer.0.max(1), l.receive_delay.0));
        FlowSetup {
            id: self.id,
            name: self.name.clone(),
            proto: self.proto,
            paced_reads,
            file_reads,
            receive_buffer: self.buffers.receive,
            delack_max_us: self.socket.delack_max_us,
            quickack: self.socket.quickack,
        }
    }

    /// The file loop's sender side, if the flow runs one.
    pub fn file_loop(&self) -> Option<FileLoop> {
        match self.transfer.calls {
            Calls::FileLoop(l) => Some(l),
            _ => None,
        }
    }

    /// Bytes a byte transfer is to write; None for an endless one or a message source.
    pub fn volume_bytes(&self) -> Option<u64> {
        match self.transfer.volume {
            Volume::Bytes(b) => Some(b),
            Volume::UntilStopped | Volume::Messages => None,
        }
    }
}

impl Plan {
    /// Packets the schedules ask for (UDP and paced TCP flows); None with a byte transfer, or
    /// beyond 100 M (not counted further).
    pub fn planned_packets(&self) -> Option<u64> {
        let mut n = 0u64;
        for f in &self.flows {
            let s = f.messages.clone()?;
            let until = f.stop_ns.saturating_sub(f.start_ns);
            let max = s.max_packet().max(1);
            for d in s.take_while(|d| d.at.0 < until) {
                n += d.bytes.div_ceil(max).max(1) as u64;
                if n > 100_000_000 {
                    return None;
                }
            }
        }
        Some(n)
    }
}

/// The most packets whose per-packet tables a run keeps in memory: about 500 bytes a packet
/// for both ends' tables (measured: 10 kpkt/s for 30 s peaked 156 MiB above the same run
/// without them), so 4 M packets ≈ 2 GB. A run written to a directory (the CLI's `--out`,
/// the API's `out=`) streams its tables to Parquet in pieces instead and has no such bound;
/// the records of every packet stream to disk whatever the tables.
pub const MAX_PACKET_TABLE_ROWS: u64 = 4_000_000;

/// Refuses, before anything is sent, a run whose per-packet tables would be kept in memory
/// beyond the budget.
pub fn check_packet_tables(planned: Option<u64>) -> Result<(), String> {
    match planned {
        Some(n) if n > MAX_PACKET_TABLE_ROWS => Err(format!(
            "the per-packet tables of the {n} packets this run plans would take about {:.1} GB of memory kept there (at most {MAX_PACKET_TABLE_ROWS} packets); \
             give the results a directory to stream them to (out=...), or pass packets=False (records/ still keeps every packet of both ends on disk, \
             and every metric is computed), or a shorter duration",
            n as f64 * 500.0 / 1e9
        )),
        _ => Ok(()),
    }
}

/// Linux's module for a scenario's congestion control (NewReno is Linux's "reno": RFC 6582's
/// recovery, with SACK where both ends offer it).
pub fn linux_congestion(v: CcVariant) -> &'static str {
    match v {
        CcVariant::Newreno => "reno",
        CcVariant::Cubic => "cubic",
        CcVariant::Bbr => "bbr",
    }
}

/// A whole run to send.
pub struct Plan {
    /// The flows file's name (`simulation.name`, or the file's stem).
    pub name: String,
    pub flows: Vec<FlowPlan>,
    /// Length of the run, ns.
    pub duration_ns: u64,
    /// Width of the per-interval time series.
    pub interval: Duration,
    pub seed: u64,
    /// The resolved flows (every default filled in), for the report's header.
    pub configuration: serde_json::Value,
}

/// Loads a flows file (or a whole scenario) into a plan. `duration` and `seed` override the
/// file's `[simulation]`. Errors name the file, the field and what is valid.
pub fn plan_from_toml(text: &str, file: &str, duration: Option<Duration>, seed: Option<u64>) -> Result<Plan, String> {
    let mut s = flows_from_toml_str(text, file).map_err(|e| e.to_string())?;
    if let Some(d) = duration {
        if d.0 == 0 {
            return Err(format!("{file}: the duration must be positive, e.g. 10s"));
        }
        s.simulation.duration = d;
    }
    if let Some(seed) = seed {
        s.simulation.seed = seed;
    }
    let mut plan = plan_from_scenario(&s, file);
    for (f, w) in plan.flows.iter_mut().zip(written_out(text, &s)) {
        f.buffers = w.buffers;
        f.congestion = w.congestion;
        f.socket = w.socket;
        f.not_applied = w.not_applied;
    }
    Ok(plan)
}

/// What a flow's `tcp` table writes out, as a real socket takes it.
#[derive(Default)]
struct Written {
    buffers: SocketBuffers,
    congestion: Option<&'static str>,
    socket: SocketTcp,
    not_applied: Vec<String>,
}

/// The socket settings each flow's `tcp` table writes out. The scenario's defaults (64 KiB
/// buffers, NewReno, a 1 s minimum RTO...) are the simulator's; on a real host what is not
/// written stays the kernel's (autotuned buffers, the host's congestion control and timers).
/// The text has already been validated as the scenario `s`.
fn written_out(text: &str, s: &Scenario) -> Vec<Written> {
    let doc: toml::Value = text.parse().unwrap_or(toml::Value::Table(Default::default()));
    let tables = doc.get("flows").and_then(|f| f.as_array()).cloned().unwrap_or_default();
    s.flows
        .iter()
        .map(|f| {
            let Some(tcp) = f.tcp.as_ref() else { return Written::default() };
            let raw = tables.iter().find(|t| t.get("name").and_then(|n| n.as_str()) == Some(f.name.as_str())).and_then(|t| t.get("tcp"));
            let given = |key: &str| raw.is_some_and(|t| t.get(key).is_some());
            let us = |d: Duration| u32::try_from(d.0 / 1_000).unwrap_or(u32::MAX);
            Written {
                buffers: SocketBuffers {
                    send: given("send_buffer").then_some(tcp.send_buffer.0),
                    receive: given("receive_buffer").then_some(tcp.receive_buffer.0),
                },
                congestion: given("variant").then_some(linux_congestion(tcp.variant)),
                socket: SocketTcp {
                    mss: tcp.mss.filter(|_| given("mss")).map(|m| u32::try_from(m.0).unwrap_or(u32::MAX)),
                    rto_min_us: given("rto_min").then(|| us(tcp.rto_min)),
                    rto_max_ms: given("rto_max").then(|| us(tcp.rto_max) / 1_000),
                    delack_max_us: (given("delayed_ack") && tcp.delayed_ack_enabled).then(|| us(tcp.delayed_ack)),
                    quickack: given("delayed_ack_enabled") && !tcp.delayed_ack_enabled,
                },
                not_applied: NOT_PER_SOCKET
                    .iter()
                    .filter(|(key, _)| given(key))
                    .map(|(key, by)| format!("tcp.{key}: no socket option sets it; {by}"))
                    .collect(),
            }
        })
        .collect()
}

/// The plan of a validated scenario's flows (`file` names it when it has no name).
pub fn plan_from_scenario(s: &Scenario, file: &str) -> Plan {
    let rng = RngStreams::new(s.simulation.seed);
    let end = s.simulation.duration.0;
    let flows = s
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let app = flow_app(s, f, &rng);
            FlowPlan {
                id: i as u32,
                name: f.name.clone(),
                src: f.src.get_ref().clone(),
                dst: f.dst.get_ref().clone(),
                proto: match f.transport() {
                    Transport::Udp => Proto::Udp,
                    Transport::Tcp => Proto::Tcp,
                },
                start_ns: f.start_time(&rng).0.min(end),
                stop_ns: f.stop.map_or(end, |t| t.0.min(end)),
                messages: app.messages,
                transfer: app.transfer,
                deadline: f.effective_deadline(),
                discard_reordered: f.discard_reordered,
                buffers: SocketBuffers::default(),
                nodelay: f.tcp.as_ref().is_some_and(|t| !t.nagle),
                congestion: None,
                socket: SocketTcp::default(),
                not_applied: Vec::new(),
            }
        })
        .collect();
    let stem = std::path::Path::new(file).file_stem().and_then(|x| x.to_str()).unwrap_or("gen").to_string();
    Plan {
        name: s.name(&stem),
        flows,
        duration_ns: end,
        interval: s.simulation.interval,
        seed: s.simulation.seed,
        configuration: serde_json::to_value(s).expect("a scenario serializes"),
    }
}

/// D-ITG-like flags of one flow (ITGSend's `-T`, `-C`, `-c`, `-t`; its defaults: UDP, 1 000
/// pkt/s, 512 B, 10 000 ms).
#[derive(Clone, Debug, PartialEq)]
pub struct DitgFlags {
    /// "UDP" or "TCP" (any case).
    pub protocol: String,
    /// Packets per second (`-C`).
    pub rate_pps: f64,
    /// Payload bytes (`-c`).
    pub size: u64,
    /// Duration, ms (`-t`).
    pub duration_ms: u64,
}

impl Default for DitgFlags {
    fn default() -> Self {
        DitgFlags { protocol: "UDP".into(), rate_pps: 1000.0, size: 512, duration_ms: 10_000 }
    }
}

/// The flows file that says what the flags say: one CBR flow named "flow1" (D-ITG numbers its
/// flows from 1) of `size` bytes every 1/`rate` s (rounded to the nanosecond), over the protocol.
pub fn ditg_flow_toml(f: &DitgFlags) -> Result<String, String> {
    let proto = match f.protocol.to_ascii_lowercase().as_str() {
        "udp" => "udp",
        "tcp" => "tcp",
        other => return Err(format!("-T {other:?}: the protocol is UDP or TCP")),
    };
    if !(f.rate_pps.is_finite() && f.rate_pps > 0.0 && f.rate_pps <= 10_000_000.0) {
        return Err(format!("-C {}: the rate is packets per second, above 0 and at most 10000000", f.rate_pps));
    }
    if f.size == 0 || f.size > 65_507 {
        return Err(format!("-c {}: the payload size is 1 to 65507 bytes (a UDP datagram's largest)", f.size));
    }
    if f.duration_ms == 0 {
        return Err("-t 0: the duration is a positive number of milliseconds".into());
    }
    let interval_ns = (1e9 / f.rate_pps).round().max(1.0) as u64;
    Ok(format!(
        "[simulation]\nname = \"ditg-flags\"\nduration = \"{}ms\"\n\n[[flows]]\nname = \"flow1\"\ntransport = \"{proto}\"\napp = {{ type = \"cbr\", size = \"{}B\", interval = \"{interval_ns}ns\" }}\n",
        f.duration_ms, f.size
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ditg_flags_become_one_cbr_flow_of_the_scenario_vocabulary() {
        // -T UDP -C 1000 -c 512 -t 2000: 512 B every 1 ms for 2 s.
        let text = ditg_flow_toml(&DitgFlags { duration_ms: 2000, ..DitgFlags::default() }).unwrap();
        let p = plan_from_toml(&text, "flags", None, Some(3)).unwrap();
        assert_eq!((p.flows.len(), p.duration_ns, p.seed), (1, 2_000_000_000, 3));
        let f = &p.flows[0];
        assert_eq!((f.name.as_str(), f.proto, f.start_ns, f.stop_ns), ("flow1", Proto::Udp, 0, 2_000_000_000));
        let deps: Vec<(u64, u32)> = f.messages.clone().unwrap().take(3).map(|d| (d.at.0, d.bytes)).collect();
        assert_eq!(deps, vec![(0, 512), (1_000_000, 512), (2_000_000, 512)]);
        let tcp = ditg_flow_toml(&DitgFlags { protocol: "tcp".into(), rate_pps: 3.0, ..DitgFlags::default() }).unwrap();
        let p = plan_from_toml(&tcp, "flags", None, None).unwrap();
        assert_eq!(p.flows[0].proto, Proto::Tcp);
        assert_eq!(p.flows[0].messages.as_ref().unwrap().clone().nth(1).unwrap().at.0, 333_333_333);
    }

    #[test]
    fn only_the_socket_buffers_a_file_writes_out_are_set_and_the_file_loop_reaches_the_receiver() {
        // Paper 000's downstream: 4 096 B send()s with 1 ms sleeps, 8 192 B recv()s with 10 ms
        // sleeps, a 32 581 B receive buffer; a second flow sets only its variant (its buffers
        // stay the kernel's: the scenario's 64 KiB default is the simulator's), a third Nagle off.
        let text = "[[flows]]\nname = \"file\"\napp = { type = \"file\", bytes = \"469KB\", message = \"4096B\", app_buffer = \"8192B\", send_delay = \"1ms\", receive_delay = \"10ms\" }\n\
                    tcp = { receive_buffer = \"32581B\" }\n\
                    [[flows]]\nname = \"bulk\"\napp = { type = \"bulk\" }\ntcp = { variant = \"cubic\" }\n\
                    [[flows]]\nname = \"quiet\"\napp = { type = \"bulk\" }\ntcp = { nagle = false, send_buffer = \"8KiB\" }\n";
        let p = plan_from_toml(text, "knobs.toml", None, None).unwrap();
        let b: Vec<SocketBuffers> = p.flows.iter().map(|f| f.buffers).collect();
        assert_eq!(b[0], SocketBuffers { send: None, receive: Some(32_581) });
        assert_eq!(b[1], SocketBuffers::default());
        assert_eq!(b[2], SocketBuffers { send: Some(8192), receive: None });
        assert_eq!(p.flows.iter().map(|f| f.nodelay).collect::<Vec<_>>(), vec![false, false, true]);
        assert_eq!(p.flows.iter().map(|f| f.congestion).collect::<Vec<_>>(), vec![None, Some("cubic"), None]);
        let setup = p.flows[0].setup();
        assert_eq!((setup.file_reads, setup.receive_buffer, setup.paced_reads), (Some((8192, 10_000_000)), Some(32_581), None));
        assert_eq!(p.flows[1].setup().file_reads, None);
    }

    #[test]
    fn per_packet_tables_beyond_the_budget_are_refused_before_sending() {
        // -C 10000 for 30 s: 300 000 packets (hand count), within the budget; for 500 s:
        // 5 000 000, beyond 4 M.
        let count = |ms| plan_from_toml(&ditg_flow_toml(&DitgFlags { rate_pps: 10_000.0, duration_ms: ms, ..DitgFlags::default() }).unwrap(), "f", None, None).unwrap().planned_packets();
        assert_eq!(count(30_000), Some(300_000));
        assert_eq!(check_packet_tables(count(30_000)), Ok(()));
        let e = check_packet_tables(count(500_000)).unwrap_err();
        assert!(e.contains("5000000 packets") && e.contains("out=...") && e.contains("packets=False") && e.contains("2.5 GB"), "{e}");
        assert_eq!(check_packet_tables(None), Ok(()), "a byte transfer's count is unknown");
    }

    #[test]
    fn bad_flags_say_what_is_valid() {
        let e = ditg_flow_toml(&DitgFlags { protocol: "SCTP".into(), ..DitgFlags::default() }).unwrap_err();
        assert!(e.contains("UDP or TCP"), "{e}");
        assert!(ditg_flow_toml(&DitgFlags { rate_pps: 0.0, ..DitgFlags::default() }).unwrap_err().contains("-C"));
        assert!(ditg_flow_toml(&DitgFlags { size: 70_000, ..DitgFlags::default() }).unwrap_err().contains("65507"));
    }

    #[test]
    fn a_flows_file_keeps_its_start_stop_and_the_duration_override_clips_them() {
        let text = "[[flows]]\nname = \"v\"\nstart = \"1s\"\nstop = \"5s\"\napp = { type = \"cbr\", size = \"160B\", interval = \"20ms\" }\n\
                    [[flows]]\nname = \"b\"\napp = { type = \"bulk\", bytes = \"1MiB\" }\n";
        let p = plan_from_toml(text, "two.toml", Some(Duration::from_secs(3)), None).unwrap();
        assert_eq!(p.name, "two");
        assert_eq!((p.flows[0].start_ns, p.flows[0].stop_ns), (1_000_000_000, 3_000_000_000));
        assert_eq!((p.flows[1].proto, p.flows[1].volume_bytes()), (Proto::Tcp, Some(1 << 20)));
        assert!(p.flows[1].messages.is_none());
        assert_eq!(p.flows[0].deadline, Some(Duration::from_millis(300)), "the scenario's UDP playout default");
    }

    #[test]
    fn a_flow_with_start_jitter_starts_where_the_simulator_starts_it() {
        // The same draw as lasthop-sim (Flow::start_time on the run's streams): seeds move the
        // start within [start, start + jitter), and the plan follows the scenario exactly.
        let text = "[[flows]]\nname = \"v\"\nstart = \"1s\"\nstart_jitter = \"500ms\"\n\
                    app = { type = \"cbr\", size = \"160B\", interval = \"20ms\" }\n";
        let starts: Vec<u64> = (1..=3)
            .map(|seed| {
                let p = plan_from_toml(text, "j.toml", Some(Duration::from_secs(5)), Some(seed)).unwrap();
                let s = flows_from_toml_str(text, "j.toml").unwrap();
                assert_eq!(p.flows[0].start_ns, s.flows[0].start_time(&RngStreams::new(seed)).0);
                p.flows[0].start_ns
            })
            .collect();
        assert!(starts.iter().all(|&t| (1_000_000_000..1_500_000_000).contains(&t)), "{starts:?}");
        assert!(starts[0] != starts[1] || starts[1] != starts[2], "three seeds, one start: {starts:?}");
    }
}
