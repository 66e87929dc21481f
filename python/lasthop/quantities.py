"""Swept values as quantities: the text a user wrote ("500kbps", "2ms", "64KiB", "100p", "0.01")
as a number in SI units with its kind, read by the core's one unit parser
(``lasthop._core.parse_quantity``), so that a sweep's dataset and figures place 500 kb/s below
1 Mb/s, whatever units the values were written in.

A swept parameter has one kind when every value is a quantity of that kind; otherwise ("false,
true", "newreno,cubic", or "100p,64KiB", which one queue limit accepts but no axis can place) it
is "text": its values are categories in the grid's order and have no SI value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lasthop import _core

# The SI unit of each kind's values (packets and plain numbers are counts, shown without prefix).
SI_UNIT = {"duration": "s", "rate": "b/s", "bytes": "B", "packets": "packets", "number": "", "text": ""}
SI_SUFFIX = "__si"


@dataclass(frozen=True)
class Quantity:
    """A value in SI units (seconds, bit/s, bytes, packets, or a plain number) and its kind."""

    value: float
    kind: str


def parse_quantity(text: str) -> Quantity:
    """``"500kbps"`` -> Quantity(500000.0, "rate"); ValueError naming the text and what is valid."""
    value, kind = _core.parse_quantity(text)
    return Quantity(value, kind)


@dataclass(frozen=True)
class SweptParameter:
    """A swept parameter: its values as written (in the grid's order), their kind and SI values."""

    path: str
    values: tuple[str, ...]
    kind: str                   # duration, rate, bytes, packets, number, or text
    si: dict[str, float]        # value as written -> value in SI units (NaN for text)

    @property
    def unit(self) -> str:
        return SI_UNIT[self.kind]

    @property
    def column(self) -> str:
        """The dataset's column of the SI values: ``links.bottleneck.rate__si``."""
        return self.path + SI_SUFFIX

    @property
    def numeric(self) -> bool:
        return self.kind != "text"

    @property
    def integer(self) -> bool:
        """Counts that are whole numbers ("1..4", "20p,200p"): drawn with integer ticks."""
        return self.kind in ("number", "packets") and all(float(x).is_integer() for x in self.si.values())

    def metadata(self) -> dict[str, str]:
        return {"kind": self.kind, "unit": self.unit}


def swept_parameter(path: str, values: list[str] | tuple[str, ...]) -> SweptParameter:
    """The kind all `values` share, with each one's SI value; "text" when they share none."""
    values = tuple(dict.fromkeys(values))
    parsed = {}
    for v in values:
        try:
            parsed[v] = parse_quantity(v)
        except ValueError:  # a category ("true", "cubic"); the scenario has checked it is valid
            parsed[v] = None
    kinds = {q.kind for q in parsed.values() if q is not None}
    if values and None not in parsed.values() and len(kinds) == 1:
        return SweptParameter(path, values, kinds.pop(), {v: q.value for v, q in parsed.items()})
    return SweptParameter(path, values, "text", {v: math.nan for v in values})
