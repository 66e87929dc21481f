//! BBR v1 (Cardwell et al., draft-cardwell-iccrg-bbr-congestion-control-00, as in Linux's
//! `tcp_bbr.c`), fed by the delivery-rate samples of `delivery_rate.rs`.
//!
//! The model: BtlBw = windowed max of delivery-rate samples over 10 round trips, RTprop =
//! windowed min of RTT samples over 10 s. Pacing rate = pacing_gain · BtlBw; cwnd =
//! cwnd_gain · BtlBw · RTprop + 3 segments (Linux's allowance for ACK aggregation), at least 4.
//! States: Startup (gains 2/ln 2 = 2.885) until BtlBw grew by less than 25 % in three rounds,
//! Drain (pacing 1/2.885) until inflight ≤ BDP, ProbeBW (pacing gain cycle 1.25, 0.75, 1 × 6,
//! each phase one RTprop, cwnd gain 2), ProbeRTT (cwnd 4 segments for 200 ms and a round) when
//! RTprop has not been refreshed for 10 s. Loss: packet conservation during the first round of
//! recovery, the pre-loss cwnd restored when recovery ends, one segment after an RTO (Linux).
//!
//! The socket's loss recovery still runs (it decides what to retransmit) and moves the window by
//! NewReno's rules while it processes an ACK; the model's window then becomes cwnd in one place
//! (`Bbr::adopt_model_window`), at the end of every ACK and after an RTO. A trace sample taken
//! inside an ACK therefore shows the loss-based window and ssthresh, as in the first
//! implementation.
//!
//! Deterministic choice: ProbeBW starts at the third phase (gain 1) where Linux draws a random
//! phase. Left out: BBR v2/v3's loss and ECN response, the ACK-aggregation estimate (extra_acked)
//! and idle restart.

use super::cc::CongestionWindow;
use super::delivery_rate::{RateSample, RateSampler};
use super::newreno::NewReno;
use crate::packet::SeqNum;
use crate::{Duration, Time};
use std::collections::VecDeque;

pub const HIGH_GAIN: f64 = 2.885; // 2 / ln 2
const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const BW_WINDOW_ROUNDS: u64 = 10;
const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
const MIN_CWND_SEGMENTS: u64 = 4;
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
/// Linux paces 1 % below the estimate to keep the bottleneck queue from growing.
const PACING_MARGIN: f64 = 0.99;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// BBR as the socket drives it: the model, its delivery-rate sampler, and the window the
/// socket's loss recovery moves while one ACK is processed.
#[derive(Clone, Debug)]
pub struct Bbr {
    model: BbrModel,
    sampler: RateSampler,
    /// NewReno's rules on BBR's cwnd during an ACK (see the module doc); the model's window
    /// replaces it at the end of every ACK and after an RTO.
    loss_window: NewReno,
}

impl Bbr {
    /// `loss_window` starts with the initial window, which the model starts from as well.
    pub fn new(mss: u32, loss_window: NewReno) -> Self {
        Bbr { model: BbrModel::new(mss as u64, loss_window.cwnd()), sampler: RateSampler::default(), loss_window }
    }

    pub fn window(&self) -> &CongestionWindow {
        &self.loss_window.window
    }

    pub fn window_mut(&mut self) -> &mut CongestionWindow {
        &mut self.loss_window.window
    }

    pub fn model(&self) -> &BbrModel {
        &self.model
    }

    pub fn pacing_rate(&self) -> f64 {
        self.model.pacing_rate()
    }

    /// New data acknowledged outside recovery, before the model sees the ACK.
    pub fn on_ack(&mut self, acked: u64) {
        self.loss_window.on_ack(acked);
    }

    /// A fast retransmit: ssthresh by RFC 5681 eq. 4 (BBR itself keeps none; the model's
    /// packet conservation starts in `after_ack`).
    pub fn on_congestion(&mut self, flight: u64) {
        self.loss_window.on_congestion(flight);
    }

