//! pcap captures of real packets in the emulator, read back by tshark (Wireshark's reader, an
//! implementation independent of lasthop's writer). Needs root, /dev/net/tun, iproute2 and
//! tshark (scripts/system-deps.sh installs it); each test says why it skips.

use lasthop_emu::{netns, EmuOptions, Emulation};
use lasthop_scenario::Scenario;
use std::process::Command;

fn skip_reason() -> Option<String> {
    let missing = netns::missing_requirements();
    if !missing.is_empty() {
        return Some(missing.join("; "));
    }
    if Command::new("tshark").arg("-v").output().is_err() {
        return Some("tshark is not installed (scripts/system-deps.sh installs it)".into());
    }
    None
}

/// (packets, bytes) of the records tshark reads in `file` whose IPv4 destination is `dst`, and
/// of all records: `frame.len` is the packet's original length, the IP packet itself here
/// (LINKTYPE_RAW).
fn tshark_counts(file: &std::path::Path, dst: &str) -> ((u64, u64), (u64, u64)) {
    let out = Command::new("tshark").args(["-r"]).arg(file).args(["-T", "fields", "-e", "ip.dst", "-e", "frame.len"]).output().unwrap();
    assert!(out.status.success(), "tshark reads the capture: {}", String::from_utf8_lossy(&out.stderr));
    let (mut to, mut all) = ((0, 0), (0, 0));
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut it = line.split('\t');
        let (ip, len) = (it.next().unwrap_or(""), it.next().unwrap_or("0").trim().parse::<u64>().unwrap());
        all = (all.0 + 1, all.1 + len);
        if ip == dst {
            to = (to.0 + 1, to.1 + len);
        }
    }
    (to, all)
}

#[test]
fn a_capture_holds_what_the_interface_transmitted_and_never_a_queue_drop() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    // The dumbbell for 4 s: the bulk flow's slow start overflows the bottleneck's 100-packet
    // queue in its first second (2.4 BDP), so the router's interface towards the receiver sees
    // queue drops that must not be in its capture.
    let o: Vec<(String, String)> = [("simulation.duration", "4s")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let s = Scenario::from_toml_str(lasthop_scenario::bundled::bundled("dumbbell").unwrap(), "dumbbell", &o).unwrap();
    let opts = EmuOptions { handle_signals: false, pcap: vec!["router:receiver".into(), "sender".into()], ..EmuOptions::run() };
    let emu = Emulation::start(s, &opts).unwrap();
    emu.wait();
    let out = emu.finish().unwrap();
    let dir = std::env::temp_dir().join(format!("lh-{}-capture-test", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let em = out.emulator.to_value();
    let link = out.report.links.iter().find(|l| l.name == "bottleneck:router->receiver").unwrap();
    assert!(link.queue_drops > 0, "the test needs queue drops to mean anything: {link:?}");
    for (spec, bytes) in &out.captures {
        let file = dir.join(format!("{}.pcap", spec.replace(':', "-")));
        std::fs::write(&file, bytes.as_ref().expect("no file given: kept in memory")).unwrap();
        let c = em["captures"].as_array().unwrap().iter().find(|c| c["capture"] == spec.as_str()).unwrap();
        let n = |k: &str| c[k].as_u64().unwrap();
        // Both capture points transmit towards the receiver, node 2: 10.0.0.3 (wire::node_address).
        let (tx, all) = tshark_counts(&file, "10.0.0.3");
        eprintln!("{spec}: tshark tx {tx:?} all {all:?}; summary {c}");
        assert_eq!(tx, (n("tx_packets"), n("tx_bytes")), "{spec}: the capture's packets towards the receiver are the interface's transmitted count");
        assert_eq!(all, (n("tx_packets") + n("rx_packets"), n("tx_bytes") + n("rx_bytes")), "{spec}: and the rest what it received");
        // The link model counts a packet once serialized, a capture at the start of its
        // transmission: one still on the wire at the end is captured but not yet counted.
        let name = if spec == "sender" { "access:sender->router" } else { "bottleneck:router->receiver" };
        let l = out.report.links.iter().find(|l| l.name == name).unwrap();
        let extra = n("tx_packets").checked_sub(l.tx_packets);
        assert!(matches!(extra, Some(0 | 1)), "{spec}: captured {} transmissions, {name} serialized {} (queue drops {})", n("tx_packets"), l.tx_packets, l.queue_drops);
    }
    assert_eq!(out.captures.len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
