"""Deterministic staleness: which edits dirty an anchor, with which reason, and how it propagates."""

from __future__ import annotations

from pathlib import Path

import pytest
from anchor_helpers import World, anchor, check, dirty, kg, make_world, note, settle

FETCH = "src/retry.py › class Client › method fetch"
GET = "src/retry.py › class Client › method get"


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = make_world(tmp_path)
    anchor(w, "notes/Retry.md", "src/retry.py::Client.fetch")
    anchor(w, "notes/Backoff.md", "src/retry.py::backoff")
    settle(w)
    return w


def test_fresh_anchors_are_clean(world: World) -> None:
    report = check(world)
    assert report["dirty"] == [] and report["issues"] == []
    assert report["counts"] == {"notes": 3, "anchors": 2, "dirty": 0, "issues": 0}
    assert report["summary"] == "3 notes · 2 anchors · 0 dirty · 0 issues"


def test_editing_a_function_body_dirties_exactly_that_anchor(world: World) -> None:
    world.edit("src/retry.py", "range(3)", "range(5)")
    assert dirty(check(world)) == {"note:notes/Retry.md": f"hash changed: {FETCH}"}


def test_reformatting_and_comment_edits_dirty_nothing(world: World) -> None:
    world.edit("src/retry.py", "# try a few times before giving up", "# retry politely, then stop")
    world.edit("src/retry.py", "for attempt in range(3):", "for attempt in range( 3 ):  # three")
    world.edit("src/retry.py", "if self.get(url):", "if self.get(\n                url\n            ):")
    world.edit("src/retry.py", "def backoff(n):\n    return 2 ** n", "def backoff( n ):\n\n    return 2**n")
    report = check(world)
    assert report["dirty"] == [], report["dirty"]


def test_editing_a_sibling_method_leaves_the_first_method_clean(world: World) -> None:
    """The anchored method is the first in its class; editing the next one must not reach it."""
    world.edit("src/retry.py", 'return url.startswith("http")', 'return url.startswith("https")')
    assert check(world)["dirty"] == []


def test_moving_the_function_to_another_class_then_reanchor_finds_it(world: World) -> None:
    text = (world.repo / "src/retry.py").read_text()
    start, end = text.index("    def fetch"), text.index("    def get")
    method = text[start:end]
    moved = text[:start] + text[end:]
    moved = moved.replace("class Other:\n", "class Other:\n" + method)
    (world.repo / "src/retry.py").write_text(moved)
    world.edit("src/retry.py", "class Other", "class Other")
    assert dirty(check(world)) == {"note:notes/Retry.md": f"symbol not found: {FETCH}"}
    code, out, err = kg("reanchor", "notes/Retry.md", "--vault", str(world.vault))
    assert code == 0, err
    assert "src/retry.py › class Other › method fetch" in out
    assert "locator: src/retry.py › class Other › method fetch" in world.note_text("notes/Retry.md")
    assert check(world)["dirty"] == []
    from vault_kg.anchors.history import entries

    assert [e["action"] for e in entries(world.vault) if e["note"] == "notes/Retry.md"][-1] == "reanchor" and "history:" not in world.note_text("notes/Retry.md")


def test_renaming_gives_symbol_not_found_and_reanchor_refuses_with_candidates(world: World) -> None:
    world.edit("src/retry.py", "def fetch(self, url):", "def fetch_all(self, url):")
    assert dirty(check(world)) == {"note:notes/Retry.md": f"symbol not found: {FETCH}"}
    before = world.note_text("notes/Retry.md")
    code, out, err = kg("reanchor", "notes/Retry.md", "--vault", str(world.vault))
    assert code == 1
    assert err.count("\n") == 1 and "no symbol named `fetch`" in err
    assert "src/retry.py › class Client › method fetch_all" in err
    assert world.note_text("notes/Retry.md") == before


def test_deleting_the_file_gives_artifact_missing(world: World) -> None:
    (world.repo / "src/retry.py").unlink()
    assert dirty(check(world)) == {
        "note:notes/Retry.md": "artifact missing: demo:src/retry.py",
        "note:notes/Backoff.md": "artifact missing: demo:src/retry.py",
    }


def test_markdown_heading_and_table_row_anchors(world: World) -> None:
    anchor(world, "notes/Setup.md", "README.md#Setup")
    anchor(world, "notes/Setup.md", "README.md#timeout")
    code, _, err = kg("anchor", "notes/Setup.md", "--to", "README.md#Not a heading", "--project", "demo", "--vault", str(world.vault))
    assert code == 1 and "no heading or table row `Not a heading`" in err
    world.edit("README.md", "<!-- maintainers: keep this short -->", "<!-- reviewed -->")
    world.edit("README.md", "| retries | 3 |", "| retries | 4 |")
    assert check(world)["dirty"] == []
    world.edit("README.md", "| timeout | 30 |", "| timeout | 60 |")
    assert dirty(check(world)) == {"note:notes/Setup.md": "hash changed: README.md#timeout"}
    world.edit("README.md", "| timeout | 60 |", "| timeout | 30 |")
    world.edit("README.md", "Install it, then run it.", "Install it, configure it, then run it.")
    assert dirty(check(world)) == {"note:notes/Setup.md": "hash changed: README.md#Setup"}


