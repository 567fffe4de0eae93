"""How fresh the graph stays without anyone asking, on a generated vault (default 2,000 notes).

Two measures, both through the real processes:

- **write → visible over MCP**: a running `kg mcp` server (its vault watcher on) and the real MCP
  client; a plain file write of a new note, then the `query` tool asked every 50 ms until the
  note is a hit. Prints the median and the 90th percentile over `--runs` notes (issue target: 5 s).
- **a burst under `kg watch`**: `--burst` notes written 20 ms apart while `kg watch --json` runs;
  prints how many updates the watcher ran for them and the time from the first write until every
  note was in an update's `extracted` list.

Usage: python bench/watch_bench.py [--notes 2000] [--vault DIR (a generated, built vault)] [--runs 10] [--burst 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import kg_env, settle  # noqa: E402
from gen_vault import generate  # noqa: E402

KG = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()"]
POLL_S = 0.05


def note(title: str) -> str:
    return f"---\nsummary: {title}, written by the watch bench\ntags: [topic/bench, scope/global]\n---\n# {title}\n\nQuokka {title.lower()} notes.\n"


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


@contextmanager
def bench_vault(args: argparse.Namespace, prefix: str) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """(work folder, vault, environment) for a bench: the vault generated and built once (or
    `--vault`), a config naming it, `kg` with the model pass off; the work folder removed after."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        config = work / "config.toml"
        env = kg_env(KG_OLLAMA="off", KG_CONFIG=str(config), FASTMCP_LOG_LEVEL="WARNING")
        env.pop("KG_VAULT", None)
        vault = prepare(args, work, env)
        config.write_text(f'vault = "{vault}"\n[projects]\n', encoding="utf-8")
        yield work, vault, env
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def mcp_latencies(vault: Path, env: dict[str, str], cwd: Path, runs: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=KG[0], args=[*KG[1:], "mcp"], env=env, cwd=str(cwd))
    out = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        started = time.perf_counter()
        while not (vault / "kg-out" / "watch.lock").exists():
            if time.perf_counter() - started > 300:
                raise SystemExit("the MCP server never started watching its vault")
            await asyncio.sleep(POLL_S)
        await asyncio.sleep(3.0)  # the watcher's catch-up update at start
        for _ in range(runs):
            title = f"Watchbench {uuid.uuid4().hex[:10]}"  # one token no other note has
            (vault / "bench-watch").mkdir(exist_ok=True)
            (vault / "bench-watch" / f"{title}.md").write_text(note(title), encoding="utf-8")
            written = time.perf_counter()
            while True:
                answer = await session.call_tool("query", {"question": title, "budget": 300})
                if any(h["label"] == title for h in answer.structured_content["hits"]):
                    out.append(time.perf_counter() - written)
                    break
                if time.perf_counter() - written > 120:
                    raise SystemExit(f"{title}: not visible over MCP after 120 s")
                await asyncio.sleep(POLL_S)
            await asyncio.sleep(1.0)
    return out


def burst(vault: Path, env: dict[str, str], count: int) -> tuple[int, float]:
    proc = subprocess.Popen([*KG, "watch", "--vault", str(vault), "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stream = proc.stdout
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()
    try:
        json.loads(lines.get(timeout=300))  # the catch-up
        folder = vault / "bench-burst"
        folder.mkdir(exist_ok=True)
        wanted = {f"bench-burst/Burst {os.getpid()} {i}.md" for i in range(count)}
        start = time.perf_counter()
        for rel in sorted(wanted):
            (vault / rel).write_text(note(Path(rel).stem), encoding="utf-8")
            time.sleep(0.02)
        updates, seen = 0, set()
        while not wanted <= seen:
            report = json.loads(lines.get(timeout=300))
            updates += 1
            seen |= set(report["extracted"])
        return updates, time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait(timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--vault", type=Path, help="a vault generated by gen_vault.py and built with `kg build`")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--burst", type=int, default=50)
    args = parser.parse_args()
    with bench_vault(args, "kg-watch-bench-") as (work, vault, env):
        settle(vault / "kg-out")
        times = sorted(asyncio.run(mcp_latencies(vault, env, work, args.runs)))
        settle(vault / "kg-out")
        updates, seconds = burst(vault, env, args.burst)
        notes = sum(1 for _ in vault.rglob("*.md"))
        print(f"\nvault: {notes} notes; load average {os.getloadavg()[0]:.1f}")
        print(f"{'measure':<44}{'median':>10}{'p90':>10}{'max':>10}")
        p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
        print(f"{'write -> found by MCP query (' + str(len(times)) + ' notes)':<44}{statistics.median(times):>9.2f}s{p90:>9.2f}s{times[-1]:>9.2f}s")
        print(f"burst of {args.burst} writes 20 ms apart under `kg watch`: {updates} update(s); all {args.burst} in the graph {seconds:.2f}s after the first write")


if __name__ == "__main__":
    from figures import record

    with record("watch_bench"):
        main()
