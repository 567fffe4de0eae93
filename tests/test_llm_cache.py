"""The cache: an unchanged note costs zero calls; any change of key re-extracts; collection."""

from __future__ import annotations

from pathlib import Path

from llm_notes import BASIC, MODEL, content_hash
from ollama_fake import DIGEST_B, FakeOllama, closed_port_url

import extract.llm as llm
from extract.llm import OllamaExtractor
from extract.llm_cache import LlmCache, cache_key, default_cache_dir

HASH = content_hash(BASIC)


def _extract(url: str, cache: Path, **kw):
    extractor = OllamaExtractor(url, MODEL, timeout=5.0, cache_dir=cache, backoff_s=0.01, **kw)
    return extractor.extract_note("clients/Acme Corp.md", BASIC, HASH, [])


def test_unchanged_note_costs_zero_calls(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        first = _extract(fake.url, tmp_path)
        second = _extract(fake.url, tmp_path)
        assert fake.chat_calls == 1
    assert (first.cache_hit, second.cache_hit, second.calls) == (False, True, 0)
    assert second.relations == first.relations and second.entities == first.entities
    assert second.cache_key == first.cache_key


def test_cached_notes_load_while_ollama_is_down(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        _extract(fake.url, tmp_path)
    result = _extract(closed_port_url(), tmp_path)
    assert result.status == "ok" and result.cache_hit and result.calls == 0


def test_new_model_digest_re_extracts(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        first = _extract(fake.url, tmp_path)
        fake.models[MODEL] = DIGEST_B
        second = _extract(fake.url, tmp_path)
        assert fake.chat_calls == 2
    assert second.cache_key != first.cache_key and not second.cache_hit


def test_new_prompt_version_or_options_re_extract(tmp_path: Path, monkeypatch) -> None:
    with FakeOllama() as fake:
        _extract(fake.url, tmp_path)
        monkeypatch.setattr(llm, "PROMPT_VERSION", llm.PROMPT_VERSION + 1)
        _extract(fake.url, tmp_path)
        _extract(fake.url, tmp_path, num_predict=500)
        assert fake.chat_calls == 3


def test_changed_note_re_extracts(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        extractor = OllamaExtractor(fake.url, MODEL, timeout=5.0, cache_dir=tmp_path)
        extractor.extract_note("a.md", BASIC, HASH, [])
        changed = BASIC + "\nOne more line.\n"
        assert extractor.extract_note("a.md", changed, content_hash(changed), []).calls == 1


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


def test_default_location_is_under_kg_out(tmp_path: Path) -> None:
    assert default_cache_dir(tmp_path) == tmp_path / "kg-out" / "cache" / "llm"
