"""Pairs of names that share a sentence, listed in the prompt: where the relations are."""

from __future__ import annotations

from pathlib import Path

from llm_notes import MODEL
from ollama_fake import FakeOllama

from extract.llm import OllamaExtractor
from extract.llm_prompt import EXTRACTION_SCHEMA, Chunk, build_prompt
from extract.pair_candidates import MAX_PAIRS, candidate_pairs, names_in

PAIRS_NOTE = """---
tags: [team]
---
# Platform team

Lena Novak leads the Platform team and
works with [[Omar Haddad]].
The team owns search-service.
The Discovery team does not own search-service.
"""


def _pairs(lines: list[str], subject: str = "Platform team", known: tuple[str, ...] = ()) -> list[tuple[str, str, int]]:
    return [(p.first, p.second, p.line) for p in candidate_pairs(list(enumerate(lines, 10)), subject, [subject, *known])]


def test_names_are_capitalised_runs_identifiers_and_known_names() -> None:
    names = [n for _, n in names_in("Priya Raman moved the ingest-worker from Cloud Storage to the Data team; see [[x]].", [])]
    assert names == ["Priya Raman", "ingest-worker", "Cloud Storage", "Data team"]
    assert [n for _, n in names_in("Persistence is a dedicated Postgres database on-call.", [])] == ["Postgres"], (
        "a capitalised word opening the sentence is not a name unless written so elsewhere; on-call is a word"
    )
    assert [n for _, n in names_in("the payments api talks to stripe", ["payments api", "Stripe"])] == ["payments api", "stripe"]


def test_pairs_share_a_sentence_and_the_line_is_the_second_names() -> None:
    lines = ["Lena Novak leads the Platform team and", "works with Omar Haddad. Sven Larsen is on call.", "It runs on Kubernetes."]
    assert _pairs(lines) == [
        ("Lena Novak", "Platform team", 1),
        ("Lena Novak", "Omar Haddad", 2),
        ("Platform team", "Omar Haddad", 2),
        ("Platform team", "Kubernetes", 3),
    ], "a sentence spans lines (the pair's line is the chunk line of its second name, from 1); 'It' opening a sentence is the subject; Sven Larsen shares a sentence with no one"
    assert _pairs(["# Platform team and Omar Haddad"]) == [], "headings are not sentences"
    assert len(_pairs([f"Name{i} Alpha uses Name{i} Beta." for i in range(40)])) == MAX_PAIRS
    crowded = "Alpha Corp met Beta Corp, Gamma Corp, Delta Corp, Epsilon Corp and Zeta Corp."
    assert len(_pairs([crowded, crowded])) == 10, "at most 5 names a sentence (10 pairs), each pair once"


def test_prompt_lists_the_pairs_and_the_answer_keeps_its_shape(tmp_path: Path) -> None:
    """The pairs are where the relations are; the model answers them in its `relations` (no extra
    output field: output tokens are what a CPU pays for), and each pair is listed once."""
    prompt = build_prompt("Platform team", Chunk([(5, "Lena Novak leads the Platform team."), (6, "It runs on Kubernetes.")]), [])
    assert 'PAIRS:\nline 1: "Lena Novak", "Platform team"\nline 2: "Platform team", "Kubernetes"\n<note>' in prompt
    assert "PAIRS:" not in build_prompt("T", Chunk([(1, "Nothing to relate here.")]), [])
    with FakeOllama() as fake:
        result = OllamaExtractor(fake.url, MODEL, timeout=5.0, cache_dir=tmp_path).extract_note("Platform team.md", PAIRS_NOTE)
        request = fake.requests[0]
    assert result.status == "ok" and result.calls == 1
    assert request["format"] == EXTRACTION_SCHEMA
    user = request["messages"][1]["content"]
    assert 'line 3: "Lena Novak", "Omar Haddad"' in user and 'line 5: "Discovery team", "search-service"' in user, "lines counted from the heading, the chunk's line 1"
