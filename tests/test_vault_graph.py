"""Invariants of the vault graph on every route: build, update all, update one path, force."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import networkx as nx
import pytest

from vault_kg.core import model as m
from vault_kg.update.engine import run
from vault_kg.core.scopes import vault_scope


def build(vault: Path, **kwargs):
    return run(vault_scope(vault), **kwargs)


def graph(vault: Path) -> dict:
    return json.loads((vault / "kg-out" / "graph.json").read_text())


def fresh_bytes(vault: Path) -> tuple[bytes, bytes]:
    """The artifacts a from-scratch build of the same files produces (cache and all deleted)."""
    out = vault / "kg-out"
    keep = vault.parent / f"{vault.name}.kg-out.keep"
    shutil.move(out, keep)
    try:
        build(vault)
        return (out / "graph.json").read_bytes(), (out / "GRAPH_REPORT.md").read_bytes()
    finally:
        shutil.rmtree(out)
        shutil.move(keep, out)


def assert_matches_scratch(vault: Path) -> None:
    current = ((vault / "kg-out" / "graph.json").read_bytes(), (vault / "kg-out" / "GRAPH_REPORT.md").read_bytes())
    assert current == fresh_bytes(vault)


def assert_no_ghosts(vault: Path) -> None:
    data = graph(vault)
    sources = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if "kg-out" not in p.parts}
    ids = {n["id"] for n in data["nodes"]}
    for n in data["nodes"]:
        assert n["source"] in sources, f"ghost node {n['id']} owned by missing {n['source']}"
    for e in data["edges"]:
        assert e["owner"] in sources, f"ghost edge {e}"
        assert e["source"] in ids and e["target"] in ids


def test_build_example_vault(example_vault: Path) -> None:
    result = build(example_vault)
    out = example_vault / "kg-out"
    assert (out / ".gitignore").read_text().strip().endswith("*")
    assert result.sources == 38
    assert result.quarantined == []
    assert [w.split(": ", 1)[0] for w in result.warnings] == ["broken/Malformed Frontmatter.md:3"]
    data = graph(example_vault)
    assert data["directed"] and data["multigraph"]
    g = nx.node_link_graph(data, edges="edges")
    assert isinstance(g, nx.MultiDiGraph) and g.number_of_nodes() == result.nodes and g.number_of_edges() == result.edges
    assert data["graph"]["scope"] == "vault" and data["graph"]["kind"] == "vault"
    dangling = [n for n in data["nodes"] if n["kind"] == m.UNRESOLVED]
    assert [n["id"] for n in dangling] == ["unresolved:stripe webhook signing"]
    assert dangling[0]["referrers"] == ["services/Webhook Relay.md"]
    for e in data["edges"]:
        assert e["confidence"] in (m.EXTRACTED, m.INFERRED, m.AMBIGUOUS) and e["owner"] and e["key"]
    tags = {n["id"] for n in data["nodes"] if n["kind"] == m.TAG}
    assert "tag:topic/payments" in tags
    parents = [(e["source"], e["target"]) for e in data["edges"] if e["relation"] == m.TAG_PARENT]
    # every nested tag points at its direct parent (child → parent), exactly once, and nothing else does
    assert sorted(parents) == sorted((t, t.rsplit("/", 1)[0]) for t in tags if "/" in t)
    assert ("tag:topic/payments", "tag:topic") in parents
    report = (out / "GRAPH_REPORT.md").read_text()
    assert report.index("## God nodes") < report.index("## Communities") < report.index("## Dangling links")
    assert "## Properties ignored (1)" in report and "`broken/Malformed Frontmatter.md` line 3:" in report
    assert_no_ghosts(example_vault)


def test_sections_and_aliases_resolve(example_vault: Path) -> None:
    build(example_vault)
    data = graph(example_vault)
    sections = [n for n in data["nodes"] if n["kind"] == m.SECTION]
    assert sections, "[[Note#Heading]] links should create section nodes"
    for s in sections:
        assert any(e["relation"] == m.HAS_SECTION and e["target"] == s["id"] for e in data["edges"])
    alias_edges = [e for e in data["edges"] if e["relation"] == m.LINKS_TO and e["target"] == "note:services/Payments API.md"]
    assert len({e["owner"] for e in alias_edges}) >= 3


def test_rebuild_is_byte_identical_and_noop_rewrites_nothing(example_vault: Path) -> None:
    build(example_vault)
    out = example_vault / "kg-out"
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in (out / "graph.json", out / "GRAPH_REPORT.md")}
    result = build(example_vault)
    assert result.extracted == [] and result.written == []
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in (out / "graph.json", out / "GRAPH_REPORT.md")} == before
    forced = build(example_vault, force=True)
    assert len(forced.extracted) == 38
    assert (out / "graph.json").read_bytes() == before["graph.json"][0]
    assert_matches_scratch(example_vault)


def test_touch_without_change_reads_but_does_not_reextract(example_vault: Path) -> None:
    build(example_vault)
    note = example_vault / "tools" / "Redis.md"
    os.utime(note, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns + 5_000_000_000))
    result = build(example_vault)
    assert result.extracted == [] and result.written == []


def test_a_no_op_update_ends_at_the_scan_without_loading_the_extractions(example_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing changed: the scan stage ends the run before any extraction is unpickled (the fast
    path the no-op figures measure); a touched file with the same bytes goes one stage further."""
    from vault_kg.storage.cache import ScopeCache

    build(example_vault)
    loads: list[int] = []
    real = ScopeCache.load_all
    monkeypatch.setattr(ScopeCache, "load_all", lambda self: loads.append(1) or real(self))
    result = build(example_vault)
    assert result.extracted == [] and result.written == [] and loads == [], "a no-op update loaded every extraction"
    note = example_vault / "tools" / "Redis.md"
    os.utime(note, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns + 5_000_000_000))
    result = build(example_vault)
    assert result.extracted == [] and result.written == [] and loads == [1]


