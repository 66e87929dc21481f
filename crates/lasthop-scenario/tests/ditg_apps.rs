//! The `stochastic` and `preset` apps of a flow: what loads, what a user who got it wrong is told
//! (the file, the field, what is valid), and the schedules the scenario hands to every world.

use lasthop_core::rng::RngStreams;
use lasthop_core::traffic::{Departure, Schedule};
use lasthop_scenario::build::traffic::flow_app;
use lasthop_scenario::Scenario;

fn scenario(app: &str) -> String {
    format!(
        r#"[simulation]
duration = "10s"
seed = 3

[[nodes]]
name = "a"

[[nodes]]
name = "b"

[[links]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"

[[flows]]
name = "f"
src = "a"
dst = "b"
app = {app}
"#
    )
}

/// Loads with the scenario file placed in this crate's `tests/` folder, so traffic files are
/// found in `tests/data/`.
fn load(app: &str) -> Result<Scenario, String> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ditg.toml");
    Scenario::from_toml_str(&scenario(app), file, &[]).map_err(|e| e.to_string())
}

fn error_of(app: &str) -> String {
    match load(app) {
        Ok(_) => panic!("accepted a bad app: {app}"),
        Err(e) => e,
    }
}

fn schedule(app: &str) -> Schedule {
    let s = load(app).unwrap_or_else(|e| panic!("{e}"));
    let rng = RngStreams::new(s.simulation.seed);
    flow_app(&s, &s.flows[0], &rng).messages.expect("a message source")
}

fn first(app: &str, n: usize) -> Vec<(u64, u32)> {
    schedule(app).take(n).map(|d: Departure| (d.at.0 / 1_000, d.bytes)).collect()
}

