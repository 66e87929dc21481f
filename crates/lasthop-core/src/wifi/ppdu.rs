//! The PPDUs of today's Wi-Fi: HT (802.11n, clause 19 of 802.11-2016, HT-mixed format), VHT
//! (802.11ac, clause 21, SU) and HE (802.11ax, clause 27 of 802.11ax-2021, SU) — what a
//! transmission's parameters ([`TxVector`]: MCS, spatial streams, channel width, guard interval,
//! band) allow, the data rate they give and how long a PPDU carrying a PSDU lasts.
//!
//! A PPDU is a legacy preamble (L-STF + L-LTF, 16 µs; L-SIG, 4 µs), the amendment's own
//! signalling and training fields, then the Data field: N_SYM OFDM symbols carrying the 16
//! SERVICE bits, the PSDU and 6 tail bits per BCC encoder (eq. 19-32, 21-62), plus at 2.4 GHz a
//! 6 µs signal extension (HT, HE). Per amendment:
//!
//! | | fields before Data | symbol | Data field |
//! |---|---|---|---|
//! | HT-mixed | L-preamble 20 + HT-SIG 8 + HT-STF 4 + 4 per HT-LTF | 3.2 µs + GI 0.8 / 0.4 | N_SYM · 4 µs; short GI rounded up to 4 µs (eq. 19-91) |
//! | VHT SU | L-preamble 20 + VHT-SIG-A 8 + VHT-STF 4 + 4 per VHT-LTF + VHT-SIG-B 4 | 3.2 µs + GI 0.8 / 0.4 | as HT (eq. 21-105) |
//! | HE SU | L-preamble 20 + RL-SIG 4 + HE-SIG-A 8 + HE-STF 4 + HE-LTFs | 12.8 µs + GI 0.8 / 1.6 / 3.2 | N_SYM · symbol |
//!
//! Subcarriers carrying data (N_SD): HT 52 / 108 at 20 / 40 MHz; VHT 52 / 108 / 234 / 468 up to
//! 160 MHz; HE 234 / 468 / 980 / 1960 (the 4× finer HE tone spacing). N_DBPS = N_SD · bits per
//! subcarrier · coding rate · N_SS, an integer for every allowed combination.
//!
//! Choices where the standard leaves one (the same as ns-3 3.44's `WifiPhy`, whose
//! `CalculateTxDuration` tests/data/wifi/ records): BCC's N_ES encoders (one per 320 / 350 Mb/s
//! for HT at long / short GI, 540 / 600 Mb/s for VHT with the standard's exceptions, one for HE);
//! the HE Data field counted as BCC with one encoder (HE uses LDPC, whose shortening and
//! padding move N_SYM by at most one symbol); HE-LTFs of the 2× type with a 1.6 µs GI (8 µs)
//! under the 0.8 and 1.6 µs data GIs, and of the 4× type (16 µs) under 3.2 µs, the pairings
//! HE SU PPDUs use; no HE packet extension (a receiver's nominal padding of 0 µs).
//! Where ns-3 itself departs from the standard (no VHT-SIG-B in SU PPDUs; short-GI Data fields
//! not rounded up to 4 µs; 8 µs HE-LTFs under a 3.2 µs GI), lasthop follows the standard and the
//! test against ns-3 names the difference.
//!
//! Left out: HT-greenfield, STBC, LDPC's own symbol count, MU PPDUs (OFDMA, MU-MIMO), DCM, ER SU.

use crate::Duration;
use std::fmt;

/// The amendment a PPDU belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Amendment {
    /// 802.11n, HT-mixed format.
    Ht,
    /// 802.11ac, VHT SU PPDU.
    Vht,
    /// 802.11ax, HE SU PPDU.
    He,
}

