"""Ranks and communities for each run, stamped with the graph they describe.

PageRank is a few numpy passes; Leiden (igraph) costs several times more and, on an agent's edit,
would be most of the hook. So:

- when nothing ranking reads has changed (`rank.ranking_digest`: node kinds, statuses, labels,
  sources, and the weighted edge table), the last answer is reused as it is;
- otherwise PageRank runs; Leiden runs too, except when the run defers it (`RunSettings.defer`: the hooks
  and their background job): there the nodes keep the communities of the last clustering (new nodes
  get none), the community table is recomputed over the current graph, the cache asks the next
  update to run again (`retry`), and `vault_kg.jobs.clustering` clusters in the background and
  installs the result through a short update;
- when it defers the whole graph (`WHOLE_GRAPH`: the PostToolUse hook), a one-note link patch does not rank at
  all: it stores the edit in the query tables and leaves PageRank, the edge table and the
  artifacts to the same background job (`vault_kg.update.deferred_work`).

graph.json says which graph each part describes: `graph.stamp = {"graph": <digest of this
graph>, "communities": <digest of the graph the communities were computed on>}`. The two are
equal after every build, every update outside a hook, and once the background job has run; the
stamps and everything else are then byte-identical to a from-scratch build.
"""

from __future__ import annotations

from typing import Any

from vault_kg.update import centrality as rank
from vault_kg.update.run_state import COMMUNITIES, WHOLE_GRAPH

__all__ = ["BLOB", "STAMPS", "rank_graph", "stamps", "store", "unpack"]

BLOB = "ranking"  # (digest, ranks, assignment, communities, digest the communities describe)
STAMPS = "ranking_stamps"  # meta: [digest, digest the communities describe] of the stored answer


def unpack(last: Any) -> tuple[str, dict[str, float], dict[str, int], list[dict[str, Any]], str] | None:
    """The stored answer with its communities stamp (older caches stored none: then current)."""
    if not last:
        return None
    digest, ranks, assignment, table = last[:4]
    return digest, ranks, assignment, table, (last[4] if len(last) > 4 else digest)


def store(cache: Any, answer: tuple[str, dict[str, float], dict[str, int], list[dict[str, Any]], str]) -> None:
    """Keep the answer, and its two stamps apart (`stamps`: what a hook asks, without the rest)."""
    cache.put_blob(BLOB, answer)
    cache.set_meta(STAMPS, [answer[0], answer[4]])


def stamps(cache: Any) -> tuple[str, str] | None:
    """(digest of the graph ranked, digest of the graph the communities describe) of the stored
    answer, read without its ranks and communities (a hook asks whether the clustering waits)."""
    found = cache.get_meta(STAMPS)
    if found is not None:
        return found[0], found[1]
    last = unpack(cache.get_blob(BLOB))  # a cache written before the stamps were kept apart
    return None if last is None else (last[0], last[4])


def rank_graph(
    cache: Any,
    nodes: dict[str, dict[str, Any]],
    table: rank.EdgeTable,
    result: Any,
    defer: str = "",
    raw: dict[str, Any] | None = None,
) -> tuple[dict[str, float], dict[str, int], list[dict[str, Any]]]:
    """Ranks, node → community, and the community table for this run's graph (see above); `defer`:
    `RunSettings.defer`; `raw` receives the unscaled PageRank vector when it is computed."""
    digest = rank.ranking_digest(nodes, table)
    last = unpack(cache.get_blob(BLOB))
    defer = defer in (COMMUNITIES, WHOLE_GRAPH) and last is not None
    if last is not None and last[0] == digest:
        ranks, assignment, communities, of = last[1], last[2], last[3], last[4]
        result.extra["ranking"] = "reused"
        if of != digest and not defer:
            assignment, communities = rank.communities(nodes, table, ranks)
            of = digest
    else:
        ranks = rank.pagerank(nodes, table, raw=raw)
        result.extra["ranking"] = "computed"
        if defer:
            assert last is not None
            assignment, communities = rank.communities(nodes, table, ranks, previous=last[2])
            of = last[4]
        else:
            assignment, communities = rank.communities(nodes, table, ranks)
            of = digest
    if last is None or (last[0], last[4]) != (digest, of) or last[2] != assignment or last[3] != communities:
        store(cache, (digest, ranks, assignment, communities, of))
    if of != digest:
        result.extra["communities"] = "deferred"
        cache.set_meta("retry", True)  # the next update (or the background job) clusters
    result.extra.setdefault("graph_attrs", {})["stamp"] = {"graph": digest, "communities": of}
    return ranks, assignment, communities
