//! TCP endpoint tests in the smoltcp style: time is always explicit, segments are built by
//! hand, and each assertion names the rule it checks.

use super::config::TcpConfig;
use super::options::window_shift_for;
use super::socket::{Segment, State, TcpSocket};
use crate::packet::{ecn, SackBlock, SeqNum, TcpFlags, TcpHeader};
use crate::{Duration, Time};

const MSS: u32 = 1000;
const CLIENT_ISS: SeqNum = SeqNum(1_000);
const SERVER_ISS: SeqNum = SeqNum(50_000);

fn ms(t: u64) -> Time {
    Time(t * 1_000_000)
}

fn cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS,
        initial_cwnd_segments: Some(10),
        window_scale: false,
        delayed_ack: None,
        nagle: false,
        send_buffer: 1_000_000,
        recv_buffer: 60_000,
        ..TcpConfig::default()
    }
}

/// A segment from the peer (server) acknowledging `ack` with window `wnd` bytes.
fn ack(ack: u32, wnd: u16) -> Segment {
    Segment {
        hdr: TcpHeader { seq: SERVER_ISS + 1, ack: SeqNum(ack), flags: TcpFlags(TcpFlags::ACK), window: wnd, ..TcpHeader::default() },
        payload_len: 0,
        ecn: 0,
    }
}

/// A data segment from the client at `seq` of `len` bytes.
fn data(seq: u32, len: u32) -> Segment {
    Segment {
        hdr: TcpHeader {
            seq: SeqNum(seq),
            ack: SERVER_ISS + 1,
            flags: TcpFlags(TcpFlags::ACK),
            window: 60_000,
            ..TcpHeader::default()
        },
        payload_len: len,
        ecn: 0,
    }
}

/// Runs the three-way handshake between a client and a server with `cfg`, at t = 0 and 10 ms.
fn established(client_cfg: TcpConfig, server_cfg: TcpConfig) -> (TcpSocket, TcpSocket) {
    let mut c = TcpSocket::new(client_cfg, CLIENT_ISS);
    let mut s = TcpSocket::new(server_cfg, SERVER_ISS);
    let mut out = Vec::new();
    s.listen();
    c.connect(ms(0), &mut out);
    let syn = out.pop().expect("SYN sent");
    assert!(syn.hdr.flags.has(TcpFlags::SYN));
    s.on_segment(ms(5), &syn, &mut out);
    let synack = out.pop().expect("SYN-ACK sent");
    assert!(synack.hdr.flags.has(TcpFlags::SYN) && synack.hdr.flags.has(TcpFlags::ACK));
    c.on_segment(ms(10), &synack, &mut out);
    let ack = out.pop().expect("ACK of SYN-ACK sent");
    s.on_segment(ms(15), &ack, &mut out);
    assert_eq!(c.state(), State::Established);
    assert_eq!(s.state(), State::Established);
    (c, s)
}

/// A client with `segments` full segments sent, ACK clock not yet started.
fn sender_with_flight(segments: u32) -> (TcpSocket, Vec<Segment>) {
    let (mut c, _) = established(cfg(), cfg());
    let mut out = Vec::new();
    c.write(ms(20), (segments * MSS) as u64, &mut out);
    assert_eq!(out.len(), segments as usize, "initial window of 10 segments sends them all");
    (c, out)
}

fn base() -> u32 {
    CLIENT_ISS.0 + 1
}

#[test]
fn handshake_negotiates_mss_sack_and_window_scale() {
    let big = TcpConfig { window_scale: true, sack: true, recv_buffer: 1 << 20, ..cfg() };
    let mut c = TcpSocket::new(big.clone(), CLIENT_ISS);
    let mut out = Vec::new();
    c.connect(ms(0), &mut out);
    let syn = out[0].hdr;
    assert_eq!(syn.mss, Some(MSS as u16));
    // 1 MiB needs a shift of 5: 2^20 >> 4 = 65 536 > 65 535, >> 5 fits.
    assert_eq!(syn.wscale, Some(5));
    assert_eq!(window_shift_for(1 << 20), 5);
    assert!(syn.sack_permitted);
    // RFC 7323 §2.2: the SYN's own window is not scaled.
    assert_eq!(syn.window, 65_535);
    let (mut c, mut s) = established(big.clone(), big);
    assert_eq!(c.peer_window(), 65_535, "until the first non-SYN segment the window is unscaled");
    let mut out = Vec::new();
    c.write(ms(20), MSS as u64, &mut out);
    s.on_segment(ms(25), &out.pop().unwrap(), &mut out);
    let a = out.pop().unwrap();
    assert_eq!(a.hdr.window as u64, ((1 << 20) - MSS as u64) >> 5, "scaled window field");
    c.on_segment(ms(30), &a, &mut out);
    // The peer advertised ≈ 1 MiB through a scaled field: the client must see all of it.
    assert_eq!(c.peer_window(), ((1u64 << 20) - MSS as u64) >> 5 << 5);
}

