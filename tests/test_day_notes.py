"""Daily notes as people write them (issue #28) and kg's entries beside them (issue #29, finding 4).

Which files are days (a date name in any folder, the Daily Notes / Periodic Notes settings and
their moment.js formats), how a hand-written day splits into entries, and the journal writer
appending to a day a person wrote or edited without rewriting a byte of it.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import pytest

from episodic.day_entries import entry_time, split_day
from episodic.journal import append_entry, render_frontmatter
from vault_kg.core.day_files import compile_format, day_settings, name_period, period_of

DAY = date(2024, 5, 13)


@pytest.mark.parametrize(
    ("fmt", "path", "expected"),
    [
        ("YYYY-MM-DD", "2024-05-13", DAY),
        ("DD.MM.YYYY", "13.05.2024", DAY),
        ("dddd, MMMM Do YYYY", "Monday, May 13th 2024", DAY),
        ("YYYY/MM/YYYY-MM-DD", "2024/05/2024-05-13", DAY),
        ("YYYY-MM-DD ddd", "2024-05-13 Mon", DAY),
        ("D MMM YY", "13 May 24", DAY),
    ],
)
def test_a_configured_format_reads_its_file_names_back(fmt: str, path: str, expected: date) -> None:
    regex = compile_format(fmt)
    assert regex is not None and regex.match(path) and not regex.match(path + "x")


def test_names_and_settings_say_which_files_are_days(tmp_path: Path) -> None:
    assert name_period("journal/2022_03_14.md").start == date(2022, 3, 14)  # type: ignore[union-attr]
    assert name_period("anywhere/2024-05-13.md").kind == "day"  # type: ignore[union-attr]
    week = name_period("Orga/Daily/2023-W02.md")
    assert week is not None and (week.start, week.end, week.kind) == (date(2023, 1, 9), date(2023, 1, 15), "week")
    for other in ("1971.md", "2023-12-11_BACKUP_277894.md", "2024-07-20.conflicted.1721431903785.md", "2024-02-30.md", "notes/2024-05-13 plan.md"):
        assert name_period(other) is None, other
    settings = tmp_path / ".obsidian"
    settings.mkdir()
    (settings / "daily-notes.json").write_text(json.dumps({"folder": "Journal/Days", "format": "DD.MM.YYYY"}))
    configured = day_settings(tmp_path)
    assert period_of("Journal/Days/13.05.2024.md", configured).start == DAY  # type: ignore[union-attr]
    assert period_of("Elsewhere/13.05.2024.md", configured) is None and period_of("Journal/Days/13.05.2024.md") is None
    (settings / "daily-notes.json").write_text("{not json")
    assert period_of("Journal/Days/13.05.2024.md", day_settings(tmp_path)) is None  # re-read on change; a broken file configures nothing


def test_a_hand_written_day_splits_into_its_bullets_paragraphs_and_sections() -> None:
    text = "# Monday 13 May 2024\n\n- 09:30 standup\n\t- notes from it\n- [ ] \n- [x] 14h05 call with Eli\n\nA paragraph\nthat runs on.\n\n---\n"
    entries = split_day(text, DAY, "Daily/2024-05-13.md")
    assert [(e.line, e.end_line, e.time) for e in entries] == [(3, 4, "09:30"), (6, 6, "14:05"), (8, 9, "")]
    assert entries[0].text == "- 09:30 standup\n\t- notes from it" and entries[2].text == "A paragraph\nthat runs on."
    headed = split_day("---\nmood: ok\n---\n## Morning\nbatteries\n```\n# not a heading\n```\n## Afternoon\nwrote it up\n", DAY, "d.md")
    assert [(e.line, e.text.split("\n")[0]) for e in headed] == [(4, "## Morning"), (9, "## Afternoon")] and "# not a heading" in headed[0].text
    timed = split_day("## Log\n- 08:00 coffee\n- 17:45 home\n", DAY, "d.md")
    assert [(e.time, e.text) for e in timed] == [("08:00", "- 08:00 coffee"), ("17:45", "- 17:45 home")]


def test_kg_entries_and_hand_written_ones_share_a_day() -> None:
    text = "Wrote this by hand.\n\n## 10:15 · payments\nFixed the retries.\n"
    entries = split_day(text, DAY, "journal/2024-05-13.md")
    assert [(e.time, e.project, e.text) for e in entries] == [("", "", "Wrote this by hand."), ("10:15", "payments", "Fixed the retries.")]
    assert entry_time("- [ ] 7.05 early train") == "07:05" and entry_time("- 25:00 nope") == "" and entry_time("2024-05-13 was a day") == ""


def test_the_journal_appends_to_a_hand_written_day_without_rewriting_it(tmp_path: Path) -> None:
    day = tmp_path / "journal" / "2024-05-13.md"
    day.parent.mkdir()
    mine = "# Monday\n\n- wrote this myself\n\n\n"
    day.write_text(mine)
    append_entry(tmp_path, "kg's entry", project="p", now=datetime(2024, 5, 13, 10, 0))
    after = day.read_text()
    assert after.startswith(mine) and after[len(mine) :] == "## 10:00 · p\nkg's entry\n", "every byte the person wrote stays, trailing blank lines too"


def test_the_journal_keeps_a_summary_and_tags_the_user_changed(tmp_path: Path) -> None:
    """Issue #29, finding 4: the next append used to put kg's own summary and tags back."""
    append_entry(tmp_path, "first", project="p", now=datetime(2024, 5, 13, 9, 0))
    day = tmp_path / "journal" / "2024-05-13.md"
    edited = day.read_text().replace('summary: "Journal for Monday 2024-05-13: 1 entry (p)"', 'summary: "Migration day"').replace("project/p]", "project/p, topic/migration]")
    day.write_text(edited)
    append_entry(tmp_path, "second", project="q", now=datetime(2024, 5, 13, 11, 0))
    after = day.read_text()
    assert after.startswith(edited) and 'summary: "Migration day"' in after and "topic/migration" in after
    untouched = tmp_path / "other"
    append_entry(untouched, "first", project="p", now=datetime(2024, 5, 13, 9, 0))
    append_entry(untouched, "second", project="q", now=datetime(2024, 5, 13, 11, 0))
    text = (untouched / "journal" / "2024-05-13.md").read_text()
    assert text.startswith(render_frontmatter(DAY, split_day(text, DAY, "x")))  # kg's own frontmatter still follows its entries
