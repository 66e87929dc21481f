//! Minstrel-HT rate control as Linux 6.x's mac80211 runs it (net/mac80211/rc80211_minstrel_ht.c
//! and .h after Felix Fietkau's 2021 rewrite with sample-rate tables, as of 6.3+), for one
//! sender → receiver link of 802.11n/ac/ax: the rate chain each A-MPDU goes out with, and what
//! its Tx status teaches. One decision per A-MPDU exchange ([`MinstrelHt::rates`]), one status
//! per exchange ([`MinstrelHt::tx_status`]); no timers, no per-slot events.
//!
//! Which Linux function each part follows:
//! - Groups (`minstrel_mcs_groups`, `GROUP_IDX`/`VHT_GROUP_IDX`): a group is one (streams, width,
//!   GI) of one amendment, ordered HT < VHT < HE, then width, then GI (longest first), then
//!   streams; within a group a rate is its MCS; a rate's id is `MI_RATE(group, mcs)` = group << 4 | mcs
//!   over the groups that hold a candidate (Linux skips unsupported groups the same way). HE groups
//!   (Linux's minstrel_ht has none) extend the scheme: three GIs, MCS 0–11, 12-wide sample table.
//! - Durations (`minstrel_get_duration`, `MCS_DURATION`, `GROUP_SHIFT`): Linux tabulates the Data
//!   symbols of `AVG_AMPDU_SIZE` = 16 packets of `AVG_PKT_SIZE` = 1200 B, divided by 16, in ns,
//!   stored `>> shift` (shift = bit length of the group's MCS 0 duration − 16). Here the table is the
//!   Data field of the TxVector's [`TxVector::ppdu_duration`] for an A-MPDU of 16 MPDUs of
//!   `mpdu_bytes` (with delimiters and padding), minus its preamble and signal extension, divided
//!   by 16, with the same shift truncation (HT/VHT short-GI Data fields round up to 4 µs there).
//! - `minstrel_ht_update_caps` → [`MinstrelHt::new`]: `avg_ampdu_len` = FRAC(1, 1), then one
//!   `minstrel_ht_update_stats` and `minstrel_ht_update_rates`: with no statistics every rate's
//!   throughput is 0, so `max_tp_rate[0..4]` and max_prob_rate are the first group's lowest rate
//!   (Linux's `MI_RATE(group 0, 0)`, MCS 0) and the chain is that rate four times, 2 tries each.
//! - `minstrel_filter_avg_add` ([`filter_avg_add`]), `minstrel_ht_calc_rate_stats`, `minstrel_ewma`
//!   (A-MPDU length), `minstrel_ht_get_tp_avg`, `minstrel_ht_avg_ampdu_len`,
//!   `minstrel_ht_sort_best_tp_rates`, `minstrel_ht_set_best_prob_rate`,
//!   `minstrel_ht_prob_rate_reduce_streams` and `minstrel_ht_update_stats` (including its
//!   quirk of giving never-tried rates the best probability of faster tried ones in their group), in
//!   Linux's integer arithmetic (MINSTREL_SCALE 12 fixed point) so the values are the kernel's.
//! - Sample rates: `minstrel_ht_refill_sample_rates`, `_move_sample_rates` (with its `i == j`
//!   quirk: a rate already in place is overwritten by the next kept one), `_next_inc_rate`,
//!   `_next_jump_rate`, `_next_group_sample_rate`, `_group_min_rate_offset`, `_find_sample_rate`,
//!   `minstrel_ht_get_sample_rate` (sequence INC, JUMP, INC, JUMP, INC, SLOW) and `init_sample_table`
//!   (10 columns of random permutations; Linux draws it once per boot for all stations, here
//!   once per link from the rng given to `new`).
//! - `minstrel_ht_get_rate` → [`MinstrelHt::rates`]: at most one sample per
//!   `MINSTREL_SAMPLE_INTERVAL` and one right after each statistics update (which resets
//!   `sample_time`): the sample rate replaces chain entry 0 with 1 try, entries 1–3 stay the rate
//!   table's (mac80211's `rate_control_fill_sta_table`). The whole A-MPDU goes at the sample rate.
//! - `minstrel_ht_update_rates`, `minstrel_ht_set_rate`, `minstrel_calc_retransmit`: the chain is
//!   `max_tp_rate[0]`, `max_tp_rate[1]`, `max_tp_rate[2]`, `max_prob_rate` (hardware with 4 rate slots);
//!   tries = retry_count for entry 0, retry_count_rtscts with RTS/CTS for entries 1–3; 2 tries
//!   for a rate below 20 %.
//! - `minstrel_ht_tx_status` → [`MinstrelHt::tx_status`]: every chain entry used gets attempts +=
//!   tries × MPDUs in the A-MPDU, the last one also success += MPDUs the Block Ack acknowledged;
//!   the "sudden death" check (`minstrel_downgrade_rate`: > 30 attempts and < 1/4 success at
//!   `max_tp_rate[0]` or `[1]` in this interval → the best rate of a lower group with no more streams);
//!   statistics are updated when `now` is past the last update + `update_interval`.
//!
//! Constants (rc80211_minstrel_ht.h unless said): MINSTREL_SCALE 12; MINSTREL_AVG_COEFF2 0x1499,
//! COEFF3 −0x92e, COEFF1 = 4096 − COEFF2 − COEFF3 = 1173; EWMA_LEVEL 96 / EWMA_DIV 128;
//! MAX_THR_RATES 4; SAMPLE_COLUMNS 10; MCS_GROUP_RATES 10 (12 for HE here);
//! MINSTREL_SAMPLE_RATES 5; MINSTREL_SAMPLE_INTERVAL HZ/50 = 20 ms; in the .c:
//! `mp->update_interval` = HZ/20 = 50 ms, AVG_AMPDU_SIZE 16, cw_min 15, cw_max 1023,
//! segment_size 6000 µs, max_retry 7 (its default when the driver gives none), t_slot 9 µs;
//! `mi->overhead` = `ieee80211_frame_duration(0 B, 6 Mb/s)` + ACK (10 B) = 48 + 60 = 108 µs,
//! `overhead_rtscts` = 108 + 2 · 60 = 228 µs; thresholds FRAC(10/20/75/90/95, 100).
//!
//! Simplified: time is continuous ns, not jiffies (`time_after` is `>`); no legacy CCK/OFDM
//! groups (so `minstrel_ht_assign_best_tp_rates` has nothing to do); no A-MSDU limit
//! (`minstrel_ht_get_max_amsdu_len`), SMPS, fixed-rate debugfs, or sample/total packet counters;
//! a candidate set without MCS 0 uses the group's lowest MCS wherever Linux writes `MI_RATE(g, 0)`.
//! The MAC maps an exchange to a status this way: it sends the A-MPDU at entry 0 until a Block
//! Ack comes or the entry's tries are used up, then at entry 1, and so on; the status names the
//! entry and try that ended it (earlier entries count all their tries, with nothing acknowledged).

