//! RLC AM tests with explicit time: segmentation, status-driven retransmission, discard, WT.

use super::channel::TtiErrors;
use super::rlc::{Class, RlcAm, RlcConfig, RlcOutput};
use crate::rng::RngStreams;
use crate::{Duration, Time};

fn ms(t: u64) -> Time {
    Time(t * 1_000_000)
}

fn cfg() -> RlcConfig {
    RlcConfig {
        rate_bps: 384_000,
        tti: Duration::from_millis(20),
        delay: Duration::from_millis(30),
        // The status of a TTI goes back in an uplink TTI: 20 + 30 ms.
        status_delay: Duration::from_millis(50),
        pdu_payload: 40,
        buffer_sdus: 50,
        max_retx_tcp: 5,
        max_retx_udp: 5,
        unlimited: false,
        waiting_timeout: Duration::from_millis(500),
        priority: false,
        deliver_late: false,
    }
}

/// Runs the entity like the simulator does until nothing is left; returns (time, output).
fn drive(rlc: &mut RlcAm, until: Time) -> Vec<(Time, RlcOutput)> {
    drive_from(rlc, ms(0), until)
}

/// `drive` from the TTI at `from` (a test having run the earlier TTIs by hand).
fn drive_from(rlc: &mut RlcAm, from: Time, until: Time) -> Vec<(Time, RlcOutput)> {
    let mut log = Vec::new();
    let mut arrivals: Vec<(Time, u64)> = Vec::new();
    let mut rx_deadline: Option<Time> = None;
    let mut t = from;
    while t <= until {
        // Receiver events due up to t, in time order, then the TTI at t.
        loop {
            arrivals.sort();
            let next_arr = arrivals.first().map(|a| a.0).filter(|&a| a <= t);
            let next_rx = rx_deadline.filter(|&d| d <= t);
            let mut out = Vec::new();
            match (next_arr, next_rx) {
                (Some(a), r) if r.is_none_or(|r| a <= r) => {
                    let (at, id) = arrivals.remove(0);
                    rx_deadline = rlc.on_arrival(at, id, &mut out);
                    log.extend(out.into_iter().map(|o| (at, o)));
                }
                (_, Some(r)) => {
                    rx_deadline = rlc.deliver_in_order(r, &mut out);
                    log.extend(out.into_iter().map(|o| (r, o)));
                }
                _ => break,
            }
        }
        let mut out = Vec::new();
        rlc.on_tti(t, &mut out);
        for o in out {
            match o {
                RlcOutput::Arrival { id, at } => arrivals.push((at, id)),
                // Captures' business; `first_transmissions_are_reported_once_per_sdu` checks them.
                RlcOutput::Transmit { .. } => {}
                other => log.push((t, other)),
            }
        }
        let mut out = Vec::new();
        rx_deadline = rlc.deliver_in_order(t, &mut out).or(rx_deadline);
        log.extend(out.into_iter().map(|o| (t, o)));
        t = t + Duration::from_millis(20);
    }
    log
}

#[test]
fn segmentation_and_capacity_follow_the_bearer() {
    let c = cfg();
    // models.md §6.1: 24 PDUs × 40 B per 20 ms TTI = 384 kb/s; ceil(1501/40) = 38, ceil(261/40) = 7.
    assert_eq!(c.pdus_per_tti(), 24);
    assert_eq!(c.pdus_for(1500), 38);
    assert_eq!(c.pdus_for(260), 7);
    assert_eq!(c.feedback_delay(), Duration::from_millis(100));
}

#[test]
fn an_sdu_is_delivered_when_its_last_pdu_arrives() {
    let mut r = RlcAm::new(cfg(), TtiErrors::Ideal);
    assert!(r.enqueue(7, 1500, Class::Tcp));
    let log = drive(&mut r, ms(200));
    // 38 PDUs: 24 in the TTI at 0 ms, 14 in the TTI at 20 ms, which ends at 40 ms and reaches the
    // mobile 30 ms later: 70 ms.
    assert_eq!(log, vec![(ms(70), RlcOutput::Deliver { pkt: 7 })]);
    assert_eq!(r.occupancy(), 0, "acknowledged after the status at 120 ms");
}