def test_rename_leaves_no_ghosts(example_vault: Path) -> None:
    build(example_vault)
    (example_vault / "tools" / "Redis.md").rename(example_vault / "tools" / "Redis Cache.md")
    result = build(example_vault)
    assert result.removed == ["tools/Redis.md"] and "tools/Redis Cache.md" in result.extracted
    others = [p for p in result.extracted if p != "tools/Redis Cache.md"]
    assert all("Redis" in (example_vault / p).read_text() for p in others), "only the notes that name Redis are read again: their name now means another node"
    ids = {n["id"] for n in graph(example_vault)["nodes"]}
    assert "note:tools/Redis.md" not in ids and "note:tools/Redis Cache.md" in ids
    assert "unresolved:redis" in ids, "links by the old name now dangle, explicitly"
    assert_no_ghosts(example_vault)
    assert_matches_scratch(example_vault)


def test_dangling_link_resolves_when_target_appears(example_vault: Path) -> None:
    build(example_vault)
    before = graph(example_vault)
    dangling = [e for e in before["edges"] if e["target"] == "unresolved:stripe webhook signing"]
    assert [e["source"] for e in dangling] == ["note:services/Webhook Relay.md"], "the dangling link is kept, as an edge to its unresolved node"
    (example_vault / "services" / "Stripe Webhook Signing.md").write_text("---\nsummary: How signatures work\ntags: [scope/global, tool/stripe]\n---\nBack to [[Webhook Relay]].\n")
    build(example_vault, paths=[example_vault / "services" / "Stripe Webhook Signing.md"])
    data = graph(example_vault)
    assert not [n for n in data["nodes"] if n["kind"] == m.UNRESOLVED]
    assert any(e["source"] == "note:services/Webhook Relay.md" and e["target"] == "note:services/Stripe Webhook Signing.md" for e in data["edges"])
    assert_matches_scratch(example_vault)


def test_alias_added_elsewhere_resolves_dangling_link(example_vault: Path) -> None:
    build(example_vault)
    stripe = example_vault / "tools" / "Stripe.md"
    text = stripe.read_text()
    assert "aliases:" not in text.split("---")[1]
    stripe.write_text(text.replace("summary:", "aliases: [Stripe Webhook Signing]\nsummary:", 1))
    build(example_vault, paths=[stripe])
    data = graph(example_vault)
    assert any(e["source"] == "note:services/Webhook Relay.md" and e["target"] == "note:tools/Stripe.md" and e.get("line") for e in data["edges"])
    assert "unresolved:stripe webhook signing" not in {n["id"] for n in data["nodes"]}
    assert_matches_scratch(example_vault)


def test_mutual_links_keep_both_directions(tmp_path: Path) -> None:
    (tmp_path / "A.md").write_text("[[B]]\n")
    (tmp_path / "B.md").write_text("[[A]] and again [[A]]\n")
    build(tmp_path)
    edges = [(e["source"], e["target"], e.get("lines")) for e in graph(tmp_path)["edges"] if e["relation"] == m.LINKS_TO]
    # both directions kept; B's two links to A on line 1 fold into one edge that lists the line once
    assert sorted(edges, key=str) == [("note:A.md", "note:B.md", None), ("note:B.md", "note:A.md", [1])]


def test_delete_and_folder_move(example_vault: Path) -> None:
    build(example_vault)
    (example_vault / "people" / "Marco Ruiz.md").unlink()
    shutil.move(example_vault / "runbooks", example_vault / "ops")
    result = build(example_vault)
    assert "people/Marco Ruiz.md" in result.removed
    ids = {n["id"] for n in graph(example_vault)["nodes"]}
    assert not any(i.startswith("note:runbooks/") for i in ids) and any(i.startswith("note:ops/") for i in ids)
    assert_no_ghosts(example_vault)
    assert_matches_scratch(example_vault)


