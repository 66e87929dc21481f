//! Application presets: D-ITG 2.8.1's (`ITGSend ... VoIP | Telnet | DNS | Quake3 | CSa | CSi`)
//! with the numbers of its source, `src/ITGSend/traffic.cpp` (line numbers of 2.8.1-r1023,
//! GitHub mirror `jbucar/ditg`), as the IDT and size laws of a [`StochasticParams`].
//!
//! - **VoIP** (`voIPParser`, 101–207): one packet of `VAD · frame · samples + header` bytes
//!   every `1000 / pkts` ms, the size cut to an integer (ITGSend's `(int)` cast):
//!
//!   | codec | frame B (126–146) | samples | pkt/s | RTP size | CRTP size |
//!   |---|---|---|---|---|---|
//!   | G.711.1 | 80 | 1 | 100 | 92 | 82 |
//!   | G.711.2 | 80 | 2 | 50 | 172 | 162 |
//!   | G.729.2 | 10 | 2 | 50 | 32 | 22 |
//!   | G.729.3 | 10 | 3 | 33 | 42 | 32 |
//!   | G.723.1 | 30 | 1 | 26 | 42 | 32 |
//!
//!   The header is 12 B with RTP, 2 B with compressed RTP (158–161). **VAD** multiplies the
//!   voice bytes by 0.65 (171): D-ITG models voice activity detection as smaller packets at the
//!   same rate, not as talk spurts and silences; the preset keeps that meaning. A size below 16 B
//!   (G.729.2 with VAD and CRTP: 15 B) is raised to D-ITG's metadata minimum like any size.
//! - **Telnet** (82–99, TCP, 1725): IDT 1.1 ms · Pareto(shape 0.95), i.e. Pareto with minimum
//!   1.1 ms and an infinite mean; size 21 B + a discrete value 0..14 with probabilities
//!   0.65, 0.13, 0.07, 0.05, 0.03, 4 × 0.01, 6 × 0.005 (mean 22.145 B).
//! - **DNS** (209–223): one request every 1000/0.56 ms = 1.786 s; size uniform on [100, 320) B,
//!   cut to 100..319 B.
//! - **Quake3** (311–340): IDT 0.6 · Exponential(mean 4.29 ms) + 0.4 · constant 10.75 ms (a
//!   mixture: mean 6.874 ms, 145.5 pkt/s); size Normal(64.151757, 3.2035755) B.
//! - **Counter-Strike, active player** `CSa` (228–261): IDT Student t (location 41.6994 ms,
//!   scale 0.104821 ms, 0.704073 degrees of freedom: no mean, median 41.6994 ms); size the
//!   mixture 0.3732 · N(34.8352, 4.3915) + 0.6268 · N(49.4904, 3.6186) B.
//! - **Counter-Strike, idle player** `CSi` (263–308): IDT Student t (41.6858 ms, 0.0694393 ms,
//!   1.08341); size 27 B (0.8312), 28 (0.0018), 29 (0.0453), 30 (0.0195), 31 (0.0879),
//!   32 (0.0024), 33 (0.0106), 35 (0.0013).
//!
//! D-ITG's Student t parameters are in milliseconds: its IDTs are (`newran2.cpp` 99–107).
//! lasthop's own game model (the home scenario's CBR game flows, Palazzi et al. 2006 §4) and
//! the video presets are [`CbrParams`](super::CbrParams) and [`VideoParams`](super::VideoParams)
//! sources; the scenario names them beside these.

use super::dist::Dist;
use super::stochastic::StochasticParams;

/// A VoIP codec of D-ITG's `-x` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// G.711, one 80-byte frame per packet, 100 pkt/s.
    G711x1,
    /// G.711, two frames per packet, 50 pkt/s.
    G711x2,
    /// G.729, two 10-byte frames per packet, 50 pkt/s.
    G729x2,
    /// G.729, three frames per packet, 33 pkt/s.
    G729x3,
    /// G.723.1, one 30-byte frame per packet, 26 pkt/s.
    G723x1,
}

impl Codec {
    /// (frame bytes, frames per packet, packets per second): traffic.cpp 122–146.
    pub fn figures(self) -> (f64, f64, f64) {
        match self {
            Codec::G711x1 => (80.0, 1.0, 100.0),
            Codec::G711x2 => (80.0, 2.0, 50.0),
            Codec::G729x2 => (10.0, 2.0, 50.0),
            Codec::G729x3 => (10.0, 3.0, 33.0),
            Codec::G723x1 => (30.0, 1.0, 26.0),
        }
    }
}

