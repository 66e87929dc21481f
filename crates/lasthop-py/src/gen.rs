//! Bindings of the measure world (`lasthop-gen`): the sender runs in a Rust thread that Python
//! polls for progress ([`PyGenSend`]), the receiver blocks with the GIL released until
//! SIGINT/SIGTERM (a signal-hook flag: Python's own handlers cannot run while Rust holds the
//! thread). Errors are one line: [`GenError`] for bad flows or options, the same message for a
//! run that failed.

use lasthop_core::Duration;
use lasthop_gen::control::Meter;
use lasthop_gen::plan::{ditg_flow_toml, plan_from_toml, DitgFlags, Plan};
use lasthop_gen::recv::{bind, serve, Limits, RecvOptions};
use lasthop_gen::results::{compute, PacketTables};
use lasthop_gen::send::{record_files, send, Progress, SendOptions};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

create_exception!(lasthop._core, GenError, PyValueError, "A measurement that cannot run or failed: the message names the flag, file or peer and what is valid.");

/// What the sending thread hands back: summary JSON, tables, the measure block's JSON and the
/// record files (to move into the results directory).
type SendDone = (String, Vec<lasthop_core::report::Table>, String, Vec<String>);

/// A measurement in progress.
#[pyclass(name = "GenSend", module = "lasthop._core")]
struct PyGenSend {
    progress: Arc<Progress>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<SendDone, String>>>,
    /// Sending is over (the results are being computed: with streamed per-packet tables,
    /// `wait` must now take their pieces).
    sent_all: Arc<AtomicBool>,
    /// The per-packet tables in pieces, when they are streamed.
    chunks: Option<std::sync::Mutex<std::sync::mpsc::Receiver<lasthop_core::report::Table>>>,
    duration_s: f64,
    planned_packets: Option<u64>,
}

fn meter(name: &str) -> PyResult<Meter> {
    match name {
        "owd" => Ok(Meter::Owd),
        "rtt" => Ok(Meter::Rtt),
        other => Err(GenError::new_err(format!("--meter {other:?}: owd (one-way delay) or rtt (round trip by echo)"))),
    }
}