    /// Every ACK once loss recovery has acted: take the rate sample, follow the socket into and
    /// out of recovery (as Linux's BBR compares the stack's state with the one it last saw), run
    /// the model and adopt its window.
    pub fn after_ack(&mut self, now: Time, una: SeqNum, inflight: u64, in_recovery: bool) {
        let sample = self.sampler.on_ack(now, una);
        let newly = self.sampler.take_newly_delivered();
        if in_recovery {
            self.model.on_enter_recovery(inflight);
        } else {
            self.model.on_exit_recovery();
        }
        self.model.on_ack(now, sample, self.sampler.delivered, newly, inflight);
        self.adopt_model_window();
    }

    /// Retransmission timeout: ssthresh as NewReno's, cwnd one segment (Linux's loss state).
    pub fn on_timeout(&mut self, flight: u64, recompute_ssthresh: bool) {
        self.loss_window.on_timeout(flight, recompute_ssthresh);
        self.model.on_timeout();
        self.adopt_model_window();
    }

    fn adopt_model_window(&mut self) {
        self.loss_window.window.cwnd = self.model.cwnd();
    }

    pub fn on_send(&mut self, now: Time, start: SeqNum, end: SeqNum, inflight: u64) {
        self.sampler.on_send(now, start, end, inflight);
    }

    pub fn on_sack(&mut self, now: Time, start: SeqNum, end: SeqNum) {
        self.sampler.on_sack(now, start, end);
    }

    /// Nothing to send with `in_flight` bytes out: app-limited if the window has room.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        if in_flight < self.window().cwnd {
            self.sampler.on_app_limited(in_flight);
        }
    }

    /// (BtlBw in bit/s, RTprop, mode) for the summary.
    pub fn state(&self) -> (f64, Option<Duration>, &'static str) {
        let mode = match self.model.mode() {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        };
        (self.model.btl_bw() * 8.0, self.model.min_rtt(), mode)
    }
}

/// One BtlBw sample: a delivery rate (bytes/s) and the round trip it was taken in.
#[derive(Clone, Copy, Debug)]
struct BwSample {
    round: u64,
    rate: f64,
}

/// BtlBw: the windowed max of delivery-rate samples over the last 10 round trips, kept as a
/// monotonic queue (rates decreasing from the front): a sample that a newer, larger one
/// outlives can never be the max, so each ACK costs O(1) amortized instead of a pass over every
/// sample of 10 rounds. Linux approximates the same max with three samples (`minmax.c`).
#[derive(Clone, Debug, Default)]
struct BtlBwFilter {
    samples: VecDeque<BwSample>,
}

impl BtlBwFilter {
    /// Bytes per second; 0 before the first sample.
    fn get(&self) -> f64 {
        self.samples.front().map_or(0.0, |s| f64::max(0.0, s.rate))
    }

    fn update(&mut self, round: u64, rate: f64) {
        while self.samples.back().is_some_and(|s| s.rate <= rate) {
            self.samples.pop_back();
        }
        self.samples.push_back(BwSample { round, rate });
    }

    fn expire(&mut self, round: u64) {
        while self.samples.front().is_some_and(|s| s.round + BW_WINDOW_ROUNDS <= round) {
            self.samples.pop_front();
        }
    }
}

/// RTprop: the smallest RTT sample, refreshed at least every 10 s (else ProbeRTT).
#[derive(Clone, Copy, Debug, Default)]
struct RtPropFilter {
    min_rtt: Option<Duration>,
    stamp: Time,
}

/// Round trips counted in delivered bytes (a round ends when a segment sent after the previous
/// round ended is delivered).
#[derive(Clone, Copy, Debug, Default)]
struct RoundCounter {
    count: u64,
    next_delivered: u64,
    /// This ACK started a new round.
    start: bool,
}

/// Startup's exit test: BtlBw grew by less than 25 % in three rounds.
#[derive(Clone, Copy, Debug, Default)]
struct FullPipe {
    full_bw: f64,
    count: u32,
    filled: bool,
}

/// Position in ProbeBW's pacing-gain cycle.
#[derive(Clone, Copy, Debug, Default)]
struct GainCycle {
    index: usize,
    stamp: Time,
}

