"""`kg affected --budget N` (and MCP `affected`): anchored notes first, then the closest dependants, within the budget."""

from __future__ import annotations

from pathlib import Path

from anchor_helpers import anchor, kg, make_world, note
from vault_kg import api
from vault_kg.query import verbs as q

TARGET = "src/retry.py::backoff"


def test_affected_fits_its_budget_with_anchored_notes_first_then_the_closest(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    callers = "".join(f"\n\ndef wait_{i}():\n    return backoff({i})\n\n\ndef outer_{i}():\n    return wait_{i}()\n" for i in range(12))
    with (world.repo / "src" / "retry.py").open("a", encoding="utf-8") as out:
        out.write(callers)  # callers of backoff (hop 1), each with a caller of its own (hop 2)
    for i in range(4):
        world.write_note(f"notes/Why {i}.md", note(f"Why backoff doubles, part {i}."))
    assert kg("build", "--scope", "demo")[0] == 0
    assert kg("build", "--vault", str(world.vault))[0] == 0
    for name in ["Retry", "Backoff", *(f"Why {i}" for i in range(4))]:
        anchor(world, name, TARGET)
    full = api.affected(TARGET, scope="demo", vault=world.vault, depth=2)
    assert len(full["notes"]) == 6 and {h["hop"] for h in full["affected"]} == {1, 2}
    cut_notes_seen = cut_hits_seen = False
    for budget in range(100, 700, 20):
        answer = api.affected(TARGET, scope="demo", vault=world.vault, depth=2, budget=budget)
        text = q.format_affected(answer) + "\n"
        assert q.estimate_tokens(text) <= budget, f"{budget}:\n{text}"
        hops = [h["hop"] for h in answer["affected"]]
        assert hops == sorted(hops), "closest first"
        assert not answer["affected"] or len(answer["notes"]) == 6, "a dependant shown before every anchored note"
        cut = answer.get("cut", 0) + answer.get("cut_notes", 0)
        assert ("[truncated:" in text) == bool(cut)
        assert len(answer["notes"]) + answer.get("cut_notes", 0) == 6 and len(answer["affected"]) + answer.get("cut", 0) == len(full["affected"])
        cut_notes_seen |= answer.get("cut_notes", 0) > 0
        cut_hits_seen |= 0 < len(answer["affected"]) < len(full["affected"])
    assert cut_notes_seen and cut_hits_seen, "the budgets never cut notes, or never cut only dependants: the test proves nothing"
