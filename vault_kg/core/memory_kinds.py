"""Episodic and semantic memory kept apart, and the filters a query can narrow its hits with.

Day notes (kg's `journal/YYYY-MM-DD.md`, and any note named for a day or an ISO week:
`2024-05-13.md`, `2024_05_13.md`, `2023-W02.md`, in any folder; see `vault_kg.core.day_files`)
and their sections are *episodic*: "what happened, when", answered by `kg recall`. They stay in
the graph and in the full-text index, but take no part in ranking, communities, the brief's
central notes, `kg affected` or a default `kg query`; a query reaches them only when asked for
kind `journal`. Everything here is decided from a node's kind and source alone, so an update and
a build from scratch always agree.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_kg.core import model as m
from vault_kg.core.day_files import name_period

__all__ = [
    "CODE",
    "CODE_KINDS",
    "DATE_KEYS",
    "EPISODIC_KINDS",
    "Filters",
    "JOURNAL",
    "JOURNAL_SOURCE_RE",
    "KIND_CHOICES",
    "is_episodic",
    "journal_day",
    "kind_of",
    "make_filters",
    "node_date",
]

JOURNAL = "journal"
CODE = "code"
JOURNAL_SOURCE_RE = re.compile(r"^journal/(\d{4})-(\d{2})-(\d{2})\.md$")
EPISODIC_KINDS = {m.NOTE, m.SECTION}
CODE_KINDS = {m.FILE, m.MODULE, m.CLASS, m.FUNCTION, m.METHOD}
# What `--kind` accepts: a node kind, `journal` (day notes), or `code` (any code symbol or file).
KIND_CHOICES = (m.NOTE, JOURNAL, CODE, m.ENTITY, m.SECTION, m.TAG, m.FILE, m.MODULE, m.CLASS, m.FUNCTION, m.METHOD, m.UNRESOLVED, m.EXTERNAL)
DATE_KEYS = ("date", "updated", "modified", "created")


def journal_day(source: str | None) -> dt.date | None:
    """The day of a day note (`journal/2025-03-14.md`, `Daily/2025_03_14.md`; a week note's
    Monday), None for any other source."""
    if not source:
        return None
    period = name_period(source)
    return None if period is None else period.start


def is_episodic(node: dict[str, Any]) -> bool:
    """A journal day note or one of its sections (tags and entities it mentions are shared)."""
    return node.get("kind") in EPISODIC_KINDS and journal_day(node.get("source")) is not None


def kind_of(node: dict[str, Any]) -> str:
    return JOURNAL if is_episodic(node) else str(node.get("kind") or "")


def node_date(node: dict[str, Any], root: Path | None) -> dt.date | None:
    """A journal note's day; else a `date`/`updated`/`created` frontmatter key; else the source
    file's modification day (None when there is no file to ask)."""
    day = journal_day(node.get("source"))
    if day is not None:
        return day
    props = node.get("props") or {}
    for key in DATE_KEYS:
        value = props.get(key) if isinstance(props, dict) else None
        if value:
            try:
                return dt.date.fromisoformat(str(value).strip()[:10])
            except ValueError:
                continue
    if root is None or not node.get("source"):
        return None
    try:
        return dt.date.fromtimestamp(os.stat(root / node["source"]).st_mtime)
    except OSError:
        return None


@dataclass(frozen=True)
class Filters:
    """What a query's hits must be. Empty filters still keep the journal out (see module doc).

    tags: any of these (a tag matches itself and its children: `client` matches `client/acme`);
    folder: the source lies under this folder; kinds: any of `KIND_CHOICES`;
    since/until: the node's date (see `node_date`) lies in this closed range.
    """

    tags: tuple[str, ...] = ()
    folder: str = ""
    kinds: tuple[str, ...] = ()
    since: dt.date | None = None
    until: dt.date | None = None

    @property
    def narrowing(self) -> bool:
        """True when the filters may drop hits a default query keeps (search deeper for seeds)."""
        return bool(self.tags or self.folder or self.kinds or self.since or self.until)

    def admits(self, node: dict[str, Any], root: Path | None = None) -> bool:
        kind = kind_of(node)
        if self.kinds:
            if not any(k == kind or (k == CODE and kind in CODE_KINDS) for k in self.kinds):
                return False
        elif kind == JOURNAL:
            return False
        if self.folder:
            folder = self.folder.strip("/") + "/"
            if not str(node.get("source") or "").startswith(folder):
                return False
        if self.tags:
            have = [str(t).lower() for t in node.get("tags") or ()]
            if not any(h == t or h.startswith(t + "/") for t in self.tags for h in have):
                return False
        if self.since or self.until:
            day = node_date(node, root)
            if day is None or (self.since and day < self.since) or (self.until and day > self.until):
                return False
        return True


def make_filters(tags: list[str] | None = None, folder: str | None = None, kinds: list[str] | None = None, since: str | None = None, until: str | None = None) -> Filters:
    """Filters from what a user typed, or one clear refusal (KgError) naming the bad value."""
    from vault_kg.core.errors import KgError

    kinds = [k.strip().lower() for k in kinds or [] if k.strip()]
    bad = [k for k in kinds if k not in KIND_CHOICES]
    if bad:
        raise KgError(f"unknown kind {bad[0]!r}; use one of: {', '.join(KIND_CHOICES)}")
    return Filters(
        tags=tuple(t.strip().lstrip("#").lower() for t in tags or [] if t.strip()),
        folder=(folder or "").strip().strip("/"),
        kinds=tuple(kinds),
        since=_day(since, "--since"),
        until=_day(until, "--until"),
    )


def _day(text: str | None, flag: str) -> dt.date | None:
    from vault_kg.core.errors import KgError

    if not text:
        return None
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise KgError(f"{flag} {text!r}: not a date; use YYYY-MM-DD, e.g. 2025-03-14") from None
