//! From a scenario's `[[wcdma]]` entry to the RLC entity of one direction.

use lasthop_core::cellular::channel::{TtiErrors, RAYLEIGH_5HZ_P_BG, RAYLEIGH_5HZ_P_GB};
use lasthop_core::cellular::rlc::{RlcAm, RlcConfig};
use crate::{Wcdma, WcdmaErrors, WcdmaUplink};
use lasthop_core::rng::RngStreams;

pub fn build_rlc(c: &Wcdma, down: bool, rng: &RngStreams) -> RlcAm {
    let dir = if down { "down" } else { "up" };
    let stream = rng.stream(&format!("wcdma/{}/{dir}/errors", c.name));
    let errors = match c.errors {
        WcdmaErrors::Ideal => TtiErrors::Ideal,
        WcdmaErrors::Fer { fer } => TtiErrors::Fixed { fer, rng: stream },
        WcdmaErrors::Rayleigh => TtiErrors::GilbertElliott { p_gb: RAYLEIGH_5HZ_P_GB, p_bg: RAYLEIGH_5HZ_P_BG, bad: false, rng: stream },
        WcdmaErrors::Gilbert { p_good_to_bad, p_bad_to_good } => {
            TtiErrors::GilbertElliott { p_gb: p_good_to_bad, p_bg: p_bad_to_good, bad: false, rng: stream }
        }
    };
    let cfg = RlcConfig {
        rate_bps: if down { c.rate.0 } else { c.uplink_rate.unwrap_or(c.rate).0 },
        tti: c.tti,
        delay: c.delay,
        // The downlink's status goes up in an uplink TTI, or, on a plain uplink, takes the link
        // delay alone; the uplink's status rides a downlink TTI.
        status_delay: if down && c.uplink == WcdmaUplink::Link { c.delay } else { c.tti + c.delay },
        pdu_payload: c.pdu_payload.0 as u32,
        buffer_sdus: c.buffer as usize,
        max_retx_tcp: c.max_retx_tcp,
        max_retx_udp: c.max_retx_udp,
        unlimited: c.unlimited_retx,
        waiting_timeout: c.waiting_timeout,
        priority: c.priority_scheduling,
        deliver_late: c.deliver_late,
    };
    RlcAm::new(cfg, errors)
}
