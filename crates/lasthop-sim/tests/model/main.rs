//! The simulator's integration tests, one binary: each module was its own test target, and every
//! target is a separately linked (thin-LTO in release) executable, which made linking most of
//! `cargo test --release`'s time. The golden test stays its own target (`--test golden`).

mod common;

mod capture;
mod cellular;
mod ditg_traffic;
mod fuzz;
mod host;
mod network;
mod scenario_errors;
mod snoop;
mod start_jitter;
mod trace_link;
mod wlan;
mod wlan_aggregating;
mod wlan_edca;