#[test]
fn three_duplicate_acks_trigger_fast_retransmit() {
    let (mut c, _) = sender_with_flight(10);
    let mut out = Vec::new();
    // Segment 1 (bytes base..base+1000) is ACKed, segment 2 is lost: the receiver repeats
    // ACK base+1000 for segments 3, 4, 5.
    c.on_segment(ms(120), &ack(base() + MSS, 60_000), &mut out);
    out.clear();
    c.on_segment(ms(121), &ack(base() + MSS, 60_000), &mut out);
    c.on_segment(ms(122), &ack(base() + MSS, 60_000), &mut out);
    assert!(out.iter().all(|s| s.hdr.seq != SeqNum(base() + MSS)), "two duplicate ACKs are not enough");
    let flight = c.flight_size();
    c.on_segment(ms(123), &ack(base() + MSS, 60_000), &mut out);
    assert_eq!(out[0].hdr.seq, SeqNum(base() + MSS), "third duplicate ACK retransmits the lost segment");
    assert_eq!(out[0].payload_len, MSS);
    assert!(c.in_recovery());
    // RFC 5681 eq. 4 and RFC 6582: ssthresh = FlightSize/2, cwnd = ssthresh + 3 SMSS.
    assert_eq!(c.ssthresh(), flight / 2);
    assert_eq!(c.cwnd(), flight / 2 + 3 * MSS as u64);
    assert_eq!(c.stats.fast_retransmits, 1);
}

#[test]
fn partial_ack_keeps_recovery_and_retransmits_next_hole() {
    let (mut c, _) = sender_with_flight(10);
    let mut out = Vec::new();
    // Segments 2 and 5 lost.
    c.on_segment(ms(120), &ack(base() + MSS, 60_000), &mut out);
    for t in 121..124 {
        c.on_segment(ms(t), &ack(base() + MSS, 60_000), &mut out);
    }
    assert!(c.in_recovery());
    out.clear();
    // The retransmitted segment 2 arrives: the cumulative ACK stops at the next hole, segment 5
    // (base + 4000), below `recover` (base + 10000): a partial ACK.
    let cwnd_before = c.cwnd();
    c.on_segment(ms(200), &ack(base() + 4 * MSS, 60_000), &mut out);
    assert!(c.in_recovery(), "a partial ACK must not end fast recovery");
    assert_eq!(out[0].hdr.seq, SeqNum(base() + 4 * MSS), "partial ACK retransmits the next hole");
    // Deflate by the 3000 bytes acknowledged, add back one SMSS (RFC 6582 §3.2 step 5).
    assert_eq!(c.cwnd(), cwnd_before - 3 * MSS as u64 + MSS as u64);
    // The full ACK ends recovery with cwnd = min(ssthresh, FlightSize + SMSS).
    out.clear();
    let ssthresh = c.ssthresh();
    c.on_segment(ms(280), &ack(base() + 10 * MSS, 60_000), &mut out);
    assert!(!c.in_recovery());
    assert!(c.cwnd() <= ssthresh);
}

#[test]
fn rto_doubles_on_each_backoff() {
    let (mut c, _) = established(cfg(), cfg());
    let mut out = Vec::new();
    c.write(ms(20), MSS as u64, &mut out);
    assert_eq!(out.len(), 1);
    // The handshake gave one RTT sample of 10 ms: RTO = max(1 s minimum, 10 + 4·5 ms) = 1 s.
    assert_eq!(c.rto(), Duration::from_secs(1));
    assert_eq!(c.poll_deadline(), Some(ms(1020)));
    out.clear();
    c.on_timer(ms(1020), &mut out);
    assert_eq!(out.len(), 1, "timeout retransmits");
    assert_eq!(out[0].hdr.seq, SeqNum(base()));
    assert_eq!(c.rto(), Duration::from_secs(2));
    assert_eq!(c.poll_deadline(), Some(ms(3020)), "next timeout 2 s later");
    out.clear();
    c.on_timer(ms(3020), &mut out);
    assert_eq!(c.rto(), Duration::from_secs(4));
    assert_eq!(c.poll_deadline(), Some(ms(7020)));
    // After an RTO the loss window is one segment (RFC 5681 §3.1).
    assert_eq!(c.cwnd(), MSS as u64);
    assert_eq!(c.stats.timeouts, 2);
}

#[test]
fn zero_window_starts_persist_probes() {
    let (mut c, _) = established(cfg(), cfg());
    let mut out = Vec::new();
    c.write(ms(20), 2 * MSS as u64, &mut out);
    assert_eq!(out.len(), 2);
    out.clear();
    // The receiver acknowledges everything but its buffer is full: window 0.
    c.on_segment(ms(100), &ack(base() + 2 * MSS, 0), &mut out);
    c.write(ms(101), 5 * MSS as u64, &mut out);
    assert!(out.iter().all(|s| s.payload_len == 0), "no data into a zero window");
    let probe_at = c.poll_deadline().expect("persist timer armed");
    assert_eq!(probe_at, ms(1101), "first probe after one RTO (1 s)");
    c.on_timer(probe_at, &mut out);
    assert_eq!(c.stats.persist_probes, 1);
    let probe = out.last().unwrap();
    assert_eq!(probe.payload_len, 0);
    assert_eq!(probe.hdr.seq, SeqNum(base() + 2 * MSS - 1), "Linux-style probe: SND.UNA − 1");
    // Still zero: the next probe is backed off to 2 s.
    out.clear();
    c.on_segment(ms(1150), &ack(base() + 2 * MSS, 0), &mut out);
    assert_eq!(c.poll_deadline(), Some(ms(3101)), "probe interval doubles");
    // The window opens: data flows at once and the persist timer stops.
    c.on_segment(ms(1200), &ack(base() + 2 * MSS, 10_000), &mut out);
    assert!(out.iter().any(|s| s.payload_len == MSS && s.hdr.seq == SeqNum(base() + 2 * MSS)));
}

