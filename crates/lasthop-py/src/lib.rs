//! Thin PyO3 bindings: convert arguments, release the GIL while simulating, map errors in one
//! place. Everything of substance lives in the worlds' crates: the simulator (`lasthop-sim`,
//! here), the measure world (`lasthop-gen`, bound in [`gen`]; its D-ITG compatibility in
//! [`ditg`]) and the emulate world (`lasthop-emu`, bound in [`emu`]). The Python face is
//! `python/lasthop`.

use lasthop_core::units::{self, did_you_mean, QueueLimit, UnitError};
use lasthop_sim::{Column, Scenario, Simulation, Table};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

mod ditg;
mod emu;
mod gen;

create_exception!(lasthop._core, ScenarioError, PyValueError, "A scenario file that cannot be used; the message names the file, the field and what is valid.");
create_exception!(lasthop._core, SimulationError, PyRuntimeError, "A run the engine's watchdog stopped: simulated time no longer advanced; the message names the entity.");

fn scenario_from(text: &str, file: &str, overrides: Vec<(String, String)>) -> PyResult<Scenario> {
    Scenario::from_toml_str(text, file, &overrides).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Validates a scenario and returns the resolved scenario as JSON (defaults filled in).
#[pyfunction]
#[pyo3(signature = (text, file, overrides=Vec::new()))]
fn resolve_scenario(text: &str, file: &str, overrides: Vec<(String, String)>) -> PyResult<String> {
    let s = scenario_from(text, file, overrides)?;
    Ok(serde_json::to_string(&s).expect("scenario serializes"))
}

/// The JSON Schema of the scenario format.
#[pyfunction]
fn json_schema() -> String {
    lasthop_scenario::json_schema()
}

/// The JSON Schema of the run report (`summary.json`): the Python side derives the flows
/// table's columns and their types from it.
#[pyfunction]
fn run_schema() -> String {
    lasthop_core::report::run_schema()
}

/// A Mahimahi link trace (a file or "bundled:traces/NAME"): its opportunities per pass, period
/// (s), mean capacity (b/s) and capacity in each `bin_s` of one period (b/s): `lasthop trace show`.
#[pyfunction]
fn link_trace_summary(path: &str, bin_s: f64) -> PyResult<(usize, f64, f64, Vec<f64>)> {
    let t = lasthop_scenario::links::read_link_trace(path).map_err(ScenarioError::new_err)?;
    let bin = lasthop_core::Duration(((bin_s.max(1e-3)) * 1e9).round() as u64);
    Ok((t.opportunities(), t.period().as_secs_f64(), t.mean_bps(), t.capacity_bps(bin, t.period())))
}

/// A synthetic link trace in mm-link's format (`lasthop_core::link_trace::Synthetic`'s model).
#[pyfunction]
fn synthetic_link_trace(mean_bps: f64, std_bps: f64, correlation_s: f64, length_s: f64, seed: u64) -> String {
    let model = lasthop_core::link_trace::Synthetic {
        mean_bps,
        std_bps,
        correlation: lasthop_core::Duration((correlation_s * 1e9).round() as u64),
        length: lasthop_core::Duration((length_s * 1e9).round() as u64),
    };
    model.draw(&mut lasthop_core::rng::RngStreams::new(seed).stream("link-trace")).to_text()
}

/// TOML text of a bundled scenario, or None.
#[pyfunction]
fn bundled_scenario(name: &str) -> Option<&'static str> {
    lasthop_scenario::bundled::bundled(name)
}

/// Names of the bundled scenarios.
#[pyfunction]
fn bundled_names() -> Vec<&'static str> {
    lasthop_scenario::bundled::BUNDLED.iter().map(|(n, _)| *n).collect()
}

/// What `parse_quantity` accepts: the units of the core's parsers, packet counts and numbers.
const QUANTITY_EXPECTED: &str = "a duration (ns, us, ms, s, min, h), a rate (bps, kbps, Mbps, Gbps), a size (B, kB, MB, GB, \
KiB, MiB, GiB), a packet count (100p) or a plain number, e.g. \"10ms\", \"11Mbps\", \"1500B\", \"100p\", \"0.01\"";

