//! The receiving side: in-order and out-of-order data, what we advertise and when we ACK.
//!
//! Segment text processing follows RFC 9293 §3.10.7.4 (trim to the window, reassemble, a FIN
//! beyond a hole waits for it). ACKs: every second full-sized segment or after the delayed-ACK
//! timer (RFC 1122 §4.2.3.2, RFC 5681 §4.2), at once for out-of-order data and for data that
//! fills a hole; with SACK the blocks of RFC 2018 §4 (most recent first). The advertised window
//! never retreats and opens only by min(buffer/2, MSS) (receiver SWS avoidance, RFC 9293
//! §3.8.6.2.2), scaled by RFC 7323 §2.3 and capped by an interlayer awnd (Koga et al.) when
//! one is set; a read announces the opened window only as Linux's `tcp_cleanup_rbuf` would.
//! Payload bytes are not carried, only their sequence space. Left out: urgent data, D-SACK.

use super::ranges::RangeSet;
use super::socket::{Segment, State, TcpSocket};
use super::trace::TraceEvent;
use crate::packet::{ecn, SackBlock, SeqNum, TcpFlags, TcpHeader, MAX_SACK_BLOCKS};
use crate::Time;

/// The receive sequence variables of RFC 9293 §3.3.1 and the reassembly queue.
#[derive(Clone, Debug)]
pub struct RecvState {
    /// IRS.
    pub(super) irs: SeqNum,
    /// RCV.NXT: next sequence number expected.
    pub(super) nxt: SeqNum,
    /// Right edge of the window last advertised (RCV.NXT + RCV.WND when it was sent).
    pub(super) adv: SeqNum,
    /// In-order bytes the application has not read.
    pub(super) unread: u64,
    /// Out-of-order data held above RCV.NXT (also the source of SACK blocks).
    pub(super) reassembly: RangeSet,
    /// Start of the most recent out-of-order segment (the first SACK block, RFC 2018 §4).
    pub(super) last_ooo: Option<SeqNum>,
    /// In-order bytes received since the last ACK we sent.
    pub(super) unacked_bytes: u64,
    pub(super) fin_received: bool,
    /// Sequence number of the peer's FIN once seen (it may arrive before a hole is filled).
    pub(super) peer_fin: Option<SeqNum>,
    /// A full-sized segment carrying PSH arrived since the last ACK (`TcpConfig::linux_push`):
    /// acknowledged once the application has read everything.
    pub(super) pushed: bool,
    /// What Linux's `rcv_ssthresh` has grown by since the connection began
    /// (`TcpConfig::linux_receive_window`).
    pub(super) window_grown: u64,
}

impl Default for RecvState {
    fn default() -> Self {
        RecvState {
            irs: SeqNum(0),
            nxt: SeqNum(0),
            adv: SeqNum(0),
            unread: 0,
            reassembly: RangeSet::default(),
            last_ooo: None,
            unacked_bytes: 0,
            fin_received: false,
            peer_fin: None,
            pushed: false,
            window_grown: 0,
        }
    }
}

impl TcpSocket {
    /// The application reads up to `max` bytes; a window update may follow
    /// (see `window_update_due`; receiver SWS avoidance of RFC 9293 §3.8.6.2.2 applies).
    pub fn read(&mut self, now: Time, max: u64, out: &mut Vec<Segment>) -> u64 {
        let n = max.min(self.rcv.unread);
        self.rcv.unread -= n;
        if n > 0 && self.rcv.pushed && self.rcv.unread == 0 && self.rcv.unacked_bytes > 0 {
            // Linux's tcp_cleanup_rbuf: a pushed full-sized segment, now all read.
            self.send_ack(out);
            self.record(now, TraceEvent::AdvertisedWindow, None);
        } else if n > 0 && self.window_update_due() {
            match self.cfg.delayed_ack {
                Some(t) if self.cfg.lazy_window_update => {
                    if self.timers.delack.is_none() {
                        self.timers.delack = Some(now + t);
                    }
                }
                _ => {
                    self.send_ack(out);
                    self.record(now, TraceEvent::AdvertisedWindow, None);
                }
            }
        }
        n
    }