use super::ppdu::{Amendment, TxVector, AMPDU_DELIMITER};
use crate::{Duration, Time};
use rand_core::RngCore;
use std::collections::BTreeMap;

const SCALE: u32 = 12;
const fn frac(val: u64, div: u64) -> u64 {
    (val << SCALE) / div
}
const fn trunc(val: u64) -> u64 {
    val >> SCALE
}
const AVG_COEFF2: i32 = 0x1499;
const AVG_COEFF3: i32 = -0x92e;
const AVG_COEFF1: i32 = (1 << SCALE) - AVG_COEFF2 - AVG_COEFF3;
const EWMA_LEVEL: i64 = 96;
const EWMA_DIV: i64 = 128;
const MAX_THR_RATES: usize = 4;
const SAMPLE_COLUMNS: usize = 10;
const SAMPLE_RATES: usize = 5;
const MAX_GROUP_RATES: usize = 12;
/// MINSTREL_SAMPLE_INTERVAL (HZ / 50).
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(20);
/// `mp->update_interval` (HZ / 20).
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(50);
const AVG_AMPDU_SIZE: u64 = 16;
const OVERHEAD_US: u64 = 108;
const OVERHEAD_RTSCTS_US: u64 = 228;
const CW_MIN: u64 = 15;
const CW_MAX: u64 = 1023;
const SEGMENT_SIZE_US: u64 = 6000;
const MAX_RETRY: u8 = 7;
const T_SLOT_US: u64 = 9;
const INC: usize = 0;
const JUMP: usize = 1;
const SLOW: usize = 2;
const SAMPLE_SEQ: [usize; 6] = [INC, JUMP, INC, JUMP, INC, SLOW];

/// One entry of a rate chain: the rate and how many times an A-MPDU is sent at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateEntry {
    pub vector: TxVector,
    pub tries: u8,
    /// Linux sets IEEE80211_TX_RC_USE_RTS_CTS on the fallback entries (1–3).
    pub rts_cts: bool,
    rate: u16,
}

/// The rates of one A-MPDU exchange, tried in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateChain {
    pub entries: [RateEntry; 4],
    /// Entry 0 is a sample rate (IEEE80211_TX_CTL_RATE_CTRL_PROBE).
    pub sample: bool,
}

/// How one A-MPDU exchange ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxStatus {
    /// The chain [`MinstrelHt::rates`] gave for it.
    pub chain: RateChain,
    /// The entry that carried the last transmission; each entry before it used all its tries
    /// without a Block Ack.
    pub entry: usize,
    /// Transmissions at `entry`, 1..=its tries.
    pub tries: u8,
    /// MPDUs in the A-MPDU.
    pub mpdus: u32,
    /// MPDUs the Block Ack acknowledged (0: none came).
    pub acked: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct RateStats {
    attempts: u64,
    success: u64,
    att_hist: u64,
    succ_hist: u64,
    prob_avg: u16,
    prob_avg_1: u16,
    retry_count: u8,
    retry_count_rtscts: u8,
    retry_updated: bool,
}

#[derive(Clone, Debug, Default)]
struct Group {
    streams: u8,
    supported: u16,
    shift: u32,
    vectors: [Option<TxVector>; MAX_GROUP_RATES],
    duration: [u64; MAX_GROUP_RATES],
    index: usize,
    column: usize,
    max_group_tp_rate: [u16; MAX_THR_RATES],
    max_group_prob_rate: u16,
    rates: [RateStats; MAX_GROUP_RATES],
}

/// Linux's per-packet duration of `v` (see the module doc), ns, before the shift.
fn avg_duration(v: &TxVector, mpdu_bytes: u64) -> u64 {
    let sub = AMPDU_DELIMITER + mpdu_bytes;
    let psdu = (AVG_AMPDU_SIZE - 1) * sub.next_multiple_of(4) + sub;
    (v.ppdu_duration(psdu) - v.preamble() - v.band.signal_extension()).as_nanos() / AVG_AMPDU_SIZE
}

/// `minstrel_filter_avg_add`: the noise filter of the success probability (scaled by 4096).
pub fn filter_avg_add(prev_1: &mut u16, prev_2: &mut u16, input: i32) -> i32 {
    let input = if input == 0 { 1 } else { input };
    let out_1 = *prev_1 as i32;
    let (val, out_1) = if out_1 == 0 {
        (input, input)
    } else {
        let v = (AVG_COEFF1 * input + AVG_COEFF2 * out_1 + AVG_COEFF3 * *prev_2 as i32) >> SCALE;
        (if v < 0 { 1 } else { v.min(1 << SCALE) }, out_1)
    };
    *prev_2 = out_1 as u16;
    *prev_1 = val as u16;
    val
}