/// The core's unit parsers, each giving the value in SI units (seconds, bit/s, bytes, packets)
/// and its kind. Their unit tables do not overlap, so at most one of them accepts a text.
const QUANTITY_PARSERS: [fn(&str) -> Result<(f64, &'static str), UnitError>; 4] = [
    |t| units::parse_rate(t).map(|r| (r.bps() as f64, "rate")),
    // Integer nanoseconds / 1e9: the double nearest the exact value ("500us" is 5e-4 exactly).
    |t| units::parse_duration(t).map(|d| (d.0 as f64 / 1e9, "duration")),
    |t| units::parse_bytes(t).map(|b| (b.0 as f64, "bytes")),
    |t| {
        units::parse_queue_limit(t).map(|q| match q {
            QueueLimit::Packets(n) => (n as f64, "packets"),
            QueueLimit::Bytes(b) => (b as f64, "bytes"),
        })
    },
];

/// A value as a scenario file writes it, in SI units with its kind: `"500kbps"` -> (5e5,
/// "rate"), `"500us"` -> (5e-4, "duration"), `"64KiB"` -> (65536, "bytes"), `"100p"` -> (100,
/// "packets"), `"0.01"` -> (0.01, "number"). ValueError names the text and what is valid.
/// An 802.11n/ac/ax transmission's PPDU air time and data rate (lasthop_core::wifi::ppdu):
/// `amendment` "802.11n" | "802.11ac" | "802.11ax", `band` "2.4GHz" | "5GHz" | "6GHz"; returns
/// (PPDU duration in ns for a PSDU of `psdu_bytes`, data rate in b/s). ValueError says what is
/// valid.
#[pyfunction]
#[pyo3(signature = (amendment, mcs, streams, width_mhz, guard_interval_ns, band, psdu_bytes))]
fn wifi_ppdu(amendment: &str, mcs: u8, streams: u8, width_mhz: u16, guard_interval_ns: u16, band: &str, psdu_bytes: u64) -> PyResult<(u64, f64)> {
    let tx = tx_vector(amendment, mcs, streams, width_mhz, guard_interval_ns, band)?;
    Ok((tx.ppdu_duration(psdu_bytes).as_nanos(), tx.data_rate_bps()))
}

/// The A-MPDU of up to `count` MPDUs of `mpdu_bytes` that fits `max_bytes`, `max_mpdus` and
/// `max_duration_ns` (a TXOP limit; None: aPPDUMaxTime alone) — lasthop_core::wifi::ppdu::
/// TxVector::aggregate: (MPDUs, PSDU bytes, duration in ns).
#[pyfunction]
#[pyo3(signature = (amendment, mcs, streams, width_mhz, guard_interval_ns, band, mpdu_bytes, count, max_bytes, max_mpdus, max_duration_ns=None))]
#[allow(clippy::too_many_arguments)]
fn wifi_ampdu(amendment: &str, mcs: u8, streams: u8, width_mhz: u16, guard_interval_ns: u16, band: &str, mpdu_bytes: u64, count: usize,
              max_bytes: u64, max_mpdus: usize, max_duration_ns: Option<u64>) -> PyResult<(usize, u64, u64)> {
    use lasthop_core::wifi::ppdu::AggregationLimits;
    let tx = tx_vector(amendment, mcs, streams, width_mhz, guard_interval_ns, band)?;
    let limits = AggregationLimits { max_bytes, max_mpdus, max_duration: lasthop_core::Duration(max_duration_ns.unwrap_or(u64::MAX)) };
    let a = tx.aggregate(std::iter::repeat_n(mpdu_bytes, count), limits).ok_or_else(|| PyValueError::new_err("count 0: an A-MPDU needs an MPDU"))?;
    Ok((a.mpdus, a.psdu_bytes, a.duration.as_nanos()))
}

fn tx_vector(amendment: &str, mcs: u8, streams: u8, width_mhz: u16, guard_interval_ns: u16, band: &str) -> PyResult<lasthop_core::wifi::ppdu::TxVector> {
    use lasthop_core::wifi::ppdu::{Amendment, Band, TxVector};
    let a = match amendment {
        "802.11n" => Amendment::Ht,
        "802.11ac" => Amendment::Vht,
        "802.11ax" => Amendment::He,
        other => return Err(PyValueError::new_err(format!("amendment {other:?}: valid: 802.11n, 802.11ac, 802.11ax"))),
    };
    let b = match band {
        "2.4GHz" => Band::Ghz2_4,
        "5GHz" => Band::Ghz5,
        "6GHz" => Band::Ghz6,
        other => return Err(PyValueError::new_err(format!("band {other:?}: valid: 2.4GHz, 5GHz, 6GHz"))),
    };
    TxVector::new(a, mcs, streams, width_mhz, guard_interval_ns, b).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pyfunction]
fn parse_quantity(text: &str) -> PyResult<(f64, &'static str)> {
    if let Ok(x) = text.trim().parse::<f64>() {
        if x.is_finite() {
            return Ok((x, "number"));
        }
    }
    let mut unknown_unit = Vec::new();
    for parse in QUANTITY_PARSERS {
        match parse(text) {
            Ok(value_kind) => return Ok(value_kind),
            Err(e) if e.reason.starts_with("unknown unit") => unknown_unit.push(e),
            // Every parser says these alike: the text has no number, or no unit after it.
            Err(e) if e.reason == "no number" || e.reason == "no unit" => {}
            // A parser that knew the unit refused the value ("-5Mbps", "0.1ns", "1.2.3ms").
            Err(e) => return Err(PyValueError::new_err(e.to_string())),
        }
    }
    Err(PyValueError::new_err(format!("invalid quantity {text:?}: {}; expected {QUANTITY_EXPECTED}", why_no_quantity(&unknown_unit))))
}

/// `unknown unit "Mbs", did you mean "Mbps"?` (the closest of the parsers' own suggestions),
/// or, when no parser found a unit, that the text is no number with a unit.
fn why_no_quantity(unknown_unit: &[UnitError]) -> String {
    let Some(first) = unknown_unit.first() else {
        return "neither a number nor a number with a unit".into();
    };
    let reason = first.reason.split(", did you mean").next().unwrap_or_default();
    let unit = reason.trim_start_matches("unknown unit ").trim_matches('"');
    let suggested: Vec<&str> = unknown_unit
        .iter()
        .filter_map(|e| e.reason.split_once("did you mean \"")?.1.split_once('"').map(|(u, _)| u))
        .collect();
    format!("{reason}{}", did_you_mean(unit, suggested))
}

/// A simulation in progress.
#[pyclass(name = "Simulation", module = "lasthop._core")]
struct PySimulation {
    sim: Simulation,
}

#[pymethods]
impl PySimulation {
    #[new]
    #[pyo3(signature = (text, file, overrides=Vec::new()))]
    fn new(text: &str, file: &str, overrides: Vec<(String, String)>) -> PyResult<Self> {
        Ok(PySimulation { sim: Simulation::new(scenario_from(text, file, overrides)?) })
    }

    /// Runs until `t_s` seconds of simulated time (or the end), without holding the GIL;
    /// raises SimulationError if the run stalled.
    fn run_until(&mut self, py: Python<'_>, t_s: f64) -> PyResult<()> {
        let t = lasthop_core::Time((t_s.max(0.0) * 1e9).round() as u64);
        let sim = &mut self.sim;
        py.allow_threads(|| sim.run_until(t)).map_err(|e| SimulationError::new_err(e.to_string()))
    }

    /// Captures what crosses `node` (towards `peer` only, if given) as pcap; returns its index.
    #[pyo3(signature = (node, peer=None))]
    fn add_capture(&mut self, node: &str, peer: Option<&str>) -> PyResult<usize> {
        self.sim.add_capture(node, peer).map_err(ScenarioError::new_err)
    }

    /// The pcap file bytes of capture `i`.
    fn capture_pcap<'py>(&self, py: Python<'py>, i: usize) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.sim.capture_pcap(i))
    }

    #[getter]
    fn now_s(&self) -> f64 {
        self.sim.now().as_secs_f64()
    }
    #[getter]
    fn end_s(&self) -> f64 {
        self.sim.end().as_secs_f64()
    }
    #[getter]
    fn events_processed(&self) -> u64 {
        self.sim.events_processed()
    }

    /// The rows recorded since the last drain, handed over: ([per flow its ended intervals],
    /// [trace rows]), tables as [`tables_to_py`] gives them.
    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        let d = self.sim.drain();
        Ok((tables_to_py(py, &d.intervals)?, tables_to_py(py, &d.traces)?))
    }

    /// Interval rows and trace samples the simulation holds (what a drain would hand over).
    #[getter]
    fn held_rows(&self) -> usize {
        self.sim.held_rows()
    }

    /// (summary JSON, [(table name, [(column, kind, data, validity)])]) — see [`tables_to_py`].
    fn output<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyList>)> {
        let out = self.sim.output();
        Ok((out.report.to_json(), tables_to_py(py, &out.tables)?))
    }
}

