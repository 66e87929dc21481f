//! Frame errors of OFDM PPDUs from the SNR, by MCS: the NIST model of Pei & Henderson
//! ("Validation of OFDM error rate model in ns-3", 2010; ns-3's `NistErrorRateModel`, extended
//! there to 256- and 1024-QAM): the bit error rate p of the MCS's Gray-coded modulation in AWGN,
//! then the Viterbi decoder's bit error rate after the rate-R punctured convolutional code of
//! 802.11 (K = 7, generators 133 and 171 octal; 17.3.5.6 and 19.3.11.6) by the union bound with
//! the Bhattacharyya parameter D = √(4p(1−p)) of hard decisions,
//!
//!   P_b ≤ 1/(2P) · Σ_d c_d · D^d,
//!
//! over the code's lowest output weights d from its free distance (see `TERMS`), where c_d sums the
//! information bits in error over all error events of output weight d starting at each of the P
//! phases of the puncturing period. A PSDU of L bytes then survives with (1 − P_b)^(8L).
//!
//! The distance spectra c_d are computed here from the generators and the puncturing patterns
//! (a walk over the 64-state trellis, [`Spectrum::of`]), not typed in; the tests check them
//! against the published spectrum of the rate-1/2 code (36, 211, 1404, ... at d = 10, 12, 14).
//!
//! The same per-bit model serves 802.11n/ac/ax, which use LDPC at high rates in practice (it
//! does better than BCC by 1-2 dB): the model is the BCC bound, as ns-3's NIST model is.

use super::errors::erfc;
use super::ppdu::TxVector;
use std::sync::OnceLock;

/// The generators of 802.11's convolutional code, octal 133 (output A) and 171 (output B).
const G_A: u32 = 0o133;
const G_B: u32 = 0o171;
/// Constraint length 7: 64 states.
const STATES: usize = 64;
/// Spectrum terms kept: the first 10 output weights from the free distance on, as the published
/// tables list them (for the rate-1/2 code, whose odd weights are empty, its first 9 non-empty
/// ones: d = 10, 12, ..., 26).
const TERMS: usize = 10;

/// A puncturing pattern: per information bit of the period, whether output A and output B are
/// sent (17.3.5.6, figure 17-9; 19.3.11.6 for 5/6).
#[derive(Clone, Copy, Debug)]
pub struct Puncturing {
    pub a: &'static [bool],
    pub b: &'static [bool],
}

/// The code rates 802.11 uses and their patterns.
pub fn puncturing(rate_num: u64, rate_den: u64) -> Puncturing {
    const T: bool = true;
    const F: bool = false;
    match (rate_num, rate_den) {
        (1, 2) => Puncturing { a: &[T], b: &[T] },
        (2, 3) => Puncturing { a: &[T, T], b: &[T, F] },
        (3, 4) => Puncturing { a: &[T, T, F], b: &[T, F, T] },
        (5, 6) => Puncturing { a: &[T, T, F, T, F], b: &[T, F, T, F, T] },
        _ => panic!("no 802.11 code rate {rate_num}/{rate_den}"),
    }
}

/// The low end of a code's distance spectrum: `c[i]` information bits in error over the error
/// events of output weight `free + i`.
#[derive(Clone, Debug, PartialEq)]
pub struct Spectrum {
    pub free: u32,
    pub c: Vec<f64>,
    /// The puncturing period P in information bits.
    pub period: u32,
}

impl Spectrum {
    /// The spectrum of the code punctured by `p`: every error event leaving the all-zero path
    /// at each phase of the period, followed through the trellis until it remerges, its output
    /// weight counting only the bits the pattern sends. Events heavier than the lightest plus
    /// TERMS − 1 are dropped as they pass that weight (every cycle away from the zero state
    /// adds weight for this non-catastrophic code, so the walk ends).
    pub fn of(p: Puncturing) -> Spectrum {
        let period = p.a.len();
        let span = if period == 1 { 2 * TERMS - 3 } else { TERMS }; // 17 weights hold 9 even ones
        // A light walk finds the free distance, then one as heavy as the terms need: a path
        // dropped past a cutoff never remerges lighter (weights only grow), so each weight's
        // count is the same whatever cutoff above it (the walk's cost grows with the cutoff).
        let free_of = |c: &[f64]| c.iter().position(|&c| c > 0.0);
        let light = Self::remerged_by_weight(p, 16);
        let free = free_of(&light).unwrap_or_else(|| free_of(&Self::remerged_by_weight(p, 40)).expect("the code has a free distance"));
        let c_by_weight = if free + span <= light.len() { light } else { Self::remerged_by_weight(p, free + span - 1) };
        Spectrum { free: free as u32, c: c_by_weight[free..free + span].to_vec(), period: period as u32 }
    }

