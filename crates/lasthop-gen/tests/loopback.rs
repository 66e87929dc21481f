//! End to end on loopback: a receiver thread and a sender in this process.

use lasthop_gen::control::Meter;
use lasthop_gen::plan::plan_from_toml;
use lasthop_gen::recv::{bind, serve, RecvOptions};
use lasthop_gen::results::compute;
use lasthop_gen::send::{send, Progress, SendOptions};
use std::sync::atomic::AtomicBool;

fn work_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lh-gen-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn receiver(sessions: u32, token: Option<&str>) -> (String, std::thread::JoinHandle<lasthop_gen::recv::RecvSummary>) {
    let o = RecvOptions { token: token.map(str::to_string), sessions: Some(sessions), ..RecvOptions::new("127.0.0.1:0".parse().unwrap()) };
    let l = bind(&o).unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let h = std::thread::spawn(move || serve(l, &o, &AtomicBool::new(false)).unwrap());
    (addr, h)
}

fn opts(to: &str, meter: Meter, tag: &str) -> SendOptions {
    SendOptions { to: to.into(), token: None, meter, loss_timeout_ns: 300_000_000, work_dir: work_dir(tag), data_port: None, realtime: false, ditg_log: None, origin_mono_ns: None, spin_ns: lasthop_gen::pacer::SPIN_NS, gso: None }
}

#[test]
fn a_cbr_flow_of_200_packets_arrives_whole_with_small_positive_delays() {
    // 200 packets: 2 s at 100 pkt/s (interval 10 ms, packet k at k·10 ms < 2 s).
    let (to, rx) = receiver(1, None);
    let mut plan = plan_from_toml("[[flows]]\nname = \"v\"\napp = { type = \"cbr\", size = \"100B\", interval = \"10ms\" }\n", "t.toml", Some(lasthop_core::Duration::from_secs(2)), None).unwrap();
    let o = opts(&to, Meter::Rtt, "cbr");
    let m = send(&mut plan, &o, &AtomicBool::new(false), &Progress::default()).unwrap();
    rx.join().unwrap();
    let out = compute(&plan, &m, lasthop_gen::results::PacketTables::InMemory).unwrap();
    let f = &out.report.flows[0];
    assert_eq!((f.forward.sent_packets, f.forward.received_packets, f.forward.lost_packets), (200, 200, 0));
    assert_eq!(f.forward.sent_bytes, 200 * (100 + 28), "payload + UDP/IPv4 headers");
    let d = &f.forward.delay_ms;
    assert!(d.min.unwrap() > 0.0 && d.max.unwrap() < 50.0, "{d:?}");
    let mf = &out.measure.flows[0];
    assert_eq!((mf.requested_packets, mf.duplicates, mf.reordered), (200, 0, 0));
    let rtt = mf.rtt_ms.as_ref().unwrap();
    assert!(rtt.min.unwrap() >= d.min.unwrap(), "a round trip is at least the one-way delay: {rtt:?} vs {d:?}");
    assert_eq!(mf.echo_lost, Some(0));
    assert_eq!(out.tables.iter().find(|t| t.name == "packets/v").unwrap().rows(), 200);
    // Streamed in pieces of 7 rows: 200 rows → 28 full pieces and one of 4 per table (hand
    // count), which put together are the tables built whole; no per-packet table stays behind.
    let mut pieces: Vec<lasthop_core::report::Table> = Vec::new();
    let mut sink = |t| {
        pieces.push(t);
        Ok(())
    };
    let streamed = compute(&plan, &m, lasthop_gen::results::PacketTables::Streamed { rows: 7, sink: &mut sink }).unwrap();
    assert!(streamed.tables.iter().all(|t| !t.name.starts_with("packets/")));
    for name in ["packets/v", "packets/v/receiver"] {
        let mine: Vec<_> = pieces.iter().filter(|t| t.name == name).collect();
        assert_eq!(mine.iter().map(|t| t.rows()).collect::<Vec<_>>(), [vec![7; 28], vec![4]].concat(), "{name}");
        let whole = out.tables.iter().find(|t| t.name == name).unwrap();
        let mut joined = mine[0].clone();
        for t in &mine[1..] {
            for ((_, a), (_, b)) in joined.columns.iter_mut().zip(&t.columns) {
                use lasthop_core::report::Column::*;
                match (a, b) {
                    (F64(a), F64(b)) => a.extend(b),
                    (OptF64(a), OptF64(b)) => a.extend(b),
                    (U64(a), U64(b)) => a.extend(b),
                    (Str(a), Str(b)) => a.extend(b.iter().cloned()),
                    _ => panic!("a piece's columns differ in kind"),
                }
            }
        }
        assert_eq!(&joined, whole, "{name}");
    }
    let _ = std::fs::remove_dir_all(&o.work_dir);
}

