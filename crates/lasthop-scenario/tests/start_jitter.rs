//! A flow's `start_jitter`: the start drawn from U[start, start + start_jitter) on the flow's own
//! stream `flow/<name>/start`, nothing drawn without jitter, and the checks of the field.

use lasthop_core::rng::RngStreams;
use lasthop_core::Duration;
use lasthop_scenario::Scenario;

const MS: u64 = 1_000_000;

fn scenario(flow_extra: &str) -> Result<Scenario, String> {
    let text = format!(
        r#"
[simulation]
duration = "10s"
seed = 1

[[nodes]]
name = "a"
[[nodes]]
name = "b"

[[links]]
name = "l"
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"

[[flows]]
name = "voice"
src = "a"
dst = "b"
start = "2s"
{flow_extra}
app = {{ type = "cbr", size = "160B", interval = "20ms" }}
"#
    );
    Scenario::from_toml_str(&text, "jitter.toml", &[]).map_err(|e| e.to_string())
}

#[test]
fn without_jitter_the_start_is_exact_whatever_the_seed() {
    let s = scenario("").unwrap();
    let f = &s.flows[0];
    assert_eq!(f.start_jitter, Duration::ZERO, "the default is no jitter");
    for seed in 0..20 {
        assert_eq!(f.start_time(&RngStreams::new(seed)), Duration::from_secs(2));
    }
    // And the resolved scenario (written into summary.json) carries no start_jitter key, so
    // runs without it keep their bytes.
    let json = serde_json::to_value(&s).unwrap();
    assert!(json["flows"][0].get("start_jitter").is_none(), "{}", json["flows"][0]);
}

#[test]
fn jittered_starts_are_uniform_over_the_half_open_window() {
    let s = scenario("start_jitter = \"500ms\"").unwrap();
    let f = &s.flows[0];
    let (lo, hi) = (2_000 * MS, 2_500 * MS);
    let starts: Vec<u64> = (0..2_000).map(|seed| f.start_time(&RngStreams::new(seed)).0).collect();
    assert!(starts.iter().all(|&t| (lo..hi).contains(&t)), "every start in [2 s, 2.5 s)");
    let distinct: std::collections::BTreeSet<u64> = starts.iter().copied().collect();
    assert!(distinct.len() > 1_990, "seeds give different starts ({} distinct of 2000)", distinct.len());
    // U[0, 500 ms) has mean 250 ms and standard deviation 500/√12 = 144.3 ms; the mean of 2 000
    // draws has a standard error of 3.2 ms, so 250 ± 13 ms is a 4-sigma band.
    let mean_ms = starts.iter().map(|&t| (t - lo) as f64 / MS as f64).sum::<f64>() / starts.len() as f64;
    assert!((mean_ms - 250.0).abs() < 13.0, "mean offset {mean_ms:.1} ms");
    // A quarter of the draws in each quarter of the window (500 each, sd ~19).
    let mut quarters = [0u32; 4];
    for &t in &starts {
        quarters[((t - lo) / (125 * MS)) as usize] += 1;
    }
    assert!(quarters.iter().all(|&q| (420..580).contains(&q)), "{quarters:?}");
}

#[test]
fn the_draw_is_the_first_of_the_flows_start_stream() {
    // Hand-checked against the formula: offset = ⌊x · jitter / 2^64⌋ for the stream's first u64 x,
    // so the same seed gives the same start, and the flow's other streams are not consumed.
    use rand_core::RngCore;
    let s = scenario("start_jitter = \"500ms\"").unwrap();
    let rng = RngStreams::new(7);
    let x = rng.stream("flow/voice/start").next_u64();
    let offset = ((x as u128 * (500 * MS) as u128) >> 64) as u64;
    assert_eq!(s.flows[0].start_time(&rng), Duration(2_000 * MS + offset));
    // A jitter of 1 ns leaves one possible start: the start itself.
    let s = scenario("start_jitter = \"1ns\"").unwrap();
    assert_eq!(s.flows[0].start_time(&rng), Duration::from_secs(2));
}

#[test]
fn a_jitter_past_the_stop_or_the_end_is_refused_naming_the_field() {
    let e = scenario("stop = \"3s\"\nstart_jitter = \"2s\"").unwrap_err();
    assert!(
        e.contains("flows[0] (\"voice\").start_jitter (2s) lets the flow start as late as 4s, after its stop (3s); valid: at most 1s"),
        "{e}"
    );
    let e = scenario("start_jitter = \"9s\"").unwrap_err();
    assert!(
        e.contains("flows[0] (\"voice\").start_jitter (9s) lets the flow start as late as 11s, after simulation.duration (10s); valid: at most 8s"),
        "{e}"
    );
    let e = scenario("start_jitter = \"-1s\"").unwrap_err();
    assert!(e.contains("start_jitter") && e.contains("negative values are not allowed"), "{e}");
    // Exactly up to the end is fine: the drawn start stays below it.
    assert!(scenario("start_jitter = \"8s\"").is_ok());
    assert!(scenario("stop = \"3s\"\nstart_jitter = \"1s\"").is_ok());
}
