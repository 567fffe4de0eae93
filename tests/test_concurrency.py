"""Concurrency: 8 hook-style `kg update PATH` processes at once, on different and on the same notes,
while readers run `kg query` / `kg god-nodes` and parse graph.json in a loop.

No writer or reader may fail or see a corrupt graph, and once every writer is done the graph
equals a from-scratch build of the same files, with no extra full update in between (each edit
was followed by its own hook, as in an agent session).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

from robust_corpus import canonical, first_difference, fresh_build
from test_crash_kill import generate_vault
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


def hook_round(vault: Path, rng: random.Random) -> tuple[int, list[str]]:
    """Edit notes and start one `kg update PATH` after each edit, 8 at a time, half on one shared note."""
    notes = sorted(vault.rglob("*.md"))
    shared = rng.choice(notes)
    targets = [shared] * (WRITERS // 2) + rng.sample([n for n in notes if n != shared], WRITERS - WRITERS // 2)
    rng.shuffle(targets)
    procs: list[tuple[Path, subprocess.Popen[str]]] = []
    for path in targets:
        path.write_text(path.read_text() + f"\nEdited: see [[{rng.choice(notes).stem}]] #topic/edit{rng.randrange(4)}\n")
        procs.append((path, subprocess.Popen(kg_args("update", str(path), "--vault", str(vault), "--json"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    failures = []
    for path, proc in procs:
        out, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            failures.append(f"kg update {path.name} exited {proc.returncode}: {err.strip()[-400:]}")
            continue
        result = json.loads(out)[0]
        if result["nodes"] <= 0:
            failures.append(f"kg update {path.name} reported an empty graph: {result}")
    return len(procs), failures


def hammer(vault: Path, rounds: int) -> tuple[int, list[str], Readers]:
    """Build an 80-note vault, then `rounds` of eight concurrent hook updates with readers
    alongside: (writer processes, failures, the readers). Shared with bench/robustness.py."""
    generate_vault(vault, 80, 11)
    run(vault_scope(vault))
    rng = random.Random(5)
    writers = 0
    failures: list[str] = []
    with Readers(vault) as readers:
        for _ in range(rounds):
            count, problems = hook_round(vault, rng)
            writers += count
            failures += problems
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
