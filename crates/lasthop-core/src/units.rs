//! Human units as they are written in scenario files: `"10ms"`, `"11Mbps"`, `"1500B"`, `"64KiB"`,
//! `"100p"`. This is the one parser of units in lasthop (STYLE.md habit 8); every serde field with
//! a unit uses these types, so an error always says which units are valid.
//!
//! Rates and byte sizes use SI prefixes (k = 1000) except the binary ones (KiB = 1024), as in
//! iperf and ns-3 (`DataRate("11Mbps")` is 11 000 000 b/s).

use crate::time::Duration;
use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject, StringValidation};
use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A queue limit: in packets (`"100p"`) or in bytes (`"64KiB"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

/// Why a unit string was refused; the message lists what is valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {input:?}: {reason}; expected {expected}")]
pub struct UnitError {
    pub what: &'static str,
    pub input: String,
    pub reason: String,
    pub expected: &'static str,
}

const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];
const RATE_UNITS: &[(&str, u64)] = &[
    ("bps", 1),
    ("kbps", 1_000),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("b/s", 1),
    ("kb/s", 1_000),
    ("Mb/s", 1_000_000),
    ("Gb/s", 1_000_000_000),
    // Spellings whose meaning is not in doubt (no one means millibits by "mbps").
    ("kbit", 1_000),
    ("Kbit", 1_000),
    ("Mbit", 1_000_000),
    ("Gbit", 1_000_000_000),
    ("bit/s", 1),
    ("kbit/s", 1_000),
    ("Mbit/s", 1_000_000),
    ("Gbit/s", 1_000_000_000),
    ("mbps", 1_000_000),
    ("gbps", 1_000_000_000),
    ("MBit", 1_000_000),
];
const BYTE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("kB", 1_000),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1_024),
    ("MiB", 1_048_576),
    ("GiB", 1_073_741_824),
];
const DURATION_EXPECTED: &str = "a non-negative number followed by ns, us, ms, s, min or h, e.g. \"10ms\"";
const RATE_EXPECTED: &str = "a positive number followed by bps, kbps, Mbps or Gbps, e.g. \"11Mbps\"";
const BYTES_EXPECTED: &str = "a non-negative number followed by B, kB, MB, GB, KiB, MiB or GiB, e.g. \"1500B\"";
const LIMIT_EXPECTED: &str = "a packet count such as \"100p\" or a byte size such as \"64KiB\"";

/// Splits `"12.5ms"` into its number and unit and scales it; the value must be a finite,
/// non-negative decimal that lands on a whole number of base units.
fn parse_scaled(
    what: &'static str,
    expected: &'static str,
    input: &str,
    units: &[(&str, u64)],
) -> Result<u64, UnitError> {
    let err = |reason: &str| UnitError { what, input: input.to_string(), reason: reason.to_string(), expected };
    let s = input.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim();
    if num.is_empty() {
        return Err(err("no number"));
    }
    if unit.is_empty() {
        return Err(err("no unit"));
    }
    let Some(&(_, scale)) = units.iter().find(|(u, _)| *u == unit) else {
        return Err(err(&format!("unknown unit {unit:?}{}", did_you_mean(unit, units.iter().map(|(u, _)| *u)))));
    };
    let not_a_number = || err(&format!("{num:?} is not a number"));
    let (sign, digits) = match num.as_bytes()[0] {
        b'-' => (-1, &num[1..]),
        b'+' => (1, &num[1..]),
        _ => (1, num),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
        return Err(not_a_number());
    }
    if sign < 0 && (int.bytes().any(|b| b != b'0') || frac.bytes().any(|b| b != b'0')) {
        return Err(err("negative values are not allowed"));
    }
    // Exact decimal arithmetic: value × scale = (int·10^k + frac) · scale / 10^k.
    let frac = frac.trim_end_matches('0');
    let too_large = || err("too large");
    if frac.len() > 30 {
        return Err(err("finer than the smallest unit"));
    }
    let pow = 10u128.pow(frac.len() as u32);
    let decimal = |t: &str| t.bytes().try_fold(0u128, |a, b| a.checked_mul(10)?.checked_add((b - b'0') as u128));
    let int_v = decimal(int).ok_or_else(too_large)?;
    let frac_v = decimal(frac).ok_or_else(too_large)?;
    let numer = int_v.checked_mul(pow).and_then(|x| x.checked_add(frac_v)).and_then(|x| x.checked_mul(scale as u128)).ok_or_else(too_large)?;
    if numer % pow != 0 {
        return Err(err("finer than the smallest unit"));
    }
    let scaled = numer / pow;
    if scaled > (u64::MAX / 2) as u128 {
        return Err(too_large());
    }
    Ok(scaled as u64)
}

/// ", did you mean \"x\"?" for the candidate closest to `input` (Jaro–Winkler ≥ 0.7), or "".
pub fn did_you_mean<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let lower = input.to_lowercase();
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(&lower, &c.to_lowercase());
        // Ties go to the earlier candidate: lists put the canonical spelling first.
        if score >= 0.7 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| format!(", did you mean {c:?}?")).unwrap_or_default()
}

/// Formats `value` with the largest unit that divides it exactly (`1_500_000` ns -> `"1500us"`).
fn format_scaled(value: u64, units: &[(&str, u64)]) -> String {
    let mut best = (units[0].0, units[0].1);
    for &(u, scale) in units {
        let alias = u.contains('/') || u.contains("bit") || u.contains("Bit") || ["µs", "Kbps", "KB", "mbps", "gbps"].contains(&u);
        if value != 0 && value % scale == 0 && scale > best.1 && !alias {
            best = (u, scale);
        }
    }
    format!("{}{}", value / best.1, best.0)
}

pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    parse_scaled("duration", DURATION_EXPECTED, input, DURATION_UNITS).map(Duration)
}

pub fn parse_rate(input: &str) -> Result<BitRate, UnitError> {
    let bps = parse_scaled("rate", RATE_EXPECTED, input, RATE_UNITS)?;
    if bps == 0 {
        return Err(UnitError {
            what: "rate",
            input: input.into(),
            reason: "a rate must be positive".into(),
            expected: RATE_EXPECTED,
        });
    }
    Ok(BitRate(bps))
}

pub fn parse_bytes(input: &str) -> Result<Bytes, UnitError> {
    parse_scaled("size", BYTES_EXPECTED, input, BYTE_UNITS).map(Bytes)
}

pub fn parse_queue_limit(input: &str) -> Result<QueueLimit, UnitError> {
    let s = input.trim();
    for suffix in ["packets", "pkts", "p"] {
        if let Some(n) = s.strip_suffix(suffix) {
            if let Ok(n) = n.trim().parse::<u64>() {
                return Ok(QueueLimit::Packets(n));
            }
        }
    }
    parse_scaled("queue limit", LIMIT_EXPECTED, input, BYTE_UNITS).map(QueueLimit::Bytes)
}

impl BitRate {
    pub fn bps(self) -> u64 {
        self.0
    }
    /// Serialization time of `bytes` at this rate, rounded to the nearest nanosecond.
    pub fn tx_time(self, bytes: u64) -> Duration {
        let num = bytes as u128 * 8 * 1_000_000_000;
        let r = self.0 as u128;
        Duration(((num + r / 2) / r) as u64)
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_scaled(self.0, DURATION_UNITS))
    }
}
impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_scaled(self.0, RATE_UNITS))
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_scaled(self.0, BYTE_UNITS))
    }
}
impl fmt::Display for QueueLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLimit::Packets(n) => write!(f, "{n}p"),
            QueueLimit::Bytes(b) => write!(f, "{}", Bytes(*b)),
        }
    }
}

macro_rules! string_unit_serde {
    ($ty:ty, $parse:path, $pattern:expr, $desc:expr) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($desc)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        $parse(v).map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
        impl JsonSchema for $ty {
            fn schema_name() -> String {
                stringify!($ty).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    string: Some(Box::new(StringValidation {
                        pattern: Some($pattern.into()),
                        ..Default::default()
                    })),
                    metadata: Some(Box::new(schemars::schema::Metadata {
                        description: Some($desc.into()),
                        ..Default::default()
                    })),
                    ..Default::default()
                }
                .into()
            }
        }
    };
}

string_unit_serde!(Duration, parse_duration, r"^\s*[0-9.]+\s*(ns|us|µs|ms|s|min)\s*$", DURATION_EXPECTED);
string_unit_serde!(BitRate, parse_rate, r"^\s*[0-9.]+\s*([kKMG]?bps|[kMG]?b/s)\s*$", RATE_EXPECTED);
string_unit_serde!(Bytes, parse_bytes, r"^\s*[0-9.]+\s*(B|kB|KB|MB|GB|KiB|MiB|GiB)\s*$", BYTES_EXPECTED);
string_unit_serde!(
    QueueLimit,
    parse_queue_limit,
    r"^\s*([0-9]+\s*(p|pkts|packets)|[0-9.]+\s*(B|kB|KB|MB|GB|KiB|MiB|GiB))\s*$",
    LIMIT_EXPECTED
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_to_exact_nanoseconds() {
        assert_eq!(parse_duration("10ms").unwrap(), Duration(10_000_000));
        assert_eq!(parse_duration("0.5s").unwrap(), Duration(500_000_000));
        assert_eq!(parse_duration("1.5us").unwrap(), Duration(1_500));
        assert_eq!(parse_duration(" 24 ms ").unwrap(), Duration(24_000_000));
    }

    #[test]
    fn bad_units_name_what_is_valid() {
        let e = parse_duration("10").unwrap_err().to_string();
        assert!(e.contains("no unit") && e.contains("ms"), "{e}");
        let e = parse_rate("-5Mbps").unwrap_err().to_string();
        assert!(e.contains("negative"), "{e}");
        let e = parse_rate("0Mbps").unwrap_err().to_string();
        assert!(e.contains("positive"), "{e}");
        let e = parse_bytes("12parsecs").unwrap_err().to_string();
        assert!(e.contains("unknown unit \"parsecs\""), "{e}");
        assert!(parse_duration("0.1ns").is_err(), "sub-nanosecond values cannot be represented");
    }

    #[test]
    fn rates_and_sizes_use_si_and_binary_prefixes() {
        assert_eq!(parse_rate("11Mbps").unwrap(), BitRate(11_000_000));
        assert_eq!(parse_rate("64kbps").unwrap(), BitRate(64_000));
        assert_eq!(parse_rate("5.5Mb/s").unwrap(), BitRate(5_500_000));
        assert_eq!(parse_bytes("64KiB").unwrap(), Bytes(65_536));
        assert_eq!(parse_bytes("1500B").unwrap(), Bytes(1500));
        assert_eq!(parse_queue_limit("100p").unwrap(), QueueLimit::Packets(100));
        assert_eq!(parse_queue_limit("64KiB").unwrap(), QueueLimit::Bytes(65_536));
    }

    #[test]
    fn formatting_round_trips_with_the_largest_exact_unit() {
        assert_eq!(Duration(1_500_000).to_string(), "1500us");
        assert_eq!(Duration(24_000_000).to_string(), "24ms");
        assert_eq!(BitRate(10_000_000).to_string(), "10Mbps");
        assert_eq!(Bytes(65_536).to_string(), "64KiB");
        for s in ["10ms", "3s", "7ns", "11Mbps", "64kbps", "1500B", "64KiB"] {
            let d = parse_duration(s).map(|d| d.to_string());
            let r = parse_rate(s).map(|r| r.to_string());
            let b = parse_bytes(s).map(|b| b.to_string());
            assert!([d, r, b].into_iter().flatten().any(|x| x == s), "{s} did not round-trip");
        }
    }

    #[test]
    fn unambiguous_spellings_are_accepted_and_typos_get_a_suggestion() {
        assert_eq!(parse_duration("1h").unwrap(), Duration(3_600_000_000_000));
        assert_eq!(Duration(7_200_000_000_000).to_string(), "2h");
        assert_eq!(parse_rate("20mbps").unwrap(), BitRate(20_000_000));
        assert_eq!(parse_rate("20Mbit").unwrap(), BitRate(20_000_000));
        assert_eq!(parse_rate("64kbit/s").unwrap(), BitRate(64_000));
        assert_eq!(BitRate(20_000_000).to_string(), "20Mbps", "the canonical spelling is written back");
        let e = parse_rate("20Mbs").unwrap_err().to_string();
        assert!(e.contains("did you mean \"Mbps\"?"), "{e}");
        let e = parse_duration("5sec").unwrap_err().to_string();
        assert!(e.contains("did you mean \"s\"?") || e.contains("did you mean \"ms\"?"), "{e}");
    }

    #[test]
    fn serialization_time_is_exact_for_whole_nanoseconds() {
        // 1500 B at 10 Mb/s: 12 000 bit / 1e7 b/s = 1.2 ms exactly.
        assert_eq!(BitRate(10_000_000).tx_time(1500), Duration(1_200_000));
        // 1500 B at 11 Mb/s: 12 000 / 11e6 s = 1090.909 µs -> nearest ns 1 090 909.
        assert_eq!(BitRate(11_000_000).tx_time(1500), Duration(1_090_909));
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any text: a value or an error that names what is valid — never a panic.
        #[test]
        fn any_text_parses_or_says_what_is_valid(s in "\\PC{0,24}|[0-9.eE+-]{0,30}(ns|us|ms|s|h|B|KiB|bps|Mbps|p)") {
            for r in [parse_duration(&s).err(), parse_rate(&s).err(), parse_bytes(&s).err(), parse_queue_limit(&s).err()].into_iter().flatten() {
                prop_assert!(r.to_string().contains("expected"));
            }
        }

        /// What is formatted parses back to the same value.
        #[test]
        fn formatting_round_trips(ns in 0u64..u64::MAX / 4, bps in 1u64..u64::MAX / 4, b in 0u64..u64::MAX / 4) {
            prop_assert_eq!(parse_duration(&Duration(ns).to_string()).unwrap(), Duration(ns));
            prop_assert_eq!(parse_rate(&BitRate(bps).to_string()).unwrap(), BitRate(bps));
            prop_assert_eq!(parse_bytes(&Bytes(b).to_string()).unwrap(), Bytes(b));
        }
    }
}
