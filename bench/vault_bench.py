"""Vault-scope performance on a synthetic 10,000-note vault, each figure a whole `kg` process.

Usage: python bench/vault_bench.py [--notes 10000] [--keep DIR]
Prints cold build (time and the build process's own peak RSS), no-op update, one-note update
(median of 5 edits), query latency (median of 5) and peak RSS, next to the targets (issue 18:
cold build ≤ 10 s at 10,000 notes). Then the no-op update against the baseline every agent edit
pays, `kg hook post-tool-use` on a file outside the vault (it only starts `kg`), interleaved
round by round, with the ratio of the medians (target ≤ 2.5×). Each timed step starts once the
previous step's background graph.html render is done (see background.py).
"""

from __future__ import annotations

import argparse
import json
import os
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

KG = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()"]
TARGETS = {"cold build": 10.0, "no-op update": 1.0, "one-note update": 1.5, "query": 0.5}
NOOP_RATIO_TARGET = 2.5


def timed(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of this one `kg` process (from `wait4`, not the children's max)."""
    started = time.perf_counter()
    proc = subprocess.Popen([*KG, *args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env or kg_env())
    assert proc.stdin is not None and proc.stderr is not None
    if stdin is not None:
        proc.stdin.write(stdin.encode())
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0 or "kg hook" in err:
        sys.exit(f"kg {' '.join(args)} failed: {err.strip()}")
    return elapsed, usage.ru_maxrss // 1024


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
    print(f"{'cold build RSS':<18}{rss:>8} MB  (the build process alone)")
    print(f"one-note update: median of 5 edits, each after the previous graph.html render finished (the cold build's render ended {render:.1f} s after the build)")
    noop_against_outside(root, vault, out)


def noop_against_outside(root: Path, vault: Path, out: Path, rounds: int = 7) -> None:
    """The no-op update and the outside-file hook, alternated round by round; ratio of medians."""
    config = root / "bench-config.toml"
    config.write_text(f'vault = "{vault}"\n[projects]\n', encoding="utf-8")
    env = kg_env(KG_CONFIG=str(config), KG_OLLAMA="off")
    env.pop("KG_VAULT", None)
    payload = json.dumps({"session_id": "bench", "cwd": str(root), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(root / "elsewhere" / "main.py")}})
    settle(out)
    hook_times, noop_times = [], []
    for _ in range(rounds):
        hook_times.append(timed("hook", "post-tool-use", stdin=payload, env=env)[0])
        noop_times.append(timed("update", "--vault", str(vault), env=env)[0])
    base, noop = statistics.median(hook_times), statistics.median(noop_times)
    ratio = noop / base
    print(f"\nno-op update vs post-tool-use on a file outside the vault, {rounds} alternated rounds (load average {os.getloadavg()[0]:.1f}):")
    print(f"  outside-file hook {base * 1000:.0f} ms · no-op update {noop * 1000:.0f} ms · ratio {ratio:.1f}× (target ≤ {NOOP_RATIO_TARGET}×) {'ok' if ratio <= NOOP_RATIO_TARGET else 'OVER'}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("vault_bench"):
        main()
