//! Trace-driven link directions (Mahimahi's mm-link format, `lasthop_core::link_trace`): a
//! constant trace against a link of the same rate, a bundled LTE trace end to end, and the
//! errors a bad trace gets.

use crate::common::{self, dumbbell};

use lasthop_sim::{run_scenario, RunOutput, Scenario, ScenarioError};
use std::path::PathBuf;

/// A folder of this test process for trace files (removed by the OS's temp cleaning; named for
/// the process, so parallel runs do not meet).
fn folder(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lh-{}-trace-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The dumbbell with `bottleneck` as its router -> receiver link (20 ms, 100 packets), a
/// NewReno bulk flow for 20 s.
fn path(bottleneck: &str) -> String {
    let flow = "[[flows]]\nname = \"bulk\"\nsrc = \"sender\"\ndst = \"receiver\"\napp = { type = \"bulk\" }\n\
                tcp = { receive_buffer = \"4MiB\", send_buffer = \"4MiB\" }";
    dumbbell("20s", &format!("delay = \"20ms\"\nqueue = \"100p\"\n{bottleneck}"), flow)
}

fn load(text: &str, file: &std::path::Path) -> Result<Scenario, ScenarioError> {
    Scenario::from_toml_str(text, &file.display().to_string(), &[])
}

fn goodput(out: &RunOutput) -> f64 {
    out.report.flows[0].forward.goodput_bps
}

#[test]
fn a_constant_trace_carries_what_a_link_of_its_rate_carries() {
    // "1": one 1504-byte opportunity per millisecond, looping: 1504 · 8 / 1 ms = 12.032 Mb/s,
    // as mm-link's README says of it ("12 Mbps"). Bulk TCP over it within 1 % of the same over
    // a 12.032 Mb/s link (the ACKs' direction, a trace of "1" too, against the same rate).
    let dir = folder("constant");
    std::fs::write(dir.join("12mbps"), "1\n").unwrap();
    let file = dir.join("s.toml");
    let traced = run_scenario(load(&path("trace_a_to_b = \"12mbps\"\ntrace_b_to_a = \"12mbps\""), &file).unwrap());
    let rated = run_scenario(load(&path("rate = \"12032kbps\""), &file).unwrap());
    let (t, r) = (goodput(&traced), goodput(&rated));
    assert!((t / r - 1.0).abs() < 0.01, "traced {t:.0} b/s against rated {r:.0} b/s");
    assert!(t > 0.9 * 12.032e6 * 1460.0 / 1500.0, "the link is kept busy: {t:.0} b/s");
    common::assert_conservation(&traced);
    // The trace direction reports the share of its opportunities' bytes it used.
    let cell = traced.report.links.iter().find(|l| l.name == "bottleneck:router->receiver").unwrap();
    assert!(cell.utilization > 0.9 && cell.utilization <= 1.0, "{}", cell.utilization);
}

#[test]
fn the_bundled_lte_trace_scenario_runs_and_its_queue_holds_the_downloads_excess() {
    let s = Scenario::from_toml_str(lasthop_scenario::bundled::bundled("lte-trace").unwrap(), "<bundled:lte-trace>", &[]).unwrap();
    let out = run_scenario(s);
    common::assert_conservation(&out);
    let down = out.report.flows.iter().find(|f| f.name == "download").unwrap();
    // The synthetic down trace averages 12 Mb/s (lasthop trace show): CUBIC gets most of it.
    assert!(down.forward.goodput_bps > 6e6 && down.forward.goodput_bps < 12.1e6, "{}", down.forward.goodput_bps);
    // With a 500-packet drop-tail queue at the base station the call waits behind the download:
    // its p99 one-way delay far above the 40 ms of propagation.
    let call = out.report.flows.iter().find(|f| f.name == "call-down").unwrap();
    assert!(call.forward.delay_ms.p99.unwrap() > 100.0, "{:?}", call.forward.delay_ms);
}

#[test]
fn a_bad_trace_is_refused_naming_the_field_the_line_and_what_is_valid() {
    let dir = folder("bad");
    let file = dir.join("s.toml");
    let problem = |trace: &str, content: Option<&str>| {
        if let Some(c) = content {
            std::fs::write(dir.join(trace), c).unwrap();
        }
        let e = load(&path(&format!("rate = \"10Mbps\"\ntrace_a_to_b = \"{trace}\"")), &file).unwrap_err();
        assert_eq!(e.problems.len(), 1, "{e}");
        e.problems[0].clone()
    };
    let missing = problem("absent", None);
    assert!(missing.starts_with("links[1].trace_a_to_b: cannot read \"absent\"") && missing.contains("mm-link format"), "{missing}");
    assert!(problem("empty", Some("")).contains("\"empty\" holds no timestamp"));
    let decreasing = problem("decreasing", Some("5\n7\n6\n"));
    assert!(decreasing.contains("\"decreasing\" line 3: 6 comes after 7: timestamps must never decrease"), "{decreasing}");
    assert!(problem("blank", Some("1\n\n2\n")).contains("line 2: is empty"));
    assert!(problem("zero", Some("0\n")).contains("ends at 0 ms"));
    let bundled = problem("bundled:traces/nope", None);
    assert!(bundled.contains("no bundled trace \"traces/nope\"; bundled: bundled:traces/lte-synthetic.down"), "{bundled}");
    // Without a rate, both directions need a trace.
    let e = load(&path("trace_a_to_b = \"bundled:traces/lte-synthetic.down\""), &file).unwrap_err();
    assert!(e.problems[0].contains("needs a rate") && e.problems[0].contains("traces for both directions"), "{e}");
}
