//! D-ITG 2.8.1 compatibility: its binary logs, its decoder ITGDec, and the way from its logs
//! to lasthop's own results (`../shared/reference/ditg.md` lists the formats and ITGDec's
//! definitions; D-ITG's source, `src/ITGDec/ITGDec.cpp` of 2.8.1 r1023, is the reference for
//! every rule, and Debian's `ITGDec` binary the oracle the tests compare with).
//!
//! Map:
//! - [`record`]  the 144-byte log record: streaming [`LogReader`], and [`LogWriter`] for a
//!   generator that offers D-ITG logs (`--ditg-log FILE`)
//! - [`dec`]     ITGDec's summary, digit for digit, quirks included (TOTAL jitter across flows,
//!   time-of-day wraps, 32-bit loss counters)
//! - [`series`]  ITGDec's `-c <ms>` time series (combined_stats.dat)
//! - [`export`]  lasthop's per-packet records → D-ITG logs (`--ditg-log FILE` of `lasthop gen
//!   send` and `lasthop gen recv`)
//! - [`import`]  D-ITG logs → lasthop's per-flow meters (`lasthop_core::metrics::FlowMeter`)
//!   and run report, counting what ITGDec does not: tail loss (with the sender's log),
//!   percentiles, RFC 3393 IPDV and RFC 3550 jitter beside D-ITG's own jitter
//! - [`cfmt`]    the C `printf`/`fscanf` conversions ITGDec's output depends on
//!
//! Everything streams: a log is read record by record (twice for a time series, whose
//! intervals start at the earliest receive time of the whole log), memory is per flow.

pub mod dec;
pub mod export;
pub mod import;
pub mod record;
pub mod series;

mod cfmt;

pub use dec::{Decoder, FlowKey, FlowStats, Summary, TotalStats};
pub use import::{import_logs, ImportOptions};
pub use record::{Addr, LogReader, LogWriter, PacketLog, Record, TimeOfDay, RECORD_LEN};
pub use series::CombinedStats;

use std::io::Write;
use std::path::Path;

/// What can go wrong reading or decoding a D-ITG log; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum DitgError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: truncated record at byte {offset}: {len} of the {RECORD_LEN} bytes of a D-ITG log record \
         (a D-ITG 2.8.1 binary log is a sequence of {RECORD_LEN}-byte records; this file was cut off or is not one)"
    )]
    Truncated { path: String, offset: u64, len: usize },
    #[error("{0}")]
    Argument(String),
}

impl DitgError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        DitgError::Io { path: path.display().to_string(), source }
    }
}

/// Decodes the log at `path` as `ITGDec LOG` does and returns its summary; with `series`
/// (`ms`, output) also writes `ITGDec LOG -c ms`'s combined_stats.dat lines to the output
/// (a second pass over the file).
pub fn decode_file<W: Write>(path: &Path, series: Option<(f64, &mut W)>) -> Result<Summary, DitgError> {
    let mut dec = Decoder::new();
    for r in LogReader::open(path)? {
        dec.push(&r?);
    }
    if let Some((ms, out)) = series {
        let mut cs = CombinedStats::new(&dec, ms)?;
        for r in LogReader::open(path)? {
            let r = r?;
            if !r.itgdec_valid() {
                continue;
            }
            let flow = dec.flow_index(&r).ok_or_else(|| {
                DitgError::Argument(format!("{}: a flow not seen by the first pass: the log changed while being read", path.display()))
            })?;
            cs.push(&r, flow, out)?;
        }
        cs.finish(out)?;
    }
    Ok(dec.summary())
}