#[test]
fn a_lost_tti_is_retransmitted_after_the_status_round_trip() {
    let errors = TtiErrors::Script { lost: vec![true], next: 0 };
    let mut r = RlcAm::new(cfg(), errors);
    r.enqueue(7, 1500, Class::Tcp);
    let log = drive(&mut r, ms(300));
    // TTI 0 lost; its status reaches the sender at 0 + 100 ms; the 24 PDUs go again in the TTI
    // at 100 ms and arrive at 150 ms, completing the SDU.
    assert_eq!(log, vec![(ms(150), RlcOutput::Deliver { pkt: 7 })]);
    assert_eq!(r.stats.pdus_retransmitted, 24);
}

#[test]
fn a_plain_uplink_returns_the_status_in_the_link_delay() {
    // Koga et al. eq. 1: each retransmission costs the packet's transmission time plus
    // 2 × 30 ms, the ACK/NACK's own transmission ignored. The TTI at 0 ms (lost) ends at 20 ms,
    // its status is back at 20 + 30 + 30 = 80 ms, the PDUs go again in the TTI at 80 ms and
    // arrive at 80 + 20 + 30 = 130 ms (with an RLC uplink: 150 ms, see above).
    let mut c = cfg();
    c.status_delay = Duration::from_millis(30);
    assert_eq!(c.feedback_delay(), Duration::from_millis(80));
    let mut r = RlcAm::new(c, TtiErrors::Script { lost: vec![true], next: 0 });
    r.enqueue(7, 1500, Class::Tcp);
    assert_eq!(drive(&mut r, ms(300)), vec![(ms(130), RlcOutput::Deliver { pkt: 7 })]);
}

#[test]
fn the_sdu_is_discarded_after_the_retransmission_limit() {
    let mut c = cfg();
    c.max_retx_udp = 1;
    let errors = TtiErrors::Script { lost: vec![true, true], next: 0 };
    let mut r = RlcAm::new(c, errors);
    r.enqueue(3, 260, Class::Udp);
    let log = drive(&mut r, ms(400));
    // Sent at 0 (lost), again at 100 (lost); at 200 ms the second loss is known and one
    // retransmission is all UDP may have: the SDU is discarded.
    assert_eq!(log, vec![(ms(200), RlcOutput::Discarded { pkt: 3 })]);
    assert_eq!(r.occupancy(), 0);
}

#[test]
fn the_buffer_holds_sdus_until_their_pdus_are_sent_not_acknowledged() {
    // Koga et al. Sect. 3.1: the base station's buffer is a transmission buffer (new PDUs) and a
    // retransmission buffer (PDUs to send again); Sect. 4 counts it in whole SDUs. PDUs on the
    // air awaiting their status are in neither.
    let mut c = cfg();
    c.buffer_sdus = 2;
    let mut r = RlcAm::new(c, TtiErrors::Script { lost: vec![true], next: 0 });
    assert!(r.enqueue(1, 260, Class::Udp));
    assert!(r.enqueue(2, 260, Class::Udp));
    assert!(!r.enqueue(3, 260, Class::Udp), "two SDUs wait to be sent: the buffer of 2 is full");
    let mut out = Vec::new();
    r.on_tti(ms(0), &mut out);
    assert_eq!(out, vec![RlcOutput::Transmit { pkt: 1 }, RlcOutput::Transmit { pkt: 2 }], "the TTI at 0 ms is lost: nothing to deliver");
    // 2 × 7 PDUs left in the TTI at 0 ms; their status comes only at 100 ms.
    assert_eq!(r.occupancy(), 0, "both SDUs are on the air, not in the buffer");
    assert!(r.enqueue(3, 260, Class::Udp), "a third SDU is admitted before the status");
    // SDU 3 goes in the TTI at 20 ms (arrives 70 ms) and waits in order; the status at 100 ms
    // sends SDUs 1 and 2 again, arriving at 150 ms: all three go up then.
    let log = drive_from(&mut r, ms(20), ms(400));
    let up = |pkt| (ms(150), RlcOutput::Deliver { pkt });
    assert_eq!(log, vec![up(1), up(2), up(3)]);
    assert_eq!(r.occupancy(), 0);
}

