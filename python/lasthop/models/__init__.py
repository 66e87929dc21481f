"""Analytic models: Bianchi's 802.11 DCF saturation model (and its A-MPDU extension for
802.11n/ac/ax), the TCP throughput models of Mathis et al. and Padhye et al."""

from lasthop.models.bianchi import AggregatedPoint, BianchiPoint, bianchi, bianchi_ampdu, phy_timing
from lasthop.models.awnd import koga_awnd
from lasthop.models.tcp import mathis, padhye

__all__ = ["bianchi", "BianchiPoint", "bianchi_ampdu", "AggregatedPoint", "phy_timing", "mathis", "padhye", "koga_awnd"]
