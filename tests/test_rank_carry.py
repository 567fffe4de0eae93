"""Carried ranks and communities (`vault_kg.update.rank_state`) against full recomputes.

The hooks' background job settles a link edit by carrying the last ranks and communities forward
and splicing graph.json (`vault_kg.update.owed_settle`). These tests send random hook edits through
it on a small vault and compare every step with a fresh build: the graph itself (nodes, edges,
counts, dangling links, the query tables) must be identical, every shown rank within
`RANK_TOLERANCE` of the fresh one, the god nodes the fresh build's (but where the fresh ranks tie
within the stopping rule), every community member in a community the table lists; and once the
full recompute comes (`KG_RANK_FULL_EVERY`), everything byte for byte. The 1,000-edit figure (a
1,000-note vault) is `bench/rank_drift.py`'s page, docs/benchmarks/rank_drift.md.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import explore_budget
from robust_corpus import canonical
from scratch_build import isolated_env
from vault_kg.core.scopes import Scope, vault_scope
from vault_kg.jobs import clustering as cluster_job
from vault_kg.update import rank_state
from vault_kg.update.engine import run
from vault_kg.update.run_state import WHOLE_GRAPH, RunSettings

NOTES = 24
EDITS = ("link", "link", "unlink", "dangling", "prose", "tag")


def _vault(root: Path, seed: int) -> Path:
    """Notes linking to a few others each (a graph with ranks worth comparing), tags, a dangling link."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    for i in range(NOTES):
        links = " ".join(f"[[Note {j}]]" for j in sorted(rng.sample(range(NOTES), rng.randint(1, 4))) if j != i)
        (root / f"Note {i}.md").write_text(f"---\nsummary: note {i}\ntags: [topic/t{i % 4}]\n---\n{links} [[Missing {i % 3}]]\n\n## Part\ntext {i}\n")
    return root


def _edit(vault: Path, kind: str, rng: random.Random) -> Path:
    """One agent-like edit of an existing note; the path the hook is given."""
    note = vault / f"Note {rng.randrange(NOTES)}.md"
    text = note.read_text()
    if kind == "link":
        text += f"\nsee [[Note {rng.randrange(NOTES)}]]\n"
    elif kind == "unlink":
        links = [line for line in text.splitlines() if line.startswith("see [[")]
        text = text.replace(links[0] + "\n", "", 1) if links else text + "\nmore prose\n"
    elif kind == "dangling":
        text += f"\nsee [[Nowhere {rng.randrange(5)}]]\n"
    elif kind == "tag":
        text += f"\n#extra/t{rng.randrange(3)}\n"
    else:
        text += f"\nprose {rng.random()}\n"
    note.write_text(text)
    return note


def _hook_and_settle(scope: Scope, note: Path) -> None:
    """What the PostToolUse hook does, then what its background job does."""
    run(scope, paths=[note], settings=RunSettings(defer=WHOLE_GRAPH))
    assert cluster_job.settle(scope)


RANKED = ("rank", "community")


def _structure(state: dict[str, Any]) -> dict[str, Any]:
    """The canonical state without what carrying may change: ranks, communities, god nodes, stamps
    (the report from its dangling links on: its first sections list god nodes and communities)."""
    graph = orjson.loads(orjson.dumps(state["graph"]))
    for node in graph["nodes"]:
        for key in RANKED:
            node.pop(key, None)
    for key in ("communities", "god_nodes", "stamp"):
        graph["graph"].pop(key, None)
    brief = {k: v for k, v in state["brief"].items() if k != "god_nodes"}
    report = state["report"].split("\n## Dangling links", 1)
    nodes = [row[:5] + row[7:] for row in state["tables"]["nodes"]]  # without rank and community
    return {"graph": graph, "brief": brief, "report": [report[0].split("\n")[:3], report[1]], "nodes": nodes, "edges": state["tables"]["edges"], "docs": state["tables"]["docs"]}


def _compare(carried: dict[str, Any], fresh: dict[str, Any], step: str) -> None:
    assert _structure(carried) == _structure(fresh), f"after {step}: the graph itself differs from a fresh build's"
    ranks = {row[0]: row[5] for row in fresh["tables"]["nodes"]}
    shown = {row[0]: row[5] for row in carried["tables"]["nodes"]}
    worst = max(abs((shown[n] or 0.0) - (ranks[n] or 0.0)) for n in ranks)
    assert worst <= rank_state.RANK_TOLERANCE, f"after {step}: a shown rank is {worst} from a full recompute's"
    gods, fresh_gods = carried["graph"]["graph"]["god_nodes"], fresh["graph"]["graph"]["god_nodes"]
    assert len(gods) == len(fresh_gods)
    for mine, theirs in zip(gods, fresh_gods):  # the same, but where a full recompute's ranks tie
        assert mine == theirs or abs(ranks[mine] - ranks[theirs]) <= 2e-6, f"after {step}: god nodes {gods} against {fresh_gods}"
    table = {c["id"]: c["size"] for c in carried["graph"]["graph"]["communities"]}
    members: dict[int, int] = {}
    for node in carried["graph"]["nodes"]:
        if "community" in node:
            members[node["community"]] = members.get(node["community"], 0) + 1
    assert members == table, f"after {step}: the community table does not count the nodes' communities"


