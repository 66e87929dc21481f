//! Sets of half-open sequence ranges, used by the receiver's reassembly queue (which also
//! yields the SACK blocks of RFC 2018) and by the sender's SACK scoreboard (RFC 6675).
//! Ranges are kept sorted and merged; the sets stay small (a few holes per window).

use crate::packet::SeqNum;

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    ranges: Vec<(SeqNum, SeqNum)>,
}

impl RangeSet {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    pub fn clear(&mut self) {
        self.ranges.clear();
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (SeqNum, SeqNum)> + '_ {
        self.ranges.iter().copied()
    }
    pub fn bytes(&self) -> u64 {
        self.ranges.iter().map(|&(a, b)| (b - a) as u64).sum()
    }
    pub fn highest(&self) -> Option<SeqNum> {
        self.ranges.last().map(|r| r.1)
    }

    /// Adds [start, end), merging with overlapping or adjacent ranges.
    pub fn insert(&mut self, start: SeqNum, end: SeqNum) {
        if end <= start {
            return;
        }
        let (mut s, mut e) = (start, end);
        let mut i = 0;
        while i < self.ranges.len() {
            let (a, b) = self.ranges[i];
            if b < s {
                i += 1;
            } else if e < a {
                break;
            } else {
                s = s.min(a);
                e = e.max(b);
                self.ranges.remove(i);
            }
        }
        self.ranges.insert(i, (s, e));
    }

    /// Drops everything below `seq` (trimming a range that straddles it).
    pub fn remove_below(&mut self, seq: SeqNum) {
        self.ranges.retain(|&(_, b)| b > seq);
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < seq {
                first.0 = seq;
            }
        }
    }

    /// If a range starts at `seq`, removes and returns its end (reassembly: the hole filled).
    pub fn pop_contiguous(&mut self, seq: SeqNum) -> Option<SeqNum> {
        match self.ranges.first() {
            Some(&(a, b)) if a <= seq => {
                self.ranges.remove(0);
                Some(b.max(seq))
            }
            _ => None,
        }
    }

    pub fn contains(&self, seq: SeqNum) -> bool {
        self.ranges.iter().any(|&(a, b)| a <= seq && seq < b)
    }

    /// The range containing `seq`, if any.
    pub fn range_of(&self, seq: SeqNum) -> Option<(SeqNum, SeqNum)> {
        self.ranges.iter().copied().find(|&(a, b)| a <= seq && seq < b)
    }

    /// Bytes in the set at or above `seq`.
    pub fn bytes_above(&self, seq: SeqNum) -> u64 {
        self.ranges
            .iter()
            .filter(|&&(_, b)| b > seq)
            .map(|&(a, b)| (b - a.max(seq)) as u64)
            .sum()
    }

    /// The first gap at or after `from` and below `limit`: [from', to) not in the set.
    pub fn first_gap(&self, from: SeqNum, limit: SeqNum) -> Option<(SeqNum, SeqNum)> {
        let mut s = from;
        for &(a, b) in &self.ranges {
            if b <= s {
                continue;
            }
            if a > s {
                return (s < limit).then_some((s, a.min(limit)));
            }
            s = b;
        }
        (s < limit).then_some((s, limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn s(n: u32) -> SeqNum {
        SeqNum(n)
    }

    #[test]
    fn insert_merges_overlapping_and_adjacent_ranges() {
        let mut r = RangeSet::default();
        r.insert(s(10), s(20));
        r.insert(s(30), s(40));
        r.insert(s(20), s(25)); // adjacent to the first
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(s(10), s(25)), (s(30), s(40))]);
        r.insert(s(24), s(31));
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(s(10), s(40))]);
        assert_eq!(r.bytes(), 30);
    }

    #[test]
    fn gaps_and_bytes_above() {
        let mut r = RangeSet::default();
        r.insert(s(20), s(30));
        r.insert(s(40), s(50));
        assert_eq!(r.first_gap(s(10), s(60)), Some((s(10), s(20))));
        assert_eq!(r.first_gap(s(20), s(60)), Some((s(30), s(40))));
        assert_eq!(r.first_gap(s(45), s(50)), None);
        assert_eq!(r.bytes_above(s(25)), 15);
        r.remove_below(s(25));
        assert_eq!(r.iter().next(), Some((s(25), s(30))));
    }
}
