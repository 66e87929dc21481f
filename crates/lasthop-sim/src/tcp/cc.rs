//! Congestion control behind one interface: [`CongestionControl`] is an enum of the variants
//! (NewReno, CUBIC, BBR), dispatched with `match`, so the socket's hot path has no `dyn` and no
//! variant sees another's state.
//!
//! The split of work follows Linux's `tcp_congestion_ops`: the socket owns loss recovery — when a
//! fast retransmit starts (RFC 5681 §3.2, RFC 6675 §5), what a partial ACK means (RFC 6582 §3.2),
//! when recovery ends, when the retransmission timer fires (RFC 6298 §5) — and tells the
//! congestion control each of these events; the congestion control decides the windows:
//!
//! | event (socket)                      | window decision (here)                                          |
//! |-------------------------------------|-----------------------------------------------------------------|
//! | new data ACKed outside recovery     | slow start (RFC 5681 eq. 2), then NewReno's or CUBIC's increase  |
//! | fast retransmit                     | ssthresh: eq. 4 (NewReno) or β·cwnd (RFC 9438 §4.6); cwnd = ssthresh (+3 SMSS without SACK) |
//! | duplicate / partial ACK in recovery | RFC 6582 §3.2 steps 4–5 inflation and deflation (without SACK)   |
//! | recovery ends (full ACK)            | cwnd = min(ssthresh, FlightSize + SMSS) (RFC 6582 §3.2 step 3)   |
//! | retransmission timeout              | ssthresh by eq. 4 (first timeout only), cwnd = 1 SMSS (§3.1)    |
//! | every ACK, after loss recovery      | BBR only: the model updates and sets cwnd and the pacing rate    |
//!
//! BBR also hears each segment sent, each SACK block and each app-limited moment (its
//! delivery-rate sampler). Trade-off kept from the first implementation: during the processing of
//! one ACK, BBR's window moves by NewReno's rules (so a traced cwnd/ssthresh at that instant shows
//! the loss-based value); BBR's model replaces it once, at the end of the ACK (see `bbr.rs`).

use super::bbr::Bbr;
use super::cubic::Cubic;
use super::newreno::{CaIncrease, NewReno};
use lasthop_core::packet::SeqNum;
use lasthop_core::{Duration, Time};

/// Which congestion control an endpoint runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CcKind {
    /// RFC 5681 with RFC 6582's loss response (the papers').
    #[default]
    NewReno,
    /// RFC 9438 congestion avoidance and multiplicative decrease.
    Cubic,
    /// BBR v1: paced at the estimated bottleneck rate, window 2 × BDP.
    Bbr,
}

/// The RFC 5681 §3.1 state variables, in bytes, and the window rules every variant shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionWindow {
    pub cwnd: u64,
    pub ssthresh: u64,
}

impl CongestionWindow {
    /// RFC 5681 §3.1 initial window: min(4·SMSS, max(2·SMSS, 4380 B)) unless configured;
    /// ssthresh "arbitrarily high".
    pub fn initial(mss: u64, initial_segments: Option<u32>) -> Self {
        let cwnd = match initial_segments {
            Some(n) => n as u64 * mss,
            None => (4 * mss).min((2 * mss).max(4380)),
        };
        CongestionWindow { cwnd, ssthresh: u64::MAX / 2 }
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// RFC 5681 eq. 2: cwnd += min(N, SMSS).
    pub fn slow_start(&mut self, acked: u64, mss: u64) {
        self.cwnd += acked.min(mss);
    }

    /// The window a fast retransmit starts with, ssthresh already set: RFC 6675 §5 step 4
    /// (cwnd = ssthresh, pipe does the rest) or RFC 6582 §3.2 step 2 (+3 SMSS for the three
    /// segments the duplicate ACKs say have left the network).
    pub fn enter_recovery(&mut self, smss: u64, sack: bool) {
        self.cwnd = if sack { self.ssthresh } else { self.ssthresh + 3 * smss };
    }

    /// RFC 6582 §3.2 step 4: each further duplicate ACK inflates cwnd by one SMSS.
    pub fn inflate(&mut self, smss: u64) {
        self.cwnd += smss;
    }

    /// RFC 6582 §3.2 step 5: a partial ACK deflates cwnd by the amount acknowledged and adds back
    /// one SMSS if at least one SMSS was acknowledged.
    pub fn deflate(&mut self, acked: u64, smss: u64) {
        self.cwnd = self.cwnd.saturating_sub(acked) + if acked >= smss { smss } else { 0 };
        self.cwnd = self.cwnd.max(smss);
    }

    /// RFC 6582 §3.2 step 3, option 1: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
    pub fn exit_recovery(&mut self, flight: u64, smss: u64) {
        self.cwnd = self.ssthresh.min(flight.max(smss) + smss);
    }
}

/// One endpoint's congestion control.
#[derive(Clone, Debug)]
pub enum CongestionControl {
    NewReno(NewReno),
    Cubic(Cubic),
    /// Boxed: the model and its sampler are ten times the size of a loss-based window.
    Bbr(Box<Bbr>),
}

impl CongestionControl {
    /// `mss` is the endpoint's own (announced) MSS; `increase` is NewReno's congestion-avoidance
    /// rule (BBR's in-ACK window follows NewReno's, see the module doc).
    pub fn new(kind: CcKind, mss: u32, initial_segments: Option<u32>, increase: CaIncrease) -> Self {
        match kind {
            CcKind::NewReno => CongestionControl::NewReno(NewReno::new(mss, initial_segments, increase)),
            CcKind::Cubic => CongestionControl::Cubic(Cubic::new(mss, initial_segments)),
            CcKind::Bbr => CongestionControl::Bbr(Box::new(Bbr::new(mss, NewReno::new(mss, initial_segments, increase)))),
        }
    }

