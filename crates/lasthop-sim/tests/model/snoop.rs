//! Snoop (paper 003, Ng, Chow, Trajkovic): 100 000-byte transfers over a 1 Mb/s 802.11 hop with
//! the packet error generator, with and without the Snoop agent at the base station.

use crate::common;

use lasthop_sim::{run_scenario, RunOutput, Scenario};

/// FH -(10 Mb/s, 5 ms)- BS ~~ 802.11 1 Mb/s ~~ MH1 [MH2]; the paper's TCP: MSS 2264 B, receive
/// buffer 8760 B, delayed ACK 0.2 s, RTO initial 1 s, min 0.5 s, max 64 s.
fn scenario(per: f64, snoop_for: &[&str], mobiles: &[&str]) -> String {
    let mut t = String::from("[simulation]\nduration = \"900s\"\n[[nodes]]\nname = \"FH\"\n[[nodes]]\nname = \"BS\"\n");
    for m in mobiles {
        t += &format!("[[nodes]]\nname = \"{m}\"\n");
    }
    t += "[[links]]\na = \"FH\"\nb = \"BS\"\nrate = \"10Mbps\"\ndelay = \"5ms\"\nmtu = \"2304B\"\n";
    let st: Vec<String> = mobiles.iter().map(|m| format!("\"{m}\"")).collect();
    t += &format!("[[wlans]]\nname = \"w\"\nstandard = \"802.11b\"\nap = \"BS\"\nstations = [{}]\ndata_rate = \"1Mbps\"\nmtu = \"2304B\"\n", st.join(", "));
    for m in mobiles {
        t += &format!("[[error_generators]]\nnode = \"{m}\"\npeer = \"BS\"\nrate = {per}\n");
        t += &format!(
            "[[flows]]\nname = \"to-{m}\"\nsrc = \"FH\"\ndst = \"{m}\"\napp = {{ type = \"file\", bytes = \"100000B\" }}\n\
             tcp = {{ mss = \"2264B\", receive_buffer = \"8760B\", send_buffer = \"8760B\", delayed_ack = \"200ms\", \
             rto_initial = \"1s\", rto_min = \"500ms\", rto_max = \"64s\", window_scale = false }}\n"
        );
    }
    for m in snoop_for {
        t += &format!("[[snoop]]\nnode = \"BS\"\npeer = \"{m}\"\n");
    }
    t
}

fn run(toml: &str) -> RunOutput {
    let out = run_scenario(Scenario::from_toml_str(toml, "snoop.toml", &[]).unwrap_or_else(|e| panic!("{e}")));
    common::assert_conservation(&out);
    out
}

fn response(out: &RunOutput, flow: &str) -> f64 {
    out.flow(flow).unwrap().response_time_s().unwrap_or_else(|| panic!("{flow} did not finish"))
}

#[test]
fn snoop_shortens_the_response_time_at_high_error_rates() {
    // Without errors Snoop changes nothing (the same 1.01 s).
    let clean = response(&run(&scenario(0.0, &[], &["MH"])), "to-MH");
    assert_eq!(clean, response(&run(&scenario(0.0, &["MH"], &["MH"])), "to-MH"));
    // At 30 % packet errors: the paper reports about 68x faster with Snoop; we hold ≥ 5x (we
    // measure about 10x; see the issue note for why ours is smaller).
    let plain = response(&run(&scenario(0.3, &[], &["MH"])), "to-MH");
    let snoop_run = run(&scenario(0.3, &["MH"], &["MH"]));
    let snoop = response(&snoop_run, "to-MH");
    assert!(plain > 5.0 * snoop, "30 % PER: {plain:.1} s without Snoop, {snoop:.1} s with");
    let agent = &snoop_run.report.snoop[0];
    assert!(agent.timer_retransmissions + agent.local_retransmissions > 0);
    assert_eq!(agent.connections_closed, 1, "the connection is forgotten after its FIN");
}

#[test]
fn two_mobiles_both_benefit_and_a_plain_one_coexists() {
    let mobiles = ["MH1", "MH2"];
    let plain = run(&scenario(0.3, &[], &mobiles));
    let both = run(&scenario(0.3, &mobiles, &mobiles));
    for m in mobiles {
        let f = format!("to-{m}");
        assert!(response(&plain, &f) > 1.3 * response(&both, &f), "{m}: {} vs {}", response(&plain, &f), response(&both, &f));
    }
    // Snoop for MH1 only: both transfers complete; MH1 gains, MH2 is not starved.
    let mixed = run(&scenario(0.3, &["MH1"], &mobiles));
    assert!(response(&mixed, "to-MH1") < response(&plain, "to-MH1"));
    assert!(response(&mixed, "to-MH2") < 2.0 * response(&plain, "to-MH2"), "the plain mobile is not penalized");
}

#[test]
fn snoop_repairs_what_the_error_generator_below_it_drops() {
    // Paper 003, Fig. 3: the packet error generator sits below the Snoop agent, so a first
    // transmission the generator drops is already in Snoop's cache, and a local retransmission
    // crosses the generator again. Over 10 seeds at 30 % PER both directions, Snoop keeps TCP's
    // own timeouts rare: the mean download response time falls more than 10x (measured 25x: 5136 s
    // summed over the seeds without Snoop, 206 s with; 3x when the generator sat above the agent).
    let (mut plain, mut snoop, mut timeouts) = (0.0, 0.0, 0);
    for seed in 1..=10 {
        // Without Snoop a transfer can back off to the 64 s ceiling many times: a long horizon.
        let with_seed = |t: String| t.replacen("duration = \"900s\"", &format!("duration = \"20000s\"\nseed = {seed}\ninterval = \"10s\""), 1);
        plain += response(&run(&with_seed(scenario(0.3, &[], &["MH"]))), "to-MH");
        let s = run(&with_seed(scenario(0.3, &["MH"], &["MH"])));
        snoop += response(&s, "to-MH");
        timeouts += s.flow("to-MH").unwrap().tcp().unwrap().sender.timeouts;
    }
    assert!(plain > 10.0 * snoop, "30 % PER over 10 seeds: {plain:.1} s without Snoop, {snoop:.1} s with, {timeouts} TCP timeouts");
}
