"""The real `ollama` client against the loopback fake: the call, the prompt, chunking, loops."""

from __future__ import annotations

from pathlib import Path

import httpx
import ollama

from llm_notes import ALWAYS_LOOP, BASIC, LOOP, MODEL, REPEATS, content_hash, long_note
from ollama_fake import FakeOllama

from extract.llm_cache import LlmCache
from extract.llm import ENTITY_TYPES, MAX_ENTITIES, MAX_RELATIONS, RELATIONS, SEED, OllamaExtractor
from vault_kg.model import AMBIGUOUS, EXTRACTED, INFERRED


def _extractor(url: str, cache: Path | None, **kw) -> OllamaExtractor:
    kw.setdefault("backoff_s", 0.01)
    return OllamaExtractor(url, MODEL, timeout=5.0, cache_dir=cache, **kw)


def _rel(result, source: str, relation: str, target: str) -> dict:
    found = [r for r in result.relations if (r["source"], r["relation"], r["target"]) == (source, relation, target)]
    assert len(found) == 1, (source, relation, target, result.relations)
    return found[0]


def test_request_is_the_documented_call(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("clients/Acme Corp.md", BASIC, content_hash(BASIC), ["Maria Chen", "Semrush"])
        request = fake.requests[0]
    assert result.status == "ok" and result.calls == 1 and not result.cache_hit
    assert request["stream"] is False and request["think"] is False
    options = request["options"]
    assert options["temperature"] == 0 and options["seed"] == SEED
    assert options["num_ctx"] >= 2048 and options["num_ctx"] % 1024 == 0
    schema = request["format"]
    assert schema["properties"]["entities"]["maxItems"] == MAX_ENTITIES
    assert schema["properties"]["relations"]["maxItems"] == MAX_RELATIONS
    assert schema["properties"]["entities"]["items"]["properties"]["type"]["enum"] == list(ENTITY_TYPES)
    assert schema["properties"]["relations"]["items"]["properties"]["relation"]["enum"] == list(RELATIONS)
    assert "line" in schema["properties"]["relations"]["items"]["required"]
    assert result.eval_tokens_per_s and result.eval_tokens_per_s > 0


def test_prompt_delimits_note_and_leaves_out_code_frontmatter_urls(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        _extractor(fake.url, tmp_path).extract_note("clients/Acme Corp.md", BASIC, content_hash(BASIC), ["Maria Chen", "Nobody Here"])
        system, user = (m["content"] for m in fake.requests[0]["messages"])
    assert "untrusted" in system
    assert user.count("<note>") == 1 and user.rstrip().endswith("</note>")
    assert "LeakedLibrary" not in user and "summary:" not in user and "client/acme" not in user
    assert "http" not in user and "secret-url" not in user
    assert "9: Maria Chen works on Acme Corp." in user  # FILE line numbers, frontmatter counted
    assert "KNOWN NAMES: Maria Chen" in user and "Nobody Here" not in user
    assert "NOTE TITLE: Acme Corp" in user


def test_relations_are_verified_with_file_line_numbers(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("clients/Acme Corp.md", BASIC, content_hash(BASIC), [])
    works = _rel(result, "Maria Chen", "works_on", "Acme Corp")
    assert (works["confidence"], works["score"], works["line"]) == (EXTRACTED, 1.0, 9)
    uses = _rel(result, "Acme Corp", "uses", "Semrush")  # "Acme" is the note's own alias
    assert uses["confidence"] == EXTRACTED and uses["line"] == 10
    assert _rel(result, "Acme Corp", "uses", "Redis")["confidence"] == AMBIGUOUS  # "do NOT use"
    flipped = _rel(result, "OpenSearch", "replaces", "Elasticsearch")  # model said the reverse
    assert flipped["confidence"] == INFERRED and "reversed" in flipped["check"]
    assert _rel(result, "Maria Chen", "owns", "Semrush")["confidence"] == AMBIGUOUS
    assert not any(r["source"] == "it" for r in result.relations)
    assert "it" not in {e["name"] for e in result.entities}
    assert {e["name"]: e["line"] for e in result.entities}["Semrush"] == 10


def test_long_note_is_split_by_headings(tmp_path: Path) -> None:
    text = long_note()
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Services.md", text, content_hash(text), [])
        users = [r["messages"][1]["content"] for r in fake.requests]
    assert result.status == "ok" and result.calls == len(users) >= 2 and result.chunks == len(users)
    assert all(len(u) < 2200 for u in users)
    assert sum("## Zeta" in u for u in users) == 1
    assert _rel(result, "Alpha Service", "uses", "Kafka")["line"] == 5
    zeta = _rel(result, "Zeta Service", "depends_on", "Postgres")
    assert zeta["line"] == 40 and zeta["confidence"] == EXTRACTED


def test_loop_is_retried_on_smaller_chunks(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Infra.md", LOOP, content_hash(LOOP), [])
        requests = list(fake.requests)
    assert result.status == "ok"
    assert result.calls == len(requests) == 3  # whole note loops, then two halves
    assert any("looping" in w for w in result.warnings)
    assert _rel(result, "Hermes", "uses", "RabbitMQ")["confidence"] == EXTRACTED
    assert _rel(result, "Atlas", "uses", "MinIO")["line"] == 8


def test_endless_loop_leaves_note_pending_and_uncached(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Loopy.md", ALWAYS_LOOP, content_hash(ALWAYS_LOOP), [])
    assert result.status == "pending"
    assert "looping" in result.message and result.message.startswith("Loopy.md: ")
    assert result.entities == [] and LlmCache(tmp_path).keys() == set()


def test_repeated_items_in_valid_json_are_deduplicated_when_chunk_is_minimal(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Echo.md", REPEATS, content_hash(REPEATS), [])
    assert result.status == "ok" and result.calls == 1
    assert [e["name"] for e in result.entities] == ["Echo", "Delta"]
    assert any("de-duplicated" in w for w in result.warnings)


def test_streaming_wire_format_of_the_fake(tmp_path: Path) -> None:
    """The fake streams NDJSON like Ollama: chunks, then a final chunk with metrics."""

    with FakeOllama() as fake:
        client = ollama.Client(host=fake.url, timeout=5)
        parts = list(client.chat(model=MODEL, messages=[{"role": "user", "content": BASIC}], stream=True))
        version = httpx.get(f"{fake.url}/api/version", timeout=5).json()
    assert version == {"version": "0.33.0"}
    assert all(not p.done for p in parts[:-1]) and parts[-1].done and parts[-1].done_reason == "stop"
    assert parts[-1].prompt_eval_count and parts[-1].eval_count and parts[-1].eval_duration
    assert "Maria Chen" in "".join(p.message.content for p in parts)
