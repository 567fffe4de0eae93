"""The vault's day notes, wherever and however they were written: what recall lists and indexes.

kg's own journal days (`journal/YYYY-MM-DD.md`) and the days people keep by hand (Obsidian's
Daily Notes and Periodic Notes folders and formats, Logseq's `YYYY_MM_DD`, any note named for a
day or an ISO week) are one episodic memory. Which file is a day is `vault_kg.core.day_files`'s
rule; this module lists them (one walk of the vault, the graph's own listing rules: hidden
folders, `kg-out/` and Obsidian's excluded files are left out) and reads each as entries
(`episodic.day_entries`), redacted line for line so every entry keeps its `file:line`. A day
note is only ever read here, never written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from vault_kg.core.day_files import Period, day_settings, period_of
from vault_kg.core.safe_read import read_regular
from vault_kg.core.secrets import redact

from .day_entries import split_day
from .journal import MAX_DAY_BYTES, Entry

__all__ = ["DayFile", "covers", "day_text", "list_day_files", "read_entries"]


@dataclass(frozen=True)
class DayFile:
    """One day (or week) note: its vault path and the days it is about."""

    relpath: str
    period: Period

    @property
    def day(self) -> date:
        return self.period.start


def list_day_files(vault: Path) -> list[DayFile]:
    """Every day and week note of the vault, by date then path."""
    from extract.vault_scan import list_notes

    settings = day_settings(vault)
    found = []
    for rel in list_notes(vault)[0]:
        period = period_of(rel, settings)
        if period is not None:
            found.append(DayFile(rel, period))
    return sorted(found, key=lambda f: (f.period.start, f.relpath))


def covers(file: DayFile, start: date, end: date) -> bool:
    """Whether a question about `start`..`end` reads this note: a day inside the range, or a week
    that overlaps a range at least a week long (a week's note does not answer for one day)."""
    period = file.period
    if period.end < start or period.start > end:
        return False
    return period.kind == "day" or (end - start).days + 1 >= (period.end - period.start).days + 1


def day_text(vault: Path, path: Path) -> str:
    """A day file as recall may show it: read safely (a regular file inside the vault, at most
    `MAX_DAY_BYTES`) and redacted line for line, so every entry keeps its `file:line`.

    A hand-written, hand-edited or pulled day file never went through the journal writer's redaction.
    """
    try:
        raw = read_regular(path, MAX_DAY_BYTES, root=vault)
    except OSError:
        return ""
    return redact(raw.decode("utf-8", "replace"), keep_lines=True)


def read_entries(vault: Path, file: DayFile) -> list[Entry]:
    """A day note's entries, in file order."""
    return split_day(day_text(vault, vault / file.relpath), file.day, file.relpath)
