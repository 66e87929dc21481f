//! A flows file: the `[[flows]]` of a scenario without its network, for a generator that
//! replays them on a real one (`lasthop gen send --flows FILE`). Same vocabulary, same checks,
//! same messages as a scenario: the file is completed into a scenario and loaded by
//! [`Scenario::from_toml_str`], so a flow means exactly what it means in a simulation.
//!
//! Completion: a flow without `src`/`dst` gets `src = "sender"`, `dst = "receiver"` (a line
//! inserted after its `[[flows]]` header; messages give the line numbers of the file as
//! written); every node the flows name is declared, and every pair of them joined by a plain
//! link, so that routes exist (the network's own properties are what a measurement measures,
//! not parameters). Without `[simulation]`, `duration = "10s"` (D-ITG's default `-t 10000`)
//! and the default seed. A file that declares `[[nodes]]` or `[[links]]` is a whole scenario
//! and is loaded as one: its flows are replayed unchanged.

use crate::error::line_of;
use crate::{Scenario, ScenarioError};

/// Top-level keys a flows-only file may have.
const FLOWS_FILE_KEYS: [&str; 2] = ["flows", "simulation"];
/// Keys that make a file a whole scenario.
const SCENARIO_KEYS: [&str; 6] = ["nodes", "links", "wlans", "wcdma", "error_generators", "snoop"];
/// Default run length of a flows file without `[simulation]`: D-ITG's `-t 10000`.
pub const DEFAULT_FLOWS_DURATION: &str = "10s";

/// Loads a flows file (or a whole scenario) as a validated scenario. `file` is used in messages.
pub fn flows_from_toml_str(src: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let err = |p: String| ScenarioError { file: file.to_string(), problems: vec![p] };
    let doc = toml_edit::ImDocument::parse(src).map_err(|e| {
        let at = e.span().map(|s| format!("line {}: ", line_of(src, s.start))).unwrap_or_default();
        err(format!("{at}{}", crate::error::toml_message(e.message())))
    })?;
    let top = doc.as_table();
    if top.iter().any(|(k, _)| SCENARIO_KEYS.contains(&k)) {
        return Scenario::from_toml_str(src, file, &[]);
    }
    if let Some((k, _)) = top.iter().find(|(k, _)| !FLOWS_FILE_KEYS.contains(k)) {
        return Err(err(format!(
            "unknown top-level key {k:?}; a flows file has [[flows]] and optionally [simulation] (or is a whole scenario with [[nodes]] and [[links]])"
        )));
    }
    let Some(flows) = top.get("flows").and_then(|f| f.as_array_of_tables()) else {
        return Err(err("no [[flows]]: a flows file lists at least one flow as [[flows]] tables, e.g. \
[[flows]] name = \"voice\" app = { type = \"cbr\", size = \"160B\", interval = \"20ms\" }"
            .into()));
    };
    // Lines to insert after each flow's header, and the nodes the flows name.
    let mut inserts: Vec<(usize, String)> = Vec::new();
    let mut nodes: Vec<String> = Vec::new();
    let mut pairs: Vec<(String, String)> = Vec::new();
    for t in flows.iter() {
        let mut ends = Vec::new();
        for (key, default) in [("src", "sender"), ("dst", "receiver")] {
            let name = match t.get(key) {
                Some(v) => v.as_str().unwrap_or(default).to_string(),
                None => {
                    ends.push(format!("{key} = \"{default}\""));
                    default.to_string()
                }
            };
            if !nodes.contains(&name) {
                nodes.push(name.clone());
            }
        }
        let s = t.get("src").and_then(|v| v.as_str()).unwrap_or("sender").to_string();
        let d = t.get("dst").and_then(|v| v.as_str()).unwrap_or("receiver").to_string();
        if s != d && !pairs.iter().any(|(a, b)| (a == &s && b == &d) || (a == &d && b == &s)) {
            pairs.push((s, d));
        }
        if !ends.is_empty() {
            let Some(span) = t.span() else { return Err(err("a [[flows]] table without a header; write each flow as [[flows]]".into())) };
            let line_end = src[span.start..].find('\n').map_or(src.len(), |i| span.start + i + 1);
            inserts.push((line_end, ends.join("\n") + "\n"));
        }
    }
    // The completed text, and for each inserted line the original line it follows.
    let mut text = String::with_capacity(src.len() + 256);
    let mut last = 0;
    let mut inserted_before: Vec<usize> = Vec::new(); // 1-based completed-text lines that were inserted
    for (at, lines) in &inserts {
        text.push_str(&src[last..*at]);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let first = text.matches('\n').count() + 1;
        inserted_before.extend(first..first + lines.matches('\n').count());
        text.push_str(lines);
        last = *at;
    }
    text.push_str(&src[last..]);
    let original_lines = text.matches('\n').count() + 1;
    text.push('\n');
    if top.get("simulation").is_none() {
        text.push_str(&format!("[simulation]\nduration = \"{DEFAULT_FLOWS_DURATION}\"\n"));
    }
    for n in &nodes {
        text.push_str(&format!("[[nodes]]\nname = {}\n", toml_edit::Value::from(n.as_str())));
    }
    for (a, b) in &pairs {
        let (a, b) = (toml_edit::Value::from(a.as_str()), toml_edit::Value::from(b.as_str()));
        text.push_str(&format!("[[links]]\na = {a}\nb = {b}\nrate = \"1Gbps\"\ndelay = \"0ms\"\n"));
    }
    Scenario::from_toml_str(&text, file, &[]).map_err(|mut e| {
        for p in &mut e.problems {
            *p = original_line_numbers(p, &inserted_before, original_lines);
        }
        e
    })
}

