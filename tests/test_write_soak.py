"""A concurrency soak (issue 29): writers of every kind on the same notes at once, for a few seconds.

- the MCP server, through the real MCP client: appends from three threads, edits, journal entries;
- `kg note append` and `kg journal add` processes, two loops of them;
- an outside editor (another process) that appends lines to the same notes every few milliseconds;
- `kg sync` processes in a loop, committing and pushing to a bare remote.

Then every line any writer was told landed is on disk, a last `kg sync` pushes exactly the
working tree, and the graph, brought up to date by one incremental update (what the next hook or
the watcher does), equals a fresh build.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import kg_process
from mcp_client import start_server
from robust_corpus import canonical, first_difference, fresh_build
from vaultops_helpers import git, isolate_git
from vault_kg.core.scopes import vault_scope
from vault_kg.update.engine import run

SOAK_S = 6.0
NOTE = "---\nsummary: {0} facts\ntags: [topic/soak, scope/soak]\n---\n# {0}\n\nThe {0} note.\n"
EDITOR = textwrap.dedent(
    """
    import os, sys, time
    paths, until, n = sys.argv[1:-1], time.monotonic() + float(sys.argv[-1]), 0
    while time.monotonic() < until:
        path = paths[n % len(paths)]
        line = f"editor line {n}\\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.write(fd, line.encode())
        os.close(fd)
        print(path, line.strip(), flush=True)
        n += 1
        time.sleep(0.004 if n % 40 else 0.25)  # typing, then a pause
    """
)


class Landed:
    """Every line a writer was told landed, with the file it must be in (None: any file of the day)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lines: list[tuple[str | None, str]] = []
        self.problems: list[str] = []

    def add(self, where: str | None, line: str) -> None:
        with self.lock:
            self.lines.append((where, line))

    def fail(self, problem: str) -> None:
        with self.lock:
            self.problems.append(problem)


def loop(until: float, work: Callable[[int], None]) -> threading.Thread:
    def run_all() -> None:
        i = 0
        while time.monotonic() < until:
            work(i)
            i += 1

    thread = threading.Thread(target=run_all, daemon=True)
    thread.start()
    return thread