/// The voice packets' header of D-ITG's `-h` option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VoipHeader {
    /// RTP, 12 bytes (the default).
    #[default]
    Rtp,
    /// Compressed RTP, 2 bytes.
    Crtp,
}

impl VoipHeader {
    pub fn bytes(self) -> f64 {
        match self {
            VoipHeader::Rtp => 12.0,
            VoipHeader::Crtp => 2.0,
        }
    }
}

/// D-ITG's voice activity detection factor on the voice bytes (traffic.cpp 171).
pub const VAD_FACTOR: f64 = 0.65;

/// A D-ITG application preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    Voip { codec: Codec, header: VoipHeader, vad: bool },
    Telnet,
    Dns,
    Quake3,
    CounterStrikeActive,
    CounterStrikeIdle,
}

const MS: f64 = 1e6;

impl Preset {
    /// Whether D-ITG runs it over TCP (only Telnet, ITGSend.cpp 1725; the others set UDP).
    pub fn is_tcp(self) -> bool {
        matches!(self, Preset::Telnet)
    }

    /// The VoIP payload in bytes before the cut to an integer: VAD · frame · samples + header.
    pub fn voip_bytes(codec: Codec, header: VoipHeader, vad: bool) -> f64 {
        let (frame, samples, _) = codec.figures();
        let vad = if vad { VAD_FACTOR } else { 1.0 };
        vad * frame * samples + header.bytes()
    }

    /// The source's parameters (IDT in ns, size in bytes), with D-ITG's size bounds.
    pub fn params(self) -> StochasticParams {
        let (idt, size) = match self {
            Preset::Voip { codec, header, vad } => {
                let (_, _, pkts) = codec.figures();
                (constant(1000.0 / pkts * MS), constant(Preset::voip_bytes(codec, header, vad)))
            }
            Preset::Telnet => {
                const P: [f64; 15] =
                    [0.65, 0.13, 0.07, 0.05, 0.03, 0.01, 0.01, 0.01, 0.01, 0.005, 0.005, 0.005, 0.005, 0.005, 0.005];
                let sizes = P.iter().enumerate().map(|(i, &p)| (21.0 + i as f64, p)).collect();
                (checked(Dist::pareto(0.95, 1.1 * MS)), checked(Dist::discrete(sizes)))
            }
            Preset::Dns => (constant(1000.0 / 0.56 * MS), checked(Dist::uniform(100.0, 320.0))),
            Preset::Quake3 => (
                checked(Dist::mixture(vec![
                    (0.6, checked(Dist::exponential(4.29 * MS))),
                    (0.4, constant(10.75 * MS)),
                ])),
                checked(Dist::normal(64.151757, 3.2035755)),
            ),
            Preset::CounterStrikeActive => (
                checked(Dist::student_t(41.6994 * MS, 0.104821 * MS, 0.704073)),
                checked(Dist::mixture(vec![
                    (0.3732, checked(Dist::normal(34.8352, 4.3915))),
                    (0.6268, checked(Dist::normal(49.4904, 3.6186))),
                ])),
            ),
            Preset::CounterStrikeIdle => (
                checked(Dist::student_t(41.6858 * MS, 0.0694393 * MS, 1.08341)),
                checked(Dist::discrete(vec![
                    (27.0, 0.8312),
                    (28.0, 0.0018),
                    (29.0, 0.0453),
                    (30.0, 0.0195),
                    (31.0, 0.0879),
                    (32.0, 0.0024),
                    (33.0, 0.0106),
                    (35.0, 0.0013),
                ])),
            ),
        };
        StochasticParams::new(idt, size)
    }
}

fn constant(v: f64) -> Dist {
    checked(Dist::constant(v))
}

/// The presets' numbers are constants that the tests below draw from.
fn checked(d: Result<Dist, super::dist::DistError>) -> Dist {
    d.expect("a preset's constants are valid parameters")
}

#[cfg(test)]
mod tests {
    use super::super::{Departure, Schedule, SourceParams};
    use super::*;
    use crate::rng::RngStreams;

    fn departures(p: Preset, n: usize) -> Vec<Departure> {
        Schedule::new(SourceParams::Stochastic(p.params()), RngStreams::new(12).stream("flow/preset/app"))
            .take(n)
            .collect()
    }

    fn gaps_ms(d: &[Departure]) -> Vec<f64> {
        d.windows(2).map(|w| (w[1].at.0 - w[0].at.0) as f64 / 1e6).collect()
    }

