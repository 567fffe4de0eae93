"""The incremental update path: kept edge groups and the patched edge table.

Every incremental route must give the bytes a from-scratch build gives (the property tests in
test_prop_incremental.py walk random edit sequences); these tests pin the pieces that make an
update cheap, so a regression that silently falls back to re-deriving everything is caught.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from vault_kg.update import centrality as rank
from vault_kg.update.engine import run
from vault_kg.core.scopes import vault_scope

from scratch_build import artifacts, scratch


def _vault(root: Path, notes: int = 60, seed: int = 3) -> Path:
    rng = random.Random(seed)
    root.mkdir(parents=True)
    for i in range(notes):
        links = " ".join(f"[[Note {rng.randrange(notes + 5)}]]" for _ in range(3))
        heading = f"[[Note {rng.randrange(notes)}#Part {rng.randrange(3)}]]"
        tags = f"tool/t{rng.randrange(4)}/x{rng.randrange(3)}"
        body = "\n".join(f"## Part {k}\ntext {k}" for k in range(3))
        (root / f"Note {i}.md").write_text(f"---\nsummary: note {i}\ntags: [{tags}, scope/global]\n---\n{links} {heading}\n{body}\n")
    return root


@pytest.fixture(autouse=True)
def _no_html(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_HTML", "off")


def test_one_note_edit_rederives_only_the_owners_it_reaches(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    run(vault_scope(vault))
    note = vault / "Note 7.md"
    note.write_text(note.read_text() + "\nnow also [[Note 8]] and [[Nowhere Yet]]\n")
    result = run(vault_scope(vault), paths=[note])
    assert result.extra["rederived_owners"] != "all"
    assert 1 <= result.extra["rederived_owners"] <= 5
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_new_target_and_deleted_note_rederive_their_referrers(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    run(vault_scope(vault))
    (vault / "Note 61.md").write_text("---\nsummary: appears\n---\nhello\n")
    run(vault_scope(vault), paths=[vault / "Note 61.md"])
    assert artifacts(vault) == scratch(vault, tmp_path)
    (vault / "Note 3.md").unlink()
    result = run(vault_scope(vault), paths=[vault / "Note 3.md"])
    assert result.removed == ["Note 3.md"]
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_patched_table_equals_a_full_table(tmp_path: Path) -> None:
    nodes = {f"n{i}": {} for i in range(30)}
    rng = random.Random(1)

    def group(owner: str) -> list[dict]:
        return [
            {"source": f"n{rng.randrange(30)}", "target": f"n{rng.randrange(30)}", "relation": rng.choice(["links_to", "tagged", "calls"]), "score": rng.random(), "owner": owner}
            for _ in range(rng.randrange(1, 5))
        ]

    groups = {f"o{i}": group(f"o{i}") for i in range(10)}
    old = rank.edge_table(nodes, dict(sorted(groups.items())))
    nodes.pop("n29")
    groups = {o: [e for e in g if "n29" not in (e["source"], e["target"])] for o, g in groups.items()}
    groups["o3"] = group("o3")
    groups["o10"] = group("o10")
    del groups["o5"]
    fresh = {o: groups[o] for o in ("o3", "o10")} | {o: g for o, g in groups.items() if any("n29" in (e["source"], e["target"]) for e in g)}
    touched = {o for o in groups if o not in fresh and len(old.owners) and o in old.owners}
    gone_rows = rank.owners_of_rows_to(old, {"n29"})
    fresh.update({o: groups[o] for o in gone_rows if o in groups})
    owners = sorted(o for o, g in groups.items() if g)
    patched = rank.patched(old, nodes, owners, fresh | {"o5": []})
    full = rank.edge_table(nodes, {o: groups[o] for o in owners})
    assert touched
    assert patched is not None
    for name in ("src", "dst", "weight", "owner"):
        assert np.array_equal(getattr(patched, name), getattr(full, name)), name
    assert [patched.relations[r] for r in patched.relation] == [full.relations[r] for r in full.relation]
    assert patched.relation_counts() == full.relation_counts()
    assert rank.EdgeTable.from_bytes(patched.to_bytes()).relation_counts() == full.relation_counts()


def test_spliced_graph_json_is_the_canonical_encoding(tmp_path: Path) -> None:
    """graph.json is written from pre-encoded edge groups; it must equal a plain canonical dump."""
    from vault_kg.core.store import dumps_json, load_json

    vault = _vault(tmp_path / "v", notes=25)
    run(vault_scope(vault))
    note = vault / "Note 2.md"
    note.write_text(note.read_text() + "\n[[Note 4]] [[Note 4]]\n")
    run(vault_scope(vault), paths=[note])
    path = vault / "kg-out" / "graph.json"
    assert path.read_bytes() == dumps_json(load_json(path), indent=False)


def test_a_prose_edit_reuses_ranks_and_communities(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    run(vault_scope(vault))
    note = vault / "Note 9.md"
    note.write_text(note.read_text() + "\nJust more prose, no links, no tags.\n")
    result = run(vault_scope(vault), paths=[note])
    assert result.extra["ranking"] == "reused"
    assert artifacts(vault) == scratch(vault, tmp_path)
    note.write_text(note.read_text() + "\nand now a link to [[Note 10]]\n")
    result = run(vault_scope(vault), paths=[note])
    assert result.extra["ranking"] == "computed"
    assert artifacts(vault) == scratch(vault, tmp_path)
