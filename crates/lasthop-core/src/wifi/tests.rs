//! DCF tests driving the MAC directly with explicit time.

use super::dcf::{Dcf, DcfConfig, Frame, MacOutput};
use super::errors::ErrorModel;
use super::phy::Phy;
use crate::rng::RngStreams;
use crate::units::QueueLimit;
use crate::{Duration, Time};

fn cfg(phy: Phy) -> DcfConfig {
    DcfConfig { phy, retry_short: 7, retry_long: 4, rts_threshold: u64::MAX, queue_limit: QueueLimit::Packets(50), llc_snap: false }
}

fn dcf(cfg: DcfConfig, n: usize, errors: ErrorModel) -> Dcf {
    let r = RngStreams::new(5);
    Dcf::new(cfg, n, errors, r.stream("backoff"), r.stream("errors"))
}

/// Keeps stations 1..n saturated towards station 0 and runs `frames` exchanges.
fn saturate(d: &mut Dcf, frames: usize, bytes: u32) -> (Time, Vec<MacOutput>) {
    let mut uid = 0;
    let mut out = Vec::new();
    let mut now = Time::ZERO;
    let fill = |d: &mut Dcf, now: Time, uid: &mut u64| {
        for i in 1..d.n_stations() {
            while d.queue_len(i) < 3 {
                *uid += 1;
                d.enqueue(now, i, Frame { pkt: *uid as u32, uid: *uid, ip_bytes: bytes, to: 0, delivered: false, transmitted: false, flow: 0 });
            }
        }
    };
    for _ in 0..frames {
        fill(d, now, &mut uid);
        now = d.next_decision().expect("saturated");
        d.decide(now, &mut out);
    }
    (now, out)
}

#[test]
fn one_saturated_station_matches_the_dcf_cycle() {
    // models.md §2 / Bianchi n = 1: cycle = DIFS 50 + 15.5·20 + DATA 1303.27 + SIFS 10 + ACK 304
    // = 1977.27 µs for a 1500-byte MSDU (no LLC/SNAP) -> 6.069 Mb/s.
    let mut d = dcf(cfg(Phy::b(110, 10, false)), 2, ErrorModel::Ideal);
    let (_, out) = saturate(&mut d, 20_000, 1500);
    let delivered: Vec<Time> = out.iter().filter_map(|o| match o { MacOutput::Deliver { at, .. } => Some(*at), _ => None }).collect();
    assert_eq!(delivered.len(), 20_000, "no collisions or losses with one station");
    let span = (delivered[delivered.len() - 1] - delivered[0]).as_secs_f64();
    let s = (delivered.len() - 1) as f64 * 12_000.0 / span / 1e6;
    // Mean backoff over 20 000 draws: sd 9.2/√20000 slots ≈ 0.065 slot = 1.3 µs of 1977 µs.
    assert!((s - 6.069).abs() / 6.069 < 0.003, "single-station throughput {s:.4} Mb/s");
}

#[test]
fn a_frame_on_an_idle_medium_goes_without_backoff() {
    let phy = Phy::g(540, 240, true);
    let data = phy.data_time(1000);
    let mut d = dcf(cfg(phy), 2, ErrorModel::Ideal);
    let t0 = Time(1_000_000); // medium idle for far longer than DIFS
    d.enqueue(t0, 1, Frame { pkt: 1, uid: 1, ip_bytes: 1000, to: 0, delivered: false, transmitted: false, flow: 0 });
    assert_eq!(d.next_decision(), Some(t0), "§10.3.4.2: idle ≥ DIFS -> transmit at once");
    let mut out = Vec::new();
    d.decide(t0, &mut out);
    // On the air at once (a capture at the sender stamps it t0), received at the data frame's end.
    assert_eq!(out, vec![MacOutput::Transmit { pkt: 1, from: 1, to: 0, at: t0 }, MacOutput::Deliver { pkt: 1, from: 1, to: 0, at: t0 + data }]);
    // A second frame arriving during the exchange must back off: it cannot start before the
    // exchange end + SIFS + ACK + DIFS.
    d.enqueue(t0 + Duration::from_micros(10), 1, Frame { pkt: 2, uid: 2, ip_bytes: 1000, to: 0, delivered: false, transmitted: false, flow: 0 });
    let earliest = t0 + data + d.cfg.phy.sifs + d.cfg.phy.ack_time() + d.cfg.phy.difs();
    assert!(d.next_decision().unwrap() >= earliest);
}

#[test]
fn retry_limit_drops_after_seven_attempts() {
    let errors = ErrorModel::Fixed { fer: vec![0.0, 1.0], ack_fer: 0.0 };
    let mut d = dcf(cfg(Phy::b(110, 10, false)), 2, errors);
    let mut out = Vec::new();
    d.enqueue(Time::ZERO, 1, Frame { pkt: 9, uid: 9, ip_bytes: 500, to: 0, delivered: false, transmitted: false, flow: 0 });
    for _ in 0..7 {
        let t = d.next_decision().unwrap();
        d.decide(t, &mut out);
    }
    // Sent 7 times, first transmission reported once (a capture shows the packet once).
    assert_eq!(out, vec![MacOutput::Transmit { pkt: 9, from: 1, to: 0, at: Time::ZERO }, MacOutput::RetryDrop { pkt: 9 }], "dot11ShortRetryLimit = 7 attempts");
    assert_eq!(d.station_stats(1).attempts, 7);
    assert_eq!(d.next_decision(), None);
}

