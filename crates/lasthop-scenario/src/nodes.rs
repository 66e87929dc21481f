//! Hosts and routers, and the device model of a slow end host (Hur & Hong, paper 000).

use lasthop_core::units::BitRate;
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A host or router.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub name: String,
    /// How long the host's own work takes (paper 000's slow PDA); omitted: infinitely fast.
    #[serde(default)]
    pub device: Option<Device>,
}

/// End hosts of Hur & Hong's test bed (paper 000, Table 2), as device parameters.
///
/// - `pda-ipaq3660`: Compaq iPAQ 3660, 206 MHz StrongARM, Windows CE 3.0, NOR flash, PCMCIA
///   802.11b card. 1.2 ms per received packet (PIO over PCMCIA plus the stack), 0.3 ms per
///   socket call, 2.9 Mb/s between application and socket, flash read 2.7 Mb/s and write at
///   half that (Sect. 4.2: "writing takes 2 times longer than reading"; ~170 KB/s is what NOR
///   word programming allows) with 1 ms per file operation, and a per-byte write cost growing
///   7 % per MiB already in the file (the quadratic fit of Table 5's growing write/read ratio,
///   within 1 % of its five points); 1 ms timer. The per-byte rates are calibrated so that a
///   469 KB download takes Table 6's 4.6 s and the receive/send ratio starts near Table 3's
///   1.53; the hur-hong2006 reproduction says what follows and what does not. Its stack
///   announces reopened windows lazily: use `tcp.window_update = "delayed"` on flows it receives.
/// - `pc-windows2000`: Pentium 4 2.4 GHz desktop: 10 µs per packet, 5 µs per call, 2 Gb/s
///   copy, disk 400 Mb/s both ways; Windows 2000's 10 ms timer tick (`Sleep(1)` lasts 10 ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DevicePreset {
    PdaIpaq3660,
    PcWindows2000,
}

/// A host's processing costs: a preset, any field of which may be overridden.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Device {
    #[serde(default)]
    pub preset: Option<DevicePreset>,
    /// CPU time to take in one received packet (interrupt, driver, IP/TCP input, its ACK).
    #[serde(default)]
    pub packet_cost: Option<Duration>,
    /// CPU time of one `send()` or `recv()` call.
    #[serde(default)]
    pub call_cost: Option<Duration>,
    /// Rate of copying between application and socket buffers.
    #[serde(default)]
    pub copy_rate: Option<BitRate>,
    /// Sequential storage reads (file transfers read the file from here).
    #[serde(default)]
    pub storage_read_rate: Option<BitRate>,
    /// Sequential storage writes (file transfers write the received file here).
    #[serde(default)]
    pub storage_write_rate: Option<BitRate>,
    /// CPU time per storage operation (one per application buffer).
    #[serde(default)]
    pub storage_op_cost: Option<Duration>,
    /// Growth of the per-byte write cost per MiB already written to the file (0.07 = 7 %).
    #[serde(default)]
    pub storage_write_growth: Option<f64>,
    /// Sleeps are rounded up to whole ticks of this timer.
    #[serde(default)]
    pub timer_granularity: Option<Duration>,
}
