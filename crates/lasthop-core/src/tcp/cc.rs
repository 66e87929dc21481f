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
//! | recovery ends (full ACK)            | cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS) (RFC 6582 §3.2 step 3) |
//! | retransmission timeout              | ssthresh as at a fast retransmit (first timeout only), cwnd = 1 SMSS (RFC 5681 §3.1) |
//! | every ACK, after loss recovery      | BBR only: the model updates and sets cwnd and the pacing rate    |
//!
//! BBR also hears each segment sent, each SACK block and each app-limited moment (its
//! delivery-rate sampler). Trade-off kept from the first implementation: during the processing of
//! one ACK, BBR's window moves by NewReno's rules (so a traced cwnd/ssthresh at that instant shows
//! the loss-based value); BBR's model replaces it once, at the end of the ACK (see `bbr.rs`).
//! Left out: Proportional Rate Reduction (RFC 6937, Linux's recovery window), congestion window
//! validation (RFC 7661), ECN (RFC 3168).

use super::bbr::Bbr;
use super::cubic::Cubic;
use super::newreno::{CaIncrease, NewReno};
use crate::packet::SeqNum;
use crate::{Duration, Time};

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
    /// The most one ACK adds in slow start, bytes: RFC 3465 §2.3's L·SMSS (SMSS by default,
    /// RFC 5681 eq. 2).
    pub ss_limit: u64,
}

