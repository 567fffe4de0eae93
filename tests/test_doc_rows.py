"""The full-text index's rows are deleted by rowid through `doc_rows` (vault_kg/storage/cache.py): after
any sequence of updates the index holds exactly a fresh build's rows, and a cache written before
`doc_rows` existed gets it filled from the index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vault_kg.storage.cache import ScopeCache
from vault_kg.update.engine import run
from vault_kg.update.run_state import WHOLE_GRAPH, RunSettings
from vault_kg.core.scopes import vault_scope

from scratch_build import isolated_env, numbered_notes, scratch


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolated_env(monkeypatch, tmp_path)


def _docs(vault: Path) -> list[tuple[object, ...]]:
    con = sqlite3.connect(vault / "kg-out" / "cache" / "index.sqlite")
    try:
        rows = sorted(con.execute("SELECT node_id, owner, label, aliases, summary, body FROM docs"))
        owned = sorted(con.execute("SELECT d.owner, r.owner FROM docs d JOIN doc_rows r ON r.id = d.rowid"))
        assert all(a == b for a, b in owned) and len(owned) == len(rows), "doc_rows disagrees with the index"
        return rows
    finally:
        con.close()


def test_the_index_holds_a_fresh_builds_rows_after_every_kind_of_update(tmp_path: Path) -> None:
    vault = numbered_notes(tmp_path / "v", 12)
    scope = vault_scope(vault)
    run(scope)
    steps = [
        lambda: (vault / "Note 3.md").write_text((vault / "Note 3.md").read_text() + "\nprose about payments\n"),
        lambda: (vault / "Note 4.md").write_text((vault / "Note 4.md").read_text() + "\nsee [[Note 7]]\n"),
        lambda: (vault / "Note 5.md").unlink(),
        lambda: (vault / "New.md").write_text("---\nsummary: a new note about ledgers\n---\nledger text [[Note 2]]\n"),
        lambda: (vault / "Note 6.md").rename(vault / "Moved 6.md"),
    ]
    for i, step in enumerate(steps):
        step()
        if i < 2:
            run(scope, paths=[vault / f"Note {i + 3}.md"], settings=RunSettings(defer=WHOLE_GRAPH))
        else:
            run(scope)
        scratch(vault, tmp_path)
        assert _docs(vault) == _docs(tmp_path / "scratch"), f"step {i}"


def test_a_cache_without_doc_rows_gets_it_from_the_index(tmp_path: Path) -> None:
    vault = numbered_notes(tmp_path / "v", 8)
    scope = vault_scope(vault)
    run(scope)
    db = vault / "kg-out" / "cache" / "index.sqlite"
    con = sqlite3.connect(db)
    con.executescript("DROP TABLE doc_rows;")  # as an older kg left it
    con.close()
    ScopeCache(db).close()
    note = vault / "Note 2.md"
    note.write_text(note.read_text() + "\nnew words here\n")
    run(scope, paths=[note])
    scratch(vault, tmp_path)
    assert _docs(vault) == _docs(tmp_path / "scratch")