fn two_sdus_first_lost(wt_ms: u64) -> Vec<(Time, RlcOutput)> {
    let mut c = cfg();
    c.waiting_timeout = Duration::from_millis(wt_ms);
    // SDU 1 (1500 B, 38 PDUs) spans the TTIs at 0 and 20 ms; SDU 2 (260 B, 7 PDUs) rides in the
    // TTI at 20 ms. The TTI at 0 is lost: SDU 2 is complete at 70 ms, SDU 1 only at 150 ms.
    let mut r = RlcAm::new(c, TtiErrors::Script { lost: vec![true], next: 0 });
    r.enqueue(1, 1500, Class::Udp);
    r.enqueue(2, 260, Class::Udp);
    drive(&mut r, ms(400))
}

#[test]
fn in_order_delivery_waits_for_the_gap_within_wt() {
    let log = two_sdus_first_lost(500);
    assert_eq!(log, vec![(ms(150), RlcOutput::Deliver { pkt: 1 }), (ms(150), RlcOutput::Deliver { pkt: 2 })]);
}

#[test]
fn after_wt_the_gap_is_given_up_and_its_sdu_dropped_for_order() {
    let log = two_sdus_first_lost(60);
    // SDU 2 waited from 70 ms to 130 ms (WT = 60 ms) and goes up just after; SDU 1 completing at
    // 150 ms is out of order.
    let after_wt = ms(130) + Duration(1);
    assert_eq!(log, vec![(after_wt, RlcOutput::Deliver { pkt: 2 }), (ms(150), RlcOutput::OutOfOrder { pkt: 1 })]);
}

#[test]
fn a_gap_filled_the_instant_wt_runs_out_is_in_time() {
    // Koga et al. Table 3 (WT = 60 ms) with their 80 ms RLC round trip. SDU 1 (1500 B) spans the
    // TTIs at 0 and 20 ms, SDU 2 (260 B) ends in the one at 20 ms; the TTI at 0 is lost. SDU 2 is
    // complete at 70 ms; the retransmission goes at 80 ms and arrives at 130 ms, exactly WT
    // later. "All of the preceding PDUs arrive within the WT period": both go up, in order.
    let mut c = cfg();
    c.status_delay = Duration::from_millis(30);
    c.waiting_timeout = Duration::from_millis(60);
    let mut r = RlcAm::new(c, TtiErrors::Script { lost: vec![true], next: 0 });
    r.enqueue(1, 1500, Class::Udp);
    r.enqueue(2, 260, Class::Udp);
    assert!(drive(&mut r, ms(129)).is_empty(), "nothing goes up before 130 ms");
    // The simulator may run the WT deadline before the arrival due at the same instant.
    let mut out = Vec::new();
    assert_eq!(r.deliver_in_order(ms(130), &mut out), Some(ms(130) + Duration(1)));
    assert!(out.is_empty(), "at 130 ms SDU 2 has waited WT, not longer: the gap is kept");
    // TTIs sent: 0 (lost), 20 and the retransmission at 80 ms, id 2.
    r.on_arrival(ms(130), 2, &mut out);
    assert_eq!(out, vec![RlcOutput::Deliver { pkt: 1 }, RlcOutput::Deliver { pkt: 2 }]);
}

