//! Runs a scenario from Rust alone and prints its summary as JSON (the resolved scenario left
//! out): `cargo run --release -p lasthop-sim --example run -- scenarios/dumbbell.toml`.
//! Handy for profiling the simulator without Python (`perf record ... target/release/examples/run`).

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "scenarios/dumbbell.toml".into());
    let s = match lasthop_sim::Scenario::from_path(std::path::Path::new(&path), &[]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let t = std::time::Instant::now();
    let out = match lasthop_sim::try_run_scenario(s) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let mut report = out.report;
    report.header.scenario = serde_json::Value::Null;
    println!("{}", serde_json::to_string_pretty(&report).expect("a run report serializes"));
    eprintln!("wall {:?}", t.elapsed());
}
