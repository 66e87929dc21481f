//! Cellular last hops: a W-CDMA dedicated channel with RLC acknowledged mode ([`rlc`]) and its
//! TTI error process ([`channel`]).

pub mod channel;
pub mod hop;
pub mod rlc;
#[cfg(test)]
mod tests;
