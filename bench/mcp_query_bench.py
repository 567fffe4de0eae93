"""The MCP `query` round trip on a warm `kg mcp` server, this checkout beside another one.

Generates and builds a vault of `--notes` notes once (`gen_vault.py`, seed 7; or reuses
`--vault`), starts `kg mcp` from this checkout and, with `--against DIR`, a second server from
the source tree at DIR (e.g. main exported with `git archive`), both over stdio the way Claude
Code starts them. Both are warmed with the five questions `agent_bench.py` asks, then asked the
same questions (with a number appended, as `agent_bench.py` does) in interleaved rounds, so both
sides share the same minutes of a shared machine. Prints, per server, the median and 90th
percentile wall time of a call, the server's median CPU time per call (user + system, from
/proc: what the query costs, whatever else the machine runs) and whether every answer equals
the other server's.

Usage: python bench/mcp_query_bench.py [--notes 10000] [--vault DIR] [--runs 30] [--against DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import kg_env  # noqa: E402
from gen_vault import generate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KG = [sys.executable, "-c", "from vault_kg.entry import main; main()"]
QUESTIONS = ["payments retry webhook", "ledger reconcile export", "deploy release docker", "seo audit crawl keyword", "postgres migration schema"]
TARGET = 0.100


def process_cpu(pid: int) -> float:
    """User + system seconds of one process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def children() -> set[int]:
    me = os.getpid()
    return {int(p) for p in Path(f"/proc/{me}/task/{me}/children").read_text().split()}


def prepare(args: argparse.Namespace, work: Path, env: dict[str, str]) -> Path:
    if args.vault:
        return args.vault.resolve()
    vault = work / "vault"
    generate(vault, args.notes, 7)
    print(f"building a {args.notes}-note vault (once) ...", flush=True)
    done = subprocess.run([*KG, "build", "--vault", str(vault)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return vault


class Side:
    """One `kg mcp` server started from one source tree, with its timings."""

    def __init__(self, name: str, tree: Path) -> None:
        self.name, self.tree = name, tree
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.answers: list[Any] = []
        self.rss = 0.0

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
            side.rss = rss_mb(side.pid)


def report(sides: list[Side], vault: Path, runs: int) -> None:
    count = sum(1 for p in vault.rglob("*.md") if "kg-out" not in p.relative_to(vault).parts)
    print(f"\nvault: {count} notes; {runs} queries per server, budget 800, interleaved; load average {os.getloadavg()[0]:.1f}")
    print(f"{'server':<28}{'median':>10}{'p90':>10}{'cpu/call':>10}{'target':>10}{'rss after':>11}")
    for side in sides:
        walls = sorted(side.walls)
        median, p90 = statistics.median(walls), walls[min(len(walls) - 1, int(len(walls) * 0.9))]
        verdict = "ok" if median <= TARGET else "OVER"
        print(f"{side.name:<28}{median * 1000:>8.0f}ms{p90 * 1000:>8.0f}ms{statistics.median(side.cpus) * 1000:>8.0f}ms{TARGET * 1000:>8.0f}ms{side.rss:>8.0f} MB  {verdict}")
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
    work = Path(tempfile.mkdtemp(prefix="kg-mcp-query-bench-"))
    try:
        config = work / "config.toml"
        env = kg_env(KG_OLLAMA="off", KG_CONFIG=str(config), FASTMCP_LOG_LEVEL="WARNING")
        env.pop("KG_VAULT", None)
        vault = prepare(args, work, env)
        config.write_text(f'vault = "{vault}"\n[projects]\n', encoding="utf-8")
        sides = [Side("this checkout", ROOT)] + ([Side(f"against {args.against}", args.against.resolve())] if args.against else [])
        asyncio.run(rounds(sides, env, work, args.runs))
        report(sides, vault, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from figures import record

    with record("mcp_query_bench"):
        main()
