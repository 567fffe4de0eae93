"""The model worker as real processes against the loopback stand-in (one chat at a time, with a
delay, every request logged): the PostToolUse hook never talks to the model and does not wait for
a busy worker; a killed worker loses at most its call in flight; two workers never run at once;
frontmatter edits cost no call, a one-section edit of a long note one, a no-op update no request."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import kg_process
from llm_notes import long_note
from ollama_fake import FakeOllama

from vault_kg.jobs import model_worker as llm_worker
from vault_kg.update.engine import run
from vault_kg.core.config import load_config
from vault_kg.core.scopes import vault_scope
from vault_kg.jobs.scope_update import update_scope
from vault_kg.storage.layout import Layout

NOTE = "---\nsummary: {n}\ntags: [topic/x]\n---\n# Note {n}\n\nNote {n} uses Tool{n} for its work.\n"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(4):
        (vault / f"Note {n}.md").write_text(NOTE.format(n=n))
    monkeypatch.setenv("KG_OLLAMA", "on")
    monkeypatch.setenv("KG_HTML", "off")
    (tmp_path / "home" / "config.toml").parent.mkdir(exist_ok=True)
    monkeypatch.setenv("KG_CONFIG", str(tmp_path / "home" / "config.toml"))
    Path(os.environ["KG_CONFIG"]).write_text(f'vault = "{vault}"\n')
    yield vault
    out = vault / "kg-out"
    if llm_worker.running(out):
        llm_worker.stop(out, timeout=5)


def chats(fake: FakeOllama) -> list[dict]:
    return [r for r in fake.log if r["path"] == "/api/chat"]


def wait_idle(out: Path, since: float, timeout: float = 180) -> None:
    """Until a worker started after `since` has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if llm_worker.read_state(out).get("started", 0) >= since and not llm_worker.running(out):
            return
        time.sleep(0.05)
    raise AssertionError(f"the worker did not finish within {timeout}s: {llm_worker.read_state(out)}")


def start_worker(vault: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vault_kg.jobs.model_worker", str(vault), str(vault / "kg-out")], stderr=subprocess.PIPE, text=True)


def pending(vault: Path) -> int:
    return json.loads((vault / "kg-out" / "graph.json").read_text())["graph"]["counts"]["pending"]


def hook(vault: Path, path: Path) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    payload = {"session_id": "t", "cwd": str(vault), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(path)}}
    started = time.time()
    done = kg_process("hook", "post-tool-use", input=json.dumps(payload))
    return started, time.time(), done


def test_hook_never_contacts_the_model_and_wakes_the_worker(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama(serial=True, delay=0.2) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(world))
        note = world / "Note 1.md"
        note.write_text(note.read_text() + "\nNote 1 also depends on Postgres.\n")
        started, ended, done = hook(world, note)
        assert done.returncode == 0 and "kg hook" not in done.stderr, done.stderr
        assert fake.requests_between(started, ended) == [], "the hook process never talks to the model server"
        wait_idle(world / "kg-out", started)
        assert len(chats(fake)) == 4 and pending(world) == 0, "the worker it woke answered every note"


def test_hook_returns_while_the_worker_is_busy(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama(serial=True, delay=40.0) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(world))
        worker = start_worker(world)
        try:
            deadline = time.monotonic() + 120
            while not fake.inflight and time.monotonic() < deadline:
                time.sleep(0.02)
            assert fake.inflight, "the worker is in a model call"
            note = world / "Note 2.md"
            text = note.read_text() + "\nEdited while the model is busy.\n"
            note.write_text(text)
            started, ended, done = hook(world, note)
            assert done.returncode == 0, done.stderr
            finished = [r for r in chats(fake) if r["t_end"] <= ended]
            assert not finished, "no model call ended during the hook: it did not wait for the model"
            assert fake.inflight and ended - started < 35
            from vault_kg.jobs import clustering as cluster_job

            settled = time.monotonic() + 120  # graph.json is the hook's background job's to write (#33)
            while cluster_job.running(world / "kg-out") or cluster_job.owed(world / "kg-out"):
                assert time.monotonic() < settled, "the hook's background job never settled"
                time.sleep(0.05)
            graph = json.loads((world / "kg-out" / "graph.json").read_text())
            [node] = [n for n in graph["nodes"] if n["id"] == "note:Note 2.md"]
            assert node["end_line"] == text.count("\n") + 1 and node["status"] == "pending", "the edit is in the graph, marked pending"
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)


def test_kill_9_mid_note_loses_at_most_that_call(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama(serial=True, delay=0.6) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(world))
        worker = start_worker(world)
        deadline = time.monotonic() + 120
        while (len(chats(fake)) < 2 or not fake.inflight) and time.monotonic() < deadline:
            time.sleep(0.01)
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
        fake.settle()
        before = chats(fake)
        assert len(before) >= 3 and before[-1].get("cancelled"), "killed during its third call"
        since = time.time()
        assert llm_worker.wake(world, world / "kg-out") == "started", "kill -9 leaves no stale lock"
        wait_idle(world / "kg-out", since)
        asked = [r["body"]["messages"][1]["content"] for r in chats(fake)]
        assert len(asked) <= 4 + 1 and len(asked) - len(set(asked)) <= 1, "only the call in flight was asked again"
        assert pending(world) == 0


def test_two_workers_never_run_at_once(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama(serial=False, delay=0.3) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(world))
        first, second = start_worker(world), start_worker(world)
        codes = [first.wait(180), second.wait(180)]
        fake.settle()
        assert codes == [0, 0]
        assert fake.max_inflight == 1, "one worker, one call in flight (the stand-in would have taken two)"
        assert len(chats(fake)) == 4 and pending(world) == 0
        assert sum("started:" in p.stderr.read() for p in (first, second)) == 1


