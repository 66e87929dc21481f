//! ACK processing and loss recovery on the sending side; the window decisions are the
//! congestion control's (`cc.rs`), told each event here.
//!
//! - RFC 9293 §3.10.7.4: SND.UNA and the send window (updated only from newer segments).
//! - RFC 5681 §2 and §3.2: what a duplicate ACK is; fast retransmit on the third (DupThresh),
//!   FlightSize for ssthresh leaving out limited-transmit data (RFC 3042 §2).
//! - RFC 6582 §3.2 (without SACK): `recover`, partial ACKs retransmit the next hole and keep
//!   recovery (the RTO reset only on the first, "impatient" §4.2, unless configured
//!   "slow-but-steady": on every one, as Linux), a full ACK ends it; no new fast retransmit
//!   until the cumulative ACK passes `recover`.
//! - RFC 6675 (with SACK): the scoreboard, IsLost, SetPipe and NextSeg rules 1–3, entered on
//!   DupThresh duplicates or IsLost(SND.UNA).
//!
//! Left out: RFC 6675's rescue retransmission (NextSeg rule 4), D-SACK and reordering
//! detection (RFC 8985 RACK-TLP), F-RTO (RFC 5682), ECN (RFC 3168).

use super::ranges::RangeSet;
use super::socket::{Segment, TcpSocket};
use super::trace::TraceEvent;
use crate::packet::{SeqNum, TcpFlags};
use crate::Time;

/// Loss-recovery state (RFC 5681 §3.2, RFC 6582, RFC 6675).
#[derive(Clone, Debug)]
pub struct Recovery {
    /// Duplicate ACKs in a row for SND.UNA.
    pub(super) dupacks: u32,
    /// Bytes sent by limited transmit since the duplicate ACKs began (left out of FlightSize
    /// when ssthresh is set, RFC 5681 §3.2 step 2).
    pub(super) limited_sent: u64,
    pub(super) in_recovery: bool,
    /// A partial ACK has been seen in this recovery (RFC 6582 §4.2's impatient timer).
    pub(super) partial_ack_seen: bool,
    /// RFC 6582's `recover`: SND.MAX when recovery (or the last timeout) began.
    pub(super) recover: SeqNum,
    /// RFC 6675's HighRxt: the highest sequence number retransmitted in this recovery.
    pub(super) high_rxt: SeqNum,
    /// RFC 6675's scoreboard: the ranges the peer has SACKed above SND.UNA.
    pub(super) scoreboard: RangeSet,
    /// Proportional Rate Reduction's counters (`TcpConfig::prr_recovery`, without SACK).
    pub(super) prr: Prr,
}

/// RFC 6937's state for one recovery, bytes, as Linux keeps it without SACK
/// (`tcp_cwnd_reduction`; duplicate ACKs counted as delivered segments, `tcp_add_reno_sack`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    /// prr_delivered: data the receiver got since recovery began.
    pub(super) delivered: u64,
    /// prr_out: data sent since recovery began (retransmissions included).
    pub(super) out: u64,
    /// RecoverFS: cwnd when recovery began (Linux's `prior_cwnd`).
    pub(super) prior_cwnd: u64,
    /// Data the duplicate ACKs say arrived above the hole (Linux's `sacked_out`).
    pub(super) sacked: u64,
}

impl Recovery {
    pub fn new(iss: SeqNum) -> Self {
        Recovery {
            dupacks: 0,
            limited_sent: 0,
            in_recovery: false,
            partial_ack_seen: false,
            recover: iss,
            high_rxt: iss,
            scoreboard: RangeSet::default(),
            prr: Prr::default(),
        }
    }
}

