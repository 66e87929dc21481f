//! Named defaults and limits of scenario fields (one place, used by serde and by the docs).

use lasthop_core::units::{Bytes, QueueLimit};
use lasthop_core::Duration;

pub const DEFAULT_SEED: u64 = 1;
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);
pub const DEFAULT_QUEUE: QueueLimit = QueueLimit::Packets(100);
pub const DEFAULT_MTU: Bytes = Bytes(1500);
/// Smallest MTU an IPv4 link may have (RFC 791: every host must accept 68-byte datagrams).
pub const MIN_MTU: u64 = 68;
pub const DEFAULT_TCP_BUFFER: Bytes = Bytes(128 * 1024);
pub const DEFAULT_DELAYED_ACK: Duration = Duration::from_millis(200);
pub const DEFAULT_RTO_INITIAL: Duration = Duration::from_secs(1);
pub const DEFAULT_RTO_MIN: Duration = Duration::from_secs(1);
pub const DEFAULT_RTO_MAX: Duration = Duration::from_secs(60);
/// Shortest gap between two packets of one source (below it a run crawls on one entity).
pub const MIN_PACKET_INTERVAL: Duration = Duration::from_micros(1);
/// Most per-interval rows a run may keep (duration / interval × flows, ~250 MB at the limit).
pub const MAX_INTERVAL_ROWS: u64 = 1_000_000;

pub(crate) fn default_seed() -> u64 {
    DEFAULT_SEED
}
pub(crate) fn default_interval() -> Duration {
    DEFAULT_INTERVAL
}
pub(crate) fn default_mtu() -> Bytes {
    DEFAULT_MTU
}
pub(crate) fn default_true() -> bool {
    true
}
pub(crate) fn default_buffer() -> Bytes {
    DEFAULT_TCP_BUFFER
}
pub(crate) fn default_delayed_ack() -> Duration {
    DEFAULT_DELAYED_ACK
}
pub(crate) fn default_rto_initial() -> Duration {
    DEFAULT_RTO_INITIAL
}
pub(crate) fn default_rto_min() -> Duration {
    DEFAULT_RTO_MIN
}
pub(crate) fn default_rto_max() -> Duration {
    DEFAULT_RTO_MAX
}
pub(crate) fn default_dupthresh() -> u32 {
    3
}
