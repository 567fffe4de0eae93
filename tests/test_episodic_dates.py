"""Date expressions resolved against a pinned clock (Wednesday 2025-03-12, 15:00 in Paris)."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from episodic.dates import resolve, resolve_timezone
from vault_kg.core.errors import KgError

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2025, 3, 12, 15, 0, tzinfo=PARIS)


@pytest.mark.parametrize(
    ("question", "start", "end", "rest"),
    [
        ("what was I doing yesterday", date(2025, 3, 11), date(2025, 3, 11), "what was i doing"),
        ("today", date(2025, 3, 12), date(2025, 3, 12), ""),
        ("the day before yesterday", date(2025, 3, 10), date(2025, 3, 10), ""),
        ("3 days ago", date(2025, 3, 9), date(2025, 3, 9), ""),
        ("two days ago on infra", date(2025, 3, 10), date(2025, 3, 10), "on infra"),
        ("this week", date(2025, 3, 10), date(2025, 3, 12), ""),
        ("last week on the payments project", date(2025, 3, 3), date(2025, 3, 9), "on the payments project"),
        ("this month", date(2025, 3, 1), date(2025, 3, 12), ""),
        ("last month", date(2025, 2, 1), date(2025, 2, 28), ""),
        ("what did I do on Monday", date(2025, 3, 10), date(2025, 3, 10), "what did i do"),
        ("last friday", date(2025, 3, 7), date(2025, 3, 7), ""),
        ("on Wednesday", date(2025, 3, 5), date(2025, 3, 5), ""),
        ("since Monday", date(2025, 3, 10), date(2025, 3, 12), ""),
        ("since last week", date(2025, 3, 3), date(2025, 3, 12), ""),
        ("deploy on 2025-02-14", date(2025, 2, 14), date(2025, 2, 14), "deploy"),
        ("between 2025-03-01 and 2025-03-05 infra", date(2025, 3, 1), date(2025, 3, 5), "infra"),
        ("in the last 10 days", date(2025, 3, 3), date(2025, 3, 12), ""),
        ("on March 3rd", date(2025, 3, 3), date(2025, 3, 3), ""),
        ("in February", date(2025, 2, 1), date(2025, 2, 28), ""),
        ("in December", date(2024, 12, 1), date(2024, 12, 31), ""),
        ("2 weeks ago", date(2025, 2, 24), date(2025, 3, 2), ""),
    ],
)
def test_expressions_resolve_to_day_ranges(question: str, start: date, end: date, rest: str) -> None:
    resolved = resolve(question, now=NOW, tz=PARIS)
    assert resolved.range is not None
    assert (resolved.range.start, resolved.range.end, resolved.rest) == (start, end, rest)


def test_no_date_means_no_range() -> None:
    resolved = resolve("when did I fix the webhook retries?", now=NOW, tz=PARIS)
    assert resolved.range is None and resolved.rest == "when did i fix the webhook retries"


def test_may_the_verb_is_not_may_the_month() -> None:
    assert resolve("what may have broken payouts", now=NOW, tz=PARIS).range is None
    assert resolve("may 2024 offsite", now=NOW, tz=PARIS).range is not None


def test_today_depends_on_the_time_zone() -> None:
    late = datetime(2025, 3, 12, 23, 30, tzinfo=ZoneInfo("UTC"))
    assert resolve("today", now=late, tz=ZoneInfo("UTC")).range.start == date(2025, 3, 12)  # type: ignore[union-attr]
    assert resolve("today", now=late, tz=ZoneInfo("Asia/Tokyo")).range.start == date(2025, 3, 13)  # type: ignore[union-attr]


def test_an_unknown_time_zone_is_one_clear_error() -> None:
    with pytest.raises(KgError, match="unknown time zone 'Mars/Olympus'"):
        resolve_timezone("Mars/Olympus")
