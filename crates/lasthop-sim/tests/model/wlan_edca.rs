//! EDCA's prioritisation against ns-3 3.44 (tests/data/wifi/ns3_edca.csv, made by
//! tests/data/wifi/ns3_edca.py; tests/data/wifi/README.md compares and explains): stations of
//! one 802.11ac BSS (VHT MCS 7, 80 MHz, one stream, 800 ns GI, 24 Mb/s Block Acks) sending UDP to
//! their AP in AC_VO and AC_BE — each category's share of the channel when both saturate, and
//! the delay of a light AC_VO flow beside saturated AC_BE stations.
//!
//! The ns-3 rows compared are its `one_exchange` variant: AC_VO without a TXOP limit (so one
//! exchange per access, its Duration/ID covering the Block Ack only, as in lasthop) and A-MPDUs
//! of at most 33 MPDUs, what an exchange within WMM's 1.504 ms TXOP carries (lasthop's limit).
//! With ns-3's own TXOP handling (2.080 ms, TXOP bursts, NAVs to the TXOP limit's end) one
//! saturated AC_VO station leaves AC_BE nothing (the CSV's other variants, the README).

use lasthop_sim::{run_scenario, Column, RunOutput, Scenario};

/// Counted from 1 s (the warm-up) to the end, 21 s, in both simulators.
const FROM_S: f64 = 1.0;
const DURATION: &str = "21s";

