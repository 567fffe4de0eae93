"""Centrality ("god nodes") and communities, computed deterministically from the assembled graph.

God nodes are PageRank over the *meaning* edges only (note→note links, mentions, typed relations,
calls, inheritance), weighted by edge confidence. Tags, sections, unresolved targets, files and
external modules take no part, so a tag used by every note or a file that contains everything is
never crowned. PageRank rather than degree because an index/MOC note has many out-links but few
in-links: it passes rank on instead of hoarding it. Test code gets a tenth of the teleport weight,
and calls made from decorators count a tenth.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import model as m

RANK_KINDS = {m.NOTE, m.ENTITY, m.CLASS, m.FUNCTION, m.METHOD, m.MODULE}
RANK_RELATIONS_SKIP = {m.TAGGED, m.TAG_PARENT, m.HAS_SECTION, m.CONTAINS, m.IMPORTS}
HUB_RELATIONS = {m.TAGGED, m.TAG_PARENT}
COMMUNITY_SKIP_KINDS = {m.UNRESOLVED, m.EXTERNAL}
TEST_PATH_RE = re.compile(r"(^|/)(tests?|testing|__tests__|spec)(/|$)|(^|/)(test_[^/]*|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+|conftest\.py)$")
LEIDEN_SEED = 42


def is_test_path(path: str) -> bool:
    return bool(TEST_PATH_RE.search(path or ""))


@dataclass
class EdgeTable:
    """The graph as numpy arrays over sorted node ids: built once, shared by rank and communities."""

    ids: list[str]
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    meaning: np.ndarray
    hub: np.ndarray


def edge_table(nodes: dict[str, dict[str, Any]], edges: list[dict[str, Any]]) -> EdgeTable:
    ids = sorted(nodes)
    index = {nid: i for i, nid in enumerate(ids)}
    src = np.array([index[e["source"]] for e in edges], dtype=np.int64)
    dst = np.array([index[e["target"]] for e in edges], dtype=np.int64)
    weight = np.array([e.get("score") or 0.0 for e in edges], dtype=float)
    decorated = [i for i, e in enumerate(edges) if "decorator" in e and e["decorator"]]
    if decorated:
        weight[decorated] *= 0.1
    codes: dict[str, int] = {}
    relation = np.array([codes.setdefault(e["relation"], len(codes)) for e in edges], dtype=np.int64)
    skip = np.array([r in RANK_RELATIONS_SKIP for r in codes], dtype=bool)
    hubs = np.array([r in HUB_RELATIONS for r in codes], dtype=bool)
    meaning = ~skip[relation] if len(edges) else np.zeros(0, dtype=bool)
    hub = hubs[relation] if len(edges) else np.zeros(0, dtype=bool)
    return EdgeTable(ids, src, dst, weight, meaning, hub)


def pagerank(nodes: dict[str, dict[str, Any]], table: EdgeTable, alpha: float = 0.85) -> dict[str, float]:
    """Weighted, personalized PageRank by power iteration (numpy only), scaled to max 1.

    Only live, rankable nodes take part: stale and superseded knowledge is never crowned.
    """
    rankable = np.array([nodes[nid].get("kind") in RANK_KINDS and nodes[nid].get("status") not in (m.QUARANTINED, m.SUPERSEDED, m.STALE) for nid in table.ids], dtype=bool)
    if not rankable.any():
        return {}
    keep = table.meaning & rankable[table.src] & rankable[table.dst] & (table.src != table.dst)
    positions = np.flatnonzero(rankable)
    remap = np.full(len(table.ids), -1, dtype=np.int64)
    remap[positions] = np.arange(len(positions))
    src, dst, w = remap[table.src[keep]], remap[table.dst[keep]], table.weight[keep]
    n = len(positions)
    out = np.bincount(src, weights=w, minlength=n)
    share = w / np.where(out[src] > 0, out[src], 1.0)
    dangling = out == 0
    teleport = np.array([0.1 if is_test_path(nodes[table.ids[p]].get("source", "")) else 1.0 for p in positions])
    teleport /= teleport.sum()
    rank = np.full(n, 1.0 / n)
    for _ in range(100):
        flow = np.bincount(dst, weights=rank[src] * share, minlength=n)
        new = alpha * (flow + rank[dangling].sum() * teleport) + (1 - alpha) * teleport
        done = np.abs(new - rank).sum() < 1e-10
        rank = new
        if done:
            break
    top = rank.max() or 1.0
    scaled = np.round(rank / top, 6)
    return {table.ids[p]: float(scaled[i]) for i, p in enumerate(positions)}


def god_nodes(nodes: dict[str, dict[str, Any]], ranks: dict[str, float], limit: int = 20) -> list[str]:
    candidates = [nid for nid in ranks if not is_test_path(nodes[nid].get("source", ""))]
    return sorted(candidates, key=lambda nid: (-ranks[nid], nid))[:limit]


class Clustering:
    """Leiden communities, started in a forked child (see `forked`) and finished with the ranks."""

    def __init__(self, nodes: dict[str, dict[str, Any]], table: EdgeTable) -> None:
        from .forked import Forked

        self.nodes, self.table = nodes, table
        member = np.array([nodes[nid].get("kind") not in COMMUNITY_SKIP_KINDS for nid in table.ids], dtype=bool)
        self.positions = np.flatnonzero(member)
        n = len(self.positions)
        self.membership: Forked[list[int]] | None = None
        if not n:
            return
        remap = np.full(len(table.ids), -1, dtype=np.int64)
        remap[self.positions] = np.arange(n)
        keep = member[table.src] & member[table.dst] & (table.src != table.dst)
        a, b = remap[table.src[keep]], remap[table.dst[keep]]
        w = table.weight[keep] * np.where(table.hub[keep], 0.3, 1.0)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        keys, inverse = np.unique(lo * n + hi, return_inverse=True)
        self.weights = np.bincount(inverse, weights=w)
        self.pairs = np.column_stack((keys // n, keys % n))
        self.membership = Forked(leiden, n, self.pairs, self.weights) if len(keys) > FORK_MIN_PAIRS else None

    def close(self) -> None:
        if self.membership is not None:
            self.membership.close()

    def finish(self, ranks: dict[str, float]) -> tuple[dict[str, int], list[dict[str, Any]]]:
        """Node → community id, and the community table (name from the most central members,
        size, cohesion). Ids are ordered by size, then by first member."""
        nodes, table = self.nodes, self.table
        if not len(self.positions):
            return {}, []
        pairs, weights = self.pairs, self.weights
        found = self.membership.result() if self.membership is not None else leiden(len(self.positions), pairs, weights)
        member_ids = [table.ids[p] for p in self.positions]
        groups: dict[int, list[str]] = {}
        for i, label in enumerate(found):
            groups.setdefault(label, []).append(member_ids[i])
        ordered = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
        assignment: dict[str, int] = {}
        for cid, members in enumerate(ordered):
            for nid in members:
                assignment[nid] = cid
        community = np.array([assignment[nid] for nid in member_ids], dtype=np.int64)
        cs, ct = community[pairs[:, 0]], community[pairs[:, 1]]
        k = len(ordered)
        internal = np.bincount(cs[cs == ct], weights=weights[cs == ct], minlength=k)
        total = np.bincount(cs, weights=weights, minlength=k) + np.bincount(ct[cs != ct], weights=weights[cs != ct], minlength=k)
        table_rows: list[dict[str, Any]] = []
        for cid, members in enumerate(ordered):
            top = sorted(members, key=lambda nid: (-ranks.get(nid, 0.0), nid))[:5]
            named = [nodes[nid].get("label", nid) for nid in top if nid in ranks][:2] or [nodes[top[0]].get("label", top[0])]
            cohesion = round(float(internal[cid] / total[cid]), 3) if total[cid] else 1.0
            table_rows.append({"id": cid, "name": " · ".join(str(x) for x in named), "size": len(members), "members_top": top, "cohesion": cohesion})
        return assignment, table_rows


FORK_MIN_PAIRS = 20_000


def leiden(n: int, pairs: np.ndarray, weights: np.ndarray) -> list[int]:
    """igraph's Leiden (modularity, fixed seed) on the undirected weighted graph: a membership list."""
    import igraph as ig

    graph = ig.Graph(n=n, edges=pairs.tolist())
    graph.es["weight"] = weights.tolist()
    ig.set_random_number_generator(random.Random(LEIDEN_SEED))
    try:
        return list(graph.community_leiden(objective_function="modularity", weights="weight", n_iterations=2).membership)
    finally:
        ig.set_random_number_generator(random)


def communities(nodes: dict[str, dict[str, Any]], table: EdgeTable, ranks: dict[str, float]) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Leiden communities of the graph (tags join with weight 0.3 so notes that share topics
    cluster; unresolved targets and external modules stay out); see `Clustering`."""
    return Clustering(nodes, table).finish(ranks)
