//! End hosts that take time (paper 000): a CPU shared by packet processing and the file loop,
//! storage costs, timer granularity and lazy window updates, checked against hand counts.

use crate::common;

use lasthop_core::report::TcpReport;
use lasthop_sim::{run_scenario, RunOutput, Scenario};

/// sender -(100 Mb/s, 1 ms)- receiver, one file transfer; `devices` and `app`/`tcp` filled in.
fn scenario(sender_device: &str, receiver_device: &str, app: &str, tcp: &str) -> String {
    format!(
        r#"
[simulation]
duration = "120s"
seed = 1
[[nodes]]
name = "sender"
{sender_device}
[[nodes]]
name = "receiver"
{receiver_device}
[[links]]
a = "sender"
b = "receiver"
rate = "100Mbps"
delay = "1ms"
[[flows]]
name = "file"
src = "sender"
dst = "receiver"
app = {app}
tcp = {tcp}
"#
    )
}

fn run(toml: &str) -> RunOutput {
    let s = Scenario::from_toml_str(toml, "host.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let out = run_scenario(s);
    common::assert_conservation(&out);
    out
}

fn response(out: &RunOutput) -> f64 {
    out.flow("file").unwrap().response_time_s().expect("the transfer completes")
}

fn tcp(out: &RunOutput) -> &TcpReport {
    out.flow("file").unwrap().tcp().expect("a TCP flow")
}

/// CPU seconds of host `node`.
fn cpu_busy_s(out: &RunOutput, node: &str) -> f64 {
    out.report.host(node).unwrap_or_else(|| panic!("{node} is reported as a host")).cpu_busy_s
}

#[test]
fn a_storage_bound_receiver_takes_the_write_time() {
    // Only flash writes cost anything: 1 MiB at 8 Mb/s = 1.048576 s (hand count), plus the
    // handshake and first RTTs over a 2 ms-RTT, 100 Mb/s path (a few ms).
    let dev = r#"device = { storage_write_rate = "8Mbps" }"#;
    let out = run(&scenario("", dev, r#"{ type = "file", bytes = "1MiB" }"#, r#"{ receive_buffer = "64KiB" }"#));
    let t = response(&out);
    assert!((1.0486..1.0486 + 0.02).contains(&t), "response {t:.4} s vs the 1.0486 s write time");
    assert_eq!(tcp(&out).bytes_stored, Some(1 << 20));
    let host = &out.report.hosts[0];
    assert_eq!(host.node, "receiver");
    assert!((host.cpu_busy_s - 1.048576).abs() < 1e-6, "CPU time is the write time");
}

#[test]
fn write_cost_growth_follows_the_integral() {
    // 2 MiB at 8 Mb/s with 50 % growth per MiB written: base 2.097152 s × (1 + 0.5 × 1 MiB
    // midpoint) = 3.145728 s of CPU when the whole file is one operation per 8 KiB buffer at
    // zero op cost (the per-piece midpoints average to the file's midpoint exactly).
    let dev = r#"device = { storage_write_rate = "8Mbps", storage_write_growth = 0.5 }"#;
    let out = run(&scenario("", dev, r#"{ type = "file", bytes = "2MiB" }"#, r#"{ receive_buffer = "64KiB" }"#));
    let busy = cpu_busy_s(&out, "receiver");
    assert!((busy - 3.145728).abs() < 1e-5, "CPU time {busy} vs 3.145728 s");
}

#[test]
fn sleeps_last_whole_timer_ticks() {
    // 100 messages of 1000 B with Sleep(1) after each on a 10 ms-tick host: 99 sleeps between
    // them of 10 ms each (not 1 ms) → at least 0.99 s; the path itself needs only milliseconds.
    let dev = r#"device = { timer_granularity = "10ms" }"#;
    let app = r#"{ type = "file", bytes = "100000B", message = "1000B", send_delay = "1ms" }"#;
    let t = response(&run(&scenario(dev, "", app, "{}")));
    assert!((0.99..1.02).contains(&t), "response {t:.4} s should be 99 ticks of 10 ms plus the path");
    // Without the tick the same sleeps take 99 ms.
    let t1 = response(&run(&scenario(r#"device = { timer_granularity = "0s" }"#, "", app, "{}")));
    assert!((0.099..0.12).contains(&t1), "response {t1:.4} s with exact 1 ms sleeps");
}

/// A receiver whose application is slower than the network (the PDA preset), 469 KB.
fn pda_download(receive_buffer: &str, window_update: &str) -> RunOutput {
    let tcp = format!(r#"{{ receive_buffer = "{receive_buffer}", send_buffer = "8KiB", window_scale = false, window_update = "{window_update}" }}"#);
    run(&scenario(
        r#"device = { preset = "pc-windows2000" }"#,
        r#"device = { preset = "pda-ipaq3660" }"#,
        r#"{ type = "file", bytes = "480256B" }"#,
        &tcp,
    ))
}

#[test]
fn packets_preempt_the_slow_application_so_its_window_collapses() {
    // The stack keeps acknowledging into the buffer while the application writes to flash:
    // the advertised window falls below one MSS (paper 000, Table 4: 32 581 → 686 B) while the
    // sender's own window (same 32 581-B buffer, nothing to read) stays within a byte of it.
    let out = pda_download("32581B", "immediate");
    let min = tcp(&out).windows.receiver_min_open_window_bytes.unwrap();
    assert!(min < 1460, "the PDA's smallest window was {min} B");
    let sender_min = tcp(&out).windows.sender_min_open_window_bytes.unwrap();
    assert!(sender_min >= 32_580, "the sender's window fell to {sender_min} B");
    // The PDA's CPU is the bottleneck: busy for (almost) the whole transfer.
    let t = response(&out);
    let busy = cpu_busy_s(&out, "receiver");
    assert!(busy / t > 0.98, "PDA busy {busy:.3} s of {t:.3} s");
}

#[test]
fn lazy_window_updates_make_socket_buffer_size_matter() {
    // With window updates at once, a CPU-bound receiver never idles: the buffer size does not
    // change the receive time (within 2 %). With updates left to the 200 ms delayed-ACK timer,
    // an 8 KiB buffer drains while the sender waits and the transfer takes far longer than
    // with 32 KiB, whose backlog covers the wait (paper 000 Sect. 4.1's remedy).
    let (i8, i32) = (response(&pda_download("8KiB", "immediate")), response(&pda_download("32KiB", "immediate")));
    assert!((i8 / i32 - 1.0).abs() < 0.02, "immediate updates: {i8:.3} vs {i32:.3} s");
    let (l8, l32) = (response(&pda_download("8KiB", "delayed")), response(&pda_download("32KiB", "delayed")));
    assert!(l8 > 1.5 * l32, "delayed updates: 8 KiB {l8:.3} s vs 32 KiB {l32:.3} s");
    assert!((l32 / i32 - 1.0).abs() < 0.05, "a 32 KiB buffer hides the lazy updates: {l32:.3} vs {i32:.3} s");
}

#[test]
fn same_scenario_same_bytes() {
    let a = pda_download("16KiB", "delayed");
    let b = pda_download("16KiB", "delayed");
    assert_eq!(a.report.to_json(), b.report.to_json());
}
