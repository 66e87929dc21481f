//! D-ITG's traffic in the simulator: preset and stochastic flows send the packets a hand count
//! of their schedules gives, on a lossless link where every one arrives.

use lasthop_sim::{run_scenario, RunOutput, Scenario};

fn run(duration: &str, flows: &[(&str, &str)]) -> RunOutput {
    let mut src = format!(
        r#"[simulation]
duration = "{duration}"

[[nodes]]
name = "a"

[[nodes]]
name = "b"

[[links]]
a = "a"
b = "b"
rate = "100Mbps"
delay = "5ms"
queue = "10000p"
"#
    );
    for (name, app) in flows {
        src += &format!("\n[[flows]]\nname = \"{name}\"\nsrc = \"a\"\ndst = \"b\"\napp = {app}\n");
    }
    run_scenario(Scenario::from_toml_str(&src, "ditg.toml", &[]).unwrap_or_else(|e| panic!("{e}")))
}

/// Packets sent, packets received, bytes received (IP packets: payload + 28 B of IPv4/UDP).
fn sent(out: &RunOutput, flow: &str) -> (u64, u64, u64) {
    let f = &out.flow(flow).unwrap().forward;
    (f.sent_packets, f.received_packets, f.received_bytes)
}

#[test]
fn presets_send_the_hand_counted_packets() {
    // 10 s run, flows stop with it (a departure at exactly 10 s is not sent).
    // G.711.1 (traffic.cpp 122–126, 195, 199): one 92-byte packet every 10 ms from 0 to
    // 9.99 s = 1000 packets, 92 000 B. G.729.3 with CRTP: 33 pkt/s, IDT 30.303 ms, departures
    // k · 30.303 ms < 10 s for k = 0..330 = 331 packets of 30 + 2 = 32 B (no VAD); the last
    // leaves at 9.9999999 s and is still on the 5 ms link when the run ends.
    // DNS: every 1785.714 ms, k = 0..5 (5 · 1.7857 = 8.93 s) = 6 packets. game-up: every 60 ms,
    // k = 0..166 (166 · 60 = 9960 ms) = 167 packets of 42 B.
    let out = run(
        "10s",
        &[
            ("voip", r#"{ type = "preset", name = "voip-g711.1" }"#),
            ("g729", r#"{ type = "preset", name = "voip-g729.3", header = "crtp" }"#),
            ("dns", r#"{ type = "preset", name = "dns" }"#),
            ("game", r#"{ type = "preset", name = "game-up" }"#),
        ],
    );
    assert_eq!(sent(&out, "voip"), (1000, 1000, 1000 * (92 + 28)));
    assert_eq!(sent(&out, "g729"), (331, 330, 330 * (32 + 28)));
    assert_eq!(sent(&out, "dns").0, 6);
    assert_eq!(sent(&out, "game"), (167, 167, 167 * (42 + 28)));
}

#[test]
fn count_limits_bursts_and_large_messages_shape_what_is_sent() {
    // count = 250 of G.711.1: 250 packets although the run lasts 10 s (D-ITG -z).
    // Bursts: IDT 1 ms, on 2.5 ms, off 10 ms (constant) = 3 packets per 13 ms cycle (the
    // stochastic module's hand count), 1.3 s = 100 cycles = 300 packets.
    // A 3000-byte message on a 1500-byte MTU path leaves as 1472 + 1472 + 56 B: 3 packets per
    // message, 100 messages (every 100 ms) = 300 packets and 300 000 B of payload.
    let out = run(
        "10s",
        &[
            ("limited", r#"{ type = "preset", name = "voip-g711.1", count = 250 }"#),
            (
                "bursty",
                r#"{ type = "stochastic", idt = { dist = "constant", value = "1ms" }, size = { dist = "constant", value = "100B" }, on = { dist = "constant", value = "2.5ms" }, off = { dist = "constant", value = "10ms" } }"#,
            ),
            ("big", r#"{ type = "stochastic", idt = { dist = "constant", value = "100ms" }, size = { dist = "constant", value = "3000B" } }"#),
        ],
    );
    assert_eq!(sent(&out, "limited"), (250, 250, 250 * (92 + 28)));
    assert_eq!(sent(&out, "big"), (300, 300, 300_000 + 300 * 28));
    let short = run(
        "1.3s",
        &[(
            "bursty",
            r#"{ type = "stochastic", idt = { dist = "constant", value = "1ms" }, size = { dist = "constant", value = "100B" }, on = { dist = "constant", value = "2.5ms" }, off = { dist = "constant", value = "10ms" } }"#,
        )],
    );
    assert_eq!(sent(&short, "bursty").0, 300);
    assert!(sent(&out, "bursty").0 > 2000);
}

#[test]
fn a_stochastic_flow_is_reproducible_and_its_seed_matters() {
    let app = r#"{ type = "stochastic", idt = { dist = "exponential", rate = 200 }, size = { dist = "normal", mean = "300B", sd = "80B" } }"#;
    let a = run("5s", &[("poisson", app)]);
    let b = run("5s", &[("poisson", app)]);
    assert_eq!(sent(&a, "poisson"), sent(&b, "poisson"));
    // 200 pkt/s for 5 s: 1000 expected, Poisson sd √1000 = 31.6; 4 sd = 126.
    let n = sent(&a, "poisson").0 as f64;
    assert!((n - 1000.0).abs() < 126.0, "{n} packets");
}
