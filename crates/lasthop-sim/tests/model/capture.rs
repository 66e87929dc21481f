//! pcap captures count what crosses a node's interfaces: every packet it puts on a medium (a hop's
//! Transmit event, which hops emit only once a capture exists) and every packet reaching it.
//! Expected counts come from the run's own per-flow counters (sent, received, queue drops).

use lasthop_sim::{Scenario, Simulation};

/// Records in a pcap file: a 24-byte global header, then a 16-byte header and `incl_len` bytes
/// per record (libpcap format; `incl_len` is the third u32 of the record header).
fn pcap_records(file: &[u8]) -> usize {
    let (mut at, mut n) = (24, 0);
    while at < file.len() {
        let incl = u32::from_le_bytes(file[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + incl;
        n += 1;
    }
    assert_eq!(at, file.len(), "records end exactly at the end of the file");
    n
}

fn sim(toml: &str) -> Simulation {
    Simulation::new(Scenario::from_toml_str(toml, "test.toml", &[]).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn a_capture_at_the_sender_sees_everything_it_sends_and_every_ack_it_receives() {
    let mut s = sim(r#"
[simulation]
duration = "3s"
[[nodes]]
name = "sender"
[[nodes]]
name = "router"
[[nodes]]
name = "receiver"
[[links]]
name = "access"
a = "sender"
b = "router"
rate = "100Mbps"
delay = "1ms"
queue = "1000p"
[[links]]
name = "bottleneck"
a = "router"
b = "receiver"
rate = "2Mbps"
delay = "10ms"
queue = "10p"
[[flows]]
name = "bulk"
src = "sender"
dst = "receiver"
app = { type = "bulk", bytes = "300000B" }
[[flows]]
name = "voice"
src = "sender"
dst = "receiver"
app = { type = "cbr", size = "160B", interval = "20ms" }
"#);
    let c = s.add_capture("sender", None).unwrap();
    s.run().unwrap();
    let n = pcap_records(&s.capture_pcap(c));
    let out = s.output();
    let flow = |name: &str| out.report.flows.iter().find(|f| f.name == name).unwrap();
    let (bulk, voice) = (flow("bulk"), flow("voice"));
    assert!(bulk.forward.lost_by_cause.queue_drop > 0, "the 10-packet bottleneck queue drops some of the transfer");
    // The access link's 1000-packet queue never fills: all the sender sends goes on the wire.
    let expected = bulk.forward.sent_packets + voice.forward.sent_packets + bulk.reverse.received_packets;
    assert_eq!(n as u64, expected);
}

#[test]
fn a_capture_at_a_wlan_station_misses_only_what_its_queue_dropped() {
    // One station offered ~3x what 802.11g carries (Bianchi's saturation set-up, as the bench):
    // its 5-packet queue drops most packets, which never go on the air.
    let mut s = sim(r#"
[simulation]
duration = "2s"
[[nodes]]
name = "AP"
[[nodes]]
name = "S1"
[[wlans]]
name = "bss"
standard = "802.11g"
ap = "AP"
stations = ["S1"]
queue = "5p"
llc_snap = false
[[flows]]
name = "up"
src = "S1"
dst = "AP"
app = { type = "cbr", size = "1472B", interval = "133.333us" }
"#);
    let c = s.add_capture("S1", None).unwrap();
    s.run().unwrap();
    let n = pcap_records(&s.capture_pcap(c));
    let out = s.output();
    let up = &out.report.flows[0].forward;
    assert!(up.lost_by_cause.queue_drop > up.sent_packets / 2, "saturated: {} of {} dropped", up.lost_by_cause.queue_drop, up.sent_packets);
    // On the air once each (retries are not new transmissions): every packet received or
    // dropped after its retries, plus any still in the air when the run ends; not the ones
    // still waiting at the station then (at most the 5 queued and the one in service).
    let on_air = up.received_packets + up.lost_by_cause.retry_limit;
    let in_flight = up.lost_by_cause.in_flight_at_end;
    assert_eq!(up.sent_packets, on_air + up.lost_by_cause.queue_drop + in_flight, "every packet accounted for");
    assert!(in_flight <= 6, "{in_flight} packets in flight at the end");
    assert!((on_air..=on_air + in_flight).contains(&(n as u64)), "{n} captured, {on_air} known to have gone on the air");
}
