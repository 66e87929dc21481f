//! The sending side: what the application writes, what the windows let leave, and how.
//!
//! A segment leaves when min(cwnd + RFC 3042 limited-transmit allowance, the peer's window)
//! has room, subject to sender SWS avoidance (RFC 9293 §3.8.6.2.1: no window-limited runt while
//! data is in flight), Nagle (RFC 896 / RFC 9293 §3.7.4: one small segment outstanding) and,
//! when the congestion control paces (BBR), the pacing gap. A FIN follows the last written byte
//! (RFC 9293 §3.10.4). During SACK recovery RFC 6675's NextSeg decides instead (`recovery.rs`).
//! Left out: urgent data, TSO-style bursts (every segment is at most one MSS).

use super::socket::{Segment, State, TcpSocket};
use super::timers::TimedSegment;
use super::trace::TraceEvent;
use crate::packet::{SeqNum, TcpFlags, TcpHeader};
use crate::{Duration, Time};

/// The send sequence variables of RFC 9293 §3.3.1 and the application's side of the buffer.
#[derive(Clone, Copy, Debug)]
pub struct SendState {
    /// ISS.
    pub(super) iss: SeqNum,
    /// SND.UNA: oldest unacknowledged sequence number.
    pub(super) una: SeqNum,
    /// SND.NXT: next sequence number to send (moved back to SND.UNA by a timeout).
    pub(super) nxt: SeqNum,
    /// Highest sequence number sent so far, plus one.
    pub(super) max: SeqNum,
    /// Right end of the data the application has written (one past the last byte).
    pub(super) buf_end: SeqNum,
    pub(super) fin_requested: bool,
    pub(super) fin_sent: bool,
    /// SND.WND in bytes (scaled).
    pub(super) wnd: u64,
    /// SND.WL1 and SND.WL2: the segment that last updated SND.WND.
    pub(super) wl1: SeqNum,
    pub(super) wl2: SeqNum,
    /// End of the last new segment shorter than the MSS (Linux's `snd_sml`): while it is
    /// unacknowledged a small segment is outstanding (kept under `TcpConfig::linux_window_edge`).
    pub(super) small_end: SeqNum,
}

impl SendState {
    pub fn new(iss: SeqNum) -> Self {
        SendState {
            iss,
            una: iss,
            nxt: iss,
            max: iss,
            buf_end: iss + 1,
            fin_requested: false,
            fin_sent: false,
            wnd: 0,
            wl1: SeqNum(0),
            wl2: iss,
            small_end: iss,
        }
    }
}

