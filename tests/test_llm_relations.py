"""Relations a small model gets right: verbs fitted to the ends' types, relations the note's
structure states (no model), and verification that keeps subject relations the text supports.

The notes and lines here are fixtures written for each rule (a route planner, a courier team,
a grocer client), not notes of a gold set: the stated-relations rules were shaped on
tests/gold_independent and the verifier on tests/gold, so testing them on those notes would
only show that they fit the notes they were fitted to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ollama_fake import FakeOllama

from extract.llm_prompt import prose_lines
from extract.relation_types import canonical_relation, fit, type_from_name, type_from_tags
from extract.stated_relations import stated_relations
from extract.verify import verify_extraction
from vault_kg.jobs import model_worker as llm_worker
from vault_kg.core import model as m
from vault_kg.core.config import load_config
from vault_kg.update.engine import run
from vault_kg.core.scopes import vault_scope


@pytest.mark.parametrize(
    ("relation", "source_type", "target_type", "expected"),
    [
        ("owns", "team", "service", ("owns", False)),  # valid as said
        ("owns", "service", "team", ("owns", True)),  # only valid the other way round
        ("works_on", "tool", "tool", ("uses", False)),  # a tool works on nothing: the pair's default verb
        ("works_on", "person", "team", ("part_of", False)),
        ("works_on", "team", "service", ("owns", False)),  # a team working on a service owns it
        ("client_of", "service", "person", ("uses", True)),  # the default verb of person -> service, read backwards
        ("depends_on", None, "tool", ("depends_on", False)),  # an unknown type: as the model said
        ("integrates_with", "service", "tool", ("integrates_with", False)),
    ],
)
def test_fit_keeps_valid_verbs_flips_reversed_pairs_and_defaults_the_rest(relation, source_type, target_type, expected) -> None:
    assert fit(relation, source_type, target_type) == expected


def test_inverse_forms_map_to_one_relation() -> None:
    assert canonical_relation("replaced by") == ("replaces", True)
    assert canonical_relation("Owned-By") == ("owns", True)
    assert canonical_relation("member_of") == ("part_of", False)
    assert canonical_relation("uses") == ("uses", False)
    assert canonical_relation("admires") is None


def test_types_from_tags_and_names() -> None:
    assert type_from_tags(["type/service", "team/courier"], ["Route Planner"]) == "service"
    assert type_from_tags(["person", "scope/delivery"], ["Ines Duarte"]) == "person"
    assert type_from_tags(["client/lindqvist", "scope/delivery"], ["Lindqvist Foods", "Lindqvist"]) == "client"
    assert type_from_tags(["meeting", "client/lindqvist"], ["2026-02-03 Lindqvist kickoff"]) is None, "a tag about another thing"
    assert [type_from_name(n) for n in ("Courier team", "pricing squad", "dispatch-api", "Mapbox API", "quote-service", "RabbitMQ")] == ["team", "team", "api", "api", "service", None]


NOTE = """---
summary: x
owner: "[[Courier team]]"
replaced_by: [dispatch-v3]
---
# route-planner

## Dependencies

- **MySQL** (the `routes` schema, see [[MySQL Upgrade]]) — needed at boot.
- [[RabbitMQ]] carries the job queue. The planner does not retry any job itself.
- Mapbox — road distances.
- Traffic snapshots are fetched every hour.
- **Memcached** — no longer in the path since the cache rework.

## Ownership

