"""What a hook process pays around its work, side by side with another checkout: CPU and imports.

Usage: python bench/hook_fixed_cost.py [--notes 10000] [--runs 10] [--against DIR] [--vault DIR] [--model-pass on]

Generates and builds a vault (`gen_vault.py`, model pass off) unless `--vault` names a built one,
then, round after round, runs whole `kg` processes from this checkout and, with `--against`, from
another one (PYTHONPATH pointed at it, same interpreter and packages): the PostToolUse hook on a
file outside the vault, on one note given a new `[[link]]`, on one note given a line of prose,
and a no-op `kg update`. In each round both checkouts edit the same note (a cost depends on the
note; each links it to a different note), one after the other, the first alternating from round
to round (which edit of a note comes first may change its cost); the import check edits the same
note for both. Each process starts after the background work of the one before has
finished (graph.html renders, clustering), and is timed by its CPU (user + sys of the child: the
process's own work, moved less than wall time by other load on a shared machine) and wall time.
Prints the median of each, the difference between the two checkouts, and which modules of the
model pass's planner each side's link-edit hook imported. Both checkouts must read the same cache
format (the vault is shared). `--model-pass on` runs everything with the model pass on (a new
user's default) and no model reachable (OLLAMA_HOST points at a closed loopback port): every
edited note is marked pending, and the no-op update records the pass's mode; its page is
`hook_fixed_cost_model_pass_on.md`.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import kg_env, settle  # noqa: E402
from figures import record  # noqa: E402
from watch_bench import prepare  # noqa: E402 (a generated vault, built once)

HERE = Path(__file__).resolve().parents[1]
KG = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()"]
WATCHED = ("extract.llm_prompt", "extract.stated_relations", "extract.entities", "extract.verify", "extract.pair_candidates", "difflib")
STEPS = ("post-tool-use, outside", "post-tool-use, a new link", "post-tool-use, prose only", "kg update, no-op")


def one_process(args: list[str], env: dict[str, str], stdin: str = "") -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, stderr) of one `kg` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*KG, *args], input=stdin, capture_output=True, text=True, env=env, cwd=env["PYTHONPATH"], timeout=300)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "kg hook" in done.stderr:
        raise SystemExit(f"kg {' '.join(args)} failed: {done.stderr.strip()}")
    if args == ["update"] and "nothing to rewrite" not in done.stdout:
        raise SystemExit(f"the no-op update was not a no-op: {done.stdout.strip()}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall, done.stderr


class Vault:
    """The bench vault, the edits the hooks are timed on, and the payloads they get."""

    def __init__(self, vault: Path, work: Path) -> None:
        self.vault, self.work = vault, work
        self.notes = sorted(vault.glob("area0*/*.md"))

    def payload(self, path: Path) -> str:
        return json.dumps({"session_id": "bench", "cwd": str(self.work), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(path)}})

    def edit(self, link: bool, key: int, side: int) -> Path:
        """Append a line to note number `key`: a new `[[link]]` to another note (a different one
        for each side, so that neither adds a link the other just added), or prose."""
        note = self.notes[(key * 13) % len(self.notes)]
        target = self.notes[(key * 7 + 3 + 101 * side) % len(self.notes)].stem
        with note.open("a", encoding="utf-8") as handle:
            handle.write(f"\nEdited by the bench at {time.time()}" + (f", see [[{target}]].\n" if link else ".\n"))
        return note


def run_step(step: str, vault: Vault, env: dict[str, str], key: int, side: int) -> tuple[float, float, str]:
    settle(vault.vault / "kg-out")
    if step == "kg update, no-op":
        return one_process(["update"], env)
    path = vault.work / "elsewhere" / "main.py" if step == "post-tool-use, outside" else vault.edit(step.endswith("link"), key, side)
    return one_process(["hook", "post-tool-use"], env, vault.payload(path))


def imported(vault: Vault, env: dict[str, str], side: int) -> list[str]:
    """The watched modules a link-edit hook process of this checkout imports."""
    settle(vault.vault / "kg-out")
    args = ["hook", "post-tool-use"]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *KG[1:], *args], input=vault.payload(vault.edit(True, 0, side)), capture_output=True, text=True, env=env, cwd=env["PYTHONPATH"], timeout=300
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return [m for m in WATCHED if m in names]


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--vault", type=Path, help="a vault generated by gen_vault.py and built with `kg build`")
    parser.add_argument("--runs", type=int, default=10, help="rounds; an even number gives each checkout the first turn equally often")
    parser.add_argument("--against", type=Path, help="another checkout of vault-kg to run side by side (e.g. a `git worktree` of main)")
    parser.add_argument("--model-pass", choices=("off", "on"), default="off")
    return parser.parse_args()


def main(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="kg-hook-cost-"))
    try:
        config = work / "config.toml"
        env = kg_env(KG_OLLAMA=args.model_pass, KG_CONFIG=str(config), PYTHONPATH=str(HERE), OLLAMA_HOST="127.0.0.1:9")
        env.pop("KG_VAULT", None)
        vault = Vault(prepare(args, work, env), work)
        config.write_text(f'vault = "{vault.vault}"\n[projects]\n', encoding="utf-8")
        (vault.vault / "kg-out" / "reconciled.stamp").write_text("bench\n")
        sides = {"this checkout": env}
        if args.against:
            sides[f"{args.against}"] = {**env, "PYTHONPATH": str(args.against.resolve())}
        report(vault, sides, args.runs, sum(1 for _ in vault.vault.glob("area*/*.md")))
    finally:
        if (work / "vault" / "kg-out").exists():
            settle(work / "vault" / "kg-out")  # no background job outlives the bench's folder
        shutil.rmtree(work, ignore_errors=True)


def report(vault: Vault, sides: dict[str, dict[str, str]], runs: int, notes: int) -> None:
    cpu: dict[tuple[str, str], list[float]] = {}
    wall: dict[tuple[str, str], list[float]] = {}
    for r in range(runs):
        for step in STEPS:
            # both checkouts edit the same note in a round, first one then the other, in turn
            for side in list(sides)[:: 1 if r % 2 == 0 else -1]:
                c, w, _ = run_step(step, vault, sides[side], r * len(STEPS) + STEPS.index(step) + 1, list(sides).index(side))
                cpu.setdefault((step, side), []).append(c)
                wall.setdefault((step, side), []).append(w)
    print(f"{notes} notes, {runs} rounds, each step run by each checkout on the same note, which goes first alternating; medians (ms)")
    names = list(sides)
    for step in STEPS:
        for side in names:
            c, w = statistics.median(cpu[step, side]) * 1000, statistics.median(wall[step, side]) * 1000
            extra = ""
            if side != names[0]:
                extra = f"   this checkout's CPU {statistics.median(cpu[step, names[0]]) * 1000 - c:+.0f} ms"
            print(f"  {step:28} {side[:40]:40} CPU {c:6.0f}  wall {w:6.0f}{extra}")
    for number, (side, env) in enumerate(sides.items()):
        print(f"  {side[:40]:40} link-edit hook imports of {', '.join(WATCHED)}: {', '.join(imported(vault, env, number)) or 'none'}")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    options = parse()
    page = "hook_fixed_cost" + ("_model_pass_on" if options.model_pass == "on" else "") + ("" if options.notes == 10_000 else f"_{options.notes}_notes")
    with record(page):
        main(options)
