//! A TCP endpoint's configuration (`lasthop_core::tcp::TcpConfig`) from a flow's `tcp`
//! parameters: the one conversion the simulator and the emulator's modelled flows share; and
//! paper 004's receiver-side window as it follows the W-CDMA downlink ([`ReceiverWindow`]),
//! which the simulator's receiving TCP and the emulator's ACK rewriting both keep.

use crate::{CcVariant, ReceiverAwndParams, TcpParams, DEFAULT_AWND_RETRANSMISSIONS};
use lasthop_core::cellular::hop::RlcHop;
use lasthop_core::tcp::TcpConfig;
use lasthop_core::{Duration, Time};

/// A TCP endpoint's configuration from the scenario's `tcp` parameters and the path MTU (the
/// MSS defaults to it less 40 bytes of headers).
pub fn tcp_config(p: &TcpParams, path_mtu: u64) -> TcpConfig {
    TcpConfig {
        mss: p.mss.map(|m| m.0).unwrap_or(path_mtu - 40) as u32,
        sack: p.sack,
        ecn: p.ecn,
        initial_cwnd_segments: p.initial_cwnd,
        delayed_ack: p.delayed_ack_enabled.then_some(p.delayed_ack),
        nagle: p.nagle,
        send_buffer: p.send_buffer.0,
        recv_buffer: p.receive_buffer.0,
        window_scale: p.window_scale,
        rto_initial: p.rto_initial,
        rto_min: p.rto_min,
        rto_max: p.rto_max,
        dupack_threshold: p.dupack_threshold,
        awnd_cap: None,
        congestion_control: match p.variant {
            CcVariant::Newreno => lasthop_core::tcp::CcKind::NewReno,
            CcVariant::Cubic => lasthop_core::tcp::CcKind::Cubic,
            CcVariant::Bbr => lasthop_core::tcp::CcKind::Bbr,
        },
        lazy_window_update: p.window_update == crate::WindowUpdate::Delayed,
        ca_increase: match p.ca_increase {
            crate::CaIncrease::Bytes => lasthop_core::tcp::newreno::CaIncrease::Bytes,
            crate::CaIncrease::PerAck => lasthop_core::tcp::newreno::CaIncrease::PerAck,
        },
        limited_transmit: p.limited_transmit,
        timer_granularity: p.timer_granularity,
        abc_limit: p.abc_limit,
        slow_but_steady: p.partial_ack_timer == crate::PartialAckTimer::SlowButSteady,
        exit_to_ssthresh: p.recovery_exit == crate::RecoveryExit::Ssthresh,
        linux_push: p.push == crate::PushRule::Linux,
        linux_window_edge: p.window_edge == crate::WindowEdge::Linux,
        prr_recovery: p.recovery_window == crate::RecoveryWindow::Prr,
        linux_receive_window: p.receive_window == crate::ReceiveWindow::Linux,
    }
}

/// How far back a live receiver window counts the downlink's retransmissions.
pub const AWND_OBSERVATION: Duration = Duration::from_secs(1);

/// Eq. 1's retransmission count as a receiver behind RLC downlink `rlc` observes it at `now`:
/// the most retransmissions a PDU needed in the last [`AWND_OBSERVATION`], at least 1.
pub fn observed_retransmissions(rlc: &mut RlcHop, now: Time) -> u32 {
    rlc.rlc.observed_retransmissions(now, AWND_OBSERVATION).max(1)
}

/// Paper 004's receiver-side advertised window of one receiver (Koga et al., eq. 1-3): eq. 3's
/// window from eq. 1's retransmission count, given in the scenario, or — live, when neither a
/// count nor a window is given — observed on the W-CDMA downlink (interlayer collaboration).
#[derive(Clone, Debug)]
pub struct ReceiverWindow {
    pub params: ReceiverAwndParams,
    /// The segment size eq. 3's window is counted in, bytes (the flow's MSS).
    pub mss: u32,
    /// Eq. 1's retransmission count in force.
    pub retransmissions: u32,
    /// The most retransmissions observed (`receiver_awnd_max_retransmissions` of the report).
    pub max_retransmissions: u32,
}

impl ReceiverWindow {
    pub fn new(params: ReceiverAwndParams, mss: u32) -> ReceiverWindow {
        let retransmissions = params.retransmissions.unwrap_or(DEFAULT_AWND_RETRANSMISSIONS);
        ReceiverWindow { params, mss, retransmissions, max_retransmissions: 0 }
    }

    /// Live: neither a retransmission count nor a window in segments is given.
    pub fn live(&self) -> bool {
        self.params.retransmissions.is_none() && self.params.segments.is_none()
    }

    /// The window in force, bytes (eq. 3 in whole segments).
    pub fn cap_bytes(&self) -> u64 {
        self.params.cap_bytes(self.retransmissions, self.mss)
    }

    /// The downlink needed at most `observed` retransmissions lately: counted toward the most
    /// observed, and in force if the window is live. True when the window changed.
    pub fn observe(&mut self, observed: u32) -> bool {
        self.max_retransmissions = self.max_retransmissions.max(observed);
        if self.live() && observed != self.retransmissions {
            self.retransmissions = observed;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_that_sets_nothing_gets_the_endpoints_defaults() {
        // One set of defaults from scenario to endpoint: the scenario's `tcp` table left empty
        // (every field at its serde default) on a 1 500 B path gives exactly the endpoint's own
        // defaults, which the core's TCP tests run with (MSS 1 460 = 1 500 − 40).
        assert_eq!(tcp_config(&TcpParams::default(), 1500), TcpConfig::default());
    }

    fn params(text: &str) -> ReceiverAwndParams {
        toml::from_str(text).expect("valid receiver_awnd")
    }

    #[test]
    fn a_live_window_follows_the_retransmissions_and_remembers_the_most() {
        // 384 kb/s link, 64 kb/s UDP, 30 ms: eq. 3 over 1 460 B segments, 5.20 segments at the
        // default count of 2 (rounded: 5 = 7 300 B) and 2 × 5.20 = 10.40 (10 = 14 600 B) at 4:
        // eq. 1 scales with the count (hand count; the emulator's observe.rs test has the same).
        // An observation equal to the count in force changes nothing but is counted as observed
        // (the report's most observed is 2, not 0).
        let mut w = ReceiverWindow::new(params(r#"link_rate = "384kbps"
udp_rate = "64kbps"
propagation = "30ms""#), 1460);
        assert!(w.live() && w.retransmissions == DEFAULT_AWND_RETRANSMISSIONS);
        assert_eq!(w.cap_bytes(), 7_300);
        assert!(!w.observe(2) && w.max_retransmissions == 2 && w.cap_bytes() == 7_300);
        assert!(w.observe(4) && w.retransmissions == 4 && w.cap_bytes() == 14_600);
        assert!(w.observe(1) && w.max_retransmissions == 4 && w.cap_bytes() < 7_300);
        // A window of 4 segments is not live: observations are counted, the window stays.
        let mut fixed = ReceiverWindow::new(params(r#"link_rate = "384kbps"
udp_rate = "64kbps"
propagation = "30ms"
segments = 4"#), 1460);
        assert!(!fixed.live() && !fixed.observe(5) && fixed.cap_bytes() == 4 * 1460 && fixed.max_retransmissions == 5);
    }
}