/// A flow of the scenarios: (name, in AC_VO, UDP payload bytes, interval µs).
type Flow = (&'static str, bool, u32, u32);

/// A saturating flow: 1472 B payloads (1500 B IP) every 39 µs, 302 Mb/s (ns-3: 300 Mb/s), more
/// than one station carries (VHT MCS 7 80 MHz: 264 Mb/s in 42-MPDU A-MPDUs).
const fn sat(name: &'static str, vo: bool) -> Flow {
    (name, vo, 1472, 39)
}

/// The configurations of the CSV, flows named as its `flow` column.
fn configuration(name: &str) -> Vec<Flow> {
    match name {
        "vo1_be1" => vec![sat("vo1", true), sat("be1", false)],
        "vo2_be2" => vec![sat("vo1", true), sat("vo2", true), sat("be1", false), sat("be2", false)],
        // A call-like AC_VO flow: 200 B payloads (228 B IP) every 800 µs, 2 Mb/s.
        "call_be3" => vec![("call", true, 200, 800), sat("be1", false), sat("be2", false), sat("be3", false)],
        _ => unreachable!("{name}"),
    }
}

/// Station i+1 sends flow i to the AP. AC_VO flows are marked EF (DSCP 46: UP 6, AC_VO in
/// Linux's mapping; ns-3 maps EF to UP 5, AC_VI, so its script marks them CS6, UP 6 there).
/// Queues of 500 packets per category (ns-3's WifiMacQueue), a BlockAckRequest after a missed
/// Block Ack (ns-3's UseExplicitBarAfterMissedBlockAck).
fn scenario(flows: &[Flow], seed: u64) -> String {
    let mut s = format!("[simulation]\nduration = \"{DURATION}\"\ninterval = \"1s\"\nseed = {seed}\n[[nodes]]\nname = \"AP\"\n");
    for i in 1..=flows.len() {
        s += &format!("[[nodes]]\nname = \"S{i}\"\n");
    }
    let stations: Vec<String> = (1..=flows.len()).map(|i| format!("\"S{i}\"")).collect();
    s += &format!(
        "[[wlans]]\nname = \"bss\"\nstandard = \"802.11ac\"\nwidth = 80\nmcs = 7\nap = \"AP\"\nstations = [{}]\nqueue = \"500p\"\nbar_after_missed_block_ack = true\n",
        stations.join(", ")
    );
    for (i, (name, vo, size, interval)) in flows.iter().enumerate() {
        let dscp = if *vo { 46 } else { 0 };
        s += &format!(
            "[[flows]]\nname = \"{name}\"\nsrc = \"S{}\"\ndst = \"AP\"\ndscp = {dscp}\napp = {{ type = \"cbr\", size = \"{size}B\", interval = \"{interval}us\" }}\n",
            i + 1
        );
    }
    s
}

fn run(toml: &str) -> RunOutput {
    run_scenario(Scenario::from_toml_str(toml, "test.toml", &[]).unwrap_or_else(|e| panic!("{e}")))
}

/// A flow's IP-byte throughput at the AP, Mb/s, and mean one-way delay, ms, over the intervals
/// from FROM_S to the end (the intervals table: IP bytes received, delay per received packet),
/// as the ns-3 script counts them.
fn measured(out: &RunOutput, flow: &str) -> (f64, f64) {
    let t = out.table("intervals").unwrap();
    let (Some(Column::Str(names)), Some(Column::F64(starts)), Some(Column::F64(thr)), Some(Column::U64(rx)), Some(Column::OptF64(delay))) =
        (t.column("flow"), t.column("t_start_s"), t.column("throughput_rx_bps"), t.column("rx_packets"), t.column("delay_mean_ms"))
    else {
        panic!("interval columns missing")
    };
    let rows: Vec<usize> = (0..names.len()).filter(|&i| names[i] == flow && starts[i] >= FROM_S - 1e-9).collect();
    let mbps = rows.iter().map(|&i| thr[i]).sum::<f64>() / rows.len() as f64 / 1e6;
    let packets: u64 = rows.iter().map(|&i| rx[i]).sum();
    let delay = rows.iter().map(|&i| delay[i].unwrap_or(0.0) * rx[i] as f64).sum::<f64>() / packets as f64;
    (mbps, delay)
}

/// One configuration's outcome, averaged over runs: AC_VO's and AC_BE's IP-byte throughput,
/// Mb/s, and the unsaturated AC_VO flow's mean delay, ms (call_be3).
#[derive(Debug, Default)]
struct Outcome {
    vo_mbps: f64,
    be_mbps: f64,
    call_delay_ms: Option<f64>,
    runs: usize,
}

impl Outcome {
    fn vo_share(&self) -> f64 {
        self.vo_mbps / (self.vo_mbps + self.be_mbps)
    }
    fn vo_over_be(&self) -> f64 {
        self.vo_mbps / self.be_mbps
    }
}

/// ns-3's outcome: the mean over the seeds of the CSV's `one_exchange` rows of `config`.
fn ns3(config: &str) -> Outcome {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/wifi/ns3_edca.csv");
    let text = std::fs::read_to_string(path).expect("the ns-3 EDCA table");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    let (c, v, s, ac, m, d) = (col("config"), col("variant"), col("seed"), col("ac"), col("ns3_mbps"), col("ns3_delay_ms"));
    let mut o = Outcome::default();
    let mut seeds = std::collections::BTreeSet::new();
    let mut delays = Vec::new();
    for x in lines.map(|l| l.split(',').collect::<Vec<_>>()).filter(|x| x[c] == config && x[v] == "one_exchange") {
        seeds.insert(x[s].to_string());
        let mbps: f64 = x[m].parse().unwrap();
        if x[ac] == "AC_VO" {
            o.vo_mbps += mbps;
        } else {
            o.be_mbps += mbps;
        }
        if !x[d].is_empty() {
            delays.push(x[d].parse::<f64>().unwrap());
        }
    }
    o.runs = seeds.len();
    assert!(o.runs > 0, "no ns-3 rows of {config}");
    o.vo_mbps /= o.runs as f64;
    o.be_mbps /= o.runs as f64;
    o.call_delay_ms = (!delays.is_empty()).then(|| delays.iter().sum::<f64>() / delays.len() as f64);
    o
}

/// lasthop's outcome: the mean over runs with `seeds`.
fn lasthop(config: &str, seeds: std::ops::RangeInclusive<u64>) -> Outcome {
    let flows = configuration(config);
    let mut o = Outcome::default();
    let mut delays = Vec::new();
    for seed in seeds {
        let out = run(&scenario(&flows, seed));
        for (name, vo, _, interval) in &flows {
            let (mbps, delay) = measured(&out, name);
            if *vo {
                o.vo_mbps += mbps;
            } else {
                o.be_mbps += mbps;
            }
            if *interval > 100 {
                delays.push(delay);
            }
        }
        o.runs += 1;
    }
    o.vo_mbps /= o.runs as f64;
    o.be_mbps /= o.runs as f64;
    o.call_delay_ms = (!delays.is_empty()).then(|| delays.iter().sum::<f64>() / delays.len() as f64);
    o
}

fn off(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

#[test]
fn ac_vo_against_ac_be_is_ns3s_within_ten_percent() {
    let mut table = String::new();
    let mut fails = Vec::new();
    let mut check = |what: String, lh: f64, ns: f64, tolerance: f64| {
        table += &format!("{what}: lasthop {lh:.4}, ns-3 {ns:.4} ({:+.1} %)\n", (lh / ns - 1.0) * 100.0);
        if off(lh, ns) >= tolerance {
            fails.push(what);
        }
    };
    // One AC_VO and one AC_BE station, both saturated (ns-3, 16 seeds: 245.9 and 4.53 Mb/s,
    // AC_VO / AC_BE 54.3). AC_BE sends only when its backoff ends before AC_VO's (AIFSN 3, CW 15
    // against AIFSN 2, CW 3): about half of its tries collide, after which its CW doubles, up to
    // 1023, and its BlockAckRequest must win too. So few wins, in bursts, and its throughput
    // varies by ±15 % between 20 s runs in both simulators: the ratio's standard error is ~4 %
    // over ns-3's 16 runs and ~9 % over lasthop's 4 here (4 s of test; lasthop's 16 seeds give
    // 246.3 and 4.40 Mb/s, 56.0, +3 %). Its share is the robust check.
    let (n, l) = (ns3("vo1_be1"), lasthop("vo1_be1", 1..=4));
    check(format!("vo1_be1 AC_VO share ({} ns-3 runs, {} lasthop)", n.runs, l.runs), l.vo_share(), n.vo_share(), 0.10);
    check("vo1_be1 AC_VO / AC_BE".into(), l.vo_over_be(), n.vo_over_be(), 0.10);
    // A call (2 Mb/s in AC_VO) beside three saturated AC_BE stations (ns-3, 3 seeds: 185.9 Mb/s
    // of AC_BE, the call's mean delay 1.628 ms). The call's packets wait for the AC_BE exchange
    // on the air (1.86 ms: 42 MPDUs, SIFS, Block Ack) and an access: 10 % of the mean is 0.16 ms,
    // 18 slots, a meaningful bound. The call takes 1.2 % of the channel.
    let (n, l) = (ns3("call_be3"), lasthop("call_be3", 1..=1));
    check(format!("call_be3 AC_VO share ({} ns-3 runs, {} lasthop)", n.runs, l.runs), l.vo_share(), n.vo_share(), 0.10);
    check("call_be3 AC_VO / AC_BE".into(), l.vo_over_be(), n.vo_over_be(), 0.10);
    check("call_be3 AC_BE Mb/s".into(), l.be_mbps, n.be_mbps, 0.10);
    check("call_be3 call's mean delay, ms".into(), l.call_delay_ms.unwrap(), n.call_delay_ms.unwrap(), 0.10);
    eprint!("{table}");
    assert!(fails.is_empty(), "off by 10 % or more: {fails:?}\n{table}");
}

#[test]
fn two_ac_vo_stations_against_two_ac_be_is_ns3s_within_ten_percent() {
    // Two AC_VO and two AC_BE stations, all saturated: ns-3 (3 seeds) gives AC_VO 152.8 Mb/s,
    // AC_BE 25.7 (AC_VO's share 0.856, AC_VO / AC_BE 5.95). More than a third of the AC_VO
    // stations' tries (CW 3) collide, mostly with each other. After such a collision the AC_BE
    // stations count their AIFS from the collided PPDUs' end (equal-power PPDUs starting
    // together: no preamble detected, no PHY error, no EIFS), while the AC_VO stations first
    // wait their Block Ack timeout (45 us): AC_BE, 43 us + its backoff after the end, goes first
    // when its counter is small. Before lasthop modelled the colliders' timeout (every station
    // idle from the colliders' end + SIFS + Block Ack) it gave 172.2 and 4.4 (AC_VO / AC_BE 39);
    // an idealised slot model gives 6.1 with ns-3's rule and 43 with that one (`ns3_edca.py
    // --slot-model`), so the ratio is the sensitive check.
    let (n, l) = (ns3("vo2_be2"), lasthop("vo2_be2", 1..=3));
    let table = format!("ns-3 {n:?} (VO share {:.4}, VO/BE {:.2})\nlasthop {l:?} (VO share {:.4}, VO/BE {:.2})", n.vo_share(), n.vo_over_be(), l.vo_share(), l.vo_over_be());
    eprintln!("{table}");
    assert!(off(l.vo_share(), n.vo_share()) < 0.10 && off(l.vo_over_be(), n.vo_over_be()) < 0.10, "{table}");
}

