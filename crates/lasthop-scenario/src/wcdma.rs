//! W-CDMA dedicated channels with RLC acknowledged mode (Koga et al., paper 004).

use crate::*;
use lasthop_core::units::{BitRate, Bytes};
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toml::Spanned;

pub(crate) fn default_wcdma_rate() -> BitRate {
    BitRate(384_000)
}
pub(crate) fn default_tti() -> Duration {
    Duration::from_millis(20)
}
pub(crate) fn default_wcdma_delay() -> Duration {
    Duration::from_millis(30)
}
pub(crate) fn default_pdu_payload() -> Bytes {
    Bytes(40)
}
pub(crate) fn default_wcdma_buffer() -> u64 {
    50
}
pub(crate) fn default_max_retx() -> u32 {
    5
}
pub(crate) fn default_wt() -> Duration {
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