impl TcpSocket {
    /// The ACK field of an acceptable segment: the send window, SACK blocks, then a new ACK or
    /// a duplicate ACK (anything else changes nothing here).
    pub(super) fn process_ack(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        let h = seg.hdr;
        if h.ack > self.snd.max {
            // Acknowledges something never sent.
            self.send_ack(out);
            return;
        }
        let old_wnd = self.snd.wnd;
        // RFC 9293 §3.10.7.4: update the send window only from newer segments.
        if self.snd.wl1 < h.seq || (self.snd.wl1 == h.seq && self.snd.wl2 <= h.ack) {
            self.snd.wnd = (h.window as u64) << self.opts.snd_wscale;
            self.snd.wl1 = h.seq;
            self.snd.wl2 = h.ack;
        }
        if self.snd.wnd > 0 {
            self.timers.persist = None;
            self.timers.persist_backoff = 0;
        }
        if self.opts.sack_ok {
            for b in h.sack_blocks() {
                if b.start > self.snd.una && b.end <= self.snd.max {
                    self.recovery.scoreboard.insert(b.start, b.end);
                    self.cc.on_sack(now, b.start, b.end);
                }
            }
        }
        if h.ack > self.snd.una {
            self.on_new_ack(now, h.ack, out);
            self.after_ack(now);
        } else if h.ack == self.snd.una
            && seg.payload_len == 0
            && !h.flags.has(TcpFlags::FIN)
            && self.snd.wnd == old_wnd
            && self.snd.max > self.snd.una
        {
            // RFC 5681 §2 definition of a duplicate ACK.
            self.on_duplicate_ack(now, out);
            self.after_ack(now);
        }
    }

    /// SND.UNA advances: an RTT sample, the end or continuation of recovery, or growth by the
    /// congestion control; the retransmission timer follows.
    fn on_new_ack(&mut self, now: Time, ack: SeqNum, out: &mut Vec<Segment>) {
        let acked = (ack - self.snd.una) as u64;
        let sample = self.take_rtt_sample(now, ack);
        self.snd.una = ack;
        self.timers.rto_retransmits = 0;
        if self.snd.nxt < ack {
            self.snd.nxt = ack;
        }
        self.recovery.scoreboard.remove_below(ack);
        if self.snd.fin_requested && ack - self.snd.buf_end == 1 {
            self.on_fin_acked();
        }
        let mut event = TraceEvent::Ack;
        if self.recovery.in_recovery {
            if ack >= self.recovery.recover {
                // Full ACK (RFC 6582 §3.2 step 3, option 1; RFC 6675 ends the same way). The
                // duplicate-ACK count starts again: a later single duplicate is not a third one.
                self.recovery.in_recovery = false;
                self.recovery.dupacks = 0;
                // Option 2 (cwnd = ssthresh) is option 1's rule with an unbounded FlightSize.
                let flight = if self.cfg.exit_to_ssthresh { u64::MAX / 4 } else { self.flight_size() };
                self.cc.on_recovery_exit(flight, self.effective_mss());
                event = TraceEvent::RecoveryExit;
            } else if !self.opts.sack_ok {
                // Partial ACK: retransmit the next hole, deflate by the amount acknowledged and
                // add back one SMSS if at least one was acknowledged (RFC 6582 §3.2 step 5).
                let mss = self.effective_mss();
                let len = self.segment_len_at(self.snd.una);
                let una = self.snd.una;
                if self.cfg.prr_recovery {
                    // Linux's `tcp_remove_reno_sacks`: the duplicate ACKs already counted the
                    // segments this ACK covers above the old hole, save one.
                    let p = &mut self.recovery.prr;
                    let delivered = acked.saturating_sub(p.sacked).max(mss);
                    p.sacked = p.sacked.saturating_sub(acked.saturating_sub(mss));
                    // The next hole is marked lost (newly lost: no extra segment) and resent.
                    self.prr_window(delivered, len as u64);
                }
                self.send_data(now, una, len, out);
                if !self.cfg.prr_recovery {
                    self.cc.on_partial_ack(acked, mss);
                }
                if !self.recovery.partial_ack_seen || self.cfg.slow_but_steady {
                    // Reset the timer only for the first partial ACK ("impatient", RFC 6582 §4.2),
                    // or for every one ("slow-but-steady").
                    self.recovery.partial_ack_seen = true;
                    self.arm_rto(now);
                }
                event = TraceEvent::PartialAck;
            } else {
                event = TraceEvent::PartialAck;
            }
        } else {
            self.recovery.dupacks = 0;
            self.recovery.limited_sent = 0;
            let rtt = self.rtt.srtt().unwrap_or(self.rtt.rto());
            self.cc.on_ack(acked, now, rtt);
        }
        // RFC 6298 §5.2–5.3: stop the timer when all is acknowledged, else restart it.
        if self.snd.una == self.snd.max {
            self.timers.rto = None;
        } else if event != TraceEvent::PartialAck || self.opts.sack_ok {
            self.arm_rto(now);
        }
        self.record(now, event, sample);
    }

