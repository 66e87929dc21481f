//! Cellular last hops: a W-CDMA dedicated channel with RLC acknowledged mode ([`rlc`]), its
//! TTI error process ([`channel`]), and one direction of it behind the hop contract ([`hop`]).

pub mod channel;
pub mod hop;
pub mod rlc;
#[cfg(test)]
mod tests;
