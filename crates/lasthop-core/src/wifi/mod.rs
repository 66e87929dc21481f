//! IEEE 802.11 last hops: PHY timing of 802.11b/g ([`phy`]) and of 802.11n/ac/ax PPDUs
//! ([`ppdu`]), frame errors of 802.11b/g ([`errors`]) and of OFDM MCSs from the SNR
//! ([`coding`]), the SNR from distance ([`radio`]), and the DCF MAC on a shared medium ([`dcf`]).

pub mod coding;
pub mod dcf;
pub mod hop;
pub mod errors;
pub mod phy;
pub mod ppdu;
pub mod radio;
#[cfg(test)]
mod tests;
