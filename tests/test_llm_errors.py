"""Every degraded path: one clear line, the note pending, nothing cached, nothing pulled."""

from __future__ import annotations

from pathlib import Path

import ollama
import pytest
from llm_notes import BASIC, MODEL, content_hash
from ollama_fake import DIGEST_A, FakeOllama, closed_port_url

from extract.llm import OllamaExtractor
from extract.llm_cache import LlmCache

HASH = content_hash(BASIC)


def _extractor(url: str, cache: Path, **kw) -> OllamaExtractor:
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("timeout", 5.0)
    return OllamaExtractor(url, kw.pop("model", MODEL), cache_dir=cache, **kw)


def _assert_pending(result, cache: Path, *phrases: str) -> None:
    assert result.status == "pending"
    assert result.message.startswith("clients/Acme Corp.md: ") and "\n" not in result.message
    for phrase in phrases:
        assert phrase in result.message, result.message
    assert result.entities == [] and result.relations == []
    assert LlmCache(cache).keys() == set()


def _run(extractor: OllamaExtractor):
    return extractor.extract_note("clients/Acme Corp.md", BASIC, HASH, [])


def test_ollama_down_says_run_ollama_serve(tmp_path: Path) -> None:
    extractor = _extractor(closed_port_url(), tmp_path)
    line = extractor.preflight()
    assert line is not None and "run `ollama serve`" in line and "\n" not in line
    result = _run(extractor)
    _assert_pending(result, tmp_path, "run `ollama serve`")
    assert result.calls == 0


def test_model_missing_says_pull_and_never_pulls(tmp_path: Path) -> None:
    with FakeOllama(models={"llama3.1:8b": DIGEST_A}) as fake:
        extractor = _extractor(fake.url, tmp_path)
        assert extractor.preflight() == (
            f"model '{MODEL}' is not available in Ollama at {fake.url}: run `ollama pull {MODEL}`"
        )
        _assert_pending(_run(extractor), tmp_path, f"run `ollama pull {MODEL}`")
        assert fake.chat_calls == 0 and "/api/pull" not in fake.paths


def test_model_name_matching_follows_ollama(tmp_path: Path) -> None:
    with FakeOllama(models={"qwen2.5-coder:latest": DIGEST_A}) as fake:
        assert _extractor(fake.url, tmp_path, model="Qwen2.5-Coder").preflight() is None


def test_model_removed_mid_run_404_stops_calling(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        extractor = _extractor(fake.url, tmp_path)
        fake.inject("404")
        _assert_pending(_run(extractor), tmp_path, "ollama pull")
        second = extractor.extract_note("other.md", BASIC + "x", content_hash(BASIC + "x"), [])
        assert second.status == "pending" and second.calls == 0 and fake.chat_calls == 1


def test_400_is_not_retried(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.inject("400")
        result = _run(_extractor(fake.url, tmp_path))
        _assert_pending(result, tmp_path, "rejected the request (400")
        assert result.calls == 1 and fake.chat_calls == 1


def test_500_is_retried_a_bounded_number_of_times(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always = "500"
        result = _run(_extractor(fake.url, tmp_path, retries=2))
        _assert_pending(result, tmp_path, "Ollama failed (500", "after 3 attempts")
        assert result.calls == 3 and fake.chat_calls == 3


@pytest.mark.parametrize("fault", ["503", "500", "midstream", "drop"])
def test_transient_failure_then_success(tmp_path: Path, fault: str) -> None:
    with FakeOllama() as fake:
        fake.inject(fault)
        result = _run(_extractor(fake.url, tmp_path))
        assert result.status == "ok" and result.calls == 2 and fake.chat_calls == 2
        assert LlmCache(tmp_path).keys() == {result.cache_key}


def test_hang_times_out_and_stays_pending(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always = "hang"
        result = _run(_extractor(fake.url, tmp_path, timeout=0.3, retries=1))
        _assert_pending(result, tmp_path, "did not answer within 0.3s", "after 2 attempts")
        assert result.calls == 2


def test_three_failed_notes_in_a_row_stop_the_run(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always = "500"
        extractor = _extractor(fake.url, tmp_path, retries=0)
        for n in range(3):
            assert extractor.extract_note(f"n{n}.md", f"note {n}", str(n), []).calls == 1
        fourth = extractor.extract_note("n4.md", "note 4", "4", [])
        assert fourth.status == "pending" and fourth.calls == 0 and "in a row" in fourth.message


@pytest.mark.parametrize(
    ("fault", "phrase"),
    [("badschema", "JSON not matching the schema"), ("badjson", "invalid JSON")],
)
def test_invalid_output_is_not_cached(tmp_path: Path, fault: str, phrase: str) -> None:
    with FakeOllama() as fake:
        fake.always = fault
        _assert_pending(_run(_extractor(fake.url, tmp_path)), tmp_path, phrase)


def test_length_stop_on_every_try_is_pending(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always = "length"
        result = _run(_extractor(fake.url, tmp_path))
        _assert_pending(result, tmp_path, "num_predict")
        assert result.calls >= 2  # the whole note, then a smaller chunk


def test_length_stop_once_recovers_on_smaller_chunks(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.inject("length")
        result = _run(_extractor(fake.url, tmp_path))
        assert result.status == "ok" and result.calls == 3
        assert any("num_predict" in w for w in result.warnings)


def test_truncated_prompt_is_detected(tmp_path: Path) -> None:
    """Dense text (1 char per token): the server truncates; the reported count gives it away."""
    with FakeOllama() as fake:
        fake.chars_per_token = 1.0
        result = _run(_extractor(fake.url, tmp_path))
        _assert_pending(result, tmp_path, "prompt truncated")


def test_midstream_error_line_raises_in_the_client() -> None:
    with FakeOllama() as fake:
        fake.inject("midstream")
        client = ollama.Client(host=fake.url, timeout=5)
        with pytest.raises(ollama.ResponseError) as info:
            list(client.chat(model=MODEL, messages=[{"role": "user", "content": "FIXTURE-basic"}], stream=True))
    assert info.value.status_code == -1 and "unexpected EOF" in info.value.error


def test_error_shapes_match_ollama() -> None:
    with FakeOllama() as fake:
        client = ollama.Client(host=fake.url, timeout=5)
        with pytest.raises(ollama.ResponseError) as missing:
            client.chat(model="nope", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(ollama.ResponseError) as think:
            client.chat(model=MODEL, messages=[{"role": "user", "content": "hi"}], think=True)
        fake.inject("503")
        with pytest.raises(ollama.ResponseError) as busy:
            client.chat(model=MODEL, messages=[{"role": "user", "content": "hi"}])
        shown = client.show(MODEL)
    assert (missing.value.status_code, missing.value.error) == (404, "model 'nope' not found")
    assert think.value.status_code == 400
    assert busy.value.status_code == 503 and "server busy" in busy.value.error
    assert shown.modelinfo["qwen2.context_length"] == 32768 and shown.details.parameter_size == "7.6B"
