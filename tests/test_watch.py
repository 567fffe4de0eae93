"""Fresh without being asked: the vault watcher (`vault_kg.watch.watcher`), `kg watch`, the MCP server's
watcher and the session-start refresh, with real watchdog events, real `kg` processes and the
real `mcp` stdio client. Timings are bounded generously here; bench/watch_bench.py measures them.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import kg_process
from vault_kg.core.scopes import vault_scope
from vault_kg.watch.watcher import Report, VaultWatcher, note_path

SLOW = 60.0  # far above the expected second or two, for a loaded shared machine


def note(title: str, text: str, tags: str = "topic/watch, scope/global") -> str:
    return f"---\nsummary: {text}\ntags: [{tags}]\n---\n# {title}\n\n{text}\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A small built vault (a few notes: updates take a fraction of a second)."""
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "Payments API.md").write_text(note("Payments API", "The payments service, see [[Ledger]]."))
    (root / "notes" / "Ledger.md").write_text(note("Ledger", "Double-entry ledger of every payment."))
    (root / "projects" / "old").mkdir(parents=True)
    (root / "projects" / "old" / "Legacy Queue.md").write_text(note("Legacy Queue", "The retired job queue."))
    done = kg_process("build", "--vault", str(root))
    assert done.returncode == 0, done.stderr
    return root


def graph_ids(vault: Path) -> set[str]:
    return {n["id"] for n in json.loads((vault / "kg-out" / "graph.json").read_text())["nodes"]}


class Collector:
    """Reports of a watcher as they arrive, waited on with a bound."""

    def __init__(self) -> None:
        self.items: queue.Queue[Report] = queue.Queue()
        self.seen: list[Report] = []

    def __call__(self, report: Report) -> None:
        self.items.put(report)

    def next(self, timeout: float = SLOW) -> Report:
        report = self.items.get(timeout=timeout)
        self.seen.append(report)
        return report

    def until(self, check: Callable[[Report], bool], timeout: float = SLOW) -> Report:
        deadline = time.monotonic() + timeout
        while True:
            report = self.next(max(0.1, deadline - time.monotonic()))
            if check(report):
                return report


# ------------------------------------------------------------------ the library


def test_only_notes_outside_kg_out_and_dot_folders_count(tmp_path: Path) -> None:
    root = tmp_path
    assert note_path(root, str(root / "notes" / "A.md")) == "notes/A.md"
    assert note_path(root, str(root / "A.MD")) == "A.MD"
    for ignored in ("kg-out/graph.md", ".obsidian/workspace.md", "notes/.hidden.md", "notes/a.txt", "node_modules/x/README.md", ".git/HEAD"):
        assert note_path(root, str(root / ignored)) is None, ignored
    assert note_path(root, str(tmp_path.parent / "elsewhere.md")) is None


def test_a_burst_of_fifty_writes_becomes_a_few_updates_and_loses_none(vault: Path) -> None:
    reports = Collector()
    with VaultWatcher(vault_scope(vault), reports, debounce=0.4, max_delay=60) as watcher:
        assert reports.next().whole  # the catch-up at start
        for i in range(50):  # five seconds of writes, each gap shorter than the debounce
            (vault / "notes" / f"Burst {i}.md").write_text(note(f"Burst {i}", f"Burst note number {i}."))
            time.sleep(0.1)
        written = {f"notes/Burst {i}.md" for i in range(50)}
        extracted: set[str] = set()
        while not written <= extracted:
            extracted |= set(reports.next().extracted)
        time.sleep(1.0)  # let any straggling event land before counting
        updates = watcher.updates
    assert updates - 1 <= 3, f"50 writes cost {updates - 1} updates"
    assert {f"note:notes/Burst {i}.md" for i in range(50)} <= graph_ids(vault)


def test_ignored_files_trigger_nothing(vault: Path) -> None:
    reports = Collector()
    with VaultWatcher(vault_scope(vault), reports, debounce=0.2):
        reports.next()
        (vault / ".obsidian").mkdir()
        (vault / ".obsidian" / "workspace.md").write_text("{}")
        (vault / "kg-out" / "scratch.md").write_text("x")
        (vault / "notes" / "todo.txt").write_text("x")
        time.sleep(1.0)
        (vault / "notes" / "Real.md").write_text(note("Real", "A real note."))
        report = reports.next()
    assert report.paths == ["notes/Real.md"] and not report.whole and report.extracted == ["notes/Real.md"]


