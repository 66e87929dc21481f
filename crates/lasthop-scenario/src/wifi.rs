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

}
