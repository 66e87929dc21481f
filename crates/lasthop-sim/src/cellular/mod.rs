//! Building a W-CDMA channel's RLC entities from its scenario section (the models are in
//! `lasthop_core::cellular`).

pub mod build;