    /// A duplicate ACK: inflation inside recovery, fast retransmit at DupThresh (or IsLost with
    /// SACK), else a count (limited transmit sends on the first two, in `output`).
    fn on_duplicate_ack(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.recovery.dupacks += 1;
        self.stats.dup_acks_received += 1;
        if self.recovery.in_recovery {
            if !self.opts.sack_ok {
                let mss = self.effective_mss();
                if self.cfg.prr_recovery {
                    self.recovery.prr.sacked += mss;
                    self.prr_window(mss, 0);
                } else {
                    // Window inflation (RFC 6582 §3.2 step 4).
                    self.cc.on_recovery_dup_ack(mss);
                }
            }
            self.record(now, TraceEvent::DupAck, None);
            return; // output() follows in the caller
        }
        let lost = self.opts.sack_ok && self.is_lost(self.snd.una);
        if self.recovery.dupacks >= self.cfg.dupack_threshold || lost {
            // RFC 6582 §3.2 step 2: only if the cumulative ACK covers more than `recover`.
            if self.snd.una - self.recovery.recover > 0 || self.recovery.recover == self.snd.iss {
                self.enter_recovery(now, out);
            }
        } else {
            self.record(now, TraceEvent::DupAck, None);
        }
    }

    /// Fast retransmit (RFC 5681 §3.2 steps 2–3, RFC 6675 §5 step 4): set `recover`, tell the
    /// congestion control, resend SND.UNA's segment.
    fn enter_recovery(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mss = self.effective_mss();
        self.stats.fast_retransmits += 1;
        self.recovery.in_recovery = true;
        self.recovery.partial_ack_seen = false;
        self.recovery.recover = self.snd.max;
        self.recovery.high_rxt = self.snd.una;
        let prior_cwnd = self.cc.cwnd();
        self.cc.on_fast_retransmit(self.flight_size().saturating_sub(self.recovery.limited_sent), mss, self.opts.sack_ok);
        self.recovery.limited_sent = 0;
        let una = self.snd.una;
        let len = self.segment_len_at(una);
        if self.cfg.prr_recovery && !self.opts.sack_ok {
            // The duplicate ACKs so far each stand for a segment delivered above the hole.
            let sacked = self.recovery.dupacks as u64 * mss;
            self.recovery.prr = Prr { delivered: 0, out: 0, prior_cwnd, sacked };
            self.prr_window(mss, len as u64);
        }
        self.send_data(now, una, len, out);
        if self.opts.sack_ok {
            self.recovery.high_rxt = una + len;
        }
        self.timers.timed = None;
        self.record(now, TraceEvent::FastRetransmit, None);
    }

    /// RFC 6937 PRR with slow-start reduction bound (PRR-SSRB), as Linux's `tcp_cwnd_reduction`,
    /// on an ACK in recovery without SACK that delivered `delivered` bytes: how much may be sent
    /// (`sndcnt`), given as cwnd over what the sender counts in flight. In flight is Linux's
    /// estimate: sent and unacknowledged, less what the duplicate ACKs reported, less the hole
    /// about to be resent (`rtx` bytes, marked lost); the holes beyond it stay counted, since
    /// without SACK nothing tells of them. (Linux's extra segment when SND.UNA advances without
    /// a new loss never applies here: every partial ACK marks the next hole lost.)
    fn prr_window(&mut self, delivered: u64, rtx: u64) {
        let mss = self.effective_mss();
        let flight = (self.snd.nxt - self.snd.una).max(0) as u64;
        let ssthresh = self.cc.ssthresh();
        let p = &mut self.recovery.prr;
        p.delivered += delivered;
        let in_flight = flight.saturating_sub(p.sacked).saturating_sub(rtx);
        let mut sndcnt = if in_flight > ssthresh {
            // Proportional part: CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out, rounded
            // up to whole segments as Linux counts (in packets).
            let segments = (p.delivered as u128 * ssthresh as u128).div_ceil(p.prior_cwnd.max(1) as u128 * mss as u128) as u64;
            (segments * mss).saturating_sub(p.out)
        } else {
            // Slow-start reduction bound as Linux has it: MIN(ssthresh − pipe,
            // MAX(prr_delivered − prr_out, DeliveredData)).
            p.delivered.saturating_sub(p.out).max(delivered).min(ssthresh - in_flight)
        };
        if p.out == 0 {
            sndcnt = sndcnt.max(mss); // at least the fast retransmit
        }
        // The retransmission leaves regardless (send_data); new data gets the rest.
        self.cc.set_recovery_cwnd(flight + sndcnt.saturating_sub(rtx));
    }

