//! `--set dotted.path=value` overrides, applied to the TOML document before it is read.

/// Applies `dotted.path=value` overrides to a TOML document. Array elements are addressed by
/// index (`flows.0.start`) or by their `name` (`links.bottleneck.rate`). The value is read as a
/// TOML literal (`0.01`, `true`, `"x"`) and otherwise taken as a string (`10ms`).
pub fn apply_overrides(src: &str, overrides: &[(String, String)]) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = src.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    for (path, raw) in overrides {
        let value: toml_edit::Value = match format!("v = {raw}").parse::<toml_edit::DocumentMut>() {
            Ok(d) => d["v"].as_value().cloned().unwrap_or_else(|| raw.as_str().into()),
            Err(_) => raw.as_str().into(),
        };
        set_path(doc.as_item_mut(), path, value).map_err(|e| format!("--set {path}={raw}: {e}"))?;
    }
    Ok(doc.to_string())
}

pub(crate) fn set_path(root: &mut toml_edit::Item, path: &str, value: toml_edit::Value) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err("empty path segment".into());
    }
    let table = root.as_table_like_mut().ok_or("the document is not a table")?;
    set_in_table(table, &parts, value)
}

pub(crate) fn set_in_table(table: &mut dyn toml_edit::TableLike, parts: &[&str], value: toml_edit::Value) -> Result<(), String> {
    let (head, rest) = parts.split_first().expect("paths are never empty");
    if rest.is_empty() {
        table.insert(head, toml_edit::Item::Value(value));
        return Ok(());
    }
    if table.get(head).is_none() {
        table.insert(head, toml_edit::Item::Table(toml_edit::Table::new()));
    }
    let item = table.get_mut(head).expect("present");
    if let Some(arr) = item.as_array_of_tables_mut() {
        let (sel, rest) = rest.split_first().expect("checked above");
        let idx = match sel.parse::<usize>() {
            Ok(n) if n < arr.len() => n,
            Ok(n) => return Err(format!("{head}: index {n} is out of range (there are {})", arr.len())),
            Err(_) => arr
                .iter()
                .position(|t| t.get("name").and_then(|v| v.as_str()) == Some(*sel))
                .ok_or_else(|| format!("{head}: no element named {sel:?}"))?,
        };
        if rest.is_empty() {
            return Err("cannot replace a whole table".into());
        }
        return set_in_table(arr.get_mut(idx).expect("index checked"), rest, value);
    }
    let inner = item.as_table_like_mut().ok_or_else(|| format!("{head:?} is a value, not a table"))?;
    set_in_table(inner, rest, value)
}