fn rate_id(group: usize, idx: usize) -> u16 {
    (group << 4 | idx) as u16
}
fn grp(rate: u16) -> usize {
    (rate >> 4) as usize
}
fn idx(rate: u16) -> usize {
    (rate & 0xf) as usize
}

/// Minstrel-HT's state for one link.
#[derive(Clone, Debug)]
pub struct MinstrelHt {
    groups: Vec<Group>,
    n_rates: usize,
    sample_table: [[u8; MAX_GROUP_RATES]; SAMPLE_COLUMNS],
    ampdu_len: u64,
    ampdu_packets: u64,
    avg_ampdu_len: u64,
    max_tp_rate: [u16; MAX_THR_RATES],
    max_prob_rate: u16,
    last_stats_update: Time,
    sample_time: Time,
    sample_seq: usize,
    sample_group: [usize; 3],
    sample_rates: [[u16; SAMPLE_RATES]; 3],
    table: [RateEntry; 4],
}

impl MinstrelHt {
    /// The link's candidate rates, the typical MPDU size for durations (Linux: 1200 B), the
    /// association time and the rng the sample table is drawn from.
    pub fn new(candidates: Vec<TxVector>, mpdu_bytes: u64, now: Time, rng: &mut impl RngCore) -> Self {
        assert!(!candidates.is_empty(), "Minstrel-HT needs at least one candidate rate");
        let mut by_key: BTreeMap<(u8, u16, usize, u8), Group> = BTreeMap::new();
        for v in &candidates {
            let gi_rank = v.amendment.guard_intervals().iter().filter(|&&gi| gi > v.guard_interval).count();
            let g = by_key.entry((v.amendment as u8, v.width, gi_rank, v.streams)).or_insert_with(|| {
                let bits = u64::BITS - avg_duration(&TxVector { mcs: 0, ..*v }, mpdu_bytes).leading_zeros();
                Group { streams: v.streams, shift: bits.saturating_sub(16), ..Group::default() }
            });
            let m = v.mcs as usize;
            g.supported |= 1 << m;
            g.vectors[m] = Some(*v);
            g.duration[m] = avg_duration(v, mpdu_bytes) >> g.shift << g.shift;
        }
        // Linux's sample_group starts at its group 0, HT 1×20 MHz long GI; the sweep begins after it.
        let first = by_key.keys().next().copied();
        let groups: Vec<Group> = by_key.into_values().collect();
        let start = if first == Some((Amendment::Ht as u8, 20, 0, 1)) { 0 } else { groups.len() - 1 };
        let n_rates = if candidates.iter().any(|v| v.amendment == Amendment::He) { 12 } else { 10 };
        let mut sample_table = [[0xff; MAX_GROUP_RATES]; SAMPLE_COLUMNS];
        for col in sample_table.iter_mut() {
            let mut rnd = [0u8; MAX_GROUP_RATES];
            rng.fill_bytes(&mut rnd[..n_rates]);
            for (i, &r) in rnd.iter().enumerate().take(n_rates) {
                let mut k = (i + r as usize) % n_rates;
                while col[k] != 0xff {
                    k = (k + 1) % n_rates;
                }
                col[k] = i as u8;
            }
        }
        let lowest = rate_id(0, groups[0].supported.trailing_zeros() as usize);
        let entry = RateEntry { vector: groups[0].vectors[idx(lowest)].unwrap(), tries: 2, rts_cts: false, rate: lowest };
        let mut m = MinstrelHt {
            groups,
            n_rates,
            sample_table,
            ampdu_len: 0,
            ampdu_packets: 0,
            avg_ampdu_len: frac(1, 1),
            max_tp_rate: [lowest; MAX_THR_RATES],
            max_prob_rate: lowest,
            last_stats_update: now,
            sample_time: now,
            sample_seq: 0,
            sample_group: [start; 3],
            sample_rates: [[0; SAMPLE_RATES]; 3],
            table: [entry; 4],
        };
        m.update_stats(now);
        m.update_rates();
        m
    }

    /// The chain for the next A-MPDU at `now` (`minstrel_ht_get_rate`).
    pub fn rates(&mut self, now: Time) -> RateChain {
        let mut chain = RateChain { entries: self.table, sample: false };
        if now < self.sample_time {
            return chain;
        }
        self.sample_time = now + SAMPLE_INTERVAL;
        let rate = self.get_sample_rate();
        if rate != 0 {
            chain.entries[0] = RateEntry { vector: self.vector(rate), tries: 1, rts_cts: false, rate };
            chain.sample = true;
        }
        chain
    }

    /// The Tx status of one A-MPDU exchange (`minstrel_ht_tx_status`).
    pub fn tx_status(&mut self, now: Time, status: &TxStatus) {
        debug_assert!(status.entry < 4 && status.tries >= 1, "{status:?}");
        let len = status.mpdus.max(1) as u64;
        self.ampdu_packets += 1;
        self.ampdu_len += len;
        for (k, e) in status.chain.entries.iter().enumerate().take(status.entry + 1) {
            let last = k == status.entry;
            let tries = if last { status.tries } else { e.tries };
            let s = self.stats_mut(e.rate);
            s.attempts += tries as u64 * len;
            if last {
                s.success += (status.acked as u64).min(len);
            }
        }
        let mut update = false;
        for (slot, primary) in [(0, true), (1, false)] {
            let s = self.stats(self.max_tp_rate[slot]);
            if s.attempts > 30 && s.success < s.attempts / 4 {
                self.downgrade_rate(slot, primary);
                update = true;
            }
        }
        if now > self.last_stats_update + UPDATE_INTERVAL {
            update = true;
            self.update_stats(now);
        }
        if update {
            self.update_rates();
        }
    }

