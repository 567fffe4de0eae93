"""Entities a note names by its form, without a model (`extract.stated_entities`).

The lines here are fixtures written for each rule, not lines of a gold set: the rules were chosen
on the tune half of tests/gold_heldout, and its held-out half must never be a test's fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extract.llm_prompt import verify_answer
from extract.stated_entities import guess_type, stated_entities
from vault_kg.core import model as m
from vault_kg.core.scopes import vault_scope
from vault_kg.update.engine import run


def _names(lines: dict[int, str], props: dict | None = None) -> dict[str, str]:
    return {e["name"]: e["type"] for e in stated_entities(lines, props)}


def test_each_form_gives_a_typed_entity() -> None:
    lines = {
        3: "We moved the nightly jobs to `kubectl` and run `oc get pods` when one hangs.",
        4: "The **Billing Team** owns the [Ledger Service](https://example.org/ledger).",
        5: "Thanks to [Ada Byron](https://github.com/adabyron) and @grace-h for the review.",
        6: "Last week the migration to Terraform Cloud went well, and Grafana showed it.",
    }
    assert _names(lines, {"tools": ["Postgres", "[[Redis]]"], "client": "Globex"}) == {
        "Postgres": "tool",
        "Redis": "tool",
        "Globex": "client",
        "kubectl": "tool",
        "oc": "tool",
        "Billing Team": "team",
        "Ledger Service": "service",
        "Ada Byron": "person",
        "@grace-h": "person",
        "Terraform Cloud": "person",  # two plain capitalised words: the shape of most people's names
        "Grafana": "tool",
    }


def test_a_table_column_names_the_type_of_its_cells() -> None:
    lines = {
        10: "| Service | Owner | Notes |",
        11: "|---|---|---|",
        12: "| Checkout | Dana Scully, Fox Mulder | moved in May |",
        13: "| Search | [Walter Skinner](https://example.org/ws) | - |",
    }
    names = _names(lines)
    assert {k: names[k] for k in ("Checkout", "Search", "Dana Scully", "Fox Mulder", "Walter Skinner")} == {
        "Checkout": "service",
        "Search": "service",
        "Dana Scully": "person",
        "Fox Mulder": "person",
        "Walter Skinner": "person",
    }
    assert "Notes" not in names and "moved in May" not in names, "a column no type names gives nothing"


@pytest.mark.parametrize(
    "line",
    [
        "Then it failed. Monday was quiet.",  # a sentence's first word, a weekday
        "See the HTTP API and the CPU graph of PR 12 on 2024-01-02.",  # generic abbreviations and numbers
        "Fixed in [ipfs/js-ipfs#3363](https://github.com/ipfs/js-ipfs/pull/3363) and [#42](https://x.org/42).",  # issue references
        "Set `MAX_RETRIES` and call `retryLater()` from `config.yaml`, on branch `storage.Interface`.",  # code, not tools
        "**Access controls** are described below. **Caveat:** none yet.",  # a bold phrase, a bold label
        "[Mailing list](https://groups.example.org) and [here](https://example.org)",  # link texts that are not names
        "then MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn and a4F9kQ2zLmP8xR7t",  # a key's body, a token: no trigger word, key-shaped
    ],
)
def test_words_that_are_not_names_give_nothing(line: str) -> None:
    assert _names({1: line}) == {}


def test_a_secret_on_a_line_never_becomes_a_name() -> None:
    line = "Connect with postgres://admin:Tr0ub4dor-and-3@db.internal:5432/app from Grafana."
    assert _names({1: line}) == {"Grafana": "tool"}


def test_one_entity_per_name_and_a_typed_mention_wins() -> None:
    found = stated_entities({1: "Ran it on Kestrel Cluster today.", 2: "The `kestrel` CLI and **Kestrel Cluster** again."})
    assert [(e["name"], e["type"], e["line"]) for e in found] == [("Kestrel Cluster", "service", 1), ("kestrel", "tool", 2)]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("Platform Team", "team"),
        ("@org/reviewers", "team"),
        ("Payments API", "api"),
        ("Go Style Guide", "convention"),
        ("0007. Use Kafka", "decision"),
        ("Acme Corp", "organization"),
        ("Data Migration", "project"),
        ("Search Cluster", "service"),
        ("Wiremock", "tool"),
        ("Beth Griggs", "person"),
        ("Blue Sky 2", "concept"),
    ],
)
def test_a_names_own_words_give_its_type(name: str, kind: str) -> None:
    assert guess_type(name) == kind


def test_the_models_type_wins_and_its_misses_are_added() -> None:
    """With the model on, what it names keeps its type; a name it left out is added from the form."""
    raw = {1: "The **Billing Team** uses Grafana and `kubectl`."}
    answer = {"entities": [{"name": "Grafana", "type": "service"}, {"name": "Billing Team", "type": "concept"}], "relations": []}
    entities, _ = verify_answer(answer, raw, {}, ["Note"])
    got = {e["name"]: (e["type"], e["confidence"]) for e in entities}
    assert got == {"Grafana": ("service", m.EXTRACTED), "Billing Team": ("team", m.EXTRACTED), "kubectl": ("tool", m.EXTRACTED)}


NOTE = """---
people: [Dana Scully]
---
# Rollout

