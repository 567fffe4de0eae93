"""Where a cold `kg build` of a generated vault spends its time: per engine stage, in one process.

Usage: python bench/build_phases.py [--notes 10000] [--rounds 1] [--vault DIR] [--workers 1]

Generates a vault (or reuses `--vault DIR`, which must hold only generated notes), then builds it
from scratch `--rounds` times (`engine.run(scope, force=True)` after deleting `kg-out/`), wrapping
every stage in `engine.STAGES` and a few functions inside them with a CPU clock
(`time.process_time`, the process's own CPU, little moved by other load) and a wall clock.
Prints the median of each that took at least 10 ms of CPU, the build's total, and the process's
peak RSS when each ended (where memory grows). The imports of a
whole `kg` process are not in it (see `python -X importtime`); bench/vault_bench.py times the
whole process. It measures the code it imports, so PYTHONPATH pointing at another checkout
measures that one the same way.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_vault import generate  # noqa: E402

INSIDE = {
    "vault_kg.storage.cache:ScopeCache": ["load_all", "put_source", "put_groups", "sync_graph", "sync_ranks", "put_table", "replace_docs", "commit"],
    "vault_kg.update.stages": ["resolve_references", "assemble_nodes", "_ranking", "update_search_index", "_write_html"],
    "extract.notes": ["extract_note"],
    "graph_out.graph_json": ["encode_node_link"],
    "graph_out.report": ["render_report"],
}


def clocked(fn: Callable[..., Any], label: str, spent: dict[str, list[float]]) -> Callable[..., Any]:
    """`fn`, adding the (CPU, wall) seconds each call takes to `spent[label]`."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            row = spent.setdefault(label, [0.0, 0.0, 0.0])
            row[0] += time.process_time() - cpu
            row[1] += time.perf_counter() - wall
            row[2] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    return wrapped


def instrument(spent: dict[str, list[float]]) -> None:
    from instrument import instrument as wrap_all

    wrap_all(INSIDE, lambda fn, label: clocked(fn, label, spent), member_prefix="  ", stage_prefix="")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--vault", type=Path, help="an existing generated vault to build (not generated again)")
    parser.add_argument("--workers", type=int, default=1, help="KG_EXTRACT_WORKERS (default 1: every stage in this process, so each is timed)")
    args = parser.parse_args()
    os.environ.update(KG_OLLAMA="off", KG_HTML="off", KG_EXTRACT_WORKERS=str(args.workers))
    work = Path(tempfile.mkdtemp(prefix="kg-build-phases-"))
    os.environ["KG_CONFIG"] = str(work / "config.toml")
    vault = args.vault or work / "vault"
    if args.vault is None:
        generate(vault, args.notes, seed=7)
    import vault_kg.update.engine as engine
    from vault_kg.core.scopes import vault_scope

    spent: dict[str, list[float]] = {}
    instrument(spent)
    rows: dict[str, list[tuple[float, float]]] = {}
    scope = vault_scope(vault)
    for _ in range(args.rounds):
        shutil.rmtree(scope.out, ignore_errors=True)
        spent.clear()
        cpu, wall = time.process_time(), time.perf_counter()
        result = engine.run(scope, force=True)
        spent["total (engine.run)"] = [time.process_time() - cpu, time.perf_counter() - wall, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]
        for label, (c, w, rss) in spent.items():
            rows.setdefault(label, []).append((c, w, rss))
    print(
        f"cold build of {result.sources} notes ({result.nodes} nodes, {result.edges} edges), graph.html off, KG_EXTRACT_WORKERS={args.workers}; median of {args.rounds}; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'stage (indented: inside it)':<34}{'CPU s':>8}{'wall s':>8}{'peak RSS MB':>13}")
    for label, values in rows.items():
        c, w = statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)
        if c >= 0.01 or w >= 0.01:
            print(f"{label:<34}{c:>8.2f}{w:>8.2f}{values[0][2]:>13.0f}")  # the first round's: later rounds start at its peak
    if args.vault is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from figures import record

    with record("build_phases"):
        main()
