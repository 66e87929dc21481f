//! `cargo run --release -p lasthop-sim --example run -- scenarios/dumbbell.toml` prints the summary.
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
    let out = lasthop_sim::run_scenario(s);
    let mut v = out.summary.clone();
    v["scenario"] = serde_json::Value::Null;
    println!("{}", serde_json::to_string_pretty(&v).unwrap());
    eprintln!("wall {:?}", t.elapsed());
    if std::env::var("TRACE").is_ok() {
        for t in &out.tables {
            if t.name.starts_with("tcp/") && !t.name.ends_with("receiver") {
                if let (Some(lasthop_sim::Column::F64(time)), Some(lasthop_sim::Column::Str(ev)), Some(lasthop_sim::Column::U64(cw)), Some(lasthop_sim::Column::U64(fl))) =
                    (t.column("time_s"), t.column("event"), t.column("cwnd_bytes"), t.column("flight_bytes"))
                {
                    for i in 0..time.len() {
                        if ev[i] != "ack" || i % 50 == 0 {
                            println!("{:.4} {} cwnd={} flight={}", time[i], ev[i], cw[i], fl[i]);
                        }
                    }
                }
            }
        }
    }
}
