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

impl RunOutput {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
    pub fn flow(&self, name: &str) -> Option<&FlowReport> {
        self.report.flow(name)
    }
}
