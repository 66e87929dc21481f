//! The emulate world's own section of `summary.json` (`emulator`): what the driver counted and
//! how late it released packets, the kernel sockets' end state, the captures, the packet
//! processors' bridge to bytes, the generator's sessions, the receiver-side windows written, and
//! the kernel's TCP counters per namespace. Typed, serialised once; the run report proper
//! (flows, hops, processors) is lasthop-core's `RunReport`, as in every world.

use crate::apps::AppReport;
use crate::capture::Captures;
use crate::driver::DriverStats;
use crate::mechanisms::MechanismStats;
use crate::observe::TcpInfoSample;
use lasthop_core::metrics::{DelayStats, JitterStats};
use lasthop_gen::clock::Clock;
use lasthop_gen::results::MeasureFlow;
use serde::Serialize;

/// `summary.json`'s `emulator` section.
#[derive(Clone, Debug, Serialize)]
pub struct EmulatorReport {
    pub packets_read: u64,
    pub packets_written: u64,
    pub malformed_packets: u64,
    pub unroutable_packets: u64,
    pub other_packets: u64,
    pub signalling_packets: u64,
    pub write_errors: u64,
    /// Packets a router inside the emulator discarded because their TTL ran out (RFC 1812
    /// §5.3.1; no ICMP Time Exceeded is sent).
    pub ttl_expired_packets: u64,
    pub release_lateness_us: Lateness,
    /// Releases per lateness bucket k: [2^(k-1), 2^k) ns (bucket 0: on time).
    pub release_lateness_log2_ns: Vec<u64>,
    pub wakeups: u64,
    pub wake_latency_us: WakeLatency,
    pub spin_us: f64,
    pub push_flags_cleared: u64,
    pub realtime_scheduling: bool,
    /// Whether the kernel held idle CPUs at 0 µs wake-up latency for the run (PM QoS), and if
    /// asked for but refused, why.
    pub cpus_kept_awake: bool,
    pub cpus_kept_awake_error: Option<String>,
    /// The driver's CPU and the CPUs the TUN devices steer the kernel's receives to
    /// (steering.rs); null with a single CPU. An error names what could not be set.
    pub receive_steering: Option<crate::steering::Steering>,
    pub receive_steering_error: Option<String>,
    pub apps: Vec<AppEntry>,
    /// Per capture, what it recorded each way: transmitted (from the node, at the start of
    /// transmission) and received (at arrival), packets and IP bytes.
    pub captures: Vec<CaptureEntry>,
    pub processors: ProcessorBridge,
    pub generator: Vec<GeneratorEntry>,
    /// Paper 004's receiver-side windows written into the kernel receivers' ACKs (the simulator
    /// reports the same as its flows' tcp.receiver_awnd_cap_bytes / _max_retransmissions).
    pub receiver_awnd: Vec<ReceiverAwnd>,
    /// Per namespace of a kernel TCP flow's end, the non-zero `Tcp:` and `TcpExt:` counters of
    /// /proc/net/snmp and netstat after the run (names as the kernel gives them).
    pub kernel_tcp: serde_json::Map<String, serde_json::Value>,
}

/// Release lateness quantiles and maximum, µs.
#[derive(Clone, Debug, Serialize)]
pub struct Lateness {
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub max: f64,
}

/// Timer wake-up latency quantiles, µs.
#[derive(Clone, Debug, Serialize)]
pub struct WakeLatency {
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
}

/// A kernel TCP flow's sockets: bytes each way and the sender's last TCP_INFO.
#[derive(Clone, Debug, Serialize)]
pub struct AppEntry {
    pub flow: String,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub error: Option<String>,
    pub sender_tcp_info: Option<TcpInfoEntry>,
}

/// One TCP_INFO sample in report units.
#[derive(Clone, Debug, Serialize)]
pub struct TcpInfoEntry {
    pub time_s: f64,
    pub mss_bytes: u32,
    pub cwnd_segments: u32,
    /// Null before the first loss (the kernel's "infinite" ssthresh).
    pub ssthresh_segments: Option<u32>,
    pub srtt_ms: f64,
    pub rto_ms: f64,
    pub retransmitted_segments: u32,
    pub timeouts: u16,
    pub bytes_acked: u64,
}

/// One capture point's counts.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureEntry {
    pub capture: String,
    pub node: String,
    pub peer: Option<String>,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub error: Option<String>,
}

/// What the packet processors' bridge to real bytes did.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessorBridge {
    pub packets_processed: u64,
    pub windows_rewritten: u64,
    pub packets_emitted: u64,
    pub packets_unparsed: u64,
}

