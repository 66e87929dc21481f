"""A section of a Markdown file that one bench script owns: the text between an HTML-comment
begin marker and end marker naming the script (`markers`), rewritten in place by
`write_section`, or appended the first time."""

from __future__ import annotations

from pathlib import Path


def markers(owner: str) -> tuple[str, str]:
    """The begin and end markers of `owner`'s section, e.g. owner "bench/queue_speed.py"."""
    return f"<!-- begin: {owner} -->", f"<!-- end: {owner} -->"


def write_section(path: Path, text: str, owner: str) -> None:
    """Replaces `owner`'s section in `path` with `text` (which carries the markers), or appends it."""
    begin, end = markers(owner)
    old = path.read_text() if path.exists() else ""
    if begin in old and end in old:
        new = old[: old.index(begin)] + text + old[old.index(end) + len(end) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new)