impl Amendment {
    pub fn name(self) -> &'static str {
        match self {
            Amendment::Ht => "802.11n",
            Amendment::Vht => "802.11ac",
            Amendment::He => "802.11ax",
        }
    }

    /// The highest MCS per spatial stream.
    pub fn max_mcs(self) -> u8 {
        match self {
            Amendment::Ht => 7,
            Amendment::Vht => 9,
            Amendment::He => 11,
        }
    }

    /// The channel widths it defines, MHz.
    pub fn widths(self) -> &'static [u16] {
        match self {
            Amendment::Ht => &[20, 40],
            Amendment::Vht | Amendment::He => &[20, 40, 80, 160],
        }
    }

    /// The guard intervals of its Data field, ns.
    pub fn guard_intervals(self) -> &'static [u16] {
        match self {
            Amendment::Ht | Amendment::Vht => &[800, 400],
            Amendment::He => &[800, 1600, 3200],
        }
    }

    /// The bands it operates in.
    pub fn bands(self) -> &'static [Band] {
        match self {
            Amendment::Ht => &[Band::Ghz2_4, Band::Ghz5],
            Amendment::Vht => &[Band::Ghz5],
            Amendment::He => &[Band::Ghz2_4, Band::Ghz5, Band::Ghz6],
        }
    }

    /// Spatial streams lasthop models (the amendments allow up to 4 (HT) or 8).
    pub const MAX_STREAMS: u8 = 4;
}

/// The band a BSS operates in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Band {
    Ghz2_4,
    Ghz5,
    Ghz6,
}

impl Band {
    pub fn name(self) -> &'static str {
        match self {
            Band::Ghz2_4 => "2.4GHz",
            Band::Ghz5 => "5GHz",
            Band::Ghz6 => "6GHz",
        }
    }

    /// The widest channel the band holds for these amendments: 40 MHz at 2.4 GHz.
    pub fn max_width(self) -> u16 {
        match self {
            Band::Ghz2_4 => 40,
            Band::Ghz5 | Band::Ghz6 => 160,
        }
    }

    /// The 6 µs signal extension after every OFDM PPDU at 2.4 GHz (19.3.2, 27.3.2).
    pub fn signal_extension(self) -> Duration {
        match self {
            Band::Ghz2_4 => Duration::from_micros(6),
            Band::Ghz5 | Band::Ghz6 => Duration::ZERO,
        }
    }
}

/// The parameters of one transmission (the standard's TXVECTOR, as far as timing needs it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TxVector {
    pub amendment: Amendment,
    /// The MCS per spatial stream: 0..=7 (HT; HT's MCS index is 8·(N_SS − 1) + this), 0..=9
    /// (VHT), 0..=11 (HE).
    pub mcs: u8,
    /// Spatial streams, 1..=4.
    pub streams: u8,
    /// Channel width, MHz.
    pub width: u16,
    /// Guard interval of the Data field, ns.
    pub guard_interval: u16,
    pub band: Band,
}

/// Why a TxVector is not one the amendment allows; its Display says what is valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxVectorError {
    Mcs { amendment: Amendment, mcs: u8 },
    Streams { streams: u8 },
    Width { amendment: Amendment, width: u16 },
    WidthInBand { band: Band, width: u16 },
    GuardInterval { amendment: Amendment, gi: u16 },
    Band { amendment: Amendment, band: Band },
    /// VHT combinations the standard's rate tables leave out (21.5: N_DBPS, N_DBPS / N_ES and
    /// N_CBPS / N_ES must be whole numbers).
    VhtCombination { mcs: u8, width: u16, streams: u8 },
}