    /// Information bits in error of the remerged error events of each output weight up to
    /// `max_weight` (index = weight).
    fn remerged_by_weight(p: Puncturing, max_weight: usize) -> Vec<f64> {
        let period = p.a.len();
        // c_by_weight[d]: information bits in error of remerged events of weight d.
        let mut c_by_weight = vec![0f64; max_weight + 1];
        // live[state][weight] = (paths, information bits in error so far), for paths that
        // diverged at `start` and have not remerged; two flat tables swapped each step.
        let cells = STATES * (max_weight + 1);
        let (mut live, mut next_live) = (vec![(0f64, 0f64); cells], vec![(0f64, 0f64); cells]);
        for start in 0..period {
            live.fill((0.0, 0.0));
            // Diverge: input 1 from state 0.
            let (next, w) = step(0, 1, start, p);
            if w <= max_weight {
                live[next * (max_weight + 1) + w] = (1.0, 1.0);
            }
            let mut phase = (start + 1) % period;
            for _ in 0..10_000 {
                next_live.fill((0.0, 0.0));
                let mut any = false;
                for (state, weights) in live.chunks_exact(max_weight + 1).enumerate().skip(1) {
                    for (weight, &(paths, bits)) in weights.iter().enumerate() {
                        if paths == 0.0 {
                            continue;
                        }
                        for input in 0..2u32 {
                            let (to, w) = step(state, input, phase, p);
                            let total = weight + w;
                            if total > max_weight {
                                continue;
                            }
                            let add_bits = bits + paths * input as f64;
                            if to == 0 {
                                c_by_weight[total] += add_bits;
                            } else {
                                let e = &mut next_live[to * (max_weight + 1) + total];
                                e.0 += paths;
                                e.1 += add_bits;
                                any = true;
                            }
                        }
                    }
                }
                std::mem::swap(&mut live, &mut next_live);
                phase = (phase + 1) % period;
                if !any {
                    break;
                }
            }
        }
        c_by_weight
    }

    /// The decoded bit error rate for channel bit error rate `p` (the module doc's bound),
    /// at most 0.5.
    pub fn bit_error_rate(&self, p: f64) -> f64 {
        let d = (4.0 * p * (1.0 - p)).sqrt();
        let sum: f64 = self.c.iter().enumerate().map(|(i, c)| c * d.powi(self.free as i32 + i as i32)).sum();
        (sum / (2.0 * self.period as f64)).min(0.5)
    }
}

/// The next state and the output weight sent of one trellis step from `state` (the 6 previous
/// input bits, newest in bit 5) with `input` at puncturing phase `phase`.
fn step(state: usize, input: u32, phase: usize, p: Puncturing) -> (usize, usize) {
    let reg = (input << 6) | state as u32; // the input and the 6 bits held
    let a = (reg & G_A).count_ones() & 1;
    let b = (reg & G_B).count_ones() & 1;
    let w = (a as usize) * p.a[phase] as usize + (b as usize) * p.b[phase] as usize;
    ((reg >> 1) as usize, w)
}

/// The four code rates' spectra, computed once.
fn spectrum(rate_num: u64, rate_den: u64) -> &'static Spectrum {
    static SPECTRA: OnceLock<[Spectrum; 4]> = OnceLock::new();
    let all = SPECTRA.get_or_init(|| [(1, 2), (2, 3), (3, 4), (5, 6)].map(|(n, d)| Spectrum::of(puncturing(n, d))));
    match (rate_num, rate_den) {
        (1, 2) => &all[0],
        (2, 3) => &all[1],
        (3, 4) => &all[2],
        _ => &all[3],
    }
}

/// The uncoded bit error rate of Gray-coded M-QAM (BPSK for `bits` = 1) at linear SNR `snr`
/// per symbol in AWGN: (4 / log2 M)(1 − 1/√M) · Q(√(3·snr / (M − 1))) for square QAM
/// (Proakis, 5th ed., §4.3), Q(√(2 snr)) for BPSK and Q(√snr) for QPSK.
pub fn modulation_ber(bits: u64, snr: f64) -> f64 {
    let q = |x: f64| 0.5 * erfc(x / std::f64::consts::SQRT_2);
    match bits {
        1 => q((2.0 * snr).sqrt()),
        2 => q(snr.sqrt()),
        _ => {
            let m = (1u64 << bits) as f64;
            (4.0 / bits as f64) * (1.0 - 1.0 / m.sqrt()) * q((3.0 * snr / (m - 1.0)).sqrt())
        }
    }
}

