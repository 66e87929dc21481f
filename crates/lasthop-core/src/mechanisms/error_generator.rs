//! The packet error generator of Ng, Chow and Trajkovic (paper 003): uniform, independent drops
//! at a given rate on one interface and direction, sparing TCP SYN and FIN segments so that
//! connection set-up and teardown are not what is measured (as the paper's OPNET generator does).

use crate::packet::{Packet, Protocol, TcpFlags};
use crate::rng::{bernoulli, SimRng};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Forward,
    Drop,
}

#[derive(Debug)]
pub struct PacketErrorGenerator {
    rate: f64,
    spare_syn: bool,
    spare_fin: bool,
    rng: SimRng,
    pub dropped: u64,
    pub spared: u64,
}

impl PacketErrorGenerator {
    pub fn new(rate: f64, spare_syn: bool, spare_fin: bool, rng: SimRng) -> Self {
        PacketErrorGenerator { rate, spare_syn, spare_fin, rng, dropped: 0, spared: 0 }
    }

    pub fn process(&mut self, p: &Packet) -> Verdict {
        if p.proto == Protocol::Tcp {
            let f = p.tcp.flags;
            if (self.spare_syn && f.has(TcpFlags::SYN)) || (self.spare_fin && f.has(TcpFlags::FIN)) {
                self.spared += 1;
                return Verdict::Forward;
            }
        }
        if bernoulli(&mut self.rng, self.rate) {
            self.dropped += 1;
            Verdict::Drop
        } else {
            Verdict::Forward
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;
    use crate::rng::RngStreams;
    use crate::Time;

    fn tcp(flags: u8) -> Packet {
        Packet {
            uid: 0,
            flow: 0,
            pkt_seq: 0,
            src: 0,
            dst: 1,
            sport: 1,
            dport: 2,
            dscp: 0,
            ecn: 0,
            proto: Protocol::Tcp,
            tcp: TcpHeader { flags: TcpFlags(flags), ..TcpHeader::default() },
            payload_len: 1000,
            sent_at: Time::ZERO,
        }
    }

    #[test]
    fn drops_at_the_rate_but_never_syn_or_fin() {
        let mut g = PacketErrorGenerator::new(0.3, true, true, RngStreams::new(1).stream("peg"));
        let n = 100_000;
        let dropped = (0..n).filter(|_| g.process(&tcp(TcpFlags::ACK)) == Verdict::Drop).count() as f64;
        // Binomial(100000, 0.3): sd 145; allow 5 sd.
        assert!((dropped - 30_000.0).abs() < 725.0, "{dropped}");
        for _ in 0..1000 {
            assert_eq!(g.process(&tcp(TcpFlags::SYN)), Verdict::Forward);
            assert_eq!(g.process(&tcp(TcpFlags::FIN | TcpFlags::ACK)), Verdict::Forward);
        }
        assert_eq!(g.spared, 2000);
    }
}
