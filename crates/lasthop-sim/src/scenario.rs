//! The scenario file format (TOML), declared once with serde: every field has its unit in its
//! type, its default as a named constant, and `deny_unknown_fields`. The JSON Schema published in
//! `schema/scenario.schema.json` is generated from these types ([`json_schema`]).
//!
//! Loading is three steps: parse TOML (syntax errors carry a line), apply `--set` overrides on
//! the document, deserialize and then validate cross-references (node names, reachability,
//! sizes against the MTU). Every error names the file, the field and what would be valid.

use lasthop_core::units::{BitRate, Bytes, QueueLimit};
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use toml::Spanned;

pub const DEFAULT_SEED: u64 = 1;
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);
pub const DEFAULT_QUEUE: QueueLimit = QueueLimit::Packets(100);
pub const DEFAULT_MTU: Bytes = Bytes(1500);
/// Smallest MTU an IPv4 link may have (RFC 791: every host must accept 68-byte datagrams).
pub const MIN_MTU: u64 = 68;
pub const DEFAULT_TCP_BUFFER: Bytes = Bytes(128 * 1024);
pub const DEFAULT_DELAYED_ACK: Duration = Duration::from_millis(200);
pub const DEFAULT_RTO_INITIAL: Duration = Duration::from_secs(1);
pub const DEFAULT_RTO_MIN: Duration = Duration::from_secs(1);
pub const DEFAULT_RTO_MAX: Duration = Duration::from_secs(60);
/// Shortest gap between two packets of one source (below it a run crawls on one entity).
pub const MIN_PACKET_INTERVAL: Duration = Duration::from_micros(1);
/// Most per-interval rows a run may keep (duration / interval × flows, ~250 MB at the limit).
pub const MAX_INTERVAL_ROWS: u64 = 1_000_000;

fn default_seed() -> u64 {
    DEFAULT_SEED
}
fn default_interval() -> Duration {
    DEFAULT_INTERVAL
}
fn default_mtu() -> Bytes {
    DEFAULT_MTU
}
fn default_true() -> bool {
    true
}
fn default_buffer() -> Bytes {
    DEFAULT_TCP_BUFFER
}
fn default_delayed_ack() -> Duration {
    DEFAULT_DELAYED_ACK
}
fn default_rto_initial() -> Duration {
    DEFAULT_RTO_INITIAL
}
fn default_rto_min() -> Duration {
    DEFAULT_RTO_MIN
}
fn default_rto_max() -> Duration {
    DEFAULT_RTO_MAX
}
fn default_dupthresh() -> u32 {
    3
}

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub simulation: Simulation,
    #[serde(default)]
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub links: Vec<Link>,
    #[serde(default)]
    pub wlans: Vec<Wlan>,
    #[serde(default)]
    pub wcdma: Vec<Wcdma>,
    #[serde(default)]
    pub error_generators: Vec<ErrorGenerator>,
    #[serde(default)]
    pub snoop: Vec<SnoopParams>,
    #[serde(default)]
    pub flows: Vec<Flow>,
    #[serde(default)]
    pub probes: Probes,
}

/// Run-wide settings.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Simulation {
    /// A name for reports; defaults to the file name.
    #[serde(default)]
    pub name: Option<String>,
    /// Simulated time to run, e.g. "30s".
    pub duration: Duration,
    /// Seed from which every random stream is derived.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Width of the per-interval time series (default "100ms").
    #[serde(default = "default_interval")]
    pub interval: Duration,
}

/// A host or router.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub name: String,
    /// How long the host's own work takes (paper 000's slow PDA); omitted: infinitely fast.
    #[serde(default)]
    pub device: Option<Device>,
}

/// End hosts of Hur & Hong's test bed (paper 000, Table 2), as device parameters.
///
/// - `pda-ipaq3660`: Compaq iPAQ 3660, 206 MHz StrongARM, Windows CE 3.0, NOR flash, PCMCIA
///   802.11b card. 1.2 ms per received packet (PIO over PCMCIA plus the stack), 0.3 ms per
///   socket call, 2.9 Mb/s between application and socket, flash read 2.7 Mb/s and write at
///   half that (Sect. 4.2: "writing takes 2 times longer than reading"; ~170 KB/s is what NOR
///   word programming allows) with 1 ms per file operation, and a per-byte write cost growing
///   7 % per MiB already in the file (the quadratic fit of Table 5's growing write/read ratio,
///   within 1 % of its five points); 1 ms timer. The per-byte rates are calibrated so that a
///   469 KB download takes Table 6's 4.6 s and the receive/send ratio starts near Table 3's
///   1.53; the hur-hong2006 reproduction says what follows and what does not. Its stack
///   announces reopened windows lazily: use `tcp.window_update = "delayed"` on flows it receives.
/// - `pc-windows2000`: Pentium 4 2.4 GHz desktop: 10 µs per packet, 5 µs per call, 2 Gb/s
///   copy, disk 400 Mb/s both ways; Windows 2000's 10 ms timer tick (`Sleep(1)` lasts 10 ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DevicePreset {
    PdaIpaq3660,
    PcWindows2000,
}

/// A host's processing costs: a preset, any field of which may be overridden.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Device {
    #[serde(default)]
    pub preset: Option<DevicePreset>,
    /// CPU time to take in one received packet (interrupt, driver, IP/TCP input, its ACK).
    #[serde(default)]
    pub packet_cost: Option<Duration>,
    /// CPU time of one `send()` or `recv()` call.
    #[serde(default)]
    pub call_cost: Option<Duration>,
    /// Rate of copying between application and socket buffers.
    #[serde(default)]
    pub copy_rate: Option<BitRate>,
    /// Sequential storage reads (file transfers read the file from here).
    #[serde(default)]
    pub storage_read_rate: Option<BitRate>,
    /// Sequential storage writes (file transfers write the received file here).
    #[serde(default)]
    pub storage_write_rate: Option<BitRate>,
    /// CPU time per storage operation (one per application buffer).
    #[serde(default)]
    pub storage_op_cost: Option<Duration>,
    /// Growth of the per-byte write cost per MiB already written to the file (0.07 = 7 %).
    #[serde(default)]
    pub storage_write_growth: Option<f64>,
    /// Sleeps are rounded up to whole ticks of this timer.
    #[serde(default)]
    pub timer_granularity: Option<Duration>,
}

