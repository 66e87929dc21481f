//! From scenario sections to the world-neutral runtime structures of `lasthop-core`: a queue
//! discipline, a WLAN's DCF ([`wifi`]), a W-CDMA direction's RLC entity ([`cellular`]), a flow's
//! traffic ([`traffic`]: the same conversion serves the simulator and the real-socket
//! generator), and the whole network — hops, routes, interface processors ([`network`]: the
//! simulator and the emulator both start from it), and a TCP endpoint's configuration
//! ([`tcp`]). The runtime never consults the schema again.

pub mod cellular;
pub mod network;
pub mod tcp;
pub mod traffic;
pub mod wifi;

use crate::Aqm;
use lasthop_core::mechanisms::aqm::{CoDelParams, Qdisc, FQ_CODEL_LIMIT};
use lasthop_core::mechanisms::pie::PieParams;
use lasthop_core::rng::RngStreams;
use lasthop_core::QueueLimit;

/// The queue discipline a link or WLAN station asks for, holding at most `limit` (FQ-CoDel
/// counts packets: a byte limit gives it its default packet limit).
pub fn build_qdisc<T: Copy + Default>(aqm: Aqm, limit: QueueLimit, mtu: u32) -> Qdisc<T> {
    build_marking_qdisc(aqm, limit, mtu, false)
}

/// [`build_qdisc`], its CoDel marking ECN-capable packets instead of dropping them when `ecn`.
pub fn build_marking_qdisc<T: Copy + Default>(aqm: Aqm, limit: QueueLimit, mtu: u32, ecn: bool) -> Qdisc<T> {
    let params = CoDelParams { mtu, ecn, ..CoDelParams::default() };
    match aqm {
        // Validation keeps PIE to links, which build it with their own stream (network.rs);
        // this fixed stream is for a caller that did not validate.
        Aqm::Pie => Qdisc::pie(limit, PieParams { mtu, ecn, ..PieParams::default() }, RngStreams::new(0).stream("pie")),
        Aqm::Droptail => Qdisc::drop_tail(limit),
        Aqm::Codel => Qdisc::codel(limit, params),
        Aqm::FqCodel => Qdisc::fq_codel(
            match limit {
                QueueLimit::Packets(n) => n,
                QueueLimit::Bytes(_) => FQ_CODEL_LIMIT,
            },
            params,
        ),
    }
}