    /// `max_tp_rate[0]`.
    pub fn max_tp(&self) -> TxVector {
        self.vector(self.max_tp_rate[0])
    }

    /// max_prob_rate.
    pub fn max_prob(&self) -> TxVector {
        self.vector(self.max_prob_rate)
    }

    fn vector(&self, rate: u16) -> TxVector {
        self.groups[grp(rate)].vectors[idx(rate)].expect("a candidate rate")
    }
    fn stats(&self, rate: u16) -> &RateStats {
        &self.groups[grp(rate)].rates[idx(rate)]
    }
    fn stats_mut(&mut self, rate: u16) -> &mut RateStats {
        &mut self.groups[grp(rate)].rates[idx(rate)]
    }
    fn prob(&self, rate: u16) -> u64 {
        self.stats(rate).prob_avg as u64
    }
    fn duration(&self, rate: u16) -> u64 {
        self.groups[grp(rate)].duration[idx(rate)]
    }
    fn lowest(&self, g: usize) -> u16 {
        rate_id(g, self.groups[g].supported.trailing_zeros() as usize)
    }
    fn supports(&self, g: usize, i: usize) -> bool {
        self.groups[g].supported & (1 << i) != 0
    }

    /// `minstrel_ht_avg_ampdu_len`. Its guess from max_tp's duration when the average is 0
    /// (drivers without A-MPDU lengths) is unreachable here: the average starts at FRAC(1, 1).
    fn avg_ampdu(&self) -> u64 {
        trunc(self.avg_ampdu_len)
    }

    /// `minstrel_ht_get_tp_avg`: packets per 10 ms, scaled as Linux's.
    fn tp_avg(&self, rate: u16, prob: u64) -> u64 {
        if prob < frac(10, 100) {
            return 0;
        }
        let nsecs = 1000 * OVERHEAD_US / self.avg_ampdu() + self.duration(rate);
        trunc(100 * (prob.min(frac(90, 100)) * 1_000_000 / nsecs))
    }

    fn sort_best_tp_rates(&self, index: u16, list: &mut [u16; MAX_THR_RATES]) {
        let cur_prob = self.prob(index);
        let cur_tp = self.tp_avg(index, cur_prob);
        let mut j = MAX_THR_RATES;
        while j > 0 {
            let tmp_prob = self.prob(list[j - 1]);
            let tmp_tp = self.tp_avg(list[j - 1], tmp_prob);
            if cur_tp < tmp_tp || (cur_tp == tmp_tp && cur_prob <= tmp_prob) {
                break;
            }
            j -= 1;
        }
        if j < MAX_THR_RATES - 1 {
            list.copy_within(j..MAX_THR_RATES - 1, j + 1);
        }
        if j < MAX_THR_RATES {
            list[j] = index;
        }
    }

    fn set_best_prob_rate(&mut self, dest: &mut u16, index: u16) {
        let g = grp(index);
        let prob = self.prob(index);
        let tmp_prob = self.prob(*dest);
        let tmp_tp = self.tp_avg(*dest, tmp_prob);
        let max_tp = self.max_tp_rate[0];
        if self.duration(max_tp) > self.duration(index) && prob < self.prob(max_tp) {
            return;
        }
        let gpr = self.groups[g].max_group_prob_rate;
        let gpr_prob = self.prob(gpr);
        if prob > frac(75, 100) {
            let cur_tp = self.tp_avg(index, prob);
            if cur_tp > tmp_tp {
                *dest = index;
            }
            if cur_tp > self.tp_avg(gpr, gpr_prob) {
                self.groups[g].max_group_prob_rate = index;
            }
        } else {
            if prob > tmp_prob {
                *dest = index;
            }
            if prob > gpr_prob {
                self.groups[g].max_group_prob_rate = index;
            }
        }
    }

    fn prob_rate_reduce_streams(&mut self) {
        let max_streams = self.groups[grp(self.max_tp_rate[0])].streams;
        let mut tmp_tp = 0;
        for g in 0..self.groups.len() {
            let gpr = self.groups[g].max_group_prob_rate;
            let tp = self.tp_avg(gpr, self.prob(gpr));
            if tmp_tp < tp && self.groups[g].streams < max_streams {
                self.max_prob_rate = gpr;
                tmp_tp = tp;
            }
        }
    }

    /// `minstrel_ht_update_stats`.
    fn update_stats(&mut self, now: Time) {
        if self.ampdu_packets > 0 {
            let (old, new) = (self.avg_ampdu_len as i64, frac(self.ampdu_len, self.ampdu_packets) as i64);
            self.avg_ampdu_len = (old + (EWMA_DIV - EWMA_LEVEL) * (new - old) / EWMA_DIV) as u64;
            self.ampdu_len = 0;
            self.ampdu_packets = 0;
        }
        let mut tmp_mcs_tp = [self.lowest(0); MAX_THR_RATES];
        let mut tmp_prob_rate = self.lowest(0);
        for g in 0..self.groups.len() {
            let mut tmp_group_tp = [self.lowest(g); MAX_THR_RATES];
            let mut last_prob = 0;
            for i in (0..self.n_rates).rev() {
                if !self.supports(g, i) {
                    continue;
                }
                let index = rate_id(g, i);
                let s = self.stats_mut(index);
                s.retry_updated = false;
                if s.attempts > 0 {
                    let cur = frac(s.success, s.attempts) as i32;
                    filter_avg_add(&mut s.prob_avg, &mut s.prob_avg_1, cur);
                    s.att_hist += s.attempts;
                    s.succ_hist += s.success;
                }
                s.attempts = 0;
                s.success = 0;
                if s.att_hist > 0 {
                    last_prob = last_prob.max(s.prob_avg);
                } else {
                    s.prob_avg = s.prob_avg.max(last_prob);
                }
                if self.tp_avg(index, self.prob(index)) == 0 {
                    continue;
                }
                self.sort_best_tp_rates(index, &mut tmp_mcs_tp);
                self.sort_best_tp_rates(index, &mut tmp_group_tp);
            }
            self.groups[g].max_group_tp_rate = tmp_group_tp;
        }
        self.max_tp_rate = tmp_mcs_tp;
        for g in 0..self.groups.len() {
            self.groups[g].max_group_prob_rate = self.lowest(g);
            for i in 0..self.n_rates {
                if self.supports(g, i) {
                    self.set_best_prob_rate(&mut tmp_prob_rate, rate_id(g, i));
                }
            }
        }
        self.max_prob_rate = tmp_prob_rate;
        self.prob_rate_reduce_streams();
        self.refill_sample_rates();
        self.last_stats_update = now;
        self.sample_time = now;
    }