impl fmt::Display for TxVectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[u16]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
        match *self {
            TxVectorError::Mcs { amendment, mcs } => {
                write!(f, "MCS {mcs} on {}: valid: 0 to {}", amendment.name(), amendment.max_mcs())
            }
            TxVectorError::Streams { streams } => {
                write!(f, "{streams} spatial streams: valid: 1 to {}", Amendment::MAX_STREAMS)
            }
            TxVectorError::Width { amendment, width } => {
                write!(f, "{width} MHz on {}: valid: {} MHz", amendment.name(), list(amendment.widths()))
            }
            TxVectorError::WidthInBand { band, width } => {
                write!(f, "{width} MHz at {}: valid: up to {} MHz", band.name(), band.max_width())
            }
            TxVectorError::GuardInterval { amendment, gi } => {
                write!(f, "guard interval {gi} ns on {}: valid: {} ns", amendment.name(), list(amendment.guard_intervals()))
            }
            TxVectorError::Band { amendment, band } => {
                let bands: Vec<&str> = amendment.bands().iter().map(|b| b.name()).collect();
                write!(f, "{} at {}: valid: {}", amendment.name(), band.name(), bands.join(", "))
            }
            TxVectorError::VhtCombination { mcs, width, streams } => write!(
                f,
                "802.11ac MCS {mcs} at {width} MHz with {streams} spatial streams: not a rate the standard defines \
                 (its bits per symbol do not divide among its encoders); a neighbouring MCS, width or stream count is"
            ),
        }
    }
}

/// The BCC encoder exceptions of VHT (802.11-2016 tables 21-30 to 21-61) within 4 streams:
/// (width, streams, MCS) → N_ES where the rate rule gives another.
const VHT_NES_EXCEPTIONS: [((u16, u8, u8), u32); 1] = [((160, 4, 7), 6)];

impl TxVector {
    /// A TxVector checked against the amendment's rules.
    pub fn new(amendment: Amendment, mcs: u8, streams: u8, width: u16, guard_interval: u16, band: Band) -> Result<TxVector, TxVectorError> {
        let v = TxVector { amendment, mcs, streams, width, guard_interval, band };
        v.check()?;
        Ok(v)
    }

    /// Whether the amendment allows these parameters; why not otherwise.
    pub fn check(&self) -> Result<(), TxVectorError> {
        let a = self.amendment;
        if self.mcs > a.max_mcs() {
            return Err(TxVectorError::Mcs { amendment: a, mcs: self.mcs });
        }
        if !(1..=Amendment::MAX_STREAMS).contains(&self.streams) {
            return Err(TxVectorError::Streams { streams: self.streams });
        }
        if !a.widths().contains(&self.width) {
            return Err(TxVectorError::Width { amendment: a, width: self.width });
        }
        if !a.bands().contains(&self.band) {
            return Err(TxVectorError::Band { amendment: a, band: self.band });
        }
        if self.width > self.band.max_width() {
            return Err(TxVectorError::WidthInBand { band: self.band, width: self.width });
        }
        if !a.guard_intervals().contains(&self.guard_interval) {
            return Err(TxVectorError::GuardInterval { amendment: a, gi: self.guard_interval });
        }
        if a == Amendment::Vht && !self.divides_among_encoders() {
            return Err(TxVectorError::VhtCombination { mcs: self.mcs, width: self.width, streams: self.streams });
        }
        Ok(())
    }

    /// 21.5's rule for a VHT rate: N_DBPS, N_DBPS / N_ES and N_CBPS / N_ES whole numbers.
    fn divides_among_encoders(&self) -> bool {
        let coded = self.coded_bits_per_symbol();
        let nes = self.encoders() as u64;
        (coded * self.rate_num()).is_multiple_of(self.rate_den()) && self.data_bits_per_symbol().is_multiple_of(nes) && coded.is_multiple_of(nes)
    }

    /// Coded bits per OFDM symbol, N_CBPS = N_SD · N_BPSCS · N_SS.
    pub fn coded_bits_per_symbol(&self) -> u64 {
        self.data_subcarriers() * self.bits_per_subcarrier() * self.streams as u64
    }

    /// Data subcarriers, N_SD.
    pub fn data_subcarriers(&self) -> u64 {
        match (self.amendment, self.width) {
            (Amendment::He, 20) => 234,
            (Amendment::He, 40) => 468,
            (Amendment::He, 80) => 980,
            (Amendment::He, _) => 1960,
            (_, 20) => 52,
            (_, 40) => 108,
            (_, 80) => 234,
            _ => 468,
        }
    }

