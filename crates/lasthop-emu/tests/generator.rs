//! Emulated UDP flows are sessions of the measure world's generator (lasthop-gen): its header,
//! records and meters, across the emulated hops. Needs root, /dev/net/tun and iproute2; skips
//! with the reason otherwise.

use lasthop_emu::{netns, EmuOptions, Emulation};
use lasthop_scenario::Scenario;

#[test]
fn a_udp_flow_is_measured_by_the_generator_across_the_emulated_dumbbell() {
    let missing = netns::missing_requirements();
    if !missing.is_empty() {
        eprintln!("skipped: {}", missing.join("; "));
        return;
    }
    // The dumbbell for 3 s; the voice flow (160 B every 20 ms from 0.5 s) alone: the bulk flow
    // starts after the end.
    let o: Vec<(String, String)> =
        [("simulation.duration", "3s"), ("flows.bulk.start", "10s")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let s = Scenario::from_toml_str(lasthop_scenario::bundled::bundled("dumbbell").unwrap(), "dumbbell", &o).unwrap();
    let emu = Emulation::start(s, &EmuOptions { handle_signals: false, ..EmuOptions::run() }).unwrap();
    emu.wait();
    let out = emu.finish().unwrap();
    let em = out.emulator.to_value();
    eprintln!("emulator {em}");
    let g = &em["generator"][0];
    assert_eq!(g["flow"], "voice");
    assert!(g["error"].is_null(), "{g}");
    assert_eq!(g["clock"], "monotonic", "both ends on one kernel's clock: no offset to estimate");
    let voice = out.report.flows.iter().find(|f| f.name == "voice").unwrap();
    let v = &voice.forward;
    // Departures at 0.5 s + k·20 ms before the 3 s end: k = 0..124, 125 datagrams (hand count).
    assert_eq!(g["measure"]["requested_packets"], 125, "{g}");
    assert_eq!(v.sent_packets, 125);
    assert_eq!(v.received_packets, 125, "an idle dumbbell loses nothing: {v:?}");
    // IP bytes: 160 B of payload (the generator's 40-byte header inside it) + 28 B of UDP/IPv4.
    assert_eq!(v.sent_bytes, 125 * 188);
    assert!((voice.start_s - 0.5).abs() < 1e-9, "the flow starts where the scenario says: {}", voice.start_s);
    // One way: 1 ms + 24 ms of propagation + serialization of 188 B at 100 and 10 Mb/s
    // (15 µs + 150 µs) = 25.165 ms; the applications add their stacks' time and the emulator its
    // release lateness (tens of µs each), so the mean is within 1 ms above.
    let model = 25.0 + (188.0 * 8.0 / 100e6 + 188.0 * 8.0 / 10e6) * 1e3;
    let (min, mean) = (v.delay_ms.min.unwrap(), v.delay_ms.mean.unwrap());
    assert!(min >= model - 0.01 && mean < model + 1.0, "delay min {min} mean {mean} ms, the model's {model:.3} ms");
    // The generator's jitters, both of them, are there: RFC 3550's estimator and D-ITG's.
    assert!(v.jitter_ms.rfc3550.is_some() && v.jitter_ms.ditg.is_some(), "{:?}", v.jitter_ms);
    assert!(v.jitter_ms.rfc3550.unwrap() < 1.0, "a CBR flow on an idle path barely jitters: {:?}", v.jitter_ms);
    // The signalling crossed outside the models, and no generator datagram was malformed.
    assert!(em["signalling_packets"].as_u64().unwrap() > 20, "hello, 16 probes, setup, stop and their answers: {em}");
    assert_eq!(g["receiver_malformed"], 0);
}