def test_propagation_through_two_levels_stops_at_superseded(world: World) -> None:
    world.write_note("notes/Level1.md", note("Rests on Retry."))
    world.write_note("notes/Level2.md", note("Rests on Level1."))
    world.write_note("notes/Old.md", note("Rests on Retry, superseded."))
    world.write_note("notes/BehindOld.md", note("Rests on Old."))
    world.write_note("notes/New.md", note("Replaces Old."))
    for child, parent in (("Level1", "Retry"), ("Level2", "Level1"), ("Old", "Retry"), ("BehindOld", "Old")):
        code, _, err = kg("anchor", child, "--to", f"[[{parent}]]", "--vault", str(world.vault))
        assert code == 0, err
    code, _, err = kg("supersede", "Old", "New", "--vault", str(world.vault))
    assert code == 0, err
    world.edit("src/retry.py", "range(3)", "range(4)")
    assert dirty(check(world)) == {
        "note:notes/Retry.md": f"hash changed: {FETCH}",
        "note:notes/Level1.md": "propagated from note:notes/Retry.md",
        "note:notes/Level2.md": "propagated from note:notes/Level1.md",
    }


def test_check_cli_sections_summary_and_exit_codes(world: World) -> None:
    code, out, err = kg("check", "--vault", str(world.vault))
    assert code == 0 and out.splitlines() == ["dirty (0):", "issues (0):", "3 notes · 2 anchors · 0 dirty · 0 issues"]
    world.edit("src/retry.py", "range(3)", "range(5)")
    code, out, err = kg("check", "--vault", str(world.vault))
    assert code == 0
    assert out.splitlines() == ["dirty (1):", f"  notes/Retry.md: hash changed: {FETCH}", "issues (0):", "3 notes · 2 anchors · 1 dirty · 0 issues"]
    code, out, _ = kg("check", "--strict", "--vault", str(world.vault))
    assert code == 1 and out.splitlines()[-1] == "3 notes · 2 anchors · 1 dirty · 0 issues"
    code, out, _ = kg("check", "--json", "--vault", str(world.vault))
    import json

    data = json.loads(out)
    assert data["dirty"][0]["id"] == "note:notes/Retry.md" and data["dirty"][0]["project"] == "demo"


def test_check_reads_only_anchored_files_each_once_and_nothing_when_unchanged(world: World) -> None:
    (world.repo / "src" / "unrelated.py").write_text("def unrelated():\n    return 1\n")
    settle(world)
    first = check(world)
    assert first["read"] == {"notes": 3, "files": 1}
    assert check(world)["read"] == {"notes": 0, "files": 0}
    world.edit("src/retry.py", "range(3)", "range(5)")
    assert check(world)["read"] == {"notes": 0, "files": 1}
    assert check(world)["read"] == {"notes": 0, "files": 0}


def test_hook_reports_newly_dirty_notes_once(world: World) -> None:
    """The PostToolUse path: update the code scope for the edited file, then ask which notes went dirty."""
    from vault_kg.anchors.check import dirty_notes_for_paths
    from vault_kg.update.engine import run
    from vault_kg.core.scopes import project_scope, vault_scope

    check(world)  # the last state the user saw: everything clean
    run(project_scope("demo"))
    world.edit("src/retry.py", "range(3)", "range(5)")
    run(project_scope("demo"), paths=[world.repo / "src/retry.py"])
    lines = dirty_notes_for_paths(vault_scope(world.vault), "demo", ["src/retry.py"])
    assert len(lines) == 1 and "notes/Retry.md" in lines[0] and FETCH in lines[0]
    assert dirty_notes_for_paths(vault_scope(world.vault), "demo", ["src/retry.py"]) == []
    world.edit("src/retry.py", "return 2 ** n", "return 3 ** n")
    lines = dirty_notes_for_paths(vault_scope(world.vault), "demo", ["src/retry.py"])
    assert len(lines) == 1 and "notes/Backoff.md" in lines[0]


def test_post_tool_use_hook_end_to_end(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from hooks.post_tool_use import handle

    monkeypatch.setenv("KG_VAULT", str(world.vault))
    code, _, err = kg("build", "--scope", "demo")
    assert code == 0, err
    check(world)
    world.edit("src/retry.py", "range(3)", "range(5)")
    out = handle({"tool_name": "Edit", "tool_input": {"file_path": str(world.repo / "src/retry.py")}, "cwd": str(world.repo), "hook_event_name": "PostToolUse"})
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "notes/Retry.md" in context and "Backoff" not in context


def test_scope_limits_check_to_the_named_projects(world: World, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert kg("project", "add", str(other), "--name", "other")[0] == 0
    world.edit("src/retry.py", "range(3)", "range(5)")
    code, out, _ = kg("check", "--scope", "demo", "--vault", str(world.vault))
    assert out.splitlines()[-1] == "3 notes · 2 anchors · 1 dirty · 0 issues"
    code, out, _ = kg("check", "--scope", "other", "--vault", str(world.vault))
    assert out.splitlines()[-1] == "3 notes · 0 anchors · 0 dirty · 0 issues"
    code, _, err = kg("check", "--scope", "nope", "--vault", str(world.vault))
    assert code == 1 and "unknown scope 'nope'" in err
