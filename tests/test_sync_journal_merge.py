"""The journal merge: a three-way union of entries, as the `kg-journal` git merge driver."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from conftest import kg_process
from episodic.journal import append_entry, parse_entries
from vault_kg.notes.journal_merge import merge_day

DAY = datetime(2025, 3, 14, 9, 0)
REL = "journal/2025-03-14.md"


def _day_text(tmp_path: Path, name: str, entries: list[tuple[int, str]]) -> str:
    vault = tmp_path / name
    vault.mkdir()
    for hour, text in entries:
        append_entry(vault, text, project="p", now=DAY.replace(hour=hour))
    return (vault / REL).read_text()


def _texts(merged: str) -> list[str]:
    return [e.text for e in parse_entries(merged, DAY.date(), REL)]


def test_both_sides_appended_entries_are_kept_in_time_order(tmp_path: Path) -> None:
    base = _day_text(tmp_path, "base", [(8, "base entry")])
    ours = _day_text(tmp_path, "ours", [(8, "base entry"), (10, "ours at ten"), (13, "ours at one")])
    theirs = _day_text(tmp_path, "theirs", [(8, "base entry"), (9, "theirs at nine"), (12, "theirs at noon")])
    merged = merge_day(base, ours, theirs, REL)
    assert _texts(merged) == ["base entry", "theirs at nine", "ours at ten", "theirs at noon", "ours at one"]
    assert 'summary: "Journal for Friday 2025-03-14: 5 entries (p)"' in merged
    assert merged.count("# 2025-03-14 (Friday)") == 1


def test_an_entry_deleted_on_one_side_stays_deleted_and_an_edit_wins(tmp_path: Path) -> None:
    base = _day_text(tmp_path, "base", [(8, "keep me"), (9, "secret-ish, deleted on purpose"), (10, "typo here")])
    ours = base.replace("## 09:00 · p\nsecret-ish, deleted on purpose\n\n", "")
    theirs = base.replace("typo here", "typo fixed") + "\n## 11:00 · p\nnew on theirs\n"
    merged = merge_day(base, ours, theirs, REL)
    assert _texts(merged) == ["keep me", "typo fixed", "new on theirs"]


def test_identical_sides_merge_to_the_same_text(tmp_path: Path) -> None:
    text = _day_text(tmp_path, "same", [(8, "one"), (9, "two")])
    assert merge_day(text, text, text, REL) == text
    assert merge_day("", text, text, REL) == text


def test_merge_journal_command_writes_the_union_into_ours(tmp_path: Path) -> None:
    base = _day_text(tmp_path, "base", [(8, "base")])
    ours = _day_text(tmp_path, "ours", [(8, "base"), (10, "ours")])
    theirs = _day_text(tmp_path, "theirs", [(8, "base"), (9, "theirs")])
    files = {}
    for name, text in (("O", base), ("A", ours), ("B", theirs)):
        files[name] = tmp_path / f".merge_{name}"
        files[name].write_text(text)
    ran = kg_process("merge-journal", str(files["O"]), str(files["A"]), str(files["B"]), REL)
    assert ran.returncode == 0, ran.stderr
    assert _texts(files["A"].read_text()) == ["base", "theirs", "ours"]
