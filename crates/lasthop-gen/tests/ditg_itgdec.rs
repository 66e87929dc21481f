//! lasthop's ITGDec against the real one: every golden log of tests/data/ditg (written by
//! Debian's ITGSend/ITGRecv 2.8.1 on loopback; tests/data/ditg/README.md has the commands)
//! is decoded by lasthop, and its summary and `-c 100` time series must equal, byte for byte,
//! what Debian's ITGDec printed for the same log (stored beside it).

use lasthop_gen::ditg::decode_file;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/ditg")
}

/// ITGDec's stdout without its two banner lines (version, compile-time options).
fn itgdec_summary(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.splitn(3, '\n');
    assert!(lines.next().unwrap().starts_with("ITGDec version 2.8.1"));
    assert!(lines.next().unwrap().starts_with("Compile-time options"));
    lines.next().unwrap_or_default().to_string()
}

#[test]
fn golden_logs_decode_to_itgdec_output_digit_for_digit() {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    assert!(logs.len() >= 11, "golden logs missing in {}", data_dir().display());
    for log in &logs {
        let name = log.file_name().unwrap().to_string_lossy();
        let mut series = Vec::new();
        let summary = decode_file(log, Some((100.0, &mut series))).unwrap();
        let want = itgdec_summary(&log.with_file_name(format!("{name}.itgdec.txt")));
        assert_eq!(summary.text(), want, "summary of {name}");
        // None for a log whose series ITGDec gets wrong (edge-ports: see make_edge_logs.py).
        if let Ok(want) = std::fs::read_to_string(log.with_file_name(format!("{name}.combined_100.dat"))) {
            assert_eq!(String::from_utf8(series).unwrap(), want, "combined_stats of {name}");
        }
    }
}
