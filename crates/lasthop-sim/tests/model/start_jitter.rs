//! `start_jitter` in a run: the README's dumbbell, deterministic at any seed without it, gives
//! each seed its own start times and results with it.

use lasthop_scenario::bundled::bundled;
use lasthop_sim::{run_scenario, RunOutput, Scenario};
use serde_json::Value;

/// The bundled dumbbell (bulk from 0 s, voice from 0.5 s, no loss) at `seed`, with `jitter` on
/// both flows if given.
fn dumbbell(seed: u64, jitter: Option<&str>) -> RunOutput {
    let mut ov = vec![("simulation.seed".to_string(), seed.to_string())];
    if let Some(j) = jitter {
        for f in ["bulk", "voice"] {
            ov.push((format!("flows.{f}.start_jitter"), j.to_string()));
        }
    }
    let s = Scenario::from_toml_str(bundled("dumbbell").unwrap(), "dumbbell", &ov).unwrap_or_else(|e| panic!("{e}"));
    run_scenario(s)
}

/// The per-flow part of a summary (the header names the seed, which always differs).
fn flows(out: &RunOutput) -> Value {
    serde_json::from_str::<Value>(&out.report.to_json()).unwrap()["flows"].clone()
}

#[test]
fn seeds_change_nothing_without_jitter_and_the_starts_and_results_with_it() {
    // Without jitter the dumbbell has no randomness that reaches its results: two seeds, the
    // same flows (the case `lasthop sweep` warns about).
    assert_eq!(flows(&dumbbell(1, None)), flows(&dumbbell(2, None)), "nothing random without jitter");
    let a = dumbbell(1, Some("1s"));
    let b = dumbbell(2, Some("1s"));
    for out in [&a, &b] {
        let bulk = out.report.flows.iter().find(|f| f.name == "bulk").unwrap();
        let voice = out.report.flows.iter().find(|f| f.name == "voice").unwrap();
        assert!((0.0..1.0).contains(&bulk.start_s), "bulk starts in [0 s, 1 s): {}", bulk.start_s);
        assert!((0.5..1.5).contains(&voice.start_s), "voice starts in [0.5 s, 1.5 s): {}", voice.start_s);
    }
    let start = |o: &RunOutput, f: &str| o.report.flows.iter().find(|x| x.name == f).unwrap().start_s;
    assert_ne!(start(&a, "bulk"), start(&b, "bulk"), "seeds 1 and 2 draw different starts");
    assert_ne!(start(&a, "voice"), start(&b, "voice"));
    let bulk_bytes = |o: &RunOutput| o.report.flows.iter().find(|x| x.name == "bulk").unwrap().forward.received_bytes;
    assert_ne!(bulk_bytes(&a), bulk_bytes(&b), "a different start, a different amount delivered by the end");
    assert_ne!(flows(&a), flows(&b));
    // The resolved scenario in the summary records the jitter.
    let v: Value = serde_json::from_str(&a.report.to_json()).unwrap();
    assert_eq!(v["scenario"]["flows"][1]["start_jitter"], "1s", "{}", v["scenario"]["flows"][1]);
}

#[test]
fn a_jittered_cbr_flow_sends_from_its_drawn_start_to_the_end() {
    // Hand count: the voice flow sends 160 B every 20 ms from its drawn start t0 while the
    // time is below the 30 s end, so ⌈(30 s − t0) / 20 ms⌉ packets; without jitter (t0 = 0.5 s)
    // that is 1475.
    for (seed, jitter) in [(1, None), (3, Some("1s")), (4, Some("1s"))] {
        let out = dumbbell(seed, jitter);
        let voice = out.report.flows.iter().find(|f| f.name == "voice").unwrap();
        let t0_ns = (voice.start_s * 1e9).round() as u64;
        let expected = (30_000_000_000 - t0_ns).div_ceil(20_000_000);
        assert_eq!(voice.forward.sent_packets, expected, "seed {seed}: start {} s", voice.start_s);
        if jitter.is_none() {
            assert_eq!(expected, 1475);
        } else {
            assert!((1425..=1475).contains(&expected), "a start in [0.5 s, 1.5 s) sends 1425 to 1475 packets");
        }
    }
}
