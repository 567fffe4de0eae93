"""How far carried ranks drift from a full recompute over many random agent edits (#33).

Usage: python bench/rank_drift.py [--notes 1000] [--edits 1000] [--never-full]

Generates a vault (`gen_vault.py`), builds it, then makes `--edits` random edits (a new link, a
removed link, a dangling link, a tag, prose), each the way the PostToolUse hook and its background
job handle it, in-process: the hook's update (`RunSettings(defer=WHOLE_GRAPH)`), then the job's
settle (`clustering.settle`: ranks carried, graph.json spliced, `vault_kg.update.rank_state`).
After every edit it compares what graph.json shows with a full recompute over the same graph
(PageRank from scratch on the cache's edge table): whether the top-20 god nodes are the same
list, and the largest difference of a shown rank. `--never-full` turns the periodic and
drift-triggered full recomputes off (what carrying alone drifts to). The page is
`docs/benchmarks/rank_drift.md` (`rank_drift_never_full.md`).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from figures import record  # noqa: E402
from gen_vault import generate  # noqa: E402


def edit(note: Path, kind: str, titles: list[str], rng: random.Random) -> None:
    """One agent-like edit of `note`."""
    text = note.read_text(encoding="utf-8")
    if kind == "link":
        text += f"\nSee [[{rng.choice(titles)}]].\n"
    elif kind == "unlink":
        lines = [line for line in text.splitlines() if line.startswith("See [[")]
        text = text.replace(lines[0] + "\n", "", 1) if lines else text + "\nmore prose\n"
    elif kind == "dangling":
        text += f"\nSee [[Nowhere {rng.randrange(50)}]].\n"
    elif kind == "tag":
        text += f"\n#drift/t{rng.randrange(20)}\n"
    else:
        text += f"\nprose {rng.random()}\n"
    note.write_text(text, encoding="utf-8")


def main(args: argparse.Namespace) -> None:
    import orjson

    from vault_kg.core.scopes import vault_scope
    from vault_kg.jobs import clustering as cluster_job
    from vault_kg.storage.cache import ScopeCache
    from vault_kg.update import rank_state
    from vault_kg.update.centrality import EdgeTable, god_nodes, pagerank
    from vault_kg.update.engine import run
    from vault_kg.update.run_state import WHOLE_GRAPH, RunSettings

    if args.never_full:
        os.environ["KG_RANK_FULL_EVERY"] = str(10**9)
        rank_state.JOINED_LIMIT, rank_state.MODULARITY_DROP = 1.0, 1.0
    work = Path(tempfile.mkdtemp(prefix="kg-rank-drift-"))
    try:
        paths = generate(work / "vault", args.notes, 7)
        titles = [p.stem for p in paths]
        scope = vault_scope(work / "vault")
        started = time.perf_counter()
        run(scope)
        print(f"{args.notes} notes built in {time.perf_counter() - started:.1f} s; {args.edits} random edits, each hook + background settle, compared with a full recompute after each")
        rng = random.Random(33)
        kinds = ("link", "link", "unlink", "dangling", "tag", "prose")
        same = carried = worst_step = 0
        worst = 0.0
        differing: list[int] = []
        spent = 0.0
        for step in range(args.edits):
            note = rng.choice(paths)
            edit(note, rng.choice(kinds), titles, rng)
            t = time.perf_counter()
            run(scope, paths=[note], settings=RunSettings(defer=WHOLE_GRAPH))
            assert cluster_job.settle(scope), f"edit {step}: the background settle did not finish"
            spent += time.perf_counter() - t
            graph = orjson.loads((scope.out / "graph.json").read_bytes())
            nodes = {n["id"]: n for n in graph["nodes"]}
            carried += bool(graph["graph"].get("stamp", {}).get("carried"))
            cache = ScopeCache(scope.out / "cache" / "index.sqlite")
            try:
                table = EdgeTable.from_bytes(cache.raw_blob("table"))
            finally:
                cache.close()
            full = pagerank(nodes, table)
            if god_nodes(nodes, full) == graph["graph"]["god_nodes"]:
                same += 1
            else:
                differing.append(step)
            gap = max(abs(nodes[nid].get("rank", 0.0) - full.get(nid, 0.0)) for nid in nodes)
            if gap > worst:
                worst, worst_step = gap, step
        print(
            f"edits settled by carrying: {carried} of {args.edits} (the rest: a full recompute, due every KG_RANK_FULL_EVERY={os.environ.get('KG_RANK_FULL_EVERY', rank_state.FULL_EVERY)} edits or on drift)"
        )
        print(f"top-20 god nodes identical to a full recompute's: after {same} of {args.edits} edits" + (f" (differing after edits {differing[:20]})" if differing else ""))
        print(f"largest difference of a shown rank from a full recompute's: {worst:.2e} (edit {worst_step}); tolerance {rank_state.RANK_TOLERANCE:.0e}")
        print(f"hook update + background settle, in-process: {spent / args.edits * 1000:.0f} ms per edit on average")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--never-full", action="store_true", help="no full recompute at all: what carrying alone drifts to")
    arguments = parser.parse_args()
    os.environ.setdefault("KG_OLLAMA", "off")
    os.environ.setdefault("KG_HTML", "off")
    with record("rank_drift_never_full" if arguments.never_full else "rank_drift"):
        main(arguments)