#[test]
fn karn_skips_samples_from_retransmitted_segments() {
    let (mut c, _) = established(cfg(), cfg());
    let samples_after_handshake = c.stats.rtt_samples;
    assert_eq!(samples_after_handshake, 1, "the SYN/SYN-ACK exchange gives one sample");
    let srtt = c.srtt();
    let mut out = Vec::new();
    c.write(ms(20), MSS as u64, &mut out);
    c.on_timer(ms(1020), &mut out); // retransmission
    // The ACK arrives 1.5 s after the first transmission: ambiguous, so no sample.
    c.on_segment(ms(1520), &ack(base() + MSS, 60_000), &mut out);
    assert_eq!(c.stats.rtt_samples, samples_after_handshake, "no sample from a retransmitted segment");
    assert_eq!(c.srtt(), srtt);
    // A fresh segment is timed again.
    c.write(ms(1600), MSS as u64, &mut out);
    c.on_segment(ms(1650), &ack(base() + 2 * MSS, 60_000), &mut out);
    assert_eq!(c.stats.rtt_samples, samples_after_handshake + 1);
}

#[test]
fn receiver_acks_every_second_segment_or_on_the_timer() {
    let rcfg = TcpConfig { delayed_ack: Some(Duration::from_millis(200)), ..cfg() };
    let (_, mut s) = established(cfg(), rcfg);
    let mut out = Vec::new();
    s.on_segment(ms(20), &data(base(), MSS), &mut out);
    assert!(out.is_empty(), "first full segment: ACK delayed");
    assert_eq!(s.poll_deadline(), Some(ms(220)));
    s.on_segment(ms(21), &data(base() + MSS, MSS), &mut out);
    assert_eq!(out.len(), 1, "second full segment: ACK at once (RFC 5681 §4.2)");
    assert_eq!(out[0].hdr.ack, SeqNum(base() + 2 * MSS));
    out.clear();
    s.on_segment(ms(30), &data(base() + 2 * MSS, MSS), &mut out);
    assert!(out.is_empty());
    s.on_timer(ms(230), &mut out);
    assert_eq!(out.len(), 1, "delayed-ACK timer fires 200 ms later");
}

#[test]
fn out_of_order_segment_gets_an_immediate_duplicate_ack_with_sack() {
    let scfg = TcpConfig { sack: true, delayed_ack: Some(Duration::from_millis(200)), ..cfg() };
    let (_, mut s) = established(scfg.clone(), scfg);
    let mut out = Vec::new();
    s.on_segment(ms(20), &data(base() + MSS, MSS), &mut out);
    assert_eq!(out.len(), 1, "out-of-order data is acknowledged at once");
    let h = out[0].hdr;
    assert_eq!(h.ack, SeqNum(base()), "duplicate ACK for the missing byte");
    assert_eq!(h.sack_blocks(), &[SackBlock { start: SeqNum(base() + MSS), end: SeqNum(base() + 2 * MSS) }]);
    out.clear();
    s.on_segment(ms(25), &data(base(), MSS), &mut out);
    assert_eq!(out.len(), 1, "filling the hole is acknowledged at once");
    assert_eq!(out[0].hdr.ack, SeqNum(base() + 2 * MSS));
    assert_eq!(out[0].hdr.sack_len, 0);
    assert_eq!(s.readable(), 2 * MSS as u64);
}

#[test]
fn advertised_window_collapses_when_the_application_does_not_read() {
    // 8 000-byte receive buffer, an application that never reads: the window shrinks by each
    // segment and reaches zero (paper 000's 32 581 B -> 686 B collapse in miniature).
    let rcfg = TcpConfig { recv_buffer: 8_000, ..cfg() };
    let (_, mut s) = established(cfg(), rcfg);
    let mut out = Vec::new();
    let mut windows = Vec::new();
    for i in 0..8 {
        s.on_segment(ms(20 + i), &data(base() + i as u32 * MSS, MSS), &mut out);
        windows.push(out.last().unwrap().hdr.window);
    }
    assert_eq!(windows, vec![7000, 6000, 5000, 4000, 3000, 2000, 1000, 0]);
    assert_eq!(s.stats.zero_windows_advertised, 1);
    // Reading 500 B opens less than min(buffer/2, MSS): no update (receiver SWS avoidance).
    out.clear();
    s.read(ms(50), 500, &mut out);
    assert!(out.is_empty(), "no window update for a sliver");
    s.read(ms(51), 3_500, &mut out);
    assert_eq!(out.len(), 1, "window update once the window opened usefully");
    assert_eq!(out[0].hdr.window, 4000);
}

#[test]
fn receiver_awnd_cap_holds_from_the_syn_ack() {
    // Koga et al. fix the window at awnd segments for the whole transfer (ns-2's window_). The
    // right edge never retreats, so a SYN-ACK offering the whole 60 000 B buffer would let an
    // initial window of 10 segments through and keep the cap out of force for the first 60 kB.
    let rcfg = TcpConfig { awnd_cap: Some(5 * MSS as u64), ..cfg() };
    let (mut c, _) = established(cfg(), rcfg);
    assert_eq!(c.peer_window(), 5 * MSS as u64, "the SYN-ACK advertises the 5-segment cap");
    let mut out = Vec::new();
    c.write(ms(20), 10 * MSS as u64, &mut out);
    assert_eq!(out.len(), 5, "an initial window of 10 is held to the 5 segments advertised");
}