/// "line N: ..." of the completed text as the line of the file as written (a line inserted or
/// appended by the completion points at the flow header it belongs to or is dropped).
fn original_line_numbers(problem: &str, inserted: &[usize], original_lines: usize) -> String {
    let Some(rest) = problem.strip_prefix("line ") else { return problem.to_string() };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let Ok(n) = digits.parse::<usize>() else { return problem.to_string() };
    let tail = &rest[digits.len()..];
    if n > original_lines {
        return tail.trim_start_matches(": ").to_string();
    }
    let shift = inserted.iter().filter(|&&l| l <= n).count();
    format!("line {}{tail}", n - shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{App, Transport};

    #[test]
    fn a_flows_file_gets_two_hosts_and_a_link_and_keeps_its_flows() {
        let s = flows_from_toml_str(
            "[[flows]]\nname = \"voice\"\napp = { type = \"cbr\", size = \"160B\", interval = \"20ms\" }\n\n\
             [[flows]]\nname = \"bulk\"\nstop = \"2s\"\napp = { type = \"bulk\" }\n",
            "f.toml",
        )
        .expect("valid flows file");
        assert_eq!(s.flows.len(), 2);
        assert_eq!((s.flows[0].src.get_ref().as_str(), s.flows[0].dst.get_ref().as_str()), ("sender", "receiver"));
        assert!(matches!(s.flows[0].app, App::Cbr { .. }));
        assert_eq!((s.flows[0].transport(), s.flows[1].transport()), (Transport::Udp, Transport::Tcp));
        assert_eq!(s.nodes.len(), 2);
        assert_eq!(s.links.len(), 1);
        assert_eq!(s.simulation.duration, lasthop_core::Duration::from_secs(10));
    }

    #[test]
    fn errors_name_the_line_of_the_file_as_written() {
        // Line 4 holds the bad size; two lines are inserted after line 1 by the completion.
        let e = flows_from_toml_str("[[flows]]\nname = \"v\"\n# a comment\napp = { type = \"cbr\", size = \"lots\", interval = \"20ms\" }\n", "f.toml")
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("f.toml: line 4: "), "{msg}");
        assert!(msg.contains("size"), "{msg}");
    }

    #[test]
    fn unknown_sections_and_no_flows_are_refused_with_what_is_valid() {
        let e = flows_from_toml_str("[flow]\nname = \"x\"\n", "f.toml").unwrap_err().to_string();
        assert!(e.contains("unknown top-level key \"flow\"") && e.contains("[[flows]]"), "{e}");
        let e = flows_from_toml_str("", "f.toml").unwrap_err().to_string();
        assert!(e.contains("no [[flows]]"), "{e}");
        let e = flows_from_toml_str("[[flows]]\nname = \"x\"\napp = { type = \"cbrr\" }\n", "f.toml").unwrap_err().to_string();
        assert!(e.contains("cbr"), "the valid app types are named: {e}");
    }

    #[test]
    fn a_whole_scenario_is_loaded_as_one() {
        let text = crate::bundled::bundled("dumbbell").expect("bundled dumbbell");
        let s = flows_from_toml_str(text, "dumbbell.toml").expect("the bundled scenario loads");
        assert_eq!(s.flows.len(), Scenario::from_toml_str(text, "d", &[]).unwrap().flows.len());
    }
}