    /// Every ACK, once loss recovery has acted, goes to a model-based congestion control.
    fn after_ack(&mut self, now: Time) {
        if self.cc.is_model_based() {
            let inflight = self.delivery_inflight();
            self.cc.after_ack(now, self.snd.una, inflight, self.recovery.in_recovery);
        }
    }

    /// What a model-based congestion control counts as in flight: RFC 6675's pipe with SACK
    /// (SACKed and lost bytes left the network), else the flight less one segment per duplicate
    /// ACK.
    fn delivery_inflight(&self) -> u64 {
        if self.opts.sack_ok {
            self.pipe()
        } else {
            self.flight_size().saturating_sub(self.recovery.dupacks as u64 * self.effective_mss())
        }
    }

    /// IsLost(seq): more than (DupThresh − 1)·SMSS bytes above `seq` have been SACKed.
    fn is_lost(&self, seq: SeqNum) -> bool {
        let thresh = (self.cfg.dupack_threshold as u64 - 1) * self.effective_mss();
        self.recovery.scoreboard.bytes_above(seq + 1) > thresh
    }

    /// SetPipe(): bytes believed in the network.
    fn pipe(&self) -> u64 {
        let mss = self.effective_mss();
        let mut pipe = 0;
        let mut s = self.snd.una;
        while let Some((a, b)) = self.recovery.scoreboard.first_gap(s, self.snd.max) {
            let mut x = a;
            while x < b {
                let len = ((b - x) as u64).min(mss);
                if !self.is_lost(x) {
                    pipe += len;
                }
                if x < self.recovery.high_rxt {
                    pipe += len;
                }
                x = x + len as u32;
            }
            s = b;
        }
        pipe
    }

    /// NextSeg() rules 1 and 3 (rule 2, new data, is taken in between; no rescue retransmission).
    pub(super) fn sack_recovery_output(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mss = self.effective_mss();
        let highest_sacked = self.recovery.scoreboard.highest().unwrap_or(self.snd.una);
        let mut pipe = self.pipe();
        while self.cc.cwnd().saturating_sub(pipe) >= mss {
            let from = self.recovery.high_rxt.max(self.snd.una);
            let hole = self.recovery.scoreboard.first_gap(from, highest_sacked);
            let seq_len = match hole {
                Some((a, b)) if self.is_lost(a) => Some((a, ((b - a) as u64).min(mss) as u32)),
                _ => None,
            };
            if let Some((seq, len)) = seq_len {
                self.send_data(now, seq, len, out);
                self.recovery.high_rxt = seq + len;
                pipe += len as u64;
                continue;
            }
            // Rule 2: new data within the peer's window.
            let unsent = (self.snd.buf_end - self.snd.max).max(0) as u64;
            let wnd_room = (self.snd.una + self.snd.wnd as u32 - self.snd.max).max(0) as u64;
            if unsent > 0 && wnd_room > 0 {
                let len = unsent.min(mss).min(wnd_room) as u32;
                let seq = self.snd.max;
                self.send_data(now, seq, len, out);
                self.snd.nxt = self.snd.max;
                pipe += len as u64;
                continue;
            }
            // Rule 3: any unsacked hole below the highest SACKed byte.
            if let Some((a, b)) = hole {
                let len = ((b - a) as u64).min(mss) as u32;
                self.send_data(now, a, len, out);
                self.recovery.high_rxt = a + len;
                pipe += len as u64;
                continue;
            }
            break;
        }
    }
}
