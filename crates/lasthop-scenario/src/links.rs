//! Point-to-point links: rate, delay, queue and its discipline, loss; access-network presets.

use crate::*;
use lasthop_core::link_trace::DeliveryTrace;
use lasthop_core::units::{BitRate, Bytes, QueueLimit};
use lasthop_core::Duration;
use std::path::Path;
use std::sync::Arc;
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
    /// Queue discipline: "droptail" (default), "codel" (RFC 8289), "fq_codel" (RFC 8290) or
    /// "pie" (RFC 8033, Linux's defaults: 15 ms target).
    #[serde(default)]
    pub aqm: Aqm,
    /// The AQM marks ECN-capable packets Congestion Experienced instead of dropping them
    /// (RFC 3168; Linux's `ecn` option of codel, fq_codel and pie: PIE marks while its drop
    /// probability is at most 10 %). Needs aqm = "codel", "fq_codel" or "pie".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
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
    /// A Mahimahi `mm-link` trace for a -> b (a file, relative to the scenario's folder, or
    /// "bundled:traces/NAME" for one compiled into lasthop): that direction sends in the
    /// trace's delivery opportunities (1504 bytes each, the trace looping) instead of at `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_a_to_b: Option<String>,
    /// The same for b -> a.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_b_to_a: Option<String>,
    /// The traces read when the scenario loaded: [a -> b, b -> a].
    #[serde(skip)]
    #[schemars(skip)]
    pub delivery: [Option<Arc<DeliveryTrace>>; 2],
}

/// A queue discipline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Aqm {
    #[default]
    Droptail,
    Codel,
    FqCodel,
    /// RFC 8033 (links only).
    Pie,
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
    /// Rate a -> b (validated present unless both directions follow traces; then unused).
    pub fn rate_a_to_b(&self) -> BitRate {
        self.rate.unwrap_or(BitRate(0))
    }
    pub fn rate_b_to_a(&self) -> BitRate {
        self.rate_b_to_a.unwrap_or(self.rate_a_to_b())
    }

    /// Whether both directions follow traces (then `rate` is not needed).
    pub fn fully_traced(&self) -> bool {
        self.trace_a_to_b.is_some() && self.trace_b_to_a.is_some()
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

/// Trace files compiled into lasthop, named in scenarios as "bundled:traces/NAME" (a bundled
/// scenario's own relative paths are looked up here too).
pub const BUNDLED_TRACES: &[(&str, &str)] = &[("traces/lte-synthetic.down", include_str!("../../../scenarios/traces/lte-synthetic.down")),
    ("traces/lte-synthetic.up", include_str!("../../../scenarios/traces/lte-synthetic.up"))];

/// The prefix of a bundled trace's name.
pub const BUNDLED_TRACE_PREFIX: &str = "bundled:";

/// The text of trace `path` named by the scenario `file` (its folder is the base; a bundled
/// scenario's label "<bundled:NAME>" looks among the bundled traces).
fn trace_text(file: &str, path: &str) -> Result<String, String> {
    let bundled_name = path.strip_prefix(BUNDLED_TRACE_PREFIX).or_else(|| file.starts_with("<bundled:").then_some(path));
    if let Some(name) = bundled_name {
        return BUNDLED_TRACES.iter().find(|(n, _)| *n == name).map(|(_, t)| t.to_string()).ok_or_else(|| {
            let names: Vec<String> = BUNDLED_TRACES.iter().map(|(n, _)| format!("{BUNDLED_TRACE_PREFIX}{n}")).collect();
            format!("no bundled trace {name:?}; bundled: {}", names.join(", "))
        });
    }
    let full = Path::new(file).parent().unwrap_or(Path::new("")).join(path);
    crate::input::read_text(&full, crate::input::traffic_file_max(), Some(crate::input::TRAFFIC_FILE_MAX_ENV))
        .map_err(|e| format!("cannot read {path:?} ({}): {e}", full.display()))
}

/// Reads a trace as a scenario names it ("bundled:traces/NAME" or a file, relative to the
/// current folder), for `lasthop trace`; errors name the line at fault.
pub fn read_link_trace(path: &str) -> Result<DeliveryTrace, String> {
    let text = trace_text("", path)?;
    DeliveryTrace::parse(&text).map_err(|e| match e.line {
        0 => format!("{path}: {}", e.problem),
        n => format!("{path} line {n}: {}", e.problem),
    })
}

impl Scenario {
    /// Reads every link trace (relative to the scenario `file`'s folder) into its link.
    pub(crate) fn resolve_link_traces(&mut self, file: &str) -> Result<(), ScenarioError> {
        let mut problems = Vec::new();
        for (i, l) in self.links.iter_mut().enumerate() {
            for (d, field) in ["trace_a_to_b", "trace_b_to_a"].into_iter().enumerate() {
                let path = if d == 0 { &l.trace_a_to_b } else { &l.trace_b_to_a };
                let Some(path) = path else { continue };
                let parsed = trace_text(file, path).and_then(|text| {
                    DeliveryTrace::parse(&text).map_err(|e| match e.line {
                        0 => format!("{path:?} {}", e.problem),
                        n => format!("{path:?} line {n}: {}", e.problem),
                    })
                });
                match parsed {
                    Ok(t) => l.delivery[d] = Some(Arc::new(t)),
                    Err(e) => problems.push(format!("links[{i}].{field}: {e} (Mahimahi's mm-link format: one delivery opportunity per line, in ms)")),
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ScenarioError { file: file.to_string(), problems })
        }
    }
}
