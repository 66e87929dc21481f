//! The SNR a station's frames arrive with: transmit power, log-distance path loss (with the
//! log-normal shadowing of [`super::errors`] drawn by the caller where wanted) and the thermal
//! noise of the channel width raised by the receiver's noise figure,
//!
//!   SNR = P_tx − PL(d) − (−174 dBm/Hz + 10 log10(W) + NF),
//!   PL(d) = PL(1 m) + 10 n log10(d / 1 m),   PL(1 m) = 20 log10(4π · 1 m / λ)   (Friis),
//!
//! the model ns-3's `LogDistancePropagationLossModel` and `WifiPhy` noise figure give (its
//! defaults: n = 3, a 7 dB noise figure). The centre frequency is the band's usual first
//! channel: 2412 MHz (channel 1), 5180 MHz (36), 5955 MHz (6 GHz channel 1).

use super::ppdu::Band;

/// Thermal noise density at 290 K, dBm/Hz (kT).
pub const THERMAL_NOISE_DBM_PER_HZ: f64 = -173.975;
const SPEED_OF_LIGHT: f64 = 299_792_458.0;

/// A radio link's budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkBudget {
    pub tx_power_dbm: f64,
    /// Path loss exponent n (2 in free space, ~3 indoors).
    pub exponent: f64,
    pub noise_figure_db: f64,
    pub band: Band,
}

impl Default for LinkBudget {
    /// 20 dBm (a home AP's typical power), n = 3 and NF = 7 dB (ns-3's defaults), 5 GHz.
    fn default() -> Self {
        LinkBudget { tx_power_dbm: 20.0, exponent: 3.0, noise_figure_db: 7.0, band: Band::Ghz5 }
    }
}

impl Band {
    /// The centre frequency of the band's first 20 MHz channel, Hz.
    pub fn centre_frequency_hz(self) -> f64 {
        match self {
            Band::Ghz2_4 => 2.412e9,
            Band::Ghz5 => 5.180e9,
            Band::Ghz6 => 5.955e9,
        }
    }
}

impl LinkBudget {
    /// Free-space loss at 1 m for the band's frequency, dB.
    pub fn reference_loss_db(&self) -> f64 {
        let wavelength = SPEED_OF_LIGHT / self.band.centre_frequency_hz();
        20.0 * (4.0 * std::f64::consts::PI / wavelength).log10()
    }

    /// Path loss at `distance_m` (at least 1 m: nearer is the reference loss), dB.
    pub fn path_loss_db(&self, distance_m: f64) -> f64 {
        self.reference_loss_db() + 10.0 * self.exponent * distance_m.max(1.0).log10()
    }

    /// The noise floor of a `width_mhz` channel, dBm.
    pub fn noise_dbm(&self, width_mhz: u16) -> f64 {
        THERMAL_NOISE_DBM_PER_HZ + 10.0 * (width_mhz as f64 * 1e6).log10() + self.noise_figure_db
    }

    /// The SNR of a `width_mhz` transmission over `distance_m`, dB (`shadowing_db` added: a
    /// draw of the log-normal shadowing, or 0).
    pub fn snr_db(&self, distance_m: f64, width_mhz: u16, shadowing_db: f64) -> f64 {
        self.tx_power_dbm - self.path_loss_db(distance_m) + shadowing_db - self.noise_dbm(width_mhz)
    }
}

/// dB to a linear ratio.
pub fn linear(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_loss_and_noise_floor_are_the_textbook_values() {
        // Friis at 1 m: 40.10 dB at 2.412 GHz, 46.73 dB at 5.18 GHz (20 log10(4π f / c));
        // ns-3's LogDistance default is 46.6777 dB, Friis at 5.15 GHz.
        let at = |band| LinkBudget { band, ..LinkBudget::default() }.reference_loss_db();
        assert!((at(Band::Ghz2_4) - 40.10).abs() < 0.01, "{}", at(Band::Ghz2_4));
        assert!((at(Band::Ghz5) - 46.73).abs() < 0.01, "{}", at(Band::Ghz5));
        // kTB + NF: 20 MHz with 7 dB is -173.98 + 73.01 + 7 = -93.97 dBm; each doubling of the
        // width adds 3.01 dB.
        let b = LinkBudget::default();
        assert!((b.noise_dbm(20) - (-93.966)).abs() < 0.01, "{}", b.noise_dbm(20));
        assert!((b.noise_dbm(40) - b.noise_dbm(20) - 3.0103).abs() < 1e-3);
    }

    #[test]
    fn snr_falls_by_ten_n_db_per_decade_of_distance() {
        // 20 dBm at 10 m, n = 3, 5 GHz, 20 MHz: 20 - (46.73 + 30) - (-93.97) = 37.24 dB; at
        // 100 m 30 dB less.
        let b = LinkBudget::default();
        assert!((b.snr_db(10.0, 20, 0.0) - 37.24).abs() < 0.01, "{}", b.snr_db(10.0, 20, 0.0));
        assert!((b.snr_db(10.0, 20, 0.0) - b.snr_db(100.0, 20, 0.0) - 30.0).abs() < 1e-9);
        assert_eq!(b.snr_db(0.2, 20, 0.0), b.snr_db(1.0, 20, 0.0), "nearer than 1 m is 1 m");
        assert_eq!(b.snr_db(10.0, 20, 4.0), b.snr_db(10.0, 20, 0.0) + 4.0);
    }
}
