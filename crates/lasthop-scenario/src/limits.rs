//! The valid range of every number a scenario holds, declared once in [`LIMITS`]: validation
//! checks what the user wrote against it, and the JSON Schema publishes it (`x-valid-range`, a
//! "Valid: …" sentence in the description, and `minimum`/`maximum` for plain numbers).
//!
//! The checker walks the scenario document (TOML, overrides applied) guided by the JSON Schema
//! of [`Scenario`](crate::Scenario), so a field is found by the struct that declares
//! it, whatever the path to it. Walking the document instead of the parsed structs keeps NaN,
//! infinities and keys serde would silently ignore (unknown keys of a field-less enum variant)
//! visible. A test walks the schema and fails for any number, duration, rate, size or queue
//! limit without an entry here, so a new field cannot arrive without its range.

use lasthop_core::units::{self, BitRate, Bytes, QueueLimit};
use lasthop_core::Duration;
use serde_json::{Map, Value as Json};
use toml::Value as Toml;

/// Inclusive bounds of one field, in the field's own kind.
#[derive(Clone, Copy, Debug)]
pub enum Range {
    /// Nanoseconds.
    Time(u64, u64),
    /// Bits per second.
    Rate(u64, u64),
    /// Bytes.
    Size(u64, u64),
    /// Packets, or bytes (`"64KiB"`).
    Queue { packets: (u64, u64), bytes: (u64, u64) },
    Int(i64, i64),
    Real(f64, f64),
}

/// A field (`def` is the Rust type that declares it, as the JSON Schema names it) and its range.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub def: &'static str,
    pub field: &'static str,
    pub range: Range,
}

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const HOUR: u64 = 3_600 * S;
const DAY: u64 = 24 * HOUR;
const KBPS: u64 = 1_000;
const GBPS: u64 = 1_000_000_000;
const GIB: u64 = 1 << 30;
/// Largest UDP payload in an IPv4 datagram (65 535 − 20 − 8).
const MAX_UDP_PAYLOAD: u64 = 65_507;
/// Largest size D-ITG reads from a `-Fs` file (`DIM_MAX_IP_PACKET`, ITGSend.h 34).
const DITG_MAX_SIZE: u64 = 65_536;

const fn time(min: u64, max: u64) -> Range {
    Range::Time(min, max)
}
const fn rate(min: u64, max: u64) -> Range {
    Range::Rate(min, max)
}
const fn size(min: u64, max: u64) -> Range {
    Range::Size(min, max)
}
const fn l(def: &'static str, field: &'static str, range: Range) -> Limit {
    Limit { def, field, range }
}
const PROBABILITY: Range = Range::Real(0.0, 1.0);
const QUEUE: Range = Range::Queue { packets: (1, 1_000_000), bytes: (1, GIB) };
const ANY_RATE: Range = rate(1, 1_000 * GBPS);

