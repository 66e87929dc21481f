//! TCP transfers: what the sending application writes and how the two applications call their
//! sockets. A transfer is a byte count (or greedy until the flow stops, or the backlog of a
//! message source such as CBR over TCP) plus the pacing of the calls: immediate (write what the
//! socket accepts, read what arrives), receiver reads paced at a rate (a slow reader, Hur & Hong,
//! paper 000), or Hur & Hong's file loop on the two hosts (blocking `send()`s of `message`
//! bytes and `recv()`s of `app_buffer` bytes, each followed by an inter-packet sleep).
//!
//! [`Writer`] is the sending application as a state machine asked "how much would you write
//! now?" — the simulator answers with its socket model, a generator with a real socket's
//! `write()`. Left out: request/response patterns (HTTP-like), and message boundaries over TCP
//! (a message source's bytes join one byte stream).

use crate::time::Duration;
use crate::units::{BitRate, Bytes};

/// How much the sending application writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Volume {
    /// A transfer of this many bytes (positive); its completion time is recorded.
    Bytes(u64),
    /// Greedy until the flow stops.
    UntilStopped,
    /// What a message source has queued (CBR over TCP), see [`Writer::queue`].
    Messages,
}

/// The receiving application reads `size` bytes every size · 8 / `rate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacedReads {
    pub rate: BitRate,
    pub size: Bytes,
}

/// Hur & Hong's file loop (paper 000) on the two hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLoop {
    /// Bytes per blocking `send()` (the paper's application packet size).
    pub message: Bytes,
    /// Bytes per `recv()` and per storage operation, at both ends.
    pub app_buffer: Bytes,
    /// Sleep after each `send()`.
    pub send_delay: Duration,
    /// Sleep after each `recv()`.
    pub receive_delay: Duration,
}

/// How the two applications call their sockets (exclusive: a file loop paces its own reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calls {
    /// Write whatever the socket accepts at once; read everything as soon as it arrives.
    Immediate,
    PacedReads(PacedReads),
    FileLoop(FileLoop),
}

/// A TCP transfer's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub volume: Volume,
    pub calls: Calls,
}

/// The sending application: how many bytes it still wants to write.
#[derive(Clone, Debug)]
pub struct Writer {
    volume: Volume,
    written: u64,
    stopped: bool,
    /// Message bytes queued and not yet accepted by the socket.
    backlog: u64,
}

impl Writer {
    pub fn new(volume: Volume) -> Writer {
        Writer { volume, written: 0, stopped: false, backlog: 0 }
    }

    /// The byte count of a sized transfer, whose completion is recorded.
    pub fn target(&self) -> Option<u64> {
        match self.volume {
            Volume::Bytes(n) => Some(n),
            Volume::UntilStopped | Volume::Messages => None,
        }
    }

    /// A message of `bytes` waits for room in the socket.
    pub fn queue(&mut self, bytes: u64) {
        self.backlog += bytes;
    }

    /// The flow's stop time: a greedy writer stops, a message source only finishes its backlog.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Bytes the application would write now if the socket had room.
    pub fn wants(&self) -> u64 {
        if self.stopped {
            return self.backlog;
        }
        match self.volume {
            Volume::UntilStopped => u64::MAX,
            Volume::Messages => self.backlog,
            Volume::Bytes(t) => t - self.written,
        }
    }

    /// Records `n` bytes accepted by the socket.
    pub fn wrote(&mut self, n: u64) {
        self.written += n;
        if self.volume == Volume::Messages || self.stopped {
            self.backlog -= n.min(self.backlog);
        }
    }

    /// True when the application has nothing more to write and should close.
    pub fn finished(&self) -> bool {
        match self.volume {
            Volume::Messages => self.stopped && self.backlog == 0,
            Volume::Bytes(t) => self.written >= t,
            Volume::UntilStopped => self.stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sized_transfer_wants_the_rest_and_finishes_at_its_count() {
        // Hand count: 10 000 B written as 4000 + 6000.
        let mut w = Writer::new(Volume::Bytes(10_000));
        assert_eq!((w.wants(), w.target()), (10_000, Some(10_000)));
        w.wrote(4000);
        assert_eq!(w.wants(), 6000);
        assert!(!w.finished());
        w.wrote(6000);
        assert_eq!(w.wants(), 0);
        assert!(w.finished(), "all 10 000 B accepted: the sender closes");
    }

    #[test]
    fn a_greedy_writer_wants_everything_until_stopped() {
        let mut w = Writer::new(Volume::UntilStopped);
        assert_eq!((w.wants(), w.target()), (u64::MAX, None));
        w.wrote(1 << 40);
        assert!(!w.finished());
        w.stop();
        assert_eq!(w.wants(), 0);
        assert!(w.finished());
    }

    #[test]
    fn a_message_writer_drains_its_backlog_before_closing() {
        // Three 160 B messages, the socket takes 200 B, then the flow stops with 280 B queued:
        // the sender still writes them and closes only when the backlog is empty.
        let mut w = Writer::new(Volume::Messages);
        assert_eq!(w.wants(), 0);
        for _ in 0..3 {
            w.queue(160);
        }
        assert_eq!(w.wants(), 480);
        w.wrote(200);
        assert_eq!(w.wants(), 280);
        w.stop();
        assert!(!w.finished(), "280 B still queued");
        w.wrote(280);
        assert!(w.finished());
        assert_eq!(w.target(), None);
    }
}