impl Device {
    /// The preset's parameters with this table's overrides.
    pub fn model(&self) -> crate::host::DeviceModel {
        use crate::host::{DeviceModel, StorageModel};
        let base = match self.preset {
            None => DeviceModel::default(),
            Some(DevicePreset::PdaIpaq3660) => DeviceModel {
                packet_cost: Duration::from_micros(1200),
                call_cost: Duration::from_micros(300),
                copy_rate: Some(BitRate(2_900_000)),
                storage: Some(StorageModel {
                    read_rate: Some(BitRate(2_700_000)),
                    write_rate: Some(BitRate(1_350_000)),
                    op_cost: Duration::from_millis(1),
                    write_growth_per_mib: 0.07,
                }),
                timer_granularity: Duration::from_millis(1),
            },
            Some(DevicePreset::PcWindows2000) => DeviceModel {
                packet_cost: Duration::from_micros(10),
                call_cost: Duration::from_micros(5),
                copy_rate: Some(BitRate(2_000_000_000)),
                storage: Some(StorageModel {
                    read_rate: Some(BitRate(400_000_000)),
                    write_rate: Some(BitRate(400_000_000)),
                    op_cost: Duration::from_micros(20),
                    write_growth_per_mib: 0.0,
                }),
                timer_granularity: Duration::from_millis(10),
            },
        };
        let given = self.storage_read_rate.is_some()
            || self.storage_write_rate.is_some()
            || self.storage_op_cost.is_some()
            || self.storage_write_growth.is_some();
        let storage = (base.storage.is_some() || given).then(|| {
            let s = base.storage.unwrap_or_default();
            StorageModel {
                read_rate: self.storage_read_rate.or(s.read_rate),
                write_rate: self.storage_write_rate.or(s.write_rate),
                op_cost: self.storage_op_cost.unwrap_or(s.op_cost),
                write_growth_per_mib: self.storage_write_growth.unwrap_or(s.write_growth_per_mib),
            }
        });
        DeviceModel {
            packet_cost: self.packet_cost.unwrap_or(base.packet_cost),
            call_cost: self.call_cost.unwrap_or(base.call_cost),
            copy_rate: self.copy_rate.or(base.copy_rate),
            storage,
            timer_granularity: self.timer_granularity.unwrap_or(base.timer_granularity),
        }
    }
}

/// A full-duplex point-to-point link; each direction has its own queue and loss process.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// Defaults to "A-B".
    #[serde(default)]
    pub name: Option<String>,
    #[schemars(with = "String")]
    pub a: Spanned<String>,
    #[schemars(with = "String")]
    pub b: Spanned<String>,
    /// Access-network preset filling rate, rate_b_to_a, delay and queue where not given
    /// (a = network side, b = terminal side).
    #[serde(default)]
    pub preset: Option<AccessPreset>,
    /// Transmission rate (a -> b, and b -> a unless `rate_b_to_a`), e.g. "10Mbps".
    #[serde(default)]
    pub rate: Option<BitRate>,
    /// Rate b -> a for asymmetric links (uplinks of cellular access).
    #[serde(default)]
    pub rate_b_to_a: Option<BitRate>,
    /// One-way propagation delay, e.g. "24ms".
    #[serde(default)]
    pub delay: Option<Duration>,
    /// Limit of each direction's queue: "100p" (packets) or "64KiB" (bytes).
    #[serde(default)]
    pub queue: Option<QueueLimit>,
    /// Queue discipline: "droptail" (default), "codel" (RFC 8289) or "fq_codel" (RFC 8290).
    #[serde(default)]
    pub aqm: Aqm,
    /// Largest IP packet the link carries.
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Bernoulli loss probability in both directions (0..1).
    #[serde(default)]
    pub loss: f64,
    /// Loss probability a -> b, overriding `loss`.
    #[serde(default)]
    pub loss_a_to_b: Option<f64>,
    /// Loss probability b -> a, overriding `loss`.
    #[serde(default)]
    pub loss_b_to_a: Option<f64>,
}

/// A queue discipline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Aqm {
    #[default]
    Droptail,
    Codel,
    FqCodel,
}

/// Access networks of the D-ITG study (paper 002), as link parameters. They are typical values
/// for the technologies, not measurements of the paper's operators (which it does not give):
/// Ethernet 100BASE-TX; GPRS with 4 downlink / 2 uplink CS-2 slots (53.6 / 26.8 kb/s) and a
/// 300 ms one-way delay (RTTs of 600-1000 ms are typical); UMTS R99 DCH 384 kb/s down / 64 kb/s
/// up (the paper's figures) with a 75 ms one-way delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AccessPreset {
    Ethernet,
    Gprs,
    Umts,
}

impl AccessPreset {
    /// (rate a->b, rate b->a, one-way delay, queue)
    pub fn parameters(self) -> (BitRate, BitRate, Duration, QueueLimit) {
        match self {
            AccessPreset::Ethernet => (BitRate(100_000_000), BitRate(100_000_000), Duration::from_micros(50), QueueLimit::Packets(1000)),
            AccessPreset::Gprs => (BitRate(53_600), BitRate(26_800), Duration::from_millis(300), QueueLimit::Packets(30)),
            AccessPreset::Umts => (BitRate(384_000), BitRate(64_000), Duration::from_millis(75), QueueLimit::Packets(50)),
        }
    }
}

impl Link {
    /// Rate a -> b (validated present).
    pub fn rate_a_to_b(&self) -> BitRate {
        self.rate.expect("validated: rate or preset")
    }
    pub fn rate_b_to_a(&self) -> BitRate {
        self.rate_b_to_a.unwrap_or(self.rate_a_to_b())
    }
    pub fn delay(&self) -> Duration {
        self.delay.expect("validated: delay or preset")
    }
    pub fn queue(&self) -> QueueLimit {
        self.queue.unwrap_or(DEFAULT_QUEUE)
    }

    pub fn display_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| format!("{}-{}", self.a.get_ref(), self.b.get_ref()))
    }
}

