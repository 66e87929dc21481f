//! 802.11 WLANs: PHY standard and rates, MAC retry limits and queues, frame-error models,
//! SAP-LAW at the access point (paper 001) — and the checks of a WLAN section.

use crate::*;
use lasthop_core::units::{BitRate, Bytes, QueueLimit};
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// 802.11 PHY standard of a WLAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum WifiStandard {
    #[serde(rename = "802.11b")]
    B,
    #[serde(rename = "802.11g")]
    G,
    /// HT: EDCA with A-MPDUs and Block Acks.
    #[serde(rename = "802.11n")]
    N,
    /// VHT: EDCA with A-MPDUs and Block Acks.
    #[serde(rename = "802.11ac")]
    Ac,
    /// HE (single-user): EDCA with A-MPDUs and Block Acks.
    #[serde(rename = "802.11ax")]
    Ax,
}

impl WifiStandard {
    /// Its name in a scenario ("802.11b" ... "802.11ax").
    pub fn name(self) -> &'static str {
        match self {
            WifiStandard::B => "802.11b",
            WifiStandard::G => "802.11g",
            WifiStandard::N => "802.11n",
            WifiStandard::Ac => "802.11ac",
            WifiStandard::Ax => "802.11ax",
        }
    }

    /// The amendments whose WLANs run EDCA with aggregation (lasthop_core::wifi::hcf).
    pub fn amendment(self) -> Option<lasthop_core::wifi::ppdu::Amendment> {
        use lasthop_core::wifi::ppdu::Amendment;
        match self {
            WifiStandard::B | WifiStandard::G => None,
            WifiStandard::N => Some(Amendment::Ht),
            WifiStandard::Ac => Some(Amendment::Vht),
            WifiStandard::Ax => Some(Amendment::He),
        }
    }
}

/// How an 802.11n/ac/ax member picks the rate of each A-MPDU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RateControl {
    /// One TxVector per link: `mcs` / `station_mcs`, or the highest MCS whose 1500 B frames get
    /// through 90 % of the time at the link's SNR.
    #[default]
    Constant,
    /// Linux's Minstrel-HT (rc80211_minstrel_ht) per link, over every MCS, width up to the
    /// WLAN's, stream count up to `streams` and guard interval up to `guard_interval`.
    MinstrelHt,
}

/// How an 802.11n/ac/ax access point queues and serves its stations' traffic; each option adds
/// to the one before it, as Linux's releases did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApQueueing {
    /// One drop-tail FIFO of `ap_queue` packets per access category (drivers before Linux 4.11).
    #[default]
    Legacy,
    /// Per-station queues, each an FQ-CoDel as mac80211's (300 B quantum, CoDel target 20 ms,
    /// interval 100 ms), `ap_queue` packets over all of them (default 8192, mac80211's), the
    /// fattest flow's head dropped beyond; stations served in turn (Linux 4.11).
    FqCodel,
    /// The same queues, stations served by airtime deficit round robin (mac80211's airtime
    /// fairness, Linux 4.17+).
    Airtime,
    /// The same, and each station's queue hands MSDUs to the driver only while their estimated
    /// airtime there is under AQL's limit: 5 ms, or 12 ms while the AP's total is under 24 ms
    /// (Linux 5.5+).
    Aql,
}

/// The band of an 802.11n/ac/ax WLAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum WifiBand {
    #[serde(rename = "2.4GHz")]
    Ghz2_4,
    #[serde(rename = "5GHz")]
    Ghz5,
    #[serde(rename = "6GHz")]
    Ghz6,
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

