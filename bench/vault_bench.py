"""Vault-scope performance on a synthetic 10,000-note vault, each figure a whole `kg` process.

Usage: python bench/vault_bench.py [--notes 10000] [--keep DIR]
Prints cold build, no-op update, one-note update (median of 5 edits), query latency (median of
5) and peak RSS, next to the targets from the foundation issue. Each timed step starts once the
previous step's background graph.html render is done (see background.py).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import kg_env, settle  # noqa: E402
from gen_vault import generate  # noqa: E402

KG = [sys.executable, "-c", "from vault_kg.entry import main; main()"]
TARGETS = {"cold build": 20.0, "no-op update": 1.0, "one-note update": 1.5, "query": 0.5}


def timed(*args: str) -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of one `kg` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run([*KG, *args], capture_output=True, text=True, env=kg_env())
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"kg {' '.join(args)} failed: {done.stderr.strip()}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak, before) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="generate the vault here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="kg-bench-"))
    vault = root / "vault"
    paths = generate(vault, args.notes, seed=7)
    print(f"vault: {len(paths)} notes, {sum(p.stat().st_size for p in paths) / 1e6:.1f} MB at {vault}")
    env_vault = ["--vault", str(vault)]
    out = vault / "kg-out"
    figures: dict[str, float] = {}
    figures["cold build"], rss = timed("build", *env_vault)
    render = settle(out)
    figures["no-op update"], _ = timed("update", *env_vault)
    target = paths[len(paths) // 2]
    target.write_text(target.read_text() + "\nEdited for the benchmark, see [[Brand New Page]].\n")
    figures["one-note update"], _ = timed("update", *env_vault, str(target))
    settle(out)
    again = []
    for i in range(4):
        target.write_text(target.read_text() + f"\nAnd again ({i}), see [[Another Page {i}]].\n")
        again.append(timed("update", *env_vault, str(target))[0])
        settle(out)
    figures["one-note update"] = statistics.median([figures["one-note update"], *again])
    queries = ["payments retry webhook", "postgres migration schema", "seo keyword ranking report", "incident runbook alert", "client onboarding billing"]
    latencies = [timed("query", q, *env_vault, "--budget", "1500")[0] for q in queries]
    figures["query"] = statistics.median(latencies)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    print(f"{'figure':<18}{'measured':>10}{'target':>10}")
    for name, value in figures.items():
        print(f"{name:<18}{value:>9.2f}s{TARGETS[name]:>9.1f}s  {'ok' if value <= TARGETS[name] else 'OVER'}")
    print(f"{'peak RSS':<18}{peak:>8} MB{500:>7} MB  {'ok' if peak <= 500 else 'OVER'}")
    print(f"one-note update: median of 5 edits, each after the previous graph.html render finished (the cold build's render ended {render:.1f} s after the build)")
    _ = rss


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("vault_bench"):
        main()
