"""Reproductions run from the command line and keep the papers' directions."""

import pytest

from lasthop.reproduce import REGISTRY, reproduce

from conftest import lasthop_cli


def test_list_names_the_reproductions():
    r = lasthop_cli("reproduce", "--list")
    assert r.returncode == 0
    for name in REGISTRY:
        assert name in r.stdout


def test_palazzi2006_directions(tmp_path):
    rep = reproduce("palazzi2006", tmp_path, quick=True)
    d = rep.data
    regular, sap18 = d["regular"], d["sap"][18]
    # Paper 001: regular TCP 55 371 packets, SAP-LAW (C = 18 Mb/s) 58 677, and the game's max
    # jitter under 10 ms with SAP-LAW, tens of ms without (Figs. 4, 8, 10).
    assert sap18["ftp_packets"] >= regular["ftp_packets"]
    assert regular["game_jitter_max_ms"] > 2 * sap18["game_jitter_max_ms"]
    assert sap18["game_jitter_max_ms"] < 15.0
    # Jitter statistics grow with C (Fig. 8).
    assert d["sap"][14]["game_jitter_max_ms"] <= sap18["game_jitter_max_ms"] <= d["sap"][22]["game_jitter_max_ms"]
    # Fewer MAC transmissions cut the queueing jitter and the FTP throughput (Figs. 5-7).
    assert d["mac"][(1, 50)]["ftp_packets"] < d["mac"][(4, 50)]["ftp_packets"]
    assert d["mac"][(1, 50)]["game_jitter_max_ms"] < d["mac"][(4, 50)]["game_jitter_max_ms"]
    # A larger AP queue helps TCP (Fig. 5) and hurts jitter.
    assert d["mac"][(4, 100)]["ftp_packets"] > d["mac"][(4, 50)]["ftp_packets"]
    # FQ-CoDel beside them.
    assert d["fq_codel"]["game_jitter_max_ms"] < 10.0
    assert all(f.exists() for f in rep.figures)


def test_unknown_reproduction_is_an_error(tmp_path):
    with pytest.raises(KeyError, match="available"):
        reproduce("nope", tmp_path)
    r = lasthop_cli("reproduce", "nope")
    assert r.returncode == 2