    /// Coded bits per subcarrier per stream, N_BPSCS: BPSK 1, QPSK 2, 16-QAM 4, 64-QAM 6,
    /// 256-QAM 8, 1024-QAM 10.
    pub fn bits_per_subcarrier(&self) -> u64 {
        [1, 2, 2, 4, 4, 6, 6, 6, 8, 8, 10, 10][self.mcs as usize]
    }

    /// The coding rate R as (numerator, denominator).
    pub fn code_rate(&self) -> (u64, u64) {
        (self.rate_num(), self.rate_den())
    }

    /// The coding rate R as num / den: 1/2, 1/2, 3/4, 1/2, 3/4, 2/3, 3/4, 5/6, 3/4, 5/6, 3/4, 5/6.
    fn rate_num(&self) -> u64 {
        [1, 1, 3, 1, 3, 2, 3, 5, 3, 5, 3, 5][self.mcs as usize]
    }
    fn rate_den(&self) -> u64 {
        [2, 2, 4, 2, 4, 3, 4, 6, 4, 6, 4, 6][self.mcs as usize]
    }

    /// Data bits per OFDM symbol, N_DBPS = N_CBPS · R: exact for HT and VHT (their rules leave
    /// no fraction), rounded down for HE (27.3.12: 8 166 for MCS 11 on 980 subcarriers).
    pub fn data_bits_per_symbol(&self) -> u64 {
        self.coded_bits_per_symbol() * self.rate_num() / self.rate_den()
    }

    /// The OFDM symbol of the Data field: 3.2 µs (HT, VHT) or 12.8 µs (HE) plus the GI.
    pub fn symbol(&self) -> Duration {
        let base = if self.amendment == Amendment::He { 12_800 } else { 3_200 };
        Duration(base + self.guard_interval as u64)
    }

    /// The data rate, b/s: N_DBPS per symbol (65 Mb/s for HT MCS 7 at 20 MHz, 800 ns).
    pub fn data_rate_bps(&self) -> f64 {
        self.data_bits_per_symbol() as f64 / (self.symbol().as_nanos() as f64 * 1e-9)
    }

    /// BCC encoders, N_ES (see the module doc).
    pub fn encoders(&self) -> u32 {
        let per_encoder = match (self.amendment, self.guard_interval) {
            (Amendment::He, _) => return 1,
            (Amendment::Ht, 800) => 320e6,
            (Amendment::Ht, _) => 350e6,
            (Amendment::Vht, 800) => 540e6,
            (Amendment::Vht, _) => 600e6,
        };
        let key = (self.width, self.streams, self.mcs);
        if let Some(&(_, n)) = VHT_NES_EXCEPTIONS.iter().find(|(k, _)| self.amendment == Amendment::Vht && *k == key) {
            return n;
        }
        (self.data_rate_bps() / per_encoder).ceil() as u32
    }

    /// Data-field OFDM symbols for a PSDU of `psdu_bytes` (eq. 19-32): 16 SERVICE bits, the
    /// PSDU and 6 tail bits per encoder, in symbols of N_DBPS bits.
    pub fn data_symbols(&self, psdu_bytes: u64) -> u64 {
        (16 + 8 * psdu_bytes + 6 * self.encoders() as u64).div_ceil(self.data_bits_per_symbol())
    }

    /// Training fields (HT-LTF, VHT-LTF, HE-LTF) for the streams: 1, 2, 4, 4.
    pub fn training_fields(&self) -> u64 {
        match self.streams {
            1 => 1,
            2 => 2,
            _ => 4,
        }
    }

    /// Everything before the Data field (see the module doc's table).
    pub fn preamble(&self) -> Duration {
        let legacy = 16_000 + 4_000; // L-STF + L-LTF, L-SIG
        let ns = match self.amendment {
            // HT-SIG 8 + HT-STF 4 + 4 per HT-LTF
            Amendment::Ht => legacy + 8_000 + 4_000 + 4_000 * self.training_fields(),
            // VHT-SIG-A 8 + VHT-STF 4 + 4 per VHT-LTF + VHT-SIG-B 4
            Amendment::Vht => legacy + 8_000 + 4_000 + 4_000 * self.training_fields() + 4_000,
            // RL-SIG 4 + HE-SIG-A 8 + HE-STF 4 + HE-LTFs
            Amendment::He => legacy + 4_000 + 8_000 + 4_000 + self.he_ltf().as_nanos() * self.training_fields(),
        };
        Duration(ns)
    }

