"""Scenarios: a TOML text plus ``--set``-style overrides, validated by the Rust core."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from lasthop import _core

DEFAULT = "dumbbell"


def _literal(value: Any) -> str:
    """An override value as the TOML literal the core parses (strings stay bare: "10ms")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return str(value)


class Scenario:
    """A validated scenario. Build one with :meth:`from_toml`, :meth:`from_str` or :meth:`bundled`."""

    def __init__(self, text: str, file: str, overrides: Mapping[str, Any] | None = None):
        self.text = text
        self.file = file
        self.overrides: dict[str, str] = {k: _literal(v) for k, v in (overrides or {}).items()}
        # Validates now, so errors surface where the scenario is made.
        self.resolved: dict = json.loads(_core.resolve_scenario(text, file, list(self.overrides.items())))

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> "Scenario":
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as e:
            raise _core.ScenarioError(f"{p}: cannot read the file: {e.strerror}") from None
        return cls(text, str(p), _dotted(overrides))

    @classmethod
    def from_str(cls, text: str, name: str = "<string>", **overrides: Any) -> "Scenario":
        return cls(text, name, _dotted(overrides))

    @classmethod
    def bundled(cls, name: str = DEFAULT, **overrides: Any) -> "Scenario":
        text = _core.bundled_scenario(name)
        if text is None:
            names = ", ".join(_core.bundled_names())
            raise _core.ScenarioError(f"no bundled scenario {name!r}; bundled: {names}")
        return cls(text, f"<bundled:{name}>", _dotted(overrides))

    def with_overrides(self, **overrides: Any) -> "Scenario":
        merged = dict(self.overrides)
        merged.update({k: _literal(v) for k, v in _dotted(overrides).items()})
        return Scenario(self.text, self.file, merged)

    @property
    def name(self) -> str:
        explicit = self.resolved["simulation"].get("name")
        if explicit:
            return explicit
        return Path(self.file).stem if not self.file.startswith("<") else self.file.strip("<>").split(":")[-1]

    @property
    def seed(self) -> int:
        return self.resolved["simulation"]["seed"]

    def __repr__(self) -> str:
        return f"Scenario({self.name!r}, file={self.file!r}, overrides={self.overrides!r})"


def _dotted(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword overrides: ``seed=3`` is ``simulation.seed``; ``links__bottleneck__rate`` is
    ``links.bottleneck.rate``; keys with dots pass through (``**{"flows.bulk.start": "1s"}``)."""
    out = {}
    for k, v in overrides.items():
        if k in ("seed", "duration", "interval", "name"):
            k = f"simulation.{k}"
        out[k.replace("__", ".")] = v
    return out