def test_update_paths_only_touches_those(example_vault: Path) -> None:
    build(example_vault)
    a = example_vault / "tools" / "Sentry.md"
    b = example_vault / "tools" / "Postgres.md"
    a.write_text(a.read_text() + "\nNew line about [[Redis]].\n")
    b.write_text(b.read_text() + "\nUnrelated edit.\n")
    result = build(example_vault, paths=[a])
    assert result.extracted == ["tools/Sentry.md"]
    result = build(example_vault, paths=[a.parent / "Gone.md"])
    assert result.extracted == [] and result.removed == []
    b.unlink()
    result = build(example_vault, paths=[b])
    assert result.removed == ["tools/Postgres.md"]
    assert_no_ghosts(example_vault)
    assert_matches_scratch(example_vault)


def test_paths_outside_scope_are_reported(example_vault: Path, tmp_path: Path) -> None:
    build(example_vault)
    outside = tmp_path / "elsewhere.md"
    outside.write_text("x")
    result = build(example_vault, paths=[outside, example_vault / "kg-out" / "graph.json"])
    assert len(result.notices) == 2 and all("not inside scope" in n or "not a source" in n for n in result.notices)


@pytest.mark.parametrize("step", ["edit_body", "edit_frontmatter", "quarantine_then_fix"])
def test_incremental_equals_scratch_per_step(example_vault: Path, step: str) -> None:
    build(example_vault)
    note = example_vault / "services" / "Payments Worker.md"
    text = note.read_text()
    if step == "edit_body":
        note.write_text(text + "\n## Extra\nSee [[Brand New Note]] and #topic/extra/deep.\n")
    elif step == "edit_frontmatter":
        note.write_text(text.replace("tags:", "aliases: [PW]\ntags:", 1))
    else:
        note.write_text("---\ntags: [oops\n---\n" + text)
        build(example_vault, paths=[note])
        assert_matches_scratch(example_vault)
        note.write_text(text)
    build(example_vault, paths=[note])
    assert_matches_scratch(example_vault)


def links_of(vault: Path) -> dict[tuple[str, str], str]:
    return {(e["source"], e["target"]): e["confidence"] for e in graph(vault)["edges"] if e["relation"] == m.LINKS_TO}


def test_markdown_links_resolve_as_obsidian_writes_them(tmp_path: Path) -> None:
    """Found by the link oracle: a markdown link was only tried relative to the note, so the
    "shortest path" (`[x](Note.md)`) and "absolute path in vault" (`[x](proj/Note.md)`) formats,
    Obsidian's defaults, were dangling from any subfolder."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "area" / "sub").mkdir(parents=True)
    (tmp_path / "proj" / "Omega.md").write_text("# Omega\n")
    (tmp_path / "Delta.md").write_text("# Delta\n")
    (tmp_path / "area" / "sub" / "Gamma.md").write_text("# Gamma\n")
    (tmp_path / "area" / "sub" / "A.md").write_text("[abs](proj/Omega.md) [short](Delta.md) [self folder](area/sub/Gamma.md) [rel](Gamma.md) [gone](Nowhere.md) [out](../../../x.md)\n")
    build(tmp_path)
    edges = links_of(tmp_path)
    src = "note:area/sub/A.md"
    for target in ("note:proj/Omega.md", "note:Delta.md", "note:area/sub/Gamma.md"):
        assert edges.get((src, target)) == m.EXTRACTED, target
    assert (src, "unresolved:area/sub/nowhere") in edges and (src, "unresolved:../x") in edges
    (tmp_path / "area" / "sub" / "Nowhere.md").write_text("# Now here\n")  # resolves on the next update
    build(tmp_path)
    assert (src, "note:area/sub/Nowhere.md") in links_of(tmp_path)
    assert_matches_scratch(tmp_path)


def test_escaped_pipe_in_a_table_and_one_sure_occurrence_beat_a_guess(tmp_path: Path) -> None:
    """Found by the link oracle: `[[Note\\|label]]` (a pipe escaped inside a table row) kept the
    backslash and dangled; and an edge folded from a sure link and an ambiguous one took the
    confidence of whichever came first."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "Beta.md").write_text("# Beta\n## Intro\n")
    (tmp_path / "b" / "Beta.md").write_text("# Beta too\n")
    (tmp_path / "Target.md").write_text("# Target\n## Intro\n")
    (tmp_path / "Home.md").write_text("| what | where |\n| --- | --- |\n| [[Target\\|the target]] | [[Target#Intro\\|intro]] |\n\n[[Beta]] then [[a/Beta]]\n")
    build(tmp_path)
    edges = links_of(tmp_path)
    assert ("note:Home.md", "note:Target.md") in edges and ("note:Home.md", "section:Target.md#Intro") in edges
    assert not any(t.startswith("unresolved:") for _, t in edges)
    assert edges[("note:Home.md", "note:a/Beta.md")] == m.EXTRACTED
    assert_matches_scratch(tmp_path)
