//! One TCP endpoint as a sans-I/O state machine: segments and time go in, segments come out.
//!
//! Read first: RFC 9293 (the protocol), RFC 5681 (congestion control), RFC 6582 (NewReno),
//! RFC 6298 (RTO), RFC 7323 §2 (window scale), RFC 2018 + RFC 6675 (SACK and SACK-based
//! recovery), RFC 3042 (limited transmit), RFC 1122 §4.2.3.2 (delayed ACK), RFC 9293 §3.8.6
//! (persist timer, SWS avoidance, Nagle).
//!
//! Payload bytes are not carried, only sequence space: the application writes and reads byte
//! counts. Left out: timestamps (RFC 7323 §3–4), RST handling beyond the closed state, urgent
//! data, F-RTO, simultaneous open, TIME-WAIT expiry (a run ends
//! first). The zero-window probe follows Linux: an empty segment with an old sequence number,
//! which any receiver must answer with an ACK carrying its current window.

use super::cc::{CcKind, CongestionControl};
use super::newreno::CaIncrease;
use super::ranges::RangeSet;
use super::rtt::RttEstimator;
use lasthop_core::packet::{SackBlock, SeqNum, TcpFlags, TcpHeader, MAX_SACK_BLOCKS};
use lasthop_core::{Duration, Time};

/// Parameters of one endpoint; defaults are the named constants in `scenario.rs`.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size (payload bytes), announced in the SYN.
    pub mss: u32,
    pub sack: bool,
    /// Initial window in segments; `None` applies RFC 5681 §3.1.
    pub initial_cwnd_segments: Option<u32>,
    /// Delayed-ACK timer; `None` acknowledges every segment at once.
    pub delayed_ack: Option<Duration>,
    pub nagle: bool,
    pub send_buffer: u64,
    pub recv_buffer: u64,
    pub window_scale: bool,
    pub rto_initial: Duration,
    pub rto_min: Duration,
    pub rto_max: Duration,
    pub dupack_threshold: u32,
    /// Receiver-side cap on the advertised window in bytes (Koga et al.'s interlayer awnd);
    /// applied only when smaller than the free buffer space.
    pub awnd_cap: Option<u64>,
    /// NewReno, CUBIC (RFC 9438) or BBR v1 (paced, model-based).
    pub congestion_control: CcKind,
    /// A window opened by a read is announced by the delayed-ACK timer instead of at once
    /// (the PDA of paper 000, whose window updates lag its reads by up to ~115 ms).
    pub lazy_window_update: bool,
    /// NewReno's congestion-avoidance increase (byte counting or per ACK).
    pub ca_increase: CaIncrease,
    /// RFC 3042 limited transmit: a new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// Tick of a coarse retransmission clock (RFC 6298's G; every RTO whole ticks).
    pub timer_granularity: Option<Duration>,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            sack: false,
            initial_cwnd_segments: None,
            delayed_ack: Some(Duration::from_millis(200)),
            nagle: true,
            send_buffer: 128 * 1024,
            recv_buffer: 128 * 1024,
            window_scale: true,
            rto_initial: Duration::from_secs(1),
            rto_min: Duration::from_secs(1),
            rto_max: Duration::from_secs(60),
            dupack_threshold: 3,
            awnd_cap: None,
            congestion_control: CcKind::NewReno,
            lazy_window_update: false,
            ca_increase: CaIncrease::Bytes,
            limited_transmit: true,
            timer_granularity: None,
        }
    }
}

/// A segment as the endpoint sees it: header plus payload length.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Segment {
    pub hdr: TcpHeader,
    pub payload_len: u32,
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

/// Counters a user reads after the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub retransmitted_segments: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub persist_probes: u64,
    pub rtt_samples: u64,
    pub dup_acks_received: u64,
    pub zero_windows_advertised: u64,
    /// The smallest non-zero window advertised once synchronized (paper 000's Table 4).
    pub min_open_window_advertised: Option<u64>,
}

/// What caused a trace sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    Ack,
    DupAck,
    FastRetransmit,
    PartialAck,
    RecoveryExit,
    Timeout,
    PersistProbe,
    AdvertisedWindow,
    Retransmit,
}

impl TraceEvent {
    pub fn name(self) -> &'static str {
        match self {
            TraceEvent::Ack => "ack",
            TraceEvent::DupAck => "dup_ack",
            TraceEvent::FastRetransmit => "fast_retransmit",
            TraceEvent::PartialAck => "partial_ack",
            TraceEvent::RecoveryExit => "recovery_exit",
            TraceEvent::Timeout => "timeout",
            TraceEvent::PersistProbe => "persist_probe",
            TraceEvent::AdvertisedWindow => "advertised_window",
            TraceEvent::Retransmit => "retransmit",
        }
    }
}

/// One traced value set; recorded only when tracing is on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceSample {
    pub time: Time,
    pub event: TraceEvent,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Window the peer advertises to us (bytes, unscaled).
    pub peer_window: u64,
    /// Window we advertise (bytes, unscaled).
    pub adv_window: u64,
    pub flight: u64,
    pub srtt: Option<Duration>,
    pub rto: Duration,
    pub rtt_sample: Option<Duration>,
}