/// Every bounded field. Lower bounds of timers and intervals are 1 µs or more: below that a run
/// spends its time on one entity rescheduling itself (see the engine's watchdog).
pub const LIMITS: &[Limit] = &[
    l("Simulation", "duration", time(MS, 30 * DAY)),
    l("Simulation", "interval", time(MS, HOUR)),
    l("Simulation", "seed", Range::Int(0, i64::MAX)),
    // Applications.
    l("App", "bytes", size(1, 1 << 40)),
    l("App", "app_buffer", size(1, GIB)),
    l("App", "message", size(1, GIB)),
    l("App", "receive_delay", time(0, HOUR)),
    l("App", "send_delay", time(0, HOUR)),
    l("App", "interval", time(US, HOUR)),
    l("App", "size", size(1, MAX_UDP_PAYLOAD)),
    l("App", "packet_size", size(1, MAX_UDP_PAYLOAD)),
    l("App", "on", time(US, 30 * DAY)),
    l("App", "off", time(0, 30 * DAY)),
    l("App", "rate", rate(1, 100 * GBPS)),
    l("App", "count", Range::Int(1, 1 << 40)),
    // D-ITG's laws (dists.rs): a rate in packets per second gives an IDT of 1 µs to 11.6 days;
    // sizes up to D-ITG's -Fs bound of 65 536 B (draws are clamped to 64 000 B).
    l("TimeDist", "rate", Range::Real(1e-6, 1e6)),
    l("TimeDist", "value", time(US, 30 * DAY)),
    l("TimeDist", "min", time(0, 30 * DAY)),
    l("TimeDist", "max", time(US, 30 * DAY)),
    l("TimeDist", "mean", time(US, 30 * DAY)),
    l("TimeDist", "sd", time(0, 30 * DAY)),
    l("TimeDist", "scale", time(1, 30 * DAY)),
    l("TimeDist", "shape", Range::Real(0.01, 100.0)),
    l("TimeDist", "location", time(0, 30 * DAY)),
    l("TimeDist", "first", time(0, 30 * DAY)),
    l("TimeDist", "values", time(0, 30 * DAY)),
    l("SizeDist", "value", size(1, DITG_MAX_SIZE)),
    l("SizeDist", "min", size(0, DITG_MAX_SIZE)),
    l("SizeDist", "max", size(1, DITG_MAX_SIZE)),
    l("SizeDist", "mean", size(1, DITG_MAX_SIZE)),
    l("SizeDist", "sd", size(0, DITG_MAX_SIZE)),
    l("SizeDist", "scale", size(1, DITG_MAX_SIZE)),
    l("SizeDist", "shape", Range::Real(0.01, 100.0)),
    l("SizeDist", "location", size(0, DITG_MAX_SIZE)),
    l("SizeDist", "values", size(1, DITG_MAX_SIZE)),
    // End hosts.
    l("Device", "packet_cost", time(0, 10 * S)),
    l("Device", "call_cost", time(0, 10 * S)),
    l("Device", "storage_op_cost", time(0, 10 * S)),
    l("Device", "timer_granularity", time(0, S)),
    l("Device", "copy_rate", ANY_RATE),
    l("Device", "storage_read_rate", ANY_RATE),
    l("Device", "storage_write_rate", ANY_RATE),
    l("Device", "storage_write_growth", Range::Real(0.0, 10.0)),
    // Flows and TCP.
    l("Flow", "start", time(0, 30 * DAY)),
    l("Flow", "start_jitter", time(0, 30 * DAY)),
    l("Flow", "stop", time(0, 30 * DAY)),
    l("Flow", "deadline", time(0, HOUR)), // "0s": none (flows.rs)
    l("Flow", "dscp", Range::Int(0, 63)),
    l("TcpParams", "mss", size(1, 65_495)),
    l("TcpParams", "send_buffer", size(1, GIB)),
    l("TcpParams", "receive_buffer", size(1, GIB)),
    l("TcpParams", "read_size", size(1, GIB)),
    l("TcpParams", "read_rate", ANY_RATE),
    l("TcpParams", "delayed_ack", time(MS, 10 * S)),
    l("TcpParams", "rto_initial", time(MS, HOUR)),
    l("TcpParams", "rto_min", time(MS, HOUR)),
    l("TcpParams", "rto_max", time(MS, HOUR)),
    l("TcpParams", "timer_granularity", time(US, 10 * S)),
    l("TcpParams", "dupack_threshold", Range::Int(1, 1_000)),
    l("TcpParams", "initial_cwnd", Range::Int(1, 10_000)),
    l("TcpParams", "abc_limit", Range::Int(1, 10_000)),
    l("ReceiverAwndParams", "link_rate", ANY_RATE),
    l("ReceiverAwndParams", "udp_rate", ANY_RATE),
    l("ReceiverAwndParams", "propagation", time(0, HOUR)),
    l("ReceiverAwndParams", "retransmissions", Range::Int(1, 100)),
    l("ReceiverAwndParams", "segments", Range::Int(1, 100_000)),
    l("ReceiverAwndParams", "packet_size", size(41, 65_535)),
    // Wired links and the packet error generator.
    l("Link", "rate", ANY_RATE),
    l("Link", "rate_b_to_a", ANY_RATE),
    l("Link", "delay", time(0, HOUR)),
    l("Link", "queue", QUEUE),
    l("Link", "mtu", size(crate::MIN_MTU, 65_535)),
    l("Link", "loss", PROBABILITY),
    l("Link", "loss_a_to_b", PROBABILITY),
    l("Link", "loss_b_to_a", PROBABILITY),
    l("ErrorGenerator", "rate", PROBABILITY),
    // WLANs.
    l("Wlan", "data_rate", rate(100 * KBPS, 100 * GBPS)),
    l("Wlan", "control_rate", rate(100 * KBPS, 100 * GBPS)),
    l("Wlan", "station_rates", rate(100 * KBPS, 100 * GBPS)),
    l("Wlan", "queue", QUEUE),
    l("Wlan", "ap_queue", QUEUE),
    l("Wlan", "ap_driver_queue", QUEUE),
    l("Wlan", "mtu", size(crate::MIN_MTU, 65_535)),
    l("Wlan", "rts_threshold", size(0, 65_535)),
    // The standard counters are 8-bit; larger limits model Bianchi's unlimited retries.
    l("Wlan", "retry_short", Range::Int(1, 1_000_000)),
    l("Wlan", "retry_long", Range::Int(1, 1_000_000)),
    l("Wlan", "positions", Range::Real(-1e6, 1e6)),
    l("Wlan", "width", Range::Int(20, 160)),
    l("Wlan", "streams", Range::Int(1, 4)),
    l("Wlan", "guard_interval", time(400, 3_200)),
    l("Wlan", "mcs", Range::Int(0, 11)),
    l("Wlan", "station_mcs", Range::Int(0, 11)),
    l("Wlan", "snr_db", Range::Real(-20.0, 100.0)),
    l("Wlan", "station_snr_db", Range::Real(-20.0, 100.0)),
    l("Wlan", "airtime_weights", Range::Int(1, 65_535)),
    l("Wlan", "max_ampdu", size(1_600, 6_500_631)),
    l("Wlan", "tx_power_dbm", Range::Real(-30.0, 40.0)),
    l("Wlan", "path_loss_exponent", Range::Real(1.0, 8.0)),
    l("Wlan", "noise_figure_db", Range::Real(0.0, 30.0)),
    l("WifiErrors", "fer", PROBABILITY),
    l("WifiErrors", "ack_fer", PROBABILITY),
    l("WifiErrors", "per_station", PROBABILITY),
    l("WifiErrors", "exponent", Range::Real(1.0, 10.0)),
    l("WifiErrors", "sigma_db", Range::Real(0.0, 30.0)),
    l("WifiErrors", "reference_distance_m", Range::Real(0.01, 10_000.0)),
    l("WifiErrors", "tx_power_dbm", Range::Real(-50.0, 50.0)),
    l("WifiErrors", "frequency_hz", Range::Real(1e6, 1e11)),
    l("WifiErrors", "rx_threshold_dbm", Range::Real(-200.0, 50.0)),
    l("WifiErrors", "control_rx_threshold_dbm", Range::Real(-200.0, 50.0)),
    l("SapLawParams", "capacity", ANY_RATE),
    l("SapLawParams", "period", time(MS, HOUR)),
    l("SapLawParams", "gain", Range::Real(1e-6, 1.0)),
    l("SnoopParams", "local_timeout", time(MS, HOUR)),
    // W-CDMA.
    l("Wcdma", "rate", rate(KBPS, 100 * GBPS)),
    l("Wcdma", "uplink_rate", rate(KBPS, 100 * GBPS)),
    l("Wcdma", "tti", time(MS, S)),
    l("Wcdma", "delay", time(0, HOUR)),
    l("Wcdma", "pdu_payload", size(1, 65_535)),
    l("Wcdma", "buffer", Range::Int(1, 1_000_000)),
    l("Wcdma", "max_retx_tcp", Range::Int(0, 1_000)),
    l("Wcdma", "max_retx_udp", Range::Int(0, 1_000)),
    l("Wcdma", "waiting_timeout", time(0, HOUR)),
    l("Wcdma", "mtu", size(crate::MIN_MTU, 65_535)),
    l("WcdmaErrors", "fer", PROBABILITY),
    l("WcdmaErrors", "p_good_to_bad", PROBABILITY),
    l("WcdmaErrors", "p_bad_to_good", PROBABILITY),
];

