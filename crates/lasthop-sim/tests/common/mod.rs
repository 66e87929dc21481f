//! Helpers shared by the scenario-level tests.

use lasthop_sim::RunOutput;
use serde_json::Value;

pub const LOSS_CAUSES: [&str; 6] = ["queue_drop", "link_loss", "retry_limit", "out_of_order", "suppressed", "in_flight_at_end"];

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Checks `sent = received + every loss cause` for both directions of every flow, and that the
/// meters' "in flight at the end" equals the packets physically left in the network (the arena
/// census, counted independently of the meters). Returns the totals per cause except
/// "suppressed": [queue_drop, link_loss, retry_limit, out_of_order, in_flight_at_end].
pub fn assert_conservation(out: &RunOutput) -> [u64; 5] {
    let mut all = [0u64; 6];
    for f in out.summary["flows"].as_array().unwrap() {
        for dir in [f, &f["reverse"]] {
            let c = &dir["lost_by_cause"];
            let mut accounted = u(&dir["received_packets"]);
            for (i, k) in LOSS_CAUSES.iter().enumerate() {
                accounted += u(&c[*k]);
                all[i] += u(&c[*k]);
            }
            assert_eq!(u(&dir["sent_packets"]), accounted, "flow {}: sent = received + lost by cause", f["name"]);
        }
    }
    assert_eq!(all[5], u(&out.summary["packets_in_network_at_end"]), "in flight by the meters = by the census");
    [all[0], all[1], all[2], all[3], all[5]]
}
