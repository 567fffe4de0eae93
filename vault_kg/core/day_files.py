"""Which files of a vault are days (or weeks): kg's journal, Obsidian's daily notes, date-named notes.

People keep a note per day the way their tool made them: Obsidian's core Daily Notes plugin
(`.obsidian/daily-notes.json`: `folder`, and `format` in moment.js tokens, default `YYYY-MM-DD`),
the Periodic Notes plugin (`.obsidian/plugins/periodic-notes/data.json`: `daily` and `weekly`, each
with `folder`, `format` and `enabled`), Logseq (`journals/2024_05_13.md`), kg's own journal
(`journal/2024-05-13.md`). Two rules decide, and both are documented in docs/journal.md:

- by name alone, anywhere in the vault: a file named `YYYY-MM-DD`, `YYYY_MM_DD` or `YYYY.MM.DD`
  is that day, and one named `YYYY-Www` (Periodic Notes' default) is that ISO week. The graph
  decides episodic memory this way (`vault_kg.core.memory_kinds`), from a node's source alone,
  so an update and a build from scratch always agree;
- by the vault's settings: a file inside the configured folder whose path matches the
  configured format (`DD.MM.YYYY`, `dddd, MMMM Do YYYY`, `YYYY/MM/YYYY-MM-DD`...). Recall and lint,
  which know the vault, read these too.

Settings are read through `safe_read` (a FIFO or a huge file there is ignored, never waited on)
and memoized on the files' stat. Only the standard library is imported.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

__all__ = ["DaySettings", "Pattern", "Period", "compile_format", "day_settings", "name_period", "period_of"]

_NAME_DAY_RE = re.compile(r"^(\d{4})([-_.])(\d{2})\2(\d{2})$")
_NAME_WEEK_RE = re.compile(r"^(\d{4})-W(\d{2})$")
SETTINGS_FILES = (
    (".obsidian", "daily-notes.json"),
    (".obsidian", "plugins", "periodic-notes", "data.json"),
)
MAX_SETTINGS_BYTES = 256 * 1024
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class Period:
    """The days a note is about: one day, or an ISO week (Monday to Sunday)."""

    start: date
    end: date
    kind: str  # "day" or "week"


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        found = date(year, month, day)
    except ValueError:
        return None
    return Period(found, found, "day")


def _week(year: int, week: int) -> Period | None:
    try:
        monday = date.fromisocalendar(year, week, 1)
    except ValueError:
        return None
    return Period(monday, monday + timedelta(days=6), "week")


def name_period(relpath: str) -> Period | None:
    """The day (or week) a note's file name says, in any folder; None for any other name."""
    name = relpath.rpartition("/")[2]
    if name[-3:].lower() != ".md" or not name[:1].isdigit():  # the test most names fail, before any regex
        return None
    stem = name[:-3]
    found = _NAME_DAY_RE.match(stem)
    if found:
        return _day(int(found.group(1)), int(found.group(3)), int(found.group(4)))
    week = _NAME_WEEK_RE.match(stem)
    return _week(int(week.group(1)), int(week.group(2))) if week else None


# -- moment.js formats ----------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\[[^\]]*\]|YYYY|gggg|GGGG|YY|MMMM|MMM|MM|M|Do|DDDD|DD|D|dddd|ddd|dd|d|ww|w|WW|W|Q|.", re.DOTALL)
_MONTH_NAMES = "|".join(MONTHS + tuple(m[:3] for m in MONTHS) + ("sept",))
_DAY_NAMES = "|".join(WEEKDAYS + tuple(d[:3] for d in WEEKDAYS) + tuple(d[:2] for d in WEEKDAYS))
_TOKENS = {
    "YYYY": ("year", r"\d{4}"),
    "gggg": ("year", r"\d{4}"),
    "GGGG": ("year", r"\d{4}"),
    "YY": ("year2", r"\d{2}"),
    "MMMM": ("month_name", _MONTH_NAMES),
    "MMM": ("month_name", _MONTH_NAMES),
    "MM": ("month", r"\d{2}"),
    "M": ("month", r"\d{1,2}"),
    "Do": ("day", r"\d{1,2}(?:st|nd|rd|th)"),
    "DD": ("day", r"\d{2}"),
    "D": ("day", r"\d{1,2}"),
    "DDDD": (None, r"\d{3}"),
    "dddd": (None, _DAY_NAMES),
    "ddd": (None, _DAY_NAMES),
    "dd": (None, _DAY_NAMES),
    "d": (None, r"[0-6]"),
    "ww": ("week", r"\d{2}"),
    "w": ("week", r"\d{1,2}"),
    "WW": ("week", r"\d{2}"),
    "W": ("week", r"\d{1,2}"),
    "Q": (None, r"[1-4]"),
}