def _fresh(scope: Scope, out: Path) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    run(Scope(scope.name, scope.kind, scope.root, out), force=True)
    return canonical(out)


@settings(max_examples=explore_budget(4), deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**16), edits=st.lists(st.sampled_from(EDITS), min_size=4, max_size=6))
def test_carried_ranks_stay_within_the_tolerance_of_a_full_recompute(tmp_path_factory: pytest.TempPathFactory, monkeypatch_module: Any, seed: int, edits: list[str]) -> None:
    """Kills: a carried rank that drifts past the tolerance, a god node list taken from stale
    ranks, a splice that drops or doubles a node or group, counts or dangling links not updated."""
    base = tmp_path_factory.mktemp("carry")
    scope = vault_scope(_vault(base / "v", seed))
    run(scope)
    rng = random.Random(seed)
    carried = 0
    for step, kind in enumerate(edits):
        _hook_and_settle(scope, _edit(scope.root, kind, rng))
        state = canonical(scope.out)
        carried += bool(state["graph"]["graph"].get("stamp", {}).get("carried"))
        _compare(state, _fresh(scope, base / "fresh"), f"edit {step} ({kind})")
    assert carried or not {"link", "unlink", "dangling", "tag"} & set(edits), "no edit was carried: the test compared full recomputes only"


@pytest.fixture
def monkeypatch_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """Carrying on (the suite recomputes in full by default) whatever the communities' drift (on a
    graph this small one link moves modularity past the limit), graph.html and the model off."""
    isolated_env(monkeypatch, tmp_path)
    monkeypatch.setenv("KG_RANK_FULL_EVERY", "1000")
    monkeypatch.setattr(rank_state, "MODULARITY_DROP", 1.0)
    monkeypatch.setattr(rank_state, "JOINED_LIMIT", 1.0)
    return monkeypatch


def test_a_full_recompute_every_n_edits_gives_a_builds_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three link edits carried, the fourth due for a full recompute: then byte for byte a build.
    Kills: a counter that never triggers, a full recompute that keeps carried values."""
    isolated_env(monkeypatch, tmp_path)
    monkeypatch.setenv("KG_RANK_FULL_EVERY", "4")
    monkeypatch.setattr(rank_state, "MODULARITY_DROP", 1.0)  # the counter alone decides (on a graph this small
    monkeypatch.setattr(rank_state, "JOINED_LIMIT", 1.0)  # one link moves modularity past the limit)
    scope = vault_scope(_vault(tmp_path / "v", 1))
    run(scope)
    rng = random.Random(5)
    stamps = []
    for _ in range(4):
        _hook_and_settle(scope, _edit(scope.root, "link", rng))
        stamps.append(canonical(scope.out)["graph"]["graph"]["stamp"].get("carried"))
    assert stamps[:3] == [1, 2, 3] and stamps[3] is None
    assert canonical(scope.out) == _fresh(scope, tmp_path / "fresh")


def test_the_carried_community_table_is_the_builds_when_nothing_moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Right after a build the carried state's community table (sizes, cohesion, names, top
    members), recomputed from arrays, is the one the build wrote. Kills: a table computed over
    other edges, weights or ranks than a build's."""
    from vault_kg.storage.cache import ScopeCache
    from vault_kg.update.centrality import EdgeTable

    isolated_env(monkeypatch, tmp_path)
    scope = vault_scope(_vault(tmp_path / "v", 2))
    run(scope)
    cache = ScopeCache(scope.out / "cache" / "index.sqlite")
    try:
        state = rank_state.load(cache)
        table = EdgeTable.from_bytes(cache.raw_blob("table"))
        assert state is not None and state.ids == table.ids
        rows = rank_state.community_rows(state, table, lambda ids: {nid: row[0].get("label", nid) for nid, row in cache.node_rows(ids).items()})
        built = orjson.loads((scope.out / "graph.json").read_bytes())["graph"]["communities"]
        assert sorted(rows, key=lambda c: c["id"]) == sorted(built, key=lambda c: c["id"])
    finally:
        cache.close()
