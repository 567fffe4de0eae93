"""The quality scorer reproduces hand-computed numbers, and the gold set is well-formed."""

from __future__ import annotations

import json
from pathlib import Path

from extract.llm import ENTITY_TYPES, RELATIONS, prose_lines
from extract.entities import canonical_name, find_mention, surface_forms
from extract.scoring import score

HERE = Path(__file__).parent


def test_scorer_reproduces_known_numbers() -> None:
    case = json.loads((HERE / "fixtures" / "scoring" / "known.json").read_text())
    totals = score((p["gold"], p["predicted"]) for p in case["pairs"])
    assert {metric: prf.as_dict() for metric, prf in totals.items()} == case["expected"]


def test_gold_set_is_large_and_consistent() -> None:
    notes = sorted((HERE / "gold").glob("*.md"))
    assert len(notes) >= 15
    long_notes = 0
    for md in notes:
        gold = json.loads(md.with_suffix(".json").read_text())
        text = md.read_text()
        assert text.startswith("---\n") and "summary:" in text and "tags:" in text, md.name
        raw, _ = prose_lines(text)
        long_notes += len(text) > 1500
        names = {canonical_name(e["name"]) for e in gold["entities"]}
        for entity in gold["entities"]:
            assert entity["type"] in ENTITY_TYPES, (md.name, entity)
            forms = surface_forms(entity["name"], entity.get("aliases", []))
            assert any(find_mention(forms, line) is not None for line in raw.values()), (md.name, entity["name"])
        for rel in gold["relations"]:
            assert rel["relation"] in RELATIONS, (md.name, rel)
            assert {canonical_name(rel["source"]), canonical_name(rel["target"])} <= names, (md.name, rel)
    assert long_notes >= 1
