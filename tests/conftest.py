import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def root() -> Path:
    return ROOT


def lasthop_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs the installed `lasthop` command the way a user does."""
    exe = Path(sys.executable).with_name("lasthop")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd or ROOT)


def report_charts(page: Path) -> list[dict]:
    """The figures a report.html embeds for its script to draw (lasthop.report.page.chart_data)."""
    text = page.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="lasthop-charts">(.*?)</script>', text, flags=re.S)
    assert m, f"{page}: no embedded figures"
    return json.loads(m.group(1))
