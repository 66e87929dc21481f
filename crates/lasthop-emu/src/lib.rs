//! lasthop's emulate world: the scenario's hops — wired channels, 802.11 WLANs with their DCF,
//! W-CDMA RLC AM — driven in real time by the same core models the simulator runs, between the
//! TUN devices of one network namespace per endpoint node, so that real Linux TCP and UDP
//! stacks (and any program a user starts in a namespace) cross them. Results are the core's
//! typed [`RunReport`], the layout of `lasthop run`, so `lasthop compare` puts both worlds side
//! by side.
//!
//! Map:
//! - [`netns`] the namespaces and their names (`lh-<pid>-<node>`), privileges, clean-up of
//!   namespaces a killed emulator left
//! - [`tun`] a TUN device (`IFF_TUN | IFF_NO_PI`, non-blocking)
//! - [`network`] the scenario's hops, routes and processors (`lasthop_scenario::build::network`,
//!   the simulator's construction) and the endpoint nodes
//! - [`driver`] the real-time loop: TUN reads, timer heap, `ppoll`, packet bytes in an arena
//! - [`mechanisms`] the scenario's packet processors (SAP-LAW, Snoop, the error generator) on
//!   real packet bytes; CoDel and FQ-CoDel run inside the hops as in the simulator
//! - [`observe`] the flows as seen at the TUN devices, metered with the core's `FlowMeter`
//! - [`capture`] pcap captures of the real packets at any node's interfaces
//! - [`apps`] the flows as real sockets in the namespaces (kernel TCP with `TCP_CONGESTION`,
//!   UDP on the core's traffic schedules)
//!
//! Lifecycle: [`Emulation::start`] checks the machine, removes what dead emulators left,
//! builds namespaces and devices, starts the driver thread and the flows; [`Emulation::finish`]
//! (or dropping it) stops everything and removes the namespaces. SIGINT and SIGTERM stop the
//! driver through a flag (signal-hook), so the namespaces are removed on those too.
//!
//! Left out so far (the scenario is refused with a message saying so where it matters): TCP
//! applications other than bulk and file transfers; hybrid (simulated) flows.

pub mod apps;
pub mod capture;
pub mod driver;
pub mod mechanisms;
pub mod netns;
pub mod network;
pub mod observe;
pub mod tun;

use driver::{Driver, DriverStats};
use lasthop_core::hop::Hop;
use lasthop_core::report::{self, busy_share, delay_cdf_table, FlowReport, IntervalColumns, ReverseSummary, RunHeader, RunReport, Table, WlanMemberReport, WlanReport};
use lasthop_core::rng::RngStreams;
use lasthop_core::Time;
use lasthop_scenario::{CcVariant, Scenario, Topology, Transport};
use network::Network;
use observe::{Observer, FLOW_PORT, SOURCE_PORT};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// Why an emulation cannot start or run.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error("lasthop emu needs what this machine does not give it:\n  {}", .0.join("\n  "))]
    Missing(Vec<String>),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("`{command}` failed: {stderr}")]
    Command { command: String, stderr: String },
    #[error("{0}")]
    Unsupported(String),
    /// An option the caller gave (a capture point) names nothing in the scenario.
    #[error("{0}")]
    BadOption(String),
}

/// How to run an emulation.
#[derive(Clone, Debug)]
pub struct EmuOptions {
    /// Start the scenario's flows (false for a shell on the bare network).
    pub flows: bool,
    /// Stop at the scenario's duration (false: run until [`Emulation::finish`]).
    pub timed: bool,
    /// Stop on SIGINT and SIGTERM.
    pub handle_signals: bool,
    /// Capture points, `node` or `node:neighbour` (`lasthop run --pcap`'s vocabulary).
    pub pcap: Vec<String>,
    /// Bytes kept of each captured packet (None: all of them).
    pub snaplen: Option<usize>,
}

impl EmuOptions {
    /// A timed run of the scenario's flows, stopped early by SIGINT/SIGTERM, no captures.
    pub fn run() -> EmuOptions {
        EmuOptions { flows: true, timed: true, handle_signals: true, pcap: Vec::new(), snaplen: None }
    }
}

/// What an emulation measured: the run report, its tables, and the driver's own counters.
pub struct EmuOutput {
    pub report: RunReport,
    pub tables: Vec<Table>,
    /// JSON object: the emulator's counters (`summary.json`'s `emulator` section).
    pub emulator: serde_json::Value,
    /// The signal that ended the run, if one did.
    pub signal: Option<i32>,
    /// Each capture as written (`node` or `node:neighbour`) and its pcap file's bytes.
    pub captures: Vec<(String, Vec<u8>)>,
}

