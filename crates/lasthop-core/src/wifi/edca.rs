//! EDCA's access categories (802.11-2016 10.2.4): which one a packet goes to, and the contention
//! parameters of each.
//!
//! - A packet's 802.1D user priority (UP) is its DSCP as Linux maps it
//!   (`cfg80211_classify8021d`, net/wireless/util.c, since 6.11): the DSCP's three high bits,
//!   except the RFC 8325 §4 classes whose intent those bits get wrong — AF11-13 and CS2 to UP 0,
//!   AF21-23 to 3, CS3 and AF31-33 to 4, VA and EF to 6, CS6 to 7.
//! - The UP picks the access category (802.11-2016 table 10-1): UP 1, 2 → AC_BK; 0, 3 → AC_BE;
//!   4, 5 → AC_VI; 6, 7 → AC_VO.
//! - Each category contends with its own AIFSN, CWmin, CWmax and TXOP limit. The defaults are
//!   WMM's as Linux access points run them (hostapd's `tx_queue_data*` for the AP's own queues,
//!   its advertised `wmm_ac_*` for the stations, which are 802.11-2016 table 9-137's default EDCA
//!   parameter set for OFDM PHYs):
//!
//! | | AP: AIFSN, CW, TXOP | station: AIFSN, CW, TXOP |
//! |---|---|---|
//! | AC_BK | 7, 15-1023, 0 | 7, 15-1023, 0 |
//! | AC_BE | 3, 15-63, 0 | 3, 15-1023, 0 |
//! | AC_VI | 1, 7-15, 3.008 ms | 2, 7-15, 3.008 ms |
//! | AC_VO | 1, 3-7, 1.504 ms | 2, 3-7, 1.504 ms |
//!
//! A TXOP limit of 0 allows one exchange (one A-MPDU and its Block Ack) per access.

use crate::Duration;

/// The four EDCA access categories, lowest priority first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessCategory {
    Background,
    /// (The category of unmarked traffic, UP 0.)
    #[default]
    BestEffort,
    Video,
    Voice,
}

impl AccessCategory {
    pub const ALL: [AccessCategory; 4] = [AccessCategory::Background, AccessCategory::BestEffort, AccessCategory::Video, AccessCategory::Voice];

    /// The category of 802.1D user priority `up` (0..=7; table 10-1).
    pub fn of_user_priority(up: u8) -> AccessCategory {
        match up & 7 {
            1 | 2 => AccessCategory::Background,
            0 | 3 => AccessCategory::BestEffort,
            4 | 5 => AccessCategory::Video,
            _ => AccessCategory::Voice,
        }
    }

    /// The category a packet with DSCP `dscp` (0..=63) goes to, as Linux classifies it.
    pub fn of_dscp(dscp: u8) -> AccessCategory {
        AccessCategory::of_user_priority(user_priority(dscp))
    }

    pub fn name(self) -> &'static str {
        match self {
            AccessCategory::Background => "AC_BK",
            AccessCategory::BestEffort => "AC_BE",
            AccessCategory::Video => "AC_VI",
            AccessCategory::Voice => "AC_VO",
        }
    }
}

/// The 802.1D user priority of DSCP `dscp` (0..=63) by Linux's `cfg80211_classify8021d`.
pub fn user_priority(dscp: u8) -> u8 {
    match dscp & 63 {
        10 | 12 | 14 => 0, // AF11-13, high-throughput data
        16 => 0,           // CS2, OAM
        18 | 20 | 22 => 3, // AF21-23, low-latency data
        24 => 4,           // CS3, broadcast video
        26 | 28 | 30 => 4, // AF31-33, multimedia streaming
        44 | 46 => 6,      // VA, EF: telephony
        48 => 7,           // CS6, network control
        d => d >> 3,
    }
}

/// Who contends with a parameter set: the AP and its stations use different defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    AccessPoint,
    Station,
}

/// One access category's contention parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdcaParams {
    pub aifsn: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// The longest a TXOP may last; zero: one exchange per access.
    pub txop_limit: Duration,
}

