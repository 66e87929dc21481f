"""Text of the reports, without matplotlib: names from scenarios made safe to show, numbers in
engineering notation (12.2 Mb/s), figure titles. The pages (tables) and the figures use the same."""

from __future__ import annotations

import math


def label(text: object) -> str:
    """A name from a scenario as matplotlib text: literal (``$`` is not mathtext), printable,
    and shown in legends even when it starts with ``_``."""
    t = "".join(c if c.isprintable() or c == "\n" else "\ufffd" for c in str(text)).replace("$", r"\$")
    return f" {t}" if t.startswith("_") else t


_PREFIXES = {-4: "p", -3: "n", -2: "µ", -1: "m", 0: "", 1: "k", 2: "M", 3: "G", 4: "T"}


def eng(value: float | None, unit: str = "", digits: int = 3) -> str:
    """`value` in engineering notation with `digits` significant digits: 12.2 Mb/s, 361 kb/s,
    4.2 ms (for a value in seconds), "–" for a missing one."""
    if value is None or math.isnan(value):
        return "–"
    if value == 0:
        return f"0 {unit}".strip()
    exp3 = max(-4, min(4, math.floor(math.log10(abs(value)) / 3)))
    if abs(float(f"{value / 1000.0 ** exp3:.{digits}g}")) >= 1000 and exp3 < 4:  # 999.96 k -> 1.00 M
        exp3 += 1
    return f"{value / 1000.0 ** exp3:.{digits}g} {_PREFIXES[exp3]}{unit}".strip()


def title_lines(what: str, context: str, params: str = "") -> tuple[str, int]:
    text = f"{context} — {what}" + (f"\n{params}" if params else "")
    return label(text), text.count("\n") + 1


def count(v) -> str:
    """A count written out, with thin spaces between thousands: 72 690 ("–" for none)."""
    return "–" if v is None else f"{int(v):,}".replace(",", "\u2009")