    fn mean(x: &[f64]) -> f64 {
        x.iter().sum::<f64>() / x.len() as f64
    }

    fn median(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    #[test]
    fn voip_codecs_give_ditgs_rates_and_sizes() {
        // ditg.md and traffic.cpp 122–199: G.711.1 100 pkt/s 92 B, G.711.2 50 pkt/s 172 B,
        // G.729.2 50 pkt/s 32 B, G.729.3 33 pkt/s 42 B, G.723.1 26 pkt/s 42 B with RTP; CRTP
        // 10 B less; VAD: 0.65 · 80 + 12 = 64 B for G.711.1, 0.65 · 30 + 2 = 21.5 → 21 B for
        // G.729.3 with CRTP, and 0.65 · 20 + 2 = 15 → raised to 16 B for G.729.2.
        let cases = [
            (Codec::G711x1, VoipHeader::Rtp, false, 10_000_000, 92),
            (Codec::G711x2, VoipHeader::Rtp, false, 20_000_000, 172),
            (Codec::G729x2, VoipHeader::Rtp, false, 20_000_000, 32),
            (Codec::G729x3, VoipHeader::Rtp, false, 30_303_030, 42),
            (Codec::G723x1, VoipHeader::Rtp, false, 38_461_538, 42),
            (Codec::G711x1, VoipHeader::Crtp, false, 10_000_000, 82),
            (Codec::G711x1, VoipHeader::Rtp, true, 10_000_000, 64),
            (Codec::G729x3, VoipHeader::Crtp, true, 30_303_030, 21),
            (Codec::G729x2, VoipHeader::Crtp, true, 20_000_000, 16),
        ];
        for (codec, header, vad, idt_ns, bytes) in cases {
            let d = departures(Preset::Voip { codec, header, vad }, 4);
            let label = format!("{codec:?} {header:?} vad {vad}");
            assert_eq!(d[3].at.0, 3 * idt_ns, "{label}: IDT");
            assert!(d.iter().all(|d| d.bytes == bytes), "{label}: {} B, expected {bytes}", d[0].bytes);
        }
    }

    #[test]
    fn dns_sends_every_1786_ms_sizes_uniform_100_to_319() {
        // traffic.cpp 216/222: IDT 1000/0.56 ms; size ⌊100 + 220·U⌋, mean 209.5 B, variance
        // (220² − 1)/12 = 4033.25 (discrete uniform on 220 values): 3σ/√n = 0.19 B for n = 10^5.
        let d = departures(Preset::Dns, 100_000);
        assert_eq!(d[1].at.0, 1_785_714_286);
        let sizes: Vec<f64> = d.iter().map(|d| d.bytes as f64).collect();
        assert_eq!(sizes.iter().copied().reduce(f64::min), Some(100.0));
        assert_eq!(sizes.iter().copied().reduce(f64::max), Some(319.0));
        assert!((mean(&sizes) - 209.5).abs() < 3.0 * (4033.25f64 / 1e5).sqrt(), "mean size {}", mean(&sizes));
    }

    #[test]
    fn quake3_sends_145_packets_a_second_of_about_63_65_bytes() {
        // traffic.cpp 316–338: mean IDT 0.6·4.29 + 0.4·10.75 = 6.874 ms (145.48 pkt/s);
        // variance of the mixture: E[X²] − m² = 0.6·2·4.29² + 0.4·10.75² − 6.874² = 21.0
        // (ms²), so 3σ/√n = 0.0435 ms for n = 10^5. Size ⌊N(64.15, 3.20)⌋: mean 64.15 − 0.5
        // = 63.65 B (the cut to an integer loses half a byte on average; σ ≫ 1), 3σ/√n = 0.03 B.
        let d = departures(Preset::Quake3, 100_001);
        let g = gaps_ms(&d);
        let var = 0.6 * 2.0 * 4.29f64.powi(2) + 0.4 * 10.75f64.powi(2) - 6.874f64.powi(2);
        assert!((mean(&g) - 6.874).abs() < 3.0 * (var / 1e5).sqrt(), "mean IDT {} ms", mean(&g));
        let s: Vec<f64> = d.iter().map(|d| d.bytes as f64).collect();
        assert!((mean(&s) - 63.65).abs() < 0.035, "mean size {}", mean(&s));
        // 40 % of the gaps are exactly 10.75 ms.
        let fixed = g.iter().filter(|&&x| (x - 10.75).abs() < 1e-6).count() as f64 / g.len() as f64;
        assert!((fixed - 0.4).abs() < 3.0 * (0.24f64 / 1e5).sqrt(), "{fixed}");
    }

    #[test]
    fn counter_strike_active_idt_median_and_quartiles_are_the_t_laws() {
        // No mean (ν = 0.704 < 1): check quantiles. The t law's upper quartile for ν = 0.704073
        // is t₀.₇₅ = 1.19601 (Simpson integration of the t density; the same code gives 1.0000
        // for ν = 1, the Cauchy's), so the quartiles are 41.6994 ∓ 0.104821 · 1.19601 =
        // 41.5740 / 41.8248 ms. A sample quantile's sd is √(p(1−p)/n)/f(q): 0.00056 ms for the
        // median, 0.00125 ms for a quartile with n = 10^5; the bounds are 4-5 of those.
        let d = departures(Preset::CounterStrikeActive, 100_001);
        let mut g = gaps_ms(&d);
        g.sort_by(f64::total_cmp);
        let q = |p: f64| g[(p * g.len() as f64) as usize];
        assert!((q(0.5) - 41.6994).abs() < 0.003, "median {}", q(0.5));
        assert!((q(0.25) - 41.5740).abs() < 0.005, "lower quartile {}", q(0.25));
        assert!((q(0.75) - 41.8248).abs() < 0.005, "upper quartile {}", q(0.75));
        // Sizes: 0.3732·34.8352 + 0.6268·49.4904 − 0.5 = 43.521 B; the mixture's sd is 8.10 B.
        let s: Vec<f64> = d.iter().map(|d| d.bytes as f64).collect();
        assert!((mean(&s) - 43.521).abs() < 3.0 * 8.11 / 1e5f64.sqrt(), "mean size {}", mean(&s));
    }

    #[test]
    fn counter_strike_idle_sizes_follow_ditgs_table() {
        // traffic.cpp 281–305: mean 27.5885 B; 27 B with probability 0.8312.
        let d = departures(Preset::CounterStrikeIdle, 100_001);
        let s: Vec<f64> = d.iter().map(|d| d.bytes as f64).collect();
        let var = [(27.0, 0.8312), (28.0, 0.0018), (29.0, 0.0453), (30.0, 0.0195), (31.0, 0.0879), (32.0, 0.0024), (33.0, 0.0106), (35.0, 0.0013)]
            .iter()
            .map(|(v, p): &(f64, f64)| p * (v - 27.5885f64).powi(2))
            .sum::<f64>();
        assert!((mean(&s) - 27.5885).abs() < 3.0 * (var / 1e5).sqrt(), "mean size {}", mean(&s));
        let p27 = s.iter().filter(|&&x| x == 27.0).count() as f64 / s.len() as f64;
        assert!((p27 - 0.8312).abs() < 3.0 * (0.8312f64 * 0.1688 / 1e5).sqrt(), "P(27 B) = {p27}");
        assert!((median(&gaps_ms(&d)) - 41.6858).abs() < 0.003);
    }

    #[test]
    fn telnet_idt_is_pareto_from_1_1_ms_and_sizes_21_to_35() {
        // traffic.cpp 90–98: P(IDT > x) = (1.1/x)^0.95 for x ≥ 1.1 ms, so the median is
        // 1.1 · 2^(1/0.95) = 2.28174 ms (sample median sd √(1/4n)/f = 0.0076 ms) and
        // P(IDT > 11 ms) = 10^−0.95 = 0.11220. Sizes: mean 22.145 B, variance 5.824.
        let d = departures(Preset::Telnet, 100_001);
        let g = gaps_ms(&d);
        assert!(g.iter().all(|&x| x >= 1.1 - 1e-6));
        assert!((median(&g) - 2.28174).abs() < 0.03, "median {}", median(&g));
        let tail = g.iter().filter(|&&x| x > 11.0).count() as f64 / g.len() as f64;
        assert!((tail - 0.11220).abs() < 3.0 * (0.1122f64 * 0.8878 / 1e5).sqrt(), "{tail}");
        let s: Vec<f64> = d.iter().map(|d| d.bytes as f64).collect();
        assert!(s.iter().all(|&x| (21.0..=35.0).contains(&x)));
        assert!((mean(&s) - 22.145).abs() < 3.0 * (5.824f64 / 1e5).sqrt(), "mean size {}", mean(&s));
        assert!(Preset::Telnet.is_tcp() && !Preset::Dns.is_tcp());
    }
}
