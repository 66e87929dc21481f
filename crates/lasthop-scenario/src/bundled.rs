//! Scenarios compiled into lasthop, so `lasthop run` works with nothing but the binary.

/// (name, TOML text) of every bundled scenario; the first is the default.
pub const BUNDLED: &[(&str, &str)] = &[
    ("dumbbell", include_str!("../../../scenarios/dumbbell.toml")),
    ("home", include_str!("../../../scenarios/home.toml")),
    ("saturation", include_str!("../../../scenarios/saturation.toml")),
    ("wcdma", include_str!("../../../scenarios/wcdma.toml")),
    ("hetperf", include_str!("../../../scenarios/hetperf.toml")),
    ("home-ac", include_str!("../../../scenarios/home-ac.toml")),
    ("home-ax", include_str!("../../../scenarios/home-ax.toml")),
    ("rrul", include_str!("../../../scenarios/rrul.toml")),
    ("lte-trace", include_str!("../../../scenarios/lte-trace.toml")),
];

/// The TOML text of a bundled scenario.
pub fn bundled(name: &str) -> Option<&'static str> {
    BUNDLED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
