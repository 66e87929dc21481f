"""Writes ns3_nist_success.csv: ns-3's NistErrorRateModel::GetChunkSuccessRate for every HE MCS
(the modulations and code rates of HT and VHT are among them) at SNRs around each MCS's
threshold, for 1500 B and 64 B PSDUs: the oracle of crates/lasthop-core/tests/coding_ns3.rs.

    .venv/bin/pip install 'ns3==3.44.post0'   # the `oracle` extra (make fidelity installs it)
    .venv/bin/python tests/data/wifi/ns3_nist_success.py
"""

import csv
import sys
from pathlib import Path

from ns import ns

OUT = Path(__file__).with_name("ns3_nist_success.csv")


def main() -> int:
    model = ns.NistErrorRateModel()
    rows = []
    for mcs in range(12):
        mode = ns.HePhy.GetHeMcs(mcs)
        tv = ns.WifiTxVector()
        tv.SetMode(mode)
        tv.SetPreambleType(ns.WIFI_PREAMBLE_HE_SU)
        tv.SetNss(1)
        tv.SetChannelWidth(20)
        tv.SetGuardInterval(ns.NanoSeconds(800))
        for tenth_db in range(-50, 400, 5):
            snr_db = tenth_db / 10
            for psdu in (64, 1500):
                p = model.GetChunkSuccessRate(mode, tv, 10 ** (snr_db / 10), 8 * psdu)
                if 1e-4 < p < 1 - 1e-6:
                    rows.append((mcs, snr_db, psdu, repr(p)))
    with OUT.open("w", newline="") as f:
        f.write("# ns-3 3.44 (PyPI ns3==3.44.post0) NistErrorRateModel::GetChunkSuccessRate, HE SU 20 MHz; made by ns3_nist_success.py\n")
        w = csv.writer(f)
        w.writerow(["mcs", "snr_db", "psdu_bytes", "ns3_success"])
        w.writerows(rows)
    print(f"{len(rows)} points -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
