//! One TCP endpoint as a sans-I/O state machine: segments and time go in, segments come out.
//!
//! Read first: RFC 9293 (the protocol), RFC 5681 (congestion control), RFC 6582 (NewReno),
//! RFC 6298 (RTO), RFC 7323 §2 (window scale), RFC 2018 + RFC 6675 (SACK and SACK-based
//! recovery), RFC 3042 (limited transmit), RFC 1122 §4.2.3.2 (delayed ACK), RFC 9293 §3.8.6
//! (persist timer, SWS avoidance, Nagle).
//!
//! This file holds the socket, the connection states of RFC 9293 §3.3.2 (open, synchronize,
//! FIN exchange) and the dispatch of an arriving segment (§3.10.7: the acceptability test, then
//! ACK, then text); the rest is by responsibility in `sender.rs`, `receiver.rs`, `recovery.rs`,
//! `timers.rs`, `options.rs` and `trace.rs`, the windows in `cc.rs`.
//!
//! Payload bytes are not carried, only sequence space: the application writes and reads byte
//! counts. Left out: timestamps (RFC 7323 §3–4), RST handling beyond the closed state, urgent
//! data, F-RTO, simultaneous open, TIME-WAIT expiry (a run ends first). The zero-window probe
//! follows Linux: an empty segment with an old sequence number, which any receiver must answer
//! with an ACK carrying its current window.

use super::cc::CongestionControl;
use super::config::TcpConfig;
use super::options::{window_shift_for, Negotiated};
use super::receiver::RecvState;
use super::recovery::Recovery;
use super::rtt::RttEstimator;
use super::sender::SendState;
use super::timers::Timers;
use super::trace::{TcpStats, TraceSample};
use crate::packet::{SeqNum, TcpFlags, TcpHeader};
use crate::{Duration, Time};

/// A segment as the endpoint sees it: header plus payload length.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Segment {
    pub hdr: TcpHeader,
    pub payload_len: u32,
    /// The IP header's ECN field it travels with (`crate::packet::ecn`).
    pub ecn: u8,
}

impl Segment {
    fn seq_len(&self) -> u32 {
        self.payload_len + self.hdr.flags.has(TcpFlags::SYN) as u32 + self.hdr.flags.has(TcpFlags::FIN) as u32
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// One endpoint. Each group of fields has its own file (see the module doc).
#[derive(Debug)]
pub struct TcpSocket {
    pub(super) cfg: TcpConfig,
    pub(super) state: State,
    pub(super) opts: Negotiated,
    pub(super) snd: SendState,
    pub(super) cc: CongestionControl,
    pub(super) recovery: Recovery,
    pub(super) rtt: RttEstimator,
    pub(super) timers: Timers,
    pub(super) rcv: RecvState,
    pub stats: TcpStats,
    /// ECN state and counters (RFC 3168; `TcpConfig::ecn`).
    pub ecn: super::ecn::Ecn,
    pub(super) trace: Option<Vec<TraceSample>>,
    /// Where application writes ended, not yet acknowledged (`TcpConfig::linux_push` only): the
    /// segment covering each carries PSH.
    pub(super) push_marks: std::collections::VecDeque<SeqNum>,
}

impl TcpSocket {
    pub fn new(cfg: TcpConfig, iss: SeqNum) -> Self {
        let rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max).with_tick(cfg.timer_granularity);
        let mut cc = CongestionControl::new(cfg.congestion_control, cfg.mss, cfg.initial_cwnd_segments, cfg.ca_increase);
        cc.set_abc_limit(cfg.abc_limit, cfg.mss);
        let rcv_wscale = if cfg.window_scale { window_shift_for(cfg.recv_buffer) } else { 0 };
        TcpSocket {
            state: State::Closed,
            opts: Negotiated::offer(rcv_wscale),
            snd: SendState::new(iss),
            cc,
            recovery: Recovery::new(iss),
            rtt,
            timers: Timers::default(),
            rcv: RecvState::default(),
            stats: TcpStats::default(),
            ecn: super::ecn::Ecn::default(),
            trace: None,
            push_marks: std::collections::VecDeque::new(),
            cfg,
        }
    }

    // ------------------------------------------------------------------ observation

    /// This endpoint's parameters.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// The MSS this endpoint announces.
    pub fn mss(&self) -> u32 {
        self.cfg.mss
    }

    pub fn awnd_cap(&self) -> Option<u64> {
        self.cfg.awnd_cap
    }

    /// Changes the receiver-side window cap (an interlayer mechanism updating it live).
    pub fn set_awnd_cap(&mut self, cap: Option<u64>) {
        self.cfg.awnd_cap = cap;
    }

    pub fn state(&self) -> State {
        self.state
    }

    pub fn cwnd(&self) -> u64 {
        self.cc.cwnd()
    }

    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery.in_recovery
    }

    pub fn peer_window(&self) -> u64 {
        self.snd.wnd
    }

    pub fn snd_una(&self) -> SeqNum {
        self.snd.una
    }

    pub fn snd_nxt(&self) -> SeqNum {
        self.snd.nxt
    }

    pub fn rcv_nxt(&self) -> SeqNum {
        self.rcv.nxt
    }

    pub fn flight_size(&self) -> u64 {
        (self.snd.max - self.snd.una).max(0) as u64
    }

    pub fn rcv_wscale(&self) -> u8 {
        self.opts.rcv_wscale
    }

    /// Bytes the application may still write.
    pub fn send_space(&self) -> u64 {
        let buffered = (self.snd.buf_end - self.snd.una).max(0) as u64;
        self.cfg.send_buffer.saturating_sub(buffered)
    }

    /// In-order bytes waiting for the application.
    pub fn readable(&self) -> u64 {
        self.rcv.unread
    }

