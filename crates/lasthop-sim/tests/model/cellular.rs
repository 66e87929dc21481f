//! W-CDMA scenarios: the paper's Table 2 regime, lossless delivery with unlimited ARQ, and
//! conservation through the RLC.

use crate::common;

use lasthop_sim::{run_scenario, RunOutput, Scenario};

const WCDMA: &str = include_str!("../../../../scenarios/wcdma.toml");

fn run(overrides: &[(&str, &str)]) -> RunOutput {
    let ov: Vec<(String, String)> = overrides.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    run_scenario(Scenario::from_toml_str(WCDMA, "wcdma.toml", &ov).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn greedy_newreno_reaches_the_table_2_regime() {
    // Koga et al. Table 2 (max 5 retransmissions, WT 500 ms, UDP 32 kb/s): TCP 293.29 kb/s,
    // UDP loss: transport 0.35 %, application 93.22 %. We hold TCP to ±10 % of the paper and
    // the UDP stream to "mostly late" (application loss above half), the regime the paper shows.
    let out = run(&[("flows.udp.app.interval", "65ms")]);
    let g = out.flow("tcp").unwrap().forward.goodput_bps;
    assert!((g / 293_290.0 - 1.0).abs() < 0.10, "TCP goodput {:.1} kb/s, paper 293.29", g / 1e3);
    let udp = &out.flow("udp").unwrap().forward;
    let app = udp.application_lost_packets as f64 / udp.sent_packets as f64;
    assert!(app > 0.5, "application loss {app:.3}");
}

#[test]
fn unlimited_retransmissions_deliver_every_sdu() {
    let out = run(&[("wcdma.radio.unlimited_retx", "true"), ("flows.tcp.start", "59s"), ("flows.tcp.stop", "59.5s")]);
    let udp = &out.flow("udp").unwrap().forward;
    let c = &udp.lost_by_cause;
    assert_eq!(c.retry_limit + c.out_of_order + c.queue_drop, 0, "{c:?}");
    assert_eq!(udp.sent_packets, udp.received_packets + c.in_flight_at_end);
    let radio = &out.report.wcdma[0];
    assert!(radio.ttis_lost > 50, "the channel must have lost TTIs: {radio:?}");
}

#[test]
fn packets_in_the_rlc_are_counted_until_delivered_or_dropped() {
    // Short WT and no retransmissions for UDP: discards and out-of-order drops both happen.
    let out = run(&[("wcdma.radio.waiting_timeout", "0ms"), ("wcdma.radio.max_retx_udp", "0"), ("simulation.duration", "20.01s")]);
    let [_, _, discards, out_of_order, _] = common::assert_conservation(&out);
    assert!(discards > 0 && out_of_order > 0, "discards ({discards}) and out-of-order drops ({out_of_order}) must occur");
}

#[test]
fn receiver_awnd_follows_the_retransmissions_the_link_needs() {
    // Koga et al. eq. 1 with T from layer 2. On an error-free channel no PDU is retransmitted and
    // the count floors at 1: awnd = (12 000/352 000 + 0.06) · 352 000 / 12 000 = 1 + 1.76 = 2.76,
    // 3 segments. On the Rayleigh channel (5.9 % FER) PDUs need retransmissions, up to two or
    // more within a second, which makes T, and the window, grow (2 -> 5.52 -> 6 segments).
    let awnd = r#"{ link_rate = "384kbps", udp_rate = "32kbps", propagation = "30ms" }"#;
    let clean = run(&[("wcdma.radio.errors.model", "ideal"), ("flows.tcp.tcp.receiver_awnd", awnd)]);
    let cap = |o: &RunOutput| o.flow("tcp").unwrap().tcp().unwrap().receiver_awnd_cap_bytes;
    assert_eq!(cap(&clean), Some(3 * 1460), "one retransmission assumed: round(2.76) = 3 segments");
    let most = |o: &RunOutput| o.flow("tcp").unwrap().tcp().unwrap().receiver_awnd_max_retransmissions.expect("a live awnd controller");
    assert_eq!(most(&clean), 1, "no retransmission observed: the floor of one");
    let faded = run(&[("flows.tcp.tcp.receiver_awnd", awnd)]);
    assert!(most(&faded) >= 2, "fading makes PDUs need two or more retransmissions: {}", most(&faded));
}

#[test]
fn a_receiver_awnd_holds_udp_under_its_deadline_from_the_first_segment() {
    // Koga et al. Table 5, UDP 64 kb/s, awnd round(5.20) = 5 segments, here on an error-free
    // channel. At most 5 TCP SDUs (5 × 38 = 190 PDUs) and a UDP packet or two queue ahead of a
    // UDP packet: it leaves within 20 ms (TTI boundary) + 9 TTIs (180 ms) and arrives 30 ms
    // later, so its one-way delay stays below 51.4 (wired) + 230 = 281 ms, under the 300 ms
    // deadline. (A SYN-ACK offering the whole buffer would let the window run to ~11 segments
    // for the first ~2 s, and about 1 % of the UDP packets miss the deadline.)
    let awnd = r#"{ link_rate = "384kbps", udp_rate = "64kbps", propagation = "30ms", retransmissions = 2 }"#;
    let out = run(&[
        ("wcdma.radio.errors.model", "ideal"),
        ("wcdma.radio.max_retx_udp", "2"),
        ("wcdma.radio.waiting_timeout", "90ms"),
        ("flows.tcp.tcp.receiver_awnd", awnd),
    ]);
    assert_eq!(out.flow("tcp").unwrap().tcp().unwrap().receiver_awnd_cap_bytes, Some(5 * 1460), "round(5.20) = 5 segments");
    let udp = &out.flow("udp").unwrap().forward;
    assert_eq!(udp.late_packets, 0, "no UDP packet later than 300 ms: {:?}", udp.delay_ms);
}

#[test]
fn a_plain_uplink_carries_the_acks_as_a_link() {
    // wcdma.toml models the paper's uplink as a plain error-free link (uplink = "link"): the
    // TCP ACKs cross it as a link named after the channel, and only the downlink has an RLC.
    let out = run(&[]);
    let up = out.report.link("radio:up").expect("the uplink is reported as a link");
    let acks = &out.flow("tcp").unwrap().reverse;
    assert_eq!(up.link_losses, 0, "the paper's uplink is error-free");
    assert_eq!(up.tx_packets, acks.sent_packets, "every TCP ACK, and nothing else, goes up");
    // A 40 B ACK: 0.83 ms at 384 kb/s + 30 ms, then 0.21 ms at 1.5 Mb/s + 50 ms = 81.05 ms, plus
    // a little queueing behind another ACK. Over an RLC uplink it would wait for a TTI boundary
    // and take a 20 ms TTI: 100 ms or more.
    let mean = acks.delay_ms.mean.unwrap();
    assert!((81.04..83.0).contains(&mean), "ACK one-way delay {mean:.2} ms");
    let cells: Vec<&str> = out.report.wcdma.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(cells, vec!["radio:down"]);
}

#[test]
fn a_receiver_awnd_of_given_segments_replaces_eq_3() {
    // Koga et al. Table 5 at UDP 128 kb/s runs awnd = 4 segments, Fig. 8's optimum; eq. 3 gives
    // 4.56, which rounds to 5.
    let awnd = r#"{ link_rate = "384kbps", udp_rate = "128kbps", propagation = "30ms", segments = 4 }"#;
    let out = run(&[("flows.udp.app.interval", "16.25ms"), ("flows.tcp.tcp.receiver_awnd", awnd)]);
    let tcp = out.flow("tcp").unwrap();
    assert_eq!(tcp.tcp().unwrap().receiver_awnd_cap_bytes, Some(4 * 1460));
    // Window over the least round trip: 8 + 50 ms to the BS, two TTIs for 38 PDUs + 30 ms, 0.8 +
    // 30 ms up, 0.2 + 50 ms back = 209 ms, so 4 × 1460 B per RTT is at most 223.5 kb/s.
    let g = tcp.forward.goodput_bps;
    assert!(g < 223_500.0, "TCP goodput {:.1} kb/s above 4 segments per least RTT", g / 1e3);
}

#[test]
fn sdus_passed_up_out_of_order_are_lost_to_a_discarding_application() {
    // UDP alone (the TCP flow starts as the run ends), WT = 0 and late SDUs passed up: every SDU
    // the RLC passes up after a later one reaches the application after a later packet, so the
    // application's reordered count is exactly the RLC's. None is late: at most two
    // retransmissions of 80 ms give 51.4 + 20 + 20 + 30 + 160 = 281.4 ms < 300 ms.
    let out = run(&[
        ("flows.tcp.start", "59.99s"),
        ("wcdma.radio.waiting_timeout", "0ms"),
        ("wcdma.radio.deliver_late", "true"),
        ("wcdma.radio.max_retx_udp", "2"),
        ("flows.udp.discard_reordered", "true"),
    ]);
    let udp = &out.flow("udp").unwrap().forward;
    let radio = &out.report.wcdma[0];
    assert!(radio.sdus_out_of_order > 20, "the channel must reorder: {radio:?}");
    assert_eq!(udp.late_packets, 0);
    assert_eq!(udp.reordered_packets, radio.sdus_out_of_order);
    assert_eq!(udp.application_lost_packets, udp.reordered_packets);
}
