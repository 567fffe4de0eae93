"""Pathological inputs from issue 19, timed: what one hostile note or question costs.

Usage: python bench/pathological.py [--tree PATH] [--limit 120]

Each case runs in a fresh child process (the same interpreter) against the source tree `--tree`
(default: this checkout; pass an older checkout, e.g. `git worktree add /tmp/old d336109`, to
get the figures before a fix). A case still running after `--limit` seconds is stopped and
reported as such. Prints wall seconds and the child's peak RSS in MB for each case.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

NOTE_CASE = r"""
import resource, sys, time
from extract.notes import extract_note
data = {data}
started = time.perf_counter()
extract_note("hostile.md", data)
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""

RECALL_CASE = r"""
import resource, sys, time
from pathlib import Path
from episodic.recall import recall
started = time.perf_counter()
found = recall(Path({vault!r}), {question!r})
assert found.hits, "the journal entries are found"
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""

NOTES = {
    "`[x](` repeated, 160 KB note": 'b"[x](" * 40_000',
    "`[x](` repeated, 1.2 MB note": 'b"[x](" * 300_000',
    "heading + 2 KB of spaces": 'b"# a" + b" " * 2_000 + b"b"',
    "heading + 1 MB of spaces": 'b"# a" + b" " * 1_000_000 + b"b"',
    "`a.` repeated, 1.2 MB (URL scheme)": 'b"a." * 600_000',
    "`TOKEN` repeated, 1.2 MB (env secret)": 'b"TOKEN" * 240_000',
}


def journal_vault(base: Path) -> Path:
    vault = base / "vault"
    (vault / "journal").mkdir(parents=True)
    for day, text in (("2024-05-01", "Fixed the webhook retries"), ("2025-01-10", "Moved payments to RQ"), ("2025-03-14", "Reviewed the deploy runbook")):
        (vault / "journal" / f"{day}.md").write_text(f"# {day}\n\n## 10:00 · payments\n{text}\n", encoding="utf-8")
    return vault


def run_case(tree: Path, code: str, limit: float, env: dict[str, str]) -> str:
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return f"stopped after {limit:.0f} s (did not finish)"
    if done.returncode != 0:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    seconds, rss = (float(x) for x in done.stdout.split()[-2:])
    return f"{seconds:8.3f} s   peak RSS {rss:6.0f} MB   (process {time.perf_counter() - started:.1f} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="source tree to measure (default: this checkout)")
    parser.add_argument("--limit", type=float, default=120, help="seconds before a case is stopped")
    args = parser.parse_args()
    tree = args.tree.resolve()
    home = Path(tempfile.mkdtemp(prefix="kg-patho-"))
    env = {**os.environ, "PYTHONPATH": str(tree), "KG_CONFIG": str(home / "config.toml"), "KG_OLLAMA": "off", "OMP_NUM_THREADS": "1"}
    env.pop("KG_VAULT", None)
    print(f"tree: {tree}")
    for name, data in NOTES.items():
        print(f"{name:42} {run_case(tree, NOTE_CASE.format(data=data), args.limit, env)}", flush=True)
    vault = journal_vault(home)
    for name, question in (
        ("recall, list, 0001-01-01 .. 9999-12-31", "what happened between 0001-01-01 and 9999-12-31"),
        ("recall, search, 0001-01-01 .. 9999-12-31", "webhook retries between 0001-01-01 and 9999-12-31"),
    ):
        print(f"{name:42} {run_case(tree, RECALL_CASE.format(vault=str(vault), question=question), args.limit, env)}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("pathological"):
        main()
