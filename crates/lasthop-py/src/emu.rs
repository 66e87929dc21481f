//! Bindings of the emulate world (`lasthop-emu`): an emulation that runs in the background
//! while Python waits for it or runs a command in one of its namespaces, the clean-up of what
//! killed emulators left, and the list of what this machine lacks. Errors become
//! `EmulationError` (a RuntimeError) with the emulator's message.

use crate::{scenario_from, tables_to_py};
use lasthop_emu::{netns, EmuOptions, Emulation};
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

create_exception!(lasthop._core, EmulationError, PyRuntimeError, "An emulation that cannot start or run; the message says what is missing or failed.");

fn emu_err(e: lasthop_emu::EmuError) -> PyErr {
    EmulationError::new_err(e.to_string())
}

/// A running emulation of a scenario.
#[pyclass(name = "Emulation", module = "lasthop._core")]
struct PyEmulation {
    emu: Option<Emulation>,
}

#[pymethods]
impl PyEmulation {
    /// Starts it: `flows` runs the scenario's flows, `timed` stops at its duration,
    /// `handle_signals` stops on SIGINT/SIGTERM, `pcap` lists capture points (`node` or
    /// `node:neighbour`), `snaplen` cuts captured packets, `spin_us` polls instead of sleeping
    /// that long before each due event, `pcap_files` are where the captures are streamed (in
    /// `pcap`'s order; a capture without one is returned by `finish`), `clear_push` clears PSH
    /// on the kernel TCPs' data segments (their receivers then ACK as RFC 1122's),
    /// `keep_cpus_awake` holds idle CPUs at 0 µs wake-up latency (PM QoS) while it runs,
    /// `steer_receives` gives the driver a CPU of its own and steers the devices' receives to
    /// the others.
    #[new]
    #[pyo3(signature = (text, file, overrides=Vec::new(), flows=true, timed=true, handle_signals=true, pcap=Vec::new(), snaplen=None, spin_us=0.0, pcap_files=Vec::new(), clear_push=false, keep_cpus_awake=true, steer_receives=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        text: &str,
        file: &str,
        overrides: Vec<(String, String)>,
        flows: bool,
        timed: bool,
        handle_signals: bool,
        pcap: Vec<String>,
        snaplen: Option<usize>,
        spin_us: f64,
        pcap_files: Vec<std::path::PathBuf>,
        clear_push: bool,
        keep_cpus_awake: bool,
        steer_receives: bool,
    ) -> PyResult<Self> {
        let scenario = scenario_from(text, file, overrides)?;
        let spin = std::time::Duration::from_nanos((spin_us.clamp(0.0, 10_000.0) * 1e3) as u64);
        let opts = EmuOptions { flows, timed, handle_signals, pcap, pcap_files, snaplen, spin, clear_push, keep_cpus_awake, steer_receives };
        let emu = py.allow_threads(|| Emulation::start(scenario, &opts)).map_err(emu_err)?;
        Ok(PyEmulation { emu: Some(emu) })
    }

    /// [(node, namespace)] of every endpoint.
    fn namespaces(&self) -> Vec<(String, String)> {
        self.emu.as_ref().map(|e| e.namespaces()).unwrap_or_default()
    }

    /// Namespaces of dead emulators removed before this one started.
    fn stale_removed(&self) -> Vec<String> {
        self.emu.as_ref().map(|e| e.stale_removed().to_vec()).unwrap_or_default()
    }

    /// True once the emulated network has stopped.
    #[getter]
    fn stopped(&self) -> bool {
        self.emu.as_ref().is_none_or(|e| e.stopped())
    }

    /// Waits up to `timeout_s` for the network to stop (without the GIL); True if it has.
    fn wait(&self, py: Python<'_>, timeout_s: f64) -> bool {
        let Some(emu) = self.emu.as_ref() else { return true };
        let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(timeout_s.max(0.0));
        py.allow_threads(|| {
            while !emu.stopped() && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        emu.stopped()
    }

    /// Stops everything, removes the namespaces and returns (summary JSON, tables, emulator
    /// JSON, the signal that ended the run or None, [(capture point, pcap bytes, or None for a
    /// capture streamed to its file)]).
    #[allow(clippy::type_complexity)]
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyList>, String, Option<i32>, Vec<(String, Option<Bound<'py, PyBytes>>)>)> {
        let emu = self.emu.take().ok_or_else(|| EmulationError::new_err("this emulation has already finished"))?;
        let out = py.allow_threads(|| emu.finish()).map_err(emu_err)?;
        let tables = tables_to_py(py, &out.tables)?;
        let captures = out.captures.iter().map(|(spec, bytes)| (spec.clone(), bytes.as_ref().map(|b| PyBytes::new(py, b)))).collect();
        Ok((out.report.to_json(), tables, serde_json::to_string(&out.emulator).expect("the emulator report serializes"), out.signal, captures))
    }
}

/// Removes what emulators, senders and receivers no longer running left (namespaces, the
/// `lh-<pid>-{gen,recv,pcap}-*` working directories); returns their names.
#[pyfunction]
fn emu_clean() -> PyResult<Vec<String>> {
    lasthop_emu::clean_stale().map_err(emu_err)
}

/// What this machine lacks to emulate (empty when it can).
#[pyfunction]
fn emu_missing() -> Vec<String> {
    netns::missing_requirements()
}

/// What an unprivileged user namespace lacks on this machine (empty when emu can run in one).
#[pyfunction]
fn emu_userns_missing() -> Vec<String> {
    netns::user_namespace_missing()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("EmulationError", m.py().get_type::<EmulationError>())?;
    m.add_class::<PyEmulation>()?;
    m.add_function(wrap_pyfunction!(emu_clean, m)?)?;
    m.add_function(wrap_pyfunction!(emu_missing, m)?)?;
    m.add_function(wrap_pyfunction!(emu_userns_missing, m)?)?;
    Ok(())
}
