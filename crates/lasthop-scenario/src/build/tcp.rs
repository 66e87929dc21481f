//! A TCP endpoint's configuration (`lasthop_core::tcp::TcpConfig`) from a flow's `tcp`
//! parameters: the one conversion the simulator and the emulator's modelled flows share.

use crate::{CcVariant, TcpParams};
use lasthop_core::tcp::TcpConfig;

/// A TCP endpoint's configuration from the scenario's `tcp` parameters and the path MTU (the
/// MSS defaults to it less 40 bytes of headers).
pub fn tcp_config(p: &TcpParams, path_mtu: u64) -> TcpConfig {
    TcpConfig {
        mss: p.mss.map(|m| m.0).unwrap_or(path_mtu - 40) as u32,
        sack: p.sack,
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
}