    /// `minstrel_ht_find_sample_rate`: in the list before its first empty slot (0 matches that).
    fn find_sample_rate(&self, ty: usize, index: u16) -> bool {
        self.sample_rates[ty].iter().find(|&&cur| cur == index || cur == 0) == Some(&index)
    }

    fn move_sample_rates(&mut self, ty: usize, fast: u64, slow: u64) -> usize {
        let mut j = 0;
        for i in 0..SAMPLE_RATES {
            let cur = self.sample_rates[ty][i];
            if cur == 0 {
                continue;
            }
            let d = self.duration(cur);
            if !(if ty == SLOW { d > fast && d < slow } else { d < fast }) {
                self.sample_rates[ty][i] = 0;
            } else if i != j {
                // (Linux's quirk: at i == j, j stays, so the next kept rate overwrites this one.)
                (self.sample_rates[ty][j], self.sample_rates[ty][i]) = (cur, 0);
                j += 1;
            }
        }
        j
    }

    fn group_min_rate_offset(&self, g: usize, max_duration: u64) -> Option<usize> {
        (0..self.n_rates).find(|&i| self.supports(g, i) && self.duration(rate_id(g, i)) < max_duration)
    }

    fn next_inc_rate(&mut self, fast_rate_dur: u64) -> u16 {
        let n = self.groups.len();
        let mut group = self.sample_group[INC];
        let mut found = 0;
        for _ in 0..n {
            group = (group + 1) % n;
            if let Some(i) = self.group_min_rate_offset(group, fast_rate_dur) {
                if !self.find_sample_rate(INC, rate_id(group, i)) {
                    found = rate_id(group, i);
                    break;
                }
            }
        }
        self.sample_group[INC] = group;
        found
    }

    fn next_group_sample_rate(&mut self, g: usize, offset: usize) -> Option<u16> {
        let n = self.n_rates;
        let mg = &mut self.groups[g];
        for _ in 0..n {
            let i = self.sample_table[mg.column][mg.index] as usize;
            mg.index += 1;
            if mg.index >= n {
                mg.index = 0;
                mg.column = (mg.column + 1) % SAMPLE_COLUMNS;
            }
            if i >= offset && mg.supported & (1 << i) != 0 {
                return Some(rate_id(g, i));
            }
        }
        None
    }

    fn next_jump_rate(&mut self, fast: u64, slow: u64, slow_ofs: &mut usize) -> u16 {
        let mut max_duration = if *slow_ofs >= SAMPLE_RATES { fast } else { slow };
        let n = self.groups.len();
        let mut group = self.sample_group[JUMP];
        let mut found = 0;
        for _ in 0..n {
            group = (group + 1) % n;
            let Some(offset) = self.group_min_rate_offset(group, max_duration) else { continue };
            let Some(index) = self.next_group_sample_rate(group, offset) else { continue };
            let d = self.duration(index);
            let ty = if d < fast { JUMP } else { SLOW };
            if self.find_sample_rate(ty, index) {
                continue;
            }
            if ty == JUMP {
                found = index;
                break;
            }
            if *slow_ofs >= SAMPLE_RATES || d >= slow || self.prob(index) > frac(95, 100) {
                continue;
            }
            self.sample_rates[SLOW][*slow_ofs] = index;
            *slow_ofs += 1;
            if *slow_ofs >= SAMPLE_RATES {
                max_duration = fast;
            }
        }
        self.sample_group[JUMP] = group;
        found
    }

    fn refill_sample_rates(&mut self) {
        let prob_dur = self.duration(self.max_prob_rate);
        let tp_dur = self.duration(self.max_tp_rate[0]);
        let tp2_dur = self.duration(self.max_tp_rate[1]);
        let fast = tp_dur.min(tp2_dur).min(prob_dur);
        let slow = tp_dur.max(tp2_dur).max(prob_dur);
        for i in self.move_sample_rates(INC, fast, slow)..SAMPLE_RATES {
            self.sample_rates[INC][i] = self.next_inc_rate(tp_dur);
            if self.sample_rates[INC][i] == 0 {
                break;
            }
        }
        let first = self.move_sample_rates(JUMP, fast, slow);
        let mut j = self.move_sample_rates(SLOW, fast, slow);
        for i in first..SAMPLE_RATES {
            self.sample_rates[JUMP][i] = self.next_jump_rate(fast, slow, &mut j);
            if self.sample_rates[JUMP][i] == 0 {
                break;
            }
        }
    }

    fn get_sample_rate(&mut self) -> u16 {
        let ty = SAMPLE_SEQ[self.sample_seq];
        self.sample_seq = (self.sample_seq + 1) % SAMPLE_SEQ.len();
        self.sample_rates[ty].iter_mut().find(|r| **r != 0).map_or(0, std::mem::take)
    }

