//! What a run produces, independent of how it is stored: the typed run report
//! ([`RunReport`], written as `summary.json`) and named column tables (written as Parquet by the
//! Python layer). Both types are lasthop-core's, shared by every world; the simulator fills them
//! in `sim/output.rs`.

pub use lasthop_core::report::{Column, FlowReport, RunReport, Table};

#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Everything in summary.json except what the caller adds around it (versions, scenario
    /// name and file, overrides, wall clock).
    pub report: RunReport,
    pub tables: Vec<Table>,
}

/// What a run hands over while it goes ([`crate::Simulation::drain`]), so that its memory does
/// not grow with simulated time: the rows recorded since the last drain. Appended in order to
/// what earlier drains gave, and followed by [`RunOutput`]'s tables of the same names, they make
/// exactly the tables of a run that was never drained.
#[derive(Debug, Clone, Default)]
pub struct Drained {
    /// Per flow, in the flows' order, its "intervals" rows of the intervals that ended.
    pub intervals: Vec<Table>,
    /// Rows of the TCP and queue traces (tables named as in [`RunOutput`]).
    pub traces: Vec<Table>,
}

impl RunOutput {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
    pub fn flow(&self, name: &str) -> Option<&FlowReport> {
        self.report.flow(name)
    }
}