/// Tables as [(table name, [(column, kind, data, validity)])]: numeric data as little-endian
/// bytes ("f64"/"u64"), validity as bytes of 0/1 for nullable columns.
pub(crate) fn tables_to_py<'py>(py: Python<'py>, tables: &[Table]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for t in tables {
        let cols = PyList::empty(py);
        for (name, c) in &t.columns {
            let item: Bound<'py, PyTuple> = match c {
                Column::F64(v) => {
                    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                    (name, "f64", PyBytes::new(py, &b), py.None()).into_pyobject(py)?
                }
                Column::OptF64(v) => {
                    let b: Vec<u8> = v.iter().flat_map(|x| x.unwrap_or(0.0).to_le_bytes()).collect();
                    let valid: Vec<u8> = v.iter().map(|x| x.is_some() as u8).collect();
                    (name, "f64", PyBytes::new(py, &b), PyBytes::new(py, &valid)).into_pyobject(py)?
                }
                Column::U64(v) => {
                    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                    (name, "u64", PyBytes::new(py, &b), py.None()).into_pyobject(py)?
                }
                Column::Str(v) => (name, "str", PyList::new(py, v)?, py.None()).into_pyobject(py)?,
            };
            cols.append(item)?;
        }
        list.append((t.name.as_str(), cols))?;
    }
    Ok(list)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(json_schema, m)?)?;
    m.add_function(wrap_pyfunction!(run_schema, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_names, m)?)?;
    m.add_function(wrap_pyfunction!(link_trace_summary, m)?)?;
    m.add_function(wrap_pyfunction!(synthetic_link_trace, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(wifi_ppdu, m)?)?;
    m.add_function(wrap_pyfunction!(wifi_ampdu, m)?)?;
    m.add_class::<PySimulation>()?;
    ditg::register(m)?;
    emu::register(m)?;
    gen::register(m)?;
    Ok(())
}
