//! The hops in the run report: each direction of a wired link (queue and channel), each 802.11
//! WLAN with its members' MAC counters (IEEE 802.11 DCF), each W-CDMA RLC AM entity
//! (3GPP TS 25.322). Counters are totals over the whole run.

use crate::wifi::dcf::StationStats;
use crate::wifi::hcf::AggregationStats;
use crate::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One direction of a point-to-point link: its queue and its channel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LinkReport {
    /// `<link>:<from>-><to>`, e.g. "bottleneck:router->receiver".
    pub name: String,
    /// Packets serialized onto the link, packets.
    pub tx_packets: u64,
    /// Packets the queue dropped, tail drops and AQM drops together, packets.
    pub queue_drops: u64,
    /// Of `queue_drops`, those the AQM (CoDel, FQ-CoDel) chose, packets.
    pub aqm_drops: u64,
    /// Packets the AQM marked Congestion Experienced instead of dropping them (RFC 3168);
    /// present when the queue marks (`ecn = true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_marks: Option<u64>,
    /// Packets lost on the channel (random loss), packets.
    pub link_losses: u64,
    /// Longest queue seen, packets.
    pub max_queue_packets: u64,
    /// Largest queue seen, bytes.
    pub max_queue_bytes: u64,
    /// The queue's limit as written in a scenario ("100p", "64KiB").
    pub queue_limit: String,
    /// Share of the run the link spent serializing, a fraction in [0, 1].
    pub utilization: f64,
}

/// One 802.11 WLAN (a shared DCF medium).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WlanReport {
    /// The WLAN's name.
    pub name: String,
    /// Medium exchanges (successful, collided or errored), exchanges.
    pub exchanges: u64,
    /// Exchanges that ended with the frame acknowledged, exchanges.
    pub successes: u64,
    /// Exchanges in which two or more stations transmitted at once, exchanges.
    pub collisions: u64,
    /// Share of the run the medium was busy with exchanges, a fraction in [0, 1].
    pub busy_share: f64,
    /// 802.11n/ac/ax: Jain's fairness index of the stations' airtime (`station_airtime_s` of
    /// every member but the AP that had any), in [1/n, 1]; absent on 802.11b/g or with none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub airtime_fairness: Option<f64>,
    /// One entry per member station, in the WLAN's member order.
    pub members: Vec<WlanMemberReport>,
}

/// The MAC counters of one WLAN station.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WlanMemberReport {
    /// The station's node name.
    pub node: String,
    #[serde(flatten)]
    pub mac: StationStats,
    /// 802.11n/ac/ax: A-MPDUs, airtime and access categories (absent on 802.11b/g).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<AggregationStats>,
}

/// One W-CDMA RLC acknowledged-mode entity (one direction of a dedicated channel).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RlcReport {
    /// `<cell>:down` or `<cell>:up`.
    pub name: String,
    /// SDUs (IP packets) accepted into the RLC buffer, SDUs.
    pub sdus_in: u64,
    /// SDUs refused by the full buffer, SDUs.
    pub buffer_drops: u64,
    /// SDUs the sender discarded after the retransmission limit (SDU discard), SDUs.
    pub sdus_discarded: u64,
    /// SDUs completed at the receiver after it had skipped them (delivered late or dropped,
    /// as configured), SDUs.
    pub sdus_out_of_order: u64,
    /// SDUs passed up to the receiving node, SDUs.
    pub sdus_delivered: u64,
    /// Transmission time intervals that carried PDUs, TTIs.
    pub ttis: u64,
    /// Of those, TTIs lost to the channel's errors, TTIs.
    pub ttis_lost: u64,
    /// PDUs sent, first transmissions and retransmissions, PDUs.
    pub pdus_sent: u64,
    /// Of those, retransmissions, PDUs.
    pub pdus_retransmitted: u64,
}

/// The share of a run of length `end` a medium was busy for `busy_ns`, in [0, 1] (0 for an
/// empty run).
pub fn busy_share(busy_ns: u64, end: Time) -> f64 {
    if end.0 > 0 {
        busy_ns.min(end.0) as f64 / end.0 as f64
    } else {
        0.0
    }
}

/// The hops' sections of a run report, kind by kind in the hops' order (what
/// `lasthop_scenario::build::network::hop_reports` gives every world).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HopReports {
    pub links: Vec<LinkReport>,
    pub wlans: Vec<WlanReport>,
    pub wcdma: Vec<RlcReport>,
}
