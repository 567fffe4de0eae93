"""A day note as entries: kg's own `## HH:MM · project` entries, and whatever a person wrote.

A hand-written day has no fixed shape, so its entries are cut the way it was written:

- frontmatter is skipped, and a first-line `# Title` is the day's title, not an entry;
- a heading opens a section that runs to the next heading: one entry, heading included, unless
  its top-level items carry times (`- 09:30 standup`), when each item is an entry of its own;
- outside any section, each top-level bullet (with everything indented under it) and each
  paragraph is an entry;
- a time at the start of an entry (`09:30`, `9.30`, `14h05`, after a bullet or a checkbox) is
  the entry's time; otherwise it has none, and a question about a part of the day ("this
  morning") leaves it out.

Fenced code stays inside the entry it belongs to, and a `#` line inside a fence is not a heading.
Line numbers are the file's, so every entry cites its `file:line`.
"""

from __future__ import annotations

import re
from datetime import date

from extract.links import line_roles

from .journal import ENTRY_HEADING_RE, Entry

__all__ = ["entry_time", "split_day"]

_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s")
_BULLET_RE = re.compile(r"^(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_RULE_RE = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
_TIME_RE = re.compile(r"^(?:[-*+]\s+|\d{1,9}[.)]\s+)?(?:\[[ xX/-]\]\s+)?[*_]{0,2}(\d{1,2})[:.h](\d{2})(?![\d:])")
_FRONTMATTER_END = ("---", "...")


def entry_time(line: str) -> str:
    """`HH:MM` when a line starts with a time (after a bullet or a checkbox), else ""."""
    found = _TIME_RE.match(line.strip())
    if found is None or int(found.group(1)) > 23 or int(found.group(2)) > 59:
        return ""
    return f"{int(found.group(1)):02d}:{found.group(2)}"


def split_day(text: str, day: date, relpath: str) -> list[Entry]:
    """The entries of one day note, in file order (see the module docstring for how it is cut)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = _body_start(lines)
    blocks = _sections(lines, start)
    entries: list[Entry] = []
    for heading, first, last in blocks:
        if heading is not None and (found := ENTRY_HEADING_RE.match(lines[heading])):
            entries.append(_entry(lines, day, relpath, heading, last, found.group(1), found.group(2) or "", skip_first=True))
            continue
        items = _items(lines, first, last)
        if heading is not None and not any(entry_time(lines[a]) for a, _ in items):
            if _has_text(lines, heading + 1, last) or lines[heading].strip().lstrip("#").strip():
                entries.append(_entry(lines, day, relpath, heading, last, entry_time(lines[heading].lstrip("# ")), ""))
            continue
        entries.extend(_entry(lines, day, relpath, a, b, entry_time(lines[a]), "") for a, b in items)
    return entries


def _body_start(lines: list[str]) -> int:
    """The first line after the frontmatter and the title."""
    index = 0
    if lines and lines[0].rstrip() == "---":
        close = next((i for i in range(1, len(lines)) if lines[i].rstrip() in _FRONTMATTER_END), None)
        index = close + 1 if close is not None else 0
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index < len(lines) and re.match(r"^\s{0,3}#\s", lines[index]) and not ENTRY_HEADING_RE.match(lines[index]):
        index += 1  # `# Monday 13 May 2024`: the day's title
    return index


def _sections(lines: list[str], start: int) -> list[tuple[int | None, int, int]]:
    """(heading line or None, first content line, end) of the preamble and each heading's section."""
    headings = [i for i, line, role in line_roles(lines) if i >= start and role == "text" and _HEADING_RE.match(line)]
    out: list[tuple[int | None, int, int]] = []
    bounds = [*headings, len(lines)]
    if not headings or headings[0] > start:
        out.append((None, start, bounds[0]))
    for index, heading in enumerate(headings):
        out.append((heading, heading + 1, bounds[index + 1]))
    return out


def _items(lines: list[str], first: int, end: int) -> list[tuple[int, int]]:
    """(first line, end) of each top-level bullet (children included) and paragraph in a span."""
    items: list[tuple[int, int]] = []
    roles = {i: role for i, _, role in line_roles(lines[first:end])}
    current: int | None = None
    blank = False
    for offset in range(end - first):
        index, line = first + offset, lines[first + offset]
        role = roles.get(offset, "text")
        if role != "text":  # fenced code belongs to the item it sits in
            if current is None:
                current = index
            blank = False
            continue
        if not line.strip():
            blank = True
            continue
        top = not line[:1].isspace()
        starts = top and (_BULLET_RE.match(line) is not None or blank)
        if _RULE_RE.match(line):
            if current is not None:
                items.append((current, index))
            current, blank = None, False
            continue
        if current is None or starts:
            if current is not None:
                items.append((current, index))
            current = index
        blank = False
    if current is not None:
        items.append((current, end))
    return [(a, b) for a, b in items if _has_text(lines, a, b)]


def _has_text(lines: list[str], first: int, end: int) -> bool:
    """Something besides bullets, empty checkboxes and rules."""
    return any(re.sub(r"^[\s>*+\-\d.)]*(?:\[[ xX/-]\])?", "", line).strip() for line in lines[first:end])


def _entry(lines: list[str], day: date, relpath: str, first: int, end: int, time: str, project: str, skip_first: bool = False) -> Entry:
    last = max((i for i in range(first, end) if lines[i].strip()), default=first)
    body = "\n".join(lines[first + (1 if skip_first else 0) : last + 1]).strip()
    return Entry(day, time, project, relpath, first + 1, last + 1, body)
