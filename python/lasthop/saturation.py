"""Scenario text for Bianchi's saturation experiment: n stations send UDP to the AP, each
offered 3x its fair share of the saturation throughput, with short queues so that every
station is backlogged within a fraction of a second."""

from __future__ import annotations


def saturation_toml(n: int, size: int = 1500, phy: str = "802.11b", duration: str = "20s", *,
                    rts: bool = False, retry_short: int = 7, llc_snap: bool = False, seed: int = 1,
                    offered_bps: float | None = None) -> str:
    """`size` is the MSDU (IP packet) size in bytes, as in Bianchi's tables."""
    from lasthop.models import bianchi

    if offered_bps is None:
        offered_bps = 3.0 * bianchi(n, size, phy, tc="eifs").throughput_bps
    interval_us = max(1.0, n * size * 8.0 / offered_bps * 1e6)
    lines = [
        "[simulation]",
        f'name = "saturation-{phy}-n{n}-{size}B"',
        f'duration = "{duration}"',
        f"seed = {seed}",
        "",
        "[[nodes]]",
        'name = "AP"',
    ]
    for i in range(1, n + 1):
        lines += ["[[nodes]]", f'name = "S{i}"']
    stations = ", ".join(f'"S{i}"' for i in range(1, n + 1))
    lines += [
        "",
        "[[wlans]]",
        'name = "bss"',
        f'standard = "{phy}"',
        'ap = "AP"',
        f"stations = [{stations}]",
        'queue = "5p"',
        f"retry_short = {retry_short}",
        f"llc_snap = {'true' if llc_snap else 'false'}",
    ]
    if rts:
        lines.append('rts_threshold = "0B"')
    for i in range(1, n + 1):
        lines += [
            "",
            "[[flows]]",
            f'name = "up{i}"',
            f'src = "S{i}"',
            'dst = "AP"',
            f'app = {{ type = "cbr", size = "{size - 28}B", interval = "{interval_us:.3f}us" }}',
        ]
    return "\n".join(lines) + "\n"
