//! Bindings of lasthop-gen's D-ITG compatibility (`lasthop ditg-dec`, `lasthop import-ditg`):
//! arguments converted, the GIL released while a log is read, errors mapped to `DitgLogError`.

use crate::tables_to_py;
use lasthop_core::report::Transport;
use lasthop_core::Duration;
use lasthop_gen::ditg::{self, DitgError, ImportOptions};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

create_exception!(lasthop._core, DitgLogError, PyValueError, "A D-ITG log that cannot be decoded, or a bad argument; the message names the file and the byte offset.");

fn err(e: DitgError) -> PyErr {
    DitgLogError::new_err(e.to_string())
}

/// ITGDec's summary of the log at `path` (the text after its banner). With `interval_ms`,
/// also writes ITGDec's `-c interval_ms` time series (combined_stats.dat) to `out`.
#[pyfunction]
#[pyo3(signature = (path, interval_ms=None, out=None))]
fn ditg_decode(py: Python<'_>, path: PathBuf, interval_ms: Option<f64>, out: Option<PathBuf>) -> PyResult<String> {
    py.allow_threads(|| {
        let summary = match (interval_ms, out) {
            (Some(ms), Some(out)) => {
                let f = File::create(&out).map_err(|e| DitgError::Io { path: out.display().to_string(), source: e })?;
                let mut w = BufWriter::new(f);
                let s = ditg::decode_file(&path, Some((ms, &mut w)))?;
                w.flush().map_err(|e| DitgError::Io { path: out.display().to_string(), source: e })?;
                s
            }
            (None, None) => ditg::decode_file::<std::io::Sink>(&path, None)?,
            _ => return Err(DitgError::Argument("a time series needs both an interval and an output file".into())),
        };
        Ok(summary.text())
    })
    .map_err(err)
}

/// Imports D-ITG logs (sender's `-l`, receiver's `-x`; at least one) as a run's results:
/// (summary JSON, tables) as `Simulation.output()` gives them.
#[pyfunction]
#[pyo3(signature = (sender=None, receiver=None, interval_s=0.1, transport="udp"))]
fn ditg_import<'py>(
    py: Python<'py>,
    sender: Option<PathBuf>,
    receiver: Option<PathBuf>,
    interval_s: f64,
    transport: &str,
) -> PyResult<(String, Bound<'py, PyList>)> {
    let transport = match transport {
        "udp" => Transport::Udp,
        "tcp" => Transport::Tcp,
        other => return Err(DitgLogError::new_err(format!("transport {other:?}: expected \"udp\" or \"tcp\""))),
    };
    if !(interval_s >= 1e-6 && interval_s.is_finite()) {
        return Err(DitgLogError::new_err(format!("interval {interval_s} s: expected at least 1 µs")));
    }
    let opts = ImportOptions { interval: Duration((interval_s * 1e9).round() as u64), transport };
    let out = py.allow_threads(|| ditg::import_logs(sender.as_deref(), receiver.as_deref(), &opts)).map_err(err)?;
    Ok((out.report.to_json(), tables_to_py(py, &out.tables)?))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DitgLogError", m.py().get_type::<DitgLogError>())?;
    m.add_function(wrap_pyfunction!(ditg_decode, m)?)?;
    m.add_function(wrap_pyfunction!(ditg_import, m)?)?;
    Ok(())
}
