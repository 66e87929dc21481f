//! What a run produces, independent of how it is stored: a summary (serde JSON value, in a fixed
//! key order) and named column tables. The Python layer writes them as `summary.json` and Parquet.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    /// Missing values (no sample in the interval) are `None` and become nulls in Parquet.
    OptF64(Vec<Option<f64>>),
    U64(Vec<u64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// "intervals", "queue/<link>:<a>-><b>", "tcp/<flow>", "packets/<flow>".
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: impl Into<String>) -> Self {
        Table { name: name.into(), columns: Vec::new() }
    }
    pub fn push(&mut self, name: &str, c: Column) {
        self.columns.push((name.to_string(), c));
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|(_, c)| c.len()).unwrap_or(0)
    }
}

#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Everything in summary.json except wall-clock fields (added by the caller).
    pub summary: Value,
    pub tables: Vec<Table>,
}

impl RunOutput {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
    pub fn flow(&self, name: &str) -> Option<&Value> {
        self.summary["flows"].as_array()?.iter().find(|f| f["name"] == name)
    }
}