    /// One HE-LTF: 2× LTF (6.4 µs) with a 1.6 µs GI under 0.8 / 1.6 µs data GIs, 4× LTF (12.8 µs)
    /// with a 3.2 µs GI under 3.2 µs.
    fn he_ltf(&self) -> Duration {
        Duration(if self.guard_interval == 3200 { 16_000 } else { 8_000 })
    }

    /// The Data field of `symbols` symbols: HT and VHT with a short GI round it up to whole
    /// 4 µs (the L-SIG's unit, eq. 19-91 and 21-105).
    fn data_field(&self, symbols: u64) -> Duration {
        let ns = symbols * self.symbol().as_nanos();
        Duration(match self.amendment {
            Amendment::Ht | Amendment::Vht => ns.div_ceil(4_000) * 4_000,
            Amendment::He => ns,
        })
    }

    /// The air time of a PPDU carrying a PSDU (an MPDU or an A-MPDU) of `psdu_bytes`.
    pub fn ppdu_duration(&self, psdu_bytes: u64) -> Duration {
        self.timing().ppdu_duration(psdu_bytes)
    }

    /// This vector's constants of [`TxVector::ppdu_duration`], worked out once for the many
    /// PSDU sizes an A-MPDU's composition tries.
    fn timing(&self) -> PpduTiming {
        PpduTiming {
            fixed: self.preamble() + self.band.signal_extension(),
            overhead_bits: 16 + 6 * self.encoders() as u64,
            bits_per_symbol: self.data_bits_per_symbol(),
            vector: *self,
        }
    }
}

/// [`TxVector::ppdu_duration`] with the vector's preamble, tail bits and N_DBPS computed.
struct PpduTiming {
    fixed: Duration,
    overhead_bits: u64,
    bits_per_symbol: u64,
    vector: TxVector,
}

impl PpduTiming {
    fn ppdu_duration(&self, psdu_bytes: u64) -> Duration {
        let symbols = (self.overhead_bits + 8 * psdu_bytes).div_ceil(self.bits_per_symbol);
        self.fixed + self.vector.data_field(symbols)
    }
}

/// A-MPDU framing (802.11-2016 10.13): each MPDU behind a 4-byte delimiter and padded to a
/// multiple of 4 bytes, the last one unpadded.
pub const AMPDU_DELIMITER: u64 = 4;

/// What bounds an A-MPDU besides its MPDUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AggregationLimits {
    /// The receiver's maximum A-MPDU length, bytes (65 535 for HT; up to 1 048 575 for VHT and
    /// 6 500 631 for HE by their capabilities).
    pub max_bytes: u64,
    /// MPDUs the Block Ack window has room for.
    pub max_mpdus: usize,
    /// The longest PPDU: 5.484 ms (see [`Amendment::max_ppdu_duration`]), or less under a TXOP
    /// limit.
    pub max_duration: Duration,
}

impl Amendment {
    /// The longest PPDU: 5.484 ms for all three. VHT and HE: aPPDUMaxTime (21.4.4, 27.4.4).
    /// HT-mixed: HT's aPPDUMaxTime is 10 ms (19.4.4), but a mixed-format PPDU's duration must
    /// fit its L-SIG (19.3.9.3.5: LENGTH = ⌈(TXTIME − 20 µs) / 4 µs⌉ · 3 − 3 ≤ 4095), which
    /// caps TXTIME at 20 + 4 · 1366 = 5484 µs; 10 ms is reachable only in the HT-greenfield
    /// format, not modelled. ns-3 3.44 (`GetPpduMaxTime`) uses 5.484 ms for HT-mixed too.
    pub fn max_ppdu_duration(self) -> Duration {
        Duration::from_micros(5_484)
    }
}