/// 802.11 PHY standard of a WLAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum WifiStandard {
    #[serde(rename = "802.11b")]
    B,
    #[serde(rename = "802.11g")]
    G,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Preamble {
    #[default]
    Long,
    Short,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SlotTime {
    #[default]
    Short,
    Long,
}

pub const DEFAULT_WIFI_QUEUE: QueueLimit = QueueLimit::Packets(50);
pub const DEFAULT_RETRY_SHORT: u32 = 7;
pub const DEFAULT_RETRY_LONG: u32 = 4;

fn default_wifi_queue() -> QueueLimit {
    DEFAULT_WIFI_QUEUE
}
fn default_retry_short() -> u32 {
    DEFAULT_RETRY_SHORT
}
fn default_retry_long() -> u32 {
    DEFAULT_RETRY_LONG
}

/// An 802.11 WLAN: a shared medium with DCF. With `ap`, an infrastructure BSS (stations talk
/// through the AP); without, an ad hoc cell (every member reaches every other directly).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Wlan {
    pub name: String,
    /// "802.11b" or "802.11g".
    pub standard: WifiStandard,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub ap: Option<Spanned<String>>,
    #[schemars(with = "Vec<String>")]
    pub stations: Vec<Spanned<String>>,
    /// Data rate of every station; default the standard's highest (11 or 54 Mb/s).
    #[serde(default)]
    pub data_rate: Option<BitRate>,
    /// Fixed data rates of particular members, overriding `data_rate` (e.g. { N3 = "24Mbps" }).
    #[serde(default)]
    pub station_rates: BTreeMap<String, BitRate>,
    /// Rate of ACK/RTS/CTS; default 1 Mb/s (11b, long preamble), 2 Mb/s (11b, short), or the
    /// highest of 6/12/24 Mb/s not above the data rate (11g).
    #[serde(default)]
    pub control_rate: Option<BitRate>,
    /// 802.11b PLCP preamble: "long" (192 µs) or "short" (96 µs).
    #[serde(default)]
    pub preamble: Preamble,
    /// 802.11g slot: "short" (9 µs, ERP-only BSS) or "long" (20 µs).
    #[serde(default)]
    pub slot: SlotTime,
    /// Transmit queue of each member (the AP's downlink queue included); default "50p" (ns-2 IFQ).
    #[serde(default = "default_wifi_queue")]
    pub queue: QueueLimit,
    /// Queue size of the AP alone, overriding `queue`.
    #[serde(default)]
    pub ap_queue: Option<QueueLimit>,
    /// Queue discipline of every member: "droptail" (default), "codel", "fq_codel".
    #[serde(default)]
    pub aqm: Aqm,
    /// Queue discipline of the AP alone (its downlink queue, where AQM matters), overriding `aqm`.
    #[serde(default)]
    pub ap_aqm: Option<Aqm>,
    /// SAP-LAW at the AP (paper 001): lower TCP's advertised windows to leave room for UDP.
    #[serde(default)]
    pub sap_law: Option<SapLawParams>,
    #[serde(default = "default_retry_short")]
    pub retry_short: u32,
    #[serde(default = "default_retry_long")]
    pub retry_long: u32,
    /// MSDUs longer than this are sent after RTS/CTS (default: never).
    #[serde(default)]
    pub rts_threshold: Option<Bytes>,
    /// Count the 8-byte LLC/SNAP header (real stacks, ns-3); false matches ns-2.
    #[serde(default = "default_true")]
    pub llc_snap: bool,
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    #[serde(default)]
    pub errors: WifiErrors,
    /// Positions in metres, [x, y], of members (needed by the shadowing model).
    #[serde(default)]
    pub positions: BTreeMap<String, [f64; 2]>,
}

impl Wlan {
    /// Members in MAC order: the AP first (if any), then the stations.
    pub fn members(&self) -> Vec<&str> {
        self.ap.iter().map(|a| a.get_ref().as_str()).chain(self.stations.iter().map(|s| s.get_ref().as_str())).collect()
    }
}

fn default_exponent() -> f64 {
    2.0
}
fn default_sigma() -> f64 {
    4.0
}
fn default_d0() -> f64 {
    1.0
}
fn default_tx_power() -> f64 {
    20.0
}
fn default_frequency() -> f64 {
    2.4e9
}

fn default_sap_period() -> Duration {
    Duration::from_millis(200)
}
fn default_sap_gain() -> f64 {
    0.25
}

/// SAP-LAW parameters (Palazzi et al.): maxTCPrate = (capacity − UDP rate) / #TCP flows.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SapLawParams {
    /// C, e.g. "18Mbps" (the paper's choice for ~20 Mb/s of 802.11g capacity).
    pub capacity: BitRate,
    /// How often maxTCPrate is recomputed (default "200ms", the paper's).
    #[serde(default = "default_sap_period")]
    pub period: Duration,
    /// Gain of the low-pass filter on the UDP rate (0 < g ≤ 1, default 0.25).
    #[serde(default = "default_sap_gain")]
    pub gain: f64,
}

/// Frame errors of a WLAN.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum WifiErrors {
    /// No frame errors.
    #[default]
    Ideal,
    /// Fixed data-frame error rate (per station via `per_station`), and an ACK error rate.
    Fer {
        #[serde(default)]
        fer: f64,
        #[serde(default)]
        ack_fer: f64,
        #[serde(default)]
        per_station: BTreeMap<String, f64>,
    },
    /// Log-distance path loss with log-normal shadowing, ns-2 semantics (a draw per frame and
    /// receiver). Defaults: exponent 2, sigma 4 dB, d0 1 m (ns-2's), 20 dBm at 2.4 GHz.
    Shadowing {
        #[serde(default = "default_exponent")]
        exponent: f64,
        #[serde(default = "default_sigma")]
        sigma_db: f64,
        #[serde(default = "default_d0")]
        reference_distance_m: f64,
        #[serde(default = "default_tx_power")]
        tx_power_dbm: f64,
        #[serde(default = "default_frequency")]
        frequency_hz: f64,
        /// Receive threshold for data frames; default the 802.11 minimum sensitivity of the rate.
        #[serde(default)]
        rx_threshold_dbm: Option<f64>,
        /// Receive threshold for control frames; default that of the control rate.
        #[serde(default)]
        control_rx_threshold_dbm: Option<f64>,
    },
}

fn default_wcdma_rate() -> BitRate {
    BitRate(384_000)
}
fn default_tti() -> Duration {
    Duration::from_millis(20)
}
fn default_wcdma_delay() -> Duration {
    Duration::from_millis(30)
}
fn default_pdu_payload() -> Bytes {
    Bytes(40)
}
fn default_wcdma_buffer() -> u64 {
    50
}
fn default_max_retx() -> u32 {
    5
}
fn default_wt() -> Duration {
    Duration::from_millis(500)
}

/// A W-CDMA dedicated channel between a base station (with its RNC) and one mobile station,
/// with RLC acknowledged mode in each direction (Koga et al., paper 004; models.md §6).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Wcdma {
    pub name: String,
    #[schemars(with = "String")]
    pub bs: Spanned<String>,
    #[schemars(with = "String")]
    pub ms: Spanned<String>,
    /// Downlink rate (RLC payload), default "384kbps".
    #[serde(default = "default_wcdma_rate")]
    pub rate: BitRate,
    /// Uplink rate; default the downlink's.
    #[serde(default)]
    pub uplink_rate: Option<BitRate>,
    /// How the mobile's uplink (TCP ACKs and RLC status PDUs) is modelled: "rlc" (default) or
    /// "link".
    #[serde(default)]
    pub uplink: WcdmaUplink,
    #[serde(default = "default_tti")]
    pub tti: Duration,
    /// One-way delay after a TTI (propagation and processing), default "30ms".
    #[serde(default = "default_wcdma_delay")]
    pub delay: Duration,
    /// RLC PDU payload (the 2-byte header comes on top), default "40B".
    #[serde(default = "default_pdu_payload")]
    pub pdu_payload: Bytes,
    /// Base-station (and mobile uplink) buffer in SDUs, default 50: the SDUs with a PDU waiting
    /// to be sent or resent (PDUs awaiting their status take no place).
    #[serde(default = "default_wcdma_buffer")]
    pub buffer: u64,
    /// Most retransmissions of a PDU carrying TCP (default 5) and UDP (default 5).
    #[serde(default = "default_max_retx")]
    pub max_retx_tcp: u32,
    #[serde(default = "default_max_retx")]
    pub max_retx_udp: u32,
    /// Retransmit without limit and never discard.
    #[serde(default)]
    pub unlimited_retx: bool,
    /// Waiting timeout WT of in-order delivery at the receiver, default "500ms".
    #[serde(default = "default_wt")]
    pub waiting_timeout: Duration,
    /// Koga et al.'s layer-2 priority scheduling: UDP before TCP (retransmissions first within
    /// each class) at the sender, one reordering buffer per class at the receiver.
    #[serde(default)]
    pub priority_scheduling: bool,
    /// An SDU completing after the receiver gave up waiting for it (WT) is dropped for order
    /// (false, default) or passed up late, out of order (true).
    #[serde(default)]
    pub deliver_late: bool,
    #[serde(default)]
    pub errors: WcdmaErrors,
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
}

