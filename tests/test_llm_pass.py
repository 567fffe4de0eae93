"""The Ollama pass inside the engine: entities land, cache makes rebuilds free, outages mark pending."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_notes import BASIC
from ollama_fake import FakeOllama, closed_port_url

from vault_kg import model as m
from vault_kg.engine import run
from vault_kg.scopes import vault_scope

OTHER = "---\nsummary: Semrush notes.\ntags: [tool/semrush, scope/global]\n---\n# Semrush\n\nKeyword research tool.\n"


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vault"
    (root / "clients").mkdir(parents=True)
    (root / "clients" / "Acme Corp.md").write_text(BASIC)
    (root / "Semrush.md").write_text(OTHER)
    monkeypatch.setenv("KG_OLLAMA", "on")
    return root


def graph(vault: Path, out: str = "kg-out") -> dict:
    return json.loads((vault / out / "graph.json").read_text())


def test_entities_land_and_rebuilds_cost_no_calls(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        result = run(vault_scope(vault))
        assert result.extra["llm"]["model_calls"] >= 1 and result.extra["llm"]["pending"] == 0
        calls = fake.chat_calls
        data = graph(vault)
        kinds = {n["id"]: n["kind"] for n in data["nodes"]}
        assert kinds.get("entity:maria-chen") == m.ENTITY
        mentions = [e for e in data["edges"] if e["relation"] == m.MENTIONS and e["owner"] == "clients/Acme Corp.md"]
        assert mentions and all(e["line"] for e in mentions)
        assert any(e["target"] == "note:Semrush.md" for e in mentions), "an entity named like a note is that note"
        typed = [e for e in data["edges"] if e["relation"] in ("uses", "works_on", "replaces", "owns")]
        assert typed and all(e["confidence"] in (m.EXTRACTED, m.INFERRED, m.AMBIGUOUS) and e["owner"] == "clients/Acme Corp.md" for e in typed)
        assert not any(e["relation"] == "uses" and "redis" in e["target"] and e["confidence"] == m.EXTRACTED for e in typed), "a negated line is never EXTRACTED"
        run(vault_scope(vault), force=True)
        assert fake.chat_calls == calls, "an unchanged note costs zero model calls on a forced rebuild"
        assert graph(vault) == data
        fresh = run(vault_scope(vault, out=vault.parent / "fresh"))
        assert fresh.extra["llm"]["cache_hits"] == 0 or fake.chat_calls >= calls
        mine, theirs = graph(vault), json.loads((vault.parent / "fresh" / "graph.json").read_text())
        mine["graph"].pop("root"), theirs["graph"].pop("root")
        assert mine == theirs


def test_outage_marks_pending_and_next_update_recovers(vault: Path, monkeypatch: pytest.MonkeyPatch, kg) -> None:
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    result = run(vault_scope(vault))
    assert any("ollama serve" in n for n in result.notices)
    data = graph(vault)
    statuses = {n["id"]: n.get("status") for n in data["nodes"]}
    assert statuses["note:clients/Acme Corp.md"] == m.PENDING and statuses["note:Semrush.md"] == m.PENDING
    assert data["graph"]["counts"]["pending"] == 2
    assert any(e["relation"] == m.TAGGED for e in data["edges"]), "the deterministic graph still lands"
    stats = kg("stats", "--json", "--vault", str(vault), env={"OLLAMA_HOST": closed_port_url(), "KG_OLLAMA": "on"})
    assert json.loads(stats.stdout)["pending"] == 2
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        again = run(vault_scope(vault))
        assert again.extra["llm"]["notes"] == 2 and again.extra["llm"]["pending"] == 0
        data = graph(vault)
        assert data["graph"]["counts"]["pending"] == 0
        assert "entity:maria-chen" in {n["id"] for n in data["nodes"]}
        quiet = run(vault_scope(vault))
        assert quiet.written == [] and "llm" not in quiet.extra, "nothing pending: a no-op again"


def test_missing_model_says_pull(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        monkeypatch.setenv("KG_MODEL", "llama3.1:8b")
        result = run(vault_scope(vault))
        assert any("ollama pull llama3.1:8b" in n for n in result.notices)
        assert graph(vault)["graph"]["counts"]["pending"] == 2


def test_updates_keep_entity_edges_and_redo_them_when_titles_change(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entity edges are kept with their note's edge group; a title or alias change elsewhere
    redoes them. Each update must equal a full reassembly of the same cached answers (answers are
    verified when a note is read, so a rebuild that re-reads every note is a different input)."""
    import shutil
    import sqlite3

    def reassembled() -> dict:
        fresh = vault.parent / "fresh"
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(vault / "kg-out", fresh)
        (fresh / "graph.json").unlink()
        con = sqlite3.connect(fresh / "cache" / "index.sqlite")
        con.execute("DELETE FROM blobs")
        con.commit()
        con.close()
        result = run(vault_scope(vault, out=fresh))
        assert result.extra["rederived_owners"] == "all" and not result.extracted
        return json.loads((fresh / "graph.json").read_text())

    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(vault))
        semrush = vault / "Semrush.md"
        semrush.write_text(OTHER + "\nMore on keyword research.\n")
        result = run(vault_scope(vault), paths=[semrush])
        assert result.extra["rederived_owners"] == 1, "the Acme note's entity edges were reused, not redone"
        assert graph(vault) == reassembled()
        semrush.write_text(OTHER.replace("tags:", "aliases: [Maria Chen]\ntags:") + "\nNow also known by another name.\n")
        result = run(vault_scope(vault), paths=[semrush])
        assert result.extra["rederived_owners"] == 2, "a new alias may change what every entity means"
        acme = [e for e in graph(vault)["edges"] if e["owner"] == "clients/Acme Corp.md" and e.get("via") == "llm"]
        assert any(e["target"] == "note:Semrush.md" and e["source"] != "note:clients/Acme Corp.md" for e in acme) or any(e["source"] == "note:Semrush.md" for e in acme)
        assert graph(vault) == reassembled()
