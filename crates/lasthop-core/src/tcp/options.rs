//! The SYN exchange's options: MSS (RFC 9293 §3.7.1; 536 B when absent), window scale
//! (RFC 7323 §2: the shift for our buffer, the SYN's own window unscaled, shifts above 14 read
//! as 14) and SACK-permitted (RFC 2018 §2). Each is used only if both ends offered it; a SYN-ACK
//! echoes only what the SYN offered. Left out: timestamps (RFC 7323 §3–4), TCP Fast Open.

use super::socket::{Segment, TcpSocket};
use super::timers::TimedSegment;
use crate::packet::{ecn, TcpFlags, TcpHeader};
use crate::Time;

/// What the handshake settled.
#[derive(Clone, Copy, Debug)]
pub struct Negotiated {
    /// The MSS the peer announced (RFC 9293 §3.7.1's default 536 until it has).
    pub(super) peer_mss: u32,
    /// Shift applied to the windows the peer advertises.
    pub(super) snd_wscale: u8,
    /// Shift applied to the windows we advertise (0 unless both ends offered scaling).
    pub(super) rcv_wscale: u8,
    pub(super) sack_ok: bool,
    pub(super) wscale_ok: bool,
}

impl Negotiated {
    /// Before the handshake: our own scale offered, nothing agreed.
    pub fn offer(rcv_wscale: u8) -> Self {
        Negotiated { peer_mss: 536, snd_wscale: 0, rcv_wscale, sack_ok: false, wscale_ok: false }
    }
}

impl TcpSocket {
    /// A SYN (active open) or SYN-ACK (`with_ack`, passive open) with our options; a lost one is
    /// resent by the retransmission timer.
    pub(super) fn send_syn(&mut self, now: Time, with_ack: bool, out: &mut Vec<Segment>) {
        let flags = TcpFlags::SYN | if with_ack { TcpFlags::ACK } else { 0 } | self.ecn_syn_flags(with_ack);
        let mut h = TcpHeader { seq: self.snd.iss, flags: TcpFlags(flags), ..TcpHeader::default() };
        h.mss = Some(self.cfg.mss.min(65_535) as u16);
        // RFC 7323 §2.2: the window in a SYN is never scaled. It is the free space as any later
        // segment computes it (the awnd cap included): the right edge never retreats, so a larger
        // first offer would hold for the whole first 64 KiB.
        h.window = self.free_space().min(65_535) as u16;
        if with_ack {
            h.ack = self.rcv.nxt;
            self.rcv.adv = self.rcv.nxt + h.window as u32;
        }
        // Options are offered in the SYN and echoed in the SYN-ACK only if the peer offered them.
        let offer = |ok: bool| !with_ack || ok;
        if self.cfg.window_scale && offer(self.opts.wscale_ok) {
            h.wscale = Some(self.opts.rcv_wscale);
        }
        if self.cfg.sack && offer(self.opts.sack_ok) {
            h.sack_permitted = true;
        }
        self.snd.nxt = self.snd.iss + 1;
        self.snd.max = self.snd.max.max(self.snd.nxt);
        if self.timers.timed.is_none() && !self.timers.syn_retransmitted {
            self.timers.timed = Some(TimedSegment { seq: self.snd.iss, sent: now });
        }
        self.arm_rto(now);
        self.emit(out, h, 0, ecn::NOT_ECT);
    }

    /// The peer's SYN or SYN-ACK: what it announced settles what both ends use.
    pub(super) fn accept_syn_options(&mut self, h: &TcpHeader) {
        self.opts.peer_mss = h.mss.map(u32::from).unwrap_or(536);
        self.opts.wscale_ok = self.cfg.window_scale && h.wscale.is_some();
        if self.opts.wscale_ok {
            // RFC 7323 §2.3: shifts above 14 are treated as 14.
            self.opts.snd_wscale = h.wscale.unwrap_or(0).min(14);
        } else {
            self.opts.rcv_wscale = 0;
        }
        self.opts.sack_ok = self.cfg.sack && h.sack_permitted;
        self.ecn_on_syn(h.flags);
    }

    /// The shift of the windows we advertise once the handshake is done.
    pub(super) fn rcv_wscale_in_use(&self) -> u8 {
        if self.opts.wscale_ok { self.opts.rcv_wscale } else { 0 }
    }
}

/// The smallest window-scale shift that lets `buffer` fit in the 16-bit field (RFC 7323 §2.3, ≤ 14).
pub fn window_shift_for(buffer: u64) -> u8 {
    let mut s = 0;
    while (buffer >> s) > 65_535 && s < 14 {
        s += 1;
    }
    s
}
