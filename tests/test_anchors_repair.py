"""Writing and repairing anchors: refusals with candidates, accept, supersede, retire, as-of, history."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml
from anchor_helpers import World, anchor, check, dirty, kg, make_world, note, settle

FETCH = "src/retry.py › class Client › method fetch"


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = make_world(tmp_path)
    anchor(w, "notes/Retry.md", "src/retry.py::Client.fetch")
    settle(w)
    return w


def frontmatter(world: World, rel: str) -> dict:
    text = world.note_text(rel)
    return yaml.safe_load(text.split("---\n")[1])


def history(world: World, rel: str) -> list[dict]:
    """The note's entries in the vault's anchor history (`.kg/anchor-history.jsonl`), oldest first."""
    from vault_kg.anchors.history import entries

    return [e for e in entries(world.vault) if e["note"] == rel]


def test_anchor_writes_project_locator_hash_and_history(world: World) -> None:
    from extract.code import symbols_of

    fm = frontmatter(world, "notes/Retry.md")
    expected = symbols_of("src/retry.py", (world.repo / "src/retry.py").read_bytes())[FETCH]["hash"]
    assert fm["anchors"] == [{"project": "demo", "locator": FETCH, "hash": expected}]
    assert "history" not in fm, "the history lives beside the notes, not in their properties"
    assert [h["action"] for h in history(world, "notes/Retry.md")] == ["anchor"] and history(world, "notes/Retry.md")[0]["hash"] == expected
    assert fm["summary"] == "How fetch retries." and fm["tags"] == ["scope/global", "topic/retry"]
    assert world.note_text("notes/Retry.md").endswith("---\n# Retry\n\nFetch retries three times.\n")


def test_anchor_by_path_from_inside_the_repo_finds_the_project(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(world.repo / "src")
    code, out, err = kg("anchor", "notes/Backoff.md", "--to", "retry.py::backoff", "--vault", str(world.vault))
    assert code == 0, err
    assert frontmatter(world, "notes/Backoff.md")["anchors"][0]["locator"] == "src/retry.py › function backoff"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("src/retry.py::fetchh", "no symbol `fetchh`; candidates:"),
        ("src/retry.py::Nope.fetch", "no symbol `Nope.fetch`; candidates: src/retry.py › class Client › method fetch"),
        ("src/missing.py::fetch", "no such file in project 'demo'"),
        ("src/retry.rb::fetch", "not a supported language"),
        ("src/retry.py", "give PATH::SYMBOL"),
    ],
)
def test_anchor_refuses_unknown_targets_with_one_line(world: World, target: str, message: str) -> None:
    before = world.note_text("notes/Backoff.md")
    code, out, err = kg("anchor", "notes/Backoff.md", "--to", target, "--project", "demo", "--vault", str(world.vault))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and message in err, err
    assert world.note_text("notes/Backoff.md") == before


def test_anchor_refuses_ambiguous_symbols_listing_them(world: World) -> None:
    world.edit("src/retry.py", "class Other:\n    def close(self):", "class Other:\n    def fetch(self, url):\n        return url\n\n    def close(self):")
    code, _, err = kg("anchor", "notes/Backoff.md", "--to", "src/retry.py::fetch", "--project", "demo", "--vault", str(world.vault))
    assert code == 1 and "ambiguous" in err
    assert "class Client › method fetch" in err and "class Other › method fetch" in err
    code, _, err = kg("anchor", "notes/Backoff.md", "--to", "src/retry.py::Other.fetch", "--project", "demo", "--vault", str(world.vault))
    assert code == 0, err


def test_anchor_refuses_unregistered_project(world: World) -> None:
    code, _, err = kg("anchor", "notes/Backoff.md", "--to", "src/retry.py::backoff", "--project", "nope", "--vault", str(world.vault))
    assert code == 1 and "project 'nope' is not registered" in err


def test_accept_rewrites_the_hash_keeps_the_body_and_appends_history(world: World) -> None:
    world.edit("src/retry.py", "range(3)", "range(5)")
    assert dirty(check(world)) == {"note:notes/Retry.md": f"hash changed: {FETCH}"}
    body_before = world.note_text("notes/Retry.md").split("---\n", 2)[2]
    old_hash = frontmatter(world, "notes/Retry.md")["anchors"][0]["hash"]
    code, out, err = kg("accept", "Retry", "--vault", str(world.vault))
    assert code == 0, err
    fm = frontmatter(world, "notes/Retry.md")
    assert fm["anchors"][0]["hash"] != old_hash
    kept = history(world, "notes/Retry.md")
    assert [h["action"] for h in kept] == ["anchor", "accept"] and "history" not in fm
    assert kept[1]["previous"] == old_hash and kept[0]["hash"] == old_hash
    assert world.note_text("notes/Retry.md").split("---\n", 2)[2] == body_before
    assert check(world)["dirty"] == []


def test_accept_refuses_a_missing_symbol(world: World) -> None:
    world.edit("src/retry.py", "def fetch(", "def fetch_all(")
    before = world.note_text("notes/Retry.md")
    code, _, err = kg("accept", "Retry", "--vault", str(world.vault))
    assert code == 1 and "symbol not found" in err and "kg reanchor" in err
    assert world.note_text("notes/Retry.md") == before


def test_supersede_keeps_both_and_as_of_answers_before_and_after(world: World) -> None:
    from vault_kg.anchors.dates import valid_at

    world.write_note("notes/Retry v2.md", note("Retries, take two."))
    code, out, err = kg("supersede", "Retry", "Retry v2", "--on", "2024-06-01", "--vault", str(world.vault))
    assert code == 0, err
    old, new = frontmatter(world, "notes/Retry.md"), frontmatter(world, "notes/Retry v2.md")
    assert old["superseded_by"] == "[[notes/Retry v2]]" and old["valid_to"] == dt.date(2024, 6, 1)
    assert new["supersedes"] == ["[[notes/Retry]]"] and new["valid_from"] == dt.date(2024, 6, 1)
    assert history(world, "notes/Retry.md")[-1]["action"] == "superseded" and history(world, "notes/Retry v2.md")[-1]["action"] == "supersede"
    assert valid_at(old, "2024-05-31") and not valid_at(old, "2024-06-01")
    assert not valid_at(new, "2024-05-31") and valid_at(new, "2024-06-01")

    world.edit("src/retry.py", "range(3)", "range(5)")
    assert check(world)["dirty"] == []  # the superseded note is history, not current knowledge
    before = check(world, "--as-of", "2024-05-01")
    assert dirty(before) == {"note:notes/Retry.md": f"hash changed: {FETCH}"}
    assert before["as_of"] == "2024-05-01"
    assert check(world, "--as-of", "2024-07-01")["dirty"] == []
    code, out, _ = kg("check", "--as-of", "2024-05-01", "--vault", str(world.vault))
    assert out.splitlines()[-1] == "4 notes · 1 anchors · 1 dirty · 0 issues (as of 2024-05-01)"


def test_supersede_allows_fan_in_refuses_fan_out_and_cycles(world: World) -> None:
    for name in ("A", "B", "C"):
        world.write_note(f"notes/{name}.md", note(f"Note {name}."))
    vault = str(world.vault)
    assert kg("supersede", "A", "C", "--vault", vault)[0] == 0
    assert kg("supersede", "B", "C", "--vault", vault)[0] == 0
    assert frontmatter(world, "notes/C.md")["supersedes"] == ["[[notes/A]]", "[[notes/B]]"]
    snapshot = {p.name: p.read_text() for p in (world.vault / "notes").iterdir()}
    code, _, err = kg("supersede", "A", "Retry", "--vault", vault)
    assert code == 1 and "already superseded by [[notes/C]]" in err
    code, _, err = kg("supersede", "C", "A", "--vault", vault)
    assert code == 1 and "cycle" in err and err.count("\n") == 1
    code, _, err = kg("supersede", "C", "C", "--vault", vault)
    assert code == 1 and "cannot supersede itself" in err
    assert {p.name: p.read_text() for p in (world.vault / "notes").iterdir()} == snapshot


def test_retire_closes_the_window(world: World) -> None:
    code, out, err = kg("retire", "Retry", "--reason", "fetch was removed", "--on", "2024-03-01", "--vault", str(world.vault))
    assert code == 0, err
    fm = frontmatter(world, "notes/Retry.md")
    assert fm["retired"] == "fetch was removed" and fm["valid_to"] == dt.date(2024, 3, 1)
    assert [h["action"] for h in history(world, "notes/Retry.md")] == ["anchor", "retire"]
    world.edit("src/retry.py", "range(3)", "range(5)")
    assert check(world)["dirty"] == []
    assert dirty(check(world, "--as-of", "2024-02-01")) == {"note:notes/Retry.md": f"hash changed: {FETCH}"}
    code, _, err = kg("retire", "Retry", "--reason", "again", "--vault", str(world.vault))
    assert code == 1 and "already retired" in err


def test_bad_anchors_are_reported_one_line_each_and_nothing_rewritten(world: World) -> None:
    fetch_hash = frontmatter(world, "notes/Retry.md")["anchors"][0]["hash"]
    bad = {
        "notes/NoHash.md": ("anchors:\n- project: demo\n  locator: src/retry.py › function backoff\n", "missing `hash`"),
        "notes/Unregistered.md": (f"anchors:\n- project: elsewhere\n  locator: src/retry.py › function backoff\n  hash: {fetch_hash}\n", "project 'elsewhere' is not registered"),
        "notes/Ruby.md": (f"anchors:\n- project: demo\n  locator: lib/x.rb › method run\n  hash: {fetch_hash}\n", "not in a supported language"),
        "notes/Escape.md": (f"anchors:\n- project: demo\n  locator: ../secret.py › function x\n  hash: {fetch_hash}\n", "leaves the project folder"),
        "notes/NotAList.md": ("anchors: src/retry.py\n", "must be a list"),
        "notes/ShortHash.md": ("anchors:\n- project: demo\n  locator: src/retry.py › function backoff\n  hash: abc123\n", "not a SHA-256 hex digest"),
        "notes/Broken.md": ("anchors: [unclosed\n", "unreadable"),
    }
    for rel, (extra, _) in bad.items():
        world.write_note(rel, note("A bad anchor.", extra=extra))
    text = world.note_text("notes/Retry.md").replace(fetch_hash, "f" * 64, 1)
    (world.vault / "notes/Retry.md").write_text(text)
    settle(world)
    snapshot = {p: p.read_bytes() for p in (world.vault / "notes").iterdir()}
    report = check(world, "--strict")
    messages = {i["source"]: i["message"] for i in report["issues"]}
    for rel, (_, expected) in bad.items():
        assert expected in messages[rel], (rel, messages.get(rel))
        assert messages[rel].startswith(rel) and "\n" not in messages[rel]
    assert "edited by hand" in messages["notes/Retry.md"]
    assert len(report["issues"]) == len(bad) + 1 and report["ok"] is False
    code, out, err = kg("check", "--vault", str(world.vault))
    assert code == 0 and f"issues ({len(bad) + 1}):" in out
    code, _, err = kg("accept", "notes/Unregistered.md", "--vault", str(world.vault))
    assert code == 1 and "not registered" in err and "nothing written" in err
    code, _, err = kg("reanchor", "notes/Ruby.md", "--vault", str(world.vault))
    assert code == 1 and "not a supported language" in err and "nothing written" in err
    assert {p: p.read_bytes() for p in (world.vault / "notes").iterdir()} == snapshot
    code, _, err = kg("accept", "notes/Retry.md", "--vault", str(world.vault))
    assert code == 0, err
    assert "notes/Retry.md" not in {i["source"] for i in check(world)["issues"]}


def test_as_of_rejects_a_non_date(world: World) -> None:
    code, _, err = kg("check", "--as-of", "last tuesday", "--vault", str(world.vault))
    assert code == 1 and "not a date" in err


def test_query_and_explain_as_of_serve_what_was_valid_then(world: World) -> None:
    import json

    world.write_note("notes/Retry v2.md", note("Retries, take two."))
    assert kg("supersede", "Retry", "Retry v2", "--on", "2024-06-01", "--vault", str(world.vault))[0] == 0
    assert kg("update", "--vault", str(world.vault))[0] == 0

    def hits(*extra: str) -> set[str]:
        code, out, err = kg("query", "retries", "--json", "--budget", "5000", "--vault", str(world.vault), *extra)
        assert code == 0, err
        return {h["id"] for h in json.loads(out)["hits"]}

    live = hits()
    assert "note:notes/Retry v2.md" in live and "note:notes/Retry.md" not in live
    then = hits("--as-of", "2024-05-01")
    assert "note:notes/Retry.md" in then and "note:notes/Retry v2.md" not in then
    code, out, err = kg("explain", "Retry", "--as-of", "2024-05-01", "--vault", str(world.vault))
    assert code == 0 and "notes/Retry.md" in out
    code, _, err = kg("explain", "Retry v2", "--as-of", "2024-05-01", "--vault", str(world.vault))
    assert code == 1 and "not valid on 2024-05-01" in err
