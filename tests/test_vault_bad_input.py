"""Bad input never crashes, never half-writes, never silently drops a note."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from vault_kg.core import store
from vault_kg.update.engine import run
from vault_kg.core.errors import KgError
from vault_kg.core.scopes import vault_scope


def build(vault: Path, **kwargs):
    return run(vault_scope(vault), **kwargs)


def node_ids(vault: Path) -> set[str]:
    return {n["id"] for n in json.loads((vault / "kg-out" / "graph.json").read_text())["nodes"]}


def test_huge_binary_non_utf8_and_empty_notes_are_kept_and_explained(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("---\nsummary: fine\ntags: [scope/global]\n---\n[[huge]] [[binary]]\n")
    with (tmp_path / "huge.md").open("wb") as handle:
        handle.write(b"# huge\n" + b"lorem ipsum dolor sit amet " * (50 * 1024 * 1024 // 27 + 1))
    (tmp_path / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR")
    (tmp_path / "latin1.md").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (tmp_path / "empty.md").write_bytes(b"")
    result = build(tmp_path)
    reasons = dict(result.quarantined)
    assert "over the 5 MB cap" in reasons["huge.md"] and "KG_MAX_NOTE_BYTES" in reasons["huge.md"]
    assert "binary content" in reasons["binary.md"]
    assert "not UTF-8" in reasons["latin1.md"] and "re-save" in reasons["latin1.md"]
    assert "empty.md" not in reasons
    ids = node_ids(tmp_path)
    assert {"note:huge.md", "note:binary.md", "note:latin1.md", "note:empty.md", "note:ok.md"} <= ids
    data = json.loads((tmp_path / "kg-out" / "graph.json").read_text())
    assert not [n for n in data["nodes"] if n["kind"] == "unresolved"], "links to quarantined notes still resolve"


def test_symlink_loop_and_escape_are_skipped_and_reported(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "sub").mkdir(parents=True)
    (vault / "sub" / "A.md").write_text("[[B]]")
    (vault / "B.md").write_text("b")
    os.symlink(vault, vault / "sub" / "loop")
    outside = tmp_path / "secret.md"
    outside.write_text("outside the vault")
    os.symlink(outside, vault / "escape.md")
    os.symlink(vault / "B.md", vault / "inside-link.md")
    result = build(vault)
    skipped = {s.relpath: s.reason for s in result.skipped}
    assert "sub/loop" in skipped and "not followed" in skipped["sub/loop"]
    assert "escape.md" in skipped and "outside the vault" in skipped["escape.md"]
    assert result.sources == 3
    assert "note:escape.md" not in node_ids(vault)


def test_missing_vault_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KgError, match="vault folder does not exist"):
        vault_scope(tmp_path / "missing")


def test_deleted_or_corrupt_artifacts_are_rebuilt_with_a_message(example_vault: Path) -> None:
    build(example_vault)
    out = example_vault / "kg-out"
    good = (out / "graph.json").read_bytes()
    (out / "graph.json").write_text("{ truncated")
    result = build(example_vault)
    assert any("graph.json" in n for n in result.notices)
    assert (out / "graph.json").read_bytes() == good
    db = out / "cache" / "index.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    result = build(example_vault)
    assert any("cache unreadable" in n for n in result.notices)
    assert (out / "graph.json").read_bytes() == good
    import shutil

    shutil.rmtree(out)
    build(example_vault)
    assert (out / "graph.json").read_bytes() == good and (out / ".gitignore").exists()


def test_atomic_write_keeps_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "graph.json"
    store.atomic_write(target, b"old")

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        store.atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.json"], "no temp file left behind"


def test_crash_mid_run_leaves_previous_state_and_next_run_recovers(example_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(example_vault)
    out = example_vault / "kg-out"
    before = (out / "graph.json").read_bytes()
    note = example_vault / "tools" / "Redis.md"
    note.write_text(note.read_text() + "\n[[Brand New]]\n")
    import graph_out.report as report

    def crash(data):
        raise RuntimeError("simulated crash while writing the report")

    original = report.render_report
    monkeypatch.setattr(report, "render_report", crash)
    with pytest.raises(RuntimeError):
        build(example_vault)
    monkeypatch.setattr(report, "render_report", original)  # (undo() would also drop KG_OLLAMA=off: a mode change, a full rebuild)
    assert (out / "graph.json").read_bytes() == before, "nothing half-written"
    con = sqlite3.connect(out / "cache" / "index.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    result = build(example_vault)
    assert result.extracted == ["tools/Redis.md"]
    assert "unresolved:brand new" in node_ids(example_vault)


def test_unwritable_output_is_one_clear_error(example_vault: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        blocked = tmp_path / "file-not-dir"
        blocked.write_text("x")
        with pytest.raises(KgError, match="cannot create the output folder"):
            run(vault_scope(example_vault, out=blocked / "kg-out"))
    else:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(KgError, match="cannot create the output folder"):
            run(vault_scope(example_vault, out=ro / "kg-out"))


def test_frontmatter_with_a_null_key_builds(tmp_path: Path) -> None:
    """YAML's bare `?` is a mapping with a null key; it must not break the cache's JSON encoding."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "odd.md").write_bytes(b"---\n?\n---\n?")
    (vault / "ok.md").write_text("---\nsummary: fine\n---\nsee [[odd]]\n")
    result = run(vault_scope(vault))
    assert result.nodes >= 2 and not result.quarantined
    graph = json.loads((vault / "kg-out" / "graph.json").read_text())
    props = next(n for n in graph["nodes"] if n["id"] == "note:odd.md")["props"]
    assert props == {"None": None}
