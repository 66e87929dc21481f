"""Every parameter of a resolved scenario with its value, its default and its documentation — what
``lasthop show SCENARIO`` prints, in the spirit of ns-3's ``--PrintAttributes``.

The values come from the core's resolved scenario (every default filled in), the documentation
and the defaults from the core's JSON Schema (``_core.json_schema()``, the doc comments of the
Rust structs), so neither is written twice. Paths are the ``--set`` paths: array elements by name
where they have one (``links.bottleneck.rate``), else by index (``error_generators.0.rate``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator

from lasthop import _core
from lasthop.scenario import Scenario

_NO_DEFAULT = object()
UNSET = "(unset)"  # an optional field left out: its doc says what that means


@dataclass(frozen=True)
class Parameter:
    """One leaf of a resolved scenario."""

    path: str
    value: Any
    doc: str
    default: Any = _NO_DEFAULT

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @property
    def is_default(self) -> bool:
        return self.has_default and self.value == self.default


class _Schema:
    """The scenario JSON Schema, with ``$ref``/``allOf``/optional (``anyOf`` with null) resolved."""

    def __init__(self, schema: dict):
        self.root = schema
        self.definitions = schema.get("definitions", {})

    def resolve(self, node: dict, value: Any) -> dict:
        """`node` with references followed and, for a tagged union, the variant `value` is."""
        seen = 0
        while seen < 32:  # a bound, not a limit any real schema reaches
            seen += 1
            if "$ref" in node:
                target = self.definitions[node["$ref"].rsplit("/", 1)[-1]]
                node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            elif "allOf" in node and len(node["allOf"]) == 1:
                node = {**{k: v for k, v in node.items() if k != "allOf"}, **node["allOf"][0],
                        **({"description": node["description"]} if "description" in node else {})}
            elif "anyOf" in node:
                options = [o for o in node["anyOf"] if o.get("type") != "null"]
                if value is None or len(options) != 1:
                    return node
                node = {**{k: v for k, v in node.items() if k != "anyOf"}, **options[0],
                        **({"description": node["description"]} if "description" in node else {})}
            elif "oneOf" in node:
                variant = self._variant(node["oneOf"], value)
                if variant is None:
                    return node
                doc = " ".join(d for d in (node.get("description"), variant.get("description")) if d)
                tags = [t for v in node["oneOf"] for t in self._tags(v)]
                node = {**{k: v for k, v in node.items() if k != "oneOf"}, **variant, "description": doc, "x-tags": tags}
            else:
                return node
        return node

    @staticmethod
    def _tags(variant: dict) -> list[str]:
        """The tag values a variant of a union accepts (``bulk``; ``rlc`` for a plain string variant)."""
        if isinstance(variant.get("enum"), list):
            return [str(t) for t in variant["enum"]]
        return [str(p["enum"][0]) for p in variant.get("properties", {}).values()
                if isinstance(p.get("enum"), list) and len(p["enum"]) == 1]

    def _variant(self, variants: list[dict], value: Any) -> dict | None:
        """The variant of a tagged union (``type = "bulk"``, ``model = "shadowing"``) that `value` is."""
        for v in variants:
            v = self.resolve(v, value) if "$ref" in v else v
            if isinstance(value, dict):
                for tag, prop in v.get("properties", {}).items():
                    if isinstance(prop.get("enum"), list) and len(prop["enum"]) == 1 and value.get(tag) == prop["enum"][0]:
                        return v
            elif isinstance(value, str) and value in v.get("enum", []):
                return v
        return None


def _doc(node: dict) -> str:
    doc = node.get("description", "").strip()
    choices = node.get("x-tags") or node.get("enum")
    if isinstance(choices, list) and len(choices) > 1 and "one of" not in doc:
        doc = (doc + " " if doc else "") + "One of: " + ", ".join(str(c) for c in choices) + "."
    return doc


def _element_label(element: Any, index: int, names: list) -> str:
    name = element.get("name") if isinstance(element, dict) else None
    # A name the --set syntax can address: unique, and not a number or a dotted path itself.
    if isinstance(name, str) and name and "." not in name and not name.isdigit() and names.count(name) == 1:
        return name
    return str(index)


def _nullable(prop: dict) -> bool:
    kinds = prop.get("type")
    return (isinstance(kinds, list) and "null" in kinds) or any(v.get("type") == "null" for v in prop.get("anyOf", []))


def _shown_unset(prop: dict, parent: dict) -> bool:
    """A field the resolved form leaves out while unset (an 802.11n/ac/ax WLAN's `width`): shown
    as unset, but on an 802.11b/g WLAN not the fields only 802.11n/ac/ax WLANs take."""
    if not _nullable(prop):
        return False
    modern_only = prop.get("description", "").startswith("802.11n/ac/ax")
    return not (modern_only and parent.get("standard") in ("802.11b", "802.11g"))


def _walk(schema: _Schema, node: dict, value: Any, path: str, doc: str = "",
          default: Any = _NO_DEFAULT, named: bool = False) -> Iterator[Parameter]:
    """The leaves under `value` (described by schema `node`) at `path`; `named`: an array element
    addressed by its name, whose ``name`` field is then not repeated."""
    node = schema.resolve(node, value)
    doc = doc or _doc(node)
    props = node.get("properties")
    if isinstance(value, dict) and props:
        # A field the resolved form leaves out while it has its default (a flow's start_jitter)
        # is shown with that default, before the first present field the schema lists after it.
        rank = {k: i for i, k in enumerate(props)}
        missing = [k for k in props if k not in value and "default" in props[k]]
        unset = [k for k in props if k not in value and "default" not in props[k] and _shown_unset(props[k], value)]
        order: list[str] = []
        for key in value:
            while missing and rank[missing[0]] < rank.get(key, len(props)):
                order.append(missing.pop(0))
            order.append(key)
        order += missing + unset
        for key in order:
            item = value[key] if key in value else props[key].get("default")
            if named and key == "name":
                continue
            child = props.get(key, {})
            child_default = child["default"] if "default" in child else None if key in unset else _NO_DEFAULT
            # The tag of a union (app.type, errors.model) carries the variant's doc and every choice.
            is_tag = "x-tags" in node and isinstance(child.get("enum"), list) and len(child["enum"]) == 1
            tag_doc = _doc({"description": node.get("description", ""), "x-tags": node["x-tags"]}) if is_tag else ""
            yield from _walk(schema, child, item, f"{path}.{key}" if path else key, tag_doc, child_default)
        return
    items = node.get("items")
    if isinstance(value, list) and value and isinstance(items, dict) and all(isinstance(e, dict) for e in value):
        names = [e.get("name") for e in value]
        for i, element in enumerate(value):
            label = _element_label(element, i, names)
            yield from _walk(schema, items, element, f"{path}.{label}", named=label != str(i))
        return
    yield Parameter(path, value, doc, default)


def parameters(scenario: Scenario) -> list[Parameter]:
    """Every leaf of `scenario`'s resolved form, in file order, with its doc and default."""
    schema = _Schema(json.loads(_core.json_schema()))
    return list(_walk(schema, schema.root, scenario.resolved, ""))


def toml_literal(value: Any) -> str:
    """`value` as a person would write it in a scenario file (``(unset)`` for a missing option)."""
    if value is None:
        return UNSET
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(k)} = {toml_literal(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    return str(value)


def _toml_key(key: str) -> str:
    return key if key and all(c.isalnum() or c in "_-" for c in key) else json.dumps(key, ensure_ascii=False)


def format_parameter(p: Parameter) -> list[str]:
    """Two lines per parameter, as ns-3 prints attributes: ``path = value  [default]`` and its doc."""
    if p.is_default:
        mark = "  [default]"
    elif p.has_default:
        mark = f"  [default: {toml_literal(p.default)}]"
    else:
        mark = ""
    lines = [f"{p.path} = {toml_literal(p.value)}{mark}"]
    if p.doc:
        lines.append(f"    {p.doc}")
    return lines
