"""Three-way merge of a journal day note (`journal/YYYY-MM-DD.md`): the union of its entries.

Two machines append to the same day's journal; git sees two edits of one file and would stop with
a conflict. Journal notes are append-only lists of `## HH:MM · project` entries, so the right
merge is the union: every entry of either side survives, an entry removed on one side since the
common base stays removed, and entries interleave by time while each side keeps its own order.
Used as the `kg-journal` git merge driver and by `kg sync` when a rebase stops on a journal note.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date

from episodic.journal import is_kg_frontmatter, parse_entries, render_frontmatter

__all__ = ["DayNote", "merge_day", "split_day"]

_FRONTMATTER_RE = re.compile(r"\A---\n(.*?\n)?---\n", re.DOTALL)
_BLOCK_START_RE = re.compile(r"^#{1,2}\s")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
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
    fence = ""
    for line in rest.split("\n"):
        starts = not fence and _BLOCK_START_RE.match(line)  # a `# ` line inside a fence is code, not a heading
        opener = _FENCE_RE.match(line)
        if opener and (not fence or (opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence) and not line.strip()[len(opener.group(1)) :].strip())):
            fence = "" if fence else opener.group(1)
        if starts:
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
    """The union of both sides' entries (a three-way merge that honours deletions since base).

    Entries are counted, not deduplicated: a second identical entry one side added survives, and
    an entry both sides added the same way is kept once."""
    b, a, t = split_day(base), split_day(ours), split_day(theirs)
    kept_ours, new_theirs = _union(Counter(b.blocks), list(a.blocks), list(t.blocks))
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


def _union(base: Counter[str], ours: list[str], theirs: list[str]) -> tuple[list[str], list[str]]:
    """Our blocks that stay, and their blocks to add: each block as many times as the merge of its
    counts says (one side's change wins; both added: the larger count; both removed: the smaller;
    one added and one removed: both changes)."""
    a, t = Counter(ours), Counter(theirs)
    want: dict[str, int] = {}
    for blk in set(a) | set(t):
        nb, na, nt = base[blk], a[blk], t[blk]
        if na == nb or nt == nb:
            want[blk] = nt if na == nb else na
        elif (na > nb) == (nt > nb):
            want[blk] = max(na, nt) if na > nb else min(na, nt)
        else:
            want[blk] = max(0, na + nt - nb)
    from_ours = {blk: min(a[blk], n) for blk, n in want.items()}
    kept: list[str] = []
    left = dict(from_ours)
    for blk in ours:
        if left.get(blk, 0) > 0:
            kept.append(blk)
            left[blk] -= 1
    skip = {blk: t[blk] - (want[blk] - from_ours[blk]) for blk in want}  # their first ones are ours'
    added: list[str] = []
    for blk in theirs:
        if skip.get(blk, 0) > 0:
            skip[blk] -= 1
        elif want.get(blk, 0) > from_ours.get(blk, 0):
            added.append(blk)
    return kept, added