#[derive(Debug)]
pub struct TcpSocket {
    cfg: TcpConfig,
    state: State,
    // --- sender ---
    iss: SeqNum,
    snd_una: SeqNum,
    snd_nxt: SeqNum,
    snd_max: SeqNum,
    /// Right end of the data the application has written (one past the last byte).
    snd_buf_end: SeqNum,
    fin_requested: bool,
    fin_sent: bool,
    snd_wnd: u64,
    snd_wl1: SeqNum,
    snd_wl2: SeqNum,
    peer_mss: u32,
    snd_wscale: u8,
    cc: CongestionControl,
    dupacks: u32,
    /// Bytes sent by limited transmit since the duplicate ACKs began (left out of FlightSize
    /// when ssthresh is set, RFC 5681 §3.2 step 2).
    limited_sent: u64,
    in_recovery: bool,
    partial_ack_seen: bool,
    recover: SeqNum,
    high_rxt: SeqNum,
    scoreboard: RangeSet,
    rtt: RttEstimator,
    timed: Option<(SeqNum, Time)>,
    syn_retransmitted: bool,
    /// Timeouts since the cumulative ACK last advanced (Linux's icsk_retransmits).
    rto_retransmits: u32,
    rto_deadline: Option<Time>,
    persist_deadline: Option<Time>,
    persist_backoff: u32,
    /// The earliest time the next segment may leave, when the congestion control paces.
    pace_at: Option<Time>,
    // --- receiver ---
    irs: SeqNum,
    rcv_nxt: SeqNum,
    rcv_wscale: u8,
    rcv_adv: SeqNum,
    rcv_unread: u64,
    reassembly: RangeSet,
    last_ooo: Option<SeqNum>,
    unacked_bytes: u64,
    delack_deadline: Option<Time>,
    fin_received: bool,
    /// Sequence number of the peer's FIN once seen (it may arrive before a hole is filled).
    peer_fin: Option<SeqNum>,
    sack_ok: bool,
    wscale_ok: bool,
    // --- observation ---
    pub stats: TcpStats,
    trace: Option<Vec<TraceSample>>,
}