#[test]
fn a_bulk_tcp_transfer_completes_and_reports_its_response_time() {
    let (to, rx) = receiver(1, None);
    let mut plan = plan_from_toml("[[flows]]\nname = \"b\"\napp = { type = \"bulk\", bytes = \"4MiB\" }\n", "t.toml", Some(lasthop_core::Duration::from_secs(5)), None).unwrap();
    let o = opts(&to, Meter::Owd, "bulk");
    let m = send(&mut plan, &o, &AtomicBool::new(false), &Progress::default()).unwrap();
    rx.join().unwrap();
    let out = compute(&plan, &m, lasthop_gen::results::PacketTables::Off).unwrap();
    let f = &out.report.flows[0];
    // 4 MiB in 16 KiB messages: 256 of them, all delivered.
    assert_eq!((f.forward.sent_packets, f.forward.received_packets), (256, 256));
    assert_eq!(f.forward.delivered_bytes, 4 << 20);
    let rt = f.response_time_s().expect("a finite transfer completes");
    assert!(rt > 0.0 && rt < 5.0, "{rt}");
    assert_eq!(f.tcp().unwrap().bytes_read, 4 << 20);
    let _ = std::fs::remove_dir_all(&o.work_dir);
}

#[test]
fn a_wrong_token_is_refused_in_one_line() {
    let (to, rx) = receiver(1, Some("right"));
    let mut plan = plan_from_toml("[[flows]]\nname = \"v\"\napp = { type = \"cbr\", size = \"100B\", interval = \"10ms\" }\n", "t.toml", None, None).unwrap();
    let mut o = opts(&to, Meter::Owd, "token");
    o.token = Some("wrong".into());
    let e = send(&mut plan, &o, &AtomicBool::new(false), &Progress::default()).err().unwrap();
    assert!(e.contains("refused") && e.contains("token"), "{e}");
    // The receiver survives and serves a good session next.
    o.token = Some("right".into());
    let mut plan = plan_from_toml("[[flows]]\nname = \"v\"\napp = { type = \"cbr\", size = \"100B\", interval = \"10ms\" }\n", "t.toml", Some(lasthop_core::Duration::from_millis(100)), None).unwrap();
    let m = send(&mut plan, &o, &AtomicBool::new(false), &Progress::default()).unwrap();
    assert_eq!(m.received[0].received, 10);
    rx.join().unwrap();
    let _ = std::fs::remove_dir_all(&o.work_dir);
}

#[test]
fn garbage_truncated_and_replayed_datagrams_and_bad_control_lines_do_not_stop_the_receiver() {
    use lasthop_gen::clock::Clock;
    use lasthop_gen::control::{write_msg, FlowSetup, LineReader, Msg, Proto};
    use lasthop_gen::header::{Header, Kind};
    use std::io::{BufReader, Write};
    use std::net::{TcpStream, UdpSocket};
    let (to, rx) = receiver(1, None);
    // Session 1: a malformed control line is answered with an error and ends the session.
    let mut c = TcpStream::connect(&to).unwrap();
    c.write_all(b"{\"type\":\"hello\",\"version\":1,\"session\":1}\xff\n").unwrap();
    let mut r = LineReader::new(BufReader::new(c.try_clone().unwrap()));
    assert!(matches!(r.read_msg().unwrap(), Msg::Error { .. }));
    // Session 2, by hand: 3 garbage datagrams (random bytes, a cut header, another session),
    // 5 good ones and one of them replayed twice.
    let mut c = TcpStream::connect(&to).unwrap();
    let mut r = LineReader::new(BufReader::new(c.try_clone().unwrap()));
    write_msg(&mut c, &Msg::Hello { version: 1, session: 77, token: None, data_port: None }).unwrap();
    let Msg::Welcome { udp_port, .. } = r.read_msg().unwrap() else { panic!("welcome expected") };
    let flows = vec![FlowSetup { id: 0, name: "f".into(), proto: Proto::Udp, paced_reads: None, file_reads: None, receive_buffer: None, delack_max_us: None, quickack: false }];
    write_msg(&mut c, &Msg::Setup { clock: Clock::Monotonic, meter: Meter::Owd, flows, loss_timeout_ns: 200_000_000 }).unwrap();
    assert_eq!(r.read_msg().unwrap(), Msg::Ready { tcp_ports: vec![] });
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.connect(("127.0.0.1", udp_port)).unwrap();
    let dgram = |session: u32, seq: u32| {
        let mut b = vec![0u8; 64];
        Header { kind: Kind::Data, session, flow: 0, seq, len: 64, tx_ns: 1, echo_ns: 0 }.write(&mut b);
        b
    };
    u.send(&[0xAB; 100]).unwrap();
    u.send(&dgram(77, 9)[..30]).unwrap();
    u.send(&dgram(78, 0)).unwrap();
    for seq in 0..5 {
        u.send(&dgram(77, seq)).unwrap();
    }
    u.send(&dgram(77, 2)).unwrap();
    u.send(&dgram(77, 2)).unwrap();
    write_msg(&mut c, &Msg::Stop { sent: vec![5] }).unwrap();
    let Msg::Done { counts, malformed, records_bytes, .. } = r.read_msg().unwrap() else { panic!("done expected") };
    assert_eq!(malformed, 3, "random bytes, a cut header, another session");
    assert_eq!(counts[0].received, 7, "5 packets and 2 replays, all logged");
    assert_eq!(records_bytes, 7 * 32);
    let s = rx.join().unwrap();
    assert_eq!((s.sessions, s.malformed), (1, 3), "one session ran; the refused one did not count");
}