#[pymethods]
impl PyGenSend {
    /// Loads the flows (a flows file's text, or a whole scenario) and starts sending to `to`.
    #[new]
    /// With `stream_packets`, the per-packet tables come in pieces to `wait`'s callback instead
    /// of whole (no bound on their size then).
    #[pyo3(signature = (text, file, to, work_dir, meter_name="owd", token=None, duration_s=None, seed=None, loss_timeout_s=1.0, packets=true, data_port=None, realtime=false, ditg_log=None, spin_us=None, gso=None, stream_packets=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        text: &str,
        file: &str,
        to: String,
        work_dir: PathBuf,
        meter_name: &str,
        token: Option<String>,
        duration_s: Option<f64>,
        seed: Option<u64>,
        loss_timeout_s: f64,
        packets: bool,
        data_port: Option<u16>,
        realtime: bool,
        ditg_log: Option<PathBuf>,
        spin_us: Option<f64>,
        gso: Option<bool>,
        stream_packets: bool,
    ) -> PyResult<Self> {
        let duration = match duration_s {
            Some(d) if !(d.is_finite() && d > 0.0) => return Err(GenError::new_err(format!("--duration {d}: a positive number of seconds"))),
            Some(d) => Some(Duration((d * 1e9).round() as u64)),
            None => None,
        };
        if !(loss_timeout_s.is_finite() && (0.0..=60.0).contains(&loss_timeout_s)) {
            return Err(GenError::new_err(format!("--loss-timeout {loss_timeout_s}: 0 to 60 seconds")));
        }
        let spin_ns = match spin_us {
            None => lasthop_gen::pacer::SPIN_NS,
            Some(s) if s.is_finite() && (0.0..=10_000.0).contains(&s) => (s * 1e3).round() as u64,
            Some(s) => return Err(GenError::new_err(format!("--spin-us {s}: 0 to 10000 µs"))),
        };
        let m = meter(meter_name)?;
        let mut plan: Plan = plan_from_toml(text, file, duration, seed).map_err(GenError::new_err)?;
        let duration_s = plan.duration_ns as f64 / 1e9;
        let planned_packets = plan.planned_packets();
        if packets && !stream_packets {
            lasthop_gen::plan::check_packet_tables(planned_packets).map_err(GenError::new_err)?;
        }
        // One piece in flight: the computing thread waits for the writer beyond it.
        let (chunk_tx, chunk_rx) = std::sync::mpsc::sync_channel::<lasthop_core::report::Table>(1);
        let chunks = (packets && stream_packets).then_some(std::sync::Mutex::new(chunk_rx));
        let o = SendOptions { to, token, meter: m, loss_timeout_ns: (loss_timeout_s * 1e9) as u64, work_dir, data_port, realtime, ditg_log, origin_mono_ns: None, spin_ns, gso };
        let progress = Arc::new(Progress::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (progress.clone(), stop.clone());
        let sent_all = Arc::new(AtomicBool::new(false));
        let over = sent_all.clone();
        let handle = std::thread::spawn(move || -> Result<SendDone, String> {
            let measured = send(&mut plan, &o, &s, &p);
            over.store(true, Ordering::Relaxed);
            let measured = measured?;
            let mut to_reader = |t| chunk_tx.send(t).map_err(|_| "the per-packet tables' writer stopped".to_string());
            let tables = match (packets, stream_packets) {
                (false, _) => PacketTables::Off,
                (true, false) => PacketTables::InMemory,
                (true, true) => PacketTables::Streamed { rows: lasthop_gen::results::PACKET_CHUNK_ROWS, sink: &mut to_reader },
            };
            let out = compute(&plan, &measured, tables)?;
            let measure = serde_json::to_string(&out.measure).expect("the measure block serializes");
            let files = record_files(&measured).iter().map(|f| f.display().to_string()).collect();
            Ok((out.report.to_json(), out.tables, measure, files))
        });
        Ok(PyGenSend { progress, stop, handle: Some(handle), sent_all, chunks, duration_s, planned_packets })
    }

    /// (seconds since the run's origin, the run's duration, packets sent, packets planned or None).
    fn progress(&self) -> (f64, f64, u64, Option<u64>) {
        let origin = self.progress.origin_ns.load(Ordering::Relaxed);
        let elapsed = if origin == 0 { 0.0 } else { lasthop_gen::clock::mono_ns().saturating_sub(origin) as f64 / 1e9 };
        (elapsed, self.duration_s, self.progress.sent.load(Ordering::Relaxed), self.planned_packets)
    }

    /// True once the run (and the receiver's answer) is over: time to `wait` for the results.
    fn finished(&self) -> bool {
        self.sent_all.load(Ordering::Relaxed) || !matches!(&self.handle, Some(h) if !h.is_finished())
    }

    /// Asks the senders to stop now (Ctrl-C); the run ends with what was sent.
    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for the end: (summary JSON, tables, measure JSON, record files). Streamed
    /// per-packet tables go to `on_chunk(raw)` piece by piece meanwhile (`raw` as in the tables'
    /// list: one table), each table's pieces in order.
    #[pyo3(signature = (on_chunk=None))]
    fn wait<'py>(&mut self, py: Python<'py>, on_chunk: Option<Bound<'py, PyAny>>) -> PyResult<(String, Bound<'py, PyList>, String, Vec<String>)> {
        let h = self.handle.take().ok_or_else(|| GenError::new_err("this measurement was already collected"))?;
        if let Some(rx) = self.chunks.take() {
            let Some(on_chunk) = on_chunk else {
                return Err(GenError::new_err("streamed per-packet tables need wait(on_chunk)"));
            };
            let mut rx = rx.into_inner().unwrap_or_else(|e| e.into_inner());
            // Until the computing thread drops its end (it has finished, or failed); the
            // receiver goes into each wait without the GIL and comes back with the piece.
            loop {
                let (back, got) = py.allow_threads(move || {
                    let got = rx.recv();
                    (rx, got)
                });
                rx = back;
                let Ok(t) = got else { break };
                let raw = crate::tables_to_py(py, std::slice::from_ref(&t))?;
                on_chunk.call1((raw.get_item(0)?,))?;
            }
        }
        let r = py.allow_threads(|| h.join());
        let (summary, tables, measure, files) = r.map_err(|_| GenError::new_err("the measurement thread failed (a bug: please report it)"))?.map_err(GenError::new_err)?;
        Ok((summary, crate::tables_to_py(py, &tables)?, measure, files))
    }
}