impl TcpSocket {
    pub fn new(cfg: TcpConfig, iss: SeqNum) -> Self {
        let rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max).with_tick(cfg.timer_granularity);
        let cc = CongestionControl::new(cfg.congestion_control, cfg.mss, cfg.initial_cwnd_segments, cfg.ca_increase);
        let rcv_wscale = if cfg.window_scale { window_shift_for(cfg.recv_buffer) } else { 0 };
        TcpSocket {
            state: State::Closed,
            iss,
            snd_una: iss,
            snd_nxt: iss,
            snd_max: iss,
            snd_buf_end: iss + 1,
            fin_requested: false,
            fin_sent: false,
            snd_wnd: 0,
            snd_wl1: SeqNum(0),
            snd_wl2: iss,
            peer_mss: 536,
            snd_wscale: 0,
            cc,
            dupacks: 0,
            limited_sent: 0,
            in_recovery: false,
            partial_ack_seen: false,
            recover: iss,
            high_rxt: iss,
            scoreboard: RangeSet::default(),
            rtt,
            timed: None,
            syn_retransmitted: false,
            rto_retransmits: 0,
            rto_deadline: None,
            persist_deadline: None,
            persist_backoff: 0,
            pace_at: None,
            irs: SeqNum(0),
            rcv_nxt: SeqNum(0),
            rcv_wscale,
            rcv_adv: SeqNum(0),
            rcv_unread: 0,
            reassembly: RangeSet::default(),
            last_ooo: None,
            unacked_bytes: 0,
            delack_deadline: None,
            fin_received: false,
            peer_fin: None,
            sack_ok: false,
            wscale_ok: false,
            stats: TcpStats::default(),
            trace: None,
            cfg,
        }
    }

    // ------------------------------------------------------------------ observation

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

    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }
    pub fn take_trace(&mut self) -> Vec<TraceSample> {
        self.trace.take().unwrap_or_default()
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
        self.in_recovery
    }
    pub fn peer_window(&self) -> u64 {
        self.snd_wnd
    }
    pub fn snd_una(&self) -> SeqNum {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> SeqNum {
        self.snd_nxt
    }
    pub fn rcv_nxt(&self) -> SeqNum {
        self.rcv_nxt
    }
    pub fn flight_size(&self) -> u64 {
        (self.snd_max - self.snd_una).max(0) as u64
    }
    pub fn rcv_wscale(&self) -> u8 {
        self.rcv_wscale
    }
    /// Bytes the application may still write.
    pub fn send_space(&self) -> u64 {
        let buffered = (self.snd_buf_end - self.snd_una).max(0) as u64;
        self.cfg.send_buffer.saturating_sub(buffered)
    }
    /// In-order bytes waiting for the application.
    pub fn readable(&self) -> u64 {
        self.rcv_unread
    }
    /// True once every written byte and the FIN are acknowledged.
    pub fn all_acked(&self) -> bool {
        self.fin_requested && self.snd_una - self.snd_buf_end == 1
    }
    pub fn fin_received(&self) -> bool {
        self.fin_received
    }

    fn record(&mut self, now: Time, event: TraceEvent, rtt_sample: Option<Duration>) {
        if self.trace.is_none() {
            return;
        }
        let s = TraceSample {
            time: now,
            event,
            cwnd: self.cc.cwnd(),
            ssthresh: self.cc.ssthresh(),
            peer_window: self.snd_wnd,
            adv_window: (self.rcv_adv - self.rcv_nxt).max(0) as u64,
            flight: self.flight_size(),
            srtt: self.rtt.srtt(),
            rto: self.rtt.rto(),
            rtt_sample,
        };
        self.trace.as_mut().expect("checked above").push(s);
    }

    // ------------------------------------------------------------------ timers

    /// The earliest pending timer, if any.
    pub fn poll_deadline(&self) -> Option<Time> {
        let pace = self.pace_at.filter(|_| self.has_unsent());
        [self.rto_deadline, self.persist_deadline, self.delack_deadline, pace].into_iter().flatten().min()
    }

    /// Runs every timer that has expired at `now`.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            self.send_ack(out);
        }
        if self.persist_deadline.is_some_and(|d| d <= now) {
            self.persist_deadline = None;
            self.on_persist_timeout(now, out);
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.rto_deadline = None;
            self.on_retransmission_timeout(now, out);
        }
        if self.pace_at.is_some_and(|d| d <= now) {
            // The pacing gap is over: send what the window allows (a new gap starts with it).
            self.pace_at = None;
            self.output(now, out);
        }
    }

    /// What a model-based congestion control counts as in flight: RFC 6675's pipe with SACK
    /// (SACKed and lost bytes left the network), else the flight less one segment per duplicate
    /// ACK.
    fn delivery_inflight(&self) -> u64 {
        if self.sack_ok {
            self.pipe()
        } else {
            self.flight_size().saturating_sub(self.dupacks as u64 * self.effective_mss())
        }
    }

    fn has_unsent(&self) -> bool {
        self.snd_buf_end > self.snd_nxt || (self.fin_requested && !self.fin_sent_at_or_beyond(self.snd_nxt))
    }

    /// BBR's state for the summary: (BtlBw in bit/s, RTprop, mode).
    pub fn bbr_state(&self) -> Option<(f64, Option<Duration>, &'static str)> {
        self.cc.bbr_state()
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    // ------------------------------------------------------------------ application side

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

    /// The application writes up to `bytes`; returns how many fit in the send buffer.
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) -> u64 {
        if self.fin_requested {
            return 0;
        }
        let n = bytes.min(self.send_space());
        self.snd_buf_end = self.snd_buf_end + n as u32;
        if n > 0 {
            self.output(now, out);
        }
        n
    }

    /// The application closes its sending side: a FIN follows the last written byte.
    pub fn close(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.fin_requested {
            return;
        }
        self.fin_requested = true;
        match self.state {
            State::Listen | State::SynSent | State::Closed => self.state = State::Closed,
            _ => self.output(now, out),
        }
    }

    /// The application reads up to `max` bytes; a window update may follow
    /// (see `window_update_due`; receiver SWS avoidance of RFC 9293 §3.8.6.2.2 applies).
    pub fn read(&mut self, now: Time, max: u64, out: &mut Vec<Segment>) -> u64 {
        let n = max.min(self.rcv_unread);
        self.rcv_unread -= n;
        if n > 0 && self.window_update_due() {
            match self.cfg.delayed_ack {
                Some(t) if self.cfg.lazy_window_update => {
                    if self.delack_deadline.is_none() {
                        self.delack_deadline = Some(now + t);
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

    // ------------------------------------------------------------------ receive window

    fn free_space(&self) -> u64 {
        let free = self.cfg.recv_buffer.saturating_sub(self.rcv_unread);
        self.cfg.awnd_cap.map_or(free, |cap| free.min(cap))
    }

    /// The right window edge we would advertise now: never retreating (RFC 9293 §3.8.6.2.2 /
    /// RFC 7323 §2.4) and moved forward only by at least min(buffer/2, MSS) (receiver SWS).
    fn advertised_edge(&self) -> SeqNum {
        let max_field = if self.wscale_ok { 65_535u64 << self.rcv_wscale } else { 65_535 };
        let free = self.free_space().min(max_field);
        // Round down to the scale granularity so that the advertised value is exact.
        let free = (free >> self.rcv_wscale_in_use()) << self.rcv_wscale_in_use();
        let candidate = self.rcv_nxt + free as u32;
        let step = (self.cfg.recv_buffer / 2).min(self.cfg.mss as u64).max(1);
        if candidate - self.rcv_adv >= step as i64 {
            candidate
        } else {
            self.rcv_adv.max(self.rcv_nxt)
        }
    }

    /// After a read: announce the opened window only if it matters, as Linux does
    /// (`tcp_cleanup_rbuf`): the window still advertised is at most half the buffer and the new
    /// one is at least twice as large. A reader that keeps up never triggers extra ACKs; a
    /// receiver whose window collapsed reopens it at once.
    fn window_update_due(&self) -> bool {
        let remaining = (self.rcv_adv - self.rcv_nxt).max(0) as u64;
        if 2 * remaining > self.cfg.recv_buffer {
            return false;
        }
        let new = (self.advertised_edge() - self.rcv_nxt).max(0) as u64;
        new > 0 && new >= 2 * remaining
    }

    fn rcv_wscale_in_use(&self) -> u8 {
        if self.wscale_ok { self.rcv_wscale } else { 0 }
    }

    // ------------------------------------------------------------------ segment building

    fn base_header(&mut self, seq: SeqNum, flags: u8) -> TcpHeader {
        let mut h = TcpHeader { seq, flags: TcpFlags(flags), ..TcpHeader::default() };
        if self.state != State::SynSent && self.state != State::Closed {
            h.flags.0 |= TcpFlags::ACK;
            h.ack = self.rcv_nxt;
            let edge = self.advertised_edge();
            let wnd = (edge - self.rcv_nxt).max(0) as u64;
            h.window = (wnd >> self.rcv_wscale_in_use()).min(65_535) as u16;
            self.rcv_adv = self.rcv_nxt + ((h.window as u64) << self.rcv_wscale_in_use()) as u32;
            let advertised = (h.window as u64) << self.rcv_wscale_in_use();
            if h.window == 0 {
                self.stats.zero_windows_advertised += 1;
            } else if self.state != State::SynReceived {
                let m = &mut self.stats.min_open_window_advertised;
                *m = Some(m.map_or(advertised, |v| v.min(advertised)));
            }
            if self.sack_ok && !self.reassembly.is_empty() {
                self.fill_sack_blocks(&mut h);
            }
            // Any segment carrying an ACK satisfies a pending delayed ACK.
            self.delack_deadline = None;
            self.unacked_bytes = 0;
        }
        h
    }

    /// RFC 2018 §4: the first block holds the most recently received segment, the others
    /// follow from the highest sequence down.
    fn fill_sack_blocks(&self, h: &mut TcpHeader) {
        let mut n = 0;
        let first = self.last_ooo.and_then(|s| self.reassembly.range_of(s));
        if let Some((a, b)) = first {
            h.sack[0] = SackBlock { start: a, end: b };
            n = 1;
        }
        let ranges: Vec<(SeqNum, SeqNum)> = self.reassembly.iter().collect();
        for &(a, b) in ranges.iter().rev() {
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

    fn emit(&mut self, out: &mut Vec<Segment>, hdr: TcpHeader, payload_len: u32) {
        self.stats.segments_sent += 1;
        out.push(Segment { hdr, payload_len });
    }

    fn send_syn(&mut self, now: Time, with_ack: bool, out: &mut Vec<Segment>) {
        let flags = TcpFlags::SYN | if with_ack { TcpFlags::ACK } else { 0 };
        let mut h = TcpHeader { seq: self.iss, flags: TcpFlags(flags), ..TcpHeader::default() };
        h.mss = Some(self.cfg.mss.min(65_535) as u16);
        // RFC 7323 §2.2: the window in a SYN is never scaled. It is the free space as any later
        // segment computes it (the awnd cap included): the right edge never retreats, so a larger
        // first offer would hold for the whole first 64 KiB.
        h.window = self.free_space().min(65_535) as u16;
        if with_ack {
            h.ack = self.rcv_nxt;
            self.rcv_adv = self.rcv_nxt + h.window as u32;
        }
        // Options are offered in the SYN and echoed in the SYN-ACK only if the peer offered them.
        let offer = |ok: bool| !with_ack || ok;
        if self.cfg.window_scale && offer(self.wscale_ok) {
            h.wscale = Some(self.rcv_wscale);
        }
        if self.cfg.sack && offer(self.sack_ok) {
            h.sack_permitted = true;
        }
        self.snd_nxt = self.iss + 1;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        if self.timed.is_none() && !self.syn_retransmitted {
            self.timed = Some((self.iss, now));
        }
        self.arm_rto(now);
        self.emit(out, h, 0);
    }

    fn send_ack(&mut self, out: &mut Vec<Segment>) {
        let h = self.base_header(self.snd_nxt, 0);
        self.emit(out, h, 0);
    }

    /// Sends `len` bytes of data starting at `seq` (a FIN is attached when it is the end).
    fn send_data(&mut self, now: Time, seq: SeqNum, len: u32, out: &mut Vec<Segment>) {
        let end = seq + len;
        let with_fin = self.fin_requested && end == self.snd_buf_end;
        let mut flags = 0;
        if with_fin {
            flags |= TcpFlags::FIN;
            self.fin_sent = true;
        }
        if len > 0 && end == self.snd_buf_end {
            flags |= TcpFlags::PSH;
        }
        let h = self.base_header(seq, flags);
        let seg_end = end + with_fin as u32;
        let retransmission = seq < self.snd_max;
        if retransmission {
            self.stats.retransmitted_segments += 1;
            self.record(now, TraceEvent::Retransmit, None);
            // Karn: a retransmission invalidates the timed segment it covers.
            if self.timed.is_some_and(|(t, _)| t >= seq && t < seg_end) {
                self.timed = None;
            }
        } else if self.timed.is_none() {
            self.timed = Some((seq, now));
        }
        if len > 0 {
            self.stats.data_segments_sent += 1;
            let inflight = (self.snd_max - self.snd_una).max(0) as u64;
            self.cc.on_send(now, seq, end, inflight);
            if let Some(rate) = self.cc.pacing_rate() {
                // The gap covers the segment with its 40 bytes of IPv4 and TCP headers.
                let gap = Duration(((len as f64 + 40.0) / rate * 1e9) as u64);
                self.pace_at = Some(self.pace_at.map_or(now, |t| t.max(now)) + gap);
            }
        }
        self.snd_max = self.snd_max.max(seg_end);
        if self.rto_deadline.is_none() {
            self.arm_rto(now);
        }
        match self.state {
            State::Established if with_fin => self.state = State::FinWait1,
            State::CloseWait if with_fin => self.state = State::LastAck,
            _ => {}
        }
        self.emit(out, h, len);
    }

    // ------------------------------------------------------------------ transmission

    fn can_send_data(&self) -> bool {
        matches!(self.state, State::Established | State::CloseWait | State::FinWait1 | State::LastAck | State::Closing)
    }

    /// Sends what the windows, Nagle and SWS avoidance allow.
    fn output(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.can_send_data() {
            return;
        }
        if self.in_recovery && self.sack_ok {
            self.sack_recovery_output(now, out);
            return;
        }
        let mss = self.effective_mss();
        loop {
            let unsent = (self.snd_buf_end - self.snd_nxt).max(0) as u64;
            let fin_pending = self.fin_requested && !self.fin_sent_at_or_beyond(self.snd_nxt);
            if unsent == 0 && !fin_pending {
                let in_flight = (self.snd_nxt - self.snd_una).max(0) as u64;
                self.cc.on_app_limited(in_flight);
                break;
            }
            let window = (self.cc.cwnd() + self.limited_transmit_allowance()).min(self.snd_wnd);
            let in_flight = (self.snd_nxt - self.snd_una).max(0) as u64;
            let usable = window.saturating_sub(in_flight);
            if self.snd_wnd == 0 && unsent > 0 {
                if self.snd_una == self.snd_max && self.persist_deadline.is_none() && self.rto_deadline.is_none() {
                    self.arm_persist(now);
                }
                break;
            }
            let len = unsent.min(mss).min(usable) as u32;
            if len == 0 && !(unsent == 0 && fin_pending) {
                break;
            }
            if self.pace_at.is_some_and(|t| t > now) {
                break; // paced: the timer sends it
            }
            if (len as u64) < mss && (len as u64) < unsent {
                // Window-limited runt: wait for more window unless nothing is in flight
                // (sender SWS avoidance, RFC 9293 §3.8.6.2.1).
                if in_flight > 0 {
                    break;
                }
            }
            if self.cfg.nagle && (len as u64) < mss && in_flight > 0 && !(unsent == len as u64 && self.fin_requested) {
                // Nagle (RFC 896): at most one small segment outstanding.
                break;
            }
            let seq = self.snd_nxt;
            self.limited_sent += (in_flight + len as u64).saturating_sub(self.cc.cwnd().max(in_flight));
            self.send_data(now, seq, len, out);
            self.snd_nxt = seq + len + (self.fin_requested && seq + len == self.snd_buf_end) as u32;
            if len == 0 {
                break;
            }
        }
    }

    /// RFC 3042: on each of the first two duplicate ACKs one new segment may go beyond cwnd
    /// (cwnd itself unchanged). Not for BBR, whose window already counts what left the network,
    /// nor while go-back-N resends after a timeout.
    fn limited_transmit_allowance(&self) -> u64 {
        let eligible = self.cfg.limited_transmit
            && !self.cc.is_model_based()
            && !self.in_recovery
            && self.dupacks > 0
            && self.dupacks < self.cfg.dupack_threshold
            && self.snd_nxt == self.snd_max;
        if eligible { self.dupacks.min(2) as u64 * self.effective_mss() } else { 0 }
    }

    fn fin_sent_at_or_beyond(&self, nxt: SeqNum) -> bool {
        self.fin_sent && nxt > self.snd_buf_end
    }

    fn effective_mss(&self) -> u64 {
        self.cfg.mss.min(self.peer_mss) as u64
    }

    fn arm_persist(&mut self, now: Time) {
        let base = self.rtt.rto().0.max(self.cfg.rto_min.0);
        let interval = Duration(base.saturating_mul(1u64 << self.persist_backoff.min(16))).min(self.cfg.rto_max);
        self.persist_deadline = Some(now + interval);
    }

    fn on_persist_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.snd_wnd > 0 || self.snd_buf_end == self.snd_nxt {
            self.persist_backoff = 0;
            return;
        }
        self.stats.persist_probes += 1;
        // Linux-style probe: an empty segment with SEG.SEQ = SND.UNA − 1, which is
        // unacceptable to the receiver and therefore answered with an ACK (RFC 9293 §3.10.7.4).
        let h = self.base_header(self.snd_una + u32::MAX, 0);
        self.emit(out, h, 0);
        self.persist_backoff += 1;
        self.arm_persist(now);
        self.record(now, TraceEvent::PersistProbe, None);
    }

    fn on_retransmission_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.snd_una == self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        match self.state {
            State::SynSent | State::SynReceived => {
                self.syn_retransmitted = true;
                self.timed = None;
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
        let first = !self.in_recovery && self.rto_retransmits == 0;
        self.cc.on_timeout(self.flight_size(), first);
        self.rto_retransmits += 1;
        // RFC 6582 §3.2 step 1 after an RTO: no fast retransmit until the ACK passes `recover`.
        self.recover = self.snd_max;
        self.in_recovery = false;
        self.dupacks = 0;
        self.limited_sent = 0;
        // RFC 2018 §8: after a timeout the SACK scoreboard must be discarded.
        self.scoreboard.clear();
        self.timed = None;
        self.rtt.back_off();
        // Go back N: resend from the first unacknowledged byte.
        self.snd_nxt = self.snd_una;
        // Whatever is unacknowledged, a FIN included, is sent again.
        self.fin_sent = false;
        self.arm_rto(now);
        self.record(now, TraceEvent::Timeout, None);
        self.output(now, out);
    }

    // ------------------------------------------------------------------ input

    /// Processes one arriving segment.
    pub fn on_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        let h = &seg.hdr;
        match self.state {
            State::Closed => {}
            State::Listen => {
                if h.flags.has(TcpFlags::SYN) && !h.flags.has(TcpFlags::ACK) {
                    self.accept_syn_options(h);
                    self.irs = h.seq;
                    self.rcv_nxt = h.seq + 1;
                    self.snd_wnd = h.window as u64;
                    self.state = State::SynReceived;
                    self.send_syn(now, true, out);
                }
            }
            State::SynSent => {
                if h.flags.has(TcpFlags::SYN) && h.flags.has(TcpFlags::ACK) && h.ack == self.iss + 1 {
                    self.accept_syn_options(h);
                    self.irs = h.seq;
                    self.rcv_nxt = h.seq + 1;
                    self.rcv_adv = self.rcv_nxt;
                    self.snd_una = h.ack;
                    self.snd_wnd = h.window as u64; // SYN windows are never scaled (RFC 7323 §2.2).
                    self.snd_wl1 = h.seq;
                    self.snd_wl2 = h.ack;
                    self.take_rtt_sample(now, h.ack);
                    self.rto_deadline = None;
                    self.state = State::Established;
                    if self.syn_retransmitted {
                        self.rtt.after_syn_timeout();
                    }
                    self.send_ack(out);
                    self.output(now, out);
                }
            }
            _ => self.on_synchronized_segment(now, seg, out),
        }
    }

    fn accept_syn_options(&mut self, h: &TcpHeader) {
        self.peer_mss = h.mss.map(u32::from).unwrap_or(536);
        self.wscale_ok = self.cfg.window_scale && h.wscale.is_some();
        if self.wscale_ok {
            // RFC 7323 §2.3: shifts above 14 are treated as 14.
            self.snd_wscale = h.wscale.unwrap_or(0).min(14);
        } else {
            self.rcv_wscale = 0;
        }
        self.sack_ok = self.cfg.sack && h.sack_permitted;
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
        if !self.segment_acceptable(&seg) {
            // RFC 9293 §3.10.7.4: answer an unacceptable segment with an ACK (this is what
            // makes zero-window probes work).
            self.send_ack(out);
            return;
        }
        if h.flags.has(TcpFlags::ACK) {
            if self.state == State::SynReceived {
                if h.ack == self.iss + 1 {
                    self.state = State::Established;
                    self.take_rtt_sample(now, h.ack);
                    self.snd_una = h.ack;
                    self.rto_deadline = None;
                    self.snd_wl1 = h.seq;
                    self.snd_wl2 = h.ack;
                    self.snd_wnd = (h.window as u64) << self.snd_wscale;
                    if self.syn_retransmitted {
                        self.rtt.after_syn_timeout();
                    }
                } else {
                    return;
                }
            }
            self.process_ack(now, seg, out);
        }
        if seg.payload_len > 0 || h.flags.has(TcpFlags::FIN) {
            self.process_data(now, seg, out);
        }
        self.output(now, out);
    }

    /// RFC 9293 §3.10.7.4 acceptability test.
    fn segment_acceptable(&self, seg: &Segment) -> bool {
        let len = seg.seq_len();
        let wnd = (self.rcv_adv - self.rcv_nxt).max(0);
        let seq = seg.hdr.seq;
        let in_window = |s: SeqNum| s - self.rcv_nxt >= 0 && s - self.rcv_nxt < wnd;
        match (len, wnd) {
            (0, 0) => seq == self.rcv_nxt,
            (0, _) => in_window(seq) || seq == self.rcv_nxt,
            (_, 0) => false,
            (l, _) => in_window(seq) || in_window(seq + (l - 1)) || (seq < self.rcv_nxt && seq + l > self.rcv_nxt),
        }
    }

    fn take_rtt_sample(&mut self, now: Time, ack: SeqNum) -> Option<Duration> {
        match self.timed {
            Some((seq, sent)) if ack > seq => {
                self.timed = None;
                let r = now - sent;
                self.rtt.sample(r);
                self.stats.rtt_samples += 1;
                Some(r)
            }
            _ => None,
        }
    }

    fn process_ack(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        let h = seg.hdr;
        if h.ack > self.snd_max {
            // Acknowledges something never sent.
            self.send_ack(out);
            return;
        }
        let old_wnd = self.snd_wnd;
        // RFC 9293 §3.10.7.4: update the send window only from newer segments.
        if self.snd_wl1 < h.seq || (self.snd_wl1 == h.seq && self.snd_wl2 <= h.ack) {
            self.snd_wnd = (h.window as u64) << self.snd_wscale;
            self.snd_wl1 = h.seq;
            self.snd_wl2 = h.ack;
        }
        if self.snd_wnd > 0 {
            self.persist_deadline = None;
            self.persist_backoff = 0;
        }
        if self.sack_ok {
            for b in h.sack_blocks() {
                if b.start > self.snd_una && b.end <= self.snd_max {
                    self.scoreboard.insert(b.start, b.end);
                    self.cc.on_sack(now, b.start, b.end);
                }
            }
        }
        if h.ack > self.snd_una {
            self.on_new_ack(now, h.ack, out);
            self.after_ack(now);
        } else if h.ack == self.snd_una
            && seg.payload_len == 0
            && !h.flags.has(TcpFlags::FIN)
            && self.snd_wnd == old_wnd
            && self.snd_max > self.snd_una
        {
            // RFC 5681 §2 definition of a duplicate ACK.
            self.on_duplicate_ack(now, out);
            self.after_ack(now);
        }
    }

    /// Every ACK, once loss recovery has acted, goes to a model-based congestion control.
    fn after_ack(&mut self, now: Time) {
        if self.cc.is_model_based() {
            let inflight = self.delivery_inflight();
            self.cc.after_ack(now, self.snd_una, inflight, self.in_recovery);
        }
    }

    fn on_new_ack(&mut self, now: Time, ack: SeqNum, out: &mut Vec<Segment>) {
        let acked = (ack - self.snd_una) as u64;
        let sample = self.take_rtt_sample(now, ack);
        self.snd_una = ack;
        self.rto_retransmits = 0;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        self.scoreboard.remove_below(ack);
        if self.fin_requested && ack - self.snd_buf_end == 1 {
            self.on_fin_acked();
        }
        let mut event = TraceEvent::Ack;
        if self.in_recovery {
            if ack >= self.recover {
                // Full ACK (RFC 6582 §3.2 step 3, option 1; RFC 6675 ends the same way). The
                // duplicate-ACK count starts again: a later single duplicate is not a third one.
                self.in_recovery = false;
                self.dupacks = 0;
                self.cc.on_recovery_exit(self.flight_size(), self.effective_mss());
                event = TraceEvent::RecoveryExit;
            } else if !self.sack_ok {
                // Partial ACK: retransmit the next hole, deflate by the amount acknowledged and
                // add back one SMSS if at least one was acknowledged (RFC 6582 §3.2 step 5).
                let mss = self.effective_mss();
                let len = self.segment_len_at(self.snd_una);
                let una = self.snd_una;
                self.send_data(now, una, len, out);
                self.cc.on_partial_ack(acked, mss);
                if !self.partial_ack_seen {
                    // Reset the timer only for the first partial ACK ("impatient", RFC 6582 §4.2).
                    self.partial_ack_seen = true;
                    self.arm_rto(now);
                }
                event = TraceEvent::PartialAck;
            } else {
                event = TraceEvent::PartialAck;
            }
        } else {
            self.dupacks = 0;
            self.limited_sent = 0;
            let rtt = self.rtt.srtt().unwrap_or(self.rtt.rto());
            self.cc.on_ack(acked, now, rtt);
        }
        // RFC 6298 §5.2–5.3: stop the timer when all is acknowledged, else restart it.
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if event != TraceEvent::PartialAck || self.sack_ok {
            self.arm_rto(now);
        }
        self.record(now, event, sample);
    }

    fn on_fin_acked(&mut self) {
        self.state = match self.state {
            State::FinWait1 => State::FinWait2,
            State::Closing => State::TimeWait,
            State::LastAck => State::Closed,
            s => s,
        };
    }

    /// Length of the segment to retransmit at `seq`: one MSS or up to the end of the data.
    fn segment_len_at(&self, seq: SeqNum) -> u32 {
        let remaining = (self.snd_buf_end - seq).max(0) as u64;
        remaining.min(self.effective_mss()) as u32
    }

    fn on_duplicate_ack(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.dupacks += 1;
        self.stats.dup_acks_received += 1;
        if self.in_recovery {
            if !self.sack_ok {
                // Window inflation (RFC 6582 §3.2 step 4).
                self.cc.on_recovery_dup_ack(self.effective_mss());
            }
            self.record(now, TraceEvent::DupAck, None);
            return; // output() follows in the caller
        }
        let lost = self.sack_ok && self.is_lost(self.snd_una);
        if self.dupacks >= self.cfg.dupack_threshold || lost {
            // RFC 6582 §3.2 step 2: only if the cumulative ACK covers more than `recover`.
            if self.snd_una - self.recover > 0 || self.recover == self.iss {
                self.enter_recovery(now, out);
            }
        } else {
            self.record(now, TraceEvent::DupAck, None);
        }
    }

    fn enter_recovery(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mss = self.effective_mss();
        self.stats.fast_retransmits += 1;
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        // RFC 6675 §5 step 4 / RFC 6582 §3.2 step 2: retransmit the first lost segment.
        self.cc.on_fast_retransmit(self.flight_size().saturating_sub(self.limited_sent), mss, self.sack_ok);
        self.limited_sent = 0;
        let una = self.snd_una;
        let len = self.segment_len_at(una);
        self.send_data(now, una, len, out);
        if self.sack_ok {
            self.high_rxt = una + len;
        }
        self.timed = None;
        self.record(now, TraceEvent::FastRetransmit, None);
    }

    // ------------------------------------------------------------------ SACK recovery (RFC 6675)

    /// IsLost(seq): more than (DupThresh − 1)·SMSS bytes above `seq` have been SACKed.
    fn is_lost(&self, seq: SeqNum) -> bool {
        let thresh = (self.cfg.dupack_threshold as u64 - 1) * self.effective_mss();
        self.scoreboard.bytes_above(seq + 1) > thresh
    }

    /// SetPipe(): bytes believed in the network.
    fn pipe(&self) -> u64 {
        let mss = self.effective_mss();
        let mut pipe = 0;
        let mut s = self.snd_una;
        while let Some((a, b)) = self.scoreboard.first_gap(s, self.snd_max) {
            let mut x = a;
            while x < b {
                let len = ((b - x) as u64).min(mss);
                if !self.is_lost(x) {
                    pipe += len;
                }
                if x < self.high_rxt {
                    pipe += len;
                }
                x = x + len as u32;
            }
            s = b;
        }
        pipe
    }

    /// NextSeg() rules 1 and 3 (rule 2, new data, is taken in between; no rescue retransmission).
    fn sack_recovery_output(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mss = self.effective_mss();
        let highest_sacked = self.scoreboard.highest().unwrap_or(self.snd_una);
        let mut pipe = self.pipe();
        while self.cc.cwnd().saturating_sub(pipe) >= mss {
            let from = self.high_rxt.max(self.snd_una);
            let hole = self.scoreboard.first_gap(from, highest_sacked);
            let seq_len = match hole {
                Some((a, b)) if self.is_lost(a) => Some((a, ((b - a) as u64).min(mss) as u32)),
                _ => None,
            };
            if let Some((seq, len)) = seq_len {
                self.send_data(now, seq, len, out);
                self.high_rxt = seq + len;
                pipe += len as u64;
                continue;
            }
            // Rule 2: new data within the peer's window.
            let unsent = (self.snd_buf_end - self.snd_max).max(0) as u64;
            let wnd_room = (self.snd_una + self.snd_wnd as u32 - self.snd_max).max(0) as u64;
            if unsent > 0 && wnd_room > 0 {
                let len = unsent.min(mss).min(wnd_room) as u32;
                let seq = self.snd_max;
                self.send_data(now, seq, len, out);
                self.snd_nxt = self.snd_max;
                pipe += len as u64;
                continue;
            }
            // Rule 3: any unsacked hole below the highest SACKed byte.
            if let Some((a, b)) = hole {
                let len = ((b - a) as u64).min(mss) as u32;
                self.send_data(now, a, len, out);
                self.high_rxt = a + len;
                pipe += len as u64;
                continue;
            }
            break;
        }
    }

    // ------------------------------------------------------------------ data reception

    fn process_data(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        let h = seg.hdr;
        let mut start = h.seq;
        let mut end = h.seq + seg.payload_len;
        // Trim what was already received and what lies beyond the advertised window.
        if start < self.rcv_nxt {
            start = self.rcv_nxt;
        }
        let right = self.rcv_adv.max(self.rcv_nxt);
        if end > right {
            end = right;
        }
        if h.flags.has(TcpFlags::FIN) && self.peer_fin.is_none() {
            self.peer_fin = Some(h.seq + seg.payload_len);
        }
        let mut immediate = false;
        if start == self.rcv_nxt {
            let had_holes = !self.reassembly.is_empty();
            let len = (end - start).max(0) as u64;
            self.rcv_nxt = end;
            self.rcv_unread += len;
            while let Some(e) = self.reassembly.pop_contiguous(self.rcv_nxt) {
                self.rcv_unread += (e - self.rcv_nxt).max(0) as u64;
                self.rcv_nxt = e;
            }
            // RFC 5681 §4.2: ACK at once when a segment fills (part of) a hole.
            immediate |= had_holes;
            self.unacked_bytes += len;
            if !self.fin_received && self.peer_fin == Some(self.rcv_nxt) {
                self.on_fin_received();
                immediate = true;
            }
        } else if start > self.rcv_nxt && end > start {
            // Out of order: keep it and send a duplicate ACK at once (RFC 5681 §4.2).
            self.reassembly.insert(start, end);
            self.last_ooo = Some(start);
            immediate = true;
        } else {
            immediate = true; // an old duplicate
        }
        // "Full-sized" is what the peer may send: min(its MSS, the MSS we announced).
        let full = 2 * self.effective_mss();
        match self.cfg.delayed_ack {
            Some(t) if !immediate && self.unacked_bytes < full => {
                if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + t);
                }
            }
            _ => {
                self.send_ack(out);
                self.record(now, TraceEvent::AdvertisedWindow, None);
            }
        }
    }

    fn on_fin_received(&mut self) {
        self.rcv_nxt = self.rcv_nxt + 1;
        self.fin_received = true;
        self.state = match self.state {
            State::Established | State::SynReceived => State::CloseWait,
            State::FinWait1 => State::Closing,
            State::FinWait2 => State::TimeWait,
            s => s,
        };
    }
}

/// The smallest window-scale shift that lets `buffer` fit in the 16-bit field (RFC 7323 §2.3, ≤ 14).
pub fn window_shift_for(buffer: u64) -> u8 {
    let mut s = 0;
    while (buffer >> s) > 65_535 && s < 14 {
        s += 1;
    }
    s
}
