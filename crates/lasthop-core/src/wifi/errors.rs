//! Frame errors on a WLAN: none, a fixed frame error rate per station, or log-distance path loss
//! with log-normal shadowing in ns-2's `Propagation/Shadowing` semantics (models.md §3): a fresh
//! Gaussian draw for every frame and every receiver, reception iff the received power reaches
//! the receive threshold of the frame's rate. The MAC ACK gets its own draw.

use crate::rng::{standard_normal, uniform01, SimRng};

/// Speed of light used by ns-2 (m/s).
const C: f64 = 3.0e8;

#[derive(Clone, Debug, PartialEq)]
pub struct Shadowing {
    pub exponent: f64,
    pub sigma_db: f64,
    pub reference_distance_m: f64,
    pub tx_power_dbm: f64,
    pub frequency_hz: f64,
}

impl Shadowing {
    /// Friis free-space power at the reference distance (unit gains, no system loss), dBm.
    pub fn pr0_dbm(&self) -> f64 {
        let lambda = C / self.frequency_hz;
        self.tx_power_dbm + 20.0 * (lambda / (4.0 * std::f64::consts::PI * self.reference_distance_m)).log10()
    }

    /// Mean received power at `d` metres, dBm (ns-2 uses the reference power within d0).
    pub fn mean_rx_dbm(&self, d: f64) -> f64 {
        let d = d.max(self.reference_distance_m);
        self.pr0_dbm() - 10.0 * self.exponent * (d / self.reference_distance_m).log10()
    }

    /// Probability that one frame is received at `d` with threshold `rx_dbm`:
    /// Q((thr − mean) / σ).
    pub fn reception_probability(&self, d: f64, rx_threshold_dbm: f64) -> f64 {
        let z = (rx_threshold_dbm - self.mean_rx_dbm(d)) / self.sigma_db;
        0.5 * erfc(z / std::f64::consts::SQRT_2)
    }
}

/// Complementary error function (Numerical Recipes erfcc, |relative error| < 1.2e-7).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t * (-z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07 + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
        .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// The error process of one WLAN.
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorModel {
    Ideal,
    /// Data frame error rate per station (index = station), applied to frames it sends or
    /// receives (whichever is higher); `ack_fer` applies to ACKs.
    Fixed { fer: Vec<f64>, ack_fer: f64 },
    Shadowing { model: Shadowing, positions: Vec<(f64, f64)>, rx_threshold_dbm: f64, control_rx_threshold_dbm: f64 },
}

impl ErrorModel {
    fn distance(positions: &[(f64, f64)], a: usize, b: usize) -> f64 {
        let (pa, pb) = (positions[a], positions[b]);
        ((pa.0 - pb.0).powi(2) + (pa.1 - pb.1).powi(2)).sqrt()
    }

    /// Does a data frame from `from` reach `to` intact?
    pub fn data_ok(&self, rng: &mut SimRng, from: usize, to: usize) -> bool {
        match self {
            ErrorModel::Ideal => true,
            ErrorModel::Fixed { fer, .. } => {
                let p = fer[from].max(fer[to]);
                p <= 0.0 || uniform01(rng) >= p
            }
            ErrorModel::Shadowing { model, positions, rx_threshold_dbm, .. } => {
                let d = Self::distance(positions, from, to);
                model.mean_rx_dbm(d) + model.sigma_db * standard_normal(rng) >= *rx_threshold_dbm
            }
        }
    }

    /// Does a control frame (ACK, RTS, CTS) from `from` reach `to` intact?
    pub fn control_ok(&self, rng: &mut SimRng, from: usize, to: usize) -> bool {
        match self {
            ErrorModel::Ideal => true,
            ErrorModel::Fixed { ack_fer, .. } => *ack_fer <= 0.0 || uniform01(rng) >= *ack_fer,
            ErrorModel::Shadowing { model, positions, control_rx_threshold_dbm, .. } => {
                let d = Self::distance(positions, from, to);
                model.mean_rx_dbm(d) + model.sigma_db * standard_normal(rng) >= *control_rx_threshold_dbm
            }
        }
    }
}

/// Minimum receiver sensitivity per rate (Mb/s × 10), dBm: 802.11-2016 Table 17-18 (OFDM) and
/// §16.3.8.2 / §17.3.8.2 (DSSS −80 dBm at 1–2 Mb/s, HR/DSSS −76 dBm at 5.5–11 Mb/s).
pub fn default_rx_threshold_dbm(rate_x10: u32) -> f64 {
    match rate_x10 {
        10 | 20 => -80.0,
        55 | 110 => -76.0,
        60 => -82.0,
        90 => -81.0,
        120 => -79.0,
        180 => -77.0,
        240 => -74.0,
        360 => -70.0,
        480 => -66.0,
        _ => -65.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStreams;

    fn ns2_2400() -> Shadowing {
        Shadowing { exponent: 4.0, sigma_db: 7.0, reference_distance_m: 1.0, tx_power_dbm: 24.5, frequency_hz: 2.4e9 }
    }

    #[test]
    fn reference_power_and_reception_match_models_md() {
        // models.md §3.2 worked example: Pr0 = −15.55 dBm; at 10 m with RXThresh −64.37 dBm and
        // σ = 7 dB, P_rx = 0.896 (FER 10.4 %); at 5 m FER = 0.14 %.
        let s = ns2_2400();
        assert!((s.pr0_dbm() - (-15.55)).abs() < 0.01, "{}", s.pr0_dbm());
        assert!((1.0 - s.reception_probability(10.0, -64.37) - 0.1036).abs() < 0.001);
        assert!((1.0 - s.reception_probability(5.0, -64.37) - 0.0014).abs() < 0.0002);
    }

    #[test]
    fn per_frame_draws_reproduce_the_reception_probability() {
        let model = ErrorModel::Shadowing {
            model: ns2_2400(),
            positions: vec![(0.0, 0.0), (10.0, 0.0)],
            rx_threshold_dbm: -64.37,
            control_rx_threshold_dbm: -64.37,
        };
        let mut rng = RngStreams::new(3).stream("t");
        let n = 100_000;
        let lost = (0..n).filter(|_| !model.data_ok(&mut rng, 0, 1)).count() as f64 / n as f64;
        // Binomial sd at p = 0.104: 0.001; allow 4 sd.
        assert!((lost - 0.1036).abs() < 0.004, "{lost}");
    }

    #[test]
    fn erfc_is_accurate() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
    }
}