/// A running emulation.
pub struct Emulation {
    scenario: Scenario,
    footprint: netns::Footprint,
    namespaces: Vec<(usize, String)>,
    node_names: Vec<String>,
    stop: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
    signal_ids: Vec<signal_hook::SigId>,
    driver: Option<JoinHandle<(Driver, Time)>>,
    apps: Vec<JoinHandle<apps::AppReport>>,
    stale_removed: Vec<String>,
}

impl Emulation {
    /// Builds the namespaces, devices and flows of `scenario` and starts the clock.
    pub fn start(scenario: Scenario, opts: &EmuOptions) -> Result<Emulation, EmuError> {
        let missing = netns::missing_requirements();
        if !missing.is_empty() {
            return Err(EmuError::Missing(missing));
        }
        refuse_unsupported(&scenario)?;
        let mut specs: Vec<capture::CaptureSpec> = Vec::new();
        for spec in &opts.pcap {
            let c = capture::CaptureSpec::parse(&scenario, spec).map_err(EmuError::BadOption)?;
            if !specs.contains(&c) {
                specs.push(c);
            }
        }
        let stale_removed = netns::clean_stale()?;
        let pid = std::process::id();
        let net = Network::new(&scenario, &RngStreams::new(scenario.simulation.seed));
        let node_names = net.node_names.clone();
        let mtu = tun_mtu(&scenario);
        let mut footprint = netns::Footprint::default();
        let mut tuns: Vec<Option<tun::Tun>> = (0..net.n_nodes).map(|_| None).collect();
        let mut namespaces = Vec::new();
        let routes = route_settings(&scenario, mtu);
        for node in network::endpoints(&scenario) {
            let ns = netns::namespace_name(pid, node);
            footprint.add_namespace(&ns)?;
            if sack_off(&scenario, &node_names[node]) {
                netns::sysctl(&ns, "net.ipv4.tcp_sack=0")?;
            }
            let dev = tun::Tun::create(&netns::tun_name(pid, node))?;
            footprint.attach_tun(&ns, &dev.name, lasthop_core::wire::node_address(node as u32), mtu, routes[node])?;
            tuns[node] = Some(dev);
            namespaces.push((node, ns));
        }
        let end = if opts.timed { Time(scenario.simulation.duration.0) } else { Time(u64::MAX) };
        let observer = Observer::new(&scenario, Time(scenario.simulation.duration.0));
        let stop = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        let mut signal_ids = Vec::new();
        if opts.handle_signals {
            for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                let id = signal_hook::flag::register_usize(sig, signal.clone(), sig as usize)
                    .map_err(|e| EmuError::Io { what: "installing the SIGINT/SIGTERM handlers".into(), source: e })?;
                signal_ids.push(id);
            }
        }
        let sockets = if opts.flows { flow_sockets(&scenario, &namespaces)? } else { Vec::new() };
        let t0 = Instant::now();
        let epoch_ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let captures = capture::Captures::new(specs, epoch_ns, opts.snaplen.unwrap_or(usize::MAX));
        let mut driver = Driver::new(net, tuns, observer, mtu as usize + 1, t0, end, captures);
        let (stop_d, signal_d) = (stop.clone(), signal.clone());
        let driver = std::thread::Builder::new()
            .name("lasthop-emu".into())
            .spawn(move || {
                let reached = driver.run(&stop_d, &signal_d);
                (driver, reached)
            })
            .map_err(|e| EmuError::Io { what: "starting the driver thread".into(), source: e })?;
        let apps = sockets.into_iter().map(|s| apps::spawn(s, t0, stop.clone())).collect();
        Ok(Emulation { scenario, footprint, namespaces, node_names, stop, signal, signal_ids, driver: Some(driver), apps, stale_removed })
    }

    /// The namespace of node `name`, if it is an endpoint.
    pub fn namespace(&self, name: &str) -> Option<&str> {
        let i = self.node_names.iter().position(|n| n == name)?;
        self.namespaces.iter().find(|(n, _)| *n == i).map(|(_, ns)| ns.as_str())
    }

    /// (node name, namespace) of every endpoint.
    pub fn namespaces(&self) -> Vec<(String, String)> {
        self.namespaces.iter().map(|(n, ns)| (self.node_names[*n].clone(), ns.clone())).collect()
    }

    /// Namespaces of dead emulators removed before this one started.
    pub fn stale_removed(&self) -> &[String] {
        &self.stale_removed
    }

    /// True once the driver has stopped (its end time, a signal, or [`Emulation::finish`]).
    pub fn stopped(&self) -> bool {
        self.driver.as_ref().is_none_or(|d| d.is_finished())
    }

    /// Blocks until the driver stops.
    pub fn wait(&self) {
        while !self.stopped() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Stops the flows and the driver, removes the namespaces, and reports.
    pub fn finish(mut self) -> Result<EmuOutput, EmuError> {
        self.stop.store(true, Ordering::Relaxed);
        let (driver, reached) = self.driver.take().expect("finished once").join().expect("the driver does not panic");
        let app_reports: Vec<apps::AppReport> = self.apps.drain(..).map(|a| a.join().expect("an app thread does not panic")).collect();
        for id in self.signal_ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        let signal = match self.signal.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s as i32),
        };
        // The driver (and with it every TUN descriptor) goes first: a device still open when
        // its namespace is deleted would be moved back to the root namespace.
        let out = output(&self.scenario, driver, reached, &app_reports, signal);
        let failed = self.footprint.remove();
        if !failed.is_empty() {
            return Err(EmuError::Unsupported(format!("could not remove: {}", failed.join("; "))));
        }
        Ok(out)
    }
}

