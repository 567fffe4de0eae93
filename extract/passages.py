"""Passages: the unit kg ranks by meaning and prints under a hit, cut from a note, a day or a symbol.

A note is cut at its headings (outside fenced code and Obsidian `%%` comments), then at blank
lines into pieces of at most `MAX_CHARS` characters (a block longer than that at line ends; a
fence stays whole where it fits). Each passage keeps its first and last line, for `file:line`
and for the lines printed under a hit, and its heading path (the note's title first), which is
embedded above its text: measured on the tune half of the retrieval bench, the path adds 0.025
MRR (docs/queries.md). A journal day's passages are its entries when the journal parser finds
some, else its blocks; a code symbol's passage is the start of its source. Everything here is a
function of the text: the same file always gives the same passages, so vectors can be reused by
digest and a store built incrementally equals one built from scratch.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CODE_NODE_KINDS", "MAX_CHARS", "MAX_SOURCE_BYTES", "Passage", "code_passage", "day_passages", "digest_of", "journal_passages", "note_passages", "source_passages"]

MAX_CHARS = 1200  # measured: sections of ~1,000-2,000 characters rank as well as paragraphs and hold the answer more often
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT = "%%"


@dataclass(frozen=True)
class Passage:
    """Lines `first`-`last` (1-based, inclusive) of `source`, belonging to graph node `node`."""

    node: str
    source: str
    first: int
    last: int
    heading: str  # "Title > Section > Subsection"
    text: str  # the lines as written

    @property
    def embed_text(self) -> str:
        """What an embedder reads: the heading path above the text."""
        return f"{self.heading}\n{self.text}" if self.heading else self.text

    @property
    def digest(self) -> str:
        return digest_of(self.embed_text)


def digest_of(text: str) -> str:
    """The key a vector is stored under: the same text keeps its vector wherever it moves."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


def _body_start(lines: list[str]) -> int:
    """The index of the first line after a YAML frontmatter block (0 when there is none)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, min(len(lines), 400)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


@dataclass
class _Section:
    path: list[tuple[int, str]]  # (level, text) of each heading above
    blocks: list[list[int]]  # line indexes (0-based) of each block


def _sections(lines: list[str], start: int) -> list[_Section]:
    """The note's sections, each with its heading path and its blocks of non-blank lines."""
    stack: list[tuple[int, str]] = []
    sections = [_Section([], [])]
    block: list[int] = []
    fence = ""
    hidden = False

    def close() -> None:
        if block:
            sections[-1].blocks.append(list(block))
            block.clear()

    for i in range(start, len(lines)):
        line = lines[i]
        stripped = line.strip()
        if not fence and stripped.startswith(_COMMENT) and not (len(stripped) > 2 and stripped.endswith(_COMMENT)):
            hidden = not hidden  # an Obsidian comment (a drawing's JSON, notes to self): never a passage
            close()
            continue
        if hidden:
            continue
        opener = _FENCE.match(line)
        if fence:
            block.append(i)
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence) and not line.strip()[len(opener.group(1)) :].strip():
                fence = ""
            continue
        if opener:
            fence = opener.group(1)
            block.append(i)
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading.group(2).strip()))
            sections.append(_Section(list(stack), []))
        elif stripped:
            block.append(i)
        else:
            close()
    close()
    return [s for s in sections if s.blocks]


def _pieces(lines: list[str], blocks: list[list[int]], limit: int) -> list[tuple[int, int]]:
    """(first, last) line indexes of each piece: blocks packed up to `limit` characters, a longer
    block cut at line ends."""
    spans: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    size = 0
    for block in blocks:
        cost = sum(len(lines[i]) + 1 for i in block)
        if cur is not None and size + cost <= limit:
            cur, size = (cur[0], block[-1]), size + cost
            continue
        if cur is not None:
            spans.append(cur)
            cur, size = None, 0
        if cost <= limit:
            cur, size = (block[0], block[-1]), cost
            continue
        first, used = block[0], 0
        for i in block:
            if used and used + len(lines[i]) + 1 > limit:
                spans.append((first, i - 1))
                first, used = i, 0
            used += len(lines[i]) + 1
        cur, size = (first, block[-1]), used
    if cur is not None:
        spans.append(cur)
    return spans