Last week we moved Checkout to Kubernetes with `helm` and the **Release Team**.
"""


def _graph(vault: Path) -> dict:
    return json.loads((vault / "kg-out" / "graph.json").read_text())


def _mentions(vault: Path) -> dict[str, str]:
    graph = _graph(vault)
    nodes = {n["id"]: n for n in graph["nodes"]}
    return {nodes[e["target"]]["label"]: nodes[e["target"]].get("entity_type") for e in graph["edges"] if e["relation"] == m.MENTIONS and e["source"] == "note:Rollout.md"}


@pytest.mark.parametrize("model", ["off", "on"])
def test_a_vault_without_a_model_has_typed_entities(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    """KG_NAMES=on, the model off or on with nothing listening (every note pending): the build's
    graph has the entities the note names, typed, each mentioned by the note; an edit that drops a
    name drops its entity, and the incremental graph equals one built from scratch."""
    from scratch_build import artifacts, scratch

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Rollout.md").write_text(NOTE)
    monkeypatch.setenv("KG_OLLAMA", model)
    monkeypatch.setenv("KG_NAMES", "on")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens: the note stays pending
    monkeypatch.setenv("KG_HTML", "off")
    run(vault_scope(vault))
    assert _mentions(vault) == {"Dana Scully": "person", "Checkout": "tool", "Kubernetes": "tool", "helm": "tool", "Release Team": "team"}
    (vault / "Rollout.md").write_text(NOTE.replace(" with `helm`", ""))
    run(vault_scope(vault), paths=[vault / "Rollout.md"])
    assert "helm" not in _mentions(vault)
    assert "entity:helm" not in {n["id"] for n in _graph(vault)["nodes"]}, "no entity left behind"
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_kg_journal_days_add_no_entities_but_hand_written_days_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kg's own journal (agents write it every session) names things in every entry: reading them
    would add nodes per session. A daily note a person keeps elsewhere is read like any note."""
    vault = tmp_path / "vault"
    for folder in ("journal", "Daily"):
        (vault / folder).mkdir(parents=True)
        (vault / folder / "2026-01-02.md").write_text("## 09:00 · infra\n\nMoved the queue to Kestrel Cluster with `helm`.\n")
    monkeypatch.setenv("KG_OLLAMA", "off")
    monkeypatch.setenv("KG_NAMES", "on")
    monkeypatch.setenv("KG_HTML", "off")
    run(vault_scope(vault))
    graph = _graph(vault)
    sources = {e["source"] for e in graph["edges"] if e["relation"] == m.MENTIONS}
    assert sources == {"note:Daily/2026-01-02.md"}
    assert {n["label"] for n in graph["nodes"] if n["kind"] == m.ENTITY} == {"Kestrel Cluster", "helm"}


@pytest.mark.parametrize("names", [None, "off"])
def test_without_kg_names_on_a_vault_without_a_model_has_no_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: str | None) -> None:
    """Off by default: an edit that changes a note's names would leave the hook's fast paths."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Rollout.md").write_text(NOTE)
    monkeypatch.setenv("KG_OLLAMA", "off")
    monkeypatch.setenv("KG_HTML", "off")
    if names is None:
        monkeypatch.delenv("KG_NAMES", raising=False)
    else:
        monkeypatch.setenv("KG_NAMES", names)
    run(vault_scope(vault))
    assert not [n for n in _graph(vault)["nodes"] if n["kind"] == m.ENTITY]