impl Drop for Emulation {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(d) = self.driver.take() {
            let _ = d.join();
        }
        for a in self.apps.drain(..) {
            let _ = a.join();
        }
        for id in self.signal_ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        // The footprint removes the namespaces when it drops.
    }
}

/// Runs `scenario` for its duration with its flows; SIGINT/SIGTERM end it early.
pub fn run(scenario: Scenario) -> Result<EmuOutput, EmuError> {
    let emu = Emulation::start(scenario, &EmuOptions::run())?;
    emu.wait();
    emu.finish()
}

/// What this emulator cannot run yet, as an error naming the scenario's section.
fn refuse_unsupported(s: &Scenario) -> Result<(), EmuError> {
    // A kernel TCP flow here is a byte transfer written as fast as the socket takes it; a
    // message source over TCP, paced reads or Hur & Hong's file loop would silently become one.
    let mut tcp_apps = Vec::new();
    for (i, f) in s.flows.iter().enumerate().filter(|(_, f)| f.transport() == Transport::Tcp) {
        let transfer = matches!(f.app, lasthop_scenario::App::Bulk { .. } | lasthop_scenario::App::File { .. });
        let paced = f.tcp.as_ref().is_some_and(|p| p.read_rate.is_some());
        if !transfer || paced || s.uses_file_loop(f) {
            tcp_apps.push(format!("flows[{i}] ({:?}).app", f.name));
        }
    }
    // Paper 004's receiver-side window is applied by the simulator's receiving TCP; the kernel's
    // receiver knows nothing of it, and no interface processor stands in for it yet.
    let awnd: Vec<String> = s
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.tcp.as_ref().is_some_and(|p| p.receiver_awnd.is_some()))
        .map(|(i, f)| format!("flows[{i}] ({:?}).tcp.receiver_awnd", f.name))
        .collect();
    let mut what = Vec::new();
    if !awnd.is_empty() {
        what.push(format!("the receiver-side advertised window of paper 004 on a kernel TCP receiver: {}", awnd.join(", ")));
    }
    if !tcp_apps.is_empty() {
        what.push(format!("TCP applications other than plain bulk or file transfers (message sources, paced reads, the file loop): {}", tcp_apps.join(", ")));
    }
    if what.is_empty() {
        return Ok(());
    }
    Err(EmuError::Unsupported(format!(
        "scenario {:?}: lasthop emu does not yet run {}; lasthop run simulates them",
        s.simulation.name.clone().unwrap_or_default(),
        what.join("; ")
    )))
}

/// The smallest MTU of the scenario's hops: every TUN device gets it, so no packet is larger
/// than a hop on its way allows (the simulator's TCP uses the path MTU the same way).
fn tun_mtu(s: &Scenario) -> u32 {
    let links = s.links.iter().map(|l| l.mtu.0);
    let wlans = s.wlans.iter().map(|w| w.mtu.0);
    let cells = s.wcdma.iter().map(|c| c.mtu.0);
    links.chain(wlans).chain(cells).min().unwrap_or(1500) as u32
}

