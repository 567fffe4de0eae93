"""The cache: keyed on what the model sees, per chunk; frontmatter edits are free; collection."""

from __future__ import annotations

from pathlib import Path

from llm_notes import BASIC, MODEL, long_note
from ollama_fake import DIGEST_B, FakeOllama

import extract.llm_prompt as llm
from extract.llm import OllamaExtractor, new_stats, plan_note
from extract.llm_cache import LlmCache, cache_dir_for, cache_key, default_cache_dir


def _extract(url: str, cache: Path, text: str = BASIC, **kw):
    extractor = OllamaExtractor(url, MODEL, timeout=5.0, cache_dir=cache, backoff_s=0.01, **kw)
    return extractor.extract_note("clients/Acme Corp.md", text)


def test_unchanged_note_costs_zero_calls(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        first = _extract(fake.url, tmp_path)
        second = _extract(fake.url, tmp_path)
        assert fake.chat_calls == 1
    assert (first.cache_hit, second.cache_hit, second.calls) == (False, True, 0)
    assert second.relations == first.relations and second.entities == first.entities
    assert second.keys == first.keys


def test_new_model_digest_re_extracts(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        first = _extract(fake.url, tmp_path)
        fake.models[MODEL] = DIGEST_B
        second = _extract(fake.url, tmp_path)
        assert fake.chat_calls == 2
    assert second.keys != first.keys and not second.cache_hit
    assert LlmCache(tmp_path).model_info(MODEL)["digest"] == DIGEST_B.removeprefix("sha256:")


def test_new_prompt_version_or_options_re_extract(tmp_path: Path, monkeypatch) -> None:
    with FakeOllama() as fake:
        _extract(fake.url, tmp_path)
        monkeypatch.setattr(llm, "PROMPT_VERSION", llm.PROMPT_VERSION + 1)
        _extract(fake.url, tmp_path)
        _extract(fake.url, tmp_path, num_ctx=4096)
        assert fake.chat_calls == 3
        assert {r["options"]["num_ctx"] for r in fake.requests} == {8192, 4096}


def test_changed_prose_re_extracts(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        _extract(fake.url, tmp_path)
        assert _extract(fake.url, tmp_path, BASIC + "\nOne more line.\n").calls == 1


def test_frontmatter_only_edits_cost_nothing(tmp_path: Path) -> None:
    """Tags, aliases and summary are not what the model reads; line numbers are the chunk's own."""
    edited = BASIC.replace("tags: [client/acme, scope/seo]", "tags:\n  - client/acme\n  - scope/seo\n  - tool/semrush")
    edited = edited.replace("aliases: [Acme]", "aliases: [Acme, ACME Inc]").replace("Acme account basics.", "Everything about Acme.")
    with FakeOllama() as fake:
        first = _extract(fake.url, tmp_path)
        second = _extract(fake.url, tmp_path, edited)
        assert fake.chat_calls == 1
    assert second.calls == 0 and second.keys == first.keys
    works = next(r for r in second.relations if r["relation"] == "works_on")
    assert works["line"] == edited.splitlines().index("Maria Chen works on Acme Corp.") + 1 == 12, "mapped to the file's lines as they are now"


def test_one_section_edit_of_a_long_note_costs_one_call(tmp_path: Path) -> None:
    text = long_note()
    edited = text.replace("Zeta Service depends on Postgres for storage.", "Zeta Service depends on Postgres for storage and Redis for locks.")
    assert len(plan_note("Services", text).chunks) == 2
    with FakeOllama() as fake:
        extractor = OllamaExtractor(fake.url, MODEL, timeout=5.0, cache_dir=tmp_path)
        assert extractor.preflight() is None
        extractor.answer(extractor.plan("Services", text))
        assert fake.chat_calls == 2
        stats = new_stats()
        extractor.answer(extractor.plan("Services", edited), stats)
    assert (stats["calls"], stats["hits"]) == (1, 1)


def test_collect_removes_unreferenced_entries(tmp_path: Path) -> None:
    cache = LlmCache(tmp_path)
    keys = [cache_key(str(n), MODEL, "d", 1, 1, {}) for n in range(3)]
    for key in keys:
        cache.put(key, {"entities": [], "relations": []})
    assert cache.collect(keys[:1]) == 2
    assert cache.keys() == {keys[0]} and cache.get(keys[1]) is None


def test_corrupt_entry_is_a_miss_and_writes_are_atomic(tmp_path: Path) -> None:
    cache = LlmCache(tmp_path)
    key = cache_key("h", MODEL, "d", 1, 1, {})
    cache.put(key, {"ok": 1})
    path = next(tmp_path.rglob(f"{key}.json"))
    path.write_bytes(b"{trunc")
    assert cache.get(key) is None and not path.exists()
    cache.put(key, {"ok": 2})
    assert cache.get(key) == {"ok": 2}
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp-")]


def test_default_location_is_under_kg_out(tmp_path: Path, monkeypatch) -> None:
    assert default_cache_dir(tmp_path) == tmp_path / "kg-out" / "cache" / "llm"
    assert cache_dir_for(tmp_path / "kg-out") == tmp_path / "kg-out" / "cache" / "llm"
    monkeypatch.setenv("KG_LLM_CACHE", str(tmp_path / "shared"))
    assert cache_dir_for(tmp_path / "kg-out") == tmp_path / "shared"
