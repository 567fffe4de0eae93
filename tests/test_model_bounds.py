"""Issue 29: the model client bounds time per note and bytes per answer whatever the server does,
and the worker reads only regular notes inside the vault (findings 8, 19, 22; each test fails on
the code before the fix). The server is the loopback fake (tests/ollama_fake.py) with the faults
no real Ollama should show: `drip`, `endless`, `nonjson`.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from llm_notes import BASIC, MODEL
from ollama_fake import FakeOllama

from extract.llm import OllamaExtractor
from vault_kg.core.config import load_config
from vault_kg.core.scopes import vault_scope
from vault_kg.jobs import model_worker as llm_worker
from vault_kg.update.engine import run

SECRET_OUTSIDE = "OUTSIDE-THE-VAULT private key material"


def within(seconds: float, work: Callable[[], Any]) -> Any:
    """`work()`'s result, or a failure when it has not returned after `seconds` (it is left to the fake's shutdown)."""
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert box, f"still running after {seconds}s"
    return box[0]


def extractor(url: str, tmp_path: Path, **kw: Any) -> OllamaExtractor:
    return OllamaExtractor(url, MODEL, cache_dir=tmp_path / "cache", backoff_s=0.01, **kw)


# -- 19: a server that drips, or never stops, cannot hold a note past its budget or fill memory --------


def test_a_server_dripping_one_byte_at_a_time_is_cut_at_the_note_budget(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always, fake.drip_s = "drip", 0.05
        started = time.monotonic()
        result = within(20, lambda: extractor(fake.url, tmp_path, timeout=30, note_budget_s=1.5).extract_note("clients/Acme Corp.md", BASIC))
        took = time.monotonic() - started
    assert result.status == "pending" and "time budget of 1.5s" in result.message, result.message
    assert took < 4, f"the budget is 1.5 s; the note took {took:.1f} s"


def test_a_call_that_drips_past_its_timeout_is_a_timeout(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always, fake.drip_s = "drip", 0.05
        result = within(20, lambda: extractor(fake.url, tmp_path, timeout=0.5, retries=1, note_budget_s=30).extract_note("clients/Acme Corp.md", BASIC))
    assert result.status == "pending" and "did not answer within 0.5s" in result.message and result.calls == 2, result.message


def test_an_answer_that_never_ends_is_cut_at_its_byte_bound(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always = "endless"
        result = within(20, lambda: extractor(fake.url, tmp_path, timeout=30, note_budget_s=30, retries=0).extract_note("clients/Acme Corp.md", BASIC))
        sent = fake.sent_bytes
    assert result.status == "pending" and ("did not end" in result.message or "passed" in result.message), result.message
    assert sent < 64 * 1024 * 1024, f"the server wrote {sent} bytes before the client hung up"


# -- 22: a line of the stream that is not JSON fails the note, with a back-off, and the worker goes on --


def test_a_non_json_line_fails_the_note_in_one_line(tmp_path: Path) -> None:
    with FakeOllama() as fake:
        fake.always = "nonjson"
        result = within(20, lambda: extractor(fake.url, tmp_path, timeout=5).extract_note("clients/Acme Corp.md", BASIC))
    assert result.status == "pending" and "not a chat response" in result.message and "\n" not in result.message, result.message


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vault"
    (root / "clients").mkdir(parents=True)
    (root / "clients" / "Acme Corp.md").write_text(BASIC)
    monkeypatch.setenv("KG_OLLAMA", "on")
    monkeypatch.setenv("KG_HTML", "off")
    return root


def drain(vault: Path, fake: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    scope = vault_scope(vault)
    return within(30, lambda: llm_worker.Worker(scope.root, scope.out, load_config()).drain())


def test_the_worker_backs_a_note_off_when_the_stream_is_not_json(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(vault))
        fake.always = "nonjson"
        drain(vault, fake, monkeypatch)
    failure = llm_worker.read_state(vault / "kg-out")["failures"]["clients/Acme Corp.md"]
    assert failure["attempts"] == 1 and failure["next_try"] > time.time() and "not a chat response" in failure["error"]


# -- 8, 19: the worker never reads a note swapped for a symlink out of the vault, or for a FIFO ----------


def swapped(vault: Path, fake: FakeOllama, monkeypatch: pytest.MonkeyPatch, swap: Callable[[Path], None]) -> None:
    """Build with the note pending, swap it (`swap(note)`) behind the graph's back, run the worker."""
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    run(vault_scope(vault))
    note = vault / "clients" / "Acme Corp.md"
    note.unlink()
    swap(note)
    try:
        drain(vault, fake, monkeypatch)
    finally:
        if note.is_fifo():
            release(note)


def test_the_worker_does_not_send_a_file_outside_the_vault_to_the_model(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(BASIC.replace("Acme", "Zenith") + f"\n{SECRET_OUTSIDE}\n")
    with FakeOllama() as fake:
        swapped(vault, fake, monkeypatch, lambda note: note.symlink_to(outside))
        sent = [m["content"] for r in fake.requests for m in r.get("messages", [])]
    assert not any(SECRET_OUTSIDE in text or "Zenith" in text for text in sent)


def test_the_worker_does_not_block_on_a_note_swapped_for_a_fifo(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        swapped(vault, fake, monkeypatch, os.mkfifo)
    assert fake.chat_calls == 0


def release(fifo: Path) -> None:
    """Let a reader blocked on `fifo` (the bug) go: open the writing end once."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # nobody is waiting on it
