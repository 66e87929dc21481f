//! A scenario that failed to load, and locating a problem in its text (line and field path).

use std::fmt;

/// A scenario that failed to load: the file and every problem found.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub problems: Vec<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {}", self.file, p)?;
        }
        Ok(())
    }
}
impl std::error::Error for ScenarioError {}

/// What a TOML parse error says, never nothing: the parser gives an empty message for a key whose
/// value is missing at the end of a file (`duration =`).
pub(crate) fn toml_message(message: &str) -> String {
    match message.trim() {
        "" => "a value is missing after `=` (a quoted string such as \"10s\", a number, true or false, an array or an inline table)".to_string(),
        m => m.to_string(),
    }
}

/// Where a parse error is: "--set PATH=VALUE: " when the value came from an override, else
/// "line N: PATH: " (the dotted path of the innermost key there), then the message.
pub(crate) fn locate(text: &str, span: Option<std::ops::Range<usize>>, msg: &str, overrides: &[(String, String)]) -> String {
    let Some(mut span) = span else { return msg.to_string() };
    // Inside a tagged enum (an app, a law) serde reports the whole inline table; when the
    // message quotes the bad value and it occurs once there, point at that value's key.
    if let Some(quoted) = msg.split('"').nth(1).filter(|q| !q.is_empty()).map(|q| format!("\"{q}\"")) {
        let within = text.get(span.clone()).unwrap_or("");
        if within.matches(&quoted).count() == 1 {
            let at = span.start + within.find(&quoted).unwrap_or(0);
            span = at..at + quoted.len();
        }
    }
    let doc = toml_edit::ImDocument::parse(text).ok();
    let paths: Vec<String> = [true, false]
        .into_iter()
        .filter_map(|by_name| doc.as_ref().and_then(|d| path_at(d.as_table(), span.start, by_name, "")))
        .collect();
    if let Some((p, raw)) = overrides.iter().rev().find(|(p, _)| paths.contains(p)) {
        return format!("--set {p}={raw}: {msg}");
    }
    match paths.first() {
        Some(p) => format!("line {}: {p}: {msg}", line_of(text, span.start)),
        None => format!("line {}: {msg}", line_of(text, span.start)),
    }
}

/// The dotted path of the innermost value whose span holds `offset` (array elements by their
/// `name` when `by_name` and they have one, else by index).
pub(crate) fn path_at(table: &dyn toml_edit::TableLike, offset: usize, by_name: bool, prefix: &str) -> Option<String> {
    let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    let element = |i: usize, t: Option<&dyn toml_edit::TableLike>| {
        let name = t.and_then(|t| t.get("name")).and_then(|n| n.as_str()).filter(|_| by_name);
        name.map(str::to_string).unwrap_or(i.to_string())
    };
    for (k, item) in table.iter() {
        let here = join(k);
        let inside = |r: Option<std::ops::Range<usize>>| r.is_some_and(|r| r.contains(&offset));
        match item {
            toml_edit::Item::Table(t) => {
                if let Some(p) = path_at(t, offset, by_name, &here) {
                    return Some(p);
                }
            }
            toml_edit::Item::ArrayOfTables(a) => {
                for (i, t) in a.iter().enumerate() {
                    if let Some(p) = path_at(t, offset, by_name, &format!("{here}.{}", element(i, Some(t)))) {
                        return Some(p);
                    }
                }
            }
            toml_edit::Item::Value(v) if inside(v.span()) || inside(table.key(k).and_then(|k| k.span())) => {
                if let Some(t) = v.as_inline_table() {
                    return path_at(t, offset, by_name, &here).or(Some(here));
                }
                if let Some(a) = v.as_array() {
                    for (i, x) in a.iter().enumerate() {
                        if inside(x.span()) {
                            let el = format!("{here}.{}", element(i, x.as_inline_table().map(|t| t as &dyn toml_edit::TableLike)));
                            return x.as_inline_table().and_then(|t| path_at(t, offset, by_name, &el)).or(Some(el));
                        }
                    }
                }
                return Some(here);
            }
            _ => {}
        }
    }
    None
}

pub(crate) fn line_of(src: &str, offset: usize) -> usize {
    src[..offset.min(src.len())].bytes().filter(|&b| b == b'\n').count() + 1
}
