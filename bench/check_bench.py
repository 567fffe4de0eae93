"""`kg check` on 2,000 anchored notes over a copy of the installed networkx package.

Copies networkx to a scratch folder, registers it as a project (isolated KG_CONFIG), writes a vault
of 2,000 notes each anchored to a symbol (spread over every file that defines one; every tenth note
also rests on another note), ages every file, then times:

- in-process `check()`: cold (no anchor cache), warm (nothing changed), after one file changed;
- whole `kg check` processes (interpreter start + imports included), warm.

Prints how many notes and anchored files each run read, so "only anchored files, each once" and
"nothing read when nothing changed" are visible in the figures.

    /tmp/kgenv/bin/python bench/check_bench.py [--notes 2000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def age_file(path: Path, seconds: int) -> None:
    stamp = time.time_ns() - seconds * 10**9
    os.utime(path, ns=(stamp, stamp))


def age(root: Path, seconds: int = 3600) -> None:
    stamp = time.time_ns() - seconds * 10**9
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(folder, name), ns=(stamp, stamp))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    import networkx

    work = Path(tempfile.mkdtemp(prefix="kg-check-bench-"))
    os.environ["KG_CONFIG"] = str(work / "config.toml")
    os.environ["KG_OLLAMA"] = "off"
    repo = work / "networkx"
    shutil.copytree(Path(networkx.__path__[0]), repo / "networkx", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / ".git").mkdir()

    from extract.code import symbols_of
    from extract.code_scan import list_sources
    from vault_kg.anchors.check import check
    from vault_kg.core.projects import add_project
    from vault_kg.core.scopes import vault_scope

    add_project(repo, "nx")
    sources = list_sources(repo)[0]
    per_file = []
    for rel in sources:
        symbols = symbols_of(rel, (repo / rel).read_bytes())
        if symbols:
            per_file.append((rel, sorted(symbols.items())))
    vault = work / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    anchored_files = set()
    for i in range(args.notes):
        rel, symbols = per_file[i % len(per_file)]
        locator, info = symbols[(i // len(per_file)) % len(symbols)]
        anchored_files.add(rel)
        extra = f'- note: "[[Note {i - 7:04d}]]"\n' if i % 10 == 9 else ""
        (vault / "notes" / f"Note {i:04d}.md").write_text(
            f"---\nsummary: Note {i} on {locator}.\ntags: [scope/nx, topic/bench]\nanchors:\n"
            f"- project: nx\n  locator: '{locator}'\n  hash: {info['hash']}\n{extra}"
            f"history:\n- action: anchor\n  project: nx\n  locator: '{locator}'\n  hash: {info['hash']}\n---\n"
            f"# Note {i}\n\nDescribes `{locator}`.\n"
        )
    age(repo)
    age(vault)
    scope = vault_scope(vault)
    print(f"repo: {len(sources)} source files ({len(per_file)} define symbols), {len(anchored_files)} anchored; vault: {args.notes} notes")

    started = time.perf_counter()
    cold = check(scope)
    cold_s = time.perf_counter() - started
    print(f"cold check (no cache), in process: {cold_s:.2f} s · read {cold['read']['notes']} notes, {cold['read']['files']} code files · {cold['summary']}")

    warm = []
    for _ in range(args.runs):
        started = time.perf_counter()
        report = check(scope)
        warm.append(time.perf_counter() - started)
    print(f"warm check, in process:  median {statistics.median(warm):.3f} s (min {min(warm):.3f}) · read {report['read']['notes']} notes, {report['read']['files']} code files · {report['summary']}")

    target = repo / per_file[0][0]
    target.write_text(target.read_text().replace("def ", "def  ", 1))
    age_file(target, 1800)
    started = time.perf_counter()
    changed = check(scope)
    changed_s = time.perf_counter() - started
    print(f"after reformatting 1 file, in process: {changed_s:.3f} s · read {changed['read']['notes']} notes, {changed['read']['files']} code files · {changed['summary']}")
    text = target.read_text()
    target.write_text(text + "\n\ndef added_by_bench():\n    return 1\n")
    age_file(target, 1700)
    edited = check(scope)
    print(f"after adding a function: read {edited['read']['files']} code files · {edited['summary']}")

    kg = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "check", "--vault", str(vault)]
    walls = []
    for _ in range(args.runs):
        started = time.perf_counter()
        proc = subprocess.run(kg, capture_output=True, text=True, env=dict(os.environ))
        walls.append(time.perf_counter() - started)
    print(f"warm `kg check` process: median {statistics.median(walls):.2f} s (min {min(walls):.2f}) · exit {proc.returncode} · {proc.stdout.strip().splitlines()[-1]}")

    from vault_kg.update.engine import run

    started = time.perf_counter()
    built = run(scope)
    print(f"vault build with the anchors pass, in process: {time.perf_counter() - started:.2f} s · {built.nodes} nodes")
    rel, symbols = next((r, sy) for r, sy in per_file if " › function " in sy[0][0] and sy[0][0].count(" › ") == 1)
    victim = repo / rel
    locator, info = symbols[0]
    name = locator.rsplit(" ", 1)[1]
    lines = victim.read_text().split("\n")
    lines[info["line"] - 1] = lines[info["line"] - 1].replace(name, name + "_renamed", 1)
    victim.write_text("\n".join(lines))
    age_file(victim, 1600)
    from vault_kg.anchors import build_pass as anchors

    timed: list[float] = []
    original = anchors.post_assembly

    def timed_pass(ctx: object) -> None:
        t0 = time.perf_counter()
        original(ctx)
        timed.append(time.perf_counter() - t0)

    anchors.post_assembly = timed_pass
    started = time.perf_counter()
    run(scope)
    seconds = time.perf_counter() - started
    anchors.post_assembly = original
    import json

    stale = json.loads((vault / "kg-out" / "graph.json").read_text())["graph"]["stale"]
    print(f"vault update after 1 code file changed (no note changed), in process: {seconds:.2f} s, of which the anchors pass {timed[0]:.2f} s · {len(stale)} notes stale")
    for item in stale[:8]:
        print(f"    {item['source']}: {item['reason']}")
    started = time.perf_counter()
    run(scope)
    print(f"vault no-op update (anchored files stat'ed, nothing changed), in process: {time.perf_counter() - started:.2f} s")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("check_bench"):
        main()
