//! Flows: transport, application (CBR, on/off, video, bulk, file, D-ITG's stochastic traffic
//! and presets), TCP parameters and receiver-side window control — and the checks of a flow's
//! application and TCP settings.

use crate::*;
use lasthop_core::units::{BitRate, Bytes};
use lasthop_core::rng::{uniform_below, RngStreams};
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// Transport protocol of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Tcp,
    Udp,
}

/// A traffic flow from `src` to `dst`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub name: String,
    #[schemars(with = "String")]
    pub src: Spanned<String>,
    #[schemars(with = "String")]
    pub dst: Spanned<String>,
    /// When the application starts (default "0s").
    #[serde(default)]
    pub start: Duration,
    /// Randomizes the start: the application starts at `start` + U[0, start_jitter), drawn
    /// from the flow's own random stream, so that runs with different seeds differ even when
    /// nothing else in the scenario is random (ns-3 users randomize start times for this).
    /// Default "0s": exactly at `start`. `start` + `start_jitter` must not pass `stop` or the
    /// simulation's duration.
    #[serde(default, skip_serializing_if = "Duration::is_zero")]
    #[schemars(schema_with = "zero_default_duration")]
    pub start_jitter: Duration,
    /// When the application stops sending (default: the end of the run).
    #[serde(default)]
    pub stop: Option<Duration>,
    /// tcp or udp; defaults to tcp for bulk, file and the telnet preset, udp for the others.
    #[serde(default)]
    pub transport: Option<Transport>,
    /// DiffServ code point written in the IP header (0..63).
    #[serde(default)]
    pub dscp: u8,
    /// Packets arriving later than this after being sent count as application loss (late).
    /// Default: 300 ms for UDP flows (Koga et al.'s playout deadline), none for TCP; "0s" = none.
    #[serde(default)]
    pub deadline: Option<Duration>,
    /// The receiving application drops a packet that arrives after one sent later (its
    /// playout point has passed) and counts it as application loss, as Koga et al. count
    /// out-of-order delivery. UDP flows only; default false.
    #[serde(default)]
    pub discard_reordered: bool,
    /// UDP flows: the receiver sends each packet straight back (an echo, as irtt or netperf's
    /// UDP_RR and D-ITG's round-trip meter do), and the flow reports its round trips and the
    /// responsiveness they give (`round_trip`: RTT statistics, the best 95 %'s trimmed mean,
    /// RPM). Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub echo: bool,
    pub app: App,
    /// TCP parameters (TCP flows only).
    #[serde(default)]
    pub tcp: Option<TcpParams>,
    /// Which world makes the flow's traffic in an emulation: "real" (default: real sockets in
    /// the end hosts' network namespaces) or "model" (the emulator generates it itself, as a
    /// modelled station's traffic on the same hops as the real flows: a busy network without
    /// hosts; TCP by the simulator's endpoints). The simulator models every flow, so it reads
    /// both the same way.
    #[serde(default, skip_serializing_if = "FlowWorld::is_real")]
    pub world: FlowWorld,
}

/// Where an emulated flow's traffic comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FlowWorld {
    /// Real sockets in the end hosts' namespaces.
    #[default]
    Real,
    /// Generated inside the emulator from the flow's traffic model.
    Model,
}

impl FlowWorld {
    pub fn is_real(&self) -> bool {
        *self == FlowWorld::Real
    }
}

/// A duration defaulting to zero that is left out of the resolved scenario while zero (so
/// scenarios without it serialise as before); the schema still publishes its default.
fn zero_default_duration(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
    let mut s = schemars::schema::SchemaObject::default();
    s.subschemas().all_of = Some(vec![gen.subschema_for::<Duration>()]);
    s.metadata().default = Some(serde_json::to_value(Duration::ZERO).expect("a duration serialises"));
    s.into()
}