def test_edits_cost_only_what_changed(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (world / "Long.md").write_text("---\nsummary: long\ntags: [topic/x]\n---\n" + long_note())
    with FakeOllama(serial=True) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        since = time.time()
        assert kg_process("build", "--vault", str(world)).returncode == 0
        wait_idle(world / "kg-out", since)
        assert len(chats(fake)) == 4 + 2 and pending(world) == 0, "one call per ordinary note, two for the long one"

        def update_and_count(path: Path, text: str) -> int:
            before = len(chats(fake))
            path.write_text(text)
            since = time.time()
            done = kg_process("update", str(path), "--vault", str(world))
            assert done.returncode == 0, done.stderr
            if pending(world):
                wait_idle(world / "kg-out", since)
            fake.settle()
            return len(chats(fake)) - before

        note = world / "Note 0.md"
        tagged = note.read_text().replace("tags: [topic/x]", "tags: [topic/x, tool/semrush]\naliases: [Zero]").replace("summary: 0", "summary: the first")
        assert update_and_count(note, tagged) == 0, "tags, aliases, summary: no call"
        long = world / "Long.md"
        edited = long.read_text().replace("Zeta Service depends on Postgres", "Zeta Service depends on Postgres and Redis")
        assert update_and_count(long, edited) == 1, "one section of a long note: one call"
        requests = len(fake.log)
        done = kg_process("update", "--vault", str(world))
        time.sleep(1.0)
        fake.settle()
        assert done.returncode == 0 and len(fake.log) == requests, "a no-op update: no request of any kind"
        assert pending(world) == 0


def test_no_op_update_with_notes_pending_sends_nothing(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(world))
        assert pending(world) == 4
        log = Layout(world / "kg-out").worker_log
        done = kg_process("update", "--vault", str(world))  # the quick path: it never reaches the engine
        assert done.returncode == 0 and not log.exists()
        # the whole route: the engine runs, finds nothing changed, and the worker's guard decides
        result = update_scope(vault_scope(world), cfg=load_config())
        assert result.pending == 4 and not result.extracted and not result.removed
        assert result.model_worker is None and not log.exists(), "a no-op update started the worker"
        assert fake.log == [] and not llm_worker.running(world / "kg-out")


def test_llm_commands(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama(serial=True, delay=0.1) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        done = kg_process("build", "--wait", "--json", "--vault", str(world))
        assert done.returncode == 0, done.stderr
        [result] = json.loads(done.stdout)
        assert result["pending"] == 4 and result["model_pass"]["pending"] == 0 and result["model_pass"]["done"] == 4
        status = json.loads(kg_process("llm", "status", "--json", "--vault", str(world)).stdout)
        assert status["done"] == 4 and status["pending"] == 0 and status["worker"]["running"] is False and status["calls"] == 4
        stopped = kg_process("llm", "stop", "--json", "--vault", str(world))
        assert stopped.returncode == 0 and json.loads(stopped.stdout)["pid"] is None
        note = world / "Note 3.md"
        note.write_text(note.read_text() + "\nMore.\n")
        assert kg_process("update", str(note), "--vault", str(world)).returncode == 0
        time.sleep(1.0)
        assert not llm_worker.running(world / "kg-out") and pending(world) == 1, "stopped: an update does not restart it"
        text = kg_process("llm", "status", "--vault", str(world)).stdout
        assert "1 pending" in text and "stopped" in text
        ran = kg_process("llm", "run", "--wait", "--json", "--vault", str(world))
        assert ran.returncode == 0, ran.stderr
        assert json.loads(ran.stdout)["pending"] == 0 and pending(world) == 0
        for command in (["llm", "status"], ["llm", "run"], ["llm", "stop"], ["build"]):
            helptext = kg_process(*command, "--help").stdout
            assert "Example: kg " in helptext and "--json" in helptext


def test_ollama_down_build_wait_says_what_to_do(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ollama_fake import closed_port_url

    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    done = kg_process("build", "--wait", "--vault", str(world))
    assert done.returncode == 1 and "run `ollama serve`" in done.stderr and "4 note(s) pending" in done.stderr
    again = kg_process("update", "--vault", str(world))
    assert again.returncode == 0 and "ollama serve" not in again.stderr, "said once, not on every update"


def test_a_stale_note_is_answered_too(world: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A note whose anchored code changed is stale (stale outranks pending in its status) but still
    waits for its answer: the worker's queue read only the notes marked pending, so such a note was
    never answered and `kg llm status` counted it pending for ever."""
    from vault_kg.core.config import load_config
    from vault_kg.core.projects import add_project
    from vault_kg.core.scopes import project_scope

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "core.py").write_text("def helper():\n    return 1\n")
    add_project(repo, "proj")
    run(project_scope("proj"))
    anchor = '  - project: proj\n    locator: "core.py › function helper"\n    hash: ' + "ab" * 32 + "\n"
    (world / "Anchored.md").write_text(f"---\nsummary: anchored\nanchors:\n{anchor}---\nAnchored uses Postgres for its work.\n")
    with FakeOllama(echo=True) as fake:
        fake.piece_s = 0.0
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        run(vault_scope(world))
        llm_worker.Worker(world, world / "kg-out", load_config()).drain()
    graph = json.loads((world / "kg-out" / "graph.json").read_text())
    note = next(n for n in graph["nodes"] if n["id"] == "note:Anchored.md")
    assert note["status"] == "stale", note
    assert llm_worker.counts(world / "kg-out") == {"answered": 5, "pending": 0}
    assert any(e.get("via") == "llm" and e["source"] == "note:Anchored.md" for e in graph["edges"])
