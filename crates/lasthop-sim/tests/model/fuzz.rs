//! Property-based fuzzing (10 000 cases per run) of everything a user types: scenario files and `--set` overrides.
//! Each case starts from a bundled scenario, overrides one to three of its fields (or adds a
//! field) with hostile values, and must either load or fail with a message naming the file;
//! whatever loads is run for at most 2 s of simulated time and must finish or stall with the
//! watchdog's error — never panic. `PROPTEST_CASES` scales it (default below).

use lasthop_scenario::bundled::BUNDLED;
use lasthop_sim::{try_run_scenario, Scenario};
use proptest::prelude::*;

/// Every leaf path of a bundled scenario (arrays of tables by element name or index).
fn leaf_paths(v: &toml::Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                leaf_paths(x, &if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, out);
            }
        }
        toml::Value::Array(a) if a.iter().all(toml::Value::is_table) => {
            for (i, x) in a.iter().enumerate() {
                let sel = x.get("name").and_then(toml::Value::as_str).map(str::to_string).unwrap_or(i.to_string());
                leaf_paths(x, &format!("{prefix}.{sel}"), out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

fn all_paths() -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, (_, text)) in BUNDLED.iter().enumerate() {
        let mut paths = Vec::new();
        leaf_paths(&toml::from_str(text).unwrap(), "", &mut paths);
        // Fields a user may add that the file leaves at their defaults.
        paths.extend(["simulation.interval", "flows.0.tcp.rto_min", "flows.0.app.packet_size", "flows.0.deadline"].map(String::from));
        out.extend(paths.into_iter().map(|p| (i, p)));
    }
    out
}

fn hostile_value() -> impl Strategy<Value = String> {
    let numbers = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        Just("1e308".to_string()),
        Just("9223372036854775807".to_string()),
        any::<f64>().prop_map(|x| format!("{x:?}")),
        any::<i64>().prop_map(|x| x.to_string()),
    ];
    let units = ["ns", "us", "ms", "s", "min", "h", "B", "KiB", "GiB", "p", "bps", "kbps", "Gbps", "mbps", "parsec", ""];
    let with_unit = (prop_oneof![Just(0.0), Just(1e-9), Just(1.0), Just(1e15), 0.0..1e6f64], proptest::sample::select(units.to_vec()))
        .prop_map(|(x, u)| format!("\"{x}{u}\""));
    prop_oneof![
        numbers,
        with_unit,
        Just("true".to_string()),
        Just("\"\"".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("{ model = \"rayleigh\", bogus = 1 }".to_string()),
        "[a-zA-Z0-9./ \\x00-\\x1f\u{e9}\u{1F600}]{0,12}".prop_map(|s| format!("{s:?}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hostile_overrides_load_or_fail_clearly(
        picks in proptest::collection::vec((any::<proptest::sample::Index>(), hostile_value()), 1..4),
        scenario in any::<proptest::sample::Index>(),
    ) {
        let paths = all_paths();
        let which = scenario.index(BUNDLED.len());
        let own: Vec<&String> = paths.iter().filter(|(i, _)| *i == which).map(|(_, p)| p).collect();
        let mut overrides: Vec<(String, String)> = picks.iter().map(|(ix, v)| (own[ix.index(own.len())].clone(), v.clone())).collect();
        overrides.push(("simulation.duration".into(), "2s".into()));
        let (name, text) = BUNDLED[which];
        match Scenario::from_toml_str(text, name, &overrides) {
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with(name) && msg.len() < 20_000, "unclear error: {msg}");
            }
            Ok(s) => {
                if let Err(e) = try_run_scenario(s) {
                    prop_assert!(e.to_string().contains("simulated time stopped advancing"));
                }
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics_the_parser(text in "\\PC{0,400}") {
        let _ = Scenario::from_toml_str(&text, "fuzz.toml", &[]);
    }
}