impl Flow {
    /// When the application starts in a run drawing from `rng`: `start`, plus U[0,
    /// start_jitter) from the stream `flow/<name>/start` when there is jitter. A flow without
    /// jitter draws nothing (and no other stream depends on this one).
    pub fn start_time(&self, rng: &RngStreams) -> Duration {
        if self.start_jitter.is_zero() {
            return self.start;
        }
        let mut stream = rng.stream(&format!("flow/{}/start", self.name));
        Duration(self.start.0 + uniform_below(&mut stream, self.start_jitter.0))
    }
}

/// Default playout deadline of UDP flows (paper 004).
pub const DEFAULT_UDP_DEADLINE: Duration = Duration::from_millis(300);

impl Flow {
    /// The deadline in force: explicit, else 300 ms for UDP; "0s" disables.
    pub fn effective_deadline(&self) -> Option<Duration> {
        match self.deadline {
            Some(d) if d.0 == 0 => None,
            Some(d) => Some(d),
            None if self.transport() == Transport::Udp => Some(DEFAULT_UDP_DEADLINE),
            None => None,
        }
    }

    pub fn transport(&self) -> Transport {
        self.transport.unwrap_or(match self.app {
            App::Bulk { .. } | App::File { .. } | App::Preset { name: PresetName::Telnet, .. } => Transport::Tcp,
            App::Cbr { .. } | App::Onoff { .. } | App::Video { .. } | App::Stochastic { .. } | App::Preset { .. } => {
                Transport::Udp
            }
        })
    }
}

/// Distribution of on/off period lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Periods {
    Constant,
    Exponential,
}

/// The application that drives a flow.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum App {
    /// Greedy sender; with `bytes`, stops after that many and records its completion time.
    Bulk {
        #[serde(default)]
        bytes: Option<Bytes>,
    },
    /// One transfer of `bytes`; its response time is recorded (when the receiving application
    /// has read, and with a device stored, the last byte). With any of the fields below, or a
    /// `device` at either end, the two applications run Hur & Hong's file loop (paper 000) on
    /// their hosts: blocking `send()`s of `message` bytes, `recv()`s and storage operations of
    /// `app_buffer` bytes, and an inter-packet `Sleep` after each call.
    File {
        bytes: Bytes,
        /// Bytes per `send()` (the paper's "packet size at the application layer"); default
        /// 4096 with the file loop.
        #[serde(default)]
        message: Option<Bytes>,
        /// Application buffer for `recv()` and storage operations; default 8KiB.
        #[serde(default)]
        app_buffer: Option<Bytes>,
        /// Inter-packet delay after each `send()` (rounded to the sender's timer).
        #[serde(default)]
        send_delay: Option<Duration>,
        /// Inter-packet delay after each `recv()` (rounded to the receiver's timer).
        #[serde(default)]
        receive_delay: Option<Duration>,
    },
    /// Constant bit rate: `size` payload bytes every `interval`.
    Cbr { size: Bytes, interval: Duration },
    /// On/off source: while on, `size`-byte packets at `rate`.
    Onoff {
        size: Bytes,
        rate: BitRate,
        on: Duration,
        off: Duration,
        #[serde(default = "default_periods")]
        periods: Periods,
    },
    /// Synthetic VBR video calibrated to a published trace (models.md §5.4): 25 frames/s,
    /// GoP IBBPBBPBBPBB, frames cut into packets of at most `packet_size` payload bytes.
    Video {
        preset: VideoPreset,
        #[serde(default = "default_video_packet")]
        packet_size: Bytes,
    },
    /// D-ITG's traffic: each message's inter-departure time drawn from `idt` and its payload
    /// size from `size`, e.g. `idt = { dist = "pareto", shape = 1.5, scale = "10ms" }`,
    /// `size = { dist = "uniform", min = "100B", max = "320B" }`. With `on` and `off`, messages
    /// come in bursts (D-ITG `-B`): an on period of the drawn length, then a drawn off period
    /// after the wait that crossed its end. A message larger than the path's largest datagram
    /// leaves as back-to-back packets (IP fragments would).
    Stochastic {
        idt: TimeDist,
        size: SizeDist,
        /// On period lengths (with `off`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on: Option<TimeDist>,
        /// Off period lengths (with `on`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        off: Option<TimeDist>,
        /// Stop after this many messages (D-ITG `-z`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
        /// Stop once this many payload bytes are sent; the last message may pass it (D-ITG `-k`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<Bytes>,
    },
    /// A named traffic model: D-ITG's presets ("voip-g711.1", "voip-g711.2", "voip-g729.2",
    /// "voip-g729.3", "voip-g723.1", "telnet", "dns", "quake3", "cs-active", "cs-idle"), the
    /// home scenario's game flows ("game-down", "game-up") and the synthetic videos
    /// ("video-starwars-mpeg4-high", ...).
    Preset {
        name: PresetName,
        /// VoIP presets: "rtp" (12-byte header, default) or "crtp" (2 bytes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        header: Option<VoipHeader>,
        /// VoIP presets: voice activity detection, D-ITG's way (voice bytes × 0.65).
        #[serde(default)]
        vad: bool,
        /// Stop after this many messages (D-ITG `-z`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
        /// Stop once this many payload bytes are sent (D-ITG `-k`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<Bytes>,
    },
}