pub fn limit_of(def: &str, field: &str) -> Option<&'static Limit> {
    LIMITS.iter().find(|l| l.def == def && l.field == field)
}

impl Range {
    /// "1us to 1h" in the units a scenario file uses.
    pub fn describe(&self) -> String {
        let t = |ns: u64| Duration(ns).to_string();
        let r = |bps: u64| BitRate(bps).to_string();
        let b = |n: u64| Bytes(n).to_string();
        match *self {
            Range::Time(a, z) => format!("{} to {}", t(a), t(z)),
            Range::Rate(a, z) => format!("{} to {}", r(a), r(z)),
            Range::Size(a, z) => format!("{} to {}", b(a), b(z)),
            Range::Queue { packets, bytes } => {
                format!("{}p to {}p, or {} to {}", packets.0, packets.1, b(bytes.0), b(bytes.1))
            }
            Range::Int(a, z) => format!("{a} to {z}"),
            Range::Real(a, z) => format!("{a} to {z}"),
        }
    }

    /// None if `v` (as written in the document) lies in the range, else why not.
    fn check(&self, v: &Toml) -> Option<String> {
        let inside = |x: u64, (a, z): (u64, u64)| x >= a && x <= z;
        let ok = match (*self, v) {
            (Range::Time(a, z), Toml::String(s)) => units::parse_duration(s).is_ok_and(|d| inside(d.0, (a, z))),
            (Range::Rate(a, z), Toml::String(s)) => units::parse_rate(s).is_ok_and(|x| inside(x.0, (a, z))),
            (Range::Size(a, z), Toml::String(s)) => units::parse_bytes(s).is_ok_and(|x| inside(x.0, (a, z))),
            (Range::Queue { packets, bytes }, Toml::String(s)) => match units::parse_queue_limit(s) {
                Ok(QueueLimit::Packets(n)) => inside(n, packets),
                Ok(QueueLimit::Bytes(n)) => inside(n, bytes),
                Err(_) => false,
            },
            (Range::Int(a, z), Toml::Integer(i)) => *i >= a && *i <= z,
            (Range::Real(a, z), Toml::Float(x)) => {
                if !x.is_finite() {
                    return Some("is not a finite number".into());
                }
                *x >= a && *x <= z
            }
            (Range::Real(a, z), Toml::Integer(i)) => (*i as f64) >= a && (*i as f64) <= z,
            // A value of the wrong type: serde reports it with the expected type.
            _ => true,
        };
        (!ok).then(|| "is out of range".to_string())
    }
}