/// An A-MPDU composed from the head of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// MPDUs taken from the head of the queue.
    pub mpdus: usize,
    /// The PSDU: delimiters, MPDUs and padding, bytes.
    pub psdu_bytes: u64,
    pub duration: Duration,
}

impl TxVector {
    /// The longest A-MPDU of the MPDUs `sizes` (bytes, in queue order) within `limits`, taken in
    /// order from the first; the first always goes (alone if it exceeds a limit, as a single
    /// MPDU would). None for no MPDU.
    pub fn aggregate(&self, sizes: impl IntoIterator<Item = u64>, limits: AggregationLimits) -> Option<Aggregate> {
        let max_duration = limits.max_duration.min(self.amendment.max_ppdu_duration()) + self.band.signal_extension();
        let mut best: Option<Aggregate> = None;
        let mut padded_so_far = 0u64; // the subframes before the last, padded
        let timing = self.timing();
        for (k, size) in sizes.into_iter().enumerate() {
            let sub = AMPDU_DELIMITER + size;
            let psdu_bytes = padded_so_far + sub;
            let candidate = Aggregate { mpdus: k + 1, psdu_bytes, duration: timing.ppdu_duration(psdu_bytes) };
            let fits = k < limits.max_mpdus && psdu_bytes <= limits.max_bytes && candidate.duration <= max_duration;
            if !fits && best.is_some() {
                break;
            }
            best = Some(candidate);
            if !fits {
                break;
            }
            padded_so_far += sub.next_multiple_of(4);
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: Amendment, mcs: u8, nss: u8, width: u16, gi: u16, band: Band) -> TxVector {
        TxVector::new(a, mcs, nss, width, gi, band).unwrap()
    }

    #[test]
    fn data_rates_are_the_standards_tables() {
        use Amendment::*;
        use Band::*;
        // (vector, Mb/s) from 802.11-2016 tables 19-27, 19-28 (HT), 21-30..21-61 (VHT) and
        // 802.11ax-2021 tables 27-55..27-58 (HE), as their rate columns print them.
        let cases = [
            (v(Ht, 0, 1, 20, 800, Ghz5), 6.5),
            (v(Ht, 7, 1, 20, 800, Ghz5), 65.0),
            (v(Ht, 7, 1, 20, 400, Ghz5), 72.2),
            (v(Ht, 7, 2, 40, 400, Ghz5), 300.0),
            (v(Ht, 7, 4, 40, 400, Ghz5), 600.0),
            (v(Vht, 9, 1, 80, 800, Ghz5), 390.0),
            (v(Vht, 9, 1, 80, 400, Ghz5), 433.3),
            (v(Vht, 9, 2, 160, 400, Ghz5), 1733.3),
            (v(Vht, 8, 1, 20, 800, Ghz5), 78.0),
            (v(He, 0, 1, 20, 800, Ghz5), 8.6),
            (v(He, 11, 1, 20, 800, Ghz5), 143.4),
            (v(He, 11, 1, 80, 800, Ghz5), 600.4),
            (v(He, 11, 2, 160, 800, Ghz5), 2401.9),
            (v(He, 11, 1, 80, 3200, Ghz5), 510.4),
            (v(He, 7, 1, 40, 1600, Ghz2_4), 162.5),
        ];
        for (tx, mbps) in cases {
            let got = tx.data_rate_bps() / 1e6;
            assert!((got - mbps).abs() < 0.051, "{tx:?}: {got} Mb/s, the table prints {mbps}");
        }
    }

    #[test]
    fn ppdu_durations_by_hand() {
        use Amendment::*;
        use Band::*;
        // HT MCS 7, 20 MHz, 1 stream, 1500 B at 5 GHz: N_DBPS 260, N_SYM = ⌈(16 + 12 000 + 6) /
        // 260⌉ = 47: 36 µs of preamble (20 + 8 + 4 + 4) + 47 · 4 µs = 224 µs.
        assert_eq!(v(Ht, 7, 1, 20, 800, Ghz5).ppdu_duration(1500), Duration::from_micros(224));
        // The same with a short GI: 47 · 3.6 = 169.2 µs, rounded up to 172 µs: 208 µs; at
        // 2.4 GHz 6 µs more.
        assert_eq!(v(Ht, 7, 1, 20, 400, Ghz5).ppdu_duration(1500), Duration::from_micros(208));
        assert_eq!(v(Ht, 7, 1, 20, 400, Ghz2_4).ppdu_duration(1500), Duration::from_micros(214));
        // VHT MCS 9, 80 MHz, 2 streams, 65 000 B: N_DBPS 2 · 234 · 8 · 5/6 = 3 120, N_ES 2
        // (780 Mb/s > 540), N_SYM = ⌈(16 + 520 000 + 12) / 3 120⌉ = 167: preamble 20 + 8 + 4 +
        // 2 · 4 + 4 = 44 µs, Data 668 µs: 712 µs.
        assert_eq!(v(Vht, 9, 2, 80, 800, Ghz5).encoders(), 2);
        assert_eq!(v(Vht, 9, 2, 80, 800, Ghz5).ppdu_duration(65_000), Duration::from_micros(712));
        // HE MCS 11, 80 MHz, 1 stream, GI 0.8, 1500 B: N_DBPS ⌊980 · 10 · 5/6⌋ = 8 166, N_SYM =
        // ⌈12 022 / 8 166⌉ = 2: preamble 20 + 4 + 8 + 4 + 8 = 44 µs, Data 2 · 13.6 = 27.2 µs.
        assert_eq!(v(He, 11, 1, 80, 800, Ghz5).ppdu_duration(1500), Duration(71_200));
        // HE at 3.2 µs GI takes 4× HE-LTFs of 16 µs: 2 streams → 2 · 16.
        assert_eq!(v(He, 0, 2, 20, 3200, Ghz6).preamble(), Duration::from_micros(20 + 4 + 8 + 4 + 32));
    }

    #[test]
    fn the_vht_rates_left_out_are_the_standards_gaps() {
        // Within 4 streams 802.11-2016's VHT tables (21-30..21-61) have no MCS 9 at 20 MHz for 1,
        // 2 or 4 streams, no MCS 6 at 80 MHz for 3 streams, no MCS 9 at 160 MHz for 3 streams.
        let mut refused = Vec::new();
        for mcs in 0..=9 {
            for nss in 1..=4 {
                for w in [20, 40, 80, 160] {
                    for gi in [800, 400] {
                        let tx = TxVector { amendment: Amendment::Vht, mcs, streams: nss, width: w, guard_interval: gi, band: Band::Ghz5 };
                        if tx.check().is_err() {
                            refused.push((mcs, w, nss, gi));
                        }
                    }
                }
            }
        }
        let gaps = [(6, 80, 3), (9, 20, 1), (9, 20, 2), (9, 20, 4), (9, 160, 3)];
        let expected: Vec<_> = gaps.iter().flat_map(|&(m, w, n)| [(m, w, n, 800), (m, w, n, 400)]).collect();
        let mut refused_sorted = refused.clone();
        refused_sorted.sort();
        let mut expected_sorted = expected;
        expected_sorted.sort();
        assert_eq!(refused_sorted, expected_sorted);
    }

    #[test]
    fn impossible_vectors_are_refused_naming_what_is_valid() {
        use Amendment::*;
        use Band::*;
        let e = |a, mcs, nss, w, gi, band| TxVector::new(a, mcs, nss, w, gi, band).unwrap_err().to_string();
        assert_eq!(e(Ht, 11, 1, 20, 800, Ghz5), "MCS 11 on 802.11n: valid: 0 to 7");
        assert_eq!(e(He, 0, 1, 160, 800, Ghz2_4), "160 MHz at 2.4GHz: valid: up to 40 MHz");
        assert_eq!(e(Vht, 0, 5, 20, 800, Ghz5), "5 spatial streams: valid: 1 to 4");
        assert_eq!(e(Vht, 0, 1, 20, 800, Ghz2_4), "802.11ac at 2.4GHz: valid: 5GHz");
        assert_eq!(e(He, 0, 1, 20, 400, Ghz5), "guard interval 400 ns on 802.11ax: valid: 800, 1600, 3200 ns");
        assert_eq!(e(Ht, 0, 1, 80, 800, Ghz5), "80 MHz on 802.11n: valid: 20, 40 MHz");
        assert!(e(Vht, 9, 1, 20, 800, Ghz5).starts_with("802.11ac MCS 9 at 20 MHz with 1 spatial streams: not a rate"));
    }

    #[test]
    fn an_ampdu_holds_what_fits_its_length_window_and_time() {
        use Amendment::*;
        use Band::*;
        let limits = |max_bytes, max_mpdus, max_us| AggregationLimits { max_bytes, max_mpdus, max_duration: Duration::from_micros(max_us) };
        // 1538 B MPDUs (1500 B IP + 8 LLC/SNAP + 30 QoS header and FCS): subframes of 1542 B
        // padded to 1544: 42 fit 65 535 B (41 · 1544 + 1542 = 64 846), as bianchi_ampdu counts;
        // at 802.11ac MCS 9, 80 MHz, that is 1.37 ms, within 5.484 ms.
        let vht = v(Vht, 9, 1, 80, 800, Ghz5);
        assert_eq!(vht.aggregate(std::iter::repeat(1538).take(100), limits(65_535, 64, 10_000)).unwrap().mpdus, 42);
        // At HT MCS 7, 20 MHz the HT-mixed PPDU's 5.484 ms bounds it first: 36 µs + 4 µs ·
        // ⌈(22 + 8 · (27 · 1544 + 1542)) / 260⌉ = 36 + 4 · 1331 = 5360 µs for 28 MPDUs; 29 take
        // 1378 symbols (5548 µs). ns-3 3.44 sends 28 here (15 204 MPDUs in 543 A-MPDUs).
        let ht = v(Ht, 7, 1, 20, 800, Ghz5);
        let a = ht.aggregate(std::iter::repeat(1538).take(100), limits(65_535, 64, 10_000)).unwrap();
        assert_eq!((a.mpdus, a.psdu_bytes, a.duration), (28, 43_230, Duration::from_micros(5_360)));
        // The window's room bounds it: 10 MPDUs.
        assert_eq!(ht.aggregate(std::iter::repeat(1538).take(100), limits(65_535, 10, 10_000)).unwrap().mpdus, 10);
        // A TXOP limit of 1.504 ms: 36 µs + 4 µs · ⌈(22 + 8 · (k · 1544 − 2)) / 260⌉ is 1368 µs
        // for k = 7 (333 symbols) and 1560 µs for k = 8 (381): 7 fit.
        let a = ht.aggregate(std::iter::repeat(1538).take(100), limits(65_535, 64, 1_504)).unwrap();
        assert_eq!((a.mpdus, a.duration), (7, Duration::from_micros(1_368)));
        // What is queued bounds it; the first MPDU always goes, even when alone it is too long.
        assert_eq!(ht.aggregate([100, 200], limits(65_535, 64, 10_000)).unwrap().psdu_bytes, 104 + 204);
        assert_eq!(ht.aggregate([9_000], limits(1_000, 64, 10_000)).unwrap().mpdus, 1);
        assert_eq!(ht.aggregate([], limits(65_535, 64, 10_000)), None);
        // VHT's aPPDUMaxTime of 5.484 ms bounds a long A-MPDU at a low rate (MCS 0, 6.5 Mb/s).
        let slow = v(Vht, 0, 1, 20, 800, Ghz5).aggregate(std::iter::repeat(1538).take(100), limits(1_048_575, 64, 10_000)).unwrap();
        assert!(slow.duration <= Duration::from_micros(5_484) && slow.mpdus == 2, "{slow:?}");
    }
}