| Area | Owner | Backup |
| --- | --- | --- |
| Planner API & pager | [[Ines Duarte]] | [[Tomas Berg]] |
| Ingress / HAProxy config | Network rota (see [[HAProxy]]) | — |
| `RP_MAX_STOPS` | Nobody | — |
"""


def _triples(relations: list[dict]) -> set[tuple[str, str, str]]:
    return {(r["source"], r["relation"], r["target"]) for r in relations}


def test_stated_relations_from_lists_tables_and_properties() -> None:
    raw, _ = prose_lines(NOTE)
    found = stated_relations(raw, "route-planner", {"owner": "[[Courier team]]", "replaced_by": ["dispatch-v3"]}, "service")
    assert _triples(found) == {
        ("Courier team", "owns", "route-planner"),  # property owner: the value owns the note
        ("dispatch-v3", "replaces", "route-planner"),  # replaced_by: the inverse form, read backwards
        ("route-planner", "depends_on", "MySQL"),  # the bold name the item starts with, not the later link
        ("route-planner", "depends_on", "RabbitMQ"),  # a negation after the first sentence does not count
        ("route-planner", "depends_on", "Mapbox"),  # a plain name followed by a dash
        ("Ines Duarte", "owns", "route-planner"),  # a row about no other entity is about the note
        ("Tomas Berg", "works_on", "route-planner"),
        ("Network rota", "owns", "HAProxy"),  # the row names HAProxy, linked in another cell
    }, "no 'Traffic' (a sentence, not a name), no Memcached (negated), no row keyed by code"
    assert all(r["confidence"] == m.EXTRACTED and r["check"].startswith("stated by the note's") for r in found)
    assert {r["line"] for r in found if r["target"] == "RabbitMQ"} == {11}


def test_a_table_link_with_an_escaped_pipe_names_its_note_as_the_vault_graph_does() -> None:
    raw, _ = prose_lines("# Planner\n\n| Service | Owner |\n| --- | --- |\n| Planner | [[Ines Duarte\\|Ines]] |\n")
    assert _triples(stated_relations(raw, "Planner", None, "service")) == {("Ines Duarte", "owns", "Planner")}


def test_a_decisions_table_owner_owns_the_step_not_the_decision() -> None:
    raw, _ = prose_lines("# ADR-31\n\n| Step | Owner |\n| --- | --- |\n| Drain the old job queue | Ines |\n")
    assert stated_relations(raw, "ADR-31", None, "decision") == []
    assert _triples(stated_relations(raw, "Planner", None, "service")) == {("Ines", "owns", "Planner")}


def test_a_person_notes_team_property_is_membership() -> None:
    assert _triples(stated_relations({}, "Tomas Berg", {"team": "Courier team"}, "person")) == {("Tomas Berg", "part_of", "Courier team")}
    assert _triples(stated_relations({}, "quote-service", {"team": "Pricing team"}, "service")) == {("Pricing team", "owns", "quote-service")}


def _verify(lines, relations, entities=(), subject=("Lindqvist Foods",), subject_type=None, stated=()):
    return verify_extraction(list(entities), relations, lines, {}, list(subject), subject_type, list(stated))


def test_subject_relations_without_a_pronoun_are_inferred() -> None:
    lines = {3: "Lindqvist Foods sells groceries.", 5: "[[Ines Duarte]] runs the delivery account.", 6: "Web shop on WooCommerce, not on BigCommerce."}
    _, rels = _verify(
        lines,
        [
            {"source": "Lindqvist Foods", "relation": "works_on", "target": "Ines Duarte", "line": 5},
            {"source": "Lindqvist Foods", "relation": "uses", "target": "WooCommerce", "line": 3},
            {"source": "Lindqvist Foods", "relation": "uses", "target": "BigCommerce", "line": 6},
        ],
        entities=[{"name": "Ines Duarte", "type": "person"}, {"name": "WooCommerce", "type": "tool"}, {"name": "BigCommerce", "type": "tool"}],
        subject_type="client",
    )
    by_target = {r["target"]: r for r in rels if r["source"] != "Ines Duarte"} | {r["source"]: r for r in rels if r["source"] == "Ines Duarte"}
    ines = by_target["Ines Duarte"]
    assert (ines["source"], ines["relation"], ines["target"], ines["confidence"], ines["score"]) == ("Ines Duarte", "works_on", "Lindqvist Foods", m.INFERRED, 0.5)
    woo = by_target["WooCommerce"]  # cited on the wrong line: found on another, the other end being the subject
    assert (woo["confidence"], woo["score"], woo["line"]) == (m.INFERRED, 0.4, 6)
    assert by_target["BigCommerce"]["confidence"] == m.AMBIGUOUS, "negated on the line that names it"


def test_passive_by_flips_a_subject_relation_and_one_relation_per_pair() -> None:
    lines = {4: "It is called by route-planner when a driver's shift ends."}
    _, rels = _verify(
        lines,
        [
            {"source": "shift-notifier", "relation": "uses", "target": "route-planner", "line": 4},
            {"source": "shift-notifier", "relation": "depends_on", "target": "route-planner", "line": 4},
        ],
        subject=["shift-notifier"],
    )
    assert len(rels) == 1, "one relation per pair of ends"
    assert (rels[0]["source"], rels[0]["target"]) == ("route-planner", "shift-notifier")


def test_a_relation_no_verb_fits_is_ambiguous() -> None:
    """Two people named on one line are not related by `depends_on` (or any verb): the ends' types
    say so, and the relation is kept out of the EXTRACTED/INFERRED graph; a fitting one stays."""
    lines = {2: "Ines Duarte leads the Courier team; Tomas Berg is the other member."}
    people = [{"name": "Ines Duarte", "type": "person"}, {"name": "Tomas Berg", "type": "person"}, {"name": "Courier team", "type": "team"}]
    _, rels = _verify(
        lines, [{"source": "Ines Duarte", "relation": "depends_on", "target": "Tomas Berg", "line": 2}, {"source": "Tomas Berg", "relation": "part_of", "target": "Courier team", "line": 2}], people
    )
    verdict = {(r["source"], r["target"]): r for r in rels}
    assert verdict[("Ines Duarte", "Tomas Berg")]["confidence"] == m.AMBIGUOUS
    assert verdict[("Ines Duarte", "Tomas Berg")]["check"].endswith("no relation fits a person and a person")
    assert verdict[("Tomas Berg", "Courier team")]["confidence"] == m.EXTRACTED


def test_stated_relations_replace_the_models_for_the_same_pair() -> None:
    lines = {3: "route-planner keeps the stops in MySQL."}
    stated = [{"source": "route-planner", "relation": "depends_on", "target": "MySQL", "line": 9, "confidence": m.EXTRACTED, "score": 1.0, "check": "stated by the note's list"}]
    entities, rels = _verify(lines, [{"source": "MySQL", "relation": "uses", "target": "route-planner", "line": 3}], subject=["route-planner"], stated=stated)
    assert _triples(rels) == {("route-planner", "depends_on", "MySQL")} and rels[0]["line"] == 9
    assert {e["name"] for e in entities} == {"route-planner", "MySQL"}, "the stated ends become entities"


STATED_NOTE = """---
summary: card payments
tags: [type/service]
owner: "[[Platform team]]"
---
# payments-api