/// The uplink of a W-CDMA channel: what carries the mobile's packets and the RLC status PDUs
/// that drive the downlink's retransmissions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WcdmaUplink {
    /// The same bearer in reverse: RLC AM with its TTIs and frame errors; a downlink status PDU
    /// goes in an uplink TTI (one TTI plus `delay`).
    #[default]
    Rlc,
    /// A plain error-free link of `uplink_rate` and `delay`, like ns-2's duplex link under Koga
    /// et al.'s downlink ARQ module: packets are serialized and delayed, status PDUs take `delay`
    /// (their eq. 1 ignores the ACK/NACK transmission time).
    Link,
}

/// TTI errors of a W-CDMA channel.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum WcdmaErrors {
    Ideal,
    /// Independent TTI losses.
    Fer { fer: f64 },
    /// Gilbert–Elliott fit of Rayleigh fading, f_d = 5 Hz, FER 5.9 % (models.md §6.2).
    #[default]
    Rayleigh,
    /// A Gilbert–Elliott chain with given transition probabilities per TTI.
    Gilbert { p_good_to_bad: f64, p_bad_to_good: f64 },
}

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
    /// When the application stops sending (default: the end of the run).
    #[serde(default)]
    pub stop: Option<Duration>,
    /// tcp or udp; defaults to tcp for bulk and file, udp for cbr, onoff and video.
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
    pub app: App,
    /// TCP parameters (TCP flows only).
    #[serde(default)]
    pub tcp: Option<TcpParams>,
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
            App::Bulk { .. } | App::File { .. } => Transport::Tcp,
            App::Cbr { .. } | App::Onoff { .. } | App::Video { .. } => Transport::Udp,
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

fn default_video_packet() -> Bytes {
    Bytes(1472)
}

fn default_periods() -> Periods {
    Periods::Constant
}

/// TCP parameters; defaults follow the RFCs (see each constant).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpParams {
    /// "newreno" (default; the papers'), "cubic" (RFC 9438 congestion avoidance) or "bbr"
    /// (BBR v1: paced at the estimated bottleneck rate, window 2 × BDP).
    #[serde(default = "default_variant")]
    pub variant: String,
    /// Maximum segment size; default MTU − 40 of the first link.
    #[serde(default)]
    pub mss: Option<Bytes>,
    /// SACK (RFC 2018) with RFC 6675 recovery. Off by default: the papers' NewReno has none.
    #[serde(default)]
    pub sack: bool,
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

fn default_variant() -> String {
    "newreno".into()
}

impl Default for TcpParams {
    fn default() -> Self {
        toml::from_str("").expect("all TCP fields have defaults")
    }
}

/// Where packets are dropped on purpose: the packet error generator of paper 003.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GeneratorDirection {
    /// Packets `node` sends to `peer`.
    Out,
    /// Packets `node` receives from `peer`.
    In,
    #[default]
    Both,
}

/// A packet error generator on the interface of `node` that leads to `peer` (paper 003): uniform
/// independent drops at `rate`, sparing SYN and FIN unless told otherwise.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorGenerator {
    #[schemars(with = "String")]
    pub node: Spanned<String>,
    #[schemars(with = "String")]
    pub peer: Spanned<String>,
    #[serde(default)]
    pub direction: GeneratorDirection,
    pub rate: f64,
    #[serde(default = "default_true")]
    pub spare_syn: bool,
    #[serde(default = "default_true")]
    pub spare_fin: bool,
}

fn default_snoop_timeout() -> Duration {
    Duration::from_secs(1)
}

/// A Snoop agent (paper 003) on the interface of `node` towards `peer`, on the side that sends
/// TCP data over the wireless link: the base station for downloads, the mobile for uploads.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnoopParams {
    #[schemars(with = "String")]
    pub node: Spanned<String>,
    #[schemars(with = "String")]
    pub peer: Spanned<String>,
    /// Fixed local retransmission timeout (default "1s", the paper's).
    #[serde(default = "default_snoop_timeout")]
    pub local_timeout: Duration,
    /// Use SRTT + 4·RTTVAR of the wireless hop instead (at least `local_timeout`/10).
    #[serde(default)]
    pub rtt_timer: bool,
}

/// What to record beyond the always-on per-flow and per-interval metrics.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Probes {
    /// Links (both directions) and WLANs (every member) whose queue occupancy is traced.
    #[serde(default)]
    pub queues: Vec<String>,
    /// TCP flows whose cwnd, ssthresh, windows, RTT and RTO are traced.
    #[serde(default)]
    pub tcp: Vec<String>,
    /// Flows with one record per received packet.
    #[serde(default)]
    pub packets: Vec<String>,
}

/// A scenario that failed to load: the file and every problem found.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub problems: Vec<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {}", self.file, p)?;
        }
        Ok(())
    }
}
impl std::error::Error for ScenarioError {}

/// Where a parse error is: "--set PATH=VALUE: " when the value came from an override, else
/// "line N: PATH: " (the dotted path of the innermost key there), then the message.
fn locate(text: &str, span: Option<std::ops::Range<usize>>, msg: &str, overrides: &[(String, String)]) -> String {
    let Some(span) = span else { return msg.to_string() };
    let doc = toml_edit::ImDocument::parse(text).ok();
    let paths: Vec<String> = [true, false]
        .into_iter()
        .filter_map(|by_name| doc.as_ref().and_then(|d| path_at(d.as_table(), span.start, by_name, "")))
        .collect();
    if let Some((p, raw)) = overrides.iter().rev().find(|(p, _)| paths.contains(p)) {
        return format!("--set {p}={raw}: {msg}");
    }
    match paths.first() {
        Some(p) => format!("line {}: {p}: {msg}", line_of(text, span.start)),
        None => format!("line {}: {msg}", line_of(text, span.start)),
    }
}

