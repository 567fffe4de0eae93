"""Where one hook-style update spends its CPU: per engine phase, in-process, on a generated vault.

Usage: python bench/update_phases.py [--notes 3000] [--rounds 3]

Builds a generated vault, then edits one note `--rounds` times each way (prose only; a new link)
and runs the update the PostToolUse hook runs (`engine.run(scope, paths=[note], settings=RunSettings(defer=WHOLE_GRAPH))`;
in older code, inside `ranking.deferring_whole_graph()` or `deferring_communities()`), then what
the hook's background job runs (`cluster_job.settle`: a link edit's ranks and artifacts, and the
clustering), each timed on its own, wrapping the engine's phases with a CPU
clock (`time.process_time`: the process's own CPU, little moved by other load on the machine).
Prints the median CPU of each phase that took at least 1 ms (imports made inside a phase count in
it; the imports of a whole hook process are in agent_bench's CPU column). It measures the code it imports, so pointing
PYTHONPATH at an older checkout measures that one the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_vault import generate  # noqa: E402

PHASES = {
    "vault_kg.update.engine": ["_locked_run"],  # and every stage in engine.STAGES
    "vault_kg.update.stages": ["resolve_references", "assemble_nodes", "_ranking", "update_search_index", "dirty_owners", "_write_html"],
    "vault_kg.update.link_patch": ["_group_of", "_commit", "_resolved_again", "_groups", "rank_nodes", "write_artifacts"],  # the stages a link patch calls
    "vault_kg.update.deferred_work": ["defer"],
    "vault_kg.storage.cache:ScopeCache": ["load_all", "load_kept", "load_nodes", "sync_graph", "sync_ranks", "put_table", "commit"],
    "vault_kg.update.centrality": ["patched", "ranking_digest", "pagerank", "communities"],
    "vault_kg.anchors.build_pass": ["post_assembly"],
    "graph_out.graph_json": ["encode_node_link", "node_link"],
    "vault_kg.core.store": ["write_if_changed"],
}


def timed(fn: Callable[..., Any], label: str, spent: dict[str, float]) -> Callable[..., Any]:
    """`fn`, adding the CPU seconds each call takes to `spent[label]`."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - start

    return wrapped


def instrument(spent: dict[str, float]) -> None:
    from instrument import instrument as wrap_all

    wrap_all(PHASES, lambda fn, label: timed(fn, label, spent), member_prefix="", stage_prefix="engine.")


def hook_settings() -> dict[str, Any]:
    """The settings the PostToolUse hook passes to the route, in the code being measured (none in older code)."""
    try:
        from vault_kg.update.run_state import WHOLE_GRAPH, RunSettings
    except ImportError:
        return {}
    return {"settings": RunSettings(defer=WHOLE_GRAPH)}


def hook_deferral() -> Any:
    """The context the PostToolUse hook updated in, in older code (which had no `RunSettings`)."""
    if hook_settings():
        return contextlib.nullcontext
    try:
        from vault_kg.update.ranking_policy import deferring_whole_graph

        return deferring_whole_graph
    except ImportError:
        pass
    try:
        from vault_kg.update.ranking_policy import deferring_communities

        return deferring_communities
    except ImportError:
        return contextlib.nullcontext


def background_job() -> Callable[[Any], Any]:
    """What the hook's background job runs (an update, in code without the job)."""
    try:
        from vault_kg.jobs.clustering import settle

        return settle
    except ImportError:
        import vault_kg.update.engine as engine

        return engine.run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.update(KG_OLLAMA="off", KG_HTML="off")
    work = Path(tempfile.mkdtemp(prefix="kg-phases-"))
    os.environ["KG_CONFIG"] = str(work / "config.toml")
    vault = work / "vault"
    notes = generate(vault, args.notes, seed=7)
    import vault_kg.update.engine as engine
    from vault_kg.core.scopes import vault_scope

    scope = vault_scope(vault)
    engine.run(scope)
    deferring = hook_deferral()
    settle = background_job()
    spent: dict[str, float] = {}
    instrument(spent)
    rows: dict[str, dict[str, list[float]]] = {}
    for kind in ("prose edit", "link edit"):
        for i in range(args.rounds):
            note = notes[(i * 37 + (7 if kind == "link edit" else 0)) % len(notes)]
            extra = f"\nprose only, round {i}\n" if kind == "prose edit" else f"\nnow see [[{notes[(i * 53 + 11) % len(notes)].stem}]]\n"
            note.write_text(note.read_text(encoding="utf-8") + extra, encoding="utf-8")
            spent.clear()
            start = time.process_time()
            with deferring():
                result = engine.run(scope, paths=[note], **hook_settings())
            spent["total (engine.run)"] = time.process_time() - start
            for label, value in spent.items():
                rows.setdefault(kind, {}).setdefault(label, []).append(value)
            rows[kind].setdefault("ranking: " + str(result.extra.get("ranking", "deferred to the background job")), []).append(0.0)
            rows[kind].setdefault("route: " + ("whole" if "load_all" in " ".join(spent) else "patched"), []).append(0.0)
            spent.clear()
            start = time.process_time()
            settle(scope)  # what the hook's background job does before the next edit (Leiden included)
            spent["total (background job)"] = time.process_time() - start
            for label, value in spent.items():
                rows.setdefault(f"{kind}, then its background job", {}).setdefault(label, []).append(value)
    print(f"{args.notes}-note vault; CPU per phase, median of {args.rounds} edits each (ms); load average {os.getloadavg()[0]:.1f}")
    for kind, phases in rows.items():
        print(f"\n{kind}:")
        for label, values in sorted(phases.items(), key=lambda kv: -statistics.median(kv[1])):
            value = statistics.median(values) * 1000
            if label.startswith(("ranking: ", "route: ")):
                print(f"  {label}")
            elif value >= 1.0:
                print(f"  {label:<28}{value:>8.0f}")


if __name__ == "__main__":
    from figures import record

    with record("update_phases"):
        main()
