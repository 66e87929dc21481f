"""Bianchi's saturation throughput of the 802.11 DCF (G. Bianchi, IEEE JSAC 18(3):535–547, 2000),
and (bianchi_ampdu) of 802.11n/ac/ax stations sending A-MPDUs with Block Acks.

    tau = 2 / (1 + W + p W Σ_{k=0}^{m−1} (2p)^k)          (eq. 7, no 0/0 at p = 1/2)
    p   = 1 − (1 − tau)^(n−1)                               (eq. 9)
    S   = Ps Ptr E[P] / ((1 − Ptr) σ + Ptr Ps Ts + Ptr (1 − Ps) Tc)   (eq. 13)

Frame air times follow the same PHY rules as the simulator (``lasthop-core/src/wifi/phy.rs``):
802.11b HR/DSSS with a 192 µs or 96 µs PLCP, 802.11g ERP-OFDM with 4 µs symbols and a 6 µs
signal extension. ``tc="bianchi"`` is the paper's Tc = DATA + DIFS; ``tc="eifs"`` is
Tc = DATA + EIFS, which is what a DCF with EIFS and ACK timeouts (lasthop's) sees after a
collision. See ``shared/reference/models.md`` §1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAC_HEADER_FCS = 28
LLC_SNAP = 8
ACK, RTS, CTS = 14, 20, 14


def _dsss(nbytes: float, rate_mbps: float, plcp_us: float) -> float:
    return plcp_us + nbytes * 8.0 / rate_mbps


def _ofdm(nbytes: float, rate_mbps: float) -> float:
    ndbps = rate_mbps * 4.0
    return 20.0 + 4.0 * math.ceil((16 + 8 * nbytes + 6) / ndbps) + 6.0


@dataclass(frozen=True)
class PhyTiming:
    name: str
    slot: float
    sifs: float
    cw_min: int
    cw_max: int
    data_rate: float
    control_rate: float
    plcp: float  # 802.11b only

    @property
    def difs(self) -> float:
        return self.sifs + 2 * self.slot

    def frame(self, nbytes: float, rate: float) -> float:
        if self.name == "802.11b":
            return _dsss(nbytes, rate, self.plcp)
        return _ofdm(nbytes, rate)

    def data(self, msdu: float) -> float:
        return self.frame(msdu + MAC_HEADER_FCS, self.data_rate)

    @property
    def ack(self) -> float:
        return self.frame(ACK, self.control_rate)

    @property
    def rts(self) -> float:
        return self.frame(RTS, self.control_rate)

    @property
    def cts(self) -> float:
        return self.frame(CTS, self.control_rate)

    @property
    def eifs(self) -> float:
        return self.sifs + self.ack + self.difs


def phy_timing(phy: str = "802.11b", data_rate: float | None = None, control_rate: float | None = None,
               preamble: str = "long", slot: str = "short") -> PhyTiming:
    """Timing of a PHY with lasthop's defaults (the same as a ``[[wlans]]`` entry's)."""
    if phy == "802.11b":
        short = preamble == "short"
        return PhyTiming("802.11b", 20.0, 10.0, 31, 1023, data_rate or 11.0,
                         control_rate or (2.0 if short else 1.0), 96.0 if short else 192.0)
    if phy == "802.11g":
        data = data_rate or 54.0
        ctrl = control_rate or next((c for c in (24.0, 12.0, 6.0) if c <= data), 6.0)
        return PhyTiming("802.11g", 9.0 if slot == "short" else 20.0, 10.0, 15, 1023, data, ctrl, 20.0)
    raise ValueError(f"phy {phy!r}: valid are '802.11b' and '802.11g'")


@dataclass(frozen=True)
class BianchiPoint:
    n: int
    size: int
    tau: float
    p: float
    throughput_bps: float
    ts_us: float
    tc_us: float


def _tau(p: float, w: int, m: int) -> float:
    return 2.0 / (1.0 + w + p * w * sum((2 * p) ** k for k in range(m)))


def _fixed_point(n: int, w: int, m: int) -> tuple[float, float]:
    """Bisection on p: f(p) = p − 1 + (1 − tau(p))^(n−1) increases in p (unique root)."""
    if n <= 1:
        return _tau(0.0, w, m), 0.0
    lo, hi = 0.0, 1.0 - 1e-12
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid - (1.0 - (1.0 - _tau(mid, w, m)) ** (n - 1)) > 0:
            hi = mid
        else:
            lo = mid
    p = 0.5 * (lo + hi)
    return _tau(p, w, m), p


def bianchi(n: int, size: int = 1500, phy: str | PhyTiming = "802.11b", rts: bool = False,
            tc: str = "bianchi", llc_snap: bool = False, **phy_options) -> BianchiPoint:
    """Saturation throughput (bit/s of `size`-byte MSDU payload) and collision probability for
    `n` stations. With ``llc_snap`` the frame carries 8 more bytes but throughput counts `size`."""
    if n < 1:
        raise ValueError("n must be at least 1")
    t = phy if isinstance(phy, PhyTiming) else phy_timing(phy, **phy_options)
    w = t.cw_min + 1
    m = int(round(math.log2((t.cw_max + 1) / w)))
    tau, p = _fixed_point(n, w, m)
    ptr = 1 - (1 - tau) ** n
    ps = n * tau * (1 - tau) ** (n - 1) / ptr
    data = t.data(size + (LLC_SNAP if llc_snap else 0))
    if not rts:
        ts = data + t.sifs + t.ack + t.difs
        tcoll = data + (t.difs if tc == "bianchi" else t.eifs)
    else:
        ts = t.rts + t.sifs + t.cts + t.sifs + data + t.sifs + t.ack + t.difs
        tcoll = t.rts + (t.difs if tc == "bianchi" else t.sifs + t.cts + t.difs)
    mean_slot = (1 - ptr) * t.slot + ptr * ps * ts + ptr * (1 - ps) * tcoll
    return BianchiPoint(n, size, tau, p, ps * ptr * 8.0 * size / mean_slot * 1e6, ts, tcoll)


# ---------------------------------------------------------------- aggregated 802.11n/ac/ax

QOS_MAC_HEADER_FCS = 30  # QoS data: 26 B header + 4 B FCS
# The Block Ack window (64; 256 for HE), which bounds an A-MPDU besides its length and
# aPPDUMaxTime.
BA_WINDOW = {"802.11n": 64, "802.11ac": 64, "802.11ax": 256}
# Compressed Block Ack: 16 B of frame control, duration and addresses, BA control and starting
# sequence control 4 B, the bitmap (8 B; 32 B for a 256-frame window), FCS 4 B.
BLOCK_ACK = {64: 32, 256: 56}


@dataclass(frozen=True)
class AggregatedPoint:
    n: int
    size: int
    mpdus: int  # MPDUs per A-MPDU
    psdu: int  # A-MPDU bytes
    tau: float
    p: float
    throughput_bps: float
    ts_us: float
    tc_us: float


def _legacy_ofdm_us(nbytes: int, rate_mbps: float, band: str) -> float:
    """A non-HT OFDM PPDU (the control responses' format) at `rate_mbps`: 20 µs of preamble and
    SIGNAL, 4 µs symbols, the 6 µs signal extension at 2.4 GHz."""
    return _ofdm(nbytes, rate_mbps) - (0.0 if band == "2.4GHz" else 6.0)


def bianchi_ampdu(n: int, amendment: str = "802.11n", mcs: int = 7, streams: int = 1, width: int = 20,
                  guard_interval: int = 800, band: str = "5GHz", size: int = 1500, max_ampdu: int = 65_535,
                  control_rate: float = 24.0, aifsn: int = 3, cw_min: int = 15, cw_max: int = 1023,
                  tc: str = "eifs") -> AggregatedPoint:
    """Bianchi's chain (eq. 7, 9, 13 above) for `n` saturated stations each sending A-MPDUs of
    `size`-byte MSDUs in one access category (EDCA's AC_BE by default: AIFSN 3, CW 15..1023)
    with immediate compressed Block Acks at `control_rate` Mb/s, the A-MPDU airtime in place of
    DATA (the aggregation extension of e.g. Lin & Wong, "Frame aggregation and optimal frame size
    adaptation for IEEE 802.11n WLANs", GLOBECOM 2006):

        Ts = PPDU(A-MPDU) + SIFS + BA + AIFS,   Tc = Ts (``tc="eifs"``: the medium is lost for
        the Block Ack timeout) or PPDU + AIFS (``tc="bianchi"``),

    S counting the MSDUs' bytes. An A-MPDU holds as many MPDUs (MSDU + 8 B LLC/SNAP + 30 B QoS
    header and FCS, each behind a 4 B delimiter and padded to 4 B) as fit the `max_ampdu` length,
    the PPDU's longest air time and the Block Ack window: lasthop_core::wifi::ppdu's
    TxVector::aggregate, whose PPDU durations are checked against ns-3's."""
    from lasthop import _core

    if n < 1:
        raise ValueError("n must be at least 1")
    sifs = 10.0 if band == "2.4GHz" else 16.0
    slot = 9.0
    aifs = sifs + aifsn * slot
    mpdu = size + LLC_SNAP + QOS_MAC_HEADER_FCS
    window = BA_WINDOW[amendment]
    k, psdu, ppdu_ns = _core.wifi_ampdu(amendment, mcs, streams, width, guard_interval, band, mpdu, window, max_ampdu, window)
    ppdu = ppdu_ns / 1e3
    ba = _legacy_ofdm_us(BLOCK_ACK[BA_WINDOW[amendment]], control_rate, band)
    w = cw_min + 1
    m = int(round(math.log2((cw_max + 1) / w)))
    tau, p = _fixed_point(n, w, m)
    ptr = 1 - (1 - tau) ** n
    ps = n * tau * (1 - tau) ** (n - 1) / ptr
    ts = ppdu + sifs + ba + aifs
    tcoll = ts if tc == "eifs" else ppdu + aifs
    mean_slot = (1 - ptr) * slot + ptr * ps * ts + ptr * (1 - ps) * tcoll
    return AggregatedPoint(n, size, k, psdu, tau, p, ps * ptr * 8.0 * size * k / mean_slot * 1e6, ts, tcoll)
