"""Three-way merge of a journal day note (`journal/YYYY-MM-DD.md`): the union of its entries.

Two machines append to the same day's journal; git sees two edits of one file and would stop with
a conflict. Journal notes are append-only lists of `## HH:MM · project` entries, so the right
merge is the union: every entry of either side survives, an entry removed on one side since the
common base stays removed, and entries interleave by time while each side keeps its own order.
Used as the `kg-journal` git merge driver and by `kg sync` when a rebase stops on a journal note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from episodic.journal import is_kg_frontmatter, parse_entries, render_frontmatter

__all__ = ["DayNote", "merge_day", "split_day"]

_FRONTMATTER_RE = re.compile(r"\A---\n(.*?\n)?---\n", re.DOTALL)
_BLOCK_START_RE = re.compile(r"^#{1,2}\s")
_ENTRY_RE = re.compile(r"^## (\d{2}:\d{2})(?: · (?:.*\S|\s+?))?\s*$")
_DATE_RE = re.compile(r"^date:\s*(\d{4})-(\d{2})-(\d{2})\s*$", re.MULTILINE)
_NAME_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\.md$")


@dataclass(frozen=True)
class DayNote:
    """A day note cut into its frontmatter, its preamble and its heading blocks."""

    head: str  # the frontmatter block, '' when there is none
    preamble: str  # text before the first heading
    blocks: tuple[str, ...]  # each from a `#`/`##` heading to the next, trailing blank lines trimmed


def split_day(text: str) -> DayNote:
    text = text.replace("\r\n", "\n")
    match = _FRONTMATTER_RE.match(text)
    head = match.group(0) if match else ""
    rest = text[match.end() :] if match else text
    preamble: list[str] = []
    blocks: list[list[str]] = []
    for line in rest.split("\n"):
        if _BLOCK_START_RE.match(line):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
        else:
            preamble.append(line)
    return DayNote(head, "\n".join(preamble).strip("\n"), tuple("\n".join(b).rstrip() for b in blocks))


def _time(block: str) -> str | None:
    m = _ENTRY_RE.match(block.split("\n", 1)[0])
    return m.group(1) if m else None


def _interleave(ours: list[str], theirs: list[str]) -> list[str]:
    """Merge two ordered block lists by entry time; each side keeps its order, ours wins ties."""
    out: list[str] = []
    i = j = 0
    while i < len(ours) and j < len(theirs):
        a_time, b_time = _time(ours[i]), _time(theirs[j])
        if a_time is not None and b_time is not None and b_time < a_time:
            out.append(theirs[j])
            j += 1
        else:
            out.append(ours[i])
            i += 1
    return out + ours[i:] + theirs[j:]


def _day(text: str, name: str | None) -> date | None:
    for m in (_DATE_RE.search(text), _NAME_DATE_RE.search(name or "")):
        if m:
            try:
                return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                continue
    return None


def merge_day(base: str, ours: str, theirs: str, name: str | None = None) -> str:
    """The union of both sides' entries (a three-way merge that honours deletions since base)."""
    b, a, t = split_day(base), split_day(ours), split_day(theirs)
    base_blocks = set(b.blocks)
    removed = {blk for blk in base_blocks if blk not in a.blocks or blk not in t.blocks}
    kept_ours = [blk for blk in a.blocks if blk not in removed]
    seen = set(kept_ours)
    new_theirs = []
    for blk in t.blocks:
        if blk not in removed and blk not in seen:
            new_theirs.append(blk)
            seen.add(blk)
    blocks = _interleave(kept_ours, new_theirs)
    preamble = a.preamble if a.preamble or not t.preamble else t.preamble
    rest = ("\n" + preamble + "\n" if preamble else "") + "\n" + "\n\n".join(blocks) + "\n"
    head = a.head or t.head
    inner = _FRONTMATTER_RE.match(head)
    day = _day(head, name)
    if inner and day is not None and is_kg_frontmatter(inner.group(1) or ""):
        relpath = f"journal/{day.isoformat()}.md"
        head = render_frontmatter(day, parse_entries(rest, day, relpath))
    return head + rest
