"""``bench/extraction_quality.py --rescore`` re-scores stored answers without a model: today's
scoring and today's verification, per gold set, restricted with ``--notes``. Expected numbers are
counted by hand from the tiny gold set below."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

NOTE_A = "---\nsummary: a tool\ntags: [tool/a]\n---\n# Tool A\n\nTool A uses Postgres for storage.\nTool A does not use Redis.\n"
GOLD_A = {
    "entities": [{"name": "Tool A", "type": "tool"}, {"name": "Postgres", "type": "tool"}, {"name": "Redis", "type": "tool"}],
    "relations": [{"source": "Tool A", "relation": "uses", "target": "Postgres"}],
}
RAW_A = {
    "entities": [{"name": "Tool A", "type": "tool"}, {"name": "Postgres", "type": "tool"}, {"name": "Redis", "type": "tool"}, {"name": "Kafka", "type": "tool"}],
    "relations": [
        {"source": "Tool A", "relation": "uses", "target": "Postgres", "line": 7},
        {"source": "Tool A", "relation": "uses", "target": "Redis", "line": 8},
        {"source": "Tool A", "relation": "depends_on", "target": "Kafka", "line": 7},
    ],
}
NOTE_B = "---\nsummary: another tool\ntags: [tool/b]\n---\n# Tool B\n\nTool B integrates with Tool A.\n"
GOLD_B = {"entities": [{"name": "Tool B", "type": "tool"}, {"name": "Tool A", "type": "tool"}], "relations": [{"source": "Tool B", "relation": "integrates_with", "target": "Tool A"}]}
RAW_B = {"entities": [{"name": "Tool B", "type": "tool"}], "relations": []}


@pytest.fixture()
def bench():
    spec = importlib.util.spec_from_file_location("extraction_quality", ROOT / "bench" / "extraction_quality.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def stored(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold"
    gold.mkdir()
    for name, text, answer in (("Tool A", NOTE_A, GOLD_A), ("Tool B", NOTE_B, GOLD_B)):
        (gold / f"{name}.md").write_text(text)
        (gold / f"{name}.json").write_text(json.dumps(answer))
    notes = [
        {"note": "Tool A.md", "status": "ok", "seconds": 12.5, "calls": 1, "raw": RAW_A, "verified": {}},
        {"note": "Tool B.md", "status": "ok", "seconds": 7.5, "calls": 3, "raw": RAW_B, "verified": {}},
        {"note": "Elsewhere.md", "status": "ok", "raw": RAW_B},
    ]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"model": "m:1b", "parameter_size": "1B", "digest": "abc", "notes_done": 3, "notes": notes}))
    return path, gold


def _counts(prf) -> tuple[int, int, int]:
    return prf.tp, prf.fp, prf.fn


def test_rescore_recounts_raw_and_reverifies(bench, stored) -> None:
    path, gold = stored
    _, results, stray = bench.rescore(path, [gold])
    assert stray == ["Elsewhere.md"]
    (result,) = results
    raw = result["scores"]["model raw (validated)"]
    # entities: A {tool a, postgres, redis} vs {tool a, postgres, redis, kafka}; B {tool b, tool a} vs {tool b}
    assert _counts(raw["entities"]) == (4, 1, 1)
    # relations: A's one gold edge found among 3 proposals; B's one gold edge missed
    assert _counts(raw["relations_typed"]) == (1, 2, 1)
    verified = result["scores"]["model verified (EXTRACTED+INFERRED)"]
    # re-verified against the note's text: Kafka is on no line, Redis is negated -> neither kept
    assert _counts(verified["relations_typed"]) == (1, 0, 1)
    assert _counts(verified["entities"]) == (5, 0, 0), "Tool A, which the model left out of B, is named by B's form (extract.stated_entities)"
    assert _counts(result["scores"]["model EXTRACTED only"]["relations_typed"]) == (1, 0, 1)
    by_type = bench._by_relation([(n["gold"], n["raw"]) for n in result["notes"]])
    assert _counts(by_type["uses"]) == (1, 1, 0)
    assert _counts(by_type["integrates_with"]) == (0, 0, 1)


def test_notes_subset_and_printed_report(bench, stored, capsys, monkeypatch) -> None:
    path, gold = stored
    _, (result,), _ = bench.rescore(path, [gold], ["Tool A.md"])
    assert [n["note"] for n in result["notes"]] == ["Tool A.md"]
    assert _counts(result["scores"]["model raw (validated)"]["relations_typed"]) == (1, 2, 0)
    assert _counts(result["scores"]["model verified (EXTRACTED+INFERRED)"]["relations_typed"]) == (1, 0, 0)
    with pytest.raises(SystemExit, match="Nope.md"):
        bench.rescore(path, [gold], ["Nope.md"])
    monkeypatch.setenv("KG_BENCH_RECORD", "0")
    assert bench.main(["--rescore", str(path), "--gold", str(gold), "--notes", "Tool A.md,Tool B.md"]) == 0
    out = capsys.readouterr().out
    assert "RE-SCORE of stored answers in run.json: model m:1b" in out
    assert "restricted to 2 notes" in out
    assert "seconds per note 10.0; model calls per note 2.00 (over 2 notes)" in out
    # raw typed relations over both notes: P 1/3, R 1/2, F1 0.40
    assert "model raw (validated)" in out and "0.33   0.50   0.40" in out


def test_no_model_scores_the_relations_the_structure_states(bench, tmp_path: Path, capsys, monkeypatch) -> None:
    gold = tmp_path / "gold"
    gold.mkdir()
    note = "---\ntags: [type/service]\n---\n# Tool C\n\n## Dependencies\n\n- **Postgres** — storage.\n- Redis — no longer used.\n"
    (gold / "Tool C.md").write_text(note)
    (gold / "Tool C.json").write_text(
        json.dumps(
            {
                "entities": [{"name": "Tool C", "type": "service"}, {"name": "Postgres", "type": "tool"}, {"name": "Kafka", "type": "tool"}],
                "relations": [{"source": "Tool C", "relation": "depends_on", "target": "Postgres"}, {"source": "Tool C", "relation": "uses", "target": "Kafka"}],
            }
        )
    )
    (result,) = [r for r in [bench.score_set(gold, {"Tool C.md": {"note": "Tool C.md", "status": "ok", "raw": None}})] if r]
    stated = result["scores"]["stated by structure (no model)"]
    assert _counts(stated["relations_typed"]) == (1, 0, 1), "Postgres stated, Redis negated, Kafka not stated"
    assert _counts(stated["entities"]) == (2, 0, 1)
    monkeypatch.setenv("KG_BENCH_RECORD", "0")
    assert bench.main(["--no-model", "--gold", str(gold)]) == 0
    out = capsys.readouterr().out
    assert "NO MODEL" in out and "stated by structure (no model)" in out
    # typed relations: P 1.00, R 0.50, F1 0.67
    assert "1.00   0.50   0.67" in out


def test_live_run_records_output_tokens_and_server_threads(bench, stored, tmp_path: Path, capsys, monkeypatch) -> None:
    import sys

    from ollama_fake import FakeOllama

    _, gold = stored
    pages = tmp_path / "docs" / "benchmarks"
    monkeypatch.setattr(sys.modules["figures"], "PAGES", pages)
    out_json = tmp_path / "live.json"
    with FakeOllama(echo=True) as fake:
        code = bench.main(["--host", fake.url, "--model", "qwen2.5:7b-instruct", "--gold", str(gold), "--server-threads", "2", "--label", "trial", "--json", str(out_json)])
        fake.settle()
        served = [e["eval_tokens"] for e in fake.log if e["path"] == "/api/chat"]
    assert code == 0
    doc = json.loads(out_json.read_text())
    assert doc["server_threads"] == 2
    assert [n["output_tokens"] for n in doc["notes"]] == served and all(served), "each note's output tokens are the server's eval_count"
    out = capsys.readouterr().out
    assert f"output tokens per note {sum(served) / len(served):.0f}" in out
    page = (pages / "extraction_quality_live_trial.md").read_text()
    assert "server threads: 2" in page and "out tok" in page
