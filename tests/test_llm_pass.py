"""The model pass in the engine and the worker's loop (in-process): the deterministic graph lands
first with no request to the model, the worker's answers land through short updates, the cache
makes rebuilds free, outages back off, and an incremental graph equals a from-scratch one."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from llm_notes import BASIC
from ollama_fake import FakeOllama, closed_port_url

from vault_kg.jobs import model_worker as llm_worker
from vault_kg.core import model as m
from vault_kg.core.config import load_config
from vault_kg.update.engine import run
from vault_kg.core.scopes import vault_scope

OTHER = "---\nsummary: Semrush notes.\ntags: [tool/semrush, scope/global]\n---\n# Semrush\n\nKeyword research tool.\n"


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vault"
    (root / "clients").mkdir(parents=True)
    (root / "clients" / "Acme Corp.md").write_text(BASIC)
    (root / "Semrush.md").write_text(OTHER)
    monkeypatch.setenv("KG_OLLAMA", "on")
    monkeypatch.setenv("KG_HTML", "off")
    return root


def graph(vault: Path, out: str = "kg-out") -> dict:
    return json.loads((vault / out / "graph.json").read_text())


def statuses(vault: Path) -> dict[str, str]:
    return {n["id"]: n.get("status") for n in graph(vault)["nodes"] if n["kind"] == m.NOTE}


def drain(vault: Path) -> str:
    scope = vault_scope(vault)
    return llm_worker.Worker(scope.root, scope.out, load_config()).drain()


def test_build_lands_the_deterministic_graph_without_contacting_the_model(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        result = run(vault_scope(vault))
        assert fake.log == [], "a build never talks to the model server"
        assert result.pending == 2 and statuses(vault) == {"note:clients/Acme Corp.md": m.PENDING, "note:Semrush.md": m.PENDING}
        assert any(e["relation"] == m.TAGGED for e in graph(vault)["edges"])
        assert drain(vault) == "nothing pending"
        assert fake.chat_calls == 2, "one call per ordinary note"
        assert run(vault_scope(vault)).written == [] and len(fake.log) == len(fake.paths), "a no-op update after the worker: nothing"


def test_worker_answers_land_and_rebuilds_cost_no_calls(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_LLM_CACHE", str(vault.parent / "answers"))
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(vault))
        drain(vault)
        calls = fake.chat_calls
        data = graph(vault)
        assert data["graph"]["counts"]["pending"] == 0
        kinds = {n["id"]: n["kind"] for n in data["nodes"]}
        assert kinds.get("entity:maria-chen") == m.ENTITY
        mentions = [e for e in data["edges"] if e["relation"] == m.MENTIONS and e["owner"] == "clients/Acme Corp.md"]
        assert mentions and all(e["line"] for e in mentions)
        assert any(e["target"] == "note:Semrush.md" for e in mentions), "an entity named like a note is that note"
        typed = [e for e in data["edges"] if e["relation"] in ("uses", "works_on", "replaces", "owns")]
        assert typed and all(e["confidence"] in (m.EXTRACTED, m.INFERRED, m.AMBIGUOUS) and e["owner"] == "clients/Acme Corp.md" for e in typed)
        assert not any(e["relation"] == "uses" and "redis" in e["target"] and e["confidence"] == m.EXTRACTED for e in typed), "a negated line is never EXTRACTED"
        requests = len(fake.log)
        run(vault_scope(vault), force=True)
        assert graph(vault) == data and len(fake.log) == requests, "a forced rebuild reads every answer from the cache"
        fresh = run(vault_scope(vault, out=vault.parent / "fresh"))
        assert fresh.pending == 0 and fake.chat_calls == calls and len(fake.log) == requests, "a from-scratch build over the same answers: no request"
        mine, theirs = graph(vault), json.loads((vault.parent / "fresh" / "graph.json").read_text())
        mine["graph"].pop("root"), theirs["graph"].pop("root")
        assert mine == theirs


def test_outage_backs_off_says_it_once_and_recovers(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    scope = vault_scope(vault)
    result = run(scope)
    assert result.pending == 2 and not any("ollama" in n.lower() for n in result.notices), "the engine never checks the model"
    cause = drain(vault)
    assert "run `ollama serve`" in cause and "\n" not in cause
    state = llm_worker.read_state(scope.out)
    assert state["down"]["cause"] == cause and state["down"]["until"] > state["down"]["since"]
    assert llm_worker.wake(scope.root, scope.out) == "backing off"
    line = llm_worker.notice(scope.out, 2)
    assert line and "ollama serve" in line and "2 note(s) wait for it" in line
    assert llm_worker.notice(scope.out, 2) is None, "once per cause, not on every update"
    drain(vault)
    first, second = llm_worker.read_state(scope.out)["down"], state["down"]
    assert first["count"] == 2 and first["until"] - first["since"] > second["until"] - second["since"], "the back-off grows"
    assert statuses(vault)["note:clients/Acme Corp.md"] == m.PENDING
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        assert drain(vault) == "nothing pending"
        assert graph(vault)["graph"]["counts"]["pending"] == 0 and "entity:maria-chen" in {n["id"] for n in graph(vault)["nodes"]}
        assert "down" not in llm_worker.read_state(scope.out)


def test_missing_model_says_pull(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        monkeypatch.setenv("KG_MODEL", "llama3.1:8b")
        run(vault_scope(vault))
        assert "ollama pull llama3.1:8b" in drain(vault)
        assert graph(vault)["graph"]["counts"]["pending"] == 2 and fake.chat_calls == 0


def test_a_failing_note_backs_off_alone(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        scope = vault_scope(vault)
        run(scope)
        fake.inject("badjson")
        drain(vault)
        failures = llm_worker.read_state(scope.out)["failures"]
        [failed] = list(failures)
        other = "Semrush.md" if failed != "Semrush.md" else "clients/Acme Corp.md"
        assert failures[failed]["attempts"] == 1
        assert statuses(vault) == {f"note:{failed}": m.PENDING, f"note:{other}": m.LIVE}
        calls = fake.chat_calls
        assert drain(vault) == "nothing pending" and fake.chat_calls == calls, "backing off: not asked again yet"
        info = llm_worker.status(scope, load_config())
        assert info["pending"] == 1 and info["failed"][0]["note"] == failed and "invalid JSON" in info["failed"][0]["error"]
        (vault / failed).write_text((vault / failed).read_text() + "\nEdited.\n")
        run(scope, paths=[vault / failed])
        drain(vault)
        assert fake.chat_calls == calls + 1 and statuses(vault)[f"note:{failed}"] == m.LIVE, "an edit makes it due again"
        assert failed not in (llm_worker.read_state(scope.out).get("failures") or {})


def test_turning_the_model_off_clears_pending(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    run(vault_scope(vault))
    assert graph(vault)["graph"]["counts"]["pending"] == 2
    monkeypatch.setenv("KG_OLLAMA", "off")
    run(vault_scope(vault))
    assert graph(vault)["graph"]["counts"]["pending"] == 0 and set(statuses(vault).values()) == {m.LIVE}


def test_title_and_alias_changes_reverify_without_calls(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entity edges are owned by their note; a title or alias change elsewhere re-verifies the
    notes that name it, from their stored answers. Each update equals a from-scratch reassembly
    of the same answers, and makes no request."""

    def reassembled() -> dict:
        fresh = vault.parent / "fresh"
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(vault / "kg-out", fresh)
        (fresh / "graph.json").unlink()
        con = sqlite3.connect(fresh / "cache" / "index.sqlite")
        con.execute("DELETE FROM blobs")
        con.execute("DELETE FROM sources")
        con.commit()
        con.close()
        result = run(vault_scope(vault, out=fresh))
        assert result.extra["rederived_owners"] == "all"
        return json.loads((fresh / "graph.json").read_text())

    monkeypatch.setenv("KG_LLM_CACHE", str(vault.parent / "answers"))
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(vault))
        drain(vault)
        requests = len(fake.log)
        semrush = vault / "Semrush.md"
        semrush.write_text(OTHER + "\nMore on keyword research.\n")
        result = run(vault_scope(vault), paths=[semrush])
        assert result.extra["rederived_owners"] == 1, "the Acme note's entity edges were kept, not redone"
        assert graph(vault) == reassembled()
        semrush.write_text(OTHER.replace("tags:", "aliases: [Maria Chen]\ntags:") + "\nNow also known by another name.\n")
        result = run(vault_scope(vault), paths=[semrush])
        assert result.extra["rederived_owners"] == 2, "a new alias changes what the Acme note's entities mean"
        acme = [e for e in graph(vault)["edges"] if e["owner"] == "clients/Acme Corp.md" and e.get("via") == "llm"]
        assert any(e["source"] == "note:Semrush.md" for e in acme), "Maria Chen is now the Semrush note"
        assert graph(vault) == reassembled()
        (vault / "Maria Chen.md").write_text("# Maria Chen\n\nSEO lead.\n")
        run(vault_scope(vault), paths=[vault / "Maria Chen.md"])
        assert graph(vault)["graph"]["counts"]["pending"] == 2, "the new note and the edited one wait for the worker"
        assert len(fake.log) == requests, "updates never contact the model"
        drain(vault)
        assert graph(vault) == reassembled()


def test_parallel_keeps_k_requests_in_flight(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(4):
        (vault / f"Extra {n}.md").write_text(f"# Extra {n}\n\nExtra {n} uses Kafka.\n")
    config = Path(load_config().path)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[ollama]\nparallel = 2\n")
    with FakeOllama(delay=0.3) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(vault))
        assert drain(vault) == "nothing pending"
        fake.settle()
        assert fake.max_inflight == 2 and fake.chat_calls == 6 and graph(vault)["graph"]["counts"]["pending"] == 0
