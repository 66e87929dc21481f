//! Hybrid runs: flows marked `world = "model"` in the scenario are generated inside the
//! emulator, as modelled stations' traffic on the same hops as the real flows — a busy home
//! network without its hosts. Each departure of the flow's traffic model (the core's
//! [`Schedule`]: CBR, on/off, VBR video, D-ITG's laws; the same departures the simulator draws,
//! from the same random stream `flow/<name>/app`) becomes a real IPv4/UDP packet (the simulator's
//! ports and headers, zero payload) offered to the first hop at its source node at the
//! departure's time; at its destination node the emulator meters and absorbs it. It is never
//! written to a namespace, so a modelled station needs no host (a node with no real flow gets a
//! namespace only if it has a single neighbour, for `emu shell`).
//!
//! Modelled packets are the experiment's traffic: they queue, contend on a WLAN's DCF, collide
//! and are retried like real ones, are captured (`--pcap`) and metered at the network (sent at
//! the source's interface, received at arrival) as the simulator meters its flows.
//!
//! Left out: modelled TCP (it would need lasthop-sim's TCP endpoints driven in real time; the
//! emulator refuses a TCP flow with `world = "model"` by name).

use lasthop_core::packet::{Packet, Protocol, TcpHeader};
use lasthop_core::rng::RngStreams;
use lasthop_core::traffic::{fragments, Schedule};
use lasthop_core::{Time, wire};
use lasthop_scenario::{FlowWorld, Scenario, Topology};

/// One modelled UDP flow.
#[derive(Debug)]
pub struct ModelFlow {
    /// The flow's index in the scenario.
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub dscp: u8,
    pub schedule: Schedule,
    pub start: Time,
    pub stop: Time,
    /// The largest datagram payload; a longer message leaves as back-to-back datagrams.
    pub max_packet: u32,
}

impl ModelFlow {
    /// The model time of the next departure, if before the flow's stop.
    pub fn next_departure(&self) -> Option<Time> {
        let at = Time(self.start.0 + self.schedule.due().at.0);
        (at < self.stop).then_some(at)
    }

    /// Takes the due departure: the payload sizes of its datagrams.
    pub fn depart(&mut self) -> impl Iterator<Item = u32> {
        let d = self.schedule.pop();
        fragments(d.bytes, self.max_packet)
    }

    /// Writes the IPv4/UDP packet of `payload` zero bytes into `buf` (the simulator's headers:
    /// `wire::Headers::from_packet`); returns its length and the packet's header model.
    pub fn packet(&self, uid: u64, payload: u32, now: Time, buf: &mut [u8]) -> (usize, Packet) {
        let p = Packet {
            uid,
            flow: self.flow,
            pkt_seq: 0,
            src: self.src,
            dst: self.dst,
            sport: self.sport,
            dport: self.dport,
            dscp: self.dscp,
            proto: Protocol::Udp,
            tcp: TcpHeader::default(),
            payload_len: payload,
            sent_at: now,
        };
        let h = wire::Headers::from_packet(&p, uid as u16);
        let (head, total) = (h.header_len(), h.total_len());
        buf[head..total].fill(0);
        let n = wire::emit(&h, buf).expect("a modelled datagram fits the slot: its size is below the scenario's MTU");
        (n, p)
    }
}

/// The scenario's modelled flows (UDP; the caller has refused modelled TCP), their datagrams
/// at most `mtu` bytes (the emulator's devices' MTU, as for the real flows).
pub fn model_flows(s: &Scenario, first_sport: u16, first_dport: u16, mtu: u32) -> Vec<ModelFlow> {
    let topo = Topology::new(s);
    let rng = RngStreams::new(s.simulation.seed);
    let end = s.simulation.duration.0;
    s.flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.world == FlowWorld::Model)
        .map(|(i, f)| {
            let app = lasthop_scenario::build::traffic::flow_app(s, f, &rng);
            let schedule = app.messages.expect("validated: a UDP app is a message source");
            ModelFlow {
                flow: i as u32,
                src: topo.index(f.src.get_ref()).expect("validated") as u32,
                dst: topo.index(f.dst.get_ref()).expect("validated") as u32,
                sport: first_sport + i as u16,
                dport: first_dport + i as u16,
                dscp: f.dscp,
                max_packet: schedule.max_packet().min(mtu.saturating_sub(28)).max(1),
                schedule,
                start: Time(f.start_time(&rng).0.min(end)),
                stop: Time(f.stop.map_or(end, |t| t.0.min(end))),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modelled_cbr_flow_departs_on_its_schedule_as_real_udp_packets() {
        let text = lasthop_scenario::bundled::bundled("dumbbell").unwrap();
        let o = vec![("flows.voice.world".to_string(), "model".to_string())];
        let s = Scenario::from_toml_str(text, "dumbbell", &o).unwrap();
        let mut flows = model_flows(&s, 10_000, 5_000, 1500);
        assert_eq!(flows.len(), 1, "only the voice flow is modelled");
        let f = &mut flows[0];
        assert_eq!((f.flow, f.src, f.dst, f.dport), (1, 0, 2, 5_001));
        // 160 B every 20 ms from 0.5 s (the dumbbell's voice flow).
        assert_eq!(f.next_departure(), Some(Time(500_000_000)));
        assert_eq!(f.depart().collect::<Vec<_>>(), vec![160]);
        assert_eq!(f.next_departure(), Some(Time(520_000_000)));
        let mut buf = [0xffu8; 1500];
        let (n, p) = f.packet(7, 160, Time(1), &mut buf);
        assert_eq!(n, 188, "IPv4 20 + UDP 8 + 160 bytes");
        // The bytes parse back to the same flow's datagram, checksums and all.
        let h = wire::parse(&buf[..n]).unwrap();
        assert_eq!((h.ip.src, h.ip.dst, h.sport, h.dport, h.payload_len), (wire::node_address(0), wire::node_address(2), 10_001, 5_001, 160));
        assert_eq!(p.payload_len, 160);
        assert!(buf[28..188].iter().all(|&b| b == 0), "the payload is zeros, not the slot's old bytes");
    }
}
