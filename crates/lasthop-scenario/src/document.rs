//! The scenario document: its top-level sections, run-wide settings and what to probe;
//! loading (parse, overrides, ranges, cross-field checks) and the JSON Schema.

use crate::*;
use lasthop_core::units::QueueLimit;
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

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

impl Scenario {
    /// Parses and validates a scenario. `file` is used in messages only.
    pub fn from_toml_str(src: &str, file: &str, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let err = |p: String| ScenarioError { file: file.to_string(), problems: vec![p] };
        let text = if overrides.is_empty() { src.to_string() } else { apply_overrides(src, overrides).map_err(err)? };
        let scenario: Scenario = toml::from_str(&text).map_err(|e| err(locate(&text, e.span(), &crate::error::toml_message(e.message()), overrides)))?;
        let mut scenario = scenario;
        scenario.resolve_presets();
        scenario.resolve_traffic_files(file)?;
        scenario.resolve_link_traces(file)?;
        let doc: toml::Value = toml::from_str(&text).map_err(|e| err(crate::error::toml_message(e.message())))?;
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
        let src = crate::input::read_text(path, crate::input::SCENARIO_MAX_BYTES, None)
            .map_err(|e| ScenarioError { file: file.clone(), problems: vec![format!("cannot read the file: it {e}")] })?;
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
            if l.rate.is_none() && !l.fully_traced() {
                p.push(format!("{}links[{i}] needs a rate (e.g. rate = \"10Mbps\"), a preset (ethernet, gprs, umts) or traces for both directions (trace_a_to_b, trace_b_to_a)", at(&l.a)));
            }
            if l.ecn && l.aqm == Aqm::Droptail {
                p.push(format!("links[{i}].ecn = true needs an AQM that marks: aqm = \"codel\", \"fq_codel\" or \"pie\" (drop-tail has no marking)"));
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
            if !f.start_jitter.is_zero() {
                // The drawn start lies below start + start_jitter, so it stays before these.
                let latest = Duration(f.start.0.saturating_add(f.start_jitter.0));
                let duration = self.simulation.duration;
                for (limit, what) in [(f.stop, "its stop"), (Some(duration), "simulation.duration")] {
                    match limit {
                        Some(l) if latest > l && f.start < l => p.push(format!(
                            "{fid}.start_jitter ({}) lets the flow start as late as {latest}, after {what} ({l}); valid: at most {}",
                            f.start_jitter,
                            Duration(l.0 - f.start.0)
                        )),
                        Some(l) if latest > l => {
                            p.push(format!("{fid}.start_jitter: the flow's start ({}) is not before {what} ({l})", f.start))
                        }
                        _ => {}
                    }
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

    pub fn name(&self, fallback: &str) -> String {
        self.simulation.name.clone().unwrap_or_else(|| fallback.to_string())
    }

    /// True when flow `f` is a file transfer run by Hur & Hong's file loop on its hosts.
    pub fn uses_file_loop(&self, f: &Flow) -> bool {
        let App::File { message, app_buffer, send_delay, receive_delay, .. } = &f.app else { return false };
        let has_device = |n: &Spanned<String>| self.nodes.iter().any(|x| &x.name == n.get_ref() && x.device.is_some());
        message.is_some() || app_buffer.is_some() || send_delay.is_some() || receive_delay.is_some() || has_device(&f.src) || has_device(&f.dst)
    }
}

/// The JSON Schema of the scenario format.
pub fn json_schema() -> String {
    let mut schema = serde_json::to_value(schemars::schema_for!(Scenario)).expect("schema serializes");
    crate::limits::publish(&mut schema);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}