/// The flows file D-ITG-like flags describe (`-T`, `-C`, `-c`, `-t`).
#[pyfunction]
#[pyo3(signature = (protocol="UDP", rate_pps=1000.0, size=512, duration_ms=10_000))]
fn gen_ditg_flows(protocol: &str, rate_pps: f64, size: u64, duration_ms: u64) -> PyResult<String> {
    ditg_flow_toml(&DitgFlags { protocol: protocol.into(), rate_pps, size, duration_ms }).map_err(GenError::new_err)
}

/// Runs a receiver on `listen` until SIGINT/SIGTERM (or `sessions` sessions); returns its
/// summary as JSON. `on_ready(port)` is called once it listens (port 0 picks one).
#[pyfunction]
#[pyo3(signature = (listen, token=None, out=None, sessions=None, kernel_timestamps=false, on_ready=None, realtime=false, ditg_log=None, max_sessions=16, handshake_s=30.0, idle_s=30.0))]
#[allow(clippy::too_many_arguments)]
fn gen_recv(
    py: Python<'_>,
    listen: &str,
    token: Option<String>,
    out: Option<PathBuf>,
    sessions: Option<u32>,
    kernel_timestamps: bool,
    on_ready: Option<PyObject>,
    realtime: bool,
    ditg_log: Option<PathBuf>,
    max_sessions: usize,
    handshake_s: f64,
    idle_s: f64,
) -> PyResult<String> {
    let keepalive = lasthop_gen::send::KEEPALIVE.as_secs_f64();
    if !(1..=1024).contains(&max_sessions) {
        return Err(GenError::new_err(format!("--max-sessions {max_sessions}: 1 to 1024 sessions at once")));
    }
    if !(handshake_s.is_finite() && (0.1..=3600.0).contains(&handshake_s)) {
        return Err(GenError::new_err(format!("--handshake-timeout {handshake_s}: 0.1 to 3600 seconds")));
    }
    if !(idle_s.is_finite() && idle_s > keepalive && idle_s <= 86_400.0) {
        return Err(GenError::new_err(format!(
            "--idle-timeout {idle_s}: more than the {keepalive} s between a running sender's keepalive probes, at most 86400 seconds"
        )));
    }
    let limits = Limits { handshake: std::time::Duration::from_secs_f64(handshake_s), idle: std::time::Duration::from_secs_f64(idle_s), sessions: max_sessions, ..Limits::default() };
    let addr = listen
        .parse()
        .or_else(|_| format!("{listen}:{}", lasthop_gen::control::DEFAULT_PORT).parse())
        .map_err(|_| GenError::new_err(format!("--listen {listen:?}: an address and port, e.g. 127.0.0.1:9000 or [::1]:9000")))?;
    let o = RecvOptions { token, out, sessions, kernel_timestamps, realtime, ditg_log, limits, ..RecvOptions::new(addr) };
    let listener = bind(&o).map_err(GenError::new_err)?;
    if let Some(cb) = on_ready {
        cb.call1(py, (listener.local_addr().map_or(0, |a| a.port()),))?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let ids = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
        .into_iter()
        .map(|sig| signal_hook::flag::register(sig, stop.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| GenError::new_err(format!("cannot watch for signals: {e}")))?;
    let r = py.allow_threads(|| serve(listener, &o, &stop));
    for id in ids {
        signal_hook::low_level::unregister(id);
    }
    let summary = r.map_err(GenError::new_err)?;
    Ok(serde_json::to_string(&summary).expect("the receiver summary serializes"))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("GenError", m.py().get_type::<GenError>())?;
    m.add_class::<PyGenSend>()?;
    m.add_function(wrap_pyfunction!(gen_ditg_flows, m)?)?;
    m.add_function(wrap_pyfunction!(gen_recv, m)?)?;
    Ok(())
}