payments-api takes card payments. FIXTURE-stated
It works with the Stripe API for card data.

## Dependencies

- **Postgres** — the ledger.
- [[Kafka]] — payment events.
- Redis — no longer used.
"""


def _stated_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str) -> Path:
    """A vault of STATED_NOTE, the model pass `on` or `off`, no graph.html."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "payments-api.md").write_text(STATED_NOTE)
    monkeypatch.setenv("KG_OLLAMA", model)
    monkeypatch.setenv("KG_HTML", "off")
    return vault


def _drain(vault: Path) -> None:
    scope = vault_scope(vault)
    assert llm_worker.Worker(scope.root, scope.out, load_config()).drain() == "nothing pending"


@pytest.fixture
def answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A vault of STATED_NOTE, built and drained by the worker against the fake server (left running)."""
    vault = _stated_vault(tmp_path, monkeypatch, "on")
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(vault))
        _drain(vault)
        yield vault, fake


def _graph(vault: Path) -> dict:
    return json.loads((vault / "kg-out" / "graph.json").read_text())


def test_model_path_keeps_stated_and_fitted_relations(answered) -> None:
    """Through the worker, the real client and the fake server: the model's wrong direction and
    verbs are replaced by what the note states, and its subject relation is fitted."""
    vault, fake = answered
    assert fake.chat_calls == 1, "the stated relations cost no call"
    edges = _graph(vault)["edges"]
    llm = {(e["source"], e["relation"], e["target"]): e for e in edges if e.get("via") in ("llm", "stated") and e["relation"] != m.MENTIONS}
    pairs = [frozenset((e["source"], e["target"])) for e in edges if e.get("via") in ("llm", "stated") and e["relation"] != m.MENTIONS]
    assert len(pairs) == len(set(pairs)), "the model's answer adds no second edge for a pair the note states"
    note = "note:payments-api.md"
    assert set(llm) == {
        ("entity:platform-team", "owns", note),
        (note, "depends_on", "entity:postgres"),
        (note, "depends_on", "entity:kafka"),
        (note, "uses", "entity:stripe-api"),
    }
    assert llm[("entity:platform-team", "owns", note)]["check"] == "stated by the note's property owner"
    assert {k for k, e in llm.items() if e["via"] == "stated"} == set(llm) - {(note, "uses", "entity:stripe-api")}
    assert llm[(note, "depends_on", "entity:postgres")]["confidence"] == m.EXTRACTED
    stripe = llm[(note, "uses", "entity:stripe-api")]
    assert (stripe["confidence"], stripe["fitted"]) == (m.INFERRED, "works_on"), "works_on fitted to uses; the subject is 'It'"
    assert "fitted" not in llm[(note, "depends_on", "entity:postgres")]


def test_a_new_verifier_reverifies_stored_answers_without_a_call(answered, monkeypatch: pytest.MonkeyPatch) -> None:
    """The verifier's version is part of the pass's mode, not of the answers' keys: after an
    upgrade the next build verifies every stored answer again, and asks the model nothing."""
    from extract import verifier_version, verify

    vault, fake = answered
    requests = len(fake.log)
    before = _graph(vault)
    assert run(vault_scope(vault)).extra.get("rederived_owners") != "all", "same verifier: nothing to redo"
    assert verify.VERIFIER_VERSION == verifier_version.VERIFIER_VERSION, "one version, defined in extract/verifier_version.py"
    monkeypatch.setattr(verifier_version, "VERIFIER_VERSION", verifier_version.VERIFIER_VERSION + 1)
    result = run(vault_scope(vault))
    assert len(fake.log) == requests, "no request to the model"
    after = _graph(vault)
    assert result.extra["rederived_owners"] == "all"
    assert after["graph"]["counts"]["pending"] == 0
    assert [e for e in after["edges"] if e.get("via") in ("llm", "stated")] == [e for e in before["edges"] if e.get("via") in ("llm", "stated")], (
        "the same stored answers, verified again, give the same edges"
    )


def _stated_edges(vault: Path) -> set[tuple[str, str, str, str, str]]:
    return {(e["source"], e["relation"], e["target"], e["confidence"], e["owner"]) for e in _graph(vault)["edges"] if e.get("via") == "stated" and e["relation"] != m.MENTIONS}


def test_stated_relations_land_with_the_model_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KG_OLLAMA=off: the deterministic pass adds the relations lists and properties state, owned by
    the note and EXTRACTED; a name becomes the note with that title once one exists (incremental
    equals from scratch), and an edit that drops the list drops its relations."""
    from scratch_build import artifacts, scratch

    vault = _stated_vault(tmp_path, monkeypatch, "off")
    run(vault_scope(vault))
    note = "note:payments-api.md"
    assert _stated_edges(vault) == {
        ("entity:platform-team", "owns", note, m.EXTRACTED, "payments-api.md"),
        (note, "depends_on", "entity:postgres", m.EXTRACTED, "payments-api.md"),
        (note, "depends_on", "entity:kafka", m.EXTRACTED, "payments-api.md"),
    }
    assert not any(e.get("via") == "llm" for e in _graph(vault)["edges"]), "no model relation with the model off"
    (vault / "Kafka.md").write_text("# Kafka\n")
    (vault / "Platform.md").write_text("---\naliases: [Platform team]\n---\n# Platform\n")
    run(vault_scope(vault), paths=[vault / "Kafka.md", vault / "Platform.md"])
    assert {(s, r, t) for s, r, t, _, _ in _stated_edges(vault)} == {
        ("note:Platform.md", "owns", note),
        (note, "depends_on", "entity:postgres"),
        (note, "depends_on", "note:Kafka.md"),
    }
    assert "entity:kafka" not in {n["id"] for n in _graph(vault)["nodes"]}, "no ghost entity once the note exists"
    assert artifacts(vault) == scratch(vault, tmp_path)
    (vault / "payments-api.md").write_text(STATED_NOTE.split("## Dependencies")[0])
    run(vault_scope(vault), paths=[vault / "payments-api.md"])
    assert {(s, r, t) for s, r, t, _, _ in _stated_edges(vault)} == {("note:Platform.md", "owns", note)}
    assert artifacts(vault) == scratch(vault, tmp_path)