#[test]
fn every_sdu_is_delivered_in_order_with_unlimited_retransmissions() {
    let mut c = cfg();
    c.unlimited = true;
    let errors = TtiErrors::Fixed { fer: 0.3, rng: RngStreams::new(9).stream("fer") };
    let mut r = RlcAm::new(c, errors);
    for i in 0..40 {
        assert!(r.enqueue(i, if i % 3 == 0 { 1500 } else { 260 }, Class::Tcp));
    }
    let log = drive(&mut r, ms(30_000));
    let delivered: Vec<u32> = log
        .iter()
        .map(|(_, o)| match o {
            RlcOutput::Deliver { pkt } => *pkt,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(delivered, (0..40).collect::<Vec<_>>(), "all 40 SDUs, in order, none lost");
    assert!(r.stats.ttis_lost > 0, "the test must exercise losses");
}

#[test]
fn priority_scheduling_sends_udp_before_queued_tcp_and_reorders_per_class() {
    let mut c = cfg();
    c.priority = true;
    // A 1500 B TCP SDU (38 PDUs) is queued first, then a 260 B UDP SDU (7 PDUs). With priority
    // the UDP PDUs go in the first TTI (with 17 TCP PDUs), so UDP arrives at 50 ms; the TCP SDU
    // completes in the second TTI at 70 ms. Without priority UDP would wait behind TCP (70 ms).
    let mut r = RlcAm::new(c.clone(), TtiErrors::Ideal);
    r.enqueue(1, 1500, Class::Tcp);
    r.enqueue(2, 260, Class::Udp);
    let log = drive(&mut r, ms(300));
    assert_eq!(log, vec![(ms(50), RlcOutput::Deliver { pkt: 2 }), (ms(70), RlcOutput::Deliver { pkt: 1 })]);
    let mut plain = RlcAm::new(cfg(), TtiErrors::Ideal);
    plain.enqueue(1, 1500, Class::Tcp);
    plain.enqueue(2, 260, Class::Udp);
    assert_eq!(drive(&mut plain, ms(300)), vec![(ms(70), RlcOutput::Deliver { pkt: 1 }), (ms(70), RlcOutput::Deliver { pkt: 2 })]);
    // Per-class in-order delivery: a lost TCP TTI does not hold up UDP behind it.
    let mut r = RlcAm::new(c, TtiErrors::Script { lost: vec![false, true], next: 0 });
    r.enqueue(1, 1500, Class::Tcp);
    r.enqueue(2, 260, Class::Udp);
    let log = drive(&mut r, ms(400));
    assert_eq!(log[0], (ms(50), RlcOutput::Deliver { pkt: 2 }), "UDP does not wait for TCP's lost PDUs");
}

#[test]
fn first_transmissions_are_reported_once_per_sdu() {
    // Two SDUs that each fill one TTI exactly (cfg(): 384 kb/s × 20 ms / 40 B = 24 PDUs): SDU 1
    // starts in the TTI at 0 ms, SDU 2 in the TTI at 20 ms. The first TTI is lost, so SDU 1's
    // PDUs go again once its status returns (50 ms) — retransmissions, not first transmissions:
    // each SDU is reported exactly once.
    let mut rlc = RlcAm::new(cfg(), TtiErrors::Script { lost: vec![true], next: 0 });
    let bytes = cfg().pdus_per_tti() as u32 * cfg().pdu_payload;
    assert!(rlc.enqueue(1, bytes, Class::Tcp) && rlc.enqueue(2, bytes, Class::Tcp));
    let mut seen = Vec::new();
    for tti in 0..6 {
        let mut out = Vec::new();
        rlc.on_tti(ms(20 * tti), &mut out);
        seen.extend(out.iter().filter_map(|o| match o {
            RlcOutput::Transmit { pkt } => Some((20 * tti, *pkt)),
            _ => None,
        }));
    }
    assert!(rlc.stats.pdus_retransmitted > 0, "the lost TTI was sent again");
    assert_eq!(seen, vec![(0, 1), (20, 2)]);
}
