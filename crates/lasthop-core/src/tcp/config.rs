//! The parameters of one TCP endpoint. The simulator resolves them from the scenario once, when
//! it builds the endpoints (`sim.rs`); the socket never reads the scenario.

use super::cc::CcKind;
use super::newreno::CaIncrease;
use crate::Duration;

/// Parameters of one endpoint; defaults are the named constants in `scenario.rs`.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size (payload bytes), announced in the SYN.
    pub mss: u32,
    pub sack: bool,
    /// ECN (RFC 3168): asked for in the SYN, used when the peer agrees (`ecn.rs`).
    pub ecn: bool,
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
    /// RFC 3465 §2.3's L: the most one ACK grows cwnd in slow start, segments.
    pub abc_limit: u32,
    /// Every partial ACK of NewReno's recovery restarts the retransmission timer (RFC 6582
    /// §4.2's slow-but-steady variant; false: only the first, the impatient variant).
    pub slow_but_steady: bool,
    /// A full ACK ends recovery with cwnd = ssthresh (RFC 6582 §3.2 step 3 option 2, Linux);
    /// false: option 1, min(ssthresh, max(FlightSize, SMSS) + SMSS).
    pub exit_to_ssthresh: bool,
    /// Linux's PSH: the sender marks the end of every application write (`tcp_push` at the end
    /// of `sendmsg` and at each wait for send-buffer space), and the receiver acknowledges a
    /// full-sized segment carrying PSH as soon as its application has read everything
    /// (`tcp_measure_rcv_mss`' ICSK_ACK_PUSHED, Linux 5.13). False: PSH only where the written
    /// data ends, and the receiver ignores it (RFC 9293 §3.9.1.2 leaves it to the receiver).
    pub linux_push: bool,
    /// Linux at the window's edge: when the window ends inside a segment, the part that fits
    /// goes out behind a full segment unless a segment shorter than the MSS is unacknowledged
    /// (`tcp_mss_split_point` and Minshall's Nagle). False: the runt waits for a full segment's
    /// room while data is in flight (sender SWS avoidance, RFC 9293 §3.8.6.2.1).
    pub linux_window_edge: bool,
    /// Without SACK, cwnd in fast recovery follows RFC 6937's Proportional Rate Reduction as
    /// Linux runs it (`tcp_cwnd_reduction`, duplicate ACKs counted as delivered segments) instead
    /// of RFC 6582's inflation and deflation.
    pub prr_recovery: bool,
    /// Linux's receive window growth: the advertised window starts at 64 KB (65 535 B rounded
    /// down to whole MSS) and grows by two MSS per data segment up to the buffer
    /// (`rcv_ssthresh`, `tcp_grow_window`), each growth acknowledged at once — so a Linux
    /// receiver acknowledges every segment until its window has grown. False: the whole buffer
    /// from the start, ACKs by RFC 1122.
    pub linux_receive_window: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            sack: false,
            ecn: false,
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
            abc_limit: 1,
            slow_but_steady: false,
            exit_to_ssthresh: false,
            linux_push: false,
            linux_window_edge: false,
            prr_recovery: false,
            linux_receive_window: false,
        }
    }
}