/// The dotted path of the innermost value whose span holds `offset` (array elements by their
/// `name` when `by_name` and they have one, else by index).
fn path_at(table: &dyn toml_edit::TableLike, offset: usize, by_name: bool, prefix: &str) -> Option<String> {
    let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    let element = |i: usize, t: Option<&dyn toml_edit::TableLike>| {
        let name = t.and_then(|t| t.get("name")).and_then(|n| n.as_str()).filter(|_| by_name);
        name.map(str::to_string).unwrap_or(i.to_string())
    };
    for (k, item) in table.iter() {
        let here = join(k);
        let inside = |r: Option<std::ops::Range<usize>>| r.is_some_and(|r| r.contains(&offset));
        match item {
            toml_edit::Item::Table(t) => {
                if let Some(p) = path_at(t, offset, by_name, &here) {
                    return Some(p);
                }
            }
            toml_edit::Item::ArrayOfTables(a) => {
                for (i, t) in a.iter().enumerate() {
                    if let Some(p) = path_at(t, offset, by_name, &format!("{here}.{}", element(i, Some(t)))) {
                        return Some(p);
                    }
                }
            }
            toml_edit::Item::Value(v) if inside(v.span()) || inside(table.key(k).and_then(|k| k.span())) => {
                if let Some(t) = v.as_inline_table() {
                    return path_at(t, offset, by_name, &here).or(Some(here));
                }
                if let Some(a) = v.as_array() {
                    for (i, x) in a.iter().enumerate() {
                        if inside(x.span()) {
                            let el = format!("{here}.{}", element(i, x.as_inline_table().map(|t| t as &dyn toml_edit::TableLike)));
                            return x.as_inline_table().and_then(|t| path_at(t, offset, by_name, &el)).or(Some(el));
                        }
                    }
                }
                return Some(here);
            }
            _ => {}
        }
    }
    None
}

fn line_of(src: &str, offset: usize) -> usize {
    src[..offset.min(src.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

/// Applies `dotted.path=value` overrides to a TOML document. Array elements are addressed by
/// index (`flows.0.start`) or by their `name` (`links.bottleneck.rate`). The value is read as a
/// TOML literal (`0.01`, `true`, `"x"`) and otherwise taken as a string (`10ms`).
pub fn apply_overrides(src: &str, overrides: &[(String, String)]) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = src.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    for (path, raw) in overrides {
        let value: toml_edit::Value = match format!("v = {raw}").parse::<toml_edit::DocumentMut>() {
            Ok(d) => d["v"].as_value().cloned().unwrap_or_else(|| raw.as_str().into()),
            Err(_) => raw.as_str().into(),
        };
        set_path(doc.as_item_mut(), path, value).map_err(|e| format!("--set {path}={raw}: {e}"))?;
    }
    Ok(doc.to_string())
}

fn set_path(root: &mut toml_edit::Item, path: &str, value: toml_edit::Value) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err("empty path segment".into());
    }
    let table = root.as_table_like_mut().ok_or("the document is not a table")?;
    set_in_table(table, &parts, value)
}

fn set_in_table(table: &mut dyn toml_edit::TableLike, parts: &[&str], value: toml_edit::Value) -> Result<(), String> {
    let (head, rest) = parts.split_first().expect("paths are never empty");
    if rest.is_empty() {
        table.insert(head, toml_edit::Item::Value(value));
        return Ok(());
    }
    if table.get(head).is_none() {
        table.insert(head, toml_edit::Item::Table(toml_edit::Table::new()));
    }
    let item = table.get_mut(head).expect("present");
    if let Some(arr) = item.as_array_of_tables_mut() {
        let (sel, rest) = rest.split_first().expect("checked above");
        let idx = match sel.parse::<usize>() {
            Ok(n) if n < arr.len() => n,
            Ok(n) => return Err(format!("{head}: index {n} is out of range (there are {})", arr.len())),
            Err(_) => arr
                .iter()
                .position(|t| t.get("name").and_then(|v| v.as_str()) == Some(*sel))
                .ok_or_else(|| format!("{head}: no element named {sel:?}"))?,
        };
        if rest.is_empty() {
            return Err("cannot replace a whole table".into());
        }
        return set_in_table(arr.get_mut(idx).expect("index checked"), rest, value);
    }
    let inner = item.as_table_like_mut().ok_or_else(|| format!("{head:?} is a value, not a table"))?;
    set_in_table(inner, rest, value)
}

impl Scenario {
    /// Parses and validates a scenario. `file` is used in messages only.
    pub fn from_toml_str(src: &str, file: &str, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let err = |p: String| ScenarioError { file: file.to_string(), problems: vec![p] };
        let text = if overrides.is_empty() { src.to_string() } else { apply_overrides(src, overrides).map_err(err)? };
        let scenario: Scenario = toml::from_str(&text).map_err(|e| err(locate(&text, e.span(), e.message().trim(), overrides)))?;
        let mut scenario = scenario;
        scenario.resolve_presets();
        let doc: toml::Value = toml::from_str(&text).map_err(|e| err(e.message().to_string()))?;
        // Ranges first: cross-field checks would only repeat what an out-of-range value breaks.
        let mut problems = crate::limits::check_document(&doc);
        if problems.is_empty() {
            problems = scenario.validate(&text);
        }
        if problems.is_empty() {
            Ok(scenario)
        } else {
            Err(ScenarioError { file: file.to_string(), problems })
        }
    }

    pub fn from_path(path: &std::path::Path, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let src = std::fs::read_to_string(path)
            .map_err(|e| ScenarioError { file: file.clone(), problems: vec![format!("cannot read the file: {e}")] })?;
        Scenario::from_toml_str(&src, &file, overrides)
    }

    /// Fills link fields from their access preset where not given, so the resolved scenario
    /// written into every result carries the concrete values.
    fn resolve_presets(&mut self) {
        for l in &mut self.links {
            if let Some(p) = l.preset {
                let (down, up, delay, queue) = p.parameters();
                if l.rate.is_none() {
                    l.rate = Some(down);
                    l.rate_b_to_a = l.rate_b_to_a.or(Some(up));
                }
                l.delay = l.delay.or(Some(delay));
                l.queue = l.queue.or(Some(queue));
            }
        }
    }

