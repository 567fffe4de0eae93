"""The real `ollama` client against the loopback fake: the call, the prompt, chunking, loops."""

from __future__ import annotations

from pathlib import Path

import httpx
import ollama

from llm_notes import ALWAYS_LOOP, BASIC, LOOP, MODEL, REPEATS, long_note
from ollama_fake import FakeOllama

from extract.llm_cache import LlmCache
from extract.llm import (
    ENTITY_TYPES,
    EXTRACTION_SCHEMA,
    MAX_ENTITIES,
    MAX_RELATIONS,
    NUM_PREDICT,
    RELATIONS,
    SEED,
    SYSTEM_PROMPT,
    OllamaExtractor,
    largest_answer,
    plan_note,
)
from vault_kg.core.model import AMBIGUOUS, EXTRACTED, INFERRED


def _extractor(url: str, cache: Path | None, **kw) -> OllamaExtractor:
    kw.setdefault("backoff_s", 0.01)
    return OllamaExtractor(url, MODEL, timeout=5.0, cache_dir=cache, **kw)


def _rel(result, source: str, relation: str, target: str) -> dict:
    found = [r for r in result.relations if (r["source"], r["relation"], r["target"]) == (source, relation, target)]
    assert len(found) == 1, (source, relation, target, result.relations)
    return found[0]


