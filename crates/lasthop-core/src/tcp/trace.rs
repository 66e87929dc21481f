//! What an endpoint lets a user observe: counters read after the run ([`TcpStats`]) and, when
//! tracing is on for a flow, one [`TraceSample`] of cwnd, ssthresh, both windows, the flight,
//! SRTT and RTO per event (ACK, duplicate ACK, fast retransmit, partial ACK, recovery exit,
//! timeout, persist probe, window advertisement, retransmission). Tracing off costs one branch
//! per event.

use super::socket::TcpSocket;
use crate::{Duration, Time};

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

impl TcpSocket {
    /// Records a [`TraceSample`] per event from now on.
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    /// The samples recorded so far (tracing stops).
    pub fn take_trace(&mut self) -> Vec<TraceSample> {
        self.trace.take().unwrap_or_default()
    }

    /// The samples recorded since the last call, handed over (tracing goes on).
    pub fn drain_trace(&mut self) -> Vec<TraceSample> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Trace samples held in memory.
    pub fn held_trace_samples(&self) -> usize {
        self.trace.as_ref().map_or(0, Vec::len)
    }

    /// One sample of the socket's state after `event`, if tracing is on.
    pub(super) fn record(&mut self, now: Time, event: TraceEvent, rtt_sample: Option<Duration>) {
        if self.trace.is_none() {
            return;
        }
        let s = TraceSample {
            time: now,
            event,
            cwnd: self.cc.cwnd(),
            ssthresh: self.cc.ssthresh(),
            peer_window: self.snd.wnd,
            adv_window: (self.rcv.adv - self.rcv.nxt).max(0) as u64,
            flight: self.flight_size(),
            srtt: self.rtt.srtt(),
            rto: self.rtt.rto(),
            rtt_sample,
        };
        self.trace.as_mut().expect("checked above").push(s);
    }
}
