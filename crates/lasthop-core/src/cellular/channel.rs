//! Frame errors of a W-CDMA dedicated channel, one draw per TTI (the whole TTI is the error unit,
//! since at 5 Hz Doppler the channel barely changes within 20 ms): none, a fixed FER, or a
//! Gilbert–Elliott chain (bad state loses, good state delivers) fitted to Rayleigh fading
//! (models.md §6.2: f_d = 5 Hz, TTI 20 ms, FER 5.9 % -> P(G→B) = 0.04686, P(B→G) = 0.7473).

use crate::rng::{uniform01, SimRng};

pub const RAYLEIGH_5HZ_P_GB: f64 = 0.04686;
pub const RAYLEIGH_5HZ_P_BG: f64 = 0.7473;

#[derive(Debug)]
pub enum TtiErrors {
    Ideal,
    Fixed { fer: f64, rng: SimRng },
    GilbertElliott { p_gb: f64, p_bg: f64, bad: bool, rng: SimRng },
    /// Scripted losses: TTI k (counting sent TTIs) is lost iff `lost[k]`; then none.
    Script { lost: Vec<bool>, next: usize },
}

impl TtiErrors {
    /// Advances the channel by `ttis` TTIs (the idle ones included, so that burst statistics
    /// hold in time) and says whether the current TTI is lost.
    pub fn advance(&mut self, ttis: u64) -> bool {
        match self {
            TtiErrors::Ideal => false,
            TtiErrors::Script { lost, next } => {
                *next += 1;
                lost.get(*next - 1).copied().unwrap_or(false)
            }
            TtiErrors::Fixed { fer, rng } => uniform01(rng) < *fer,
            TtiErrors::GilbertElliott { p_gb, p_bg, bad, rng } => {
                // After many idle TTIs the chain has forgotten its state: draw from the
                // stationary distribution instead of stepping thousands of times.
                if ttis > 1000 {
                    *bad = uniform01(rng) < *p_gb / (*p_gb + *p_bg);
                } else {
                    for _ in 0..ttis.max(1) {
                        let u = uniform01(rng);
                        *bad = if *bad { u >= *p_bg } else { u < *p_gb };
                    }
                }
                *bad
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStreams;

    #[test]
    fn gilbert_elliott_fit_gives_the_rayleigh_fer_and_bursts() {
        // models.md §6.2: stationary FER = p_gb / (p_gb + p_bg) = 0.0590, mean burst 1/p_bg = 1.34 TTI.
        let mut c = TtiErrors::GilbertElliott {
            p_gb: RAYLEIGH_5HZ_P_GB,
            p_bg: RAYLEIGH_5HZ_P_BG,
            bad: false,
            rng: RngStreams::new(4).stream("ge"),
        };
        let n = 400_000;
        let lost: Vec<bool> = (0..n).map(|_| c.advance(1)).collect();
        let fer = lost.iter().filter(|&&l| l).count() as f64 / n as f64;
        let bursts = lost.windows(2).filter(|w| w[1] && !w[0]).count() as f64;
        let mean_burst = lost.iter().filter(|&&l| l).count() as f64 / bursts;
        // Binomial-ish sd of the FER with bursts ~ 0.0005; allow 0.002.
        assert!((fer - 0.0590).abs() < 0.002, "FER {fer}");
        assert!((mean_burst - 1.34).abs() < 0.03, "mean burst {mean_burst}");
    }
}
