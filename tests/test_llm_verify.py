"""Post-call verification: what the text says decides the confidence, not the model."""

from __future__ import annotations

import pytest

from extract.verify import verify_extraction
from vault_kg.core.model import AMBIGUOUS, EXTRACTED, INFERRED


def _check(lines: dict[int, str], source: str, relation: str, target: str, line: int | None, **kw) -> dict:
    _, rels = verify_extraction([], [{"source": source, "relation": relation, "target": target, "line": line}], lines, kw.get("aliases", {}), kw.get("subject", []))
    return rels[0]


@pytest.mark.parametrize(
    ("text", "source", "relation", "target", "confidence"),
    [
        ("payments-api depends on Postgres.", "payments-api", "depends_on", "Postgres", EXTRACTED),
        ("We do NOT use Redis in payments-api.", "payments-api", "uses", "Redis", AMBIGUOUS),
        ("payments-api no longer uses Redis.", "payments-api", "uses", "Redis", AMBIGUOUS),
        ("Initech uses Ahrefs instead of Semrush.", "Initech", "uses", "Semrush", AMBIGUOUS),
        ("Initech uses Ahrefs instead of Semrush.", "Initech", "uses", "Ahrefs", EXTRACTED),
        ("payments-api does not use Redis but uses Kafka.", "payments-api", "uses", "Kafka", EXTRACTED),
        ("The Platform team owns payments-api, not billing-worker.", "Platform team", "owns", "billing-worker", AMBIGUOUS),
        ("The Platform team owns payments-api, not billing-worker.", "Platform team", "owns", "payments-api", EXTRACTED),
        ("OpenSearch replaced Elasticsearch.", "OpenSearch", "replaces", "Elasticsearch", EXTRACTED),
        ("We replaced Magento with Shopify.", "Shopify", "replaces", "Magento", EXTRACTED),
        ("Integrations talk to the payments_api and Kafka.", "payments-api", "integrates_with", "Kafka", EXTRACTED),
    ],
)
def test_cited_line(text: str, source: str, relation: str, target: str, confidence: str) -> None:
    assert _check({3: text}, source, relation, target, 3)["confidence"] == confidence
    found = _check({1: "Intro without names.", 3: text}, source, relation, target, None)
    assert (found["confidence"], found["line"]) == (confidence, 3), "no line cited: the line naming both ends is judged the same"


def test_no_cited_line_takes_the_first_line_naming_both_ends() -> None:
    lines = {4: "Elasticsearch was replaced by OpenSearch.", 6: "search-service uses OpenSearch; Elasticsearch is gone."}
    rel = _check(lines, "Elasticsearch", "replaces", "OpenSearch", None)
    assert (rel["source"], rel["line"], rel["confidence"], rel["score"]) == ("OpenSearch", 4, INFERRED, 0.6)
    rel = _check({2: "Intro.", 5: "Acme uses Webflow."}, "Acme", "uses", "Webflow", None)
    assert (rel["confidence"], rel["score"], rel["line"], rel["check"]) == (EXTRACTED, 1.0, 5, "both ends on line 5")
    subject = _check({2: "Deploys go through Jenkins."}, "payments-api", "uses", "Jenkins", None, subject=["payments-api"])
    assert (subject["confidence"], subject["line"]) == (INFERRED, 2), "one end found, the other is the note's subject"
    ghost = _check({2: "Acme uses Webflow."}, "Acme", "uses", "Drupal", None)
    assert (ghost["confidence"], ghost["line"]) == (AMBIGUOUS, None)


@pytest.mark.parametrize(
    ("text", "source", "target", "expected_source"),
    [
        ("Elasticsearch was replaced by OpenSearch.", "Elasticsearch", "OpenSearch", "OpenSearch"),
        ("We replaced Magento with Shopify.", "Magento", "Shopify", "Shopify"),
        ("We migrated from MySQL to BigQuery.", "MySQL", "BigQuery", "BigQuery"),
    ],
)
def test_replacement_direction_is_corrected(text: str, source: str, target: str, expected_source: str) -> None:
    rel = _check({1: text}, source, "replaces", target, 1)
    assert rel["source"] == expected_source and rel["confidence"] == INFERRED and rel["score"] == 0.6


def test_passive_voice_flips_the_edge() -> None:
    rel = _check({1: "Ledger is owned by Quill."}, "Ledger", "owns", "Quill", 1)  # types unknown: the text decides
    assert (rel["source"], rel["target"], rel["confidence"]) == ("Quill", "Ledger", INFERRED)
    # a team can own an API, not the other way round: the types flip it first, the text confirms it
    rel = _check({1: "payments-api is owned by the Platform team."}, "payments-api", "owns", "Platform team", 1)
    assert (rel["source"], rel["target"], rel["confidence"]) == ("Platform team", "payments-api", EXTRACTED)
    assert rel["fitted"] == "owns (reversed)"
    rel = _check({1: "Semrush is used by the SEO team."}, "SEO team", "uses", "Semrush", 1)
    assert rel["confidence"] == EXTRACTED and rel["source"] == "SEO team"


def test_pronoun_and_subject_give_inferred() -> None:
    lines = {5: "It depends on Postgres.", 7: "Maria Chen joined in May.", 8: "She works on Acme Corp."}
    rel = _check(lines, "payments-api", "depends_on", "Postgres", 5, subject=["payments-api"])
    assert rel["confidence"] == INFERRED and rel["score"] == 0.5
    assert _check(lines, "Maria Chen", "works_on", "Acme Corp", 8)["confidence"] == INFERRED


def test_wrong_line_is_corrected_and_missing_ends_are_ambiguous() -> None:
    lines = {1: "Intro.", 2: "Acme uses Webflow."}
    rel = _check(lines, "Acme", "uses", "Webflow", 1)
    assert (rel["confidence"], rel["line"], rel["score"]) == (INFERRED, 2, 0.7)
    ghost = _check(lines, "Acme", "uses", "Drupal", 2)
    assert ghost["confidence"] == AMBIGUOUS and ghost["score"] == 0.3


def test_alias_counts_as_a_mention() -> None:
    rel = _check({1: "Data Studio reads BigQuery."}, "Looker Studio", "uses", "BigQuery", 1, aliases={"looker-studio": ["Data Studio"]})
    assert rel["confidence"] == EXTRACTED


def test_similar_names_are_not_mentions_of_each_other() -> None:
    rel = _check({1: "payments-worker uses Redis."}, "payments-api", "uses", "Redis", 1)
    assert rel["confidence"] != EXTRACTED


def test_entities_not_in_the_text_are_ambiguous() -> None:
    entities, _ = verify_extraction([{"name": "Kafka", "type": "tool"}, {"name": "Pulsar", "type": "tool"}], [], {4: "We use Kafka."}, {}, [])
    assert [(e["name"], e["confidence"], e["line"]) for e in entities] == [("Kafka", EXTRACTED, 4), ("Pulsar", AMBIGUOUS, None)]
