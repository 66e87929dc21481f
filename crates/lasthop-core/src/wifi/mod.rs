//! IEEE 802.11 last hops: PHY timing of 802.11b/g ([`phy`]) and of 802.11n/ac/ax PPDUs
//! ([`ppdu`]), frame errors of 802.11b/g ([`errors`]) and of OFDM MCSs from the SNR
//! ([`coding`]), the SNR from distance ([`radio`]), EDCA's access categories and parameters
//! ([`edca`]), the two ends of a Block Ack agreement ([`block_ack`]), EDCA with A-MPDUs on a
//! shared medium ([`hcf`]), Linux's Minstrel-HT rate control ([`minstrel`]), the DCF MAC on a shared medium ([`dcf`]) and a WLAN behind the hop contract
//! ([`hop`]).

pub mod block_ack;
pub mod coding;
pub mod dcf;
pub mod edca;
pub mod hcf;
pub mod hop;
pub mod minstrel;
pub mod errors;
pub mod phy;
pub mod ppdu;
pub mod txq;
pub mod radio;
#[cfg(test)]
mod tests;
