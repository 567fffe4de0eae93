"""The MCP `query` round trip on a warm `kg mcp` server, this checkout beside another one.

Generates and builds a vault of `--notes` notes once (`gen_vault.py`, seed 7; or reuses
`--vault`), starts `kg mcp` from this checkout and, with `--against DIR`, a second server from
the source tree at DIR (e.g. main exported with `git archive`), both over stdio the way Claude
Code starts them. Both are warmed with the five questions `agent_bench.py` asks, then asked the
same questions (with a number appended, as `agent_bench.py` does; a one-digit number is no
search term, so the first ten repeat the warm-up's terms) in interleaved rounds, so both sides
share the same minutes of a shared machine. Prints, per server, the median and 90th percentile
wall time of a call, the server's CPU time per call (user + system from /proc, counted in 10 ms
ticks: the mean over all calls), its anonymous memory after the calls, and whether every answer
equals the other server's. Then the same questions in-process, ten to a fresh process and each
on a view opened for it (the library's and the CLI's path, nothing read before), CPU per query,
the sides alternated.

Usage: python bench/mcp_query_bench.py [--notes 10000] [--vault DIR] [--runs 30] [--against DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import settle  # noqa: E402
from watch_bench import bench_vault  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KG = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()"]
QUESTIONS = ["payments retry webhook", "ledger reconcile export", "deploy release docker", "seo audit crawl keyword", "postgres migration schema"]
TARGET = 0.100


def process_cpu(pid: int) -> float:
    """User + system seconds of one process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def anon_mb(pid: int) -> float:
    """The process's anonymous memory: what it holds itself, without the pages of the cache file
    SQLite maps (those are the page cache's, shared, and dropped under memory pressure)."""
    line = next(x for x in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines() if x.startswith("Anonymous:"))
    return int(line.split()[1]) / 1024


def children() -> set[int]:
    me = os.getpid()
    return {int(p) for p in Path(f"/proc/{me}/task/{me}/children").read_text().split()}


IN_PROCESS = """
import json, sys, time
from vault_kg import query as q
from vault_kg.core.scopes import resolve_scopes
questions = json.loads(sys.argv[1])
scopes = resolve_scopes(None, None)
q.query(scopes, questions[0], 800)
spent = []
for question in questions:
    start = time.process_time()
    q.query(scopes, question, 800)
    spent.append(time.process_time() - start)
print(json.dumps(spent))
"""


def in_process(tree: Path, env: dict[str, str], cwd: Path, questions: list[str]) -> list[float]:
    """CPU seconds of each `query` in one fresh process, each on a view opened for it (the
    library's and the CLI's path: nothing read before)."""
    done = subprocess.run([sys.executable, "-c", IN_PROCESS, json.dumps(questions)], env=dict(env, PYTHONPATH=str(tree)), cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


class Side:
    """One `kg mcp` server started from one source tree, with its timings."""

    def __init__(self, name: str, tree: Path) -> None:
        self.name, self.tree = name, tree
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.answers: list[Any] = []
        self.anon = 0.0
        self.fresh: list[float] = []

    async def start(self, stack: Any, env: dict[str, str], cwd: Path) -> None:
        from fastmcp import Client
        from fastmcp.client.transports import StdioTransport

        before = children()
        side_env = dict(env, PYTHONPATH=str(self.tree))
        self.client = await stack.enter_async_context(Client(StdioTransport(KG[0], [*KG[1:], "mcp"], env=side_env, cwd=str(cwd)), timeout=120))
        (self.pid,) = children() - before
        for question in QUESTIONS:
            await self.ask(question, record=False)

    async def ask(self, question: str, record: bool = True) -> None:
        cpu, start = process_cpu(self.pid), time.perf_counter()
        result = await self.client.call_tool("query", {"question": question, "budget": 800})
        wall, cpu = time.perf_counter() - start, process_cpu(self.pid) - cpu
        if not result.structured_content["hits"]:
            raise SystemExit(f"{self.name}: the query {question!r} found nothing")
        if record:
            self.walls.append(wall)
            self.cpus.append(cpu)
            self.answers.append(result.structured_content)


async def rounds(sides: list[Side], env: dict[str, str], cwd: Path, runs: int) -> None:
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        for side in sides:
            await side.start(stack, env, cwd)
        for i in range(runs):
            question = QUESTIONS[i % len(QUESTIONS)] + f" {i}"
            for side in sides if i % 2 == 0 else reversed(sides):  # neither side always goes first
                await side.ask(question)
        for side in sides:
            side.anon = anon_mb(side.pid)
    for i in range(0, runs, 10):
        questions = [QUESTIONS[j % len(QUESTIONS)] + f" {j}" for j in range(i, min(runs, i + 10))]
        for side in sides if i % 20 == 0 else reversed(sides):
            side.fresh += in_process(side.tree, env, cwd, questions)


def report(sides: list[Side], vault: Path, runs: int) -> None:
    count = sum(1 for p in vault.rglob("*.md") if "kg-out" not in p.relative_to(vault).parts)
    print(f"\nvault: {count} notes; {runs} queries per server, budget 800, interleaved; load average {os.getloadavg()[0]:.1f}")
    print(f"{'server':<28}{'median':>10}{'p90':>10}{'cpu/call':>10}{'target':>10}{'anon mem':>11}")
    for side in sides:
        walls = sorted(side.walls)
        median, p90 = statistics.median(walls), walls[min(len(walls) - 1, int(len(walls) * 0.9))]
        verdict = "ok" if median <= TARGET else "OVER"
        print(f"{side.name:<28}{median * 1000:>8.0f}ms{p90 * 1000:>8.0f}ms{sum(side.cpus) / len(side.cpus) * 1000:>8.0f}ms{TARGET * 1000:>8.0f}ms{side.anon:>8.0f} MB  {verdict}")
    print("in-process `query` on a fresh view (the library's and the CLI's path), CPU per query, same questions:")
    for side in sides:
        print(f"{side.name:<28}{statistics.median(side.fresh) * 1000:>8.0f}ms median, {max(side.fresh) * 1000:.0f} ms max")
    if len(sides) == 2:
        same = sum(a == b for a, b in zip(sides[0].answers, sides[1].answers))
        print(f"same answers on both servers: {same} of {runs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--vault", type=Path, help="a vault generated by gen_vault.py and built with `kg build`")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--against", type=Path, help="the root of another source tree to run beside this one")
    args = parser.parse_args()
    with bench_vault(args, "kg-mcp-query-bench-") as (work, vault, env):
        sides = [Side("this checkout", ROOT)] + ([Side(f"against {args.against}", args.against.resolve())] if args.against else [])
        settle(vault / "kg-out")  # the build's graph.html render runs detached: not beside the rounds
        asyncio.run(rounds(sides, env, work, args.runs))
        report(sides, vault, args.runs)


if __name__ == "__main__":
    from figures import record

    with record("mcp_query_bench"):
        main()