def test_a_folder_moved_out_of_the_vault_takes_its_notes_along(vault: Path, tmp_path: Path) -> None:
    reports = Collector()
    with VaultWatcher(vault_scope(vault), reports, debounce=0.2):
        reports.next()
        shutil.move(vault / "projects" / "old", tmp_path / "archived")
        report = reports.until(lambda r: bool(r.removed))
    assert report.whole and report.removed == ["projects/old/Legacy Queue.md"]
    assert "note:projects/old/Legacy Queue.md" not in graph_ids(vault)


def test_one_watcher_per_vault_updates_and_the_next_takes_over(vault: Path) -> None:
    first, second = Collector(), Collector()
    scope = vault_scope(vault)
    a = VaultWatcher(scope, first, debounce=0.2)
    b = VaultWatcher(scope, second, debounce=0.2)
    a.start()
    try:
        assert first.next().whole
        b.start()
        (vault / "notes" / "One.md").write_text(note("One", "First."))
        assert first.next().extracted == ["notes/One.md"]
        time.sleep(1.0)
        assert b.updates == 0 and second.items.empty()
        a.stop()
        (vault / "notes" / "Two.md").write_text(note("Two", "Second."))
        taken = second.next()
        assert taken.whole and "notes/Two.md" in taken.extracted  # takes over with a catch-up
    finally:
        a.stop()
        b.stop()
    assert b.updates == 1


def test_an_unbuilt_vault_is_watched_but_not_built(tmp_path: Path) -> None:
    (tmp_path / "A.md").write_text(note("A", "Not built yet."))
    done = kg_process("watch", "--vault", str(tmp_path), "--timeout", "1")
    assert done.returncode == 0, done.stderr
    assert "no graph yet" in done.stderr and "run `kg build`" in done.stderr
    assert not (tmp_path / "kg-out" / "graph.json").exists()


# ------------------------------------------------------------------ `kg watch`