/// Video traces that the synthetic source reproduces (statistics from Fitzek & Reisslein 2001).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VideoPreset {
    /// Star Wars IV, MPEG-4, high quality: 275 kb/s, frame CoV 0.66.
    StarwarsMpeg4High,
    StarwarsMpeg4Medium,
    StarwarsMpeg4Low,
    /// Lecture Room-Cam, MPEG-4, medium quality: 58 kb/s.
    LectureMpeg4Medium,
    LectureMpeg4Low,
}

pub(crate) fn default_video_packet() -> Bytes {
    Bytes(1472)
}

pub(crate) fn default_periods() -> Periods {
    Periods::Constant
}

/// TCP parameters; defaults follow the RFCs (see each constant).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpParams {
    /// "newreno" (default; the papers'), "cubic" (RFC 9438 congestion avoidance) or "bbr"
    /// (BBR v1: paced at the estimated bottleneck rate, window 2 × BDP).
    #[serde(default)]
    pub variant: CcVariant,
    /// Maximum segment size; default MTU − 40 of the first link.
    #[serde(default)]
    pub mss: Option<Bytes>,
    /// SACK (RFC 2018) with RFC 6675 recovery. Off by default: the papers' NewReno has none.
    #[serde(default)]
    pub sack: bool,
    /// ECN (RFC 3168): asked for in the SYN (both ends of the flow ask); new data goes ECT(0),
    /// a CE mark is echoed and the sender reduces its window once per window instead of losing
    /// a packet. Off by default (the papers' TCP has none; Linux's default only accepts it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
    /// Initial window in segments; default RFC 5681 §3.1.
    #[serde(default)]
    pub initial_cwnd: Option<u32>,
    /// Delayed-ACK timer (RFC 1122: below 500 ms; default 200 ms as in BSD and ns-3).
    #[serde(default = "default_delayed_ack")]
    pub delayed_ack: Duration,
    /// false acknowledges every segment at once.
    #[serde(default = "default_true")]
    pub delayed_ack_enabled: bool,
    #[serde(default = "default_true")]
    pub nagle: bool,
    #[serde(default = "default_buffer")]
    pub send_buffer: Bytes,
    #[serde(default = "default_buffer")]
    pub receive_buffer: Bytes,
    /// RFC 7323 window scaling.
    #[serde(default = "default_true")]
    pub window_scale: bool,
    #[serde(default = "default_rto_initial")]
    pub rto_initial: Duration,
    #[serde(default = "default_rto_min")]
    pub rto_min: Duration,
    #[serde(default = "default_rto_max")]
    pub rto_max: Duration,
    #[serde(default = "default_dupthresh")]
    pub dupack_threshold: u32,
    /// NewReno's congestion-avoidance increase: "bytes" (default; RFC 3465 byte counting, one
    /// SMSS per cwnd of acknowledged data, as Linux) or "per_ack" (SMSS²/cwnd per ACK, as ns-2,
    /// ns-3 and OPNET: with delayed ACKs about half as fast). CUBIC and BBR ignore it.
    #[serde(default)]
    pub ca_increase: CaIncrease,
    /// RFC 3042 limited transmit: one new segment on each of the first two duplicate ACKs (on by
    /// default, as in Linux and ns-3).
    #[serde(default = "default_true")]
    pub limited_transmit: bool,
    /// RFC 3465 §2.3's L: in slow start one ACK grows cwnd by at most L SMSS (cwnd +=
    /// min(N, L·SMSS)). Default 1, RFC 5681 eq. 2: with delayed ACKs the window grows 1.5× per
    /// round trip. 2 is RFC 3465's largest: it doubles per round trip, as Linux's slow start
    /// does (`tcp_slow_start` adds every segment acknowledged, without a limit).
    #[serde(default = "default_abc_limit", skip_serializing_if = "is_default_abc_limit")]
    pub abc_limit: u32,
    /// When a partial ACK of NewReno's recovery without SACK restarts the retransmission timer
    /// (RFC 6582 §4.2): "impatient" (default; only the first partial ACK, so recovery of many
    /// losses ends in a timeout and slow start) or "slow_but_steady" (every partial ACK, as
    /// Linux does: one hole repaired per round trip until all are).
    #[serde(default, skip_serializing_if = "PartialAckTimer::is_impatient")]
    pub partial_ack_timer: PartialAckTimer,
    /// The window a full ACK ends fast recovery with (RFC 6582 §3.2 step 3): "flight" (default,
    /// option 1: min(ssthresh, max(FlightSize, SMSS) + SMSS), no burst) or "ssthresh" (option
    /// 2, as Linux's `tcp_end_cwnd_reduction`: when little is in flight the sender bursts up to
    /// ssthresh at once).
    #[serde(default, skip_serializing_if = "RecoveryExit::is_flight")]
    pub recovery_exit: RecoveryExit,
    /// Where the sender sets PSH and what the receiver makes of it: "rfc" (default; PSH on the
    /// segment that ends the written data, ignored by the receiver, which acknowledges every
    /// second full-sized segment, RFC 1122 §4.2.3.2) or "linux" (PSH at the end of every
    /// application write — a bulk writer refills what each ACK frees, so about every second
    /// segment — and a full-sized segment carrying PSH acknowledged as soon as the application
    /// has read it, Linux ≥ 5.13's `tcp_measure_rcv_mss`; EMULATION.md counts both on real
    /// packets).
    #[serde(default, skip_serializing_if = "PushRule::is_rfc")]
    pub push: PushRule,
    /// What the sender does when the window ends inside a segment: "rfc" (default; the runt
    /// waits until a full segment fits while data is in flight, sender SWS avoidance, RFC 9293
    /// §3.8.6.2.1) or "linux" (the part that fits goes out behind a full segment unless a
    /// segment shorter than the MSS is unacknowledged: `tcp_mss_split_point` with Minshall's
    /// Nagle; a window-limited Linux sender keeps a fraction of a segment more in flight and
    /// sends about one sub-MSS segment per round trip; EMULATION.md).
    #[serde(default, skip_serializing_if = "WindowEdge::is_rfc")]
    pub window_edge: WindowEdge,
    /// How cwnd moves during fast recovery without SACK: "newreno" (default; RFC 6582 §3.2:
    /// inflated by each duplicate ACK, deflated by each partial ACK) or "prr" (RFC 6937's
    /// Proportional Rate Reduction with the slow-start bound, as Linux's `tcp_cwnd_reduction`
    /// runs it for every recovery: sends in proportion to what the duplicate ACKs report, and
    /// the holes it cannot see without SACK count as in flight; EMULATION.md).
    #[serde(default, skip_serializing_if = "RecoveryWindow::is_newreno")]
    pub recovery_window: RecoveryWindow,
    /// The receiver's advertised window over the connection: "full" (default; the free
    /// buffer from the first segment, ACKs by RFC 1122 §4.2.3.2) or "linux" (Linux's
    /// `rcv_ssthresh`: 64 KB at first, two MSS more per data segment up to the buffer, each
    /// growth acknowledged at once — a Linux receiver ACKs every segment through a bulk
    /// transfer's first few hundred segments; EMULATION.md).
    #[serde(default, skip_serializing_if = "ReceiveWindow::is_full")]
    pub receive_window: ReceiveWindow,
    /// Tick of a coarse retransmission clock (e.g. "500ms", BSD's slow timer and the OPNET
    /// model of paper 003): G of RFC 6298 and every RTO a whole number of ticks. Default: an
    /// exact clock with G = 1 ms.
    #[serde(default)]
    pub timer_granularity: Option<Duration>,
    /// Rate at which the receiving application reads (default: as fast as data arrives).
    #[serde(default)]
    pub read_rate: Option<BitRate>,
    /// Bytes per application read when `read_rate` is set (default 8KiB).
    #[serde(default)]
    pub read_size: Option<Bytes>,
    /// When the receiver announces a window its application's reads opened: "immediate"
    /// (default; Linux's rule) or "delayed" until the delayed-ACK timer fires, as the Windows CE
    /// PDA of paper 000 does (its window updates lag by up to ~115 ms, Sect. 4.1).
    #[serde(default)]
    pub window_update: WindowUpdate,
    /// Koga et al.'s receiver-based advertised window (paper 004, eqs. 1-3) at the receiver.
    #[serde(default)]
    pub receiver_awnd: Option<ReceiverAwndParams>,
}