    /// The text of an acceptable segment (and its FIN): into RCV.NXT or the reassembly queue,
    /// then an ACK now or a delayed one.
    pub(super) fn process_data(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        let h = seg.hdr;
        let mut start = h.seq;
        let mut end = h.seq + seg.payload_len;
        // Trim what was already received and what lies beyond the advertised window.
        if start < self.rcv.nxt {
            start = self.rcv.nxt;
        }
        let right = self.rcv.adv.max(self.rcv.nxt);
        if end > right {
            end = right;
        }
        if h.flags.has(TcpFlags::FIN) && self.rcv.peer_fin.is_none() {
            self.rcv.peer_fin = Some(h.seq + seg.payload_len);
        }
        let mut immediate = false;
        if start == self.rcv.nxt {
            let had_holes = !self.rcv.reassembly.is_empty();
            let len = (end - start).max(0) as u64;
            self.rcv.nxt = end;
            self.rcv.unread += len;
            while let Some(e) = self.rcv.reassembly.pop_contiguous(self.rcv.nxt) {
                self.rcv.unread += (e - self.rcv.nxt).max(0) as u64;
                self.rcv.nxt = e;
            }
            // RFC 5681 §4.2: ACK at once when a segment fills (part of) a hole.
            immediate |= had_holes;
            self.rcv.unacked_bytes += len;
            if self.cfg.linux_receive_window && seg.payload_len >= 128 && self.window_limit() < self.cfg.recv_buffer.min(self.free_space() + len) {
                // Linux's tcp_grow_window: two MSS more per data segment while the window is
                // below the buffer and the space free before this segment, the grown window
                // announced at once (icsk_ack.quick).
                self.rcv.window_grown += 2 * self.cfg.mss as u64;
                immediate = true;
            }
            self.rcv.pushed |= self.cfg.linux_push && h.flags.has(TcpFlags::PSH) && seg.payload_len >= self.effective_mss() as u32;
            if !self.rcv.fin_received && self.rcv.peer_fin == Some(self.rcv.nxt) {
                self.on_fin_received();
                immediate = true;
            }
        } else if start > self.rcv.nxt && end > start {
            // Out of order: keep it and send a duplicate ACK at once (RFC 5681 §4.2).
            self.rcv.reassembly.insert(start, end);
            self.rcv.last_ooo = Some(start);
            immediate = true;
        } else {
            immediate = true; // an old duplicate
        }
        // "Full-sized" is what the peer may send: min(its MSS, the MSS we announced).
        let full = 2 * self.effective_mss();
        match self.cfg.delayed_ack {
            Some(t) if !immediate && self.rcv.unacked_bytes < full => {
                if self.timers.delack.is_none() {
                    self.timers.delack = Some(now + t);
                }
            }
            _ => {
                self.send_ack(out);
                self.record(now, TraceEvent::AdvertisedWindow, None);
            }
        }
    }

    /// The most the receiver will advertise: the buffer, or under `linux_receive_window`
    /// Linux's `rcv_ssthresh` — its initial window (65 535 B rounded down to whole MSS, the
    /// 64 240 B of a 1 460-byte MSS, `tcp_select_initial_window`) plus what it has grown by.
    pub(super) fn window_limit(&self) -> u64 {
        if !self.cfg.linux_receive_window {
            return self.cfg.recv_buffer;
        }
        let mss = self.cfg.mss.max(1) as u64;
        (65_535 / mss * mss + self.rcv.window_grown).min(self.cfg.recv_buffer)
    }

    /// Receive buffer space not held by unread data, under the awnd cap if one is set.
    pub(super) fn free_space(&self) -> u64 {
        let free = self.cfg.recv_buffer.saturating_sub(self.rcv.unread);
        self.cfg.awnd_cap.map_or(free, |cap| free.min(cap))
    }

