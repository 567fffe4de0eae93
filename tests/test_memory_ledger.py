"""`kg ledger`: the four quadrants on a small vault with anchored code, from a real recall log
written by the faces that surface notes (explain, query), and the log's size cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anchor_helpers import World, anchor, kg, make_world, note, settle
from vault_kg.memory import recall_log


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setenv("KG_HTML", "off")
    w = make_world(tmp_path)
    w.write_note("notes/Get.md", note("get returns url startswith http", "# Get\n\nGet returns whether the url startswith http."))
    w.write_note("notes/Close.md", note("close returns none", "# Close\n\nClose returns None."))
    anchor(w, "notes/Retry.md", "src/retry.py::Client.fetch")  # says more: "retry", "three"
    anchor(w, "notes/Backoff.md", "src/retry.py::backoff")  # says more: "exponential"
    anchor(w, "notes/Get.md", "src/retry.py::Client.get")  # 5 of 6 words in the code
    anchor(w, "notes/Close.md", "src/retry.py::Other.close")  # all its words in the code
    settle(w)
    code, _, err = kg("build", "--vault", str(w.vault))
    assert code == 0, err
    return w


def quadrants(world: World) -> dict[str, list[str]]:
    code, out, err = kg("ledger", "--vault", str(world.vault), "--json")
    assert code == 0, err
    report = json.loads(out)
    return {q: [i["source"] for i in items] for q, items in report["quadrants"].items()}


def test_the_four_quadrants(world: World) -> None:
    assert quadrants(world) == {"working": [], "redundant": [], "dormant": ["notes/Backoff.md", "notes/Retry.md", "notes/Setup.md"], "prunable": ["notes/Close.md", "notes/Get.md"]}
    for name in ("notes/Retry.md", "notes/Get.md"):
        code, _, err = kg("explain", name, "--vault", str(world.vault))
        assert code == 0, err
    recall_log.record(world.vault, "credit", ["note:notes/Setup.md"], session="s1")  # credit is not surfacing
    assert quadrants(world) == {"working": ["notes/Retry.md"], "redundant": ["notes/Get.md"], "dormant": ["notes/Backoff.md", "notes/Setup.md"], "prunable": ["notes/Close.md"]}
    code, out, _ = kg("ledger", "--vault", str(world.vault), "--json")
    report = json.loads(out)
    get = report["quadrants"]["redundant"][0]
    assert (get["surfaced"], get["vias"], get["coverage"], get["code_anchors"]) == (1, {"explain": 1}, 0.833, 1)
    setup = report["quadrants"]["dormant"][1]
    assert (setup["credited"], setup["coverage"], setup["why"]) == (1, None, "not anchored to code")
    code, text, _ = kg("ledger", "--vault", str(world.vault))
    assert text.splitlines()[0].startswith("recall ledger: 1 working · 1 redundant · 2 dormant · 1 prunable")
    assert "prunable: never surfaced and already in the code (safe to clear) (1)" in text


def test_a_query_surfaces_its_vault_hits(world: World) -> None:
    code, out, err = kg("query", "startswith http", "--vault", str(world.vault), "--json")
    assert code == 0, err
    shown = {h["id"] for h in json.loads(out)["hits"]}
    assert "note:notes/Get.md" in shown
    logged = [e for e in recall_log.entries(world.vault)]
    assert [(e["via"], set(e["notes"]), e["q"]) for e in logged] == [("query", shown, "startswith http")]
    assert "notes/Get.md" in quadrants(world)["redundant"]


def test_code_that_moved_on_no_longer_says_it(world: World) -> None:
    world.edit("src/retry.py", "return None", 'raise RuntimeError("closed twice")')
    assert "notes/Close.md" in quadrants(world)["dormant"]


def test_the_log_is_capped_and_both_generations_are_read(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_log, "MAX_BYTES", 300)
    for i in range(12):
        recall_log.record(world.vault, "push", [f"note:notes/N{i}.md"], query="x" * 40)
    log = recall_log.log_path(world.vault)
    assert log.stat().st_size <= 300 + 200 and log.with_name(log.name + ".1").exists()
    kept = [e["notes"][0] for e in recall_log.entries(world.vault)]
    assert kept[-1] == "note:notes/N11.md" and len(kept) < 12
    log.write_text(log.read_text() + '{"torn": \n', encoding="utf-8")
    assert [e["notes"][0] for e in recall_log.entries(world.vault)] == kept
    assert (world.vault / "kg-out" / ".gitignore").exists()