    pub fn kind(&self) -> CcKind {
        match self {
            CongestionControl::NewReno(_) => CcKind::NewReno,
            CongestionControl::Cubic(_) => CcKind::Cubic,
            CongestionControl::Bbr(_) => CcKind::Bbr,
        }
    }

    fn window(&self) -> &CongestionWindow {
        match self {
            CongestionControl::NewReno(c) => &c.window,
            CongestionControl::Cubic(c) => &c.window,
            CongestionControl::Bbr(b) => b.window(),
        }
    }

    fn window_mut(&mut self) -> &mut CongestionWindow {
        match self {
            CongestionControl::NewReno(c) => &mut c.window,
            CongestionControl::Cubic(c) => &mut c.window,
            CongestionControl::Bbr(b) => b.window_mut(),
        }
    }

    pub fn cwnd(&self) -> u64 {
        self.window().cwnd
    }

    pub fn ssthresh(&self) -> u64 {
        self.window().ssthresh
    }

    /// BBR builds a model of the path from delivery-rate samples, sets its window after each ACK
    /// and paces; it takes no limited transmit (its window already counts what left the network).
    pub fn is_model_based(&self) -> bool {
        matches!(self, CongestionControl::Bbr(_))
    }

    // ------------------------------------------------------------------ loss-recovery events

    /// New data acknowledged outside loss recovery (`now` and `rtt` serve CUBIC).
    pub fn on_ack(&mut self, acked: u64, now: Time, rtt: Duration) {
        match self {
            CongestionControl::NewReno(c) => c.on_ack(acked),
            CongestionControl::Cubic(c) => c.on_ack(acked, now, rtt),
            CongestionControl::Bbr(b) => b.on_ack(acked),
        }
    }

    /// A fast retransmit with `flight` bytes outstanding (limited-transmit data left out, RFC
    /// 5681 §3.2 step 2): the variant's multiplicative decrease sets ssthresh, then cwnd starts
    /// recovery by RFC 6675 (`sack`) or RFC 6582.
    pub fn on_fast_retransmit(&mut self, flight: u64, smss: u64, sack: bool) {
        match self {
            CongestionControl::NewReno(c) => c.on_congestion(flight),
            CongestionControl::Cubic(c) => c.on_congestion(flight),
            CongestionControl::Bbr(b) => b.on_congestion(flight),
        }
        self.window_mut().enter_recovery(smss, sack);
    }

    /// A duplicate ACK during NewReno (non-SACK) recovery.
    pub fn on_recovery_dup_ack(&mut self, smss: u64) {
        self.window_mut().inflate(smss);
    }

    /// A partial ACK of `acked` bytes during NewReno (non-SACK) recovery.
    pub fn on_partial_ack(&mut self, acked: u64, smss: u64) {
        self.window_mut().deflate(acked, smss);
    }

    /// The full ACK that ends recovery, `flight` bytes still outstanding.
    pub fn on_recovery_exit(&mut self, flight: u64, smss: u64) {
        self.window_mut().exit_recovery(flight, smss);
    }

    /// A retransmission timeout with `flight` bytes outstanding. RFC 5681 §3.1 as Linux's
    /// `tcp_enter_loss` applies it: ssthresh is recomputed only by the first timeout outside
    /// fast recovery (`recompute_ssthresh`); cwnd becomes the loss window of one segment.
    pub fn on_timeout(&mut self, flight: u64, recompute_ssthresh: bool) {
        match self {
            CongestionControl::NewReno(c) => c.on_timeout(flight, recompute_ssthresh),
            CongestionControl::Cubic(c) => c.on_timeout(flight, recompute_ssthresh),
            CongestionControl::Bbr(b) => b.on_timeout(flight, recompute_ssthresh),
        }
    }

    // ------------------------------------------------------------------ delivery signals (BBR)

    /// Every ACK (new or duplicate), after loss recovery chose what to resend: `una` is the
    /// cumulative ACK, `inflight` what is still in the network, `in_recovery` the socket's
    /// recovery state now.
    pub fn after_ack(&mut self, now: Time, una: SeqNum, inflight: u64, in_recovery: bool) {
        if let CongestionControl::Bbr(b) = self {
            b.after_ack(now, una, inflight, in_recovery);
        }
    }

    /// A data segment [start, end) leaves with `inflight` bytes already out.
    pub fn on_send(&mut self, now: Time, start: SeqNum, end: SeqNum, inflight: u64) {
        if let CongestionControl::Bbr(b) = self {
            b.on_send(now, start, end, inflight);
        }
    }

    /// A new SACK block [start, end) entered the scoreboard.
    pub fn on_sack(&mut self, now: Time, start: SeqNum, end: SeqNum) {
        if let CongestionControl::Bbr(b) = self {
            b.on_sack(now, start, end);
        }
    }

    /// The application has nothing to send with `in_flight` bytes out.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        if let CongestionControl::Bbr(b) = self {
            b.on_app_limited(in_flight);
        }
    }

    /// Pacing rate in bytes per second, for the variants that pace.
    pub fn pacing_rate(&self) -> Option<f64> {
        match self {
            CongestionControl::Bbr(b) => Some(b.pacing_rate()),
            _ => None,
        }
    }

    /// BBR's state for the summary: (BtlBw in bit/s, RTprop, mode).
    pub fn bbr_state(&self) -> Option<(f64, Option<Duration>, &'static str)> {
        match self {
            CongestionControl::Bbr(b) => Some(b.state()),
            _ => None,
        }
    }
}