#[test]
fn lost_acks_cause_retries_but_one_delivery() {
    let errors = ErrorModel::Fixed { fer: vec![0.0, 0.0], ack_fer: 1.0 };
    let mut d = dcf(cfg(Phy::b(110, 10, false)), 2, errors);
    let mut out = Vec::new();
    d.enqueue(Time::ZERO, 1, Frame { pkt: 4, uid: 4, ip_bytes: 500, to: 0, delivered: false, transmitted: false, flow: 0 });
    while let Some(t) = d.next_decision() {
        d.decide(t, &mut out);
    }
    assert_eq!(out.len(), 2, "transmitted and delivered once, and no drop reported for a delivered packet: {out:?}");
    assert!(matches!(out[0], MacOutput::Transmit { pkt: 4, .. }) && matches!(out[1], MacOutput::Deliver { pkt: 4, .. }));
    assert_eq!(d.station_stats(0).duplicates_filtered, 6);
}

#[test]
fn two_stations_collide_at_bianchis_rate() {
    // Bianchi n = 2, 802.11b: p = 0.0570 (models.md table 1.4). Count collided attempts.
    let mut d = dcf(cfg(Phy::b(110, 10, false)), 3, ErrorModel::Ideal);
    saturate(&mut d, 40_000, 1500);
    let (att, col) = (1..3).fold((0, 0), |(a, c), i| (a + d.station_stats(i).attempts, c + d.station_stats(i).collisions));
    let p = col as f64 / att as f64;
    assert!((p - 0.0570).abs() / 0.0570 < 0.05, "collision probability {p:.4}");
}

#[test]
fn rts_failures_count_short_and_data_failures_after_cts_count_long() {
    // IEEE 802.11-2016 §10.3.4.4: with RTS/CTS, a lost RTS (no CTS) increments the short retry
    // count (limit 7); a lost data frame after a CTS increments the long one (limit 4).
    let rts_cfg = DcfConfig { rts_threshold: 0, ..cfg(Phy::b(110, 10, false)) };
    // A data frame that never went out (every RTS unanswered) is never reported transmitted.
    for (errors, limit, transmits, what) in [
        (ErrorModel::Fixed { fer: vec![0.0, 1.0], ack_fer: 0.0 }, 4, 1, "data after CTS: dot11LongRetryLimit"),
        (ErrorModel::Fixed { fer: vec![0.0, 0.0], ack_fer: 1.0 }, 7, 0, "RTS unanswered: dot11ShortRetryLimit"),
    ] {
        let mut d = dcf(rts_cfg.clone(), 2, errors);
        let mut out = Vec::new();
        d.enqueue(Time::ZERO, 1, Frame { pkt: 9, uid: 9, ip_bytes: 500, to: 0, delivered: false, transmitted: false, flow: 0 });
        while let Some(t) = d.next_decision() {
            d.decide(t, &mut out);
        }
        let sent = out.iter().filter(|o| matches!(o, MacOutput::Transmit { pkt: 9, .. })).count();
        assert_eq!(sent, transmits, "{what}");
        out.retain(|o| !matches!(o, MacOutput::Transmit { .. }));
        assert_eq!(out, vec![MacOutput::RetryDrop { pkt: 9 }], "{what}");
        assert_eq!(d.station_stats(1).attempts, limit, "{what}");
    }
}

#[test]
fn rts_collisions_drop_frames_at_p_to_the_seventh() {
    // 40 saturated 802.11g stations with RTS/CTS: only RTS frames collide, and they count against
    // the short limit of 7, so a frame is lost after 7 collided RTS: drop ratio ≈ p^7 for the
    // per-attempt collision probability p (Bianchi's independence assumption), far below p^4.
    let mut d = dcf(DcfConfig { rts_threshold: 0, ..cfg(Phy::g(540, 240, true)) }, 41, ErrorModel::Ideal);
    let (_, out) = saturate(&mut d, 60_000, 1500);
    let (att, col) = (1..41).fold((0, 0), |(a, c), i| (a + d.station_stats(i).attempts, c + d.station_stats(i).collisions));
    let p = col as f64 / att as f64;
    let drops = out.iter().filter(|o| matches!(o, MacOutput::RetryDrop { .. })).count() as f64;
    let delivered = out.iter().filter(|o| matches!(o, MacOutput::Deliver { .. })).count() as f64;
    let ratio = drops / (drops + delivered);
    assert!(ratio > 0.6 * p.powi(7) && ratio < 1.4 * p.powi(7), "drop ratio {ratio:.4}, p {p:.3}, p^7 {:.4}", p.powi(7));
    assert!(ratio < 0.25 * p.powi(4), "drop ratio {ratio:.4} near p^4 {:.4}: RTS counted long", p.powi(4));
}