#[test]
fn fin_teardown_closes_both_sides() {
    let (mut c, mut s) = established(cfg(), cfg());
    let mut out = Vec::new();
    c.write(ms(20), 500, &mut out);
    c.close(ms(20), &mut out);
    assert_eq!(out.len(), 2, "the data went at once (Nagle off), the FIN follows alone");
    assert!(out[1].hdr.flags.has(TcpFlags::FIN));
    assert_eq!(c.state(), State::FinWait1);
    let segs: Vec<Segment> = out.drain(..).collect();
    // Deliver the FIN first: it is remembered until the data before it arrives.
    s.on_segment(ms(29), &segs[1], &mut out);
    assert_eq!(s.state(), State::Established, "a FIN beyond a hole is not processed yet");
    s.on_segment(ms(30), &segs[0], &mut out);
    assert_eq!(s.state(), State::CloseWait);
    assert_eq!(s.readable(), 500);
    let ack_of_fin = out.pop().unwrap();
    assert_eq!(ack_of_fin.hdr.ack, SeqNum(base() + 501), "FIN consumes one sequence number");
    c.on_segment(ms(40), &ack_of_fin, &mut out);
    assert_eq!(c.state(), State::FinWait2);
    assert!(c.all_acked());
    s.close(ms(41), &mut out);
    let fin = out.pop().unwrap();
    assert_eq!(s.state(), State::LastAck);
    c.on_segment(ms(50), &fin, &mut out);
    assert_eq!(c.state(), State::TimeWait);
    s.on_segment(ms(60), &out.pop().unwrap(), &mut out);
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn nagle_holds_small_segments_while_data_is_unacknowledged() {
    let ccfg = TcpConfig { nagle: true, ..cfg() };
    let (mut c, _) = established(ccfg, cfg());
    let mut out = Vec::new();
    c.write(ms(20), 100, &mut out);
    assert_eq!(out.len(), 1, "nothing in flight: the small segment goes");
    c.write(ms(21), 100, &mut out);
    assert_eq!(out.len(), 1, "Nagle holds the second small segment");
    c.on_segment(ms(60), &ack(base() + 100, 60_000), &mut out);
    assert_eq!(out.len(), 2, "sent once the first is acknowledged");
    assert_eq!(out[1].payload_len, 100);
}

#[test]
fn sack_recovery_retransmits_only_the_holes() {
    let scfg = TcpConfig { sack: true, ..cfg() };
    let (mut c, _) = established(scfg.clone(), scfg);
    let mut out = Vec::new();
    c.write(ms(20), 10 * MSS as u64, &mut out);
    out.clear();
    // Segments 1 and 3 lost; 2, 4, 5, 6 arrive and are SACKed.
    let sack_ack = |blocks: &[(u32, u32)]| {
        let mut s = ack(base(), 60_000);
        for (i, &(a, b)) in blocks.iter().enumerate() {
            s.hdr.sack[i] = SackBlock { start: SeqNum(base() + a * MSS), end: SeqNum(base() + b * MSS) };
        }
        s.hdr.sack_len = blocks.len() as u8;
        s
    };
    c.on_segment(ms(120), &sack_ack(&[(1, 2)]), &mut out);
    c.on_segment(ms(121), &sack_ack(&[(3, 4), (1, 2)]), &mut out);
    c.on_segment(ms(122), &sack_ack(&[(3, 5), (1, 2)]), &mut out);
    assert!(c.in_recovery(), "3 SACKed segments above the hole: IsLost (RFC 6675)");
    // Only two segments are SACKed above hole 3, so IsLost(3) is false and it waits; and pipe
    // (1 retransmitted + 5 outstanding = 6000 B) exceeds cwnd = ssthresh = 5000 B.
    assert!(out.iter().all(|s| s.hdr.seq.0 != base() + 2 * MSS));
    c.on_segment(ms(123), &sack_ack(&[(3, 6), (1, 2)]), &mut out);
    assert!(out.iter().all(|s| s.hdr.seq.0 != base() + 2 * MSS), "lost now, but pipe = cwnd");
    c.on_segment(ms(124), &sack_ack(&[(3, 7), (1, 2)]), &mut out);
    let rexmits: Vec<u32> = out.iter().filter(|s| s.hdr.seq.0 < base() + 10 * MSS).map(|s| (s.hdr.seq.0 - base()) / MSS).collect();
    assert_eq!(rexmits, vec![0, 2], "both holes retransmitted, SACKed data is not");
}

/// A sender with 30 segments written and 10 sent; segment 1 is ACKed (slow start lets segments
/// 11 and 12 leave) and segment 2 is lost. Returns the socket after `dups` duplicate ACKs.
fn sender_losing_segment_two(cfg_: TcpConfig, dups: u32, out: &mut Vec<Segment>) -> TcpSocket {
    let (mut c, _) = established(cfg_, cfg());
    c.write(ms(20), 30 * MSS as u64, out);
    assert_eq!(out.len(), 10);
    out.clear();
    c.on_segment(ms(120), &ack(base() + MSS, 60_000), out);
    assert_eq!(out.len(), 2, "cwnd 11 after one slow-start ACK: two new segments");
    out.clear();
    for i in 0..dups {
        c.on_segment(ms(121 + i as u64), &ack(base() + MSS, 60_000), out);
    }
    c
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_duplicates() {
    for lt in [true, false] {
        let mut out = Vec::new();
        let mut c = sender_losing_segment_two(TcpConfig { limited_transmit: lt, ..cfg() }, 2, &mut out);
        let sent: Vec<u32> = out.iter().map(|s| s.hdr.seq.0 - base()).collect();
        if lt {
            // RFC 3042 §2: new data (segments 13 and 14) beyond cwnd, which stays 11 segments.
            assert_eq!(sent, vec![12 * MSS, 13 * MSS]);
        } else {
            assert!(sent.is_empty(), "without limited transmit the first two duplicates send nothing");
        }
        assert_eq!(c.cwnd(), 11 * MSS as u64, "limited transmit never changes cwnd");
        out.clear();
        c.on_segment(ms(123), &ack(base() + MSS, 60_000), &mut out);
        assert_eq!(out[0].hdr.seq, SeqNum(base() + MSS), "the third duplicate retransmits segment 2");
        // RFC 5681 §3.2 step 2: FlightSize leaves out limited-transmit data: 11 segments / 2.
        assert_eq!(c.ssthresh(), 5_500, "limited transmit {lt}");
    }
}

#[test]
fn timeout_during_recovery_keeps_the_fast_retransmit_ssthresh() {
    let mut out = Vec::new();
    // Fast retransmit on the third duplicate: ssthresh 5 500 B, cwnd 8 500 B, 13 segments out.
    let mut c = sender_losing_segment_two(cfg(), 3, &mut out);
    assert!(c.in_recovery());
    assert_eq!(c.ssthresh(), 5_500);
    // Ten more duplicates inflate cwnd to 18 500 B: five new segments leave, the flight grows to
    // 18 segments (hand count: cwnd − 13 000 B in flight = 5 500 B → 5 full segments).
    for i in 0..10 {
        c.on_segment(ms(130 + i), &ack(base() + MSS, 60_000), &mut out);
    }
    assert_eq!(c.flight_size(), 18 * MSS as u64);
    // The RTO fires in recovery. From the inflated flight, eq. 4 would give 9 000 B; RFC 5681
    // §3.1 and Linux (tcp_enter_loss) keep the ssthresh chosen at the fast retransmit.
    let deadline = c.poll_deadline().expect("RTO armed");
    c.on_timer(deadline, &mut out);
    assert_eq!(c.stats.timeouts, 1);
    assert_eq!((c.ssthresh(), c.cwnd()), (5_500, MSS as u64));
    // The same segment times out again: ssthresh is held, not recomputed from a 1-MSS window.
    let deadline = c.poll_deadline().expect("RTO re-armed");
    c.on_timer(deadline, &mut out);
    assert_eq!((c.stats.timeouts, c.ssthresh(), c.cwnd()), (2, 5_500, MSS as u64));
}

#[test]
fn a_single_duplicate_after_recovery_is_not_a_third_one() {
    let mut out = Vec::new();
    let mut c = sender_losing_segment_two(cfg(), 3, &mut out);
    for i in 0..10 {
        c.on_segment(ms(130 + i), &ack(base() + MSS, 60_000), &mut out);
    }
    // A full ACK beyond `recover` (segment 14's end) ends recovery; one duplicate of it follows.
    c.on_segment(ms(200), &ack(base() + 15 * MSS, 60_000), &mut out);
    assert!(!c.in_recovery());
    out.clear();
    c.on_segment(ms(201), &ack(base() + 15 * MSS, 60_000), &mut out);
    assert!(!c.in_recovery(), "RFC 5681 §3.2: fast retransmit needs three duplicates of this ACK");
    assert_eq!(c.stats.fast_retransmits, 1);
    assert!(out.iter().all(|s| s.hdr.seq != SeqNum(base() + 15 * MSS)));
}

#[test]
fn abc_limit_bounds_what_one_ack_adds_in_slow_start() {
    // RFC 3465 §2.3: cwnd += min(N, L·SMSS). One ACK for three segments (N = 3000 B) in slow
    // start from cwnd 10 000 B: L = 1 (RFC 5681 eq. 2) adds 1000, L = 2 adds 2000, L = 4 all 3000.
    for (l, expected) in [(1, 11_000), (2, 12_000), (4, 13_000)] {
        let (mut c, _) = established(TcpConfig { abc_limit: l, ..cfg() }, cfg());
        let mut out = Vec::new();
        c.write(ms(20), 30 * MSS as u64, &mut out);
        c.on_segment(ms(120), &ack(base() + 3 * MSS, 60_000), &mut out);
        assert_eq!(c.cwnd(), expected, "L = {l}");
    }
}

/// A sender with 10 segments out of which 2, 5 and 8 are lost, in fast recovery after three
/// duplicate ACKs (at 121–123 ms), then partial ACKs for the retransmitted 2 (at 200 ms, up to
/// the hole at 5) and 5 (at 400 ms, up to the hole at 8).
fn sender_in_recovery_with_two_partial_acks(cfg_: TcpConfig) -> TcpSocket {
    let (mut c, _) = established(cfg_, cfg());
    let mut out = Vec::new();
    c.write(ms(20), 10 * MSS as u64, &mut out);
    c.on_segment(ms(120), &ack(base() + MSS, 60_000), &mut out);
    for t in 121..124 {
        c.on_segment(ms(t), &ack(base() + MSS, 60_000), &mut out);
    }
    assert!(c.in_recovery());
    c.on_segment(ms(200), &ack(base() + 4 * MSS, 60_000), &mut out);
    c.on_segment(ms(400), &ack(base() + 7 * MSS, 60_000), &mut out);
    assert!(c.in_recovery());
    c
}

#[test]
fn partial_ack_timer_impatient_or_slow_but_steady() {
    // RFC 6582 §4.2. The RTO is 1 s (rto_min; one 100 ms sample). Impatient: only the first
    // partial ACK (200 ms) restarts the timer, so it fires at 1200 ms; slow-but-steady (Linux):
    // the second (400 ms) restarts it too, to 1400 ms.
    let impatient = sender_in_recovery_with_two_partial_acks(cfg());
    assert_eq!(impatient.poll_deadline(), Some(ms(1_200)));
    let steady = sender_in_recovery_with_two_partial_acks(TcpConfig { slow_but_steady: true, ..cfg() });
    assert_eq!(steady.poll_deadline(), Some(ms(1_400)));
}

#[test]
fn recovery_exit_option_one_or_two() {
    // RFC 6582 §3.2 step 3. ssthresh = FlightSize/2 at the fast retransmit = 9 000 / 2 = 4 500 B.
    // The full ACK (all 10 segments) leaves nothing in flight: option 1 gives min(ssthresh,
    // max(0, SMSS) + SMSS) = 2 000 B; option 2 (Linux) cwnd = ssthresh = 4 500 B.
    for (to_ssthresh, expected) in [(false, 2_000), (true, 4_500)] {
        let mut c = sender_in_recovery_with_two_partial_acks(TcpConfig { exit_to_ssthresh: to_ssthresh, ..cfg() });
        let mut out = Vec::new();
        assert_eq!(c.ssthresh(), 4_500);
        c.on_segment(ms(500), &ack(base() + 10 * MSS, 60_000), &mut out);
        assert!(!c.in_recovery());
        assert_eq!(c.cwnd(), expected, "exit to ssthresh: {to_ssthresh}");
    }
}

/// The client's segments after it wrote 12 segments' worth (10 leave: the initial window) and
/// then 4 more, and the ACK of the first 6 let all of it go: (end offset in MSS, PSH) each.
fn pushes_after_two_writes(client: TcpConfig) -> Vec<(u32, bool)> {
    let (mut c, _) = established(client, cfg());
    let mut out = Vec::new();
    c.write(ms(20), (12 * MSS) as u64, &mut out);
    c.write(ms(21), (4 * MSS) as u64, &mut out);
    c.on_segment(ms(60), &ack(base() + 6 * MSS, 60_000), &mut out);
    out.iter().filter(|s| s.payload_len > 0).map(|s| ((s.hdr.seq.0 + s.payload_len - base()) / MSS, s.hdr.flags.has(TcpFlags::PSH))).collect()
}

#[test]
fn linux_push_marks_the_end_of_every_write() {
    // RFC rule: PSH only on the segment that ends the written data (16 segments' worth).
    let rfc = pushes_after_two_writes(cfg());
    assert_eq!(rfc.iter().filter(|(_, p)| *p).map(|(e, _)| *e).collect::<Vec<_>>(), vec![16]);
    // Linux's tcp_push at the end of each sendmsg: the first write ended at 12 segments too.
    let linux = pushes_after_two_writes(TcpConfig { linux_push: true, ..cfg() });
    assert_eq!(linux.iter().filter(|(_, p)| *p).map(|(e, _)| *e).collect::<Vec<_>>(), vec![12, 16]);
    assert_eq!(rfc.len(), linux.len(), "same segments otherwise: {rfc:?}");
}

#[test]
fn linux_push_acks_a_pushed_full_segment_once_the_application_has_read_it() {
    let pushed = |seq: u32, len: u32| Segment { hdr: TcpHeader { flags: TcpFlags(TcpFlags::ACK | TcpFlags::PSH), ..data(seq, len).hdr }, payload_len: len, ecn: 0 };
    for linux in [false, true] {
        let rcfg = TcpConfig { delayed_ack: Some(Duration::from_millis(200)), linux_push: linux, ..cfg() };
        let (_, mut s) = established(cfg(), rcfg);
        let mut out = Vec::new();
        s.on_segment(ms(20), &pushed(base(), MSS), &mut out);
        assert!(out.is_empty(), "not before the application has read it");
        s.read(ms(20), u64::MAX, &mut out);
        // Linux: ICSK_ACK_PUSHED, then tcp_cleanup_rbuf ACKs the emptied queue; RFC 1122: the
        // delayed-ACK timer or a second full segment.
        assert_eq!(out.len(), linux as usize, "linux_push = {linux}");
        out.clear();
        // A pushed segment shorter than the MSS is not "full-sized": delayed as any other.
        s.on_segment(ms(30), &pushed(base() + MSS, MSS / 2), &mut out);
        s.read(ms(30), u64::MAX, &mut out);
        assert!(out.is_empty(), "linux_push = {linux}: a short pushed segment waits");
    }
}

/// Payload sizes the client sends, one list per ACK, after writing 30 segments' worth (10 leave
/// with the initial window): ACKs of 2, 4 and 11.5 segments whose windows end inside a segment.
fn sizes_at_the_window_edge(client: TcpConfig) -> Vec<Vec<u32>> {
    let (mut c, _) = established(client, cfg());
    let mut out = Vec::new();
    c.write(ms(20), (30 * MSS) as u64, &mut out);
    assert_eq!(out.len(), 10);
    let mut sent = Vec::new();
    for (t, acked, wnd) in [(60, 2 * MSS, 9_500), (70, 4 * MSS, 9_700), (80, 11 * MSS + MSS / 2, 9_700)] {
        out.clear();
        c.on_segment(ms(t), &ack(base() + acked, wnd), &mut out);
        sent.push(out.iter().map(|s| s.payload_len).filter(|&n| n > 0).collect());
    }
    sent
}

#[test]
fn linux_fills_the_window_edge_behind_a_full_segment_when_no_runt_is_outstanding() {
    // MSS 1 000, window-limited (cwnd 11-13 segments > the 9.5-9.7 kB windows). Hand count of the
    // right edges: 2 000 + 9 500 = 11 500; 4 000 + 9 700 = 13 700; 11 500 + 9 700 = 21 200.
    let nagle = TcpConfig { nagle: true, ..cfg() };
    // RFC 9293 §3.8.6.2.1: only full segments while data is in flight; the edge's runt waits.
    // Edges 11 500 / 13 700 / 21 200 from nxt 10 000 / 11 000 / 13 000.
    assert_eq!(sizes_at_the_window_edge(nagle.clone()), vec![vec![1_000], vec![1_000, 1_000], vec![1_000; 8]]);
    // Linux (tcp_mss_split_point, Minshall's Nagle): the 500 B runt goes behind the full
    // segment; at the next edge (200 B past two full segments) that runt is unacknowledged, so
    // the new one waits; the ACK of 11 500 covers it, and the 700 B runt of the last edge leaves.
    let linux = sizes_at_the_window_edge(TcpConfig { linux_window_edge: true, ..nagle });
    assert_eq!(linux, vec![vec![1_000, 500], vec![1_000, 1_000], [vec![1_000; 7], vec![700]].concat()]);
}

#[test]
fn prr_recovery_sends_in_proportion_to_what_the_duplicate_acks_report() {
    // RFC 6937 (PRR-SSRB) as Linux's tcp_cwnd_reduction without SACK; hand count, MSS 1 000.
    // 12 segments out (offsets 0-11), segments at offsets 1 and 5 lost, no limited transmit.
    // Fast retransmit on the third duplicate: RecoverFS = cwnd = 11 000, ssthresh = 11 000 / 2
    // = 5 500; every duplicate ACK counts a segment delivered (sacked), and in flight = nxt − una
    // − sacked − the hole being resent. pipe > ssthresh: send CEIL(delivered·5 500/11 000)
    // segments − sent; else MIN(ssthresh − pipe, MAX(delivered − sent, this ACK's delivered)).
    //  dup 3: delivered 1, pipe 11−3−1 = 7  > 5.5: CEIL(0.5) = 1 − 0: the retransmission (1)
    //  dup 4: delivered 2, pipe 11−4 = 7    > 5.5: CEIL(1.0) = 1 − 1 = 0
    //  dup 5: delivered 3, pipe 11−5 = 6    > 5.5: CEIL(1.5) = 2 − 1 = 1: new segment 12
    //  dup 6: delivered 4, pipe 12−6 = 6    > 5.5: CEIL(2.0) = 2 − 2 = 0
    //  dup 7: delivered 5, pipe 12−7 = 5   <= 5.5: MIN(0.5, 3) = half a segment: nothing (SWS)
    //  dup 8-10: delivered 6-8, pipe 4: MIN(1.5, ...) = one segment each: 13, 14, 15
    //  partial ACK of offsets 1-4 (4 000 B; the duplicates counted 3 of them): delivered 1,
    //  sacked 10 − 3 = 7, pipe 16−5−7−1 = 3: MIN(2.5, MAX(9 − 5, 1)) = 2 segments: the
    //  retransmission of offset 5 and new segment 16.
    let mut out = Vec::new();
    let prr = TcpConfig { prr_recovery: true, limited_transmit: false, ..cfg() };
    let mut c = sender_losing_segment_two(prr, 2, &mut out);
    assert!(out.is_empty());
    let mut sent = Vec::new();
    for t in 0..8 {
        out.clear();
        c.on_segment(ms(123 + t), &ack(base() + MSS, 60_000), &mut out);
        sent.push(out.iter().map(|s| (s.hdr.seq.0 - base()) / MSS).collect::<Vec<_>>());
    }
    out.clear();
    c.on_segment(ms(200), &ack(base() + 5 * MSS, 60_000), &mut out);
    sent.push(out.iter().map(|s| (s.hdr.seq.0 - base()) / MSS).collect());
    assert_eq!(c.ssthresh(), 5_500);
    assert!(c.in_recovery());
    let expected: Vec<Vec<u32>> = vec![vec![1], vec![], vec![12], vec![], vec![], vec![13], vec![14], vec![15], vec![5, 16]];
    assert_eq!(sent, expected);
    // RFC 6582 on the same ACKs inflates from ssthresh + 3 segments = 8 500 by one segment per
    // duplicate and first sends new data at the seventh (cwnd 12 500 over 11 000 in flight).
    out.clear();
    let mut c = sender_losing_segment_two(TcpConfig { limited_transmit: false, ..cfg() }, 2, &mut out);
    let mut first_new = None;
    for t in 0..8 {
        out.clear();
        c.on_segment(ms(123 + t), &ack(base() + MSS, 60_000), &mut out);
        if first_new.is_none() && out.iter().any(|s| s.hdr.seq.0 - base() >= 12 * MSS) {
            first_new = Some(t + 3);
        }
    }
    assert_eq!(first_new, Some(7));
}

/// (segment number, advertised window) of each ACK a receiver with a 100 000-byte buffer and
/// window scaling sends for 24 in-order 1 000-byte segments its application reads at once.
fn acks_of_a_growing_window(linux: bool) -> Vec<(u32, u64)> {
    let receiver = TcpConfig {
        window_scale: true,
        recv_buffer: 100_000,
        delayed_ack: Some(Duration::from_millis(200)),
        linux_receive_window: linux,
        ..cfg()
    };
    let (_, mut s) = established(TcpConfig { window_scale: true, ..cfg() }, receiver);
    let mut out = Vec::new();
    let mut acks = Vec::new();
    for i in 0..24u32 {
        out.clear();
        s.on_segment(ms(20 + i as u64), &data(base() + i * MSS, MSS), &mut out);
        s.read(ms(20 + i as u64), u64::MAX, &mut out);
        acks.extend(out.iter().map(|a| (i + 1, (a.hdr.window as u64) << s.rcv_wscale())));
    }
    acks
}

#[test]
fn linux_receive_window_grows_two_mss_per_segment_and_acks_each_step() {
    // Hand count, MSS 1 000: Linux's initial window 65 535 rounded down to whole MSS = 65 000;
    // every data segment adds 2 000 (tcp_grow_window) and is ACKed at once, until the window
    // reaches the 100 000-byte buffer: 65 000 + 2 000·17 = 99 000 < 100 000 at the 17th, so the
    // 18th is the last growth (capped at 100 000). From then on every second segment (RFC 1122).
    // An ACK leaves before the application reads the segment it answers, so the window it
    // carries is also at most the buffer less that segment: 99 000.
    let linux = acks_of_a_growing_window(true);
    let mut expected: Vec<(u32, u64)> = (1..=17).map(|i| (i, 65_000 + 2_000 * i as u64)).collect();
    expected.extend([(18, 99_000), (20, 99_000), (22, 99_000), (24, 99_000)]);
    assert_eq!(linux, expected);
    // The RFC receiver: the whole buffer (less the unread segment) at once, every second segment.
    let rfc = acks_of_a_growing_window(false);
    assert_eq!(rfc, (1..=12).map(|k| (2 * k, 99_000)).collect::<Vec<_>>());
}

#[test]
fn ecn_is_negotiated_and_a_ce_mark_costs_one_window_reduction_per_window() {
    // RFC 3168 §6.1, by hand. Both ends ask (SYN: ECE + CWR; SYN-ACK: ECE): the client's new
    // data goes ECT(0). Ten segments of 1000 B are in flight (cwnd 10 000 B, SND.MAX 11 001).
    let ecn_cfg = TcpConfig { ecn: true, ..cfg() };
    let (mut c, mut s) = established(ecn_cfg.clone(), ecn_cfg);
    assert!(c.ecn.negotiated && s.ecn.negotiated);
    let mut out = Vec::new();
    c.write(ms(20), 20 * MSS as u64, &mut out);
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|seg| seg.ecn == ecn::ECT0), "new data is ECT(0)");
    // The receiver gets the first segment marked CE: its ACK carries ECE, and so does every
    // ACK after it until a segment with CWR arrives (§6.1.3).
    let mut marked = out[0];
    marked.ecn = ecn::CE;
    let mut acks = Vec::new();
    s.on_segment(ms(30), &marked, &mut acks);
    s.on_segment(ms(30), &out[1], &mut acks);
    assert!(!acks.is_empty() && acks.iter().all(|a| a.hdr.flags.has(TcpFlags::ECE) && a.ecn == ecn::NOT_ECT), "pure ACKs are not ECT");
    assert_eq!(s.ecn.ce_received, 1);
    // The sender: the first ECE halves the window (NewReno: ssthresh = flight / 2 = 4 500 B
    // after two segments acknowledged, cwnd = ssthresh), a second ECE in the same window does
    // nothing, and the next new segment carries CWR.
    let ece = |n: u32| Segment { hdr: TcpHeader { flags: TcpFlags(TcpFlags::ACK | TcpFlags::ECE), ..ack(base() + n * MSS, 60_000).hdr }, ..ack(0, 0) };
    out.clear();
    c.on_segment(ms(40), &ece(2), &mut out);
    assert_eq!((c.ecn.reductions, c.ssthresh(), c.cwnd()), (1, 4_000, 4_000), "flight after the ACK: 8 segments, halved");
    c.on_segment(ms(41), &ece(3), &mut out);
    assert_eq!(c.ecn.reductions, 1, "once per window of data");
    assert_eq!(c.ecn.ece_received, 2);
    assert!(out.iter().all(|seg| seg.payload_len == 0), "7 segments in flight, cwnd 4 000 B: nothing goes");
    // An ACK of 7 segments (no ECE) opens the window: the first new segment carries CWR.
    c.on_segment(ms(42), &ack(base() + 7 * MSS, 60_000), &mut out);
    let first_new = out.iter().find(|seg| seg.payload_len > 0).expect("the window lets a segment go");
    assert!(first_new.hdr.flags.has(TcpFlags::CWR) && first_new.ecn == ecn::ECT0);
    assert!(out.iter().filter(|seg| seg.hdr.flags.has(TcpFlags::CWR)).count() == 1, "CWR once");
    // The receiver stops echoing when the CWR segment arrives.
    acks.clear();
    s.on_segment(ms(50), first_new, &mut acks);
    s.on_segment(ms(50), &out[out.len() - 1], &mut acks);
    assert!(acks.last().is_some_and(|a| !a.hdr.flags.has(TcpFlags::ECE)), "{:?}", acks.last());
    // Once everything outstanding at the reduction (up to 11 001) is acknowledged, the next ECE
    // reduces again.
    c.on_segment(ms(60), &ece(10), &mut out);
    assert_eq!(c.ecn.reductions, 2);
}

#[test]
fn ecn_needs_both_ends() {
    let (c, s) = established(TcpConfig { ecn: true, ..cfg() }, cfg());
    assert!(!c.ecn.negotiated && !s.ecn.negotiated);
    let (c, s) = established(cfg(), TcpConfig { ecn: true, ..cfg() });
    assert!(!c.ecn.negotiated && !s.ecn.negotiated);
}
