//! Congestion window arithmetic of RFC 5681 with the NewReno loss response of RFC 6582.
//! The recovery state machine (duplicate ACK counting, partial ACKs, the `recover` variable)
//! lives in `socket.rs`; this file holds only the window rules, so a later CUBIC can replace it.

use super::cubic::Cubic;
use lasthop_core::{Duration, Time};

/// How NewReno's congestion avoidance grows cwnd.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaIncrease {
    /// Appropriate byte counting (RFC 3465 with L = 1, RFC 5681 §3.1's preferred form, Linux):
    /// one SMSS per cwnd of acknowledged bytes, so delayed ACKs do not slow the growth.
    #[default]
    Bytes,
    /// SMSS²/cwnd per ACK (RFC 5681 eq. 3 as ns-2, ns-3's TcpNewReno and OPNET implement it):
    /// with delayed ACKs cwnd grows about half an SMSS per round trip.
    PerAck,
}

/// cwnd/ssthresh rules of RFC 5681, in bytes; with `cubic`, congestion avoidance and the
/// multiplicative decrease follow RFC 9438 instead.
#[derive(Clone, Debug)]
pub struct NewReno {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub cubic: Option<Cubic>,
    pub increase: CaIncrease,
    mss: u64,
    /// Bytes acknowledged in congestion avoidance since cwnd last grew (RFC 5681 §3.1, the
    /// byte-counting variant: one SMSS per cwnd of acknowledged data).
    ca_acked: u64,
}

impl NewReno {
    /// RFC 5681 §3.1 initial window: min(4·SMSS, max(2·SMSS, 4380 B)) unless configured.
    pub fn new(mss: u32, initial_segments: Option<u32>) -> Self {
        let mss = mss as u64;
        let iw = match initial_segments {
            Some(n) => n as u64 * mss,
            None => (4 * mss).min((2 * mss).max(4380)),
        };
        NewReno { cwnd: iw, ssthresh: u64::MAX / 2, cubic: None, increase: CaIncrease::Bytes, mss, ca_acked: 0 }
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// New data acknowledged outside recovery (`now` and `rtt` serve CUBIC).
    pub fn on_ack(&mut self, acked: u64, now: Time, rtt: Duration) {
        if self.in_slow_start() {
            // RFC 5681 eq. 2: cwnd += min(N, SMSS).
            self.cwnd += acked.min(self.mss);
        } else if let Some(c) = self.cubic.as_mut() {
            let mss = self.mss as f64;
            let w = c.on_ack(now, self.cwnd as f64 / mss, acked as f64 / mss, rtt);
            self.cwnd = (w * mss).max(self.cwnd as f64) as u64;
        } else if self.increase == CaIncrease::PerAck {
            // ns-3's TcpNewReno::CongestionAvoidance: max(1, SMSS²/cwnd) whole bytes per ACK.
            self.cwnd += (self.mss * self.mss / self.cwnd).max(1);
        } else {
            // Appropriate byte counting in congestion avoidance: +1 SMSS per cwnd of data.
            self.ca_acked += acked;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
    }

    /// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2·SMSS); with CUBIC, β = 0.7 of cwnd
    /// (RFC 9438 §4.6).
    pub fn halve(&mut self, flight: u64) {
        self.ca_acked = 0;
        if let Some(c) = self.cubic.as_mut() {
            let mss = self.mss as f64;
            let w = self.cwnd.min(flight.max(self.mss)) as f64 / mss;
            self.ssthresh = ((c.on_congestion(w) * mss) as u64).max(2 * self.mss);
            return;
        }
        self.ssthresh = (flight / 2).max(2 * self.mss);
    }

    /// After a retransmission timeout: ssthresh from eq. 4, cwnd = loss window of one SMSS.
    pub fn on_timeout(&mut self, flight: u64) {
        self.halve(flight);
        self.collapse_window();
    }

    /// cwnd = loss window of one SMSS with ssthresh held (a timeout during fast recovery, or a
    /// repeated timeout of the same segment: RFC 5681 §3.1).
    pub fn collapse_window(&mut self) {
        self.ca_acked = 0;
        self.cwnd = self.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_window_follows_rfc5681() {
        // MSS 1460: min(5840, max(2920, 4380)) = 4380 B = 3 segments.
        assert_eq!(NewReno::new(1460, None).cwnd, 4380);
        // MSS 536: min(2144, 4380) = 2144 B = 4 segments.
        assert_eq!(NewReno::new(536, None).cwnd, 2144);
        assert_eq!(NewReno::new(1000, Some(10)).cwnd, 10_000);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let mut c = NewReno::new(1000, Some(10));
        c.ssthresh = 10_000;
        for _ in 0..10 {
            c.on_ack(1000, Time::ZERO, Duration::from_millis(100));
        }
        assert_eq!(c.cwnd, 11_000, "one window of ACKs grows cwnd by exactly one MSS");
        c.halve(11_000);
        assert_eq!(c.ssthresh, 5_500);
        c.on_timeout(1_000);
        assert_eq!((c.cwnd, c.ssthresh), (1000, 2000), "ssthresh never below 2 MSS");
    }

    #[test]
    fn per_ack_increase_grows_half_as_fast_under_delayed_acks() {
        // cwnd 10 000 B, MSS 1000: each ACK adds floor(1000²/cwnd) B (ns-3's rule). Five ACKs of
        // two segments each (delayed ACKs, one window) add 100 + 99 + 98 + 97 + 96 = 490 B by hand
        // (10 000 -> 10 100 -> 10 199 -> 10 297 -> 10 394 -> 10 490); byte counting adds 1000.
        let mut per_ack = NewReno::new(1000, Some(10));
        per_ack.increase = CaIncrease::PerAck;
        per_ack.ssthresh = 10_000;
        let mut bytes = per_ack.clone();
        bytes.increase = CaIncrease::Bytes;
        for _ in 0..5 {
            per_ack.on_ack(2000, Time::ZERO, Duration::from_millis(100));
            bytes.on_ack(2000, Time::ZERO, Duration::from_millis(100));
        }
        assert_eq!(per_ack.cwnd, 10_490);
        assert_eq!(bytes.cwnd, 11_000);
    }
}
