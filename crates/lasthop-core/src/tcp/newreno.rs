//! NewReno congestion control: RFC 5681 §3.1 slow start and congestion avoidance (byte counting
//! as RFC 3465 with L = 1, or SMSS²/cwnd per ACK as ns-2/ns-3/OPNET) and the multiplicative
//! decrease of eq. 4. The loss response of RFC 6582 (window inflation and deflation in fast
//! recovery) is in `cc.rs`'s [`CongestionWindow`]; the recovery state machine that decides when
//! it applies (duplicate ACK counting, partial ACKs, the `recover` variable) is the socket's
//! (`recovery.rs`). Left out: RFC 5681's optional idle restart (§4.1).

use super::cc::CongestionWindow;

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

/// NewReno's window: RFC 5681 slow start and congestion avoidance, eq. 4 on a loss.
#[derive(Clone, Debug)]
pub struct NewReno {
    pub window: CongestionWindow,
    increase: CaIncrease,
    mss: u64,
    /// Bytes acknowledged in congestion avoidance since cwnd last grew (RFC 5681 §3.1, the
    /// byte-counting variant: one SMSS per cwnd of acknowledged data).
    ca_acked: u64,
}

impl NewReno {
    /// `mss` is the endpoint's own; the initial window follows RFC 5681 §3.1 unless configured.
    pub fn new(mss: u32, initial_segments: Option<u32>, increase: CaIncrease) -> Self {
        let mss = mss as u64;
        NewReno { window: CongestionWindow::initial(mss, initial_segments), increase, mss, ca_acked: 0 }
    }

    pub fn cwnd(&self) -> u64 {
        self.window.cwnd
    }

    pub fn ssthresh(&self) -> u64 {
        self.window.ssthresh
    }

    /// New data acknowledged outside recovery.
    pub fn on_ack(&mut self, acked: u64) {
        let w = &mut self.window;
        if w.in_slow_start() {
            w.slow_start(acked);
        } else if self.increase == CaIncrease::PerAck {
            // ns-3's TcpNewReno::CongestionAvoidance: max(1, SMSS²/cwnd) whole bytes per ACK.
            w.cwnd += (self.mss * self.mss / w.cwnd).max(1);
        } else {
            // Appropriate byte counting in congestion avoidance: +1 SMSS per cwnd of data.
            self.ca_acked += acked;
            if self.ca_acked >= w.cwnd {
                self.ca_acked -= w.cwnd;
                w.cwnd += self.mss;
            }
        }
    }

    /// A congestion event: RFC 5681 eq. 4, ssthresh = max(FlightSize / 2, 2·SMSS).
    pub fn on_congestion(&mut self, flight: u64) {
        self.ca_acked = 0;
        self.window.ssthresh = (flight / 2).max(2 * self.mss);
    }

    /// A retransmission timeout: eq. 4 when `recompute_ssthresh`, then cwnd = loss window of
    /// one SMSS (a timeout during fast recovery, or a repeated timeout of the same segment,
    /// holds ssthresh: RFC 5681 §3.1).
    pub fn on_timeout(&mut self, flight: u64, recompute_ssthresh: bool) {
        if recompute_ssthresh {
            self.on_congestion(flight);
        }
        self.ca_acked = 0;
        self.window.cwnd = self.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_window_follows_rfc5681() {
        // MSS 1460: min(5840, max(2920, 4380)) = 4380 B = 3 segments.
        assert_eq!(NewReno::new(1460, None, CaIncrease::Bytes).cwnd(), 4380);
        // MSS 536: min(2144, 4380) = 2144 B = 4 segments.
        assert_eq!(NewReno::new(536, None, CaIncrease::Bytes).cwnd(), 2144);
        assert_eq!(NewReno::new(1000, Some(10), CaIncrease::Bytes).cwnd(), 10_000);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let mut c = NewReno::new(1000, Some(10), CaIncrease::Bytes);
        c.window.ssthresh = 10_000;
        for _ in 0..10 {
            c.on_ack(1000);
        }
        assert_eq!(c.cwnd(), 11_000, "one window of ACKs grows cwnd by exactly one MSS");
        c.on_congestion(11_000);
        assert_eq!(c.ssthresh(), 5_500);
        c.on_timeout(1_000, true);
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 2000), "ssthresh never below 2 MSS");
    }

    #[test]
    fn per_ack_increase_grows_half_as_fast_under_delayed_acks() {
        // cwnd 10 000 B, MSS 1000: each ACK adds floor(1000²/cwnd) B (ns-3's rule). Five ACKs of
        // two segments each (delayed ACKs, one window) add 100 + 99 + 98 + 97 + 96 = 490 B by hand
        // (10 000 -> 10 100 -> 10 199 -> 10 297 -> 10 394 -> 10 490); byte counting adds 1000.
        let mut per_ack = NewReno::new(1000, Some(10), CaIncrease::PerAck);
        per_ack.window.ssthresh = 10_000;
        let mut bytes = NewReno::new(1000, Some(10), CaIncrease::Bytes);
        bytes.window.ssthresh = 10_000;
        for _ in 0..5 {
            per_ack.on_ack(2000);
            bytes.on_ack(2000);
        }
        assert_eq!(per_ack.cwnd(), 10_490);
        assert_eq!(bytes.cwnd(), 11_000);
    }
}
