//! Explicit Congestion Notification for TCP (RFC 3168 §6.1), as Linux's `tcp_ecn = 1` does it:
//!
//! - Negotiation: the SYN carries ECE and CWR; a SYN-ACK answers with ECE alone; the connection
//!   uses ECN when both ends asked for it (`TcpConfig::ecn`).
//! - The sender marks its new data segments ECT(0); retransmissions and pure ACKs stay Not-ECT
//!   (§6.1.5, Linux's `tcp_ecn_send`).
//! - The receiver, on a segment marked CE, sets ECE on every ACK until a segment with CWR comes
//!   (a CE on that very segment keeps it set: §6.1.3).
//! - The sender, on an ACK with ECE, reduces its window as for a loss (ssthresh by its
//!   congestion control, cwnd = ssthresh) at most once per window of data: not again until
//!   SND.UNA passes what was outstanding at the reduction, and not during loss recovery (that
//!   window was reduced already, but CWR is still sent, as Linux's recovery does); the next new
//!   data segment carries CWR. BBR (v1) does not react to ECE, as Linux's.
//!
//! Left out: Linux's quick-ACK mode on CE (ECE waits for the next ACK, delayed or not), ECN on
//! SYN-ACKs (RFC 8311), Accurate ECN.

use super::socket::{Segment, TcpSocket};
use crate::packet::{ecn, SeqNum, TcpFlags};

/// One endpoint's ECN state and counters.
#[derive(Clone, Debug, Default)]
pub struct Ecn {
    /// Both ends asked for ECN in the handshake.
    pub negotiated: bool,
    /// Receiver: a CE arrived and no CWR since; every ACK carries ECE.
    echo: bool,
    /// Sender: the window was reduced for an ECE; the next new data segment carries CWR.
    cwr_due: bool,
    /// Sender: no reduction for ECE until SND.UNA passes this.
    recover: Option<SeqNum>,
    /// Segments that arrived marked CE.
    pub ce_received: u64,
    /// ACKs that arrived with ECE.
    pub ece_received: u64,
    /// Window reductions for ECE.
    pub reductions: u64,
}

impl TcpSocket {
    /// The ECN flags of our SYN (`with_ack`: SYN-ACK).
    pub(super) fn ecn_syn_flags(&self, with_ack: bool) -> u8 {
        match (self.cfg.ecn, with_ack) {
            (false, _) => 0,
            (true, false) => TcpFlags::ECE | TcpFlags::CWR,
            (true, true) if self.ecn.negotiated => TcpFlags::ECE,
            (true, true) => 0,
        }
    }

    /// The peer's SYN or SYN-ACK: whether the connection uses ECN.
    pub(super) fn ecn_on_syn(&mut self, flags: TcpFlags) {
        let (ece, cwr) = (flags.has(TcpFlags::ECE), flags.has(TcpFlags::CWR));
        self.ecn.negotiated = self.cfg.ecn && if flags.has(TcpFlags::ACK) { ece && !cwr } else { ece && cwr };
    }

    /// Receiver: a synchronized segment arrived (CWR ends the echo, CE starts it).
    pub(super) fn ecn_on_arrival(&mut self, seg: &Segment) {
        if !self.ecn.negotiated {
            return;
        }
        if seg.hdr.flags.has(TcpFlags::CWR) {
            self.ecn.echo = false;
        }
        if seg.ecn == ecn::CE {
            self.ecn.ce_received += 1;
            self.ecn.echo = true;
        }
    }

    /// Sender: an acceptable ACK arrived; with ECE, the window is reduced once per window.
    pub(super) fn ecn_on_ack(&mut self, seg: &Segment) {
        if !self.ecn.negotiated || !seg.hdr.flags.has(TcpFlags::ECE) {
            return;
        }
        self.ecn.ece_received += 1;
        if self.recovery.in_recovery {
            // The window was reduced for the loss already: CWR tells the receiver so (as
            // Linux's recovery queues it), or it would echo ECE until the next reduction.
            self.ecn.cwr_due = true;
            return;
        }
        if self.cc.is_model_based() || self.ecn.recover.is_some_and(|r| self.snd.una < r) {
            return;
        }
        self.cc.on_ecn_echo(self.flight_size());
        self.ecn.recover = Some(self.snd.max);
        self.ecn.cwr_due = true;
        self.ecn.reductions += 1;
    }

    /// The ECN field of a data segment about to go (`retransmission`: it was sent before), and
    /// CWR set in `flags` if a reduction is to be announced.
    pub(super) fn ecn_for_data(&mut self, len: u32, retransmission: bool, flags: &mut u8) -> u8 {
        if !self.ecn.negotiated || len == 0 || retransmission {
            return ecn::NOT_ECT;
        }
        if self.ecn.cwr_due {
            *flags |= TcpFlags::CWR;
            self.ecn.cwr_due = false;
        }
        ecn::ECT0
    }

    /// ECE on a segment we send after the handshake, while a CE is being echoed.
    pub(super) fn ecn_echo_flag(&self) -> u8 {
        if self.ecn.echo { TcpFlags::ECE } else { 0 }
    }
}
