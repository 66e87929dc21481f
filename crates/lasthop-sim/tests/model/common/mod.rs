//! Helpers shared by the scenario-level tests.

use lasthop_core::metrics::LossByCause;
use lasthop_sim::RunOutput;

/// The causes in the order of `LossByCause` (and of the summary's `lost_by_cause` keys).
fn causes(c: &LossByCause) -> [u64; 7] {
    [c.queue_drop, c.link_loss, c.retry_limit, c.out_of_order, c.suppressed, c.unattributed, c.in_flight_at_end]
}

/// Checks `sent = received + every loss cause` for both directions of every flow, and that the
/// meters' "in flight at the end" equals the packets physically left in the network (the arena
/// census, counted independently of the meters). Returns the totals per cause except
/// "suppressed" and "unattributed" (never in a simulation): [queue_drop, link_loss, retry_limit, out_of_order, in_flight_at_end].
pub fn assert_conservation(out: &RunOutput) -> [u64; 5] {
    let mut all = [0u64; 7];
    for f in &out.report.flows {
        let forward = (f.forward.sent_packets, f.forward.received_packets, &f.forward.lost_by_cause);
        let reverse = (f.reverse.sent_packets, f.reverse.received_packets, &f.reverse.lost_by_cause);
        for (dir, (sent, received, c)) in [("forward", forward), ("reverse", reverse)] {
            let by_cause = causes(c);
            for (total, n) in all.iter_mut().zip(by_cause) {
                *total += n;
            }
            assert_eq!(sent, received + by_cause.iter().sum::<u64>(), "flow {} {dir}: sent = received + lost by cause", f.name);
        }
    }
    assert_eq!(all[6], out.report.header.packets_in_network_at_end, "in flight by the meters = by the census");
    [all[0], all[1], all[2], all[3], all[6]]
}

/// A dumbbell: sender -(100 Mb/s, 1 ms)- router -(bottleneck)- receiver. `extra` is appended.
pub fn dumbbell(duration: &str, bottleneck: &str, extra: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
seed = 1

[[nodes]]
name = "sender"
[[nodes]]
name = "router"
[[nodes]]
name = "receiver"

[[links]]
name = "access"
a = "sender"
b = "router"
rate = "100Mbps"
delay = "1ms"
queue = "1000p"

[[links]]
name = "bottleneck"
a = "router"
b = "receiver"
{bottleneck}

{extra}
"#
    )
}
