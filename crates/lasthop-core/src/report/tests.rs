//! The report's JSON is the `summary.json` format: these tests pin its keys, their order and
//! the kinds of its numbers (the lists below are the keys the simulator wrote with `json!`
//! before the report was typed), check that it reads back unchanged, and keep the published
//! schema current. That real runs serialize byte-identically is the golden test's job
//! (crates/lasthop-sim/tests/golden.rs).

use super::*;
use crate::wifi::dcf::StationStats;
use crate::metrics::{DelayStats, FlowSummary, JitterStats, LossByCause};
use serde_json::Value;

fn loss(in_flight: u64) -> LossByCause {
    LossByCause { queue_drop: 1, link_loss: 0, retry_limit: 0, out_of_order: 0, suppressed: 0, unattributed: 0, in_flight_at_end: in_flight }
}

fn summary(received: bool) -> FlowSummary {
    let v = |x: f64| received.then_some(x);
    FlowSummary {
        sent_packets: 3,
        transport_lost_packets: 1,
        application_lost_packets: 0,
        late_packets: 0,
        reordered_packets: 0,
        sent_bytes: 4500,
        received_packets: 2,
        received_bytes: 3000,
        lost_packets: 1,
        loss_ratio: Some(1.0 / 3.0),
        lost_by_cause: loss(0),
        delivered_bytes: 2920,
        active_s: 2.0,
        throughput_tx_bps: 18_000.0,
        throughput_rx_bps: 12_000.0,
        goodput_bps: 11_680.0,
        delay_ms: DelayStats { mean: v(25.5), std: v(0.5), min: v(25.0), p50: v(25.0), p95: v(26.0), p99: v(26.0), max: v(26.0) },
        jitter_ms: JitterStats { mean: v(1.0), p99: v(1.0), max: v(1.0), rfc3550: v(0.0625), ditg: v(1.0) },
    }
}

fn tcp_flow() -> FlowReport {
    let forward = summary(true);
    FlowReport {
        name: "bulk".into(),
        transport: Transport::Tcp,
        src: "sender".into(),
        dst: "receiver".into(),
        start_s: 0.0,
        stop_s: 2.0,
        reverse: ReverseSummary::from(&forward),
        round_trip: None,
        forward,
        connection: Some(TcpConnectionReport {
            response_time_s: None,
            tcp: TcpReport {
                state: "Established".into(),
                sender: TcpCounters { segments_sent: 3, retransmitted_segments: 1, fast_retransmits: 0, timeouts: 1, persist_probes: 0, rtt_samples: 2 },
                final_cwnd_bytes: 1460,
                srtt_ms: Some(50.0),
                rto_ms: 1000.0,
                windows: AdvertisedWindows { receiver_zero_windows: 0, receiver_min_open_window_bytes: Some(65_535), sender_min_open_window_bytes: None },
                bytes_stored: None,
                bytes_read: 2920,
                receiver_awnd_cap_bytes: None,
                bbr: Some(BbrReport { btl_bw_bps: 9.5e6, rtprop_ms: None, mode: "startup".into() }),
                receiver_awnd_max_retransmissions: None,
                ecn: None,
            },
        }),
    }
}

fn udp_flow() -> FlowReport {
    let forward = summary(false);
    FlowReport {
        name: "voice".into(),
        transport: Transport::Udp,
        src: "sender".into(),
        dst: "receiver".into(),
        start_s: 0.5,
        stop_s: 2.0,
        reverse: ReverseSummary {
            sent_packets: 0,
            received_packets: 0,
            lost_packets: 0,
            lost_by_cause: LossByCause { queue_drop: 0, ..loss(0) },
            delay_ms: MeanMax { mean: None, max: None },
        },
        round_trip: None,
        forward,
        connection: None,
    }
}

