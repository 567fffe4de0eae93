"""Whole-process latency of the agent integration on generated vaults (3,000 and 10,000 notes).

Measures what Claude Code waits for: `kg hook post-tool-use` for a path outside the vault and
projects (target ≤ 100 ms; the baseline: it only starts `kg`) and for one edited vault note
(≤ 5× the outside hook, and ≤ 0.5 s at 10,000 notes), a no-op `kg update` (≤ 2.5× the outside
hook), `kg hook session-start` (≤ 500 ms), and an MCP `query` round trip on a warm `kg mcp` server
(≤ 100 ms). The outside hook, the one-note hook and the no-op update run interleaved, round by
round, so their ratios come from the same minutes of the same (shared) machine. Prints the median
and the 90th percentile of each, the CPU time, the ratio to the outside hook, and the bare Python
start-up for reference. The one-note hook is timed after the previous edit's background graph.html
render and background job finished, and again back to back (edits faster than the jobs: the update
shares the cores with them, and may wait for a job's short update); half of the edits add a link,
half only prose, and each half also gets its own row. A link edit's ranks and artifacts are done by
a background job (`vault_kg.update.deferred_work`): the bench reads each job's CPU and wall time from its log line
and prints them under the table, per edit, so the work moved off the hook's path is counted.

Usage: python bench/agent_bench.py [--notes 3000 10000] [--vault DIR (reuse a generated, built vault)] [--runs 15]
(other sizes write a page of their own, e.g. docs/benchmarks/agent_bench_1000_notes.md)
"""

from __future__ import annotations

import argparse
import asyncio
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
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import kg_env, settle  # noqa: E402
from gen_vault import generate  # noqa: E402

from vault_kg.jobs.launcher import jobs_in  # noqa: E402

KG = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()"]
TARGETS = {
    "python start-up": None,
    "post-tool-use, outside": 0.100,
    "post-tool-use, one vault note": None,
    "  of which prose only": None,
    "  of which a new link": None,
    "  same, back to back": None,
    "kg update, no-op": None,
    "session-start": 0.500,
    "mcp query, warm": 0.100,
}
RATIO_TARGETS = {"post-tool-use, one vault note": 5.0, "  of which prose only": 5.0, "  of which a new link": 5.0, "kg update, no-op": 2.5}  # × the outside hook
NOTE_HOOK_LIMIT_10K = 0.5  # seconds, one vault note of the 10,000-note vault


CPU: dict[int, list[float]] = {}


def timed(fn: Callable[[], Any], runs: int, before_each: Callable[[], Any] | None = None) -> list[float]:
    """Wall time per run; the CPU time of the child processes is kept beside it in `CPU`."""
    return interleaved({"x": (fn, before_each)}, runs)["x"]