/// ProbeRTT's exit: 200 ms at the minimum window, and a round trip.
#[derive(Clone, Copy, Debug, Default)]
struct ProbeRtt {
    done: Option<Time>,
    round_done: bool,
}

/// BBR's response to loss: packet conservation for a round, the prior window kept to restore.
#[derive(Clone, Copy, Debug, Default)]
struct LossResponse {
    prior_cwnd: u64,
    conservation_until_round: Option<u64>,
    in_recovery: bool,
}

/// The network path model BBR keeps (the draft's BBR.BtlBw and BBR.RTprop), and the round
/// trips that BtlBw's window and the state machine count.
#[derive(Clone, Debug, Default)]
struct PathModel {
    btl_bw: BtlBwFilter,
    rtprop: RtPropFilter,
    round: RoundCounter,
}

/// The state machine: the current state (BBR.state), the gains it sets, and what each state's
/// exit waits for (Startup's full pipe, ProbeBW's gain cycle, ProbeRTT's dwell).
#[derive(Clone, Copy, Debug)]
struct StateMachine {
    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    full_pipe: FullPipe,
    cycle: GainCycle,
    probe_rtt: ProbeRtt,
}

impl StateMachine {
    fn enter(&mut self, mode: Mode, pacing_gain: f64, cwnd_gain: f64) {
        self.mode = mode;
        self.pacing_gain = pacing_gain;
        self.cwnd_gain = cwnd_gain;
    }
}

/// The control parameters the model sets for the sender, in bytes and bytes per second.
#[derive(Clone, Copy, Debug)]
struct ControlParameters {
    pacing_rate: f64,
    cwnd: u64,
}

/// The BBR v1 model: the path model it estimates, the state machine that probes it, the loss
/// response, and the control parameters that follow from them.
#[derive(Clone, Debug)]
pub struct BbrModel {
    mss: u64,
    path: PathModel,
    machine: StateMachine,
    loss: LossResponse,
    control: ControlParameters,
}

impl BbrModel {
    pub fn new(mss: u64, initial_cwnd: u64) -> Self {
        BbrModel {
            mss,
            path: PathModel::default(),
            machine: StateMachine {
                mode: Mode::Startup,
                pacing_gain: HIGH_GAIN,
                cwnd_gain: HIGH_GAIN,
                full_pipe: FullPipe::default(),
                cycle: GainCycle::default(),
                probe_rtt: ProbeRtt::default(),
            },
            loss: LossResponse::default(),
            control: ControlParameters {
                // Linux: high_gain · initial cwnd / 1 ms until an RTT is known.
                pacing_rate: HIGH_GAIN * initial_cwnd as f64 / 1e-3,
                cwnd: initial_cwnd,
            },
        }
    }

    pub fn mode(&self) -> Mode {
        self.machine.mode
    }

    /// Bytes per second.
    pub fn pacing_rate(&self) -> f64 {
        self.control.pacing_rate
    }

    /// Bytes.
    pub fn cwnd(&self) -> u64 {
        self.control.cwnd
    }

    /// BtlBw: the largest sample of the last 10 rounds (bytes/s).
    pub fn btl_bw(&self) -> f64 {
        self.path.btl_bw.get()
    }

    pub fn min_rtt(&self) -> Option<Duration> {
        self.path.rtprop.min_rtt
    }

    pub fn pacing_gain(&self) -> f64 {
        self.machine.pacing_gain
    }

    /// Startup has seen BtlBw stop growing.
    pub fn filled_pipe(&self) -> bool {
        self.machine.full_pipe.filled
    }

    fn bdp(&self, gain: f64) -> Option<u64> {
        let rtt = self.path.rtprop.min_rtt?;
        let bw = self.btl_bw();
        (bw > 0.0).then(|| (gain * bw * rtt.as_secs_f64()) as u64)
    }

