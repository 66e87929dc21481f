//! The endpoint's timers and its round-trip timing.
//!
//! - Retransmission (RFC 6298 §5): armed when data leaves, restarted by an ACK of new data, off
//!   when all is acknowledged; on expiry go-back-N from SND.UNA, the congestion control told
//!   (RFC 5681 §3.1 as Linux's `tcp_enter_loss`), `recover` = SND.MAX (RFC 6582 §3.2 step 1),
//!   the SACK scoreboard discarded (RFC 2018 §8) and the RTO backed off. A lost SYN or SYN-ACK
//!   is resent with the same rules.
//! - RTT timing (RFC 6298 §3): one segment timed at a time, none that was retransmitted (Karn).
//! - Persist (RFC 9293 §3.8.6.1): a zero window is probed every RTO, backed off to RTO max; the
//!   probe is Linux's, an empty segment at SND.UNA − 1, which the receiver must answer.
//! - Delayed ACK (RFC 1122 §4.2.3.2) and the pacing gap of a pacing congestion control.
//!
//! After a lost SYN the RTO is at least 3 s until a sample exists (RFC 6298 §5.7, in `rtt.rs`).
//! Left out: TIME-WAIT expiry and keep-alive (a run ends first), the RTO restart after idle.

use super::socket::{Segment, State, TcpSocket};
use super::trace::TraceEvent;
use crate::packet::{ecn, SeqNum};
use crate::{Duration, Time};

/// A segment timed for an RTT sample.
#[derive(Clone, Copy, Debug)]
pub struct TimedSegment {
    pub(super) seq: SeqNum,
    pub(super) sent: Time,
}

/// Deadlines (absolute times) and retransmission bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timers {
    pub(super) rto: Option<Time>,
    pub(super) persist: Option<Time>,
    /// Persist probes sent without the window opening (each doubles the interval).
    pub(super) persist_backoff: u32,
    pub(super) delack: Option<Time>,
    /// The earliest time the next segment may leave, when the congestion control paces.
    pub(super) pace_at: Option<Time>,
    pub(super) timed: Option<TimedSegment>,
    pub(super) syn_retransmitted: bool,
    /// Timeouts since the cumulative ACK last advanced (Linux's icsk_retransmits).
    pub(super) rto_retransmits: u32,
}

impl TcpSocket {
    /// The earliest pending timer, if any.
    pub fn poll_deadline(&self) -> Option<Time> {
        // A plain min over the fixed fields (asked after every segment: an iterator over the
        // array cost ~28 instructions a call; callgrind, bench dumbbell-100s-10M).
        fn earlier(a: Option<Time>, b: Option<Time>) -> Option<Time> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, None) => x,
                (None, y) => y,
            }
        }
        let t = &self.timers;
        let d = earlier(earlier(t.rto, t.persist), t.delack);
        match t.pace_at {
            Some(p) if self.has_unsent() => earlier(d, Some(p)),
            _ => d,
        }
    }

    /// Runs every timer that has expired at `now`.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.timers.delack.is_some_and(|d| d <= now) {
            self.timers.delack = None;
            self.send_ack(out);
        }
        if self.timers.persist.is_some_and(|d| d <= now) {
            self.timers.persist = None;
            self.on_persist_timeout(now, out);
        }
        if self.timers.rto.is_some_and(|d| d <= now) {
            self.timers.rto = None;
            self.on_retransmission_timeout(now, out);
        }
        if self.timers.pace_at.is_some_and(|d| d <= now) {
            // The pacing gap is over: send what the window allows (a new gap starts with it).
            self.timers.pace_at = None;
            self.output(now, out);
        }
    }

    /// (Re)starts the retransmission timer one RTO from `now` (RFC 6298 §5.1, §5.3).
    pub(super) fn arm_rto(&mut self, now: Time) {
        self.timers.rto = Some(now + self.rtt.rto());
    }

    /// RFC 6298 §5.4–5.6: retransmit the earliest unacknowledged segment (go-back-N), back off.
    fn on_retransmission_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.snd.una == self.snd.max {
            return;
        }
        self.stats.timeouts += 1;
        match self.state {
            State::SynSent | State::SynReceived => {
                self.timers.syn_retransmitted = true;
                self.timers.timed = None;
                self.rtt.back_off();
                self.stats.retransmitted_segments += 1;
                let with_ack = self.state == State::SynReceived;
                self.send_syn(now, with_ack, out);
                return;
            }
            _ => {}
        }
        // RFC 5681 §3.1 (eq. 4 and its implementation note) as Linux's tcp_enter_loss applies
        // it: ssthresh is recomputed only by the first timeout outside fast recovery. In NewReno
        // recovery the flight has been inflated by new data sent under window inflation, so the
        // ssthresh chosen at the fast retransmit stands; a segment that already timed out keeps
        // ssthresh constant.
        let first = !self.recovery.in_recovery && self.timers.rto_retransmits == 0;
        self.cc.on_timeout(self.flight_size(), first);
        self.timers.rto_retransmits += 1;
        // RFC 6582 §3.2 step 1 after an RTO: no fast retransmit until the ACK passes `recover`.
        self.recovery.recover = self.snd.max;
        self.recovery.in_recovery = false;
        self.recovery.dupacks = 0;
        self.recovery.limited_sent = 0;
        // RFC 2018 §8: after a timeout the SACK scoreboard must be discarded.
        self.recovery.scoreboard.clear();
        self.timers.timed = None;
        self.rtt.back_off();
        // Go back N: resend from the first unacknowledged byte.
        self.snd.nxt = self.snd.una;
        // Whatever is unacknowledged, a FIN included, is sent again.
        self.snd.fin_sent = false;
        self.arm_rto(now);
        self.record(now, TraceEvent::Timeout, None);
        self.output(now, out);
    }

    /// The persist interval: the RTO (at least its minimum), doubled per unanswered probe, at
    /// most RTO max.
    pub(super) fn arm_persist(&mut self, now: Time) {
        let base = self.rtt.rto().0.max(self.cfg.rto_min.0);
        let interval = Duration(base.saturating_mul(1u64 << self.timers.persist_backoff.min(16))).min(self.cfg.rto_max);
        self.timers.persist = Some(now + interval);
    }

    /// RFC 9293 §3.8.6.1: probe a zero window (unless it opened or nothing waits).
    fn on_persist_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.snd.wnd > 0 || self.snd.buf_end == self.snd.nxt {
            self.timers.persist_backoff = 0;
            return;
        }
        self.stats.persist_probes += 1;
        // Linux-style probe: an empty segment with SEG.SEQ = SND.UNA − 1, which is
        // unacceptable to the receiver and therefore answered with an ACK (RFC 9293 §3.10.7.4).
        let h = self.base_header(self.snd.una + u32::MAX, 0);
        self.emit(out, h, 0, ecn::NOT_ECT);
        self.timers.persist_backoff += 1;
        self.arm_persist(now);
        self.record(now, TraceEvent::PersistProbe, None);
    }

    /// An ACK beyond the timed segment gives an RTT sample (RFC 6298 §3; the segment was
    /// never retransmitted, or it would no longer be timed).
    pub(super) fn take_rtt_sample(&mut self, now: Time, ack: SeqNum) -> Option<Duration> {
        match self.timers.timed {
            Some(TimedSegment { seq, sent }) if ack > seq => {
                self.timers.timed = None;
                let r = now - sent;
                self.rtt.sample(r);
                self.stats.rtt_samples += 1;
                Some(r)
            }
            _ => None,
        }
    }
}