@dataclass(frozen=True)
class Pattern:
    """A configured kind of periodic note: where its files live and how their paths are named."""

    folder: str  # vault-relative, "" for the root
    regex: re.Pattern[str]  # matches the path below `folder`, without `.md`
    kind: str  # "day" or "week"

    def period(self, relpath: str) -> Period | None:
        prefix = self.folder + "/" if self.folder else ""
        if not relpath.startswith(prefix) or relpath[-3:].lower() != ".md":
            return None
        found = self.regex.match(relpath[len(prefix) : -3])
        return None if found is None else _period_from(found.groupdict(), self.kind)


def compile_format(fmt: str) -> re.Pattern[str] | None:
    """A regex for the file paths a moment.js format writes (None for a format it cannot read back)."""
    parts: list[str] = []
    seen: set[str] = set()
    for token in _TOKEN_RE.findall(fmt):
        if token.startswith("[") and token.endswith("]"):
            parts.append(re.escape(token[1:-1]))
            continue
        field, pattern = _TOKENS.get(token, (None, None))
        if pattern is None:
            parts.append(re.escape(token))
        elif field is None or field in seen:
            parts.append(f"(?:{pattern})")
        else:
            seen.add(field)
            parts.append(f"(?P<{field}>{pattern})")
    if not seen & {"year", "year2"}:
        return None
    try:
        return re.compile("".join(parts) + r"\Z", re.IGNORECASE)
    except re.error:
        return None


def _period_from(fields: dict[str, Any], kind: str) -> Period | None:
    year = int(fields["year"]) if fields.get("year") else 2000 + int(fields["year2"])
    if kind == "week" or (fields.get("week") and not fields.get("day")):
        return _week(year, int(fields["week"])) if fields.get("week") else None
    if fields.get("month_name"):
        name = fields["month_name"].lower()[:3]
        month = next(i for i, full in enumerate(MONTHS, 1) if full.startswith(name))
    elif fields.get("month"):
        month = int(fields["month"])
    else:
        return None
    return _day(year, month, int(re.sub(r"\D", "", fields["day"]))) if fields.get("day") else None


# -- the vault's settings -------------------------------------------------------------------------


@dataclass(frozen=True)
class DaySettings:
    """The configured daily and weekly notes of one vault (empty when nothing is configured)."""

    patterns: tuple[Pattern, ...] = ()
    folders: tuple[str, ...] = ()  # the configured folders, for the notes kg lists as days

    def period(self, relpath: str) -> Period | None:
        return period_of(relpath, self)


def period_of(relpath: str, settings: DaySettings | None = None) -> Period | None:
    """The day or week a vault note is about, by its name, then by the vault's settings."""
    found = name_period(relpath)
    if found is not None or settings is None:
        return found
    for pattern in settings.patterns:
        found = pattern.period(relpath)
        if found is not None:
            return found
    return None


_memo: dict[str, tuple[tuple[Any, ...], DaySettings]] = {}


def day_settings(root: Path) -> DaySettings:
    """The vault's Daily Notes and Periodic Notes settings, re-read only when their files change."""
    paths = [os.path.join(os.fspath(root), *parts) for parts in SETTINGS_FILES]
    key = tuple(_stat(path) for path in paths)
    memo = _memo.get(os.fspath(root))
    if memo is not None and memo[0] == key:
        return memo[1]
    daily = _read_json(paths[0]) if key[0] else {}
    periodic = _read_json(paths[1]) if key[1] else {}
    configured: list[tuple[str, str, str]] = []
    plugin_daily = _section(periodic, "daily")
    if plugin_daily.get("enabled"):
        configured.append((str(plugin_daily.get("folder") or ""), str(plugin_daily.get("format") or "YYYY-MM-DD"), "day"))
    configured.append((str(daily.get("folder") or ""), str(daily.get("format") or "YYYY-MM-DD"), "day"))
    weekly = _section(periodic, "weekly")
    if weekly.get("enabled"):
        configured.append((str(weekly.get("folder") or ""), str(weekly.get("format") or "gggg-[W]ww"), "week"))
    patterns: list[Pattern] = []
    folders: list[str] = []
    for folder, fmt, kind in dict.fromkeys(configured):
        regex = compile_format(fmt)
        clean = folder.strip().strip("/")
        if regex is not None:
            patterns.append(Pattern(clean, regex, kind))
        if clean and clean not in folders:
            folders.append(clean)
    settings = DaySettings(tuple(patterns), tuple(folders))
    _memo[os.fspath(root)] = (key, settings)
    return settings


def _section(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def _read_json(path: str) -> dict[str, Any]:
    """A settings file as a dict; anything unreadable, foreign or malformed reads as no settings."""
    from vault_kg.core.safe_read import read_regular

    try:
        data = json.loads(read_regular(path, MAX_SETTINGS_BYTES).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
