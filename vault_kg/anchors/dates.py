"""Validity windows: what a note's frontmatter says about when its knowledge was current.

`valid_from` ≤ day < `valid_to` (with `superseded_by`, `supersedes`, `retired` and an append-only
`history` beside them), so `valid_at` can answer what was believed on a given date; `today` is the
date in the configured time zone.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from vault_kg.core.config import Config
from vault_kg.core.errors import KgError

__all__ = ["as_date", "parse_date", "today", "valid_at"]


def as_date(value: Any) -> dt.date | None:
    """A frontmatter date (`2024-06-01`, a datetime, or an ISO string) as a date; None if absent."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        return None


def parse_date(text: str) -> dt.date:
    """A user-typed `--as-of` / `--on` date, or one clear refusal."""
    found = as_date(text)
    if found is None or len(text.strip()) < 10:
        raise KgError(f"'{text}': not a date; use YYYY-MM-DD, e.g. 2024-06-01")
    return found


def today(cfg: Config | None = None) -> dt.date:
    tz = None
    if cfg is not None and cfg.timezone:
        try:
            from zoneinfo import ZoneInfo

            tz = ZoneInfo(cfg.timezone)
        except Exception:
            tz = None
    return dt.datetime.now(tz).date()


def valid_at(node_attrs: dict[str, Any], when: dt.date | str) -> bool:
    """Was this node's knowledge current on `when`? (`valid_from` ≤ when < `valid_to`.)

    Works on graph nodes (window keys under `props`) and on raw frontmatter dicts. A node with no
    window (code symbols, tags, notes never superseded) is valid on every date.
    """
    props = node_attrs.get("props") if isinstance(node_attrs.get("props"), dict) else node_attrs
    day = as_date(when)
    if day is None:
        raise KgError(f"'{when}': not a date; use YYYY-MM-DD")
    start = as_date(props.get("valid_from"))
    end = as_date(props.get("valid_to"))
    return (start is None or start <= day) and (end is None or day < end)
