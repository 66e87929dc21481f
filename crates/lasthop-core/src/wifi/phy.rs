//! 802.11 PHY timing: frame air times and interframe spaces for 802.11b (HR/DSSS, clause 18 of
//! 802.11-2016 / 802.11b-1999) and 802.11g (ERP-OFDM, clause 19). Parameters and worked numbers:
//! `shared/reference/models.md` §1.2 and §2.
//!
//! Left out: 802.11a/n/ac PHYs, DSSS-OFDM, the mixed b/g protection mechanisms (CTS-to-self).

use crate::Duration;

/// 24 B MAC header + 4 B FCS of a data frame.
pub const MAC_HEADER_FCS_BYTES: u64 = 28;
/// 802.2 LLC/SNAP header that real stacks (and ns-3) put in front of an IP packet; ns-2 has none.
pub const LLC_SNAP_BYTES: u64 = 8;
pub const ACK_BYTES: u64 = 14;
pub const RTS_BYTES: u64 = 20;
pub const CTS_BYTES: u64 = 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    B,
    G,
}

/// Timing of one BSS: PHY standard, rates and the MAC constants that follow from them.
#[derive(Clone, Debug, PartialEq)]
pub struct Phy {
    pub standard: Standard,
    /// Data rate in Mb/s × 10 (so 5.5 Mb/s is exact): 11b 10/20/55/110, 11g 60..540.
    pub data_rate_x10: u32,
    /// Rate of control frames (ACK, RTS, CTS), Mb/s × 10.
    pub control_rate_x10: u32,
    /// 11b: 192 µs (long preamble) or 96 µs (short).
    pub plcp_ns: u64,
    pub slot: Duration,
    pub sifs: Duration,
    pub cw_min: u32,
    pub cw_max: u32,
}

impl Phy {
    /// 802.11b; `short_preamble` selects the 96 µs PLCP.
    pub fn b(data_rate_x10: u32, control_rate_x10: u32, short_preamble: bool) -> Phy {
        Phy {
            standard: Standard::B,
            data_rate_x10,
            control_rate_x10,
            plcp_ns: if short_preamble { 96_000 } else { 192_000 },
            slot: Duration::from_micros(20),
            sifs: Duration::from_micros(10),
            cw_min: 31,
            cw_max: 1023,
        }
    }

    /// 802.11g ERP-OFDM; `short_slot` selects 9 µs (an ERP-only BSS) over 20 µs.
    pub fn g(data_rate_x10: u32, control_rate_x10: u32, short_slot: bool) -> Phy {
        Phy {
            standard: Standard::G,
            data_rate_x10,
            control_rate_x10,
            plcp_ns: 20_000,
            slot: Duration::from_micros(if short_slot { 9 } else { 20 }),
            sifs: Duration::from_micros(10),
            cw_min: 15,
            cw_max: 1023,
        }
    }

    /// Valid data rates in Mb/s × 10.
    pub fn rates(standard: Standard) -> &'static [u32] {
        match standard {
            Standard::B => &[10, 20, 55, 110],
            Standard::G => &[60, 90, 120, 180, 240, 360, 480, 540],
        }
    }

    /// DIFS = SIFS + 2 slots.
    pub fn difs(&self) -> Duration {
        self.sifs + self.slot * 2
    }

    /// EIFS = SIFS + ACK at the control rate + DIFS (the `tc_mode = "eifs"` of bianchi.py).
    pub fn eifs(&self) -> Duration {
        self.sifs + self.ack_time() + self.difs()
    }

    /// Air time of a PPDU carrying `bytes` of MAC frame at `rate_x10`.
    pub fn ppdu_time(&self, bytes: u64, rate_x10: u32) -> Duration {
        match self.standard {
            // PLCP preamble and header, then the payload at the data rate.
            Standard::B => Duration(self.plcp_ns + ((bytes * 8 * 10_000) as f64 / rate_x10 as f64).round() as u64),
            Standard::G => {
                // 16 µs preamble + 4 µs SIGNAL + 4 µs symbols of N_DBPS bits (16 service +
                // 8·L + 6 tail) + 6 µs signal extension.
                let ndbps = rate_x10 as u64 * 4 / 10;
                let symbols = (16 + 8 * bytes + 6).div_ceil(ndbps);
                Duration::from_micros(20 + 4 * symbols + 6)
            }
        }
    }

    /// A data frame carrying an MSDU of `msdu_bytes` (IP packet plus LLC/SNAP if used).
    pub fn data_time(&self, msdu_bytes: u64) -> Duration {
        self.data_time_at(msdu_bytes, self.data_rate_x10)
    }

    /// The same at another data rate (a station with its own fixed rate).
    pub fn data_time_at(&self, msdu_bytes: u64, rate_x10: u32) -> Duration {
        self.ppdu_time(msdu_bytes + MAC_HEADER_FCS_BYTES, rate_x10)
    }
    pub fn ack_time(&self) -> Duration {
        self.ppdu_time(ACK_BYTES, self.control_rate_x10)
    }
    pub fn rts_time(&self) -> Duration {
        self.ppdu_time(RTS_BYTES, self.control_rate_x10)
    }
    pub fn cts_time(&self) -> Duration {
        self.ppdu_time(CTS_BYTES, self.control_rate_x10)
    }

    /// Timeout after which a sender gives up waiting for an ACK (or CTS): SIFS + the response's
    /// air time; the sender then defers DIFS, so a failed exchange ends at frame end + EIFS for
    /// everyone, which is what Bianchi's Tc = DATA + EIFS variant assumes.
    pub fn ack_timeout(&self) -> Duration {
        self.sifs + self.ack_time()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b_frame_times_match_the_worked_example() {
        // models.md §1.3: T_DATA(1500 B + 28) = 192 + 1528·8/11 = 1303.27 µs; ACK at 1 Mb/s 304 µs.
        let p = Phy::b(110, 10, false);
        assert_eq!(p.data_time(1500).as_nanos(), 1_303_273);
        assert_eq!(p.ack_time(), Duration::from_micros(304));
        assert_eq!(p.difs(), Duration::from_micros(50));
        // EIFS = 10 + 304 + 50 = 364 µs (models.md §1.2).
        assert_eq!(p.eifs(), Duration::from_micros(364));
        assert_eq!(Phy::b(110, 20, false).ack_time(), Duration::from_micros(248));
        // RTS 20 B at 1 Mb/s = 192 + 160 = 352 µs.
        assert_eq!(p.rts_time(), Duration::from_micros(352));
    }

    #[test]
    fn g_frame_times_match_the_worked_example() {
        // models.md §2: DATA(1508 B + 28) at 54 Mb/s = 20 + 4·57 + 6 = 254 µs; ACK at 24 = 34 µs.
        let p = Phy::g(540, 240, true);
        assert_eq!(p.data_time(1508), Duration::from_micros(254));
        assert_eq!(p.ack_time(), Duration::from_micros(34));
        assert_eq!(p.difs(), Duration::from_micros(28));
        assert_eq!(Phy::g(540, 60, true).ack_time(), Duration::from_micros(50));
    }
}
