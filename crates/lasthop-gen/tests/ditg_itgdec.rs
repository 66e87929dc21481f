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

/// A log written by lasthop's `LogWriter`: three flows (IPv4 and IPv6, one with losses and a
/// duplicate, one across 00:00 UTC), 1 µs timestamps as D-ITG writes them.
fn write_log(path: &Path) -> u64 {
    use lasthop_gen::ditg::{LogWriter, PacketLog};
    const DAY: u64 = 86_400_000_000_000;
    let mut w = LogWriter::create(path).unwrap();
    let mut state = 7u64; // a small LCG: deterministic delays without a dependency
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        state >> 33
    };
    for i in 0..3000u64 {
        let flow = (i % 3) as u32 + 1;
        let seq = (i / 3) as u32 + 1;
        if flow == 2 && (seq % 17 == 0 || (400..420).contains(&seq)) {
            continue; // lost
        }
        let (src, dst) = if flow == 3 { (("fe80::1", 40003u16), ("fe80::2", 9003u16)) } else { (("10.1.0.1", 40000 + flow as u16), ("10.1.0.2", 9000)) };
        // flow 3 starts 0.5 s before midnight; the others at 13:00.
        let base = if flow == 3 { DAY - 500_000_000 } else { 13 * 3_600_000_000_000 };
        let tx = base + i * 1_000_000;
        let rx = tx + 200_000 + next() % 5_000_000;
        let p = PacketLog { flow_id: flow, seq, src, dst, tx_ns_of_day: tx % DAY, rx_ns_of_day: rx % DAY, size: 64 + (next() % 1400) as u32 };
        w.write_packet(&p).unwrap();
        if flow == 1 && seq == 50 {
            w.write_packet(&p).unwrap(); // a duplicate
        }
    }
    let n = w.records();
    w.finish().unwrap();
    n
}

#[test]
fn logs_lasthop_writes_are_decoded_by_the_real_itgdec_to_the_same_numbers() {
    let dir = std::env::temp_dir().join(format!("lh-{}-ditg-writer", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("lasthop.log");
    let n = write_log(&log);
    assert_eq!(std::fs::metadata(&log).unwrap().len(), n * 144);
    let mut series = Vec::new();
    // 10 s intervals: the flow across midnight makes ITGDec's series span the whole day.
    let summary = decode_file(&log, Some((10_000.0, &mut series))).unwrap();
    assert_eq!(summary.flows.len(), 3);
    // Hand count of flow 2: sequence numbers 1..=1000, of which the 58 multiples of 17 and
    // 400..=419 (20, one of them, 408, also a multiple of 17) are missing: 77 lost.
    let f2 = summary.flows.iter().find(|f| f.key.flow_id == 2).unwrap();
    assert_eq!((f2.packets, f2.lost), (1000 - 77, 77));
    let Some(itgdec) = which("ITGDec") else {
        eprintln!("skipped the comparison with ITGDec: Debian's d-itg is not installed (scripts/system-deps.sh installs it)");
        return;
    };
    let out = std::process::Command::new(&itgdec).arg(&log).current_dir(&dir).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(summary.text(), text.splitn(3, '\n').nth(2).unwrap());
    let st = std::process::Command::new(&itgdec).arg(&log).args(["-c", "10000", "itg.dat"]).current_dir(&dir).output().unwrap();
    assert!(st.status.success());
    assert_eq!(String::from_utf8(series).unwrap(), std::fs::read_to_string(dir.join("itg.dat")).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|p| p.is_file()))
}
