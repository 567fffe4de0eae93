"""The vault build pass: stale and superseded statuses, edges, the brief's stale list, code deps."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from anchor_helpers import World, anchor, kg, make_world, note, settle

from vault_kg.core import model as m

FETCH = "src/retry.py › class Client › method fetch"


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = make_world(tmp_path)
    w.write_note("notes/Depends.md", note("Rests on the retry note.", "Depends on retries."))
    anchor(w, "notes/Retry.md", "src/retry.py::Client.fetch")
    code, _, err = kg("anchor", "Depends", "--to", "[[Retry]]", "--vault", str(w.vault))
    assert code == 0, err
    settle(w)
    code, _, err = kg("build", "--vault", str(w.vault))
    assert code == 0, err
    return w


def graph(world: World) -> dict:
    return json.loads((world.vault / "kg-out" / "graph.json").read_text())


def nodes(world: World) -> dict[str, dict]:
    return {n["id"]: n for n in graph(world)["nodes"]}


def test_build_adds_anchored_to_edges_and_anchored_attribute(world: World) -> None:
    data = graph(world)
    edges = {(e["source"], e["target"], e["relation"]) for e in data.get("links", data.get("edges", []))}
    assert ("note:notes/Depends.md", "note:notes/Retry.md", m.ANCHORED_TO) in edges
    assert nodes(world)["note:notes/Retry.md"]["anchored"] == [f"demo:{FETCH}"]
    assert data["graph"]["stale"] == [] and data["graph"]["counts"]["stale"] == 0


def test_code_change_alone_makes_vault_update_mark_stale_and_queries_hide_it(world: World) -> None:
    vault = str(world.vault)
    code, out, _ = kg("query", "fetch retries three times", "--vault", vault)
    assert "notes/Retry.md" in out
    world.edit("src/retry.py", "range(3)", "range(5)")
    code, out, err = kg("update", "--vault", vault)
    assert code == 0, err
    by_id = nodes(world)
    assert by_id["note:notes/Retry.md"]["status"] == m.STALE
    assert by_id["note:notes/Retry.md"]["stale_reason"] == f"hash changed: {FETCH}"
    assert by_id["note:notes/Depends.md"]["stale_reason"] == "propagated from note:notes/Retry.md"
    assert by_id["note:notes/Backoff.md"]["status"] == m.LIVE
    stale = graph(world)["graph"]["stale"]
    assert [(s["id"], s["project"]) for s in stale] == [("note:notes/Depends.md", "demo"), ("note:notes/Retry.md", "demo")]

    code, out, _ = kg("query", "fetch retries three times", "--vault", vault)
    assert "notes/Retry.md" not in out
    code, out, _ = kg("query", "fetch retries three times", "--vault", vault, "--include-stale")
    assert "notes/Retry.md" in out and "[STALE]" in out
    code, out, err = kg("explain", "Retry", "--vault", vault)
    assert code == 1 and out == "", out
    assert "'note:notes/Retry.md' is stale: not served as current; pass --include-stale" in err
    code, out, _ = kg("explain", "Retry", "--vault", vault, "--include-stale")
    assert "[STALE]" in out

    code, _, err = kg("accept", "Retry", "--vault", vault)
    assert code == 0, err
    assert nodes(world)["note:notes/Retry.md"]["status"] == m.LIVE  # the repair refreshed the built graph
    assert nodes(world)["note:notes/Depends.md"]["status"] == m.LIVE


def test_superseded_notes_are_flagged_and_linked(world: World) -> None:
    vault = str(world.vault)
    world.write_note("notes/Retry v2.md", note("Fetch retries, second take.", "Fetch retries five times."))
    code, _, err = kg("supersede", "Retry", "Retry v2", "--vault", vault)
    assert code == 0, err
    by_id = nodes(world)
    assert by_id["note:notes/Retry.md"]["status"] == m.SUPERSEDED
    assert by_id["note:notes/Retry v2.md"]["status"] == m.LIVE
    data = graph(world)
    edges = {(e["source"], e["target"], e["relation"]) for e in data.get("links", data.get("edges", []))}
    assert ("note:notes/Retry v2.md", "note:notes/Retry.md", m.SUPERSEDES) in edges
    code, out, _ = kg("query", "fetch retries", "--vault", vault)
    assert "notes/Retry v2.md" in out and "notes/Retry.md" not in out
    code, out, _ = kg("query", "fetch retries", "--vault", vault, "--include-stale")
    assert "[SUPERSEDED]" in out


def test_missing_anchored_file_does_not_force_reassembly_on_every_update(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_kg.anchors import build_pass as anchor_pass
    from vault_kg.update.engine import run
    from vault_kg.core.scopes import vault_scope

    (world.repo / "src/retry.py").unlink()
    first = run(vault_scope(world.vault))
    assert first.nodes and nodes(world)["note:notes/Retry.md"]["stale_reason"] == "artifact missing: demo:src/retry.py"
    calls: list = []
    with monkeypatch.context() as patched:
        patched.setattr(anchor_pass, "post_assembly", lambda ctx: calls.append(ctx))
        run(vault_scope(world.vault))
    assert calls == []
    (world.repo / "src/retry.py").write_text("def fetch():\n    return 1\n")
    run(vault_scope(world.vault))
    assert nodes(world)["note:notes/Retry.md"]["stale_reason"] == f"symbol not found: {FETCH}"


def test_entities_extracted_from_a_dirty_note_go_stale_unless_another_note_vouches(world: World) -> None:
    from vault_kg.anchors.dates import today
    from vault_kg.anchors.build_pass import post_assembly
    from vault_kg.update.engine import RunResult
    from vault_kg.core.scopes import vault_scope

    world.edit("src/retry.py", "range(3)", "range(5)")
    scope = vault_scope(world.vault)
    extractions = {rel: SimpleNamespace(quarantine=None) for rel in ("notes/Retry.md", "notes/Backoff.md", "notes/Depends.md")}
    graph_nodes = {n["id"]: dict(n) for n in graph(world)["nodes"] if n["id"].startswith("note:")}
    graph_nodes["entity:exponential backoff"] = {"kind": m.ENTITY, "label": "exponential backoff", "source": "notes/Retry.md", "sources": ["notes/Retry.md"], "status": m.LIVE}
    graph_nodes["entity:http"] = {"kind": m.ENTITY, "label": "HTTP", "source": "notes/Retry.md", "sources": ["notes/Retry.md", "notes/Backoff.md"], "status": m.LIVE}
    graph_nodes["entity:retry budget"] = {"kind": m.ENTITY, "label": "retry budget", "source": "notes/Depends.md", "sources": ["notes/Depends.md"], "status": m.LIVE}
    meta: dict[str, object] = {}
    cache = SimpleNamespace(set_meta=meta.__setitem__)
    ctx = SimpleNamespace(scope=scope, cache=cache, nodes=graph_nodes, extractions=extractions, edges_by_owner={}, deps={}, changed=[], result=RunResult("vault", "vault"))
    post_assembly(ctx)
    assert meta == {"anchors_day": today().isoformat()}  # what a one-note patch checks (note_patch)
    assert graph_nodes["entity:exponential backoff"]["status"] == m.STALE
    assert graph_nodes["entity:exponential backoff"]["stale_reason"] == "propagated from note:notes/Retry.md"
    assert graph_nodes["entity:retry budget"]["status"] == m.STALE  # two levels: Retry → Depends → entity
    assert graph_nodes["entity:http"]["status"] == m.LIVE
    assert str(world.repo / "src/retry.py") in ctx.deps


def test_valid_at_reads_graph_nodes_and_frontmatter() -> None:
    from vault_kg.anchors.dates import valid_at

    node = {"kind": m.NOTE, "props": {"valid_from": "2024-01-01", "valid_to": "2024-06-01"}}
    assert not valid_at(node, "2023-12-31") and valid_at(node, "2024-01-01") and not valid_at(node, "2024-06-01")
    assert valid_at({"kind": m.FUNCTION}, "1999-01-01")