impl TxVector {
    /// The decoded bit error rate of this MCS at linear SNR `snr` (module doc).
    pub fn bit_error_rate(&self, snr: f64) -> f64 {
        let (num, den) = self.code_rate();
        spectrum(num, den).bit_error_rate(modulation_ber(self.bits_per_subcarrier(), snr))
    }

    /// The probability that a PSDU of `bytes` is received without error at linear SNR `snr`.
    pub fn frame_success(&self, snr: f64, bytes: u64) -> f64 {
        (1.0 - self.bit_error_rate(snr)).powf(8.0 * bytes as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::ppdu::{Amendment, Band};

    #[test]
    fn the_rate_half_spectrum_is_the_published_one() {
        // The K = 7 (133, 171) code: free distance 10, information weights 36, 211, 1404, 11633,
        // 77433 at d = 10, 12, 14, 16, 18 and none at odd d (both generators have odd weight,
        // so every codeword's weight is even): the spectrum published for this code (e.g. by
        // Haccoun & Bégin 1989, and in ns-3's NistErrorRateModel).
        let s = Spectrum::of(puncturing(1, 2));
        assert_eq!(s.free, 10);
        assert_eq!(&s.c[..9], &[36.0, 0.0, 211.0, 0.0, 1404.0, 0.0, 11633.0, 0.0, 77433.0]);
    }

    #[test]
    fn punctured_codes_have_the_published_spectra() {
        // 802.11's punctured codes (the best puncturings of the 133/171 code, Haccoun & Bégin,
        // IEEE Trans. Commun. 37(11), 1989; the coefficients of ns-3's NistErrorRateModel):
        // rate 2/3 from d_free 6, 3/4 from 5, 5/6 from 4. The low terms, which decide the error
        // rate at any SNR a link works at, are equal; the tables' terms from the 8th (2/3), 6th
        // (3/4) and 5th (5/6) on differ from the ones computed here by under 0.1 %.
        let published: [((u64, u64), u32, &[f64]); 3] = [
            ((2, 3), 6, &[3.0, 70.0, 285.0, 1276.0, 6160.0, 27128.0, 117019.0]),
            ((3, 4), 5, &[42.0, 201.0, 1492.0, 10469.0, 62935.0]),
            ((5, 6), 4, &[92.0, 528.0, 8694.0, 79453.0]),
        ];
        for ((n, d), free, low) in published {
            let s = Spectrum::of(puncturing(n, d));
            assert_eq!(s.free, free, "rate {n}/{d}");
            assert_eq!(&s.c[..low.len()], low, "rate {n}/{d}");
        }
    }

    #[test]
    fn uncoded_bit_error_rates_at_known_points() {
        // BPSK at Eb/N0 = 9.6 dB gives 1e-5 (the textbook point); QPSK's per-symbol SNR is
        // twice its Eb/N0, so the same BER at 12.6 dB of SNR.
        let bpsk = modulation_ber(1, 10f64.powf(0.96));
        assert!((bpsk / 1e-5 - 1.0).abs() < 0.1, "{bpsk}");
        let qpsk = modulation_ber(2, 2.0 * 10f64.powf(0.96));
        assert!((qpsk / 1e-5 - 1.0).abs() < 0.1, "{qpsk}");
        // Higher orders need more SNR for the same BER: 16-QAM ~ 6.2 dB more than QPSK.
        assert!(modulation_ber(4, 2.0 * 10f64.powf(0.96)) > 1e-3);
    }

    #[test]
    fn each_mcs_needs_more_snr_than_the_one_below() {
        // The SNR at which a 1500 B PSDU gets through 90 % of the time rises with the MCS,
        // and from MCS 0 (~1-2 dB) to HE MCS 11 (~30 dB+) spans the range 802.11 receivers'
        // sensitivity tables give (802.11ax-2021 table 27-55: -82 dBm at MCS 0 to -46 at 11 on
        // 20 MHz, a 36 dB span).
        let mut last = f64::NEG_INFINITY;
        for mcs in 0..=11 {
            let tx = TxVector::new(Amendment::He, mcs, 1, 20, 800, Band::Ghz5).unwrap();
            let db = (0..600).map(|i| -10.0 + i as f64 * 0.1).find(|db| tx.frame_success(10f64.powf(db / 10.0), 1500) >= 0.9).unwrap();
            assert!(db > last, "MCS {mcs}: {db} dB after {last} dB");
            if mcs == 0 {
                assert!((-2.0..5.0).contains(&db), "MCS 0 at {db} dB");
            }
            if mcs == 11 {
                assert!((25.0..40.0).contains(&db), "MCS 11 at {db} dB");
            }
            last = db;
        }
    }
}
