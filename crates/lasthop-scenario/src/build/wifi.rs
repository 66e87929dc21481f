//! From a scenario's `[[wlans]]` entry to a configured MAC: the [`Dcf`] of 802.11b/g, the
//! [`Hcf`] of 802.11n/ac/ax.

use lasthop_core::wifi::dcf::{Dcf, DcfConfig};
use lasthop_core::wifi::hcf::{DriverQueue, Hcf, HcfConfig};
use lasthop_core::wifi::hop::WlanMac;
use lasthop_core::wifi::errors::{default_rx_threshold_dbm, ErrorModel, Shadowing};
use lasthop_core::wifi::phy::Phy;
use crate::{band_of, link_snr_db, link_tx_vector, tx_vector_of, Preamble, RateControl, SlotTime, WifiErrors, WifiStandard, Wlan, DEFAULT_MAX_AMPDU};
use lasthop_core::wifi::minstrel::MinstrelHt;
use lasthop_core::wifi::ppdu::TxVector;
use lasthop_core::Time;
use lasthop_core::units::QueueLimit;
use lasthop_core::rng::RngStreams;

fn rate_x10(bps: u64) -> u32 {
    (bps / 100_000) as u32
}

/// The PHY of a WLAN with the defaults of the scenario schema applied.
pub fn phy_of(w: &Wlan) -> Phy {
    match w.standard {
        WifiStandard::B => {
            let data = w.data_rate.map(|r| rate_x10(r.0)).unwrap_or(110);
            let short = w.preamble == Preamble::Short;
            // Long preamble: ACK at 1 Mb/s; short preamble cannot use 1 Mb/s: 2 Mb/s.
            let ctrl = w.control_rate.map(|r| rate_x10(r.0)).unwrap_or(if short { 20 } else { 10 });
            Phy::b(data, ctrl, short)
        }
        WifiStandard::G | WifiStandard::N | WifiStandard::Ac | WifiStandard::Ax => {
            // (802.11n/ac/ax WLANs run the Hcf; their legacy timing is never asked for.)
            let data = w.data_rate.map(|r| rate_x10(r.0)).unwrap_or(540);
            // Highest mandatory OFDM rate (6/12/24 Mb/s) not above the data rate.
            let ctrl = w.control_rate.map(|r| rate_x10(r.0)).unwrap_or_else(|| [240, 120, 60].into_iter().find(|&c| c <= data).unwrap_or(60));
            Phy::g(data, ctrl, w.slot == SlotTime::Short)
        }
    }
}

/// The WLAN's MAC (a validated scenario's).
pub fn build_wlan_mac(w: &Wlan, rng: &RngStreams, trace_queues: bool) -> WlanMac {
    if w.standard.amendment().is_some() {
        WlanMac::Hcf(build_hcf(w, rng, trace_queues))
    } else {
        WlanMac::Dcf(build_dcf(w, rng, trace_queues))
    }
}

/// 802.11n/ac/ax: EDCA with A-MPDUs, each member at its TxVector and SNR.
pub fn build_hcf(w: &Wlan, rng: &RngStreams, trace_queues: bool) -> Hcf {
    let packets = |q: QueueLimit| match q {
        QueueLimit::Packets(n) => n as usize,
        QueueLimit::Bytes(_) => unreachable!("validation refuses byte limits on 802.11n/ac/ax queues"),
    };
    let he = w.standard == WifiStandard::Ax;
    let cfg = HcfConfig {
        band: band_of(w),
        max_ampdu_bytes: w.max_ampdu.map(|b| b.0).unwrap_or(DEFAULT_MAX_AMPDU),
        ba_window: if he { 256 } else { 64 },
        retry_limit: w.retry_short,
        queue_packets: packets(w.queue),
        ap_queue_packets: match (w.ap_queue, w.ap_queueing.unwrap_or_default()) {
            (Some(q), _) => packets(q),
            (None, crate::ApQueueing::Legacy) => packets(w.queue),
            (None, _) => lasthop_core::wifi::txq::MAC80211_FQ_LIMIT,
        },
        control_rate_mbps: 24,
        rts_threshold: w.rts_threshold.map_or(u64::MAX, |b| b.0),
        bar_after_missed_block_ack: w.bar_after_missed_block_ack.unwrap_or(false),
    };
    let members = w.members();
    let linear = lasthop_core::wifi::radio::linear;
    let stations = members.iter().map(|m| (tx_vector_of(w, m).expect("validated"), linear(link_snr_db(w, m, m)))).collect();
    let mut h = Hcf::new(cfg, stations, rng.stream(&format!("wlan/{}/backoff", w.name)), rng.stream(&format!("wlan/{}/errors", w.name)));
    let mut sample_tables = rng.stream(&format!("wlan/{}/minstrel", w.name));
    for (i, from) in members.iter().enumerate() {
        for (j, to) in members.iter().enumerate().filter(|(j, _)| *j != i) {
            let snr = linear(link_snr_db(w, from, to));
            let tx = link_tx_vector(w, from, to).expect("validated");
            match w.rate_control.unwrap_or_default() {
                RateControl::Constant => h.set_link(i, j, tx, snr),
                RateControl::MinstrelHt => {
                    let widest = TxVector { mcs: 0, ..tx };
                    let m = MinstrelHt::new(minstrel_candidates(&widest), MINSTREL_MPDU_BYTES, Time::ZERO, &mut sample_tables);
                    h.set_minstrel(i, j, m, widest, snr);
                }
            }
        }
    }
    if w.ap.is_none() {
        h.no_access_point();
    }
    use lasthop_core::wifi::txq::{ApQueueing as Q, AqlLimits};
    let queueing = match w.ap_queueing.unwrap_or_default() {
        crate::ApQueueing::Legacy => Q::Legacy,
        crate::ApQueueing::FqCodel => Q::FqCodel,
        crate::ApQueueing::Airtime => Q::Airtime,
        crate::ApQueueing::Aql => Q::Aql,
    };
    let capacity = w.ap_driver_queue.map(packets);
    let driver = (queueing == Q::Aql || capacity.is_some()).then(|| DriverQueue { capacity: capacity.unwrap_or(usize::MAX), aql: (queueing == Q::Aql).then(AqlLimits::default) });
    h.set_ap_queueing(queueing, driver);
    if let Some(aqm @ (crate::Aqm::Codel | crate::Aqm::FqCodel)) = w.ap_aqm {
        // Linux's qdisc defaults: fq_codel 10240 packets, codel 1000 (tc-fq_codel(8), tc-codel(8)).
        let limit = QueueLimit::Packets(if aqm == crate::Aqm::FqCodel { lasthop_core::mechanisms::aqm::FQ_CODEL_LIMIT } else { 1000 });
        h.set_ap_qdisc(|| super::build_qdisc(aqm, limit, 1500));
    }
    for (name, &weight) in &w.airtime_weights {
        let i = members.iter().position(|m| m == name).expect("validated");
        h.set_airtime_weight(i as u16, weight);
    }
    if w.aqm == crate::Aqm::FqCodel {
        for i in (w.ap.is_some() as usize)..members.len() {
            h.set_station_fq_codel(i);
        }
    }
    if trace_queues {
        for i in 0..members.len() {
            h.queue_trace(i).enable();
        }
        h.rates.enable();
    }
    h
}