    /// An ACK delivered `acked` bytes; `inflight` is what remains in flight.
    pub fn on_ack(&mut self, now: Time, rs: Option<RateSample>, delivered: u64, acked: u64, inflight: u64) {
        if let Some(rs) = rs {
            self.update_round(rs.prior_delivered, delivered);
            if !rs.is_app_limited || rs.delivery_rate >= self.btl_bw() {
                self.path.btl_bw.update(self.path.round.count, rs.delivery_rate);
            }
            self.path.btl_bw.expire(self.path.round.count);
            if self.machine.mode == Mode::ProbeBw {
                self.check_cycle_phase(now, inflight);
            }
            self.check_full_pipe(rs.is_app_limited);
            self.check_drain(now, inflight);
            self.update_min_rtt(now, rs.rtt, inflight, delivered);
        }
        self.set_pacing_rate();
        self.set_cwnd(acked, inflight);
    }

    fn update_round(&mut self, prior_delivered: u64, delivered: u64) {
        self.path.round.start = prior_delivered >= self.path.round.next_delivered;
        if self.path.round.start {
            self.path.round.next_delivered = delivered;
            self.path.round.count += 1;
            if self.loss.conservation_until_round.is_some_and(|r| self.path.round.count > r) {
                self.loss.conservation_until_round = None;
            }
        }
    }

    fn check_full_pipe(&mut self, app_limited: bool) {
        if self.machine.full_pipe.filled || !self.path.round.start || app_limited {
            return;
        }
        let bw = self.btl_bw();
        if bw >= self.machine.full_pipe.full_bw * FULL_BW_GROWTH {
            self.machine.full_pipe.full_bw = bw;
            self.machine.full_pipe.count = 0;
            return;
        }
        self.machine.full_pipe.count += 1;
        if self.machine.full_pipe.count >= FULL_BW_ROUNDS {
            self.machine.full_pipe.filled = true;
        }
    }

    fn check_drain(&mut self, now: Time, inflight: u64) {
        if self.machine.mode == Mode::Startup && self.machine.full_pipe.filled {
            self.machine.enter(Mode::Drain, 1.0 / HIGH_GAIN, HIGH_GAIN);
        }
        if self.machine.mode == Mode::Drain && self.bdp(1.0).is_some_and(|b| inflight <= b) {
            self.enter_probe_bw(now);
        }
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.machine.cycle = GainCycle { index: 2, stamp: now };
        self.machine.enter(Mode::ProbeBw, PACING_GAIN_CYCLE[2], 2.0);
    }

    fn check_cycle_phase(&mut self, now: Time, inflight: u64) {
        let Some(rtt) = self.path.rtprop.min_rtt else { return };
        let elapsed = now.since(self.machine.cycle.stamp) > rtt;
        let g = self.machine.pacing_gain;
        let advance = if g > 1.0 {
            elapsed && self.bdp(g).is_some_and(|b| inflight >= b)
        } else if g < 1.0 {
            elapsed || self.bdp(1.0).is_some_and(|b| inflight <= b)
        } else {
            elapsed
        };
        if advance {
            self.machine.cycle.index = (self.machine.cycle.index + 1) % PACING_GAIN_CYCLE.len();
            self.machine.cycle.stamp = now;
            self.machine.pacing_gain = PACING_GAIN_CYCLE[self.machine.cycle.index];
        }
    }