    /// Cross-field checks that serde cannot express.
    fn validate(&self, src: &str) -> Vec<String> {
        let mut p = Vec::new();
        let at = |s: &Spanned<String>| format!("line {}: ", line_of(src, s.span().start));
        if self.simulation.duration.0 == 0 {
            p.push("simulation.duration must be positive, e.g. \"30s\"".into());
        }
        let sim = &self.simulation;
        if sim.interval.0 > 0 {
            let rows = sim.duration.0.div_ceil(sim.interval.0).saturating_mul(self.flows.len() as u64);
            if rows > MAX_INTERVAL_ROWS {
                let floor = Duration(sim.duration.0.saturating_mul(self.flows.len() as u64).div_ceil(MAX_INTERVAL_ROWS));
                p.push(format!(
                    "simulation.interval {} gives {rows} per-interval rows (duration {} / interval × {} flows), above the budget of {MAX_INTERVAL_ROWS}; valid: an interval of at least {floor}",
                    sim.interval, sim.duration, self.flows.len()
                ));
            }
        }
        if self.simulation.interval.0 == 0 {
            p.push("simulation.interval must be positive, e.g. \"100ms\"".into());
        }
        let mut nodes = BTreeMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.name.is_empty() {
                p.push(format!("nodes[{i}].name must not be empty"));
            } else if nodes.insert(n.name.as_str(), i).is_some() {
                p.push(format!("nodes[{i}].name {:?} is used twice; node names must be unique", n.name));
            }
            if let Some(d) = &n.device {
                let nid = format!("nodes[{i}] ({:?}).device", n.name);
                if d.storage_write_growth.is_some_and(|g| !(g.is_finite() && g >= 0.0)) {
                    p.push(format!("{nid}.storage_write_growth must be a number ≥ 0 (0.07 = 7 % per MiB)"));
                }
            }
        }
        let known = nodes.keys().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", ");
        let check_node = |p: &mut Vec<String>, field: String, s: &Spanned<String>| {
            if !nodes.contains_key(s.get_ref().as_str()) {
                p.push(format!("{}{field} names unknown node {:?}; known nodes: {known}", at(s), s.get_ref()));
            }
        };
        let mut link_names = BTreeMap::new();
        for (i, l) in self.links.iter().enumerate() {
            check_node(&mut p, format!("links[{i}].a"), &l.a);
            check_node(&mut p, format!("links[{i}].b"), &l.b);
            if l.a.get_ref() == l.b.get_ref() {
                p.push(format!("{}links[{i}] connects {:?} to itself; a and b must differ", at(&l.b), l.a.get_ref()));
            }
            if l.rate.is_none() {
                p.push(format!("{}links[{i}] needs a rate (e.g. rate = \"10Mbps\") or a preset (ethernet, gprs, umts)", at(&l.a)));
            }
            if l.delay.is_none() {
                p.push(format!("{}links[{i}] needs a delay (e.g. delay = \"5ms\") or a preset (ethernet, gprs, umts)", at(&l.a)));
            }
            if l.mtu.0 < MIN_MTU {
                p.push(format!("links[{i}].mtu {} is too small; valid: at least {MIN_MTU}B (RFC 791)", l.mtu));
            }
            for (field, v) in [("loss", Some(l.loss)), ("loss_a_to_b", l.loss_a_to_b), ("loss_b_to_a", l.loss_b_to_a)] {
                if let Some(v) = v {
                    if !(0.0..=1.0).contains(&v) || v.is_nan() {
                        p.push(format!("links[{i}].{field} = {v} is not a probability; valid: 0 to 1"));
                    }
                }
            }
            if let QueueLimit::Packets(0) | QueueLimit::Bytes(0) = l.queue() {
                p.push(format!("links[{i}].queue must hold at least one packet"));
            }
            if link_names.insert(l.display_name(), i).is_some() {
                p.push(format!("links[{i}] name {:?} is used twice; give the link a unique name", l.display_name()));
            }
        }
        for (i, w) in self.wlans.iter().enumerate() {
            self.validate_wlan(i, w, src, &nodes, &mut link_names, &mut p);
        }
        for (i, c) in self.wcdma.iter().enumerate() {
            let cid = format!("wcdma[{i}] ({:?})", c.name);
            check_node(&mut p, format!("{cid}.bs"), &c.bs);
            check_node(&mut p, format!("{cid}.ms"), &c.ms);
            if c.bs.get_ref() == c.ms.get_ref() {
                p.push(format!("{}{cid}: bs and ms must be different nodes", at(&c.ms)));
            }
            if link_names.insert(c.name.clone(), i).is_some() {
                p.push(format!("{cid}: the name is already used by a link or WLAN"));
            }
            if c.tti.0 == 0 || c.pdu_payload.0 == 0 || c.buffer == 0 {
                p.push(format!("{cid}: tti, pdu_payload and buffer must be positive"));
            }
            for (field, r) in [("rate", Some(c.rate)), ("uplink_rate", c.uplink_rate)] {
                if let Some(r) = r {
                    if (r.0 as u128 * c.tti.0 as u128 / 1_000_000_000) < 8 * c.pdu_payload.0 as u128 {
                        p.push(format!("{cid}.{field} {r} carries less than one {} PDU per TTI", c.pdu_payload));
                    }
                }
            }
            match c.errors {
                WcdmaErrors::Fer { fer } if !(0.0..=1.0).contains(&fer) => {
                    p.push(format!("{cid}.errors.fer = {fer} is not a probability; valid: 0 to 1"))
                }
                WcdmaErrors::Gilbert { p_good_to_bad: a, p_bad_to_good: b }
                    if !(0.0..=1.0).contains(&a) || !(0.0..=1.0).contains(&b) =>
                {
                    p.push(format!("{cid}.errors: transition probabilities must lie in 0..1"))
                }
                _ => {}
            }
        }
        let topo = Topology::new(self);
        for (i, g) in self.error_generators.iter().enumerate() {
            let gid = format!("error_generators[{i}]");
            let before = p.len();
            check_node(&mut p, format!("{gid}.node"), &g.node);
            check_node(&mut p, format!("{gid}.peer"), &g.peer);
            if p.len() == before {
                let (a, b) = (topo.index(g.node.get_ref()), topo.index(g.peer.get_ref()));
                let adjacent = matches!((a, b), (Some(a), Some(b)) if topo.adj[a].iter().any(|&(m, _)| m == b));
                if !adjacent {
                    p.push(format!(
                        "{}{gid}: {:?} has no interface towards {:?}; peer must be a neighbour (a link, WLAN or W-CDMA channel between them)",
                        at(&g.peer),
                        g.node.get_ref(),
                        g.peer.get_ref()
                    ));
                }
            }
            if !(0.0..=1.0).contains(&g.rate) {
                p.push(format!("{gid}.rate = {} is not a probability; valid: 0 to 1", g.rate));
            }
        }
        for (i, sn) in self.snoop.iter().enumerate() {
            let sid = format!("snoop[{i}]");
            let before = p.len();
            check_node(&mut p, format!("{sid}.node"), &sn.node);
            check_node(&mut p, format!("{sid}.peer"), &sn.peer);
            if p.len() == before {
                let (a, b) = (topo.index(sn.node.get_ref()), topo.index(sn.peer.get_ref()));
                if !matches!((a, b), (Some(a), Some(b)) if topo.adj[a].iter().any(|&(m, _)| m == b)) {
                    p.push(format!("{}{sid}: {:?} has no interface towards {:?}", at(&sn.peer), sn.node.get_ref(), sn.peer.get_ref()));
                }
            }
        }
        let mut flow_names = BTreeMap::new();
        for (i, f) in self.flows.iter().enumerate() {
            let fid = format!("flows[{i}] ({:?})", f.name);
            if flow_names.insert(f.name.as_str(), i).is_some() {
                p.push(format!("{fid}: flow names must be unique"));
            }
            let before = p.len();
            check_node(&mut p, format!("{fid}.src"), &f.src);
            check_node(&mut p, format!("{fid}.dst"), &f.dst);
            if p.len() == before {
                if f.src.get_ref() == f.dst.get_ref() {
                    p.push(format!("{}{fid}: src and dst are the same node", at(&f.src)));
                } else if topo.path_mtu(f.src.get_ref(), f.dst.get_ref()).is_none() {
                    p.push(format!(
                        "{}{fid}: no path from {:?} to {:?}; add links that connect them",
                        at(&f.src),
                        f.src.get_ref(),
                        f.dst.get_ref()
                    ));
                }
            }
            if f.dscp > 63 {
                p.push(format!("{fid}.dscp = {} is out of range; valid: 0 to 63", f.dscp));
            }
            if let Some(stop) = f.stop {
                if stop <= f.start {
                    p.push(format!("{fid}.stop ({stop}) must be after start ({})", f.start));
                }
            }
            let path_mtu = topo.path_mtu(f.src.get_ref(), f.dst.get_ref());
            self.validate_app(f, &fid, path_mtu, &mut p);
        }
        for q in &self.probes.queues {
            if !link_names.contains_key(q) && !self.wlans.iter().any(|w| &w.name == q) {
                let known = link_names.keys().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", ");
                p.push(format!("probes.queues names unknown link or WLAN {q:?}; known: {known}"));
            }
        }
        for (field, list) in [("tcp", &self.probes.tcp), ("packets", &self.probes.packets)] {
            for name in list {
                match self.flows.iter().find(|f| &f.name == name) {
                    None => p.push(format!("probes.{field} names unknown flow {name:?}")),
                    Some(f) if field == "tcp" && f.transport() != Transport::Tcp => {
                        p.push(format!("probes.tcp names {name:?}, which is not a TCP flow"))
                    }
                    _ => {}
                }
            }
        }
        p
    }

    fn validate_wlan(
        &self,
        i: usize,
        w: &Wlan,
        src: &str,
        nodes: &BTreeMap<&str, usize>,
        names: &mut BTreeMap<String, usize>,
        p: &mut Vec<String>,
    ) {
        let wid = format!("wlans[{i}] ({:?})", w.name);
        let at = |s: &Spanned<String>| format!("line {}: ", line_of(src, s.span().start));
        let known = nodes.keys().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", ");
        for (field, s) in w.ap.iter().map(|a| ("ap", a)).chain(w.stations.iter().map(|s| ("stations", s))) {
            if !nodes.contains_key(s.get_ref().as_str()) {
                p.push(format!("{}{wid}.{field} names unknown node {:?}; known nodes: {known}", at(s), s.get_ref()));
            }
        }
        let members = w.members();
        let mut seen = std::collections::BTreeSet::new();
        for m in &members {
            if !seen.insert(*m) {
                p.push(format!("{wid}: node {m:?} is a member twice"));
            }
        }
        let needed = if w.ap.is_some() { 1 } else { 2 };
        if w.stations.len() < needed {
            p.push(format!("{wid}.stations needs at least {needed} station(s)"));
        }
        if names.insert(w.name.clone(), i).is_some() {
            p.push(format!("{wid}: the name is already used by a link or WLAN"));
        }
        let std = match w.standard {
            WifiStandard::B => lasthop_core::wifi::phy::Standard::B,
            WifiStandard::G => lasthop_core::wifi::phy::Standard::G,
        };
        let valid = lasthop_core::wifi::phy::Phy::rates(std);
        let list = valid.iter().map(|r| format!("{}Mbps", *r as f64 / 10.0)).collect::<Vec<_>>().join(", ");
        let station_rates = w.station_rates.iter().map(|(n, r)| (format!("station_rates.{n}"), Some(*r)));
        for (field, r) in [("data_rate".to_string(), w.data_rate), ("control_rate".to_string(), w.control_rate)].into_iter().chain(station_rates) {
            if let Some(r) = r {
                if r.0 % 100_000 != 0 || !valid.contains(&((r.0 / 100_000) as u32)) {
                    p.push(format!("{wid}.{field} {r} is not a rate of {}; valid: {list}", match w.standard {
                        WifiStandard::B => "802.11b",
                        WifiStandard::G => "802.11g",
                    }));
                }
            }
        }
        if w.retry_short == 0 || w.retry_long == 0 {
            p.push(format!("{wid}: retry limits count attempts and must be at least 1"));
        }
        for q in [Some(w.queue), w.ap_queue].into_iter().flatten() {
            if let QueueLimit::Packets(0) | QueueLimit::Bytes(0) = q {
                p.push(format!("{wid}: queues must hold at least one packet"));
            }
        }
        if let Some(sl) = &w.sap_law {
            if w.ap.is_none() {
                p.push(format!("{wid}.sap_law needs an access point (ap = ...)"));
            }
            if !(sl.gain > 0.0 && sl.gain <= 1.0) || sl.period.0 == 0 {
                p.push(format!("{wid}.sap_law: gain must lie in (0, 1] and period be positive"));
            }
        }
        if w.mtu.0 < MIN_MTU || w.mtu.0 > 2304 {
            p.push(format!("{wid}.mtu {} is out of range; valid: {MIN_MTU}B to 2304B (the 802.11 MSDU limit)", w.mtu));
        }
        for name in w.station_rates.keys() {
            if !members.contains(&name.as_str()) {
                p.push(format!("{wid}.station_rates names {name:?}, which is not a member of this WLAN"));
            }
        }
        for name in w.positions.keys() {
            if !members.contains(&name.as_str()) {
                p.push(format!("{wid}.positions names {name:?}, which is not a member of this WLAN"));
            }
        }
        match &w.errors {
            WifiErrors::Ideal => {}
            WifiErrors::Fer { fer, ack_fer, per_station } => {
                for (f, v) in [("fer", *fer), ("ack_fer", *ack_fer)].into_iter().chain(per_station.iter().map(|(_, v)| ("per_station", *v))) {
                    if !(0.0..=1.0).contains(&v) {
                        p.push(format!("{wid}.errors.{f} = {v} is not a probability; valid: 0 to 1"));
                    }
                }
                for name in per_station.keys() {
                    if !members.contains(&name.as_str()) {
                        p.push(format!("{wid}.errors.per_station names {name:?}, which is not a member"));
                    }
                }
            }
            WifiErrors::Shadowing { sigma_db, reference_distance_m, frequency_hz, .. } => {
                for m in &members {
                    if !w.positions.contains_key(*m) {
                        p.push(format!("{wid}: the shadowing model needs positions for every member; {m:?} has none (positions = {{ {m} = [x, y] }})"));
                    }
                }
                if *sigma_db < 0.0 || *reference_distance_m <= 0.0 || *frequency_hz <= 0.0 {
                    p.push(format!("{wid}.errors: sigma_db must be ≥ 0, reference_distance_m and frequency_hz > 0"));
                }
            }
        }
    }

    fn validate_app(&self, f: &Flow, fid: &str, path_mtu: Option<u64>, p: &mut Vec<String>) {
        let transport = f.transport();
        match (&f.app, transport) {
            (App::Bulk { .. } | App::File { .. }, Transport::Udp) => {
                p.push(format!("{fid}.app: bulk and file transfers need transport = \"tcp\""))
            }
            (App::Onoff { .. }, Transport::Tcp) => p.push(format!("{fid}.app: onoff runs over udp only")),
            (App::Video { .. }, Transport::Tcp) => p.push(format!("{fid}.app: video runs over udp only")),
            _ => {}
        }
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
            if !["newreno", "cubic", "bbr"].contains(&t.variant.as_str()) {
                p.push(format!("{fid}.tcp.variant {:?} is not known; valid: \"newreno\", \"cubic\", \"bbr\"", t.variant));
            }
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

    pub fn name(&self, fallback: &str) -> String {
        self.simulation.name.clone().unwrap_or_else(|| fallback.to_string())
    }

    /// The device model of node `name` (the instant host if it has none).
    pub fn device_of(&self, name: &str) -> crate::host::DeviceModel {
        self.nodes.iter().find(|n| n.name == name).and_then(|n| n.device.as_ref()).map(Device::model).unwrap_or_default()
    }

    /// True when flow `f` is a file transfer run by Hur & Hong's file loop on its hosts.
    pub fn uses_file_loop(&self, f: &Flow) -> bool {
        let App::File { message, app_buffer, send_delay, receive_delay, .. } = &f.app else { return false };
        let has_device = |n: &Spanned<String>| self.nodes.iter().any(|x| &x.name == n.get_ref() && x.device.is_some());
        message.is_some() || app_buffer.is_some() || send_delay.is_some() || receive_delay.is_some() || has_device(&f.src) || has_device(&f.dst)
    }
}

