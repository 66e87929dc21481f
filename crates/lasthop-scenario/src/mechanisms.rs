//! Mechanisms placed on interfaces: the packet error generator and Snoop (Ng et al., paper 003).

use crate::*;
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toml::Spanned;

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

pub(crate) fn default_snoop_timeout() -> Duration {
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