    fn update_min_rtt(&mut self, now: Time, rtt: Option<Duration>, inflight: u64, delivered: u64) {
        let expired = now.since(self.path.rtprop.stamp) > MIN_RTT_WINDOW;
        if let Some(r) = rtt {
            if self.path.rtprop.min_rtt.is_none_or(|m| r <= m) || expired {
                self.path.rtprop.min_rtt = Some(r);
                self.path.rtprop.stamp = now;
            }
        }
        if expired && self.machine.mode != Mode::ProbeRtt && self.path.rtprop.min_rtt.is_some() {
            self.machine.enter(Mode::ProbeRtt, 1.0, 1.0);
            self.loss.prior_cwnd = self.loss.prior_cwnd.max(self.control.cwnd);
            self.machine.probe_rtt.done = None;
        }
        if self.machine.mode == Mode::ProbeRtt {
            match self.machine.probe_rtt.done {
                None if inflight <= MIN_CWND_SEGMENTS * self.mss => {
                    self.machine.probe_rtt.done = Some(now + PROBE_RTT_TIME);
                    self.machine.probe_rtt.round_done = false;
                    self.path.round.next_delivered = delivered;
                }
                Some(done) => {
                    if self.path.round.start {
                        self.machine.probe_rtt.round_done = true;
                    }
                    if self.machine.probe_rtt.round_done && now >= done {
                        self.path.rtprop.stamp = now;
                        self.control.cwnd = self.control.cwnd.max(self.loss.prior_cwnd);
                        self.loss.prior_cwnd = 0;
                        if self.machine.full_pipe.filled {
                            self.enter_probe_bw(now);
                        } else {
                            self.machine.enter(Mode::Startup, HIGH_GAIN, HIGH_GAIN);
                        }
                    }
                }
                None => {}
            }
        }
    }

    fn set_pacing_rate(&mut self) {
        let bw = self.btl_bw();
        if bw <= 0.0 {
            return;
        }
        let rate = self.machine.pacing_gain * bw * PACING_MARGIN;
        if self.machine.full_pipe.filled || rate > self.control.pacing_rate {
            self.control.pacing_rate = rate;
        }
    }

    fn set_cwnd(&mut self, acked: u64, inflight: u64) {
        let floor = MIN_CWND_SEGMENTS * self.mss;
        if self.loss.conservation_until_round.is_some() {
            self.control.cwnd = self.control.cwnd.max(inflight + acked);
        } else if let Some(target) = self.bdp(self.machine.cwnd_gain).map(|b| b + 3 * self.mss) {
            if self.machine.full_pipe.filled {
                self.control.cwnd = (self.control.cwnd + acked).min(target);
            } else if self.control.cwnd < target {
                self.control.cwnd += acked;
            }
        } else {
            self.control.cwnd += acked;
        }
        self.control.cwnd = self.control.cwnd.max(floor);
        if self.machine.mode == Mode::ProbeRtt {
            self.control.cwnd = self.control.cwnd.min(floor);
        }
    }

    /// Fast retransmit: packet conservation for one round from what is in flight.
    pub fn on_enter_recovery(&mut self, inflight: u64) {
        if !self.loss.in_recovery {
            self.loss.in_recovery = true;
            self.loss.prior_cwnd = self.loss.prior_cwnd.max(self.control.cwnd);
            self.control.cwnd = (inflight + self.mss).max(MIN_CWND_SEGMENTS * self.mss);
            self.loss.conservation_until_round = Some(self.path.round.count + 1);
        }
    }

    /// Recovery ended: the pre-loss window comes back.
    pub fn on_exit_recovery(&mut self) {
        if self.loss.in_recovery {
            self.loss.in_recovery = false;
            self.loss.conservation_until_round = None;
            self.control.cwnd = self.control.cwnd.max(self.loss.prior_cwnd);
            self.loss.prior_cwnd = 0;
        }
    }

