//! Thin PyO3 bindings: convert arguments, release the GIL while simulating, map errors in one
//! place. Everything of substance lives in `lasthop-sim`; the Python face is `python/lasthop`.

use lasthop_sim::{Column, Scenario, Simulation};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

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
        PyBytes::new(py, self.sim.capture_pcap(i))
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

    /// (summary JSON, [(table name, [(column, kind, data, validity)])]). Numeric data is
    /// little-endian bytes ("f64"/"u64"); validity is bytes of 0/1 for nullable columns.
    fn output<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyList>)> {
        let out = self.sim.output();
        let tables = PyList::empty(py);
        for t in &out.tables {
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
            tables.append((t.name.as_str(), cols))?;
        }
        Ok((serde_json::to_string(&out.summary).expect("summary serializes"), tables))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(json_schema, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_names, m)?)?;
    m.add_class::<PySimulation>()?;
    Ok(())
}
