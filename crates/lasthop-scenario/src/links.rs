//! Point-to-point links: rate, delay, queue and its discipline, loss; access-network presets.

use crate::*;
use lasthop_core::units::{BitRate, Bytes, QueueLimit};
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toml::Spanned;

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