    /// Retransmission timeout: one segment (Linux's loss state), grown back by BBR's rules.
    pub fn on_timeout(&mut self) {
        self.loss.prior_cwnd = self.loss.prior_cwnd.max(self.control.cwnd);
        self.loss.in_recovery = false;
        self.loss.conservation_until_round = None;
        self.control.cwnd = self.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Drives BBR with an ideal pipe: `rate` bytes/s, `rtt`, one MSS-sized ACK per segment.
    fn run_pipe(bbr: &mut BbrModel, rs: &mut RateSampler, rate: f64, rtt_ms: u64, duration_ms: u64) -> Vec<(Time, Mode, u64, f64)> {
        let mss = 1000u64;
        let mut seq = SeqNum(0);
        let mut acked = SeqNum(0);
        let mut inflight: VecDeque<(Time, SeqNum)> = VecDeque::new();
        let mut log = Vec::new();
        let mut now = Time(0);
        let mut next_tx = Time(0);
        let mut link_free = Time(0);
        while now.0 < duration_ms * MS {
            // Send while cwnd and pacing allow.
            let bytes_out = (seq - acked) as u64;
            if bytes_out + mss <= bbr.cwnd() && now >= next_tx {
                rs.on_send(now, seq, seq + mss as u32, bytes_out);
                let depart = link_free.max(now) + Duration((mss as f64 / rate * 1e9) as u64);
                link_free = depart;
                inflight.push_back((depart + Duration(rtt_ms * MS), seq + mss as u32));
                seq = seq + mss as u32;
                next_tx = now + Duration((mss as f64 / bbr.pacing_rate() * 1e9) as u64);
                continue;
            }
            // Next event: an ACK or the pacing time.
            let ack_at = inflight.front().map(|a| a.0).unwrap_or(Time::MAX);
            let t = if bytes_out + mss <= bbr.cwnd() { ack_at.min(next_tx) } else { ack_at };
            now = t;
            while inflight.front().is_some_and(|a| a.0 <= now) {
                let (_, end) = inflight.pop_front().unwrap();
                let sample = rs.on_ack(now, end);
                acked = end;
                let out = (seq - acked) as u64;
                bbr.on_ack(now, sample, rs.delivered, mss, out);
                log.push((now, bbr.mode(), bbr.cwnd(), bbr.pacing_gain()));
            }
        }
        log
    }

    #[test]
    fn finds_the_bottleneck_and_round_trip_of_an_ideal_pipe() {
        // 1.25 MB/s (10 Mb/s) with a 40 ms base RTT: BDP = 50 000 B.
        let mut bbr = BbrModel::new(1000, 10_000);
        let mut rs = RateSampler::default();
        let log = run_pipe(&mut bbr, &mut rs, 1.25e6, 40, 3_000);
        let bw = bbr.btl_bw();
        assert!((bw / 1.25e6 - 1.0).abs() < 0.03, "BtlBw {bw:.0} B/s vs 1 250 000");
        let rtt = bbr.min_rtt().unwrap();
        assert!((40 * MS..41 * MS).contains(&rtt.0), "RTprop {rtt:?} vs 40 ms + one serialization");
        // Startup -> Drain -> ProbeBW, with cwnd = 2 · BDP + 3 segments = 103 000 B in ProbeBW.
        assert!(bbr.filled_pipe());
        assert_eq!(bbr.mode(), Mode::ProbeBw);
        let modes: Vec<Mode> = log.iter().map(|l| l.1).collect();
        let first = |m| modes.iter().position(|x| *x == m);
        assert!(first(Mode::Startup) < first(Mode::Drain) && first(Mode::Drain) < first(Mode::ProbeBw));
        let expected = 2.0 * bw * rtt.as_secs_f64() + 3000.0;
        assert!((bbr.cwnd() as f64 / expected - 1.0).abs() < 0.02, "cwnd {} vs {expected:.0}", bbr.cwnd());
    }

    #[test]
    fn probe_bw_cycles_its_pacing_gain() {
        let mut bbr = BbrModel::new(1000, 10_000);
        let mut rs = RateSampler::default();
        let log = run_pipe(&mut bbr, &mut rs, 1.25e6, 40, 6_000);
        // In ProbeBW every gain of the cycle appears, and the phases last about one RTprop
        // each: the eight phases take ~8 × 40 ms, so 6 s see the probing gain ~15 times.
        let probe: Vec<&(Time, Mode, u64, f64)> = log.iter().filter(|l| l.1 == Mode::ProbeBw).collect();
        let gains: std::collections::BTreeSet<u64> = probe.iter().map(|l| (l.3 * 100.0).round() as u64).collect();
        assert_eq!(gains, [75, 100, 125].into_iter().collect());
        let entries = probe.windows(2).filter(|w| w[1].3 > 1.0 && w[0].3 <= 1.0).count();
        assert!((10..=20).contains(&entries), "{entries} probing phases in ~5.7 s of ProbeBW");
    }
}