/// Per node, the route attributes that give its TCP flows the simulator's settings (those of
/// the first TCP flow it sends, if several): the initial window (the scenario's, else RFC 5681
/// §3.1's for the MSS: 2, 3 or 4 segments — Linux would start with 10, RFC 6928) and the RTO's
/// lower bound (`rto_min`, Linux's default 200 ms against the scenario's RFC 6298 1 s).
fn route_settings(s: &Scenario, mtu: u32) -> Vec<Option<netns::TcpRoute>> {
    let topo = Topology::new(s);
    let mut out = vec![None; topo.names.len()];
    for f in s.flows.iter().filter(|f| f.transport() == Transport::Tcp) {
        let p = f.tcp.clone().unwrap_or_default();
        let mss = p.mss.map_or(mtu.saturating_sub(40), |m| m.0 as u32);
        let rfc5681 = if mss > 2190 { 2 } else if mss > 1095 { 3 } else { 4 };
        let route = netns::TcpRoute { initcwnd: p.initial_cwnd.unwrap_or(rfc5681), rto_min_ms: (p.rto_min.0 / 1_000_000).max(1) };
        out[topo.index(f.src.get_ref()).expect("validated")].get_or_insert(route);
        out[topo.index(f.dst.get_ref()).expect("validated")].get_or_insert(route);
    }
    out
}

/// True if a TCP flow from or to `node` turns SACK off (Linux negotiates it per namespace).
fn sack_off(s: &Scenario, node: &str) -> bool {
    s.flows.iter().any(|f| {
        f.transport() == Transport::Tcp
            && (f.src.get_ref() == node || f.dst.get_ref() == node)
            && !f.tcp.clone().unwrap_or_default().sack
    })
}

fn flow_sockets(s: &Scenario, namespaces: &[(usize, String)]) -> Result<Vec<apps::FlowSockets>, EmuError> {
    let topo = Topology::new(s);
    let rng = RngStreams::new(s.simulation.seed);
    let ns_of = |node: usize| namespaces.iter().find(|(n, _)| *n == node).map(|(_, ns)| ns.clone()).expect("flow ends are endpoints");
    let end = s.simulation.duration.0;
    let mut out = Vec::new();
    for (i, f) in s.flows.iter().enumerate() {
        let (src, dst) = (topo.index(f.src.get_ref()).expect("validated"), topo.index(f.dst.get_ref()).expect("validated"));
        let src_addr = apps::address(src as u32, SOURCE_PORT + i as u16);
        let dst_addr = apps::address(dst as u32, FLOW_PORT + i as u16);
        let app = lasthop_scenario::build::traffic::flow_app(s, f, &rng);
        let (tcp, kind) = match f.transport() {
            Transport::Tcp => {
                let p = f.tcp.clone().unwrap_or_default();
                let congestion = match p.variant {
                    CcVariant::Newreno => "reno",
                    CcVariant::Cubic => "cubic",
                    CcVariant::Bbr => "bbr",
                };
                let bytes = match app.transfer.volume {
                    lasthop_core::traffic::Volume::Bytes(b) => Some(b),
                    _ => None,
                };
                (Some(apps::TcpOptions { congestion, send_buffer: p.send_buffer.0, receive_buffer: p.receive_buffer.0 }), apps::FlowKind::Tcp { bytes })
            }
            Transport::Udp => (None, apps::FlowKind::Udp { schedule: Box::new(app.messages.expect("validated: UDP apps are sources")) }),
        };
        let (sender, receiver) = apps::open_flow(&ns_of(src), &ns_of(dst), src_addr, dst_addr, tcp.as_ref())?;
        out.push(apps::FlowSockets {
            name: f.name.clone(),
            sender,
            receiver,
            dst: dst_addr,
            kind,
            start: std::time::Duration::from_nanos(f.start_time(&rng).0.min(end)),
            stop: std::time::Duration::from_nanos(f.stop.map_or(end, |t| t.0.min(end))),
        });
    }
    Ok(out)
}