impl TcpSocket {
    /// The application writes up to `bytes`; returns how many fit in the send buffer.
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) -> u64 {
        if self.snd.fin_requested {
            return 0;
        }
        let n = bytes.min(self.send_space());
        self.snd.buf_end = self.snd.buf_end + n as u32;
        if n > 0 && self.cfg.linux_push {
            self.push_marks.push_back(self.snd.buf_end);
        }
        if n > 0 {
            self.output(now, out);
        }
        n
    }

    /// The application closes its sending side: a FIN follows the last written byte.
    pub fn close(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.snd.fin_requested {
            return;
        }
        self.snd.fin_requested = true;
        match self.state {
            State::Listen | State::SynSent | State::Closed => self.state = State::Closed,
            _ => self.output(now, out),
        }
    }

    /// Sends what the windows, Nagle and SWS avoidance allow.
    pub(super) fn output(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.can_send_data() {
            return;
        }
        if self.recovery.in_recovery && self.opts.sack_ok {
            self.sack_recovery_output(now, out);
            return;
        }
        let mss = self.effective_mss();
        // A full segment left in this call just before (Linux cuts the window's last partial
        // segment only off a send that starts with a full one).
        let mut after_full = false;
        loop {
            let unsent = (self.snd.buf_end - self.snd.nxt).max(0) as u64;
            let fin_pending = self.snd.fin_requested && !self.fin_sent_at_or_beyond(self.snd.nxt);
            let in_flight = (self.snd.nxt - self.snd.una).max(0) as u64;
            if unsent == 0 && !fin_pending {
                // The application leaves the window unused (BBR's sampler marks it app-limited).
                self.cc.on_app_limited(in_flight);
                break;
            }
            let window = (self.cc.cwnd() + self.limited_transmit_allowance()).min(self.snd.wnd);
            let usable = window.saturating_sub(in_flight);
            if self.snd.wnd == 0 && unsent > 0 {
                if self.snd.una == self.snd.max && self.timers.persist.is_none() && self.timers.rto.is_none() {
                    self.arm_persist(now);
                }
                break;
            }
            let len = unsent.min(mss).min(usable) as u32;
            if len == 0 && !(unsent == 0 && fin_pending) {
                break;
            }
            if self.timers.pace_at.is_some_and(|t| t > now) {
                break; // paced: the timer sends it
            }
            let runt = (len as u64) < mss;
            if runt && (len as u64) < unsent && in_flight > 0 {
                // Window-limited runt: wait for more window (sender SWS avoidance, RFC 9293
                // §3.8.6.2.1) — or, as Linux, fill the window's edge behind a full segment
                // unless a small segment is still unacknowledged (`tcp_mss_split_point` with
                // Minshall's Nagle, `tcp_nagle_check`).
                if !(self.cfg.linux_window_edge && after_full && !self.small_outstanding()) {
                    break;
                }
            } else if self.cfg.nagle && runt && in_flight > 0 && !(unsent == len as u64 && self.snd.fin_requested) {
                // Nagle (RFC 896): at most one small segment outstanding.
                break;
            }
            after_full = !runt;
            let seq = self.snd.nxt;
            self.recovery.limited_sent += (in_flight + len as u64).saturating_sub(self.cc.cwnd().max(in_flight));
            self.send_data(now, seq, len, out);
            self.snd.nxt = seq + len + (self.snd.fin_requested && seq + len == self.snd.buf_end) as u32;
            if len == 0 {
                break;
            }
        }
    }

    /// A segment shorter than the MSS is sent and not yet acknowledged (Minshall's test).
    fn small_outstanding(&self) -> bool {
        self.snd.small_end > self.snd.una && self.snd.small_end <= self.snd.nxt
    }

    /// Sends `len` bytes of data starting at `seq` (a FIN is attached when it is the end).
    pub(super) fn send_data(&mut self, now: Time, seq: SeqNum, len: u32, out: &mut Vec<Segment>) {
        let end = seq + len;
        let with_fin = self.snd.fin_requested && end == self.snd.buf_end;
        let mut flags = 0;
        if with_fin {
            flags |= TcpFlags::FIN;
            self.snd.fin_sent = true;
        }
        if len > 0 && (end == self.snd.buf_end || (self.cfg.linux_push && self.ends_a_write(seq, end))) {
            flags |= TcpFlags::PSH;
        }
        let retransmission = seq < self.snd.max;
        let ecn_field = self.ecn_for_data(len, retransmission, &mut flags);
        let h = self.base_header(seq, flags);
        let seg_end = end + with_fin as u32;
        if retransmission {
            self.stats.retransmitted_segments += 1;
            self.record(now, TraceEvent::Retransmit, None);
            // Karn: a retransmission invalidates the timed segment it covers.
            if self.timers.timed.is_some_and(|t| t.seq >= seq && t.seq < seg_end) {
                self.timers.timed = None;
            }
        } else if self.timers.timed.is_none() {
            self.timers.timed = Some(TimedSegment { seq, sent: now });
        }
        if self.cfg.linux_window_edge && !retransmission && len > 0 && (len as u64) < self.effective_mss() {
            self.snd.small_end = end;
        }
        if len > 0 && self.recovery.in_recovery && self.cfg.prr_recovery && !self.opts.sack_ok {
            self.recovery.prr.out += len as u64;
        }
        if len > 0 {
            self.stats.data_segments_sent += 1;
            let inflight = (self.snd.max - self.snd.una).max(0) as u64;
            self.cc.on_send(now, seq, end, inflight);
            if let Some(rate) = self.cc.pacing_rate() {
                // The gap covers the segment with its 40 bytes of IPv4 and TCP headers.
                let gap = Duration(((len as f64 + 40.0) / rate * 1e9) as u64);
                self.timers.pace_at = Some(self.timers.pace_at.map_or(now, |t| t.max(now)) + gap);
            }
        }
        self.snd.max = self.snd.max.max(seg_end);
        if self.timers.rto.is_none() {
            self.arm_rto(now);
        }
        match self.state {
            State::Established if with_fin => self.state = State::FinWait1,
            State::CloseWait if with_fin => self.state = State::LastAck,
            _ => {}
        }
        self.emit(out, h, len, ecn_field);
    }

    /// Whether an application write ended within (seq, end] (`TcpConfig::linux_push`); marks
    /// below SND.UNA are forgotten on the way.
    fn ends_a_write(&mut self, seq: SeqNum, end: SeqNum) -> bool {
        while self.push_marks.front().is_some_and(|&m| m <= self.snd.una) {
            self.push_marks.pop_front();
        }
        let first_after = self.push_marks.partition_point(|&m| m <= seq);
        self.push_marks.get(first_after).is_some_and(|&m| m <= end)
    }

    /// Every segment leaves through here; after the handshake each carries ECE while a CE is
    /// echoed (`ecn.rs`).
    pub(super) fn emit(&mut self, out: &mut Vec<Segment>, mut hdr: TcpHeader, payload_len: u32, ecn: u8) {
        self.stats.segments_sent += 1;
        if !hdr.flags.has(TcpFlags::SYN) {
            hdr.flags.0 |= self.ecn_echo_flag();
        }
        out.push(Segment { hdr, payload_len, ecn });
    }

    /// RFC 3042: on each of the first two duplicate ACKs one new segment may go beyond cwnd
    /// (cwnd itself unchanged). Not for BBR, whose window already counts what left the network,
    /// nor while go-back-N resends after a timeout.
    fn limited_transmit_allowance(&self) -> u64 {
        let eligible = self.cfg.limited_transmit
            && !self.cc.is_model_based()
            && !self.recovery.in_recovery
            && self.recovery.dupacks > 0
            && self.recovery.dupacks < self.cfg.dupack_threshold
            && self.snd.nxt == self.snd.max;
        if eligible { self.recovery.dupacks.min(2) as u64 * self.effective_mss() } else { 0 }
    }

    pub(super) fn has_unsent(&self) -> bool {
        self.snd.buf_end > self.snd.nxt || (self.snd.fin_requested && !self.fin_sent_at_or_beyond(self.snd.nxt))
    }

    fn fin_sent_at_or_beyond(&self, nxt: SeqNum) -> bool {
        self.snd.fin_sent && nxt > self.snd.buf_end
    }

    /// Length of the segment to retransmit at `seq`: one MSS or up to the end of the data.
    pub(super) fn segment_len_at(&self, seq: SeqNum) -> u32 {
        let remaining = (self.snd.buf_end - seq).max(0) as u64;
        remaining.min(self.effective_mss()) as u32
    }
}