/// A UDP flow run as a session of the measure world's generator: its clock and what it
/// measured, beside the flow as the emulated network carried it; or the error that stopped it.
#[derive(Clone, Debug, Serialize)]
pub struct GeneratorEntry {
    pub flow: String,
    #[serde(flatten)]
    pub measured: Option<GeneratorMeasured>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GeneratorMeasured {
    pub clock: Clock,
    pub interrupted: bool,
    pub receiver_malformed: u64,
    pub measure: Option<MeasureFlow>,
    /// The flow as the emulated network carried it: from the read at the sender's TUN to the
    /// model's delivery time at the receiver's, without the hosts' scheduling or the emulator's
    /// release lateness.
    pub network: NetworkView,
}

#[derive(Clone, Debug, Serialize)]
pub struct NetworkView {
    pub delay_ms: DelayStats,
    pub jitter_ms: JitterStats,
}

/// A receiver-side window (paper 004) the emulator wrote into a kernel receiver's ACKs.
#[derive(Clone, Debug, Serialize)]
pub struct ReceiverAwnd {
    pub flow: String,
    pub cap_bytes: u64,
    pub retransmissions: u32,
    pub max_retransmissions: u32,
    pub live: bool,
}

impl EmulatorReport {
    /// The driver's counts, the kernel sockets' end state and the captures' counts; the other
    /// parts are filled as the run's output is assembled.
    pub fn new(st: &DriverStats, apps: &[AppReport], captures: &Captures, names: &[String], processors: MechanismStats) -> Self {
        let us = |q| st.lateness_quantile_ns(q).map(|ns| ns as f64 / 1e3);
        EmulatorReport {
            packets_read: st.packets_read,
            packets_written: st.packets_written,
            malformed_packets: st.malformed,
            unroutable_packets: st.unroutable,
            other_packets: st.other_packets,
            signalling_packets: st.signalling_packets,
            write_errors: st.write_errors,
            ttl_expired_packets: st.ttl_expired,
            release_lateness_us: Lateness { p50: us(0.5), p99: us(0.99), p999: us(0.999), max: st.lateness_max_ns as f64 / 1e3 },
            release_lateness_log2_ns: st.lateness_log2.to_vec(),
            wakeups: st.wakeups,
            wake_latency_us: WakeLatency { p50: st.wake_quantile_us(0.5), p99: st.wake_quantile_us(0.99), p999: st.wake_quantile_us(0.999) },
            spin_us: st.spin_ns as f64 / 1e3,
            push_flags_cleared: st.push_flags_cleared,
            realtime_scheduling: st.realtime,
            cpus_kept_awake: st.cpus_kept_awake,
            cpus_kept_awake_error: st.cpus_kept_awake_error.clone(),
            receive_steering: st.steering.clone(),
            receive_steering_error: st.steering_error.clone(),
            apps: apps
                .iter()
                .map(|a| AppEntry {
                    flow: a.name.clone(),
                    bytes_sent: a.bytes_sent,
                    bytes_received: a.bytes_received,
                    error: a.error.clone(),
                    sender_tcp_info: a.sender_info.last().map(TcpInfoEntry::from),
                })
                .collect(),
            captures: captures
                .list
                .iter()
                .map(|c| CaptureEntry {
                    capture: c.spec.spec.clone(),
                    node: names[c.spec.node as usize].clone(),
                    peer: c.spec.peer.map(|p| names[p as usize].clone()),
                    tx_packets: c.tx.packets,
                    tx_bytes: c.tx.bytes,
                    rx_packets: c.rx.packets,
                    rx_bytes: c.rx.bytes,
                    error: c.error.clone(),
                })
                .collect(),
            processors: ProcessorBridge {
                packets_processed: processors.processed,
                windows_rewritten: processors.windows_rewritten,
                packets_emitted: processors.emitted,
                packets_unparsed: processors.unparsed,
            },
            generator: Vec::new(),
            receiver_awnd: Vec::new(),
            kernel_tcp: serde_json::Map::new(),
        }
    }

    /// As JSON, for the bindings and for tests that read it by key.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("the emulator report serializes")
    }
}

impl From<&TcpInfoSample> for TcpInfoEntry {
    fn from(i: &TcpInfoSample) -> Self {
        TcpInfoEntry {
            time_s: i.at.as_secs_f64(),
            mss_bytes: i.mss,
            cwnd_segments: i.cwnd,
            ssthresh_segments: (i.ssthresh < 0x7fff_ffff).then_some(i.ssthresh),
            srtt_ms: i.srtt_us as f64 / 1e3,
            rto_ms: i.rto_us as f64 / 1e3,
            retransmitted_segments: i.total_retrans,
            timeouts: i.total_rto,
            bytes_acked: i.bytes_acked,
        }
    }
}