    /// `minstrel_calc_retransmit`: tries that fit the 6 ms segment, with and without RTS/CTS.
    fn calc_retransmit(&mut self, index: u16) {
        let data = self.duration(index) * self.avg_ampdu() / 1000;
        let s = self.stats_mut(index);
        if (s.prob_avg as u64) < frac(1, 10) {
            (s.retry_count, s.retry_count_rtscts) = (1, 1);
            return;
        }
        (s.retry_count, s.retry_count_rtscts, s.retry_updated) = (2, 2, true);
        let mut cw = CW_MIN;
        let mut ctime = (T_SLOT_US * cw) >> 1;
        cw = ((cw << 1) | 1).min(CW_MAX);
        ctime += (T_SLOT_US * cw) >> 1;
        cw = ((cw << 1) | 1).min(CW_MAX);
        let mut tx_time = ctime + 2 * (OVERHEAD_US + data);
        let mut tx_time_rtscts = ctime + 2 * (OVERHEAD_RTSCTS_US + data);
        loop {
            let ctime = (T_SLOT_US * cw) >> 1;
            cw = ((cw << 1) | 1).min(CW_MAX);
            tx_time += ctime + OVERHEAD_US + data;
            tx_time_rtscts += ctime + OVERHEAD_RTSCTS_US + data;
            if tx_time_rtscts < SEGMENT_SIZE_US {
                s.retry_count_rtscts += 1;
            }
            if tx_time >= SEGMENT_SIZE_US {
                break;
            }
            s.retry_count += 1;
            if s.retry_count >= MAX_RETRY {
                break;
            }
        }
    }

    fn set_rate(&mut self, offset: usize, index: u16) -> RateEntry {
        if !self.stats(index).retry_updated {
            self.calc_retransmit(index);
        }
        let s = self.stats(index);
        let (count, count_rts) = if (s.prob_avg as u64) < frac(20, 100) || s.retry_count == 0 { (2, 2) } else { (s.retry_count, s.retry_count_rtscts) };
        RateEntry { vector: self.vector(index), tries: if offset > 0 { count_rts } else { count }, rts_cts: offset > 0, rate: index }
    }

    /// `minstrel_ht_update_rates`: the rate table entries 1–3 fall back to.
    fn update_rates(&mut self) {
        let [t0, t1, t2, _] = self.max_tp_rate;
        self.table = [self.set_rate(0, t0), self.set_rate(1, t1), self.set_rate(2, t2), self.set_rate(3, self.max_prob_rate)];
    }