def test_a_pending_note_has_its_stated_relations_before_the_model_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Model on: the build lands the stated relations at once (the note still pending); the answer
    that arrives later keeps them, once each."""
    vault = _stated_vault(tmp_path, monkeypatch, "on")
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(vault))
        assert fake.chat_calls == 0, "the build calls no model"
        before = _stated_edges(vault)
        assert len(before) == 3
        assert _graph(vault)["graph"]["counts"]["pending"] == 1
        _drain(vault)
        assert fake.chat_calls == 1
    assert _stated_edges(vault) == before


def test_an_edit_that_renames_nothing_skips_the_name_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The title/alias tables are rebuilt only when a title, alias or note changed (they cost
    O(vault) on every update otherwise); the graph still follows a rename."""
    from extract import llm_pass

    vault = _stated_vault(tmp_path, monkeypatch, "off")
    (vault / "Other.md").write_text("# Other\n\nSome text.\n")
    run(vault_scope(vault))
    calls = []
    real = llm_pass.name_tables
    monkeypatch.setattr(llm_pass, "name_tables", lambda exts: calls.append(1) or real(exts))
    (vault / "Other.md").write_text("# Other\n\nSome other text.\n")
    run(vault_scope(vault), paths=[vault / "Other.md"])
    assert calls == [], "a body edit: no table rebuilt"
    (vault / "Other.md").write_text("---\naliases: [Postgres]\n---\n# Other\n")
    run(vault_scope(vault), paths=[vault / "Other.md"])
    assert calls == [1]
    assert (m.note_id("payments-api.md"), "depends_on", "note:Other.md") in {(s, r, t) for s, r, t, _, _ in _stated_edges(vault)}