fn sample() -> RunReport {
    RunReport {
        header: RunHeader {
            scenario: serde_json::json!({ "simulation": { "duration": "2s", "seed": 7 } }),
            seed: 7,
            simulated_s: 2.0,
            events_processed: 1234,
            packets_in_network_at_end: 0,
        },
        flows: vec![tcp_flow(), udp_flow()],
        links: vec![LinkReport {
            name: "bottleneck:router->receiver".into(),
            tx_packets: 5,
            queue_drops: 1,
            ecn_marks: None,
            aqm_drops: 0,
            link_losses: 0,
            max_queue_packets: 3,
            max_queue_bytes: 4500,
            queue_limit: "100p".into(),
            utilization: 0.25,
        }],
        wlans: vec![WlanReport {
            name: "home".into(),
            exchanges: 10,
            successes: 9,
            collisions: 1,
            busy_share: 0.5,
            airtime_fairness: None,
            members: vec![WlanMemberReport {
                node: "ap".into(),
                mac: StationStats {
                    enqueued: 10,
                    queue_drops: 0,
                    retry_drops: 0,
                    retry_exhausted_after_delivery: 0,
                    attempts: 11,
                    collisions: 1,
                    frame_errors: 0,
                    retries: 1,
                    delivered: 0,
                    duplicates_filtered: 0,
                    max_queue: 2,
                },
                aggregation: None,
            }],
        }],
        wcdma: vec![RlcReport {
            name: "cell:down".into(),
            sdus_in: 4,
            buffer_drops: 0,
            sdus_discarded: 0,
            sdus_out_of_order: 0,
            sdus_delivered: 4,
            ttis: 8,
            ttis_lost: 1,
            pdus_sent: 16,
            pdus_retransmitted: 2,
        }],
        sap_law: vec![SapLawReport { node: "ap".into(), windows_lowered: 3, udp_rate_bps: 1e6, max_tcp_rate_bps: 17e6 }],
        snoop: vec![SnoopReport {
            node: "bs".into(),
            peer: "mh".into(),
            cached: 5,
            local_retransmissions: 1,
            timer_retransmissions: 0,
            dupacks_suppressed: 2,
            connections_closed: 1,
        }],
        error_generators: vec![ErrorGeneratorReport { dropped: 2, spared: 4 }],
        hosts: vec![HostReport { node: "receiver".into(), cpu_busy_s: 0.5, cpu_utilization: 0.25 }],
    }
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().expect("an object").keys().map(String::as_str).collect()
}

const FLOW_SUMMARY_KEYS: [&str; 18] = [
    "sent_packets", "transport_lost_packets", "application_lost_packets", "late_packets", "reordered_packets", "sent_bytes",
    "received_packets", "received_bytes", "lost_packets", "loss_ratio", "lost_by_cause", "delivered_bytes", "active_s",
    "throughput_tx_bps", "throughput_rx_bps", "goodput_bps", "delay_ms", "jitter_ms",
];

fn flow_keys(tcp: bool) -> Vec<&'static str> {
    let mut k = vec!["name", "transport", "src", "dst", "start_s", "stop_s"];
    k.extend(FLOW_SUMMARY_KEYS);
    k.push("reverse");
    if tcp {
        k.extend(["response_time_s", "tcp"]);
    }
    k
}

#[test]
fn keys_come_in_the_summary_format_order() {
    let v: Value = serde_json::from_str(&sample().to_json()).unwrap();
    let top = [
        "scenario", "seed", "simulated_s", "events_processed", "packets_in_network_at_end", "flows", "links", "wlans", "wcdma",
        "sap_law", "snoop", "error_generators", "hosts",
    ];
    assert_eq!(keys(&v), top, "the header is flattened in front of the sections");
    assert_eq!(keys(&v["flows"][0]), flow_keys(true), "a TCP flow: identity, forward metrics, reverse, TCP");
    assert_eq!(keys(&v["flows"][1]), flow_keys(false), "a UDP flow has no response_time_s and no tcp key");
    assert_eq!(keys(&v["flows"][0]["reverse"]), ["sent_packets", "received_packets", "lost_packets", "lost_by_cause", "delay_ms"]);
    assert_eq!(keys(&v["flows"][0]["reverse"]["delay_ms"]), ["mean", "max"]);
    assert_eq!(
        keys(&v["flows"][0]["lost_by_cause"]),
        ["queue_drop", "link_loss", "retry_limit", "out_of_order", "suppressed", "unattributed", "in_flight_at_end"]
    );
    assert_eq!(keys(&v["flows"][0]["delay_ms"]), ["mean", "std", "min", "p50", "p95", "p99", "max"]);
    assert_eq!(keys(&v["flows"][0]["jitter_ms"]), ["mean", "p99", "max", "rfc3550", "ditg"]);
    assert_eq!(
        keys(&v["flows"][0]["tcp"]),
        [
            "state", "segments_sent", "retransmitted_segments", "fast_retransmits", "timeouts", "persist_probes", "rtt_samples",
            "final_cwnd_bytes", "srtt_ms", "rto_ms", "receiver_zero_windows", "receiver_min_open_window_bytes",
            "sender_min_open_window_bytes", "bytes_stored", "bytes_read", "receiver_awnd_cap_bytes", "bbr",
            "receiver_awnd_max_retransmissions",
        ]
    );
    assert_eq!(keys(&v["flows"][0]["tcp"]["bbr"]), ["btl_bw_bps", "rtprop_ms", "mode"]);
    assert_eq!(
        keys(&v["links"][0]),
        ["name", "tx_packets", "queue_drops", "aqm_drops", "link_losses", "max_queue_packets", "max_queue_bytes", "queue_limit", "utilization"]
    );
    assert_eq!(keys(&v["wlans"][0]), ["name", "exchanges", "successes", "collisions", "busy_share", "members"]);
    assert_eq!(
        keys(&v["wlans"][0]["members"][0]),
        [
            "node", "enqueued", "queue_drops", "retry_drops", "retry_exhausted_after_delivery", "attempts", "collisions",
            "frame_errors", "retries", "delivered", "duplicates_filtered", "max_queue_packets",
        ]
    );
    assert_eq!(
        keys(&v["wcdma"][0]),
        [
            "name", "sdus_in", "buffer_drops", "sdus_discarded", "sdus_out_of_order", "sdus_delivered", "ttis", "ttis_lost",
            "pdus_sent", "pdus_retransmitted",
        ]
    );
    assert_eq!(keys(&v["sap_law"][0]), ["node", "windows_lowered", "udp_rate_bps", "max_tcp_rate_bps"]);
    assert_eq!(
        keys(&v["snoop"][0]),
        ["node", "peer", "cached", "local_retransmissions", "timer_retransmissions", "dupacks_suppressed", "connections_closed"]
    );
    assert_eq!(keys(&v["error_generators"][0]), ["dropped", "spared"]);
    assert_eq!(keys(&v["hosts"][0]), ["node", "cpu_busy_s", "cpu_utilization"]);
}

