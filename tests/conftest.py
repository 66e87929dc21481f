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


# Tests that run the emulator in real time (seconds to a minute each, mostly waiting on the
# clock). Under `make test` (pytest-xdist) each of these files is one unit of work, kept on one
# worker in file order and handed out before everything else: the two files run beside each
# other, and the other workers take the CPU-bound tests, each test a unit of its own (the
# scheduler below; xdist's own --dist loadgroup does not group under pytest 9 here).
REALTIME_FILES = ("tests/test_emu.py", "tests/test_emu_mechanisms.py")


@pytest.hookimpl(optionalhook=True)  # pytest without xdist runs everything in order, in one process
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class RealtimeFilesFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path in REALTIME_FILES else nodeid

        def _assign_work_unit(self, node) -> None:
            # The realtime files first (the longest units: they decide when the suite ends).
            for scope in [s for s in self.workqueue if s in REALTIME_FILES]:
                self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return RealtimeFilesFirst(config, log)