def setup_vault(tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    for name in ("Alpha", "Beta"):
        (vault / "notes" / f"{name}.md").write_text(NOTE.format(name), encoding="utf-8")
    (vault / "notes" / "Gamma.md").write_text(NOTE.format("Gamma") + "".join(f"- slot {i} open\n" for i in range(12)), encoding="utf-8")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(vault, "init", "-q", "-b", "main")
    git(vault, "remote", "add", "origin", str(remote))
    (tmp_path / "config.toml").write_text(f'vault = "{vault}"\n', encoding="utf-8")
    assert kg_process("sync", "--vault", str(vault)).returncode == 0
    return vault, remote


def mcp_writers(client: Any, until: float, landed: Landed) -> list[threading.Thread]:
    def append(thread: int) -> Callable[[int], None]:
        def work(i: int) -> None:
            note, line = ("notes/Alpha.md", "notes/Beta.md")[i % 2], f"mcp {thread} line {i}"
            answer = client.call("append_note", note=note, text=line)
            (landed.add(note, line) if not answer.is_error else landed.fail(f"mcp append: {answer.content}"))

        return work

    def edit(i: int) -> None:
        if i < 12:
            answer = client.call("edit_note", note="notes/Gamma.md", old_text=f"slot {i} open", new_text=f"slot {i} done by mcp")
            (landed.add("notes/Gamma.md", f"slot {i} done by mcp") if not answer.is_error else landed.fail(f"mcp edit: {answer.content}"))
        else:
            time.sleep(0.2)

    def journal(i: int) -> None:
        answer = client.call("journal_add", text=f"mcp journal entry {i}", project="soak")
        (landed.add(None, f"mcp journal entry {i}") if not answer.is_error else landed.fail(f"mcp journal: {answer.content}"))
        time.sleep(0.3)

    return [loop(until, append(t)) for t in range(3)] + [loop(until, edit), loop(until, journal)]


def cli_writers(vault: Path, until: float, landed: Landed) -> list[threading.Thread]:
    def writer(name: str) -> Callable[[int], None]:
        def work(i: int) -> None:
            if i % 3 == 2:
                text, done = f"cli {name} journal {i}", kg_process("journal", "add", f"cli {name} journal {i}", "--vault", str(vault))
                where = None
            else:
                where = ("notes/Alpha.md", "notes/Beta.md")[i % 2]
                text, done = f"cli {name} line {i}", kg_process("note", "append", where, f"cli {name} line {i}", "--vault", str(vault))
            (landed.add(where, text) if done.returncode == 0 else landed.fail(f"cli: {done.stderr.strip()}"))

        return work

    return [loop(until, writer(name)) for name in ("a", "b")]


def syncs(vault: Path, until: float, outcomes: list[int]) -> threading.Thread:
    return loop(until, lambda i: outcomes.append(kg_process("sync", "--vault", str(vault)).returncode))


def everything_landed(vault: Path, landed: Landed, editor_out: str) -> list[str]:
    texts = {p.relative_to(vault).as_posix(): p.read_text(encoding="utf-8") for p in vault.rglob("*.md") if "kg-out" not in p.parts}
    journal = "\n".join(text for rel, text in texts.items() if rel.startswith("journal/"))
    missing = [f"{where or 'journal'}: {line}" for where, line in landed.lines if line not in (journal if where is None else texts[where])]
    for row in editor_out.splitlines():
        path, line = row.split(" ", 1)
        rel = Path(path).relative_to(vault).as_posix()
        if f"{line}\n" not in texts[rel]:
            missing.append(f"{rel}: {line} (the editor's)")
    return missing


@pytest.fixture
def soak_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_config: Path) -> Path:
    isolate_git(monkeypatch, isolated_config)
    monkeypatch.setenv("KG_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("KG_HTML", "off")
    monkeypatch.setenv("KG_OLLAMA", "off")
    return tmp_path


def test_every_writer_at_once_loses_nothing_and_the_graph_equals_a_fresh_build(soak_env: Path) -> None:
    vault, remote = setup_vault(soak_env)
    run(vault_scope(vault))
    client = start_server(soak_env / "config.toml", vault)
    editor = None
    try:
        landed, sync_codes = Landed(), []
        until = time.monotonic() + SOAK_S
        editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(vault / "notes" / "Alpha.md"), str(vault / "notes" / "Beta.md"), str(SOAK_S)], stdout=subprocess.PIPE, text=True)
        threads = mcp_writers(client, until, landed) + cli_writers(vault, until, landed) + [syncs(vault, until, sync_codes)]
        for thread in threads:
            thread.join(timeout=SOAK_S + 60)
        editor_out, _ = editor.communicate(timeout=30)
    finally:
        client.close()
        if editor is not None and editor.poll() is None:
            editor.kill()
    assert not landed.problems, landed.problems[:5]
    told = len(landed.lines) + len(editor_out.splitlines())
    print(f"soak: {len(landed.lines)} kg writes, {len(editor_out.splitlines())} editor lines, syncs {sync_codes}")
    assert len(landed.lines) >= 20 and len(editor_out.splitlines()) >= 100 and sync_codes, told
    assert everything_landed(vault, landed, editor_out) == []
    assert kg_process("sync", "--vault", str(vault)).returncode == 0
    assert git(vault, "status", "--porcelain").stdout == "" and git(vault, "rev-parse", "HEAD").stdout == git(remote, "rev-parse", "main").stdout
    scope = vault_scope(vault)
    run(scope)
    incremental, fresh = canonical(scope.out), fresh_build(scope, soak_env / "fresh")
    assert incremental == fresh, first_difference(incremental, fresh)