    /// The right window edge we would advertise now: never retreating (RFC 9293 §3.8.6.2.2 /
    /// RFC 7323 §2.4) and moved forward only by at least min(buffer/2, MSS) (receiver SWS).
    fn advertised_edge(&self) -> SeqNum {
        let max_field = if self.opts.wscale_ok { 65_535u64 << self.opts.rcv_wscale } else { 65_535 };
        let free = self.free_space().min(max_field).min(self.window_limit());
        // Round down to the scale granularity so that the advertised value is exact.
        let free = (free >> self.rcv_wscale_in_use()) << self.rcv_wscale_in_use();
        let candidate = self.rcv.nxt + free as u32;
        let step = (self.cfg.recv_buffer / 2).min(self.cfg.mss as u64).max(1);
        if candidate - self.rcv.adv >= step as i64 {
            candidate
        } else {
            self.rcv.adv.max(self.rcv.nxt)
        }
    }

    /// After a read: announce the opened window only if it matters, as Linux does
    /// (`tcp_cleanup_rbuf`): the window still advertised is at most half the buffer and the new
    /// one is at least twice as large. A reader that keeps up never triggers extra ACKs; a
    /// receiver whose window collapsed reopens it at once.
    fn window_update_due(&self) -> bool {
        let remaining = (self.rcv.adv - self.rcv.nxt).max(0) as u64;
        if 2 * remaining > self.cfg.recv_buffer {
            return false;
        }
        let new = (self.advertised_edge() - self.rcv.nxt).max(0) as u64;
        new > 0 && new >= 2 * remaining
    }

    /// A bare ACK (also a duplicate ACK, a window update or the answer to a probe).
    pub(super) fn send_ack(&mut self, out: &mut Vec<Segment>) {
        let h = self.base_header(self.snd.nxt, 0);
        self.emit(out, h, 0, ecn::NOT_ECT);
    }

    /// The header of any segment we send after the SYN: it acknowledges RCV.NXT, advertises the
    /// window (counted in the stats) and carries SACK blocks when data is held out of order.
    pub(super) fn base_header(&mut self, seq: SeqNum, flags: u8) -> TcpHeader {
        let mut h = TcpHeader { seq, flags: TcpFlags(flags), ..TcpHeader::default() };
        if self.state != State::SynSent && self.state != State::Closed {
            h.flags.0 |= TcpFlags::ACK;
            h.ack = self.rcv.nxt;
            let edge = self.advertised_edge();
            let wnd = (edge - self.rcv.nxt).max(0) as u64;
            h.window = (wnd >> self.rcv_wscale_in_use()).min(65_535) as u16;
            self.rcv.adv = self.rcv.nxt + ((h.window as u64) << self.rcv_wscale_in_use()) as u32;
            let advertised = (h.window as u64) << self.rcv_wscale_in_use();
            if h.window == 0 {
                self.stats.zero_windows_advertised += 1;
            } else if self.state != State::SynReceived {
                let m = &mut self.stats.min_open_window_advertised;
                *m = Some(m.map_or(advertised, |v| v.min(advertised)));
            }
            if self.opts.sack_ok && !self.rcv.reassembly.is_empty() {
                self.fill_sack_blocks(&mut h);
            }
            // Any segment carrying an ACK satisfies a pending delayed ACK.
            self.timers.delack = None;
            self.rcv.unacked_bytes = 0;
            self.rcv.pushed = false;
        }
        h
    }

    /// RFC 2018 §4: the first block holds the most recently received segment, the others
    /// follow from the highest sequence down.
    fn fill_sack_blocks(&self, h: &mut TcpHeader) {
        let mut n = 0;
        let first = self.rcv.last_ooo.and_then(|s| self.rcv.reassembly.range_of(s));
        if let Some((a, b)) = first {
            h.sack[0] = SackBlock { start: a, end: b };
            n = 1;
        }
        for (a, b) in self.rcv.reassembly.iter().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if Some((a, b)) != first {
                h.sack[n] = SackBlock { start: a, end: b };
                n += 1;
            }
        }
        h.sack_len = n as u8;
    }
}