/// NewReno's congestion-avoidance increase (see `TcpParams::ca_increase`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaIncrease {
    #[default]
    Bytes,
    PerAck,
}

/// RFC 6582 §4.2's variants of the retransmission timer in NewReno's recovery (see
/// `TcpParams::partial_ack_timer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartialAckTimer {
    #[default]
    Impatient,
    SlowButSteady,
}

impl PartialAckTimer {
    pub fn is_impatient(&self) -> bool {
        *self == PartialAckTimer::Impatient
    }
}

/// RFC 6582 §3.2 step 3's options for the window at the end of fast recovery (see
/// `TcpParams::recovery_exit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryExit {
    #[default]
    Flight,
    Ssthresh,
}

impl RecoveryExit {
    pub fn is_flight(&self) -> bool {
        *self == RecoveryExit::Flight
    }
}

/// Where PSH is set and how the receiver answers it (see `TcpParams::push`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PushRule {
    #[default]
    Rfc,
    Linux,
}

impl PushRule {
    pub fn is_rfc(&self) -> bool {
        *self == PushRule::Rfc
    }
}

/// The receiver's advertised window over the connection (see `TcpParams::receive_window`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReceiveWindow {
    #[default]
    Full,
    Linux,
}

impl ReceiveWindow {
    pub fn is_full(&self) -> bool {
        *self == ReceiveWindow::Full
    }
}

