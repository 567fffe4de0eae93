"""Robustness figures: how hard the suites tried to break the graph, and what they found.

Usage: python bench/robustness.py [--seconds 120] [--kill-seconds 60] [--hostile 3000]

Prints: incremental-vs-scratch sequences and steps checked with divergences; SIGKILLs survived
without corruption; concurrent hook processes and readers; hostile inputs tried; secrets leaked.
Each part reuses the code of its test suite under tests/ (same generators, same checks).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def isolate() -> Path:
    home = Path(tempfile.mkdtemp(prefix="kg-robust-"))
    os.environ["KG_CONFIG"] = str(home / "config.toml")
    os.environ["KG_OLLAMA"] = "off"
    os.environ.pop("KG_VAULT", None)
    return home


def incremental(seconds: float) -> None:
    os.environ["KG_HTML"] = "off"
    from test_prop_incremental import soak

    started = time.perf_counter()
    totals = soak(seconds)
    os.environ.pop("KG_HTML", None)
    print(f"incremental ≡ from scratch: {totals['sequences']} sequences, {totals['steps']} steps checked "
          f"(each against a fresh build of both scopes), {len(totals['divergences'])} divergences, {time.perf_counter() - started:.0f}s")
    for line in totals["divergences"][:5]:  # type: ignore[index]
        print(f"  {line[:400]}")


def kills(seconds: float, home: Path) -> None:
    from test_crash_kill import kill_rounds

    started = time.perf_counter()
    totals = kill_rounds(home / "crash", seconds, fresh_every_round=True, seed=int(time.time()) % 1000)
    print(f"crash safety: {totals['kills']} SIGKILLs on a 500-note vault ({totals['killed_mid_run']} mid-run), "
          f"{totals['kills']} survived without corruption, {totals['fresh_checks']} recoveries equal to a fresh build, "
          f"{totals['leftover_temp_files']} temp files left, {time.perf_counter() - started:.0f}s")


def concurrency(rounds: int, home: Path) -> None:
    from robust_corpus import canonical, fresh_build
    from test_concurrency import hammer
    from vault_kg.scopes import vault_scope

    vault = home / "conc" / "vault"
    writers, failures, readers = hammer(vault, rounds)
    scope = vault_scope(vault)
    same = canonical(scope.out) == fresh_build(scope, home / "conc" / "fresh")
    print(f"concurrency: {writers} `kg update PATH` processes, 8 at a time (half on one shared note), "
          f"{readers.queries} query processes and {readers.parses} graph.json reads alongside; "
          f"{len(failures)} failures; final graph equals from scratch: {same}")


def hostile(count: int) -> None:
    from test_hostile_input import check_code, check_note, pathological_cases, random_blob

    rng = random.Random(1)
    quarantined = clean = 0
    started = time.perf_counter()
    slowest = 0.0
    for i in range(count):
        data = random_blob(rng) if i % 2 else bytes(rng.randrange(256) for _ in range(rng.randrange(2048)))
        for fn, args in ((check_note, (data,)), (check_code, (data, f"src/h{i}{rng.choice(['.py', '.ts', '.go', '.rs'])}"))):
            t = time.perf_counter()
            ext = fn(*args)
            slowest = max(slowest, time.perf_counter() - t)
            quarantined += bool(ext.quarantine)
            clean += not ext.quarantine
    for name, (relpath, data) in pathological_cases().items():
        t = time.perf_counter()
        ext = check_note(data, relpath) if relpath.endswith(".md") else check_code(data, relpath)
        slowest = max(slowest, time.perf_counter() - t)
        quarantined += bool(ext.quarantine)
        clean += not ext.quarantine
    tried = 2 * count + len(pathological_cases())
    print(f"hostile input: {tried} inputs tried ({len(pathological_cases())} named pathological), {quarantined} quarantined with a reason, "
          f"{clean} extracted cleanly, 0 crashes, slowest {slowest:.2f}s, {time.perf_counter() - started:.0f}s")


def secrets(home: Path) -> None:
    import pytest

    code = pytest.main(["-q", "-p", "no:cacheprovider", str(REPO / "tests" / "test_secrets_leak.py")])
    from test_secrets_leak import SECRETS

    places = "notes (frontmatter, headings, prose, links, .env lines, code fences), code (comments, docstrings, defaults), a session transcript"
    print(f"secrets: {len(SECRETS)} secret shapes in {places}; checked journal, graph.json, report, brief, html, search index, "
          f"query/explain/god-nodes, hook output, MCP answers; leaked: {'0' if code == 0 else 'SEE FAILURES ABOVE'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120, help="time for the incremental-vs-scratch sequences")
    parser.add_argument("--kill-seconds", type=float, default=60, help="time for the SIGKILL rounds")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of 8 concurrent hook processes")
    parser.add_argument("--hostile", type=int, default=3000, help="generated hostile inputs (each as a note and as code)")
    args = parser.parse_args()
    home = isolate()
    incremental(args.seconds)
    kills(args.kill_seconds, home)
    concurrency(args.rounds, home)
    hostile(args.hostile)
    secrets(home)


if __name__ == "__main__":
    main()