pub(crate) fn default_wifi_queue() -> QueueLimit {
    DEFAULT_WIFI_QUEUE
}
pub(crate) fn default_retry_short() -> u32 {
    DEFAULT_RETRY_SHORT
}
pub(crate) fn default_retry_long() -> u32 {
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
    /// Queue size of the AP alone, overriding `queue` (802.11n/ac/ax with `ap_queueing` other
    /// than "legacy": the packets over all its station queues, default 8192 as mac80211's).
    #[serde(default)]
    pub ap_queue: Option<QueueLimit>,
    /// Queue discipline of every member: "droptail" (default), "codel", "fq_codel". 802.11n/ac/
    /// ax: "droptail" or "fq_codel", the stations' queues (the AP's: `ap_queueing`), as
    /// mac80211 keeps them: per receiver and access category, CoDel target 20 ms.
    #[serde(default)]
    pub aqm: Aqm,
    /// Queue discipline of the AP alone (its downlink queue, where AQM matters), overriding `aqm`.
    /// 802.11n/ac/ax with `ap_queueing = "legacy"`: the interface's qdisc above the AP's FIFOs,
    /// with Linux's defaults ("fq_codel": 10240 packets, 5 ms / 100 ms; "codel": 1000 packets);
    /// each FIFO takes from it while it holds fewer than `ap_queue` packets.
    #[serde(default)]
    pub ap_aqm: Option<Aqm>,
    /// SAP-LAW at the AP (paper 001): lower TCP's advertised windows to leave room for UDP.
    #[serde(default)]
    pub sap_law: Option<SapLawParams>,
    #[serde(default = "default_retry_short")]
    pub retry_short: u32,
    #[serde(default = "default_retry_long")]
    pub retry_long: u32,
    /// MSDUs longer than this are sent after RTS/CTS (default: never); on 802.11n/ac/ax, A-MPDUs
    /// (PSDUs) longer than this.
    #[serde(default)]
    pub rts_threshold: Option<Bytes>,
    /// Count the 8-byte LLC/SNAP header (real stacks, ns-3); false matches ns-2.
    #[serde(default = "default_true")]
    pub llc_snap: bool,
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    #[serde(default)]
    pub errors: WifiErrors,
    /// Positions in metres, [x, y], of members: the shadowing model's (802.11b/g); on
    /// 802.11n/ac/ax the SNR of a link whose two ends have one, by log-distance path loss
    /// (`tx_power_dbm`, `path_loss_exponent`, `noise_figure_db`) over thermal noise.
    #[serde(default)]
    pub positions: BTreeMap<String, [f64; 2]>,
    /// 802.11n/ac/ax: channel width in MHz, 20, 40, 80 or 160 (802.11n: 20 or 40; at 2.4 GHz at
    /// most 40); default 20 for 802.11n, 80 for 802.11ac and 802.11ax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u16>,
    /// 802.11n/ac/ax: spatial streams of every member, 1 to 4 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u8>,
    /// 802.11n/ac/ax: guard interval of data frames: "800ns" (default) or "400ns" for
    /// 802.11n/ac; "800ns", "1600ns" or "3200ns" for 802.11ax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard_interval: Option<Duration>,
    /// 802.11n/ac/ax: "2.4GHz", "5GHz" (default) or "6GHz" (802.11ax); 802.11ac is 5 GHz only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<WifiBand>,
    /// 802.11n/ac/ax: MCS of every member's data frames (0-7 for 802.11n per stream, 0-9 for
    /// 802.11ac, 0-11 for 802.11ax); default the highest whose 1500 B frames get through 90 %
    /// of the time at the member's SNR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcs: Option<u8>,
    /// 802.11n/ac/ax: the MCS of particular members, overriding `mcs` (e.g. { N3 = 3 }).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub station_mcs: BTreeMap<String, u8>,
    /// 802.11n/ac/ax: SNR of every link (a station and its AP, both ways) over the channel
    /// width, dB, where neither `station_snr_db` nor `positions` give it (default 40:
    /// error-free at every MCS); frame errors per MPDU follow from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snr_db: Option<f64>,
    /// 802.11n/ac/ax: the SNR of particular members' links, dB, overriding `positions` and
    /// `snr_db` (the AP's entry: its frames to every station).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub station_snr_db: BTreeMap<String, f64>,
    /// 802.11n/ac/ax: how the AP queues and serves its stations: "legacy" (default: one FIFO per
    /// access category), "fq_codel" (mac80211's per-station FQ-CoDel, stations in turn),
    /// "airtime" (those queues with airtime fairness) or "aql" (and Airtime Queue Limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ap_queueing: Option<ApQueueing>,
    /// 802.11n/ac/ax with `ap_queueing` "airtime" or "aql": stations' airtime weights, µs per
    /// round of the AP's deficit scheduler (mac80211's `airtime_weight`, default 256): backlogged
    /// stations get airtime in proportion (e.g. { tv = 512 }: twice the others').
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub airtime_weights: BTreeMap<String, u32>,
    /// 802.11n/ac/ax with `ap_queueing` other than "legacy": the packets the AP's driver or
    /// firmware holds below mac80211's station queues until their transmission is done (e.g.
    /// "1424p", ath10k's descriptors); A-MPDUs are composed from it. Default: none (A-MPDUs
    /// from mac80211's queues, as ath9k builds them), or no limit of its own with "aql".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ap_driver_queue: Option<QueueLimit>,
    /// 802.11n/ac/ax: how each link picks its rate: "constant" (default) or "minstrel_ht".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_control: Option<RateControl>,
    /// 802.11n/ac/ax with `positions`: transmit power of every member, dBm (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_power_dbm: Option<f64>,
    /// 802.11n/ac/ax with `positions`: log-distance path loss exponent (default 3, ns-3's
    /// LogDistancePropagationLossModel; 2 is free space), from Friis' loss at 1 m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_loss_exponent: Option<f64>,
    /// 802.11n/ac/ax with `positions`: the receivers' noise figure, dB (default 7, ns-3's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_figure_db: Option<f64>,
    /// 802.11n/ac/ax: members of an older standard than the WLAN's (e.g. { laptop = "802.11n" }
    /// in an 802.11ax cell): their links run that amendment (its MCSs, widths up to its widest,
    /// its guard intervals, a 64-MPDU Block Ack window).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub station_standard: BTreeMap<String, WifiStandard>,
    /// 802.11n/ac/ax: the receivers' maximum A-MPDU length (default "65535B").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ampdu: Option<Bytes>,
    /// 802.11n/ac/ax: after a missed Block Ack, send a BlockAckRequest before the MPDUs go
    /// again, as ns-3 3.44 does (for comparisons with it); default false: they go again in the
    /// next A-MPDU, as Linux's drivers do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bar_after_missed_block_ack: Option<bool>,
}