/// cwnd during fast recovery without SACK (see `TcpParams::recovery_window`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryWindow {
    #[default]
    Newreno,
    Prr,
}

impl RecoveryWindow {
    pub fn is_newreno(&self) -> bool {
        *self == RecoveryWindow::Newreno
    }
}

/// The sender at the window's edge (see `TcpParams::window_edge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WindowEdge {
    #[default]
    Rfc,
    Linux,
}

impl WindowEdge {
    pub fn is_rfc(&self) -> bool {
        *self == WindowEdge::Rfc
    }
}

pub(crate) fn default_abc_limit() -> u32 {
    1
}

pub(crate) fn is_default_abc_limit(l: &u32) -> bool {
    *l == 1
}

/// When a receive window opened by the application's reads is announced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WindowUpdate {
    #[default]
    Immediate,
    Delayed,
}

/// Eq. 1's retransmission count when it is neither given nor observable (Koga et al.: "two
/// retransmissions are actually executed in most of the simulation cases").
pub const DEFAULT_AWND_RETRANSMISSIONS: u32 = 2;

/// Inputs of Koga et al.'s awnd: the window is round(awnd) full-sized segments, or `segments`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiverAwndParams {
    /// Link bandwidth from layer 2, e.g. "384kbps".
    pub link_rate: BitRate,
    /// UDP rate from layer 7, e.g. "64kbps".
    pub udp_rate: BitRate,
    /// Propagation delay of the wireless link (the paper: 30 ms).
    pub propagation: Duration,
    /// Layer-2 retransmissions in eq. 1. Omitted: observed live from the W-CDMA downlink that
    /// delivers to this receiver (the most any PDU needed in the last second, at least 1), or 2
    /// (the paper's observation) if the receiver is not behind a W-CDMA channel.
    #[serde(default)]
    pub retransmissions: Option<u32>,
    /// TCP packet size (default 1500 B).
    #[serde(default = "default_mtu")]
    pub packet_size: Bytes,
    /// The window in segments, set directly instead of round(eq. 3), as the paper's Figs. 6-8 and
    /// Table 5 do: Table 5 uses the optima measured in Fig. 8, 6/5/4 segments at UDP 32/64/128
    /// kb/s, where eq. 3 gives 5.52/5.20/4.56 (round: 6/5/5). The eq. 3 inputs are then unused.
    #[serde(default)]
    pub segments: Option<u32>,
}