def note_passages(node: str, source: str, text: str, title: str, limit: int = MAX_CHARS) -> list[Passage]:
    """A note's passages in file order; the heading path starts with the note's title unless the
    path starts at an H1 (the title as the reader sees it)."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    found = []
    for section in _sections(lines, _body_start(lines)):
        names = [name for _, name in section.path]
        if title and (not section.path or section.path[0][0] != 1):
            names.insert(0, title)
        heading = " > ".join(n for n in names if n)
        for first, last in _pieces(lines, section.blocks, limit):
            found.append(Passage(node, source, first + 1, last + 1, heading, "\n".join(lines[first : last + 1])))
    return found


def journal_passages(node: str, source: str, text: str, day: str, entries: list[tuple[int, int, str]], limit: int = MAX_CHARS) -> list[Passage]:
    """A journal day's passages: each entry the journal parser found, as (first line, last line,
    its heading such as `2025-03-14 09:30 · payments`), cut to `limit`; a day it found no entries
    in is cut like a note, its title the day."""
    if not entries:
        return note_passages(node, source, text, day, limit)
    lines = [line.rstrip("\r") for line in text.split("\n")]
    found = []
    for first, last, heading in entries:
        block = [i for i in range(first - 1, min(last, len(lines))) if lines[i].strip()]
        for a, b in _pieces(lines, [block] if block else [], limit):
            found.append(Passage(node, source, a + 1, b + 1, heading, "\n".join(lines[a : b + 1])))
    return found


def code_passage(node: str, source: str, lines: list[str], line: int, end_line: int, heading: str, limit: int = MAX_CHARS) -> Passage | None:
    """A code symbol's passage: its first lines (signature, docstring, the start of its body) up to `limit` characters."""
    start = max(1, line)
    last = min(len(lines), max(start, end_line or start))
    used, stop = 0, start
    for number in range(start, last + 1):
        cost = len(lines[number - 1]) + 1
        if used and used + cost > limit:
            break
        used, stop = used + cost, number
    body = "\n".join(lines[start - 1 : stop])
    return Passage(node, source, start, stop, heading, body) if body.strip() else None


CODE_NODE_KINDS = ("file", "class", "function", "method")
MAX_SOURCE_BYTES = 4 * 1024 * 1024  # a note larger than this is quarantined by the build anyway


def source_passages(kind: str, root: Path, rel: str, nodes: list[tuple[str, dict[str, Any]]]) -> list[Passage]:
    """The passages of one source of a scope of `kind` ("vault" or "code"), read from disk now:
    `nodes` are the source's note node (a vault) or its file and symbol nodes (code), as the
    graph holds them. A quarantined or unreadable source has none."""
    from vault_kg.core.safe_read import read_regular

    if not nodes or any(attrs.get("status") == "quarantined" for _, attrs in nodes):
        return []
    from vault_kg.core.secrets import redact

    try:
        text = read_regular(root / rel, MAX_SOURCE_BYTES, root=root).decode("utf-8", "replace")
    except OSError:
        return []
    text = redact(text, keep_lines=True)  # what is embedded, stored and printed is what an agent may see: no credential
    if kind != "vault":
        lines = text.split("\n")
        found = (code_passage(nid, rel, lines, int(a.get("line") or 1), int(a.get("end_line") or 0), f"{rel} › {a.get('qualname') or a.get('label') or ''}".rstrip(" ›")) for nid, a in nodes)
        return sorted((p for p in found if p is not None), key=lambda p: (p.first, p.node))
    node, attrs = nodes[0]
    from vault_kg.core.memory_kinds import journal_day

    day = journal_day(rel)
    if day is None:
        return note_passages(node, rel, text, str(attrs.get("label") or ""))
    return day_passages(node, rel, text, day)[1]


def day_passages(node: str, rel: str, text: str, day: Any) -> tuple[list[Any], list[Passage]]:
    """A day note's entries (kg's own and hand-written ones, as `episodic.day_entries` cuts them)
    and their passages: one cut for the vector index and for recall, so their digests agree."""
    from episodic.day_entries import split_day

    entries = split_day(text.replace("\r\n", "\n"), day, rel)
    spans = [(e.line, e.end_line, f"{e.day.isoformat()} {e.time}".rstrip() + (f" · {e.project}" if e.project else "")) for e in entries]
    return entries, journal_passages(node, rel, text, day.isoformat(), spans)
