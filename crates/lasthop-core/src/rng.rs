//! Named random streams derived from one scenario seed.
//!
//! Every consumer of randomness (a link's loss process, an on/off source, a TCP initial sequence
//! number) asks for its own stream by a stable name such as `"link/bottleneck/a->b/loss"`. The
//! stream is ChaCha8 keyed by the seed with the 64-bit stream id = FNV-1a(name), so:
//! - adding a new consumer never shifts the draws of an existing one;
//! - the draws are the same on every platform and every Rust version (no `thread_rng`, no `StdRng`).
//!
//! The few distributions we need are written out here with fixed formulas so that a `rand` upgrade
//! cannot silently change results.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// The random generator type used everywhere in lasthop.
pub type SimRng = ChaCha8Rng;

/// Derives named streams from one seed.
#[derive(Clone, Copy, Debug)]
pub struct RngStreams {
    seed: u64,
}

/// FNV-1a, 64 bit: a stable hash of a stream name.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl RngStreams {
    pub fn new(seed: u64) -> Self {
        RngStreams { seed }
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The stream called `name`.
    pub fn stream(&self, name: &str) -> SimRng {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&self.seed.to_le_bytes());
        key[8..16].copy_from_slice(b"lasthop\0");
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(fnv1a64(name.as_bytes()));
        rng
    }
}

/// Uniform in [0, 1) with 53 bits of precision.
pub fn uniform01(rng: &mut impl RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform integer in [0, n), n > 0: the high 64 bits of a 64-bit draw times n (Lemire's
/// multiply-shift without the rejection step; its bias, below n / 2^64, is far under anything a
/// run can resolve). One draw per call, a fixed formula.
pub fn uniform_below(rng: &mut impl RngCore, n: u64) -> u64 {
    debug_assert!(n > 0, "an empty range has no draw");
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

/// True with probability `p` (p <= 0 never draws, so a loss-free link consumes no randomness).
pub fn bernoulli(rng: &mut impl RngCore, p: f64) -> bool {
    if p <= 0.0 {
        return false;
    }
    uniform01(rng) < p
}

/// A standard normal draw (Box–Muller, one value per call; a fixed formula for determinism).
pub fn standard_normal(rng: &mut impl RngCore) -> f64 {
    let u1 = 1.0 - uniform01(rng); // (0, 1]
    let u2 = uniform01(rng);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Lognormal with mean 1 and coefficient of variation `cov`: exp(μ + σZ), σ² = ln(1 + cov²),
/// μ = −σ²/2.
pub fn lognormal_unit_mean(rng: &mut impl RngCore, cov: f64) -> f64 {
    if cov <= 0.0 {
        return 1.0;
    }
    let s2 = (1.0 + cov * cov).ln();
    (-s2 / 2.0 + s2.sqrt() * standard_normal(rng)).exp()
}

/// Exponential with the given mean, by inversion: -mean * ln(1 - U).
pub fn exponential(rng: &mut impl RngCore, mean: f64) -> f64 {
    -mean * (1.0 - uniform01(rng)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_give_the_same_draws() {
        let a: Vec<u64> = (0..4).map({ let mut r = RngStreams::new(7).stream("x"); move |_| r.next_u64() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = RngStreams::new(7).stream("x"); move |_| r.next_u64() }).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn streams_with_other_names_or_seeds_differ() {
        let first = |seed, name: &str| RngStreams::new(seed).stream(name).next_u64();
        assert_ne!(first(7, "a"), first(7, "b"));
        assert_ne!(first(7, "a"), first(8, "a"));
    }

    #[test]
    fn uniform_below_is_the_high_half_of_the_product() {
        // Hand-checked: a draw of 2^63 is one half, so half of 10 is 5; 2^64 − 1 stays below n;
        // 0 maps to 0.
        struct Fixed(u64);
        impl RngCore for Fixed {
            fn next_u32(&mut self) -> u32 {
                self.0 as u32
            }
            fn next_u64(&mut self) -> u64 {
                self.0
            }
            fn fill_bytes(&mut self, _: &mut [u8]) {}
            fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), rand_core::Error> {
                Ok(())
            }
        }
        assert_eq!(uniform_below(&mut Fixed(1 << 63), 10), 5);
        assert_eq!(uniform_below(&mut Fixed(u64::MAX), 10), 9);
        assert_eq!(uniform_below(&mut Fixed(0), 10), 0);
        // And over many draws every value of a small range comes up about equally often
        // (20 000 draws of 4 values: 5 000 each, standard deviation ~61).
        let mut r = RngStreams::new(3).stream("u");
        let mut counts = [0u32; 4];
        for _ in 0..20_000 {
            counts[uniform_below(&mut r, 4) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (4_700..5_300).contains(&c)), "{counts:?}");
    }

    #[test]
    fn fnv1a_matches_the_published_test_vector() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (Fowler/Noll/Vo test suite).
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn lognormal_has_unit_mean_and_the_requested_cov() {
        let mut r = RngStreams::new(2).stream("ln");
        let xs: Vec<f64> = (0..200_000).map(|_| lognormal_unit_mean(&mut r, 0.5)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        // Standard error of the mean: 0.5/√200000 = 0.0011.
        assert!((mean - 1.0).abs() < 0.006, "{mean}");
        assert!((sd / mean - 0.5).abs() < 0.01, "{}", sd / mean);
    }

    #[test]
    fn bernoulli_frequency_is_near_p() {
        let mut r = RngStreams::new(1).stream("b");
        let n = 200_000;
        let hits = (0..n).filter(|_| bernoulli(&mut r, 0.01)).count() as f64;
        // Binomial(200000, 0.01): mean 2000, sd 44.5; 5 sd = 222.
        assert!((hits - 2000.0).abs() < 222.0, "{hits}");
    }
}
