"""What one agent edit costs, foreground and background, side by side with another checkout (#33).

Usage: python bench/edit_cost.py [--notes 1000] [--edits 12] [--shape default] --against DIR

Generates one vault (`gen_vault.py`, `--shape`), copies it for each checkout (this one and
`--against`, e.g. a `git worktree` of main with PYTHONPATH pointed at it, same interpreter and
packages: each side builds and keeps its own cache, since the formats differ), builds both, then:

- **settled**: one-note PostToolUse hooks (every other edit adds a `[[link]]`, the others only
  prose), each side in turn, the first alternating from edit to edit, each waiting for its own
  background jobs before the next edit; the background CPU per edit is the sum of the CPU of every
  job that ran (each job's own log line: clustering, graph.html renders), divided by the edits;
- **back to back**: the same edits without waiting (an agent editing every few hundred ms),
  interleaved with the PostToolUse hook on a file outside the vault: the one-note hook's median
  wall time against the outside hook's, and the background CPU the burst cost once settled.

Wall time is inflated by other load on a shared machine; both sides run in the same minutes,
alternating, so the ratios between them hold better than absolute times. The page is
`docs/benchmarks/edit_cost_<notes>_<shape>.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_bench import describe_jobs, jobs_since, log_offsets  # noqa: E402
from background import kg_env, settle  # noqa: E402
from figures import record  # noqa: E402
from gen_vault import generate  # noqa: E402

KG = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()"]
HERE = Path(__file__).resolve().parents[1]


class Side:
    """One checkout with its own copy of the vault and its own config."""

    def __init__(self, name: str, checkout: Path, work: Path, source: Path) -> None:
        self.name, self.work = name, work / name
        self.vault = self.work / "vault"
        shutil.copytree(source, self.vault)
        config = self.work / "config.toml"
        config.write_text(f'vault = "{self.vault}"\n[projects]\n', encoding="utf-8")
        self.env = kg_env(KG_OLLAMA="off", KG_CONFIG=str(config), PYTHONPATH=str(checkout))
        self.env.pop("KG_VAULT", None)
        self.outside = {"session_id": "bench", "cwd": str(self.work), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(self.work / "elsewhere" / "main.py")}}
        self.hooks: dict[str, list[tuple[float, float]]] = {}

    @property
    def out(self) -> Path:
        return self.vault / "kg-out"

    def build(self) -> None:
        done = subprocess.run([*KG, "build", "--vault", str(self.vault)], env=self.env, capture_output=True, text=True, cwd=self.work)  # not this checkout: `-c` puts the cwd first on sys.path
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: build failed: {done.stderr.strip()}")
        (self.out / "reconciled.stamp").write_text("bench\n")
        settle(self.out)

    def hook(self, kind: str, path: Path | None) -> None:
        """One PostToolUse hook (`path`: the edited note; None: a file outside), timed (wall, CPU)."""
        payload = self.outside if path is None else {**self.outside, "tool_input": {"file_path": str(path)}}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([*KG, "hook", "post-tool-use"], input=json.dumps(payload), capture_output=True, text=True, env=self.env, timeout=300, cwd=self.work)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0 or "kg hook" in done.stderr:
            raise SystemExit(f"{self.name}: hook failed: {done.stderr.strip()}")
        self.hooks.setdefault(kind, []).append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))

    def edit(self, n: int, notes: list[str]) -> Path:
        """Edit `n`: the same note and text on both sides (a link every other edit)."""
        note = self.vault / notes[n % len(notes)]
        link = f" See [[{Path(notes[(n * 7 + 3) % len(notes)]).stem}]]." if n % 2 else ""
        with note.open("a", encoding="utf-8") as handle:
            handle.write(f"\nEdited by the bench, edit {n}.{link}\n")
        return note


GRACE_S = 1.5  # a job spawned a moment ago takes its lock within this (a graph.html render has no queued marker)


def quiet(side: Side) -> None:
    """Until no background job of this side runs, waits or is about to start."""
    settle(side.out)
    time.sleep(GRACE_S)
    settle(side.out)


def main(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="kg-edit-cost-"))
    try:
        source = work / "source"
        generate(source, args.notes, 7, shape=args.shape)
        notes = sorted(str(p.relative_to(source)) for p in source.glob("area0*/*.md"))
        sides = [Side("this", HERE, work, source), Side("against", args.against.resolve(), work, source)]
        labels = {"this": f"this checkout ({HERE.name})", "against": f"--against ({args.against})"}
        for side in sides:
            print(f"building {side.name} ({args.notes} notes, shape {args.shape}) ...", flush=True)
            side.build()
            quiet(side)
        load_before = os.getloadavg()[0]
        offsets = {side.name: log_offsets(side.out) for side in sides}
        for n in range(args.edits):  # alternating which side goes first; each edit waits for its side's jobs
            for side in sides if n % 2 == 0 else sides[::-1]:
                side.hook("settled", side.edit(n, notes))
                quiet(side)
        settled = {side.name: jobs_since(offsets[side.name]) for side in sides}
        burst: dict[str, list[tuple[str, float, float]]] = {}
        for side in sides:  # a burst a side, interleaved with the outside hook; its jobs counted once it settled
            offsets[side.name] = log_offsets(side.out)
            for n in range(args.edits, 3 * args.edits):
                side.hook("outside", None)
                side.hook("back to back", side.edit(n, notes))
            quiet(side)
            burst[side.name] = jobs_since(offsets[side.name])
        print(
            f"\n{args.notes} notes, shape {args.shape}; {args.edits} settled edits and {2 * args.edits} back-to-back edits a side; load average {load_before:.1f} before the edits, {os.getloadavg()[0]:.1f} after"
        )
        print(f"{'':<44}{labels['this']:>26}{labels['against']:>30}")
        rows: list[tuple[str, Any, Any]] = []
        for name in ("settled", "back to back", "outside"):
            cells = []
            for side in sides:
                runs = side.hooks.get(name, [])
                cells.append(f"{statistics.median(w for w, _ in runs) * 1000:.0f} ms wall, {statistics.median(c for _, c in runs) * 1000:.0f} ms CPU" if runs else "-")
            rows.append((f"one-note hook, {name}" if name != "outside" else "hook on a file outside the vault", *cells))
        ratio = []
        for side in sides:
            mine, outside = side.hooks["back to back"], side.hooks["outside"]
            ratio.append(f"{statistics.median(w for w, _ in mine) / statistics.median(w for w, _ in outside):.1f}×")
        rows.append(("back-to-back hook ÷ outside hook (wall)", *ratio))
        rows.append(("background CPU per edit, settled", *(f"{sum(j[2] for j in settled[s.name]) / args.edits * 1000:.0f} ms" for s in sides)))
        rows.append(("background CPU per edit, back to back", *(f"{sum(j[2] for j in burst[s.name]) / (2 * args.edits) * 1000:.0f} ms" for s in sides)))
        for label, a, b in rows:
            print(f"{label:<44}{a:>26}{b:>30}")
        print("the background jobs (each job's own log line):")
        for side in sides:
            print(f"  {labels[side.name]}, settled: {describe_jobs(settled[side.name], args.edits)}")
            print(f"  {labels[side.name]}, back to back: {describe_jobs(burst[side.name], 2 * args.edits)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=12, help="settled edits a side (and twice as many back to back)")
    parser.add_argument("--shape", default="default", choices=("default", "dense", "tags", "long"))
    parser.add_argument("--against", type=Path, required=True, help="another checkout of vault-kg (e.g. a `git worktree` of main)")
    arguments = parser.parse_args()
    with record(f"edit_cost_{arguments.notes}_{arguments.shape}"):
        main(arguments)