impl ReceiverAwndParams {
    /// Koga et al.'s eq. 3 as a window in bytes: round(awnd) full segments of `mss` bytes, or
    /// the `segments` given; `retransmissions` is eq. 1's count (given, observed or the default).
    /// The simulator's receiving TCP and the emulator's ACK rewriting both cap their window here.
    pub fn cap_bytes(&self, retransmissions: u32, mss: u32) -> u64 {
        if let Some(n) = self.segments {
            return n as u64 * mss as u64;
        }
        let a = lasthop_core::mechanisms::receiver_awnd::ReceiverAwnd {
            link_bps: self.link_rate.0 as f64,
            udp_bps: self.udp_rate.0 as f64,
            propagation: self.propagation,
            retransmissions: retransmissions.max(1),
            packet_bytes: self.packet_size.0 as u32,
        };
        (a.awnd_packets().round().max(1.0) as u64) * mss as u64
    }
}

/// A TCP congestion control.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CcVariant {
    /// RFC 5681 / RFC 6582 (the papers' TCP).
    #[default]
    Newreno,
    /// RFC 9438.
    Cubic,
    /// BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00).
    Bbr,
}

impl Default for TcpParams {
    fn default() -> Self {
        toml::from_str("").expect("all TCP fields have defaults")
    }
}
impl Scenario {
    pub(crate) fn validate_app(&self, f: &Flow, fid: &str, path_mtu: Option<u64>, p: &mut Vec<String>) {
        let transport = f.transport();
        match (&f.app, transport) {
            (App::Bulk { .. } | App::File { .. }, Transport::Udp) => {
                p.push(format!("{fid}.app: bulk and file transfers need transport = \"tcp\""))
            }
            (App::Onoff { .. }, Transport::Tcp) => p.push(format!("{fid}.app: onoff runs over udp only")),
            (App::Video { .. }, Transport::Tcp) => p.push(format!("{fid}.app: video runs over udp only")),
            (App::Preset { name, .. }, Transport::Tcp) if name.is_video() => {
                p.push(format!("{fid}.app: video runs over udp only"))
            }
            _ => {}
        }
        self.validate_ditg_app(f, fid, p);
        if let App::File { message, app_buffer, .. } = &f.app {
            for (field, v) in [("message", message), ("app_buffer", app_buffer)] {
                if v.is_some_and(|b| b.0 == 0) {
                    p.push(format!("{fid}.app.{field} must be positive, e.g. \"4096B\""));
                }
            }
            if self.uses_file_loop(f) && f.tcp.as_ref().is_some_and(|t| t.read_rate.is_some()) {
                p.push(format!(
                    "{fid}.tcp.read_rate cannot pace a file transfer whose hosts run the file loop (a device or app.message/app_buffer/send_delay/receive_delay); drop one of the two"
                ));
            }
        }
        match &f.app {
            App::File { bytes, .. } if bytes.0 == 0 => p.push(format!("{fid}.app.bytes must be positive")),
            App::Bulk { bytes: Some(b) } if b.0 == 0 => p.push(format!("{fid}.app.bytes must be positive")),
            App::Cbr { size, interval } => {
                if size.0 == 0 {
                    p.push(format!("{fid}.app.size must be positive"));
                }
                if interval.0 == 0 {
                    p.push(format!("{fid}.app.interval must be positive"));
                }
            }
            App::Onoff { size, on, rate, .. } => {
                if size.0 == 0 {
                    p.push(format!("{fid}.app.size must be positive"));
                }
                if on.0 == 0 {
                    p.push(format!("{fid}.app.on must be positive"));
                }
                // The packet interval while on: below 1 µs one source would take a run's time.
                let gap = rate.tx_time(size.0);
                if size.0 > 0 && gap < MIN_PACKET_INTERVAL {
                    p.push(format!(
                        "{fid}.app: size {size} at rate {rate} sends a packet every {gap}, below the {MIN_PACKET_INTERVAL} floor; valid: a rate of at most {}",
                        BitRate(size.0 * 8 * 1_000_000)
                    ));
                }
            }
            _ => {}
        }
        if transport == Transport::Tcp && f.echo {
            p.push(format!("{fid}.echo applies to UDP flows (the receiver sends each datagram back); a TCP flow's round trips are its ACKs (probes.tcp traces them)"));
        }
        if transport == Transport::Tcp && f.discard_reordered {
            p.push(format!("{fid}.discard_reordered applies to UDP flows; TCP puts reordered segments back in order"));
        }
        if transport == Transport::Udp {
            if f.tcp.is_some() {
                p.push(format!("{fid}.tcp is set but the flow is UDP"));
            }
            let size = match &f.app {
                App::Cbr { size, .. } | App::Onoff { size, .. } => size.0,
                App::Video { packet_size, .. } => packet_size.0,
                _ => 0,
            };
            if let Some(mtu) = path_mtu {
                if size + 28 > mtu {
                    p.push(format!(
                        "{fid}.app.size {} plus 28 B of IP/UDP headers exceeds the path MTU {}; valid: at most {}B (no IP fragmentation is modelled)",
                        Bytes(size),
                        Bytes(mtu),
                        mtu - 28
                    ));
                }
            }
        } else if let Some(t) = &f.tcp {
            if let (Some(mss), Some(mtu)) = (t.mss, path_mtu) {
                if mss.0 == 0 || mss.0 + 40 > mtu {
                    p.push(format!(
                        "{fid}.tcp.mss {mss} does not fit the path MTU {} minus 40 B of IP/TCP headers; valid: 1B to {}B",
                        Bytes(mtu),
                        mtu - 40
                    ));
                }
            }
            if t.receive_buffer.0 == 0 || t.send_buffer.0 == 0 {
                p.push(format!("{fid}.tcp buffers must be positive"));
            }
            if t.rto_min > t.rto_max {
                p.push(format!("{fid}.tcp.rto_min ({}) exceeds rto_max ({})", t.rto_min, t.rto_max));
            }
            if t.dupack_threshold == 0 {
                p.push(format!("{fid}.tcp.dupack_threshold must be at least 1"));
            }
            if t.read_size.is_some_and(|s| s.0 == 0) {
                p.push(format!("{fid}.tcp.read_size must be positive"));
            }
            if t.window_update == WindowUpdate::Delayed && !t.delayed_ack_enabled {
                p.push(format!("{fid}.tcp.window_update = \"delayed\" waits for the delayed-ACK timer, but delayed_ack_enabled = false; enable it or use \"immediate\""));
            }
            if t.initial_cwnd == Some(0) {
                p.push(format!("{fid}.tcp.initial_cwnd must be at least 1 segment"));
            }
        }
    }

}