    /// `minstrel_downgrade_rate`.
    fn downgrade_rate(&mut self, slot: usize, primary: bool) {
        let orig = grp(self.max_tp_rate[slot]);
        let streams = self.groups[orig].streams;
        if let Some(g) = (0..orig).rev().find(|&g| self.groups[g].streams <= streams) {
            self.max_tp_rate[slot] = self.groups[g].max_group_tp_rate[if primary { 0 } else { 1 }];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStreams;
    use crate::wifi::ppdu::Band;

    fn vht(mcs: u8, streams: u8, width: u16, gi: u16) -> TxVector {
        TxVector::new(Amendment::Vht, mcs, streams, width, gi, Band::Ghz5).unwrap()
    }
    fn link(vectors: Vec<TxVector>) -> MinstrelHt {
        MinstrelHt::new(vectors, 1200, Time::ZERO, &mut RngStreams::new(1).stream("minstrel"))
    }
    fn vht40(gis: &[u16]) -> Vec<TxVector> {
        gis.iter().flat_map(|&gi| (0..=9).map(move |m| vht(m, 1, 40, gi))).collect()
    }
    fn ms(k: u64) -> Time {
        Time(k * 1_000_000)
    }

    /// One exchange of `mpdus` MPDUs: each entry is tried until `acked(rate) > 0` or its tries
    /// run out. Returns whether it was a sample.
    fn exchange(m: &mut MinstrelHt, now: Time, mpdus: u32, acked: &dyn Fn(&TxVector) -> u32) -> bool {
        let chain = m.rates(now);
        let mut st = TxStatus { chain, entry: 3, tries: chain.entries[3].tries, mpdus, acked: 0 };
        'chain: for (k, e) in chain.entries.iter().enumerate() {
            for t in 1..=e.tries {
                if acked(&e.vector) > 0 {
                    (st.entry, st.tries, st.acked) = (k, t, acked(&e.vector));
                    break 'chain;
                }
            }
        }
        m.tx_status(now, &st);
        chain.sample
    }
    fn run(m: &mut MinstrelHt, calls: u64, mpdus: u32, acked: &dyn Fn(&TxVector) -> u32) -> usize {
        (1..=calls).filter(|&k| exchange(m, ms(k), mpdus, acked)).count()
    }

    #[test]
    fn the_filter_is_linux_integer_arithmetic() {
        // C1 = 4096 − 5273 + 2350 = 1173. 100 % twice: the first input seeds both taps (4096),
        // the second gives (1173 + 5273 − 2350) · 4096 >> 12 = 4096. Then 0 % (input 0 → 1):
        // (1173 + 5273·4096 − 2350·4096) >> 12 = 11 973 781 >> 12 = 2923;
        // (1173 + 5273·2923 − 2350·4096) >> 12 = 5 788 552 >> 12 = 1413;
        // (1173 + 5273·1413 − 2350·2923) >> 12 = 582 872 >> 12 = 142;
        // (1173 + 5273·142 − 2350·1413) = −2 570 611 < 0 → 1; (1173 + 5273 − 2350·142) < 0 → 1;
        // (1173 + 5273 − 2350) >> 12 = 1.
        let (mut p1, mut p2) = (0u16, 0u16);
        let out: Vec<i32> = [4096, 4096, 0, 0, 0, 0, 0, 0].iter().map(|&x| filter_avg_add(&mut p1, &mut p2, x)).collect();
        assert_eq!(out, [4096, 4096, 2923, 1413, 142, 1, 1, 1]);
        assert_eq!(AVG_COEFF1, 1173);
    }

    #[test]
    fn throughput_is_minstrel_ht_get_tp_avg() {
        // HT MCS 7, 1×20 MHz, long GI: 16 MPDUs of 1200 B are 19 264 B, ⌈(16 + 154 112 + 6) / 260⌉
        // = 593 symbols = 2372 µs, /16 = 148 250 ns; the group's shift is 5 (MCS 0: 5929 symbols,
        // 1 482 250 ns, 21 bits), so 148 250 >> 5 << 5 = 148 224 ns.
        let ht: Vec<TxVector> = (0..=7).map(|m| TxVector::new(Amendment::Ht, m, 1, 20, 800, Band::Ghz5).unwrap()).collect();
        let mut m = link(ht);
        let r7 = rate_id(0, 7);
        assert_eq!(m.duration(r7), 148_224);
        // Average A-MPDU of 16: nsecs = 108 000 / 16 + 148 224 = 154 974. At 95 % (3891, capped
        // to 3686): 3 686 000 000 / 154 974 = 23 784; · 100 >> 12 = 580. At 50 % (2048):
        // 2 048 000 000 / 154 974 = 13 215 → 1 321 500 >> 12 = 322. Below 10 % (409): 0.
        m.avg_ampdu_len = frac(16, 1);
        assert_eq!(m.tp_avg(r7, 3891), 580);
        assert_eq!(m.tp_avg(r7, 4096), 580);
        assert_eq!(m.tp_avg(r7, 2048), 322);
        assert_eq!(m.tp_avg(r7, 408), 0);
    }

    #[test]
    fn starts_at_the_lowest_rate_and_climbs_to_the_best_working_one() {
        // update_caps: every rate at 0 % → the chain is MCS 0 four times, 2 tries each.
        let mut m = link(vht40(&[800, 400]));
        assert!(m.rates(Time::ZERO).sample); // sample_time = association time
        let chain = m.rates(ms(1));
        assert!(chain.entries.iter().all(|e| e.vector == vht(0, 1, 40, 800) && e.tries == 2));
        // MCS ≤ 5 always acknowledged, above never. After 2 s every working rate is at 100 %,
        // capped to 90 %, so throughput ranks by duration: short GI MCS 5 (80 496 ns) > long GI
        // MCS 5 (89 248) > short GI MCS 4 (107 248) > long GI MCS 4 (118 992); max_prob is the
        // best rate above 75 %: the max-throughput rate itself.
        run(&mut m, 2000, 20, &|v| if v.mcs <= 5 { 20 } else { 0 });
        assert_eq!(m.max_tp(), vht(5, 1, 40, 400));
        assert_eq!(m.max_prob(), vht(5, 1, 40, 400));
        let got: Vec<TxVector> = m.table.iter().map(|e| e.vector).collect();
        assert_eq!(got, [vht(5, 1, 40, 400), vht(5, 1, 40, 800), vht(4, 1, 40, 400), vht(5, 1, 40, 400)]);
    }

    #[test]
    fn max_tp_is_the_best_capped_probability_times_rate() {
        // VHT 1×40 MHz long GI. Durations: MCS 5 89 248, MCS 6 79 488, MCS 7 71 488, MCS 8 59 488 ns.
        // A-MPDUs of 20: avg_ampdu_len climbs from 4096 by ⌊(81 920 − avg) / 4⌋ per update and
        // stops 3 short (81 917), so TRUNC gives 19 and the overhead share is 108 000 / 19 = 5684 ns.
        // The filter settles within 3 below a constant input: 95 % → 3891 (capped 3686), 60 % →
        // 2456. tp: MCS 7 3686e6 / 77 172 = 47 763 → ·100 >> 12 = 1166; MCS 6 3686e6 / 85 172 →
        // 1056; MCS 5 3686e6 / 94 932 → 947; MCS 8 2456e6 / 65 172 → 920: max_tp = [7, 6, 5, 8];
        // max_prob = MCS 7 (best throughput above 75 %; MCS 8, faster with less, is skipped).
        let mut m = link(vht40(&[800]));
        run(&mut m, 3000, 20, &|v| [20, 20, 20, 20, 20, 20, 20, 19, 12, 2][v.mcs as usize]);
        assert_eq!(m.avg_ampdu(), 19);
        assert_eq!([6, 7, 8].map(|i| m.tp_avg(rate_id(0, i), m.prob(rate_id(0, i)))), [1056, 1166, 920]);
        assert_eq!(m.max_tp_rate, [7, 6, 5, 8].map(|i| rate_id(0, i)));
        assert_eq!((m.max_tp(), m.max_prob()), (vht(7, 1, 40, 800), vht(7, 1, 40, 800)));
        // 100 % at MCS 7 but 80 % at MCS 8 (3276): with the 90 % cap MCS 8 wins, 3276e6 / 65 172
        // → 1227 against 1166; uncapped MCS 7 would (4096e6 / 77 172 → 1295). MCS 8 is above 75 %
        // with the best throughput, so it is max_prob too.
        let mut m = link(vht40(&[800]));
        run(&mut m, 3000, 20, &|v| [20, 20, 20, 20, 20, 20, 20, 20, 16, 2][v.mcs as usize]);
        assert_eq!((m.max_tp(), m.max_prob()), (vht(8, 1, 40, 800), vht(8, 1, 40, 800)));
        let (r7, r8) = (rate_id(0, 7), rate_id(0, 8));
        assert_eq!((m.tp_avg(r8, m.prob(r8)), m.tp_avg(r7, m.prob(r7))), (1227, 1166));
        let uncapped7 = trunc(100 * (4096 * 1_000_000 / (1000 * OVERHEAD_US / m.avg_ampdu() + m.duration(r7))));
        assert_eq!(uncapped7, 1295);
    }

    #[test]
    fn samples_three_slots_per_update_interval() {
        // HT, 1–2 streams, 20/40 MHz, both GIs (8 groups); only MCS 0 of 1×20 MHz long GI works,
        // so max_tp[0..4] = max_prob = that rate: fast = slow duration, the SLOW list stays empty,
        // INC and JUMP always hold faster rates. One A-MPDU per ms: an update at the first status
        // past 50 ms (every 51 calls) resets sample_time, then samples at +1, +21, +41 ms: 3 slots
        // per interval, taking INC, JUMP, INC, JUMP, INC, SLOW in turn: 5 samples per 2 intervals.
        // 100 intervals (5100 calls): 250 samples, 4.9 % of A-MPDUs.
        let mut ht = Vec::new();
        for (w, gi, n) in [(20, 800, 1), (20, 800, 2), (20, 400, 1), (20, 400, 2), (40, 800, 1), (40, 800, 2), (40, 400, 1), (40, 400, 2)] {
            ht.extend((0..=7).map(|mcs| TxVector::new(Amendment::Ht, mcs, n, w, gi, Band::Ghz5).unwrap()));
        }
        let base = ht[0];
        let mut m = link(ht);
        assert_eq!(run(&mut m, 5100, 10, &|v| if *v == base { 10 } else { 0 }), 250);
        assert_eq!(m.max_tp(), base);
    }

    #[test]
    fn retry_chain_is_minstrel_calc_retransmit() {
        // VHT 1×40 MHz long GI, average A-MPDU 8. MCS 0–4 at 100 %, 5–7 at 75 % (FRAC 3072, not
        // above 75 %), 8–9 at 0: max_tp = [7, 6, 5, 4] (0.75/84 988 > 0.75/92 988 > 0.75/102 748 >
        // 0.9/132 492 per ns), max_prob = MCS 4 (best throughput above 75 %).
        // calc_retransmit, MCS 7: data = 71 488 · 8 / 1000 = 571 µs; contention 67 + 139 = 206;
        // tx = 206 + 2 · (108 + 571) = 1564, rts = 206 + 2 · (228 + 571) = 1804; then per try
        // (contention 283, 571, 1147, 2299): tx 2526, 3776, 5602, 8580 → 5 tries; rts 2886,
        // 4256 (< 6000), 6202 → 4. MCS 6 (635 µs): tx 1692, 2718, 4032, 5922, 8964 → 5; rts 1932,
        // 3078, 4512, 6522 → 4. MCS 5 (713 µs): tx 1848, 2952, 4344, 6312 → 4; rts 2088, 3312,
        // 4824 → 4. MCS 4 (951 µs): tx 2324, 3666, 5296, 7502 → 4; rts 2564, 4026, 5776 → 4.
        // Entry 0 takes retry_count, entries 1–3 retry_count_rtscts with RTS/CTS.
        let mut m = link(vht40(&[800]));
        m.avg_ampdu_len = frac(8, 1);
        for (i, p) in [4096, 4096, 4096, 4096, 4096, 3072, 3072, 3072, 1, 1].into_iter().enumerate() {
            let s = m.stats_mut(rate_id(0, i));
            (s.prob_avg, s.att_hist) = (p, 1);
        }
        m.update_stats(ms(100));
        m.update_rates();
        let got: Vec<(u8, u8, bool)> = m.rates(ms(101)).entries.iter().skip(1).map(|e| (e.vector.mcs, e.tries, e.rts_cts)).collect();
        assert_eq!(got, [(6, 4, true), (5, 4, true), (4, 4, true)]);
        assert_eq!((m.table[0].vector.mcs, m.table[0].tries, m.table[0].rts_cts), (7, 5, false));
        assert_eq!(m.max_tp_rate, [7, 6, 5, 4].map(|i| rate_id(0, i)));
    }

    #[test]
    fn sudden_death_downgrades_to_fewer_streams() {
        // 2 streams stop working: > 30 attempts with < 1/4 success at max_tp[0] within one
        // interval moves it to the best rate of a lower group with no more streams (1×20 MHz).
        let mut m = link((0..=9).flat_map(|m| [vht(m, 1, 40, 800), vht(m, 2, 40, 800)]).collect());
        run(&mut m, 1000, 20, &|v| if v.mcs <= 4 { 20 } else { 0 });
        assert_eq!(m.max_tp(), vht(4, 2, 40, 800));
        // A fresh interval (its sample slot used up), then one A-MPDU of 20 that fails at 2
        // streams: entry 0 alone counts ≥ 2 tries · 20 = 40 attempts, 0 successes.
        m.update_stats(ms(1000));
        m.update_rates();
        assert!(m.rates(ms(1000)).sample);
        exchange(&mut m, ms(1001), 20, &|v| if v.streams == 1 && v.mcs <= 4 { 20 } else { 0 });
        assert_eq!(m.max_tp(), vht(4, 1, 40, 800));
    }

    #[test]
    fn same_seed_same_decisions() {
        let chains = || {
            let mut m = link(vht40(&[800, 400]));
            (1..=500).map(|k| (exchange(&mut m, ms(k), 10, &|v| if v.mcs < 7 { 9 } else { 1 }), m.table)).collect::<Vec<_>>()
        };
        assert_eq!(chains(), chains());
    }
}
