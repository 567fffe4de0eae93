"""Entity naming, note anchoring, near-duplicates (listed, never merged) and the graph contribution."""

from __future__ import annotations

from extract.entities import build_title_index, canonical_name, likely_duplicates, llm_graph
from extract.llm import NoteLlmResult
from vault_kg.core.model import AMBIGUOUS, EXTRACTED, INFERRED, MENTIONS


def test_canonical_names_collapse_spelling_only() -> None:
    assert {canonical_name(n) for n in ["The Payments API", "payments_api", "payments-api", "Payments  API"]} == {"payments-api"}
    assert canonical_name("Acme's") == "acme"
    assert canonical_name("payments-worker") != canonical_name("payments-api")


def test_near_duplicates_are_listed_not_merged() -> None:
    pairs = likely_duplicates(["payments-api", "payments-worker", "Acme", "Acme Corp", "GSC", "Google Search Console", "Semrush", "Ahrefs"])
    assert {(a, b) for a, b, _ in pairs} == {
        ("payments-api", "payments-worker"),
        ("acme", "acme-corp"),
        ("google-search-console", "gsc"),
    }
    assert all(reason for _, _, reason in pairs)


def _result() -> NoteLlmResult:
    return NoteLlmResult(
        status="ok",
        entities=[
            {"name": "payments-api", "type": "service", "line": 3, "confidence": EXTRACTED, "score": 1.0},
            {"name": "payments-worker", "type": "service", "line": 4, "confidence": EXTRACTED, "score": 1.0},
            {"name": "Postgres", "type": "tool", "line": 3, "confidence": EXTRACTED, "score": 1.0},
            {"name": "Acme", "type": "client", "line": 5, "confidence": EXTRACTED, "score": 1.0},
            {"name": "Pulsar", "type": "tool", "line": None, "confidence": AMBIGUOUS, "score": 0.3},
        ],
        relations=[
            {"source": "payments-api", "relation": "depends_on", "target": "Postgres", "line": 3, "confidence": EXTRACTED, "score": 1.0, "check": "ok"},
            {"source": "payments-worker", "relation": "uses", "target": "Acme", "line": 5, "confidence": INFERRED, "score": 0.5, "check": "nearby"},
        ],
    )


def test_llm_graph_nodes_and_edges() -> None:
    index = build_title_index({"note:services/payments-api.md": ["payments-api"], "note:clients/Acme Corp.md": ["Acme Corp", "Acme"]})
    nodes, edges = llm_graph("services/payments-api.md", "note:services/payments-api.md", _result().to_dict(), index)
    assert set(nodes) == {"entity:payments-worker", "entity:postgres", "entity:pulsar"}  # never merged with payments-api
    assert nodes["entity:postgres"] == {
        "kind": "entity",
        "label": "Postgres",
        "entity_type": "tool",
        "source": "services/payments-api.md",
        "sources": ["services/payments-api.md"],
        "aliases": [],
    }
    mentions = {e["target"]: e for e in edges if e["relation"] == MENTIONS}
    assert "note:services/payments-api.md" not in mentions  # no self-mention
    assert mentions["note:clients/Acme Corp.md"]["line"] == 5  # an entity named like a note IS the note
    assert mentions["entity:pulsar"]["confidence"] == AMBIGUOUS
    typed = [e for e in edges if e["relation"] != MENTIONS]
    assert [(e["source"], e["relation"], e["target"], e["confidence"]) for e in typed] == [
        ("note:services/payments-api.md", "depends_on", "entity:postgres", EXTRACTED),
        ("entity:payments-worker", "uses", "note:clients/Acme Corp.md", INFERRED),
    ]
    for e in edges:
        assert e["owner"] == "services/payments-api.md" and e["score"] > 0 and "confidence" in e and "line" in e


def test_pending_result_contributes_nothing() -> None:
    assert llm_graph("a.md", "note:a.md", NoteLlmResult(status="pending"), {}) == ({}, [])


def test_result_round_trips_through_meta() -> None:
    result = _result()
    assert NoteLlmResult.from_dict(result.to_dict()) == result