#[test]
fn a_stochastic_app_reads_naturally_and_gives_its_laws() {
    // Uniform IDT 5..15 ms: every gap inside it; uniform sizes 100..320 B.
    let d = first(r#"{ type = "stochastic", idt = { dist = "uniform", min = "5ms", max = "15ms" }, size = { dist = "uniform", min = "100B", max = "320B" } }"#, 1000);
    assert_eq!(d[0].0, 0);
    assert!(d.windows(2).all(|w| (5_000..15_000).contains(&(w[1].0 - w[0].0))));
    assert!(d.iter().all(|&(_, b)| (100..320).contains(&b)));
    // D-ITG's -C 50 as a rate: every 20 ms.
    let d = first(r#"{ type = "stochastic", idt = { dist = "constant", rate = 50 }, size = { dist = "constant", value = "160B" } }"#, 3);
    assert_eq!(d, vec![(0, 160), (20_000, 160), (40_000, 160)]);
}

#[test]
fn a_voip_preset_is_ditgs_g711_with_its_header_and_vad() {
    // traffic.cpp 195/199: 100 pkt/s of 80 + 12 B; CRTP and VAD: 0.65 · 80 + 2 = 54 B.
    assert_eq!(first(r#"{ type = "preset", name = "voip-g711.1" }"#, 2), vec![(0, 92), (10_000, 92)]);
    assert_eq!(first(r#"{ type = "preset", name = "voip-g711.1", header = "crtp", vad = true }"#, 1), vec![(0, 54)]);
}

#[test]
fn the_game_presets_are_the_home_scenarios_cbr_flows() {
    // Palazzi et al. 2006 §4, as scenarios/home.toml: 200 B every 50 ms, 42 B every 60 ms.
    assert_eq!(first(r#"{ type = "preset", name = "game-down" }"#, 2), vec![(0, 200), (50_000, 200)]);
    assert_eq!(first(r#"{ type = "preset", name = "game-up" }"#, 2), vec![(0, 42), (60_000, 42)]);
}

#[test]
fn a_count_limit_ends_the_schedule() {
    let s = schedule(r#"{ type = "preset", name = "dns", count = 3 }"#);
    let d: Vec<Departure> = s.take(4).collect();
    assert_eq!(d[2].at.0, 2 * 1_785_714_286);
    assert_eq!(d[3].at, lasthop_core::traffic::NEVER);
}

#[test]
fn ditg_files_are_read_relative_to_the_scenario_and_resolved_into_values() {
    // tests/data/ditg-idt.txt holds 25.7, 10, (blank), 20.5 ms: the first line is the start
    // delay, floored to 25 ms (ITGSend.cpp 1612), then the IDTs 10, 20.5, 25.7, 10, ... ms
    // (index 1 first, wrapping to 0: ITGSend.cpp 2581, 3338). Sizes cycle 100, 200, 300 B.
    let app = r#"{ type = "stochastic", idt = { dist = "file", path = "data/ditg-idt.txt" }, size = { dist = "file", path = "data/ditg-sizes.txt" } }"#;
    let d = first(app, 5);
    assert_eq!(d, vec![(25_000, 100), (35_000, 200), (55_500, 300), (81_200, 100), (91_200, 200)]);
    // The resolved scenario carries the numbers, not the path.
    let s = load(app).unwrap();
    let json = serde_json::to_string(&s.flows[0].app).unwrap();
    assert!(json.contains("\"dist\":\"values\"") && !json.contains("ditg-idt.txt"), "{json}");
}

#[test]
fn a_first_idt_below_a_millisecond_starts_at_once_and_the_others_keep_their_fractions() {
    // tests/data/ditg-idt-submillisecond.txt holds 0.7 and 0.25 ms. ITGSend floors the first
    // line to whole ms (ITGSend.cpp 1612: `Delay = (long int) floor(vectTime[0])`): 0, so the
    // flow starts at once (2524: no delay when Delay is 0); the IDTs keep their fractions
    // (strtod, 1603): 0.25, 0.7, 0.25 ms — at 0, 250, 950, 1200 µs.
    let app = r#"{ type = "stochastic", idt = { dist = "file", path = "data/ditg-idt-submillisecond.txt" }, size = { dist = "constant", value = "100B" } }"#;
    let at: Vec<u64> = first(app, 4).into_iter().map(|(t, _)| t).collect();
    assert_eq!(at, vec![0, 250, 950, 1200]);
}

#[test]
fn bad_input_names_the_file_the_field_and_what_is_valid() {
    let size = r#"size = { dist = "constant", value = "100B" }"#;
    let cases: Vec<(String, &[&str])> = vec![
        // A misspelt law: serde lists the valid ones.
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "paretto", shape = 1.5, scale = "10ms" }}, {size} }}"#), &["ditg.toml", "unknown variant `paretto`", "pareto", "weibull"]),
        // A negative scale: a duration cannot be negative.
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "pareto", shape = 1.5, scale = "-10ms" }}, {size} }}"#), &["ditg.toml", "line", "scale", "-10ms"]),
        // A negative shape: out of the published range.
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "gamma", shape = -2.0, scale = "10ms" }}, {size} }}"#), &["flows.f.app.idt.shape = -2", "out of range", "valid: 0.01 to 100"]),
        // A missing field.
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "weibull", shape = 1.5 }}, {size} }}"#), &["ditg.toml", "missing field `scale`"]),
        (r#"{ type = "stochastic", idt = { dist = "constant", value = "10ms" } }"#.to_string(), &["missing field `size`"]),
        // Neither or both of the alternatives.
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "exponential" }}, {size} }}"#), &["flows[0] (\"f\").app.idt.mean: missing: give mean (a duration) or rate (packets per second)"]),
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "constant", value = "1ms", rate = 10 }}, {size} }}"#), &["app.idt.value: give value or rate, not both"]),
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "uniform", min = "20ms", max = "10ms" }}, {size} }}"#), &["app.idt.max: must be at least min"]),
        // An IDT below the engine's floor.
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "weibull", shape = 2.0, scale = "10ns" }}, {size} }}"#), &["app.idt: the typical inter-departure time", "below the 1us floor"]),
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "constant", value = "1ms" }}, on = {{ dist = "constant", value = "1s" }}, {size} }}"#), &["on and off come together"]),
        (r#"{ type = "preset", name = "voip-g999" }"#.to_string(), &["unknown variant `voip-g999`", "voip-g711.1"]),
        (r#"{ type = "preset", name = "dns", vad = true }"#.to_string(), &["header and vad apply to the voip-* presets only"]),
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "file", path = "data/nowhere.txt" }}, {size} }}"#), &["app.idt.path: cannot read \"data/nowhere.txt\""]),
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "file", path = "data/ditg-idt-bad.txt" }}, {size} }}"#), &["\"data/ditg-idt-bad.txt\" line 2: \"abc\" is not an inter-departure time", "milliseconds per line"]),
        (r#"{ type = "preset", name = "dns", count = 0 }"#.to_string(), &["flows.f.app.count = 0 is out of range"]),
        // Not a traffic file at all (issue 24): a device is refused before it is read (/dev/zero
        // grew to 9.7 GB), and a file whose first line is no number is not echoed.
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "file", path = "/dev/zero" }}, {size} }}"#), &["cannot read \"/dev/zero\"", "is a device, not a regular file"]),
        (format!(r#"{{ type = "stochastic", idt = {{ dist = "file", path = "ditg_apps.rs" }}, {size} }}"#), &["\"ditg_apps.rs\" line 1: the first line is not an inter-departure time"]),
    ];
    for (app, wanted) in cases {
        let e = error_of(&app);
        for w in wanted {
            assert!(e.contains(w), "for {app}\nthe message\n  {e}\nlacks {w:?}");
        }
    }
}