def interleaved(steps: dict[str, tuple[Callable[[], Any], Callable[[], Any] | None]], runs: int) -> dict[str, list[float]]:
    """Each step once per round, rounds one after another: side-by-side figures on a shared machine.
    Wall time per run; the CPU time of the child processes is kept beside it in `CPU`."""
    walls: dict[str, list[float]] = {name: [] for name in steps}
    cpus: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(runs):
        for name, (fn, before_each) in steps.items():
            if before_each is not None:
                before_each()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            fn()
            walls[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    for name in steps:
        CPU[id(walls[name])] = cpus[name]
    return walls


def kg(args: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run([*KG, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"kg {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def hook(event: str, payload: dict[str, Any], env: dict[str, str]) -> str:
    done = subprocess.run([*KG, "hook", event], input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=120)
    if done.returncode != 0 or "kg hook" in done.stderr:
        raise SystemExit(f"hook {event} failed: {done.stderr.strip()}")
    return done.stdout


def split_by_edit(results: dict[str, list[float]], name: str, parts: dict[str, int]) -> None:
    """The timed edits alternate prose (even rounds) and a new link (odd rounds), which take
    different routes (a prose edit is patched, a link edit resolves and ranks again): each half
    gets its own row, with its own CPU times, right after the row of both."""
    walls, cpus = results[name], CPU[id(results[name])]
    rows = list(results.items())
    at = [n for n, _ in rows].index(name) + 1
    halves = [(part, walls[parity::2]) for part, parity in parts.items()]
    for (_part, values), parity in zip(halves, parts.values()):
        CPU[id(values)] = cpus[parity::2]
    results.clear()
    results.update(rows[:at] + halves + rows[at:])


JOB_LOGS = ("communities.log", "html.log")


def log_offsets(out: Path) -> dict[Path, int]:
    """Where each background job log ends now: the jobs started after this write past it."""
    return {out / name: (out / name).stat().st_size if (out / name).exists() else 0 for name in JOB_LOGS}


def jobs_since(offsets: dict[Path, int]) -> list[tuple[str, float, float]]:
    return [job for log, offset in offsets.items() for job in jobs_in(log, offset)]


def describe_jobs(jobs: list[tuple[str, float, float]], edits: int) -> str:
    if not jobs:
        return f"no background job ran for {edits} edits"
    parts = []
    for name in sorted({job[0] for job in jobs}):
        mine = [job for job in jobs if job[0] == name]
        walls, cpus = [job[1] for job in mine], [job[2] for job in mine]
        parts.append(f"{len(mine)} {name} jobs, median {statistics.median(walls) * 1000:.0f} ms wall / {statistics.median(cpus) * 1000:.0f} ms CPU each")
    total = sum(job[2] for job in jobs)
    return f"{'; '.join(parts)}; {total * 1000 / edits:.0f} ms of background CPU per edit ({edits} edits)"


def prepare(args: argparse.Namespace, work: Path, notes: int) -> Path:
    if args.vault:
        return args.vault.resolve()
    vault = work / "vault"
    generate(vault, notes, 7)
    env = kg_env(KG_OLLAMA="off", KG_CONFIG=str(work / "config.toml"))
    print(f"building a {notes}-note vault (once) ...", flush=True)
    done = subprocess.run([*KG, "build", "--vault", str(vault)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return vault


async def mcp_round_trips(env: dict[str, str], cwd: Path, runs: int) -> list[float]:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    questions = ["payments retry webhook", "ledger reconcile export", "deploy release docker", "seo audit crawl keyword", "postgres migration schema"]
    async with Client(StdioTransport(KG[0], [*KG[1:], "mcp"], env=env, cwd=str(cwd))) as client:
        for q in questions:
            await client.call_tool("query", {"question": q, "budget": 800})
        times = []
        for i in range(runs):
            start = time.perf_counter()
            result = await client.call_tool("query", {"question": questions[i % len(questions)] + f" {i}", "budget": 800})
            times.append(time.perf_counter() - start)
            assert result.structured_content["hits"], "the query found nothing"
        return times


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, nargs="+", default=[3_000, 10_000])
    parser.add_argument("--vault", type=Path, help="a vault generated by gen_vault.py and built with `kg build` (one size)")
    parser.add_argument("--runs", type=int, default=15)
    return parser.parse_args()


def page(args: argparse.Namespace) -> str:
    """The page's name: `agent_bench` for the issue's sizes, one of its own for others (not to replace it)."""
    return "agent_bench" if args.notes == [3_000, 10_000] else "agent_bench_" + "_".join(map(str, args.notes)) + "_notes"


def main(args: argparse.Namespace) -> None:
    for notes in args.notes[:1] if args.vault else args.notes:
        work = Path(tempfile.mkdtemp(prefix="kg-agent-bench-"))
        try:
            one_vault(args, work, notes)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def one_vault(args: argparse.Namespace, work: Path, notes_wanted: int) -> None:
    vault = prepare(args, work, notes_wanted)
    config = work / "config.toml"
    config.write_text(f'vault = "{vault}"\n[projects]\n', encoding="utf-8")
    env = kg_env(KG_OLLAMA="off", KG_CONFIG=str(config), FASTMCP_LOG_LEVEL="WARNING")
    env.pop("KG_VAULT", None)
    (vault / "kg-out" / "reconciled.stamp").write_text("bench\n")
    notes = sorted(vault.glob("area0*/*.md"))
    outside = {"session_id": "bench", "cwd": str(work), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(work / "elsewhere" / "main.py")}}
    start_payload = {"session_id": "bench", "cwd": str(work), "hook_event_name": "SessionStart", "source": "startup"}
    counter = iter(range(10**6))

    def edit_note() -> None:
        """Every other edit changes the note's links (ranks and communities recomputed), the
        others only its prose (their last result reused)."""
        n = next(counter)
        note = notes[n % len(notes)]
        line = f"\nEdited by the bench at {time.time()}, see [[{notes[(n * 7 + 3) % len(notes)].stem}]].\n" if n % 2 else f"\nEdited by the bench at {time.time()}.\n"
        with note.open("a", encoding="utf-8") as handle:
            handle.write(line)
        hook("post-tool-use", {**outside, "tool_input": {"file_path": str(note)}}, env)

    def noop_update() -> None:
        out = kg(["update"], env, work)
        if "nothing to rewrite" not in out:
            raise SystemExit(f"the no-op update was not a no-op: {out.strip()}")

    settled = lambda: settle(vault / "kg-out")  # noqa: E731
    results = {"python start-up": timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), args.runs)}
    settled()  # the build's own graph.html render is not an edit's
    logs = log_offsets(vault / "kg-out")
    results.update(
        interleaved(
            {
                "post-tool-use, outside": (lambda: hook("post-tool-use", outside, env), None),
                "post-tool-use, one vault note": (edit_note, settled),
                "kg update, no-op": (noop_update, settled),
            },
            args.runs,
        )
    )
    settled()
    detached = jobs_since(logs)
    split_by_edit(results, "post-tool-use, one vault note", {"  of which prose only": 0, "  of which a new link": 1})
    logs = log_offsets(vault / "kg-out")
    back_to_back = max(5, args.runs // 2)
    results["  same, back to back"] = timed(edit_note, back_to_back)
    settled()
    detached_back = jobs_since(logs)
    results["session-start"] = timed(lambda: hook("session-start", start_payload, env), args.runs, settled)
    results["mcp query, warm"] = settle(vault / "kg-out") and asyncio.run(mcp_round_trips(env, work, args.runs * 2))
    brief = json.loads(hook("session-start", start_payload, env))["hookSpecificOutput"]["additionalContext"]
    count = len(list(vault.rglob("*.md")))
    print(f"\nvault: {vault} ({count} notes); session brief {len(brief)} chars; load average {os.getloadavg()[0]:.1f}")
    print("wall time (what the agent waits for; inflated by other load on the machine), CPU time of the process,")
    print("and the ratio of the medians to the outside hook's (wall, and CPU) measured in the same rounds")
    print(f"{'measure':<32}{'median':>10}{'p90':>10}{'target':>10}{'cpu':>10}{'× outside':>11}{'cpu ×':>7}")
    base = statistics.median(results["post-tool-use, outside"])
    base_cpu = statistics.median(CPU[id(results["post-tool-use, outside"])])
    for name, values in results.items():
        cpu = CPU.get(id(values))
        cpu_text = f"{statistics.median(cpu) * 1000:>8.0f}ms" if cpu and any(cpu) else f"{'-':>10}"
        values = sorted(values)
        median = statistics.median(values)
        p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
        target = TARGETS[name]
        if name.startswith(("post-tool-use, one vault note", "  of which")) and count >= 10_000:
            target = NOTE_HOOK_LIMIT_10K
        verdicts = [] if target is None else ["ok" if median <= target else "OVER"]
        ratio_text = ratio_cpu = ""
        if name in RATIO_TARGETS:
            ratio = median / base
            ratio_text = f"{ratio:>10.1f}×"
            ratio_cpu = f"{statistics.median(cpu) / base_cpu:>6.1f}×" if cpu and base_cpu else ""
            verdicts.append(f"ratio {'ok' if ratio <= RATIO_TARGETS[name] else 'OVER'} (≤ {RATIO_TARGETS[name]}×)")
        target_text = f"{'-':>10}" if target is None else f"{target * 1000:>8.0f}ms"
        print(f"{name:<32}{median * 1000:>8.0f}ms{p90 * 1000:>8.0f}ms{target_text}{cpu_text}{ratio_text:>11}{ratio_cpu:>7}  {', '.join(verdicts)}".rstrip())
    print("detached work the one-note edits left (each background job's own log line: the clustering, a link edit's")
    print("deferred ranks and artifacts, graph.html renders), counted once the jobs settled:")
    for label, jobs, edits in (("edits one at a time", detached, args.runs), ("back to back", detached_back, back_to_back)):
        print(f"  {label}: {describe_jobs(jobs, edits)}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    options = parse()
    with record(page(options)):
        main(options)
