//! Building a WLAN's DCF from its scenario section (the models are in `lasthop_core::wifi`).

pub mod build;
