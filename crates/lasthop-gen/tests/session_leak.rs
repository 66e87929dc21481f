//! A receiver serving sessions that are cut short after setup does not leak: every aborted
//! session's data threads are stopped and joined and its sockets and files closed. Alone in its
//! file (its own test process), so that the process's thread and descriptor counts
//! (/proc/self/task, /proc/self/fd) are the receiver's and this test's only.

use lasthop_gen::clock::Clock;
use lasthop_gen::control::{write_msg, FlowSetup, LineReader, Meter, Msg, Proto};
use lasthop_gen::header::{Header, Kind};
use lasthop_gen::recv::{bind, serve, RecvOptions};
use std::io::{BufReader, Write};
use std::net::{TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn count(dir: &str) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

/// Waits up to 3 s for the thread count to come down to `at_most`; returns the last count.
fn threads_settle(at_most: usize) -> usize {
    let t0 = Instant::now();
    loop {
        let n = count("/proc/self/task");
        if n <= at_most || t0.elapsed() > Duration::from_secs(3) {
            return n;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One session set up by hand (a UDP and a TCP flow), 5 datagrams and half a TCP message sent,
/// then cut short: the control connection dropped (the sender killed) or, with `refused`, a
/// garbage control line first (refused after setup).
fn aborted_session(to: &str, session: u32, refused: bool) {
    let mut c = TcpStream::connect(to).unwrap();
    let mut r = LineReader::new(BufReader::new(c.try_clone().unwrap()));
    write_msg(&mut c, &Msg::Hello { version: 1, session, token: None, data_port: None }).unwrap();
    let Msg::Welcome { udp_port, tcp_port, .. } = r.read_msg().unwrap() else { panic!("welcome expected") };
    let flows = vec![
        FlowSetup { id: 0, name: "u".into(), proto: Proto::Udp, paced_reads: None, file_reads: None, receive_buffer: None, delack_max_us: None, quickack: false },
        FlowSetup { id: 1, name: "t".into(), proto: Proto::Tcp, paced_reads: None, file_reads: None, receive_buffer: None, delack_max_us: None, quickack: false },
    ];
    write_msg(&mut c, &Msg::Setup { clock: Clock::Monotonic, meter: Meter::Owd, flows, loss_timeout_ns: 100_000_000 }).unwrap();
    assert_eq!(r.read_msg().unwrap(), Msg::Ready { tcp_ports: vec![] });
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.connect(("127.0.0.1", udp_port)).unwrap();
    for seq in 0..5 {
        let mut b = vec![0u8; 64];
        Header { kind: Kind::Data, session, flow: 0, seq, len: 64, tx_ns: 1, echo_ns: 0 }.write(&mut b);
        u.send(&b).unwrap();
    }
    let mut t = TcpStream::connect(("127.0.0.1", tcp_port)).unwrap();
    let mut m = vec![0u8; 1000];
    Header { kind: Kind::Data, session, flow: 1, seq: 0, len: 1000, tx_ns: 1, echo_ns: 0 }.write(&mut m);
    t.write_all(&m[..500]).unwrap(); // half a message: the reader thread waits for the rest
    std::thread::sleep(Duration::from_millis(30));
    if refused {
        c.write_all(b"{\"type\":\"nonsense\"}\n").unwrap();
        assert!(matches!(r.read_msg().unwrap(), Msg::Error { .. }));
    }
    drop((c, r, t, u));
}

#[test]
fn sessions_cut_short_after_setup_leave_no_thread_socket_or_file_behind() {
    let out = std::env::temp_dir().join(format!("lh-{}-leak", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = RecvOptions { out: Some(out.clone()), ..RecvOptions::new("127.0.0.1:0".parse().unwrap()) };
    let l = bind(&o).unwrap();
    let to = l.local_addr().unwrap().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let rx = std::thread::spawn(move || serve(l, &o, &s2).unwrap());
    std::thread::sleep(Duration::from_millis(50));
    let (threads0, fds0) = (count("/proc/self/task"), count("/proc/self/fd"));
    // Each session, while it runs: its own thread, a UDP thread, a TCP accept thread and a TCP
    // reader (4 threads), 2 data sockets, a TCP connection, 2 record files. Before the data
    // were stopped on every exit path, 20 aborted sessions left 80 threads running.
    const N: u32 = 20;
    for i in 0..N {
        aborted_session(&to, 0x1000 + i, i % 2 == 1);
        let n = threads_settle(threads0);
        assert!(n <= threads0, "after {} aborted sessions: {n} threads, {threads0} before", i + 1);
    }
    let fds = count("/proc/self/fd");
    assert!(fds <= fds0, "{fds} descriptors open, {fds0} before the sessions");
    // Every aborted session wrote what it logged: the 5 datagrams, the half message not.
    let mut dirs: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    assert_eq!(dirs.len(), N as usize);
    for d in &dirs {
        let counts: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("counts.json")).unwrap()).unwrap();
        assert_eq!(counts["aborted"], true, "{}", d.display());
        assert_eq!((counts["flows"][0]["received"].as_u64(), counts["flows"][1]["received"].as_u64()), (Some(5), Some(0)));
        assert_eq!(std::fs::metadata(d.join("recv-udp.lhr")).unwrap().len(), 5 * 32, "5 records of 32 bytes, flushed");
    }
    stop.store(true, Ordering::Relaxed);
    let s = rx.join().unwrap();
    // 20 sessions set up; the 10 garbage lines refused.
    assert_eq!((s.sessions, s.control_errors), (N, N as u64 / 2));
    std::fs::remove_dir_all(&out).unwrap();
}