    /// True once every written byte and the FIN are acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd.fin_requested && self.snd.una - self.snd.buf_end == 1
    }

    pub fn fin_received(&self) -> bool {
        self.rcv.fin_received
    }

    /// BBR's state for the summary: (BtlBw in bit/s, RTprop, mode).
    pub fn bbr_state(&self) -> Option<(f64, Option<Duration>, &'static str)> {
        self.cc.bbr_state()
    }

    pub(super) fn effective_mss(&self) -> u64 {
        self.cfg.mss.min(self.opts.peer_mss) as u64
    }

    // ------------------------------------------------------------------ connection

    /// Active open: send a SYN.
    pub fn connect(&mut self, now: Time, out: &mut Vec<Segment>) {
        assert_eq!(self.state, State::Closed, "connect on a socket that is not closed");
        self.state = State::SynSent;
        self.send_syn(now, false, out);
    }

    /// Passive open.
    pub fn listen(&mut self) {
        assert_eq!(self.state, State::Closed, "listen on a socket that is not closed");
        self.state = State::Listen;
    }

    /// Processes one arriving segment.
    pub fn on_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        let h = &seg.hdr;
        match self.state {
            State::Closed => {}
            State::Listen => {
                if h.flags.has(TcpFlags::SYN) && !h.flags.has(TcpFlags::ACK) {
                    self.accept_syn_options(h);
                    self.rcv.irs = h.seq;
                    self.rcv.nxt = h.seq + 1;
                    self.snd.wnd = h.window as u64;
                    self.state = State::SynReceived;
                    self.send_syn(now, true, out);
                }
            }
            State::SynSent => {
                if h.flags.has(TcpFlags::SYN) && h.flags.has(TcpFlags::ACK) && h.ack == self.snd.iss + 1 {
                    self.accept_syn_options(h);
                    self.rcv.irs = h.seq;
                    self.rcv.nxt = h.seq + 1;
                    self.rcv.adv = self.rcv.nxt;
                    self.snd.una = h.ack;
                    self.snd.wnd = h.window as u64; // SYN windows are never scaled (RFC 7323 §2.2).
                    self.snd.wl1 = h.seq;
                    self.snd.wl2 = h.ack;
                    self.take_rtt_sample(now, h.ack);
                    self.timers.rto = None;
                    self.state = State::Established;
                    if self.timers.syn_retransmitted {
                        self.rtt.after_syn_timeout();
                    }
                    self.send_ack(out);
                    self.output(now, out);
                }
            }
            _ => self.on_synchronized_segment(now, seg, out),
        }
    }

    fn on_synchronized_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        let h = seg.hdr;
        if h.flags.has(TcpFlags::RST) {
            self.state = State::Closed;
            return;
        }
        if h.flags.has(TcpFlags::SYN) {
            // A retransmitted SYN or SYN-ACK: our ACK was lost; repeat it.
            if self.state == State::SynReceived {
                self.send_syn(now, true, out);
            } else {
                self.send_ack(out);
            }
            return;
        }
        if !self.segment_acceptable(seg) {
            // RFC 9293 §3.10.7.4: answer an unacceptable segment with an ACK (this is what
            // makes zero-window probes work).
            self.send_ack(out);
            return;
        }
        self.ecn_on_arrival(seg);
        if h.flags.has(TcpFlags::ACK) {
            if self.state == State::SynReceived {
                if h.ack == self.snd.iss + 1 {
                    self.state = State::Established;
                    self.take_rtt_sample(now, h.ack);
                    self.snd.una = h.ack;
                    self.timers.rto = None;
                    self.snd.wl1 = h.seq;
                    self.snd.wl2 = h.ack;
                    self.snd.wnd = (h.window as u64) << self.opts.snd_wscale;
                    if self.timers.syn_retransmitted {
                        self.rtt.after_syn_timeout();
                    }
                } else {
                    return;
                }
            }
            self.process_ack(now, seg, out);
            self.ecn_on_ack(seg);
        }
        if seg.payload_len > 0 || h.flags.has(TcpFlags::FIN) {
            self.process_data(now, seg, out);
        }
        self.output(now, out);
    }

    /// RFC 9293 §3.10.7.4 acceptability test.
    fn segment_acceptable(&self, seg: &Segment) -> bool {
        let len = seg.seq_len();
        let wnd = (self.rcv.adv - self.rcv.nxt).max(0);
        let seq = seg.hdr.seq;
        let in_window = |s: SeqNum| s - self.rcv.nxt >= 0 && s - self.rcv.nxt < wnd;
        match (len, wnd) {
            (0, 0) => seq == self.rcv.nxt,
            (0, _) => in_window(seq) || seq == self.rcv.nxt,
            (_, 0) => false,
            (l, _) => in_window(seq) || in_window(seq + (l - 1)) || (seq < self.rcv.nxt && seq + l > self.rcv.nxt),
        }
    }

    pub(super) fn can_send_data(&self) -> bool {
        matches!(self.state, State::Established | State::CloseWait | State::FinWait1 | State::LastAck | State::Closing)
    }

    pub(super) fn on_fin_acked(&mut self) {
        self.state = match self.state {
            State::FinWait1 => State::FinWait2,
            State::Closing => State::TimeWait,
            State::LastAck => State::Closed,
            s => s,
        };
    }

    pub(super) fn on_fin_received(&mut self) {
        self.rcv.nxt = self.rcv.nxt + 1;
        self.rcv.fin_received = true;
        self.state = match self.state {
            State::Established | State::SynReceived => State::CloseWait,
            State::FinWait1 => State::Closing,
            State::FinWait2 => State::TimeWait,
            s => s,
        };
    }
}
