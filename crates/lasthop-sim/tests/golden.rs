//! The refactoring guard rail: every bundled scenario and every run of every quick one-seed
//! reproduction (172 cases, recorded by `scripts/golden.py --record` into
//! `tests/data/golden/cases.json`) must give byte-identical output — the summary JSON and every
//! column of every table — to the recorded SHA-256. A refactor that changes a single number fails
//! here; a commit that means to change results re-records and says why in its message.
//!
//! The hash is computed exactly as `scripts/golden.py` does from the Python bindings' output: each
//! field followed by a 0 byte; the summary text; per table its name, then per column its name,
//! kind ("f64", "u64", "str"), data (little-endian; a string column as its length then each string)
//! and validity (0/1 bytes for a nullable column, empty otherwise).

use lasthop_sim::{Column, RunOutput, RunReport, Scenario, Simulation, Table};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn output_hash(out: &RunOutput) -> String {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update(b);
        h.update([0u8]);
    };
    field(out.report.to_json().as_bytes());
    for t in &out.tables {
        field(t.name.as_bytes());
        for (name, c) in &t.columns {
            field(name.as_bytes());
            match c {
                Column::F64(v) => {
                    field(b"f64");
                    field(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
                    field(b"");
                }
                Column::OptF64(v) => {
                    field(b"f64");
                    field(&v.iter().flat_map(|x| x.unwrap_or(0.0).to_le_bytes()).collect::<Vec<u8>>());
                    field(&v.iter().map(|x| x.is_some() as u8).collect::<Vec<u8>>());
                }
                Column::U64(v) => {
                    field(b"u64");
                    field(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
                    field(b"");
                }
                Column::Str(v) => {
                    field(b"str");
                    field(&(v.len() as u64).to_le_bytes());
                    for s in v {
                        field(s.as_bytes());
                    }
                    field(b"");
                }
            }
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/golden/cases.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("golden cases")).unwrap()
}

#[test]
fn a_zero_start_jitter_gives_the_recorded_bytes() {
    // `start_jitter = "0s"` written out on every flow of the bundled dumbbell is the default: no
    // draw, no key in the resolved scenario, the very bytes recorded for bundled/dumbbell.
    let golden = golden();
    let case = golden["cases"].as_array().unwrap().iter().find(|c| c["label"] == "bundled/dumbbell").expect("dumbbell case");
    let text = golden["texts"][case["text"].as_str().unwrap()].as_str().unwrap();
    let overrides: Vec<(String, String)> =
        ["bulk", "voice"].iter().map(|f| (format!("flows.{f}.start_jitter"), "0s".to_string())).collect();
    let scenario = Scenario::from_toml_str(text, "dumbbell", &overrides).expect("loads");
    let mut sim = Simulation::new(scenario);
    sim.run().expect("completes");
    assert_eq!(output_hash(&sim.output()), case["output_sha256"].as_str().unwrap());
}

#[test]
fn every_golden_case_is_byte_identical() {
    let golden = golden();
    let mut differ = Vec::new();
    let mut unreadable = Vec::new();
    let cases = golden["cases"].as_array().unwrap();
    for c in cases {
        let text = golden["texts"][c["text"].as_str().unwrap()].as_str().unwrap();
        let overrides: Vec<(String, String)> = c["overrides"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o[0].as_str().unwrap().to_string(), o[1].as_str().unwrap().to_string()))
            .collect();
        let scenario = Scenario::from_toml_str(text, c["file"].as_str().unwrap(), &overrides).expect("golden scenario loads");
        let mut sim = Simulation::new(scenario);
        sim.run().expect("golden run completes");
        let out = sim.output();
        if output_hash(&out) != c["output_sha256"].as_str().unwrap() {
            differ.push(c["label"].as_str().unwrap().to_string());
        }
        // What a reader of summary.json parses is exactly what was written.
        let text = out.report.to_json();
        if serde_json::from_str::<RunReport>(&text).map(|r| r.to_json()).ok().as_deref() != Some(text.as_str()) {
            unreadable.push(c["label"].as_str().unwrap().to_string());
        }
    }
    assert!(cases.len() >= 100, "the golden set covers every bundled scenario and reproduction run");
    assert!(differ.is_empty(), "{} of {} golden cases changed output: {differ:?}", differ.len(), cases.len());
    assert!(unreadable.is_empty(), "the summary of {unreadable:?} does not read back into a RunReport unchanged");
}

/// The output of a run drained every `every` of simulated time: the drained rows, then the
/// end's output, joined per table as a reader of the spooled files sees them (each flow's
/// interval rows together, in the flows' order).
fn drained_output(scenario: Scenario, every: lasthop_core::Duration) -> (RunOutput, usize) {
    let mut sim = Simulation::new(scenario);
    let mut intervals: std::collections::BTreeMap<String, Table> = Default::default();
    let mut traces: Vec<Table> = Vec::new();
    let mut drains_with_rows = 0;
    let mut t = lasthop_core::Time(0);
    while sim.now() < sim.end() {
        t = (t + every).min(sim.end());
        sim.run_until(t).expect("completes");
        let d = sim.drain();
        drains_with_rows += usize::from(!d.intervals.is_empty() || !d.traces.is_empty());
        for iv in d.intervals {
            let Some(Column::Str(flow)) = iv.column("flow") else { panic!("an intervals table has its flow column") };
            intervals.entry(flow[0].clone()).or_insert_with(|| Table::new("intervals")).append(&iv);
        }
        for tr in d.traces {
            match traces.iter_mut().find(|x| x.name == tr.name) {
                Some(x) => x.append(&tr),
                None => traces.push(tr),
            }
        }
    }
    let mut end = sim.output();
    let flows: Vec<String> = end.report.flows.iter().map(|f| f.name.clone()).collect();
    for table in &mut end.tables {
        if table.name == "intervals" {
            // Per flow: its drained rows, then its rows at the end.
            let Some(Column::Str(flow_of_row)) = table.column("flow").cloned() else { panic!("flow column") };
            let mut joined = Table::new("intervals");
            for flow in &flows {
                if let Some(drained) = intervals.get(flow) {
                    joined.append(drained);
                }
                joined.append(&rows_where(table, |i| &flow_of_row[i] == flow));
            }
            *table = joined;
        } else if let Some(pos) = traces.iter().position(|x| x.name == table.name) {
            let mut joined = traces.remove(pos);
            joined.append(table);
            *table = joined;
        }
    }
    // A probed trace has its table at the end even when drained whole (with no rows then).
    let left: Vec<&str> = traces.iter().map(|t| t.name.as_str()).collect();
    assert!(left.is_empty(), "drained traces without a table at the end: {left:?}");
    (end, drains_with_rows)
}

fn rows_where(t: &Table, keep: impl Fn(usize) -> bool) -> Table {
    let mut out = Table::new(t.name.clone());
    for (name, c) in &t.columns {
        let pick = |n: usize| (0..n).filter(|&i| keep(i));
        out.push(
            name,
            match c {
                Column::F64(v) => Column::F64(pick(v.len()).map(|i| v[i]).collect()),
                Column::OptF64(v) => Column::OptF64(pick(v.len()).map(|i| v[i]).collect()),
                Column::U64(v) => Column::U64(pick(v.len()).map(|i| v[i]).collect()),
                Column::Str(v) => Column::Str(pick(v.len()).map(|i| v[i].clone()).collect()),
            },
        );
    }
    out
}

#[test]
fn a_run_drained_as_it_goes_gives_the_bytes_of_one_that_is_not() {
    // Every bundled scenario, drained every 0.7 s of simulated time (inside intervals, not on
    // their boundaries): the drained rows and the end's tables make the recorded golden hash,
    // so a long run streamed to files is the run that was recorded.
    let golden = golden();
    let mut drained_any = 0;
    for c in golden["cases"].as_array().unwrap().iter().filter(|c| c["label"].as_str().unwrap().starts_with("bundled/")) {
        let text = golden["texts"][c["text"].as_str().unwrap()].as_str().unwrap();
        let scenario = Scenario::from_toml_str(text, c["file"].as_str().unwrap(), &[]).expect("loads");
        let (out, drains) = drained_output(scenario, lasthop_core::Duration::from_millis(700));
        assert_eq!(output_hash(&out), c["output_sha256"].as_str().unwrap(), "{}: drained output differs", c["label"]);
        drained_any += usize::from(drains > 1);
    }
    assert!(drained_any >= 3, "several bundled runs were really drained more than once ({drained_any})");
}