/// The MPDU size Minstrel-HT's durations are computed for: Linux's AVG_PKT_SIZE of 1200 B plus
/// LLC/SNAP, the QoS header and FCS.
const MINSTREL_MPDU_BYTES: u64 = 1200 + lasthop_core::wifi::phy::LLC_SNAP_BYTES + lasthop_core::wifi::hcf::QOS_HEADER_FCS_BYTES;

/// The rates Minstrel-HT chooses among on a link whose widest rate is `widest`: every MCS of
/// every width up to its width, stream count up to its streams and guard interval from the
/// longest down to its (as a station advertises them in its capabilities).
fn minstrel_candidates(widest: &TxVector) -> Vec<TxVector> {
    let a = widest.amendment;
    let mut out = Vec::new();
    for &width in a.widths().iter().filter(|&&x| x <= widest.width) {
        for &gi in a.guard_intervals().iter().filter(|&&g| g >= widest.guard_interval) {
            for streams in 1..=widest.streams {
                out.extend((0..=a.max_mcs()).filter_map(|mcs| TxVector::new(a, mcs, streams, width, gi, widest.band).ok()));
            }
        }
    }
    out
}

pub fn build_dcf(w: &Wlan, rng: &RngStreams, trace_queues: bool) -> Dcf {
    let phy = phy_of(w);
    let members = w.members();
    let errors = match &w.errors {
        WifiErrors::Ideal => ErrorModel::Ideal,
        WifiErrors::Fer { fer, ack_fer, per_station } => ErrorModel::Fixed {
            fer: members.iter().map(|m| per_station.get(*m).copied().unwrap_or(*fer)).collect(),
            ack_fer: *ack_fer,
        },
        WifiErrors::Shadowing {
            exponent,
            sigma_db,
            reference_distance_m,
            tx_power_dbm,
            frequency_hz,
            rx_threshold_dbm,
            control_rx_threshold_dbm,
        } => ErrorModel::Shadowing {
            model: Shadowing {
                exponent: *exponent,
                sigma_db: *sigma_db,
                reference_distance_m: *reference_distance_m,
                tx_power_dbm: *tx_power_dbm,
                frequency_hz: *frequency_hz,
            },
            positions: members.iter().map(|m| w.positions.get(*m).map(|p| (p[0], p[1])).unwrap_or((0.0, 0.0))).collect(),
            rx_threshold_dbm: rx_threshold_dbm.unwrap_or_else(|| default_rx_threshold_dbm(phy.data_rate_x10)),
            control_rx_threshold_dbm: control_rx_threshold_dbm.unwrap_or_else(|| default_rx_threshold_dbm(phy.control_rate_x10)),
        },
    };
    let cfg = DcfConfig {
        phy,
        retry_short: w.retry_short,
        retry_long: w.retry_long,
        rts_threshold: w.rts_threshold.map(|b| b.0).unwrap_or(u64::MAX),
        queue_limit: w.queue,
        llc_snap: w.llc_snap,
    };
    let mut d = Dcf::new(
        cfg,
        members.len(),
        errors,
        rng.stream(&format!("wlan/{}/backoff", w.name)),
        rng.stream(&format!("wlan/{}/errors", w.name)),
    );
    for (name, r) in &w.station_rates {
        if let Some(i) = members.iter().position(|m| m == name) {
            d.set_data_rate(i, rate_x10(r.0));
        }
    }
    let mtu = w.mtu.0 as u32;
    for i in 0..members.len() {
        let ap = i == 0 && w.ap.is_some();
        let limit = if ap { w.ap_queue.unwrap_or(w.queue) } else { w.queue };
        let aqm = if ap { w.ap_aqm.unwrap_or(w.aqm) } else { w.aqm };
        d.set_qdisc(i, super::build_qdisc(aqm, limit, mtu));
    }
    if trace_queues {
        for i in 0..members.len() {
            d.queue_trace(i).enable();
        }
    }
    d
}
