"""Koga et al.'s receiver-based advertised window (paper 004, eqs. 1-3), in packets."""

from __future__ import annotations


def koga_awnd(link_bps: float, udp_bps: float, propagation_s: float, retransmissions: int, packet_bytes: int = 1500) -> float:
    available = link_bps - udp_bps                                                        # (2)
    t = (packet_bytes * 8 / available + 2 * propagation_s) * retransmissions              # (1)
    return available * t / (packet_bytes * 8)                                             # (3)
