//! IEEE 802.11 last hops: PHY timing ([`phy`]), frame errors ([`errors`]) and the DCF MAC on a
//! shared medium ([`dcf`]).

pub mod dcf;
pub mod hop;
pub mod errors;
pub mod phy;
#[cfg(test)]
mod tests;
