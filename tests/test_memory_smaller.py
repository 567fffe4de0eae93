"""The smaller items of issue 16: `kg affected` names anchored vault notes and takes the
`PATH::Client.fetch` form of `kg anchor`; Obsidian's excluded files are not read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anchor_helpers import World, anchor, kg, make_world, settle


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setenv("KG_HTML", "off")
    w = make_world(tmp_path)
    anchor(w, "notes/Retry.md", "src/retry.py::Client.fetch")
    anchor(w, "notes/Backoff.md", "src/retry.py::backoff")
    settle(w)
    for args in (["build", "--vault", str(w.vault)], ["build", "--scope", "demo"]):
        code, _, err = kg(*args)
        assert code == 0, err
    return w


def affected(world: World, symbol: str) -> dict:
    code, out, err = kg("affected", symbol, "--scope", "demo", "--vault", str(world.vault), "--json")
    assert code == 0, err
    return json.loads(out)


def test_affected_takes_the_anchor_form_and_lists_anchored_notes(world: World) -> None:
    locator = "src/retry.py › class Client › method fetch"
    for name in ("src/retry.py::Client.fetch", "Client.fetch", locator):
        answer = affected(world, name)
        assert answer["id"] == locator, name
        assert [(n["id"], n["via"]) for n in answer["notes"]] == [("note:notes/Retry.md", locator)]
    code, out, _ = kg("affected", "src/retry.py::Client.fetch", "--scope", "demo", "--vault", str(world.vault))
    assert "1 vault note(s) anchored to it or its dependants:\n  Retry (notes/Retry.md) —anchored_to→ src/retry.py › class Client › method fetch" in out


def test_notes_anchored_to_a_dependant_are_affected_too(world: World) -> None:
    answer = affected(world, "src/retry.py::Client.get")  # fetch calls self.get
    assert "src/retry.py › class Client › method fetch" in {h["id"] for h in answer["affected"]}
    assert [n["id"] for n in answer["notes"]] == ["note:notes/Retry.md"]
    assert affected(world, "backoff")["notes"][0]["id"] == "note:notes/Backoff.md"


def test_unknown_and_ambiguous_dotted_names_get_one_line(world: World) -> None:
    code, _, err = kg("affected", "Client.nope", "--scope", "demo")
    assert code != 0 and "no node named 'Client.nope' in scope 'demo'" in err


def test_obsidian_excluded_files_are_not_read(world: World) -> None:
    world.write_note("archive/Old Retry.md", "---\nsummary: the old retry loop\n---\nzanzibar\n")
    world.write_note("drafts/Sketch.excalidraw.md", "---\nsummary: a drawing\n---\nzanzibar\n")
    world.write_note("notes/Kept.md", "---\nsummary: kept\n---\nzanzibar\n")
    (world.vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["archive/", "/\\.excalidraw\\.md$/", "/[unclosed/"]}))
    code, _, err = kg("update", "--vault", str(world.vault))
    assert code == 0, err
    code, out, _ = kg("query", "zanzibar", "--vault", str(world.vault), "--json")
    assert {h["source"] for h in json.loads(out)["hits"]} == {"notes/Kept.md"}
    code, _, _ = kg("update", str(world.vault / "archive" / "Old Retry.md"), "--vault", str(world.vault))  # the hook's route
    code, out, _ = kg("query", "zanzibar", "--vault", str(world.vault), "--json")
    assert {h["source"] for h in json.loads(out)["hits"]} == {"notes/Kept.md"}
    (world.vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": []}))
    code, _, err = kg("update", "--vault", str(world.vault))
    code, out, _ = kg("query", "zanzibar", "--vault", str(world.vault), "--json")
    assert {h["source"] for h in json.loads(out)["hits"]} == {"notes/Kept.md", "archive/Old Retry.md", "drafts/Sketch.excalidraw.md"}


def test_the_front_door_reads_the_notes_of_the_vault_it_is_given(world: World) -> None:
    """`api.affected(..., vault=V)` lists V's anchored notes, as `kg affected --vault V` does (it read the configured vault's)."""
    from vault_kg import api

    answer = api.affected("src/retry.py::Client.fetch", scope="demo", vault=world.vault)
    assert [n["id"] for n in answer["notes"]] == ["note:notes/Retry.md"]
