"""Concurrency: 8 PostToolUse hooks at once, on different and on the same notes, while readers run
`kg query` / `kg god-nodes` and parse graph.json in a loop.

Each writer is the real hook: the command hooks/hooks.json states, run under /bin/sh through the
plugin's launcher with Claude Code's payload on stdin, so each patches its note and leaves the
ranks, the communities and graph.html to the detached jobs it starts. No writer or reader may
fail or see a corrupt graph, no hook may log a failure, and once every hook and every job it
started is done the graph equals a from-scratch build of the same files and graph.html draws it,
with no extra full update in between (each edit was followed by its own hook, as in an agent
session).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import orjson

from conftest import REPO
from hook_world import fake_kg
from robust_corpus import canonical, first_difference, fresh_build
from test_crash_kill import generate_vault
from vault_kg.jobs import clustering
from vault_kg.jobs.html_render import rendering
from vault_kg.update.engine import run
from vault_kg.core.scopes import vault_scope

WRITERS = 8
ROUNDS = int(os.environ.get("KG_CONCURRENCY_ROUNDS", "2"))


def kg_args(*args: str) -> list[str]:
    return [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", *args]


class Readers:
    """Query processes and in-process graph.json parses, in a loop until stopped."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.stop = threading.Event()
        self.failures: list[str] = []
        self.queries = 0
        self.parses = 0
        self.threads = [threading.Thread(target=self._queries, daemon=True), threading.Thread(target=self._parses, daemon=True)]

    def __enter__(self) -> "Readers":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)

    def _queries(self) -> None:
        questions = [["query", "payments retry webhook", "--json"], ["god-nodes", "-n", "5", "--json"], ["query", "deploy release client", "--json", "--depth", "3"]]
        i = 0
        while not self.stop.is_set():
            args = questions[i % len(questions)] + ["--vault", str(self.vault)]
            proc = subprocess.run(kg_args(*args), capture_output=True, text=True, timeout=120)
            i += 1
            self.queries += 1
            if proc.returncode != 0:
                self.failures.append(f"{args[0]} exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
                continue
            try:
                json.loads(proc.stdout)
            except ValueError as exc:
                self.failures.append(f"{args[0]} printed invalid JSON: {exc}")
            self.stop.wait(0.2)

    def _parses(self) -> None:
        graph = self.vault / "kg-out" / "graph.json"
        while not self.stop.is_set():
            try:
                data = orjson.loads(graph.read_bytes())
                ids = {n["id"] for n in data["nodes"]}
                dangling = [e for e in data["edges"] if e["source"] not in ids or e["target"] not in ids]
                if dangling:
                    self.failures.append(f"graph.json has edges to missing nodes: {dangling[:2]}")
            except Exception as exc:  # any read of a half-written file lands here
                self.failures.append(f"graph.json unreadable mid-update: {type(exc).__name__}: {exc}")
            self.parses += 1
            time.sleep(0.01)


def post_tool_use(vault: Path, config: Path, path: Path) -> subprocess.Popen[str]:
    """The PostToolUse hook as Claude Code starts it after an Edit of `path`: hooks/hooks.json's command."""
    (group,) = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["PostToolUse"]
    command = group["hooks"][0]["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(REPO))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "CLAUDE_"))}
    env.update({"KG_CONFIG": str(config), "KG_OLLAMA": "off", "CLAUDE_PLUGIN_ROOT": str(REPO), "KG_BIN": str(config.parent / "bin" / "kg")})
    env["KG_RANK_FULL_EVERY"] = "1"  # the jobs recompute in full: the settled graph is a fresh build's byte for byte (carrying: tests/test_rank_carry.py)
    payload = {"session_id": "conc", "cwd": str(vault), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(path)}, "tool_response": {"success": True}}
    proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=vault, text=True)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload))
    proc.stdin.close()
    return proc


def hook_round(vault: Path, config: Path, rng: random.Random) -> tuple[int, list[str]]:
    """Edit notes and start the PostToolUse hook after each edit, 8 at a time, half on one shared note."""
    notes = sorted(vault.rglob("*.md"))
    shared = rng.choice(notes)
    targets = [shared] * (WRITERS // 2) + rng.sample([n for n in notes if n != shared], WRITERS - WRITERS // 2)
    rng.shuffle(targets)
    procs: list[tuple[Path, subprocess.Popen[str]]] = []
    for path in targets:
        path.write_text(path.read_text() + f"\nEdited: see [[{rng.choice(notes).stem}]] #topic/edit{rng.randrange(4)}\n")
        procs.append((path, post_tool_use(vault, config, path)))
    failures = []
    for path, proc in procs:
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
        if proc.wait(timeout=300) != 0:
            failures.append(f"the hook for {path.name} exited {proc.returncode}: {err.strip()[-400:]}")
        elif out.strip():
            json.loads(out)  # Claude Code reads the hook's stdout as JSON
    return len(procs), failures


def jobs_done(out: Path, timeout: float = 300) -> None:
    """Wait until no graph.html render and no clustering the hooks started runs or waits (twice
    in a row, since a clustering job's update starts a render as it ends)."""
    deadline, quiet = time.monotonic() + timeout, 0
    while quiet < 2:
        assert time.monotonic() < deadline, f"the hooks' background jobs still ran after {timeout:.0f}s"
        quiet = quiet + 1 if not (rendering(out) or clustering.running(out)) else 0
        time.sleep(0.1)


def hammer(vault: Path, rounds: int) -> tuple[int, list[str], Readers]:
    """Build an 80-note vault, then `rounds` of eight concurrent PostToolUse hooks with readers
    alongside, and wait for the jobs they started: (hook processes, failures, the readers).
    Shared with bench/robustness.py."""
    generate_vault(vault, 80, 11)
    run(vault_scope(vault))
    config = vault.parent / "config.toml"
    config.write_text(f'vault = "{vault}"\n', encoding="utf-8")
    fake_kg(config.parent / "bin")  # the installed `kg` the launcher finds (KG_BIN)
    rng = random.Random(5)
    writers = 0
    failures: list[str] = []
    try:
        with Readers(vault) as readers:
            for _ in range(rounds):
                count, problems = hook_round(vault, config, rng)
                writers += count
                failures += problems
    finally:
        jobs_done(vault / "kg-out")  # nothing the hooks started outlives the test
    log = vault / "kg-out" / "hooks.log"
    if log.exists() and log.read_text().strip():
        failures.append(f"a hook failed (fail-open, logged): {log.read_text()[-800:]}")
    return writers, failures + readers.failures, readers


def test_eight_hooks_at_once_with_readers(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    writers, failures, readers = hammer(vault, ROUNDS)
    scope = vault_scope(vault)
    print(f"concurrency: {writers} writer processes, {readers.queries} query processes, {readers.parses} graph.json reads")
    assert not failures, "\n".join(failures[:10])
    assert readers.queries >= 2 and readers.parses >= 10
    incremental, fresh = canonical(scope.out), fresh_build(scope, tmp_path / "fresh")
    assert incremental == fresh, first_difference(incremental, fresh)
    state = (scope.out / "graph-state.js").read_text(encoding="utf-8")  # hooks leave graph.html to whoever looks (#33)
    assert f'"digest": {zlib.crc32((scope.out / "graph.json").read_bytes())}' in state, "graph-state.js does not name the final graph.json"
