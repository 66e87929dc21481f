"""Analytic models: Bianchi's 802.11 DCF saturation model, the TCP throughput models of Mathis
et al. and Padhye et al."""

from lasthop.models.bianchi import BianchiPoint, bianchi, phy_timing
from lasthop.models.awnd import koga_awnd
from lasthop.models.tcp import mathis, padhye

__all__ = ["bianchi", "BianchiPoint", "phy_timing", "mathis", "padhye", "koga_awnd"]