#[test]
fn counters_are_integers_times_and_rates_floats_and_missing_values_null() {
    let text = sample().to_json();
    // Exact text, as json! wrote it: a float keeps its ".0", a counter has none, None is null.
    for piece in [
        r#""seed":7,"simulated_s":2.0,"events_processed":1234,"packets_in_network_at_end":0,"#,
        r#""name":"bulk","transport":"tcp","src":"sender","dst":"receiver","start_s":0.0,"stop_s":2.0,"sent_packets":3,"#,
        r#""reverse":{"sent_packets":3,"received_packets":2,"lost_packets":1,"lost_by_cause":{"queue_drop":1,"link_loss":0,"retry_limit":0,"out_of_order":0,"suppressed":0,"unattributed":0,"in_flight_at_end":0},"delay_ms":{"mean":25.5,"max":26.0}},"response_time_s":null,"tcp":{"state":"Established","#,
        r#""srtt_ms":50.0,"rto_ms":1000.0,"receiver_zero_windows":0,"receiver_min_open_window_bytes":65535,"sender_min_open_window_bytes":null,"#,
        r#""bbr":{"btl_bw_bps":9500000.0,"rtprop_ms":null,"mode":"startup"},"receiver_awnd_max_retransmissions":null}}"#,
        r#""delay_ms":{"mean":null,"std":null,"min":null,"p50":null,"p95":null,"p99":null,"max":null}"#,
        r#""queue_limit":"100p","utilization":0.25}"#,
        r#""error_generators":[{"dropped":2,"spared":4}]"#,
    ] {
        assert!(text.contains(piece), "missing {piece}\nin {text}");
    }
}

#[test]
fn a_report_reads_back_unchanged() {
    let r = sample();
    let text = r.to_json();
    let back: RunReport = serde_json::from_str(&text).expect("the summary format parses");
    assert_eq!(back, r, "a UDP flow reads back without a connection, a TCP flow with one");
    assert_eq!(back.to_json(), text);
    assert_eq!(back.flow("bulk").and_then(|f| f.tcp()).map(|t| t.sender.timeouts), Some(1));
    assert_eq!(back.flow("voice").map(|f| (f.tcp().is_none(), f.response_time_s())), Some((true, None)));
    assert_eq!(back.link("bottleneck:router->receiver").map(|l| l.queue_drops), Some(1));
    assert_eq!(back.host("receiver").map(|h| h.cpu_busy_s), Some(0.5));
}

#[test]
fn the_published_schema_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/run.schema.json");
    let published = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        published == run_schema(),
        "schema/run.schema.json is stale: regenerate it with\n  cargo run -p lasthop-core --example run_schema > schema/run.schema.json"
    );
}

#[test]
fn the_schema_describes_every_section_with_units() {
    let schema: Value = serde_json::from_str(&run_schema()).unwrap();
    let props = &schema["properties"];
    for k in ["scenario", "seed", "simulated_s", "flows", "links", "wlans", "wcdma", "sap_law", "snoop", "error_generators", "hosts"] {
        assert!(props.get(k).is_some(), "the schema has the top-level key {k}");
    }
    // Flattened sections contribute their keys to the enclosing object.
    let flow = &schema["definitions"]["FlowReport"]["properties"];
    for k in ["name", "goodput_bps", "delay_ms", "reverse", "response_time_s", "tcp"] {
        assert!(flow.get(k).is_some(), "FlowReport has {k}");
    }
    let required: Vec<&str> = schema["definitions"]["FlowReport"]["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(required.contains(&"goodput_bps") && !required.contains(&"tcp"), "tcp is optional (UDP flows): {required:?}");
    // A unit in a description, from the doc comment.
    let d = schema["definitions"]["LinkReport"]["properties"]["utilization"]["description"].as_str().unwrap();
    assert!(d.contains("fraction"), "{d}");
}
