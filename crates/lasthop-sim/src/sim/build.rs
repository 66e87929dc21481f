//! Building a simulation from a scenario: the network (hops, routes, interface processors:
//! `lasthop_scenario::build::network`, shared with the emulator), hosts and flows, with the
//! random streams each draws from.

use super::*;

impl Simulation {
    pub fn new(scenario: Scenario) -> Self {
        let rng = RngStreams::new(scenario.simulation.seed);
        let topo = Topology::new(&scenario);
        let built = lasthop_scenario::build::network::Network::new(&scenario, &rng);
        let lasthop_scenario::build::network::Network { mut hops, routes, next_node, downlinks, processors, chains, n_nodes, node_names } = built;
        // Transmit events feed captures only; `add_capture` turns them on.
        for slot in &mut hops {
            slot.hop.report_transmits(false);
        }
        let end = Time(scenario.simulation.duration.0);
        let interval = scenario.simulation.interval;
        let net = Network {
            packets: PacketArena::default(),
            hops,
            hop_out: Vec::new(),
            routes,
            processors,
            chains,
            emitted: Vec::new(),
            captures: Vec::new(),
            next_node,
            n_nodes,
            node_names,
        };
        let hosts = Hosts {
            devices: topo.names.iter().map(|name| crate::host::device_of(&scenario, name)).collect(),
            cpus: vec![Cpu::default(); n_nodes],
        };
        let mut sim = Simulation {
            now: Time::ZERO,
            end,
            interval,
            events: EventQueue::default(),
            net,
            hosts,
            live_awnd: Vec::new(),
            flows: Vec::new(),
            scratch: Vec::new(),
            next_uid: 0,
            run: RunState { events_processed: 0, watchdog: Watchdog::default(), stalled: None },
            scenario: scenario.clone(),
        };
        for (i, f) in scenario.flows.iter().enumerate() {
            let state = sim.build_flow(i, f, &topo, &rng);
            // A receiver-based awnd without a fixed retransmission count follows the W-CDMA
            // downlink that delivers to the receiver, if there is one.
            if let (Some(r), FlowKind::Tcp(t)) = (f.tcp.as_ref().and_then(|p| p.receiver_awnd.as_ref()), &state.kind) {
                if r.retransmissions.is_none() && r.segments.is_none() {
                    if let Some(&ri) = downlinks.iter().find(|&&h| sim.net.hops[h].nodes[1] == state.ends.dst) {
                        sim.live_awnd.push(LiveAwnd { flow: i, rlc_hop: ri, window: ReceiverWindow::new(r.clone(), t.server.mss()) });
                    }
                }
            }
            let start = state.period.start;
            sim.flows.push(state);
            sim.events.schedule(start, Event::FlowStart { flow: i as u32 });
            if let Some(stop) = f.stop {
                if stop.0 < end.0 {
                    sim.events.schedule(Time(stop.0), Event::FlowStop { flow: i as u32 });
                }
            }
        }
        sim
    }

    pub(super) fn build_flow(&self, i: usize, f: &lasthop_scenario::Flow, topo: &Topology, rng: &RngStreams) -> FlowState {
        let src = topo.index(f.src.get_ref()).expect("validated") as u32;
        let dst = topo.index(f.dst.get_ref()).expect("validated") as u32;
        let transport = f.transport();
        let FlowApp { messages, transfer } = lasthop_scenario::build::traffic::flow_app(&self.scenario, f, rng);
        let kind = match transport {
            Transport::Udp => FlowKind::Udp(Box::new(messages.expect("validated: UDP apps are sources"))),
            Transport::Tcp => {
                let p = f.tcp.clone().unwrap_or_default();
                let path_mtu = topo.path_mtu(f.src.get_ref(), f.dst.get_ref()).expect("validated");
                let cfg = tcp_config(&p, path_mtu);
                let mut isn = rng.stream(&format!("flow/{}/isn", f.name));
                let mut client = TcpSocket::new(cfg.clone(), SeqNum(isn.next_u32()));
                // The receiver's interlayer window cap (Koga et al.), as a number of segments; with
                // live retransmission counts it starts from the default and follows the link.
                let awnd_cap = p.receiver_awnd.as_ref().map(|r| {
                    r.cap_bytes(r.retransmissions.unwrap_or(DEFAULT_AWND_RETRANSMISSIONS), cfg.mss)
                });
                let mut server = TcpSocket::new(TcpConfig { awnd_cap, ..cfg }, SeqNum(isn.next_u32()));
                server.listen();
                if self.scenario.probes.tcp.contains(&f.name) {
                    client.enable_trace();
                    server.enable_trace();
                }
                FlowKind::Tcp(Box::new(TcpFlow {
                    client,
                    server,
                    transfer: Writer::new(transfer.volume),
                    messages,
                    timer_at: [None, None],
                    paced_reads: match transfer.calls {
                        Calls::PacedReads(r) => Some(r),
                        _ => None,
                    },
                    read_total: 0,
                    completed_at: None,
                    server_closed: false,
                    file: match (transfer.calls, transfer.volume) {
                        (Calls::FileLoop(l), Volume::Bytes(bytes)) => Some(Box::new(FileLoop {
                            sender: FileSender::new(bytes, l.message.0, l.app_buffer.0, l.send_delay),
                            receiver: FileReceiver::new(l.app_buffer.0, l.receive_delay),
                        })),
                        _ => None,
                    },
                }))
            }
        };
        FlowState {
            name: f.name.clone(),
            transport,
            ends: FlowEnds { src, dst, sport: 10_000 + i as u16, dport: 5_000 + i as u16, dscp: f.dscp },
            period: ActivePeriod {
                start: Time(f.start_time(rng).0),
                stop: Time(f.stop.map(|s| s.0).unwrap_or(u64::MAX).min(self.end.0)),
            },
            meters: FlowMeters {
                forward: {
                    let mut m = FlowMeter::new(self.interval);
                    if let Some(d) = f.effective_deadline() {
                        m.set_deadline(d);
                    }
                    if f.discard_reordered {
                        m.set_discard_reordered();
                    }
                    m
                },
                reverse: if f.echo { FlowMeter::new(self.interval) } else { FlowMeter::light(self.interval) },
                next_seq: [0, 0],
                records: self.scenario.probes.packets.contains(&f.name).then(PacketRecords::default),
            },
            kind,
            echo: f.echo,
        }
    }
}