/// One problem per out-of-range value or unknown key in `doc`, named by its dotted path (the
/// same path `--set` takes: array elements by name where they have one).
pub fn check_document(doc: &Toml) -> Vec<String> {
    let schema = schema_json();
    let empty = Map::new();
    let defs = schema.get("definitions").and_then(Json::as_object).unwrap_or(&empty);
    let mut problems = Vec::new();
    Walker { defs, problems: &mut problems }.object(doc, &schema, "Scenario", "");
    problems
}

fn schema_json() -> Json {
    serde_json::to_value(schemars::schema_for!(crate::Scenario)).expect("the schema serializes")
}

struct Walker<'a, 'p> {
    defs: &'a Map<String, Json>,
    problems: &'p mut Vec<String>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn shown(v: &Toml) -> String {
    match v {
        Toml::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

impl<'a> Walker<'a, '_> {
    /// Follows `$ref`s and single `allOf`s; returns the schema and the name of the definition
    /// reached last, if any.
    fn resolve(&self, mut node: &'a Json) -> (&'a Json, Option<&'a str>) {
        let mut name = None;
        loop {
            if let Some(r) = node.get("$ref").and_then(Json::as_str) {
                let n = r.rsplit('/').next().unwrap_or(r);
                match self.defs.get_key_value(n) {
                    Some((k, d)) => {
                        name = Some(k.as_str());
                        node = d;
                    }
                    None => return (node, name),
                }
            } else if let Some([one]) = node.get("allOf").and_then(Json::as_array).map(Vec::as_slice) {
                node = one;
            } else {
                return (node, name);
            }
        }
    }

    /// The variant of a `oneOf`/`anyOf` that `v` is: by its `type`/`model` tag, else the first
    /// object variant, else the first non-null one.
    fn variant(&self, alts: &'a [Json], v: &Toml) -> Option<&'a Json> {
        let tagged = |alt: &Json| {
            let (alt, _) = self.resolve(alt);
            let props = alt.get("properties")?.as_object()?;
            ["type", "model", "dist"].into_iter().find_map(|tag| {
                let want = v.get(tag)?.as_str()?;
                let allowed = props.get(tag)?.get("enum")?.as_array()?;
                allowed.iter().any(|a| a.as_str() == Some(want)).then_some(())
            })
        };
        if v.is_table() {
            if let Some(a) = alts.iter().find(|a| tagged(a).is_some()) {
                return Some(a);
            }
            return alts.iter().find(|a| self.resolve(a).0.get("properties").is_some());
        }
        alts.iter().find(|a| a.get("type").and_then(Json::as_str) != Some("null"))
    }

    /// Walks value `v` described by `node`, a field `field` of definition `def`.
    fn value(&mut self, v: &Toml, node: &'a Json, def: &'a str, field: &str, path: &str) {
        let (node, name) = self.resolve(node);
        for key in ["oneOf", "anyOf"] {
            if let Some(alts) = node.get(key).and_then(Json::as_array).map(Vec::as_slice) {
                if let Some(alt) = self.variant(alts, v) {
                    let owner = name.unwrap_or(def);
                    self.value(v, alt, owner, field, path);
                }
                return;
            }
        }
        match v {
            Toml::Table(_) if node.get("properties").is_some() => self.object(v, node, name.unwrap_or(def), path),
            Toml::Table(t) => {
                // A map (`per_station`, `positions`, `station_rates`): every value is the field.
                let items = node.get("additionalProperties").unwrap_or(&Json::Null);
                for (k, x) in t {
                    self.value(x, items, def, field, &join(path, k));
                }
            }
            Toml::Array(a) => {
                let items = node.get("items").unwrap_or(&Json::Null);
                for (i, x) in a.iter().enumerate() {
                    let key = x.get("name").and_then(Toml::as_str).map(str::to_string).unwrap_or(i.to_string());
                    self.value(x, items, def, field, &join(path, &key));
                }
            }
            leaf => {
                if let Some(limit) = limit_of(def, field) {
                    if let Some(why) = limit.range.check(leaf) {
                        self.problems.push(format!("{path} = {} {why}; valid: {}", shown(leaf), limit.range.describe()));
                    }
                }
            }
        }
    }

    fn object(&mut self, v: &Toml, node: &'a Json, def: &'a str, path: &str) {
        let Some(table) = v.as_table() else { return };
        let props = node.get("properties").and_then(Json::as_object);
        let closed = node.get("additionalProperties") == Some(&Json::Bool(false));
        for (k, x) in table {
            match props.and_then(|p| p.get(k)) {
                Some(p) => self.value(x, p, def, k, &join(path, k)),
                None if closed => {
                    let valid: Vec<&str> = props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                    self.problems.push(format!("{} is not a known field; valid: {}", join(path, k), valid.join(", ")));
                }
                None => {}
            }
        }
    }
}

/// Adds every range of [`LIMITS`] to a JSON Schema of the scenario format.
pub fn publish(schema: &mut Json) {
    for l in LIMITS {
        let def = if l.def == "Scenario" { Some(&mut *schema) } else { schema.pointer_mut(&format!("/definitions/{}", l.def)) };
        let Some(def) = def else { continue };
        let mut targets: Vec<&mut Json> = Vec::new();
        let (props, variants) = split_props(def);
        if let Some(p) = props.and_then(|p| p.get_mut(l.field)) {
            targets.push(p);
        }
        for v in variants {
            if let Some(p) = v.get_mut("properties").and_then(|p| p.get_mut(l.field)) {
                targets.push(p);
            }
        }
        for t in targets {
            let Some(obj) = t.as_object_mut() else { continue };
            let text = l.range.describe();
            let desc = obj.get("description").and_then(Json::as_str).map(|d| format!("{d} Valid: {text}.")).unwrap_or(format!("Valid: {text}."));
            obj.insert("description".into(), Json::String(desc));
            obj.insert("x-valid-range".into(), Json::String(text));
            if let (Range::Int(a, z), Some("integer")) = (l.range, obj.get("type").and_then(Json::as_str)) {
                obj.insert("minimum".into(), a.into());
                obj.insert("maximum".into(), z.into());
            }
            if let (Range::Real(a, z), Some("number")) = (l.range, obj.get("type").and_then(Json::as_str)) {
                obj.insert("minimum".into(), a.into());
                obj.insert("maximum".into(), z.into());
            }
        }
    }
}

fn split_props(def: &mut Json) -> (Option<&mut Map<String, Json>>, Vec<&mut Json>) {
    let Some(obj) = def.as_object_mut() else { return (None, Vec::new()) };
    let mut props = None;
    let mut variants = Vec::new();
    for (k, v) in obj.iter_mut() {
        match k.as_str() {
            "properties" => props = v.as_object_mut(),
            "oneOf" | "anyOf" => variants.extend(v.as_array_mut().into_iter().flatten()),
            _ => {}
        }
    }
    (props, variants)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (definition, field) whose schema is a duration, rate, size, queue limit or number.
    fn bounded_fields(schema: &Json) -> Vec<(String, String)> {
        fn kind_is_bounded(p: &Json) -> bool {
            if let Some(r) = p.get("$ref").and_then(Json::as_str) {
                return ["Duration", "BitRate", "Bytes", "QueueLimit"].iter().any(|k| r.ends_with(k));
            }
            let sub = ["allOf", "anyOf", "oneOf"].iter().filter_map(|k| p.get(*k)?.as_array()).flatten();
            let nested = ["items", "additionalProperties"].iter().filter_map(|k| p.get(*k)).filter(|x| x.is_object());
            let t = p.get("type");
            let numeric = |t: &Json| matches!(t.as_str(), Some("integer" | "number"));
            t.is_some_and(|t| numeric(t) || t.as_array().is_some_and(|a| a.iter().any(numeric)))
                || sub.chain(nested).any(kind_is_bounded)
        }
        let mut out = Vec::new();
        let mut defs: Vec<(String, &Json)> = vec![("Scenario".into(), schema)];
        defs.extend(schema["definitions"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v)));
        for (name, def) in defs {
            let mut props: Vec<&Map<String, Json>> = def.get("properties").and_then(Json::as_object).into_iter().collect();
            for k in ["oneOf", "anyOf"] {
                props.extend(def.get(k).and_then(Json::as_array).into_iter().flatten().filter_map(|v| v.get("properties")?.as_object()));
            }
            for p in props {
                for (field, s) in p {
                    if kind_is_bounded(s) && !out.contains(&(name.clone(), field.clone())) {
                        out.push((name.clone(), field.clone()));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_number_of_the_format_has_a_declared_range() {
        let fields = bounded_fields(&schema_json());
        assert!(fields.len() > 80, "the schema walk found only {} fields", fields.len());
        let missing: Vec<String> =
            fields.iter().filter(|(d, f)| limit_of(d, f).is_none()).map(|(d, f)| format!("{d}.{f}")).collect();
        assert!(missing.is_empty(), "fields without a range in LIMITS: {missing:?}");
        let stale: Vec<String> = LIMITS
            .iter()
            .filter(|l| !fields.iter().any(|(d, f)| d == l.def && f == l.field))
            .map(|l| format!("{}.{}", l.def, l.field))
            .collect();
        assert!(stale.is_empty(), "LIMITS entries for fields that do not exist: {stale:?}");
    }

    #[test]
    fn ranges_are_published_in_the_schema() {
        let mut s = schema_json();
        publish(&mut s);
        let interval = s.pointer("/definitions/Simulation/properties/interval").unwrap();
        assert_eq!(interval["x-valid-range"], "1ms to 1h");
        let dscp = s.pointer("/definitions/Flow/properties/dscp").unwrap();
        assert_eq!((dscp["minimum"].as_i64(), dscp["maximum"].as_i64()), (Some(0), Some(63)));
    }

    #[test]
    fn out_of_range_nan_and_unknown_keys_are_named_by_path() {
        let doc: Toml = toml::from_str(
            r#"
            [simulation]
            duration = "50ns"
            [[flows]]
            name = "video"
            src = "a"
            dst = "b"
            app = { type = "cbr", size = "0B", interval = "20ms" }
            [[wlans]]
            name = "w"
            errors = { model = "shadowing", sigma_db = nan }
            [[wcdma]]
            name = "c"
            bs = "a"
            ms = "b"
            errors = { model = "rayleigh", bogus = 1 }
            "#,
        )
        .unwrap();
        let p = check_document(&doc);
        let has = |s: &str| p.iter().any(|x| x.contains(s));
        assert!(has("simulation.duration = \"50ns\" is out of range; valid: 1ms to 720h"), "{p:#?}");
        assert!(has("flows.video.app.size = \"0B\" is out of range; valid: 1B to 65507B"), "{p:#?}");
        assert!(has("wlans.w.errors.sigma_db = nan is not a finite number"), "{p:#?}");
        assert!(has("wcdma.c.errors.bogus is not a known field; valid: model"), "{p:#?}");
        assert_eq!(p.len(), 4, "{p:#?}");
    }
}