impl CongestionWindow {
    /// RFC 5681 §3.1 initial window: min(4·SMSS, max(2·SMSS, 4380 B)) unless configured;
    /// ssthresh "arbitrarily high".
    pub fn initial(mss: u64, initial_segments: Option<u32>) -> Self {
        let cwnd = match initial_segments {
            Some(n) => n as u64 * mss,
            None => (4 * mss).min((2 * mss).max(4380)),
        };
        CongestionWindow { cwnd, ssthresh: u64::MAX / 2, ss_limit: mss }
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// RFC 5681 eq. 2: cwnd += min(N, SMSS), or RFC 3465 §2.3's min(N, L·SMSS).
    pub fn slow_start(&mut self, acked: u64) {
        self.cwnd += acked.min(self.ss_limit);
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

    /// RFC 3465 §2.3: slow start grows cwnd by at most `l` segments of `mss` bytes per ACK.
    pub fn set_abc_limit(&mut self, l: u32, mss: u32) {
        self.window_mut().ss_limit = l.max(1) as u64 * mss as u64;
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

    /// An ACK with ECE (RFC 3168 §6.1.2): ssthresh as for a loss, cwnd down to it at once; no
    /// retransmission, no recovery. BBR v1 ignores ECE (its caller does not call this).
    pub fn on_ecn_echo(&mut self, flight: u64) {
        match self {
            CongestionControl::NewReno(c) => c.on_congestion(flight),
            CongestionControl::Cubic(c) => c.on_congestion(flight),
            CongestionControl::Bbr(_) => return,
        }
        let w = self.window_mut();
        w.cwnd = w.ssthresh;
    }

    /// A duplicate ACK during NewReno (non-SACK) recovery.
    pub fn on_recovery_dup_ack(&mut self, smss: u64) {
        self.window_mut().inflate(smss);
    }

    /// A partial ACK of `acked` bytes during NewReno (non-SACK) recovery.
    pub fn on_partial_ack(&mut self, acked: u64, smss: u64) {
        self.window_mut().deflate(acked, smss);
    }

    /// Sets cwnd during recovery without SACK when PRR decides it (`recovery.rs`, RFC 6937).
    pub fn set_recovery_cwnd(&mut self, bytes: u64) {
        self.window_mut().cwnd = bytes;
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

#[cfg(test)]
mod tests {
    //! One run of each variant through the interface the socket uses, against hand counts.
    use super::*;
    use std::collections::VecDeque;

    const MS: u64 = 1_000_000;
    const RTT: Duration = Duration(100 * MS);

    #[test]
    fn newreno_follows_rfc5681_and_rfc6582_by_hand() {
        let mut cc = CongestionControl::new(CcKind::NewReno, 1000, None, CaIncrease::Bytes);
        // RFC 5681 §3.1: IW = min(4·SMSS, max(2·SMSS, 4380 B)) = min(4000, 4380) = 4000 B.
        assert_eq!(cc.cwnd(), 4_000);
        // Slow start, eq. 2 (cwnd += min(N, SMSS)): six ACKs of 1000 B, then a stretch ACK of
        // 3000 B that still adds one SMSS: 4000 + 6·1000 + 1000 = 11 000 B.
        for _ in 0..6 {
            cc.on_ack(1_000, Time::ZERO, RTT);
        }
        cc.on_ack(3_000, Time::ZERO, RTT);
        assert_eq!(cc.cwnd(), 11_000);
        // Fast retransmit with FlightSize 11 000 B: eq. 4 ssthresh = max(11 000/2, 2·1000) =
        // 5500; RFC 6582 §3.2 step 2: cwnd = ssthresh + 3·SMSS = 8500.
        cc.on_fast_retransmit(11_000, 1_000, false);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (8_500, 5_500), "eq. 4 and the 3-segment inflation");
        // Two more duplicates inflate by one SMSS each (step 4): 10 500; a partial ACK of 4000 B
        // deflates by 4000 and adds one SMSS back (step 5): 7500.
        cc.on_recovery_dup_ack(1_000);
        cc.on_recovery_dup_ack(1_000);
        cc.on_partial_ack(4_000, 1_000);
        assert_eq!(cc.cwnd(), 7_500);
        // The full ACK with 2000 B still out (step 3 option 1): min(5500, 2000 + 1000) = 3000.
        cc.on_recovery_exit(2_000, 1_000);
        assert_eq!(cc.cwnd(), 3_000);
        // Below ssthresh: slow start again, 3000 → 4000 → 5000 → 6000 (5000 < 5500 still grows).
        // Above it, byte counting: +1 SMSS only once a whole cwnd (6000 B) is acknowledged.
        for _ in 0..3 {
            cc.on_ack(1_000, Time::ZERO, RTT);
        }
        assert_eq!(cc.cwnd(), 6_000);
        for _ in 0..5 {
            cc.on_ack(1_000, Time::ZERO, RTT);
        }
        assert_eq!(cc.cwnd(), 6_000, "5000 B of 6000 acknowledged: no growth yet");
        cc.on_ack(1_000, Time::ZERO, RTT);
        assert_eq!(cc.cwnd(), 7_000);
        // First RTO with FlightSize 7000: ssthresh = 3500, cwnd = 1 SMSS; a repeated RTO holds
        // ssthresh (RFC 5681 §3.1).
        cc.on_timeout(7_000, true);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (1_000, 3_500));
        cc.on_timeout(1_000, false);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (1_000, 3_500));
    }

    #[test]
    fn cubic_reduces_by_beta_and_grows_along_its_curve_by_hand() {
        let mut cc = CongestionControl::new(CcKind::Cubic, 1000, Some(100), CaIncrease::Bytes);
        // A loss at cwnd = FlightSize = 100 segments (RFC 9438 §4.6, SACK recovery so cwnd =
        // ssthresh): W_max = 100, ssthresh = β·100 = 70 segments = 70 000 B;
        // §4.2: K = ∛(W_max·(1 − β)/C) = ∛(100 · 0.3 / 0.4) = ∛75 = 4.2172 s.
        cc.on_fast_retransmit(100_000, 1_000, true);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (70_000, 70_000));
        let CongestionControl::Cubic(c) = &cc else { unreachable!() };
        assert_eq!(c.w_max(), 100.0);
        assert!((c.k() - 75f64.cbrt()).abs() < 1e-12 && (c.k() - 4.2172).abs() < 1e-4, "K = {}", c.k());
        // Recovery ends with 80 000 B out: min(ssthresh, 80 000 + 1000) = 70 000.
        cc.on_recovery_exit(80_000, 1_000);
        assert_eq!(cc.cwnd(), 70_000);
        // The first ACK of one segment starts the epoch (t = 0) and aims one RTT ahead:
        // W_cubic(0.1) = 0.4·(0.1 − 4.2172)³ + 100 = 72.084 segments (within [70, 105], §4.4);
        // cwnd += (72.084 − 70)/70 per segment acknowledged (§4.4) = 70.0298 segments, above
        // W_est = 70 + 3·0.3/1.7 · 1/70 = 70.0076 (§4.3): 70 029 B.
        cc.on_ack(1_000, Time(10_000 * MS), RTT);
        assert_eq!(cc.cwnd(), 70_029);
        // A second loss below W_max (fast convergence, §4.6): W_max = 70.029·(1 + 0.7)/2 =
        // 59.525 segments; ssthresh = 0.7 · 70.029 segments = 49 020 B.
        cc.on_fast_retransmit(80_000, 1_000, true);
        let CongestionControl::Cubic(c) = &cc else { unreachable!() };
        assert!((c.w_max() - 59.52465).abs() < 1e-9, "W_max = {}", c.w_max());
        assert_eq!(cc.ssthresh(), 49_020);
    }

    #[test]
    fn bbr_window_is_twice_the_bdp_once_startup_has_filled_the_pipe() {
        // An ideal path: a 1 MB/s bottleneck (1000-B segments leave it 1 ms apart, so every
        // delivery-rate sample of a busy bottleneck is 1000 B/ms) and 99 ms of propagation, so
        // an isolated segment's RTT is 1 + 99 = 100 ms: BtlBw = 1e6 B/s, RTprop = 100 ms, BDP =
        // 100 000 B. The sender sends whenever BBR's cwnd and pacing allow; one ACK per segment.
        let mut cc = CongestionControl::new(CcKind::Bbr, 1000, Some(10), CaIncrease::Bytes);
        assert!(cc.is_model_based());
        let (mut nxt, mut una) = (SeqNum(0), SeqNum(0));
        let mut acks: VecDeque<(Time, SeqNum)> = VecDeque::new();
        let (mut now, mut link_free, mut next_send) = (Time::ZERO, Time::ZERO, Time::ZERO);
        let mut modes = Vec::new();
        while now < Time(3_000 * MS) {
            let inflight = (nxt - una) as u64;
            let window_open = inflight + 1000 <= cc.cwnd();
            if window_open && now >= next_send {
                cc.on_send(now, nxt, nxt + 1000, inflight);
                link_free = link_free.max(now) + Duration(MS);
                acks.push_back((link_free + Duration(99 * MS), nxt + 1000));
                nxt = nxt + 1000;
                next_send = now + Duration((1000.0 / cc.pacing_rate().expect("BBR paces") * 1e9) as u64);
                continue;
            }
            let ack_at = acks.front().map_or(Time::MAX, |a| a.0);
            now = if window_open { ack_at.min(next_send) } else { ack_at };
            while acks.front().is_some_and(|a| a.0 <= now) {
                let (_, end) = acks.pop_front().expect("checked");
                let acked = (end - una) as u64;
                una = end;
                // What the socket does for every new ACK outside recovery.
                cc.on_ack(acked, now, RTT);
                cc.after_ack(now, una, (nxt - una) as u64, false);
                let mode = cc.bbr_state().expect("BBR").2;
                if modes.last() != Some(&mode) {
                    modes.push(mode);
                }
            }
        }
        assert_eq!(modes, ["startup", "drain", "probe_bw"], "Startup fills the pipe, Drain empties the queue");
        let (btl_bw_bps, rtprop, mode) = cc.bbr_state().expect("BBR");
        assert_eq!(mode, "probe_bw");
        assert_eq!(rtprop, Some(Duration(100 * MS)));
        assert_eq!(btl_bw_bps, 8e6, "BtlBw: 1000 B per ms of a busy bottleneck, in bit/s");
        // cwnd = cwnd_gain · BtlBw · RTprop + 3·SMSS (Linux's allowance for ACK aggregation)
        // = 2 · 100 000 + 3000 = 203 000 B.
        assert_eq!(cc.cwnd(), 203_000);
    }
}