/// One hop out of a node: one direction of a link, or a frame from one WLAN member to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    Link { link: usize, a_to_b: bool },
    /// `from` and `to` are member indexes in [`Wlan::members`] order.
    Wlan { wlan: usize, from: usize, to: usize },
    /// A W-CDMA channel, downlink (base station -> mobile) or uplink.
    Cell { cell: usize, down: bool },
}

impl Edge {
    fn reversed(self) -> Edge {
        match self {
            Edge::Link { link, a_to_b } => Edge::Link { link, a_to_b: !a_to_b },
            Edge::Wlan { wlan, from, to } => Edge::Wlan { wlan, from: to, to: from },
            Edge::Cell { cell, down } => Edge::Cell { cell, down: !down },
        }
    }
}

/// Node adjacency, used for validation (reachability, path MTU) and by the builder for routes.
pub struct Topology {
    pub names: Vec<String>,
    /// For each node: (neighbour, edge from this node to it), links first, in file order.
    pub adj: Vec<Vec<(usize, Edge)>>,
    link_mtus: Vec<u64>,
    wlan_mtus: Vec<u64>,
    cell_mtus: Vec<u64>,
}

impl Topology {
    pub fn new(s: &Scenario) -> Self {
        let names: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
        let idx = |n: &str| names.iter().position(|x| x == n);
        let mut adj = vec![Vec::new(); names.len()];
        let mut add = |a: usize, b: usize, e: Edge| {
            // (a self-loop is reported by validation)
            if a != b {
                adj[a].push((b, e));
                adj[b].push((a, e.reversed()));
            }
        };
        for (li, l) in s.links.iter().enumerate() {
            if let (Some(a), Some(b)) = (idx(l.a.get_ref()), idx(l.b.get_ref())) {
                add(a, b, Edge::Link { link: li, a_to_b: true });
            }
        }
        for (wi, w) in s.wlans.iter().enumerate() {
            let members: Vec<Option<usize>> = w.members().iter().map(|m| idx(m)).collect();
            for i in 0..members.len() {
                // Infrastructure: every station talks to the AP (member 0); ad hoc: to everyone.
                let peers = if w.ap.is_some() { if i == 0 { 0..0 } else { 0..1 } } else { 0..i };
                for j in peers {
                    if let (Some(a), Some(b)) = (members[i], members[j]) {
                        add(a, b, Edge::Wlan { wlan: wi, from: i, to: j });
                    }
                }
            }
        }
        for (ci, c) in s.wcdma.iter().enumerate() {
            if let (Some(bs), Some(ms)) = (idx(c.bs.get_ref()), idx(c.ms.get_ref())) {
                add(bs, ms, Edge::Cell { cell: ci, down: true });
            }
        }
        Topology {
            names,
            adj,
            link_mtus: s.links.iter().map(|l| l.mtu.0).collect(),
            wlan_mtus: s.wlans.iter().map(|w| w.mtu.0).collect(),
            cell_mtus: s.wcdma.iter().map(|c| c.mtu.0).collect(),
        }
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|x| x == name)
    }

    /// Breadth-first shortest-hop next steps towards `dst`: `next[n] = (edge out of n, next node)`.
    /// Ties go to the edge listed first, so routes are deterministic.
    pub fn routes_to(&self, dst: usize) -> Vec<Option<(Edge, usize)>> {
        let mut next = vec![None; self.names.len()];
        let mut seen = vec![false; self.names.len()];
        seen[dst] = true;
        let mut frontier = std::collections::VecDeque::from([dst]);
        while let Some(n) = frontier.pop_front() {
            for &(m, e) in &self.adj[n] {
                if !seen[m] {
                    seen[m] = true;
                    next[m] = Some((e.reversed(), n));
                    frontier.push_back(m);
                }
            }
        }
        next
    }

    /// Smallest MTU along the route, or None if `dst` is unreachable.
    pub fn path_mtu(&self, src: &str, dst: &str) -> Option<u64> {
        let (s, d) = (self.index(src)?, self.index(dst)?);
        let routes = self.routes_to(d);
        let mut n = s;
        let mut mtu = u64::MAX;
        while n != d {
            let (edge, next) = routes[n]?;
            mtu = mtu.min(match edge {
                Edge::Link { link, .. } => self.link_mtus[link],
                Edge::Wlan { wlan, .. } => self.wlan_mtus[wlan],
                Edge::Cell { cell, .. } => self.cell_mtus[cell],
            });
            n = next;
        }
        Some(mtu)
    }
}

/// The JSON Schema of the scenario format.
pub fn json_schema() -> String {
    let mut schema = serde_json::to_value(schemars::schema_for!(Scenario)).expect("schema serializes");
    crate::limits::publish(&mut schema);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}