/// The run report from what the driver observed, in the simulator's layout.
fn output(s: &Scenario, mut driver: Driver, reached: Time, apps: &[apps::AppReport], signal: Option<i32>) -> EmuOutput {
    let end = reached;
    let mut intervals = IntervalColumns::default();
    let mut tables = Vec::new();
    let names = driver.net.node_names.clone();
    let flows: Vec<FlowReport> = driver
        .observer
        .flows
        .iter()
        .map(|f| {
            for row in f.forward.interval_rows(end) {
                intervals.push(&f.name, row);
            }
            let active = f.active(end);
            FlowReport {
                name: f.name.clone(),
                transport: match f.transport {
                    Transport::Tcp => report::Transport::Tcp,
                    Transport::Udp => report::Transport::Udp,
                },
                src: names[f.src as usize].clone(),
                dst: names[f.dst as usize].clone(),
                start_s: f.start.as_secs_f64(),
                stop_s: f.stop.min(end).as_secs_f64(),
                forward: f.forward.summary(active),
                reverse: ReverseSummary::from(&f.reverse.summary(active)),
                connection: None,
            }
        })
        .collect();
    tables.push(delay_cdf_table(driver.observer.flows.iter().map(|f| (f.name.as_str(), &f.forward))));
    let links = driver
        .net
        .hops
        .iter_mut()
        .filter_map(|slot| if let Hop::Wired(c) = &mut slot.hop { Some(c.report(end, &mut tables)) } else { None })
        .collect();
    let mut wlans = Vec::new();
    for slot in &driver.net.hops {
        let Hop::Wlan(w) = &slot.hop else { continue };
        let members = slot.nodes.iter().enumerate().map(|(i, &n)| WlanMemberReport { node: names[n as usize].clone(), mac: w.dcf.station_stats(i).clone() }).collect();
        let st = &w.dcf.stats;
        wlans.push(WlanReport { name: w.name.clone(), exchanges: st.exchanges, successes: st.successes, collisions: st.collisions, busy_share: busy_share(st.busy_ns, end), members });
    }
    let (sap_law, snoop, error_generators) = driver.net.processor_reports();
    let report = RunReport {
        header: RunHeader {
            scenario: serde_json::to_value(s).expect("the scenario serializes"),
            seed: s.simulation.seed,
            simulated_s: end.as_secs_f64(),
            events_processed: driver.stats.packets_read,
            packets_in_network_at_end: driver.in_network() as u64,
        },
        flows,
        links,
        wlans,
        wcdma: Vec::new(),
        sap_law,
        snoop,
        error_generators,
        hosts: Vec::new(),
    };
    let mut all = vec![intervals.into_table()];
    all.extend(tables);
    let mut emulator = emulator_json(&driver.stats, apps, &driver.captures, &names);
    let m = driver.mechanisms.stats;
    emulator["processors"] = serde_json::json!({
        "packets_processed": m.processed,
        "windows_rewritten": m.windows_rewritten,
        "packets_emitted": m.emitted,
        "packets_unparsed": m.unparsed,
    });
    let captures = driver.captures.list.iter().map(|c| (c.spec.spec.clone(), c.pcap.file())).collect();
    EmuOutput { report, tables: all, emulator, signal, captures }
}

fn emulator_json(st: &DriverStats, apps: &[apps::AppReport], captures: &capture::Captures, names: &[String]) -> serde_json::Value {
    let us = |q| st.lateness_quantile_ns(q).map(|ns| ns as f64 / 1e3);
    serde_json::json!({
        "packets_read": st.packets_read,
        "packets_written": st.packets_written,
        "malformed_packets": st.malformed,
        "unroutable_packets": st.unroutable,
        "other_packets": st.other_packets,
        "write_errors": st.write_errors,
        "release_lateness_us": {"p50": us(0.5), "p99": us(0.99), "p999": us(0.999), "max": st.lateness_max_ns as f64 / 1e3},
        // Releases per lateness bucket k: [2^(k-1), 2^k) ns (bucket 0: on time).
        "release_lateness_log2_ns": st.lateness_log2.to_vec(),
        "wakeups": st.wakeups,
        "realtime_scheduling": st.realtime,
        "apps": apps.iter().map(|a| serde_json::json!({
            "flow": a.name, "bytes_sent": a.bytes_sent, "bytes_received": a.bytes_received, "error": a.error,
        })).collect::<Vec<_>>(),
        // Per capture, what it recorded each way: transmitted (from the node, at the start of
        // transmission) and received (at arrival), packets and IP bytes.
        "captures": captures.list.iter().map(|c| serde_json::json!({
            "capture": c.spec.spec,
            "node": names[c.spec.node as usize],
            "peer": c.spec.peer.map(|p| names[p as usize].clone()),
            "tx_packets": c.tx.packets, "tx_bytes": c.tx.bytes,
            "rx_packets": c.rx.packets, "rx_bytes": c.rx.bytes,
        })).collect::<Vec<_>>(),
    })
}