def test_request_is_the_documented_call(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("clients/Acme Corp.md", BASIC)
        request = fake.requests[0]
    assert result.status == "ok" and result.calls == 1 and not result.cache_hit
    assert request["stream"] is True and request["think"] is False
    options = request["options"]
    assert options == {"temperature": 0, "seed": SEED, "num_ctx": 8192, "num_predict": NUM_PREDICT}
    schema = request["format"]
    assert list(schema["properties"]) == ["relations", "entities"], "relations first: entities are only the names they leave out"
    assert schema["properties"]["entities"]["maxItems"] == MAX_ENTITIES
    assert schema["properties"]["relations"]["maxItems"] == MAX_RELATIONS
    relation, entity = (schema["properties"][k]["items"] for k in ("relations", "entities"))
    assert [p["title"] for p in relation["prefixItems"]] == ["line", "source", "relation", "target"], "arrays, no keys: half the output tokens"
    assert [p["title"] for p in entity["prefixItems"]] == ["name", "type"]
    assert relation["minItems"] == relation["maxItems"] == 4 and entity["minItems"] == entity["maxItems"] == 2
    assert relation["prefixItems"][2]["enum"] == list(RELATIONS) and entity["prefixItems"][1]["enum"] == list(ENTITY_TYPES)
    assert result.eval_tokens_per_s and result.eval_tokens_per_s > 0
    assert result.output_tokens == fake.log[-1]["eval_tokens"] > 0, "output tokens are the server's eval_count"


def test_num_predict_is_the_largest_legal_answer() -> None:
    name = "x" * EXTRACTION_SCHEMA["properties"]["relations"]["items"]["prefixItems"][1]["maxLength"]
    relation = [9999, name, "integrates_with", name]
    entity = [name, "organization"]
    import json

    biggest = json.dumps({"relations": [relation] * MAX_RELATIONS, "entities": [entity] * MAX_ENTITIES})
    assert largest_answer(EXTRACTION_SCHEMA) == NUM_PREDICT == len(biggest)
    assert len(SYSTEM_PROMPT) < 1100, "a short system prompt: the schema carries the format (plus one compact example)"


def test_prompt_delimits_note_and_leaves_out_code_frontmatter_urls(tmp_path: Path) -> None:
    text = BASIC.replace("Maria Chen works on Acme Corp.", "[[people/Maria Chen|Maria]] works on [[Acme Corp]].")
    with FakeOllama() as fake:
        _extractor(fake.url, tmp_path).extract_note("clients/Acme Corp.md", text)
        system, user = (m["content"] for m in fake.requests[0]["messages"])
    assert "untrusted" in system
    assert user.count("<note>") == 1 and user.rstrip().endswith("</note>")
    assert "LeakedLibrary" not in user and "summary:" not in user and "client/acme" not in user
    assert "http" not in user and "secret-url" not in user
    assert "3: Maria works on Acme Corp." in user, "lines numbered from 1 in the chunk: frontmatter edits move nothing"
    assert "KNOWN NAMES: Acme Corp; Maria Chen" in user, "the names the chunk's own links give"
    assert "NOTE TITLE: Acme Corp" in user


def test_relations_are_verified_with_file_line_numbers(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("clients/Acme Corp.md", BASIC)
    works = _rel(result, "Maria Chen", "works_on", "Acme Corp")
    assert (works["confidence"], works["score"], works["line"]) == (EXTRACTED, 1.0, 9)
    uses = _rel(result, "Acme Corp", "uses", "Semrush")  # "Acme" is the note's own alias
    assert uses["confidence"] == EXTRACTED and uses["line"] == 10
    assert _rel(result, "Acme Corp", "uses", "Redis")["confidence"] == AMBIGUOUS  # "do NOT use"
    flipped = _rel(result, "OpenSearch", "replaces", "Elasticsearch")  # model said the reverse
    assert flipped["confidence"] == INFERRED and "reversed" in flipped["check"]
    assert _rel(result, "Maria Chen", "owns", "Semrush")["confidence"] == AMBIGUOUS
    assert not any(r["source"] == "it" for r in result.relations)
    names = {e["name"]: e for e in result.entities}
    assert "it" not in names
    assert names["Semrush"]["line"] == 10 and names["Semrush"]["type"] == "tool"
    assert names["OpenSearch"]["type"] == "tool", "a relation end the model did not list again: typed by the note's form (one capitalised word), not left neutral"


def test_long_note_is_split_by_headings(tmp_path: Path) -> None:
    text = long_note()
    plan = plan_note("Services", text)
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Services.md", text)
        users = [r["messages"][1]["content"] for r in fake.requests]
    assert len(plan.chunks) == 2 and sum(c.chars for c in plan.chunks) > 8000
    assert result.status == "ok" and result.calls == len(users) == result.chunks == 2
    assert all(len(u) < 8400 for u in users)
    assert sum("## Zeta" in u for u in users) == 1
    assert _rel(result, "Alpha Service", "uses", "Kafka")["line"] == 5
    zeta = _rel(result, "Zeta Service", "depends_on", "Postgres")
    assert zeta["line"] == text.splitlines().index("Zeta Service depends on Postgres for storage.") + 1
    assert zeta["confidence"] == EXTRACTED


def test_ordinary_notes_are_one_chunk() -> None:
    text = "# Big\n\n" + "\n\n".join(f"Paragraph {i} about the Payments API and its retries. " * 14 for i in range(10))
    assert 7000 < len(text) < 8000 and len(plan_note("Big", text).chunks) == 1


def test_loop_stops_at_the_first_repeat_keeping_what_came_before(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Infra.md", LOOP)
        fake.settle()
        requests = list(fake.requests)
        cancelled = fake.cancelled
    assert result.status == "ok"
    assert result.calls == len(requests) == 1, "no re-ask: something valid came back"
    assert cancelled == 1, "the stream was closed at the repeat, not read to num_predict"
    assert any("repeated" in w for w in result.warnings)
    assert [(r["source"], r["target"]) for r in result.relations] == [("Hermes", "RabbitMQ")]
    assert _rel(result, "Hermes", "uses", "RabbitMQ")["confidence"] == EXTRACTED


def test_nothing_valid_leaves_note_pending_and_uncached(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Loopy.md", ALWAYS_LOOP)
    assert result.status == "pending" and result.calls == 1, "two lines: too short to ask again in halves"
    assert "num_predict" in result.message and result.message.startswith("Loopy.md: ")
    assert result.entities == [] and LlmCache(tmp_path).keys() == set()


def test_nothing_valid_on_a_longer_chunk_is_asked_again_in_halves(tmp_path: Path) -> None:
    text = "FIXTURE-always-loop: Loopy is a tool.\nIt loops.\n\nIt also has a second paragraph.\nAnd a third line.\n"
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Loopy.md", text)
        users = [r["messages"][1]["content"] for r in fake.requests]
    assert result.status == "pending" and result.calls == 2, "the whole chunk, then its first half (still nothing): stop"
    assert "FIXTURE-always-loop" in users[1] and "third line" not in users[1]


def test_repeated_items_are_deduplicated(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("Echo.md", REPEATS)
    assert result.status == "ok" and result.calls == 1
    assert {e["name"] for e in result.entities} == {"Echo", "Delta"}, "the item after the repeat (Gamma) is not read"
    assert any("repeated" in w for w in result.warnings)


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


def test_fake_serves_one_chat_at_a_time_with_a_delay() -> None:
    import threading
    import time

    with FakeOllama(delay=0.3, serial=True) as fake:
        client = ollama.Client(host=fake.url, timeout=5)

        def ask() -> None:
            client.chat(model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=False)

        started = time.monotonic()
        threads = [threading.Thread(target=ask) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
    chats = [r for r in fake.log if r["path"] == "/api/chat"]
    assert elapsed >= 0.9 and fake.max_inflight == 3 and len(chats) == 3
    ends = sorted(r["t_end"] for r in chats)
    assert all(b - a >= 0.29 for a, b in zip(ends, ends[1:])), "answers come one delay apart"


def test_stream_reader_hands_back_each_array_item_as_it_closes() -> None:
    from extract.llm_stream import ItemScanner

    text = '{"relations": [[1, "A \\"B\\" [x]", "uses", "C"], [2, "D", "owns", "E"]], "entities": [["A", "tool"]]}'
    scanner = ItemScanner()
    cut = text.index('[2, "D"') + 5
    first = [item for char in text[:cut] for item in scanner.feed(char)]
    assert first == [("relations", [1, 'A "B" [x]', "uses", "C"])], "a bracket inside a name does not close the item"
    rest = scanner.feed(text[cut:])
    assert rest == [("relations", [2, "D", "owns", "E"]), ("entities", ["A", "tool"])]
    assert scanner.closed and scanner.whole()["entities"] == [["A", "tool"]]


def test_asking_whether_a_note_has_prose_agrees_with_planning_its_prompt() -> None:
    """With no model reachable a cold build asks `asks_the_model` of every note and reads only up
    to its first prose line; it must answer what planning the whole prompt would."""
    from extract.llm_prompt import asks_the_model, plan_note

    texts = [
        "",
        "---\nsummary: only frontmatter\n---\n",
        "```\ncode only\n```\n",
        "<!-- a comment -->\n",
        "---\n",
        "# \n",
        "  \n#only/tag\n",
        "see https://example.com",
        "[](http://a.b)",
        "[[Link]]\n",
        "---\nsummary: s\n---\n```\nfenced\n```\nprose after the fence\n",
        "~~~\nunclosed fence\nstill code\n",
        BASIC,
        long_note(),
    ]
    answers = [asks_the_model(t) for t in texts]
    assert answers == [bool(plan_note("T", t).prompts) for t in texts]
    assert answers.count(True) >= 4 and answers.count(False) >= 4, answers