/// Defaults of 802.11n/ac/ax WLANs.
pub const DEFAULT_SNR_DB: f64 = 40.0;
pub const DEFAULT_MAX_AMPDU: u64 = 65_535;

impl Wlan {
    /// Members in MAC order: the AP first (if any), then the stations.
    pub fn members(&self) -> Vec<&str> {
        self.ap.iter().map(|a| a.get_ref().as_str()).chain(self.stations.iter().map(|s| s.get_ref().as_str())).collect()
    }
}

pub(crate) fn default_exponent() -> f64 {
    2.0
}
pub(crate) fn default_sigma() -> f64 {
    4.0
}
pub(crate) fn default_d0() -> f64 {
    1.0
}
pub(crate) fn default_tx_power() -> f64 {
    20.0
}
pub(crate) fn default_frequency() -> f64 {
    2.4e9
}

pub(crate) fn default_sap_period() -> Duration {
    Duration::from_millis(200)
}
pub(crate) fn default_sap_gain() -> f64 {
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

impl Scenario {
    pub(crate) fn validate_wlan(
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
        for (field, aqm) in [("aqm", Some(w.aqm)), ("ap_aqm", w.ap_aqm)] {
            if aqm == Some(Aqm::Pie) {
                p.push(format!("{wid}.{field} = \"pie\" runs on links only; a WLAN's queues take \"droptail\", \"codel\" or \"fq_codel\""));
            }
        }
        if w.standard.amendment().is_some() {
            self.validate_aggregating_wlan(&wid, w, &members, p);
        } else {
            validate_legacy_rates(&wid, w, p);
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

}


/// 802.11b/g: data and control rates of the standard.
fn validate_legacy_rates(wid: &str, w: &Wlan, p: &mut Vec<String>) {
    let std = match w.standard {
        WifiStandard::B => lasthop_core::wifi::phy::Standard::B,
        _ => lasthop_core::wifi::phy::Standard::G,
    };
    let name = w.standard.name();
    let valid = lasthop_core::wifi::phy::Phy::rates(std);
    let list = valid.iter().map(|r| format!("{}Mbps", *r as f64 / 10.0)).collect::<Vec<_>>().join(", ");
    let station_rates = w.station_rates.iter().map(|(n, r)| (format!("station_rates.{n}"), Some(*r)));
    for (field, r) in [("data_rate".to_string(), w.data_rate), ("control_rate".to_string(), w.control_rate)].into_iter().chain(station_rates) {
        if let Some(r) = r {
            if r.0 % 100_000 != 0 || !valid.contains(&((r.0 / 100_000) as u32)) {
                p.push(format!("{wid}.{field} {r} is not a rate of {name}; valid: {list}"));
            }
        }
    }
    let modern = [
        ("width", w.width.is_some()),
        ("streams", w.streams.is_some()),
        ("guard_interval", w.guard_interval.is_some()),
        ("band", w.band.is_some()),
        ("mcs", w.mcs.is_some()),
        ("station_mcs", !w.station_mcs.is_empty()),
        ("snr_db", w.snr_db.is_some()),
        ("station_snr_db", !w.station_snr_db.is_empty()),
        ("max_ampdu", w.max_ampdu.is_some()),
        ("bar_after_missed_block_ack", w.bar_after_missed_block_ack.is_some()),
        ("station_standard", !w.station_standard.is_empty()),
        ("ap_queueing", w.ap_queueing.is_some()),
        ("ap_driver_queue", w.ap_driver_queue.is_some()),
        ("airtime_weights", !w.airtime_weights.is_empty()),
        ("rate_control", w.rate_control.is_some()),
        ("tx_power_dbm", w.tx_power_dbm.is_some()),
        ("path_loss_exponent", w.path_loss_exponent.is_some()),
        ("noise_figure_db", w.noise_figure_db.is_some()),
    ];
    for (field, set) in modern {
        if set {
            p.push(format!("{wid}.{field} applies to 802.11n/ac/ax WLANs; this one is {name} (standard = \"802.11n\", \"802.11ac\" or \"802.11ax\" to use it)"));
        }
    }
}

/// The band of an 802.11n/ac/ax WLAN (default 5 GHz).
pub fn band_of(w: &Wlan) -> lasthop_core::wifi::ppdu::Band {
    use lasthop_core::wifi::ppdu::Band;
    match w.band.unwrap_or(WifiBand::Ghz5) {
        WifiBand::Ghz2_4 => Band::Ghz2_4,
        WifiBand::Ghz5 => Band::Ghz5,
        WifiBand::Ghz6 => Band::Ghz6,
    }
}

/// The link budget of an 802.11n/ac/ax WLAN whose members have positions.
pub fn link_budget_of(w: &Wlan) -> lasthop_core::wifi::radio::LinkBudget {
    let d = lasthop_core::wifi::radio::LinkBudget::default();
    lasthop_core::wifi::radio::LinkBudget {
        tx_power_dbm: w.tx_power_dbm.unwrap_or(d.tx_power_dbm),
        exponent: w.path_loss_exponent.unwrap_or(d.exponent),
        noise_figure_db: w.noise_figure_db.unwrap_or(d.noise_figure_db),
        band: band_of(w),
    }
}

/// The channel width of an 802.11n/ac/ax WLAN, MHz.
pub fn width_of(w: &Wlan) -> u16 {
    w.width.unwrap_or(if w.standard.amendment() == Some(lasthop_core::wifi::ppdu::Amendment::Ht) { 20 } else { 80 })
}

/// The SNR (dB, over the WLAN's width) of `from`'s frames at `to`: `station_snr_db` of the
/// sender, or of the station whose AP sends; else from the two members' positions; else
/// `snr_db` (default 40).
pub fn link_snr_db(w: &Wlan, from: &str, to: &str) -> f64 {
    let from_ap = w.ap.as_ref().is_some_and(|a| a.get_ref() == from);
    if let Some(s) = w.station_snr_db.get(from).or_else(|| w.station_snr_db.get(to).filter(|_| from_ap)) {
        return *s;
    }
    match (w.positions.get(from), w.positions.get(to)) {
        (Some(a), Some(b)) => link_budget_of(w).snr_db(((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt(), width_of(w), 0.0),
        _ => w.snr_db.unwrap_or(DEFAULT_SNR_DB),
    }
}

/// The receiver whose link stands for member `m`'s frames where one TxVector must do for all
/// (its AP; on an ad hoc cell, or for the AP, the first other member).
fn usual_peer<'a>(w: &'a Wlan, m: &'a str) -> &'a str {
    let members = w.members();
    let ap = w.ap.as_ref().map(|a| a.get_ref().as_str());
    match ap {
        Some(a) if a != m => a,
        _ => members.into_iter().find(|x| *x != m).unwrap_or(m),
    }
}

/// Member `m`'s TxVector towards its usual peer (see [`link_tx_vector`]).
pub fn tx_vector_of(w: &Wlan, m: &str) -> Result<lasthop_core::wifi::ppdu::TxVector, (String, String)> {
    link_tx_vector(w, m, usual_peer(w, m))
}

/// The TxVector of `from`'s frames to `to`: the WLAN's width, streams, GI and band, and the MCS
/// given for `from` (or the WLAN's), or else the highest whose 1500 B frames get through 90 % of
/// the time at the link's SNR. Err names the field.
pub fn link_tx_vector(w: &Wlan, from: &str, to: &str) -> Result<lasthop_core::wifi::ppdu::TxVector, (String, String)> {
    use lasthop_core::wifi::ppdu::{TxVector, TxVectorError};
    let m = from;
    let cell = w.standard.amendment().expect("an 802.11n/ac/ax WLAN");
    // A link runs the older amendment of its two ends (`station_standard`), at the widest width
    // and the guard interval of the cell that amendment has (else 800 ns).
    let a = [from, to].iter().filter_map(|x| w.station_standard.get(*x).and_then(|s| s.amendment())).fold(cell, |a, b| if (b as u8) < (a as u8) { b } else { a });
    let older = a != cell;
    let gi = w.guard_interval.map(|d| d.0).unwrap_or(800);
    let mut gi16 = u16::try_from(gi).unwrap_or(u16::MAX);
    let mut width = width_of(w);
    if older {
        width = a.widths().iter().copied().filter(|&x| x <= width).max().unwrap_or(20);
        if !a.guard_intervals().contains(&gi16) {
            gi16 = 800;
        }
    }
    let streams = w.streams.unwrap_or(1);
    let mut given = w.station_mcs.get(m).copied().or(w.mcs);
    if older && !w.station_mcs.contains_key(m) {
        // The cell's MCS, as far as the older amendment has it at this width.
        given = given.and_then(|g| (0..=g.min(a.max_mcs())).rev().find(|&x| TxVector::new(a, x, streams, width, gi16, band_of(w)).is_ok()));
    }
    let mcs_field = if w.station_mcs.contains_key(m) { format!("station_mcs.{m}") } else { "mcs".to_string() };
    let field_of = |e: &TxVectorError| match e {
        TxVectorError::Mcs { .. } | TxVectorError::VhtCombination { .. } => mcs_field.clone(),
        TxVectorError::Streams { .. } => "streams".to_string(),
        TxVectorError::Width { .. } | TxVectorError::WidthInBand { .. } => "width".to_string(),
        TxVectorError::GuardInterval { .. } => "guard_interval".to_string(),
        TxVectorError::Band { .. } => "band".to_string(),
    };
    let make = |mcs| TxVector::new(a, mcs, streams, width, gi16, band_of(w));
    match given {
        Some(mcs) => make(mcs).map_err(|e| (field_of(&e), e.to_string())),
        None => {
            let snr = lasthop_core::wifi::radio::linear(link_snr_db(w, from, to));
            let mpdu = 1500 + lasthop_core::wifi::phy::LLC_SNAP_BYTES + lasthop_core::wifi::hcf::QOS_HEADER_FCS_BYTES;
            // The combination's own errors (a width, band or GI) show at MCS 0.
            let lowest = make(0).map_err(|e| (field_of(&e), e.to_string()))?;
            Ok((0..=a.max_mcs()).rev().filter_map(|mcs| make(mcs).ok()).find(|tx| tx.frame_success(snr, mpdu) >= 0.9).unwrap_or(lowest))
        }
    }
}

impl Scenario {
    /// 802.11n/ac/ax: each member's TxVector, SNR and the fields that do not apply.
    fn validate_aggregating_wlan(&self, wid: &str, w: &Wlan, members: &[&str], p: &mut Vec<String>) {
        let std = w.standard.name();
        let legacy = [
            ("data_rate", w.data_rate.is_some(), "mcs"),
            ("control_rate", w.control_rate.is_some(), "the 24 Mb/s Block Acks"),
            ("station_rates", !w.station_rates.is_empty(), "station_mcs"),
            ("preamble", w.preamble != Preamble::Long, "the amendment's own preamble"),
            ("slot", w.slot != SlotTime::Short, "the 9 µs slot of OFDM"),
            ("errors", !matches!(w.errors, WifiErrors::Ideal), "snr_db and station_snr_db (errors per MPDU from the SNR)"),
            ("aqm", w.aqm == Aqm::Codel, "drop-tail queues per access category, or aqm = \"fq_codel\" (mac80211's per-station FQ-CoDel)"),
            (
                "ap_aqm",
                w.ap_aqm.is_some_and(|a| a != Aqm::Droptail) && w.ap_queueing.unwrap_or_default() != ApQueueing::Legacy,
                "ap_queueing's own queues (mac80211's station queues take packets from the stack themselves: no interface qdisc above them); ap_aqm puts a qdisc above the legacy FIFOs",
            ),
            ("llc_snap", !w.llc_snap, "MPDUs that always carry LLC/SNAP"),
        ];
        for (field, set, instead) in legacy {
            if set {
                p.push(format!("{wid}.{field} applies to 802.11b/g WLANs; {std} uses {instead}"));
            }
        }
        for q in [Some(w.queue), w.ap_queue].into_iter().flatten() {
            if let QueueLimit::Bytes(_) = q {
                p.push(format!("{wid}: {std} queues hold packets per access category (e.g. queue = \"100p\"), not bytes"));
            }
        }
        for (field, names) in [("station_mcs", w.station_mcs.keys().collect::<Vec<_>>()), ("station_snr_db", w.station_snr_db.keys().collect())] {
            for name in names {
                if !members.contains(&name.as_str()) {
                    p.push(format!("{wid}.{field} names {name:?}, which is not a member of this WLAN"));
                }
            }
        }
        let mut reported = std::collections::BTreeSet::new();
        for m in members {
            if let Err((field, why)) = tx_vector_of(w, m) {
                if reported.insert(field.clone()) {
                    p.push(format!("{wid}.{field}: {why}"));
                }
            }
        }
        for (name, st) in &w.station_standard {
            if !members.contains(&name.as_str()) {
                p.push(format!("{wid}.station_standard names {name:?}, which is not a member of this WLAN"));
            } else if st.amendment().is_none() {
                p.push(format!("{wid}.station_standard.{name}: {} stations in an {std} cell are not modelled; valid: 802.11n, 802.11ac or 802.11ax up to the cell's {std}", st.name()));
            } else if (st.amendment().unwrap() as u8) > (w.standard.amendment().unwrap() as u8) {
                p.push(format!("{wid}.station_standard.{name}: {} is newer than the cell's {std}; valid: 802.11n up to {std}", st.name()));
            } else if *st == WifiStandard::Ac && band_of(w) != lasthop_core::wifi::ppdu::Band::Ghz5 {
                p.push(format!("{wid}.station_standard.{name}: 802.11ac runs at 5 GHz only; this cell is at {}", band_of(w).name()));
            }
        }
        if w.ap_queueing.is_some() && w.ap.is_none() {
            p.push(format!("{wid}.ap_queueing applies to an access point; this WLAN is ad hoc (give it an `ap`)"));
        }
        if !w.airtime_weights.is_empty() && !matches!(w.ap_queueing, Some(ApQueueing::Airtime | ApQueueing::Aql)) {
            p.push(format!("{wid}.airtime_weights weigh the AP's airtime scheduler; set ap_queueing = \"airtime\" or \"aql\""));
        }
        for name in w.airtime_weights.keys() {
            if !members.contains(&name.as_str()) || w.ap.as_ref().is_some_and(|ap| ap.get_ref() == name) {
                p.push(format!("{wid}.airtime_weights names {name:?}, which is not a station of this WLAN (its members but the AP)"));
            }
        }
        if let Some(d) = w.ap_driver_queue {
            if w.ap_queueing.unwrap_or_default() == ApQueueing::Legacy {
                p.push(format!("{wid}.ap_driver_queue is a driver queue below mac80211's station queues; with ap_queueing = \"legacy\" the AP's FIFO is the driver's queue (valid with \"fq_codel\", \"airtime\" or \"aql\")"));
            }
            if let QueueLimit::Bytes(_) = d {
                p.push(format!("{wid}.ap_driver_queue holds packets (e.g. \"1424p\"), not bytes"));
            }
        }
        if w.rate_control == Some(RateControl::MinstrelHt) {
            for (field, set) in [("mcs", w.mcs.is_some()), ("station_mcs", !w.station_mcs.is_empty())] {
                if set {
                    p.push(format!("{wid}.{field} sets a constant MCS; with rate_control = \"minstrel_ht\" Minstrel-HT picks it (leave {field} out, or use rate_control = \"constant\")"));
                }
            }
        }
        if w.positions.is_empty() {
            for (field, set) in [("tx_power_dbm", w.tx_power_dbm.is_some()), ("path_loss_exponent", w.path_loss_exponent.is_some()), ("noise_figure_db", w.noise_figure_db.is_some())] {
                if set {
                    p.push(format!("{wid}.{field} applies to the SNR from positions; this WLAN has none (positions = {{ AP = [0, 0], S1 = [5, 0] }}, or give snr_db)"));
                }
            }
        }
        if let Some(b) = w.max_ampdu {
            if b.0 < 1600 {
                p.push(format!("{wid}.max_ampdu {b} cannot hold one full-size MPDU; valid: 1600B to 6500631B"));
            }
        }
    }
}
