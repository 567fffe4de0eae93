"""Every degraded path: one clear line, the note pending, nothing cached, nothing pulled."""

from __future__ import annotations

from pathlib import Path

import ollama
import pytest
from llm_notes import ALWAYS_LOOP, BASIC, MODEL
from ollama_fake import DIGEST_A, FakeOllama, closed_port_url

from extract.llm import ModelDown, NoteFailed, OllamaExtractor, new_stats, plan_note
from extract.llm_cache import LlmCache


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


def _run(extractor: OllamaExtractor, text: str = BASIC):
    return extractor.extract_note("clients/Acme Corp.md", text)


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
        assert extractor.preflight() == (f"model '{MODEL}' is not available in Ollama at {fake.url}: run `ollama pull {MODEL}`")
        _assert_pending(_run(extractor), tmp_path, f"run `ollama pull {MODEL}`")
        assert fake.chat_calls == 0 and "/api/pull" not in fake.paths


def test_model_name_matching_follows_ollama(tmp_path: Path) -> None:
    with FakeOllama(models={"qwen2.5-coder:latest": DIGEST_A}) as fake:
        assert _extractor(fake.url, tmp_path, model="Qwen2.5-Coder").preflight() is None


def test_model_removed_mid_run_is_model_down(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        extractor = _extractor(fake.url, tmp_path)
        assert extractor.preflight() is None
        fake.inject("404")
        with pytest.raises(ModelDown, match="ollama pull"):
            extractor.answer(plan_note("Acme Corp", BASIC))
        assert fake.chat_calls == 1


def test_server_gone_mid_run_is_model_down(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        extractor = _extractor(fake.url, tmp_path)
        assert extractor.preflight() is None
    with pytest.raises(ModelDown, match="ollama serve"):
        extractor.answer(plan_note("Acme Corp", BASIC))


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
        assert LlmCache(tmp_path).keys() == set(result.keys) and len(result.keys) == 1


def test_hang_times_out_and_stays_pending(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always = "hang"
        result = _run(_extractor(fake.url, tmp_path, timeout=0.3, retries=1))
        _assert_pending(result, tmp_path, "did not answer within 0.3s", "after 2 attempts")
        assert result.calls == 2


def test_note_time_budget_stops_a_slow_model(tmp_path: Path) -> None:
    with FakeOllama(delay=0.4) as fake:
        extractor = _extractor(fake.url, tmp_path, note_budget_s=0.2)
        assert extractor.preflight() is None
        plan = plan_note("Acme Corp", BASIC)
        with pytest.raises(NoteFailed, match="time budget"):
            extractor.answer(plan, new_stats())
    assert LlmCache(tmp_path).keys() == set()


@pytest.mark.parametrize(
    ("fault", "phrase"),
    [("badschema", "JSON not matching the schema"), ("badjson", "invalid JSON")],
)
def test_invalid_output_is_not_cached(tmp_path: Path, fault: str, phrase: str) -> None:
    with FakeOllama() as fake:
        fake.always = fault
        result = _run(_extractor(fake.url, tmp_path))
        _assert_pending(result, tmp_path, phrase)
        assert result.calls == 1, "re-asking cannot help a model that does not speak the schema"


def test_answer_cut_at_num_predict_keeps_its_complete_items(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.inject("length")
        result = _run(_extractor(fake.url, tmp_path))
        assert result.status == "ok" and result.calls == 1
        assert 0 < len(result.raw["relations"]) < 6
        assert any("num_predict" in w for w in result.warnings)


def test_nothing_before_num_predict_is_pending(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        result = _extractor(fake.url, tmp_path).extract_note("clients/Acme Corp.md", ALWAYS_LOOP)
        _assert_pending(result, tmp_path, "num_predict")


def test_truncated_prompt_is_detected(tmp_path: Path) -> None:
    """Text far denser than any tokenizer: the server truncates; the reported count gives it away."""
    with FakeOllama() as fake:
        fake.chars_per_token = 0.1
        result = _run(_extractor(fake.url, tmp_path))
        _assert_pending(result, tmp_path, "did not fit num_ctx")


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
