//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation, as Linux's
//! `tcp_rate.c`): each sent segment remembers how much had been delivered when it left; its ACK
//! then yields one sample, the data delivered over the longer of the send and ACK intervals
//! (§3.3), which BBR's bandwidth filter takes in.
//!
//! As in Linux: SACKed segments count as delivered when SACKed (so a later cumulative ACK over
//! them does not look like a burst), a sample over less than the smallest RTT is discarded as ACK
//! compression, and a retransmitted segment gives a rate but no RTT (Karn). Simplification: the
//! sender is app-limited only when it has nothing to send with room in its window.

use crate::packet::SeqNum;
use crate::{Duration, Time};
use std::collections::VecDeque;

/// What one sent segment carried, for the delivery-rate estimator.
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    start: SeqNum,
    end: SeqNum,
    sent: Time,
    delivered: u64,
    delivered_time: Time,
    first_sent: Time,
    app_limited: bool,
    retransmitted: bool,
    /// Already counted as delivered by a SACK.
    sacked: bool,
}

/// One delivery-rate sample (draft-cheng §3.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Bytes per second.
    pub delivery_rate: f64,
    pub prior_delivered: u64,
    pub is_app_limited: bool,
    pub rtt: Option<Duration>,
}

/// The delivery-rate estimator: per-segment records, connection-wide delivered counters.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    records: VecDeque<TxRecord>,
    pub delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    app_limited_until: u64,
    /// The newest record delivered since the last sample (by SACK or cumulative ACK).
    newest: Option<TxRecord>,
    reported: u64,
    /// Smallest RTT sampled, to reject samples over shorter intervals (ACK compression).
    min_rtt: Option<Duration>,
    /// The highest end of any record so far: a segment starting at or above it is new data and
    /// overlaps no record, so only retransmissions search the records.
    sent_end: Option<SeqNum>,
}

impl RateSampler {
    /// A segment [start, end) leaves at `now` with `inflight` bytes already out.
    pub fn on_send(&mut self, now: Time, start: SeqNum, end: SeqNum, inflight: u64) {
        if inflight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let rec = TxRecord {
            start,
            end,
            sent: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent: self.first_sent_time,
            app_limited: self.app_limited_until > 0,
            retransmitted: false,
            sacked: false,
        };
        let mut touched = false;
        if self.sent_end.is_some_and(|e| start < e) {
            for r in self.records.iter_mut().filter(|r| r.start < end && start < r.end) {
                *r = TxRecord { start: r.start, end: r.end, retransmitted: true, ..rec };
                touched = true;
            }
        }
        if !touched {
            self.records.push_back(rec);
            if self.sent_end.is_none_or(|e| end > e) {
                self.sent_end = Some(end);
            }
        }
    }

    /// Bytes delivered (cumulatively or by SACK) since the last call.
    pub fn take_newly_delivered(&mut self) -> u64 {
        let n = self.delivered - self.reported;
        self.reported = self.delivered;
        n
    }

    /// The sender has nothing to send with room in its window: samples taken until what is in
    /// flight now has been delivered are app-limited.
    pub fn on_app_limited(&mut self, inflight: u64) {
        self.app_limited_until = (self.delivered + inflight).max(1);
    }

    fn deliver(&mut self, now: Time, r: TxRecord) {
        self.delivered += (r.end - r.start).max(0) as u64;
        self.delivered_time = now;
        if self.newest.is_none_or(|n| r.delivered >= n.delivered) {
            self.newest = Some(r);
        }
    }

    /// A SACK block [start, end): the segments it covers are delivered now (as Linux counts
    /// them), so a later cumulative ACK over them does not look like a burst.
    pub fn on_sack(&mut self, now: Time, start: SeqNum, end: SeqNum) {
        for i in 0..self.records.len() {
            let r = self.records[i];
            if !r.sacked && r.start >= start && r.end <= end {
                self.records[i].sacked = true;
                self.deliver(now, TxRecord { sacked: true, ..r });
            }
        }
    }

    /// A cumulative ACK up to `ack` at `now`: the rate sample of the newest delivered segment.
    pub fn on_ack(&mut self, now: Time, ack: SeqNum) -> Option<RateSample> {
        while let Some(r) = self.records.front().copied() {
            if r.end > ack {
                break;
            }
            self.records.pop_front();
            if !r.sacked {
                self.deliver(now, r);
            }
        }
        let p = self.newest.take()?;
        if self.app_limited_until > 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        self.first_sent_time = p.sent;
        let send_elapsed = p.sent.since(p.first_sent);
        let ack_elapsed = now.since(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        let rtt = (!p.retransmitted).then(|| now.since(p.sent));
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        // draft-cheng §3.3 / Linux: a sample over less than the minimum RTT is ACK compression
        // or a stretched ACK, not a delivery rate.
        if interval.0 == 0 || self.min_rtt.is_some_and(|m| interval < m) {
            return Some(RateSample { delivery_rate: 0.0, prior_delivered: p.delivered, is_app_limited: true, rtt });
        }
        Some(RateSample {
            delivery_rate: (self.delivered - p.delivered) as f64 / interval.as_secs_f64(),
            prior_delivered: p.delivered,
            is_app_limited: p.app_limited,
            rtt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rate_sample_by_hand() {
        // Two 1000-B segments sent at 0 and 1 ms on an idle connection, acked at 50 and 51 ms.
        // First ACK: 1000 B over max(send 0 ms, ack 50 ms) = 50 ms.
        let mut rs = RateSampler::default();
        rs.on_send(Time(0), SeqNum(0), SeqNum(1000), 0);
        rs.on_send(Time(MS), SeqNum(1000), SeqNum(2000), 1000);
        let s1 = rs.on_ack(Time(50 * MS), SeqNum(1000)).unwrap();
        assert!((s1.delivery_rate - 1000.0 / 0.050).abs() < 1e-6);
        assert_eq!(s1.rtt, Some(Duration(50 * MS)));
        let s2 = rs.on_ack(Time(51 * MS), SeqNum(2000)).unwrap();
        // Record 2: delivered 0 at send, delivered_time 0 (idle start), first_sent 0:
        // interval = max(1 ms, 51 ms) = 51 ms, 2000 B delivered since.
        assert!((s2.delivery_rate - 2000.0 / 0.051).abs() < 1e-6, "{s2:?}");
        assert_eq!(rs.delivered, 2000);
    }
}