def test_the_gate_admits_every_heading_a_rule_reads() -> None:
    """`stated_gate.may_state` answers for most notes without importing the rules: it must say yes
    to each heading one of `stated_relations.HEADINGS` reads, and no to the others."""
    from extract.stated_gate import may_state
    from extract.stated_relations import HEADINGS

    headings = [
        "Dependencies",
        "Depends on",
        "Used by",
        "Owners",
        "Maintained by",
        "Who owns it",
        "Members",
        "Replaced by",
        "Predecessors",
        "Integrations",
        "Stack",
        "What it talks to",
        "Tooling",
        "Notes",
        "History",
        "Overview",
        "Ownership",
        "Owner's manual",
        "Tools and tips",
        "Downstream consumers",
        "Setup",
        "Integration tests",
    ]
    for heading in headings:
        expected = any(pattern.search(heading) for pattern, _, _ in HEADINGS)
        assert may_state([[2, heading, 5]], None, b"text") == expected, heading
    assert sum(may_state([[2, h, 5]], None, b"") for h in headings) >= 10
    assert may_state([], {"depends_on": "[[Kafka]]"}, b"") and not may_state([], {"colour": "red"}, b"")
    assert may_state([], None, b"| Service | Owner |\n|---|---|\n") and not may_state([], None, b"| a | b |\n")
