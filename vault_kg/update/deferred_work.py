"""The whole-graph work a PostToolUse hook leaves to its background job, and the short run that does it.

A link edit changes a few owners' edges, but PageRank moves the rank of nearly every node (at six
decimals, about nine rows in ten of a 10,000-note vault), so ranking the graph again and writing
graph.json, the report and the brief cost the whole graph: most of a hook at 10,000 notes. When the run
defers the whole graph (`RunSettings.defer`: the PostToolUse hook on a vault note) the link patch stores
the edit in the query tables instead (`defer`): node rows and edge rows as the whole route would
leave them, a replaced node row keeping its last rank and community, and the owners whose rows
the rank's edge table lacks in `OWED`. Ranks, communities, the edge table and the artifacts keep
describing the last ranked graph, which graph.json's stamp names; `retry` makes every later
update (and the no-op probe) see that work is left.

`vault_kg.jobs.clustering` then takes the scope's lock and runs an update that ends in `finish_owed`: the
edge table patched with the owed owners' rows, PageRank, and the artifacts, from the cache alone
(no extraction is loaded); then Leiden off the lock as before. Any other update that comes first
does the same work on its way (`stages.rank_nodes` folds the owed owners in and clears `OWED`).
Once the job has run, everything is byte-identical to a from-scratch build (the property test's
`hook` mode checks it after every step).
"""

from __future__ import annotations

from typing import Any

from graph_out.formats import pass_attrs

from vault_kg.update.centrality import with_table
from vault_kg.update.edge_groups import OwnerGroups
from vault_kg.update.run_result import fill_counts
from vault_kg.update.noop_checks import OWED, deps_changed, owed_owners, record_artifacts
from vault_kg.update.run_state import Run
from vault_kg.update.stages import rank_nodes, write_artifacts

__all__ = ["defer", "finish_owed", "owe", "record"]


def defer(run: Run, groups: dict[str, list[dict[str, Any]]], encoded: dict[str, bytes], more_edges: int, last: dict[str, Any]) -> None:
    """Store a hook's link patch in the query tables, leave the whole-graph work owed, end the run.

    `run` holds the patched nodes and the changed node ids; `groups` are the edge groups this
    edit derived again (`encoded`: the non-empty ones, encoded), `more_edges` how many edges they
    hold beyond the groups they replace, `last` the graph graph.json shows."""
    cache, nodes, result = run.cache, run.nodes, run.result
    changed = sorted(run.changed_nodes or ())
    kept_ranks = cache.ranks_of(changed)
    cache.sync_graph(nodes, groups, encoded, set(groups), set(changed))
    cache.put_ranks({nid: kept_ranks.get(nid, (0.0, None)) for nid in changed if nid in nodes})
    edges = owe(cache, list(groups), changed, more_edges, last)
    result.extra["whole_graph"] = "deferred"
    result.quarantined = [tuple(q) for q in last.get("quarantined", [])]
    result.nodes, result.edges, result.pending = len(nodes), edges, last["counts"].get("pending", 0)
    run.done = True


def owe(cache: Any, owners: list[str], nodes: list[str], more_edges: int, last: dict[str, Any]) -> int:
    """Add to what is owed: these owners' rows in the edge table, these nodes' bytes in graph.json
    (their rows changed), `more_edges` edges; ask every later update to look (`retry`). The edge
    count the query tables now hold."""
    before = cache.get_meta(OWED) or {"owners": []}
    edges = before.get("edges", last["counts"]["edges"]) + more_edges
    cache.set_meta(OWED, {"owners": sorted({*before["owners"], *owners}), "edges": edges, "nodes": sorted({*before.get("nodes", []), *nodes})})
    cache.set_meta("retry", True)
    return int(edges)


def finish_owed(run: Run) -> None:
    """Engine stage after `scan`: when what a hook deferred is the only work left, do it from the
    cache (no extraction loaded, no file read) and end the run."""
    cache, result = run.cache, run.result
    if owed_owners(cache) is None or run.to_read or run.removed or not run.artifacts_ok or run.rebuild_all or run.request.refresh:
        return
    if deps_changed(cache.get_meta("deps", {}) or {}):
        return
    if run.request.settings.defers_whole_graph:  # a hook with nothing to read: the job that deferred the work does it
        fill_counts(result, cache)
        run.done = True
        return
    from vault_kg.update.owed_settle import settle_carried  # here: a hook never settles

    if run.scope.kind == "vault" and settle_carried(run, cache.get_meta(OWED)):
        return
    kept = with_table(cache.load_kept())
    if kept is None or kept.touched:
        return
    last = cache.get_meta("graph", {}) or {}
    run.kept, run.nodes, run.changed_nodes = kept, cache.load_nodes(), set()
    run.edges_by_owner = OwnerGroups({}, kept.groups, {})
    result.sources = last.get("counts", {}).get("sources", 0)
    result.attachments = (last.get("counts", {}).get("by_kind") or {}).get("attachment", 0)
    result.extra["graph_attrs"] = pass_attrs(last)
    cache.set_meta("retry", False)  # as `post_assembly` leaves it; ranking asks again while clustering is deferred
    rank_nodes(run)
    if run.request.settings.clustering_next and result.extra.get("communities") == "deferred":
        cache.set_meta(OWED, {"owners": [], "edges": run.table.row_count()})  # type: ignore[union-attr]
        fill_counts(result, cache)
        run.done = True  # the job writes the artifacts once, with the communities it computes next
        return
    write_artifacts(run)
    record(run)


def record(run: Run) -> None:
    """What `stages.record` keeps when no source changed: the artifacts' stat and the graph's counts."""
    cache, result, data = run.cache, run.result, run.data
    result.quarantined = [tuple(q) for q in data["graph"].get("quarantined", [])]
    record_artifacts(run.layout, cache, result.graph_digest)
    cache.set_meta("graph", data["graph"])
    result.nodes, result.edges = len(data["nodes"]), data["graph"]["counts"]["edges"]
    result.pending = data["graph"]["counts"].get("pending", 0)
    run.done = True