class Lines:
    """A process's stdout lines as they come, read on a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        stream = proc.stdout
        threading.Thread(target=lambda: [self.lines.put(line) for line in stream], daemon=True).start()

    def until(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + SLOW
        while True:
            item = json.loads(self.lines.get(timeout=max(0.1, deadline - time.monotonic())))
            if check(item):
                return item


def test_kg_watch_follows_a_create_an_edit_a_rename_and_a_delete(vault: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "watch", "--vault", str(vault), "--json", "--debounce", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        out = Lines(proc)
        assert out.until(lambda r: True)["whole_vault"]
        new = vault / "notes" / "Webhook Retries.md"
        new.write_text(note("Webhook Retries", "Retries back off exponentially."))
        assert out.until(lambda r: "notes/Webhook Retries.md" in r["extracted"])
        assert "note:notes/Webhook Retries.md" in graph_ids(vault)

        new.write_text(note("Webhook Retries", "Retries back off exponentially; see [[Ledger]]."))
        assert out.until(lambda r: "notes/Webhook Retries.md" in r["extracted"])
        done = kg_process("explain", "Webhook Retries", "--vault", str(vault), "--json")
        assert "note:notes/Ledger.md" in done.stdout, "the edit's new link is in the graph"

        new.rename(vault / "notes" / "Retry Policy.md")
        moved = out.until(lambda r: bool(r["removed"]))
        assert moved["removed"] == ["notes/Webhook Retries.md"] and "notes/Retry Policy.md" in moved["extracted"]
        ids = graph_ids(vault)
        assert "note:notes/Retry Policy.md" in ids and "note:notes/Webhook Retries.md" not in ids

        (vault / "notes" / "Retry Policy.md").unlink()
        assert out.until(lambda r: r["removed"] == ["notes/Retry Policy.md"])
        assert "note:notes/Retry Policy.md" not in graph_ids(vault)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=SLOW)
    assert proc.returncode == 0, err
    assert "stopped watching" not in err  # --json: stderr stays quiet
    assert "Traceback" not in err


def test_kg_watch_stops_cleanly_on_ctrl_c_and_sigterm(vault: Path) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen(
            [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "watch", "--vault", str(vault)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the catch-up: the watcher is running
        assert "updated vault (whole vault)" in first
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=SLOW)
        assert proc.returncode == 0 and "stopped watching after 1 update(s)" in err and "Traceback" not in err, (sig, err)
        assert not (vault / "kg-out" / "watch.lock").exists() or _lease_free(vault)


def _lease_free(vault: Path) -> bool:
    from filelock import FileLock, Timeout

    lock = FileLock(str(vault / "kg-out" / "watch.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False
    lock.release()
    return True


# ------------------------------------------------------------------ the MCP server


def test_mcp_server_finds_a_note_written_by_another_program(vault: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    config = tmp_path / "config.toml"
    config.write_text(f'vault = "{vault}"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("KG_VAULT", "OLLAMA_HOST", "KG_MODEL")}
    env.update({"KG_CONFIG": str(config), "KG_OLLAMA": "off", "FASTMCP_LOG_LEVEL": "WARNING"})
    params = StdioServerParameters(command=sys.executable, args=["-c", "from vault_kg.cli.entry import main; main()", "mcp"], env=env, cwd=str(tmp_path))

    async def scenario() -> float:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            first = await session.call_tool("query", {"question": "zebrafish migration", "budget": 300})
            assert not any("Zebrafish" in h["label"] for h in first.structured_content["hits"])
            started = time.monotonic()
            while not (vault / "kg-out" / "watch.lock").exists():  # the server's watcher is up
                assert time.monotonic() - started < SLOW, "the MCP server never started watching its vault"
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            (vault / "notes" / "Zebrafish Migration.md").write_text(note("Zebrafish Migration", "How the zebrafish service moved to the new cluster."))
            written = time.monotonic()
            while time.monotonic() - written < SLOW:
                answer = await session.call_tool("query", {"question": "zebrafish migration", "budget": 300})
                if any(h["label"] == "Zebrafish Migration" for h in answer.structured_content["hits"]):
                    return time.monotonic() - written
                await asyncio.sleep(0.1)
            raise AssertionError("the MCP query tool never found the note")

    seconds = asyncio.run(scenario())
    assert seconds < 15, f"found after {seconds:.1f}s (bench/watch_bench.py measures this; the target is 5 s)"
    assert _lease_free(vault), "the server released its watcher when the client closed it"


# ------------------------------------------------------------------ the session-start hook


def test_every_session_start_refreshes_in_the_background_silently(tmp_path: Path) -> None:
    from hook_world import make_world, session_payload, wait_for
    from vault_kg.jobs import reconcile
    from vault_kg.storage.layout import Layout

    world = make_world(tmp_path)
    for root in (world.vault, world.project):
        Layout(root / "kg-out").reconciled.write_text("fresh\n")
    (world.vault / "inbox").mkdir(exist_ok=True)
    (world.vault / "inbox" / "Written in Obsidian.md").write_text(note("Written in Obsidian", "Edited while no hook ran."))
    stamp = Layout(world.vault / "kg-out").reconciled
    before = stamp.stat().st_mtime_ns
    code, out, err = world.hook("session-start", session_payload(world, "SessionStart", source="startup"))
    assert code == 0, err
    assert out is not None and "kg: refreshing" not in out["hookSpecificOutput"]["additionalContext"]
    assert wait_for(lambda: stamp.stat().st_mtime_ns > before and not reconcile.running(world.vault))
    assert "note:inbox/Written in Obsidian.md" in graph_ids(world.vault)
    assert wait_for(lambda: not reconcile.running(world.project))


def test_without_file_events_it_polls_and_says_so(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exhausted inotify budget (ENOSPC at start): one line, then the polling observer."""
    import watchdog.observers

    class Exhausted(watchdog.observers.Observer):  # type: ignore[misc,valid-type]
        def start(self) -> None:
            raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", Exhausted)
    reports = Collector()
    with VaultWatcher(vault_scope(vault), reports, debounce=0.2):
        assert "polling every second" in (reports.next().error or "")
        assert reports.next().whole
        (vault / "notes" / "Polled.md").write_text(note("Polled", "Seen by polling."))
        assert reports.until(lambda r: "notes/Polled.md" in r.extracted)
    assert "note:notes/Polled.md" in graph_ids(vault)