impl EdcaParams {
    /// WMM's defaults (the module doc's table).
    pub fn wmm_default(ac: AccessCategory, role: Role) -> EdcaParams {
        let p = |aifsn, cw_min, cw_max, txop_us| EdcaParams { aifsn, cw_min, cw_max, txop_limit: Duration::from_micros(txop_us) };
        match (ac, role) {
            (AccessCategory::Background, _) => p(7, 15, 1023, 0),
            (AccessCategory::BestEffort, Role::AccessPoint) => p(3, 15, 63, 0),
            (AccessCategory::BestEffort, Role::Station) => p(3, 15, 1023, 0),
            (AccessCategory::Video, Role::AccessPoint) => p(1, 7, 15, 3_008),
            (AccessCategory::Video, Role::Station) => p(2, 7, 15, 3_008),
            (AccessCategory::Voice, Role::AccessPoint) => p(1, 3, 7, 1_504),
            (AccessCategory::Voice, Role::Station) => p(2, 3, 7, 1_504),
        }
    }

    /// AIFS = SIFS + AIFSN slots (10.22.2.4).
    pub fn aifs(&self, sifs: Duration, slot: Duration) -> Duration {
        sifs + slot * self.aifsn as u64
    }

    /// The contention window after `retries` failed attempts: doubled each time from CWmin
    /// ((CW + 1) · 2 − 1), at most CWmax.
    pub fn contention_window(&self, retries: u32) -> u32 {
        let cw = ((self.cw_min as u64 + 1) << retries.min(20)) - 1;
        cw.min(self.cw_max as u64) as u32
    }
}

/// When several of a station's access categories finish their backoff in the same slot, the
/// highest transmits and each other behaves as if its frame had collided (10.22.2.3, an
/// internal collision): the winner and the losers.
pub fn internal_collision(ready: &[AccessCategory]) -> Option<(AccessCategory, Vec<AccessCategory>)> {
    let winner = *ready.iter().max()?;
    Some((winner, ready.iter().copied().filter(|&ac| ac != winner).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dscps_map_to_access_categories_as_linux_maps_them() {
        use AccessCategory::*;
        // (DSCP, UP, AC) from net/wireless/util.c's cfg80211_classify8021d (Linux 6.11+):
        // the three high bits, and RFC 8325 §4's exceptions.
        let cases = [
            (0, 0, BestEffort),   // DF
            (8, 1, Background),   // CS1, low-priority data
            (10, 0, BestEffort),  // AF11: high-throughput data, not AC_BK
            (16, 0, BestEffort),  // CS2
            (18, 3, BestEffort),  // AF21
            (24, 4, Video),       // CS3
            (26, 4, Video),       // AF31, multimedia streaming
            (32, 4, Video),       // CS4, real-time interactive
            (34, 4, Video),       // AF41
            (40, 5, Video),       // CS5, signalling
            (44, 6, Voice),       // VA
            (46, 6, Voice),       // EF: a call's voice
            (48, 7, Voice),       // CS6
            (56, 7, Voice),       // CS7
            (63, 7, Voice),
        ];
        for (dscp, up, ac) in cases {
            assert_eq!((user_priority(dscp), AccessCategory::of_dscp(dscp)), (up, ac), "DSCP {dscp}");
        }
    }

    #[test]
    fn wmm_defaults_and_the_times_they_give() {
        // 5 GHz OFDM: SIFS 16 µs, slot 9 µs. AC_BE's AIFS = 16 + 3 · 9 = 43 µs (DIFS + a slot);
        // an AP's AC_VO: 16 + 9 = 25 µs, CW 3..7.
        let (sifs, slot) = (Duration::from_micros(16), Duration::from_micros(9));
        let be = EdcaParams::wmm_default(AccessCategory::BestEffort, Role::Station);
        assert_eq!(be.aifs(sifs, slot), Duration::from_micros(43));
        let vo = EdcaParams::wmm_default(AccessCategory::Voice, Role::AccessPoint);
        assert_eq!((vo.aifs(sifs, slot), vo.cw_min, vo.cw_max), (Duration::from_micros(25), 3, 7));
        assert_eq!(vo.txop_limit, Duration::from_micros(1_504));
        // CW doubles per retry up to CWmax: BE 15, 31, 63, ..., 1023, 1023.
        let windows: Vec<u32> = (0..8).map(|r| be.contention_window(r)).collect();
        assert_eq!(windows, [15, 31, 63, 127, 255, 511, 1023, 1023]);
        assert_eq!(EdcaParams::wmm_default(AccessCategory::BestEffort, Role::AccessPoint).contention_window(5), 63);
    }

    #[test]
    fn an_internal_collision_goes_to_the_highest_category() {
        use AccessCategory::*;
        assert_eq!(internal_collision(&[BestEffort, Voice, Video]), Some((Voice, vec![BestEffort, Video])));
        assert_eq!(internal_collision(&[Background]), Some((Background, vec![])));
        assert_eq!(internal_collision(&[]), None);
    }
}
