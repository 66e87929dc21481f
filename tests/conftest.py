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
