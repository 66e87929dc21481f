"""The wheel of `make wheel` as a pip user gets it: tagged for PyPI (abi3, manylinux2014), with
the licences and without scipy, installed into a fresh venv and run with no Rust toolchain on
PATH — and computing what the development install computes.

Opt-in (a release build takes minutes): `make test-wheel` builds dist/lasthop-*.whl if the
sources changed and runs this file (`pytest -m wheel`). Installing the wheel's dependencies
needs PyPI or pip's cache.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from packaging.utils import parse_wheel_filename

import lasthop

pytestmark = pytest.mark.wheel

REPO = Path(__file__).resolve().parent.parent
DIST = REPO / "dist"
DEV_BIN = Path(sys.executable).parent
# A short run of the default scenario: 5 s of the 10 Mb/s dumbbell, a bulk TCP and a voice flow.
RUN_ARGS = ["run", "dumbbell", "--set", "simulation.duration=5s", "--seed", "3"]


@pytest.fixture(scope="module")
def wheel() -> Path:
    wheels = sorted(DIST.glob("lasthop-*.whl"))
    if len(wheels) != 1:
        pytest.fail(f"expected one wheel in {DIST}, found {[w.name for w in wheels]}: run `make test-wheel` (it builds the wheel)")
    return wheels[0]


def _toolchain_free_path() -> str:
    """This PATH without any directory that holds cargo or rustc."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    return os.pathsep.join(d for d in dirs if not any(shutil.which(t, path=d) for t in ("cargo", "rustc")))


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> dict:
    """A fresh venv with the wheel installed; returns its bin directory and a toolchain-free env."""
    root = tmp_path_factory.mktemp("wheel-venv")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    bin_dir = root / "venv" / "bin"
    keep = {k: v for k, v in os.environ.items()
            if k in ("HOME", "LANG", "LC_ALL", "TMPDIR") or k.startswith("PIP_") or k.lower().endswith("_proxy")}
    env = {**keep, "PATH": os.pathsep.join([str(bin_dir), _toolchain_free_path()])}
    subprocess.run([str(bin_dir / "pip"), "install", "--quiet", "--disable-pip-version-check", str(wheel)],
                   check=True, env=env, cwd=root)
    return {"bin": bin_dir, "env": env, "cwd": root}


def test_the_wheel_is_tagged_for_pypi(wheel):
    # PEP 425/600 tags: one abi3 wheel for CPython >= 3.9 (pyo3's abi3-py39 feature), on glibc
    # >= 2.17 (manylinux2014, the oldest policy maturin and PyPI accept for new uploads).
    name, version, _, tags = parse_wheel_filename(wheel.name)
    assert (name, str(version)) == ("lasthop", lasthop.__version__)
    machine = platform.machine()
    assert {str(t) for t in tags} == {f"cp39-abi3-manylinux2014_{machine}", f"cp39-abi3-manylinux_2_17_{machine}"}


def test_auditwheel_agrees_on_manylinux_2_17(wheel):
    # auditwheel reads the symbol versions the library links against; `make wheel` installs it.
    auditwheel = DEV_BIN / "auditwheel"
    if not auditwheel.exists():
        pytest.fail(f"{auditwheel} is missing: `make wheel` installs it")
    out = subprocess.run([str(auditwheel), "show", str(wheel)], capture_output=True, text=True, check=True).stdout
    text = " ".join(out.split())
    assert f'is consistent with the following platform tag: "manylinux_2_17_{platform.machine()}"' in text, out


def test_the_wheel_carries_both_licences_and_no_scipy(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        licences = {Path(n).name: z.read(n) for n in names if ".dist-info/licenses/" in n}
    assert licences == {"LICENSE-MIT": (REPO / "LICENSE-MIT").read_bytes(), "LICENSE-APACHE": (REPO / "LICENSE-APACHE").read_bytes()}
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    unconditional = {re.split(r"[<>=!~ ;\[]", r)[0] for r in requires if "extra ==" not in r}
    assert unconditional == {"numpy", "pandas", "pyarrow", "typer", "rich"}
    assert any(r.startswith("matplotlib") and "extra == 'plot'" in r for r in requires)
    assert any(r.startswith("scipy") and "extra == 'oracle'" in r for r in requires)


def test_installed_without_a_toolchain(venv):
    assert shutil.which("cargo", path=venv["env"]["PATH"]) is None
    assert shutil.which("rustc", path=venv["env"]["PATH"]) is None
    where = subprocess.run([str(venv["bin"] / "python"), "-c", "import lasthop, lasthop._core; print(lasthop._core.__file__)"],
                           capture_output=True, text=True, check=True, env=venv["env"], cwd=venv["cwd"]).stdout.strip()
    assert Path(where).is_relative_to(venv["bin"].parent), where   # the wheel's compiled core, not the repository's
    version = subprocess.run([str(venv["bin"] / "lasthop"), "--version"], capture_output=True, text=True, check=True,
                             env=venv["env"], cwd=venv["cwd"]).stdout.strip()
    assert version == f"lasthop {lasthop.__version__}"
    names = subprocess.run([str(venv["bin"] / "lasthop"), "scenarios"], capture_output=True, text=True, check=True,
                           env=venv["env"], cwd=venv["cwd"]).stdout.split()
    assert names[:5] == ["dumbbell", "home", "saturation", "wcdma", "hetperf"]   # compiled into the core


def test_a_run_from_the_wheel_equals_the_development_build(venv, tmp_path):
    # The same scenario and seed through the wheel's core (linked by zig against glibc 2.17) and
    # the editable install's: the same summary (apart from wall-clock time) and the same tables.
    ours = tmp_path / "wheel-run"
    subprocess.run([str(venv["bin"] / "lasthop"), *RUN_ARGS, "--out", str(ours)], check=True, capture_output=True,
                   env=venv["env"], cwd=venv["cwd"])
    dev = tmp_path / "dev-run"
    subprocess.run([str(DEV_BIN / "lasthop"), *RUN_ARGS, "--out", str(dev)], check=True, capture_output=True)
    a, b = (json.loads((d / "summary.json").read_text()) for d in (ours, dev))
    a.pop("wall_clock"), b.pop("wall_clock")
    assert a == b
    assert [f["name"] for f in a["flows"]] == ["bulk", "voice"] and a["flows"][0]["received_packets"] > 0
    for table in ("flows.parquet", "intervals.parquet"):
        pd.testing.assert_frame_equal(pd.read_parquet(ours / table), pd.read_parquet(dev / table))
    # matplotlib is the `plot` extra, not in the default install: the report draws its figures in
    # the browser all the same (the wheel carries the vendored uPlot and charts.js).
    page = (ours / "report.html").read_text()
    assert "uPlot 1.6.32" in page and "lasthopCharts" in page and "not drawn</strong>" not in page
