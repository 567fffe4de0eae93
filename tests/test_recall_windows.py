"""Recall narrowed to a part of the day ("this morning", "an hour ago") and to a named project.

The clock is pinned: Thursday 2026-03-12, 13:50 in Paris. The journal is written through
`append_entry` with pinned times, the way the session-end hook writes it.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from episodic.dates import resolve
from episodic.journal import append_entry
from episodic.recall import recall

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 3, 12, 13, 50, tzinfo=PARIS)
ENTRIES = [  # (day, time, project, text)
    (date(2026, 3, 3), "10:00", "infra", "Rotated the staging TLS certificates."),
    (date(2026, 3, 11), "22:15", "payments", "Late fix: webhook signature check used the wrong secret."),
    (date(2026, 3, 12), "08:10", "payments", "Added exponential backoff to webhook retries."),
    (date(2026, 3, 12), "13:20", "infra", "Moved the nightly backup to the new bucket."),
]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vault")
    for day, hhmm, project, text in ENTRIES:
        hour, minute = map(int, hhmm.split(":"))
        append_entry(root, text, project=project, now=datetime(day.year, day.month, day.day, hour, minute, tzinfo=PARIS), tz=PARIS)
    return root


@pytest.mark.parametrize(
    ("question", "window"),
    [
        ("what did I do an hour ago", ("2026-03-12 11:50", "2026-03-12 13:50")),
        ("3 hours ago", ("2026-03-12 09:50", "2026-03-12 11:50")),
        ("this morning", ("2026-03-12 00:00", "2026-03-12 11:59")),
        ("this afternoon", ("2026-03-12 12:00", "2026-03-12 17:59")),
        ("tonight", ("2026-03-12 17:00", "2026-03-12 23:59")),
        ("last night", ("2026-03-11 17:00", "2026-03-11 23:59")),
    ],
)
def test_parts_of_the_day_and_hours_ago_resolve_to_a_window(question: str, window: tuple[str, str]) -> None:
    rng = resolve(question, now=NOW, tz=PARIS).range
    assert rng is not None and rng.window is not None
    assert tuple(t.isoformat(sep=" ", timespec="minutes") for t in rng.window) == window
    assert (rng.start, rng.end) == (rng.window[0].date(), rng.window[1].date())


def test_an_hour_ago_just_after_midnight_reaches_into_yesterday() -> None:
    rng = resolve("an hour ago", now=datetime(2026, 3, 12, 0, 30, tzinfo=PARIS), tz=PARIS).range
    assert rng is not None and (rng.start, rng.end) == (date(2026, 3, 11), date(2026, 3, 12))


def entries(result) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return [(h.entry.day.isoformat(), h.entry.time, h.entry.project) for h in result.hits]


def test_this_morning_is_the_morning_not_the_whole_day(vault: Path) -> None:
    assert entries(recall(vault, "this morning", now=NOW, tz=PARIS)) == [("2026-03-12", "08:10", "payments")]
    assert entries(recall(vault, "this afternoon", now=NOW, tz=PARIS)) == [("2026-03-12", "13:20", "infra")]
    assert entries(recall(vault, "last night", now=NOW, tz=PARIS)) == [("2026-03-11", "22:15", "payments")]
    assert len(recall(vault, "today", now=NOW, tz=PARIS).hits) == 2


def test_an_hour_ago_finds_what_happened_then(vault: Path) -> None:
    assert entries(recall(vault, "what was I doing an hour ago", now=NOW, tz=PARIS)) == [("2026-03-12", "13:20", "infra")]
    assert entries(recall(vault, "5 hours ago", now=NOW, tz=PARIS)) == [("2026-03-12", "08:10", "payments")]


def test_a_search_within_this_morning_stays_within_the_morning(vault: Path) -> None:
    result = recall(vault, "webhook retries or backups this morning", now=NOW, tz=PARIS)
    assert result.mode == "search"
    assert entries(result) == [("2026-03-12", "08:10", "payments")]


def test_a_named_project_filters_even_when_it_has_nothing_in_the_range(vault: Path) -> None:
    # Last week (2-8 March) holds only an infra entry: the payments question must not return it.
    result = recall(vault, "last week on the payments project", now=NOW, tz=PARIS)
    assert result.project == "payments" and result.hits == []
    assert entries(recall(vault, "last week on infra", now=NOW, tz=PARIS)) == [("2026-03-03", "10:00", "infra")]
    assert {p for _, _, p in entries(recall(vault, "this week on payments", now=NOW, tz=PARIS))} == {"payments"}
