"""Centrality ("god nodes") and communities, computed deterministically from the assembled graph.

God nodes are PageRank over the *meaning* edges only (note→note links, mentions, typed relations,
calls, inheritance), weighted by edge confidence. Tags, sections, unresolved targets, files and
external modules take no part, so a tag used by every note or a file that contains everything is
never crowned. PageRank rather than degree because an index/MOC note has many out-links but few
in-links: it passes rank on instead of hoarding it. Test code gets a tenth of the teleport weight.
"""

from __future__ import annotations

import re
from typing import Any

from . import model as m

RANK_KINDS = {m.NOTE, m.ENTITY, m.CLASS, m.FUNCTION, m.METHOD, m.MODULE}
RANK_RELATIONS_SKIP = {m.TAGGED, m.TAG_PARENT, m.HAS_SECTION, m.CONTAINS, m.IMPORTS}
TEST_PATH_RE = re.compile(r"(^|/)(tests?|testing|__tests__|spec)(/|$)|(^|/)(test_[^/]*|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+|conftest\.py)$")
LEIDEN_SEED = 42


def is_test_path(path: str) -> bool:
    return bool(TEST_PATH_RE.search(path or ""))


def _rankable(attrs: dict[str, Any]) -> bool:
    return attrs.get("kind") in RANK_KINDS and attrs.get("status") not in (m.QUARANTINED, m.SUPERSEDED)


def pagerank(nodes: dict[str, dict[str, Any]], edges: list[dict[str, Any]], alpha: float = 0.85) -> dict[str, float]:
    """Weighted, personalized PageRank by power iteration (numpy only), scaled to max 1."""
    import numpy as np

    ids = sorted(nid for nid, attrs in nodes.items() if _rankable(attrs))
    if not ids:
        return {}
    index = {nid: i for i, nid in enumerate(ids)}
    rows, cols, weights = [], [], []
    for e in edges:
        if e["relation"] in RANK_RELATIONS_SKIP:
            continue
        s, t = index.get(e["source"]), index.get(e["target"])
        if s is None or t is None or s == t:
            continue
        rows.append(s)
        cols.append(t)
        weights.append(float(e.get("score") or 0.0))
    n = len(ids)
    src = np.asarray(rows, dtype=np.int64)
    dst = np.asarray(cols, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    out = np.bincount(src, weights=w, minlength=n)
    share = w / np.where(out[src] > 0, out[src], 1.0)
    dangling = out == 0
    teleport = np.array([0.1 if is_test_path(nodes[nid].get("source", "")) else 1.0 for nid in ids])
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
    return {nid: round(float(rank[i] / top), 6) for i, nid in enumerate(ids)}


def god_nodes(nodes: dict[str, dict[str, Any]], ranks: dict[str, float], limit: int = 20) -> list[str]:
    candidates = [nid for nid in ranks if not is_test_path(nodes[nid].get("source", ""))]
    return sorted(candidates, key=lambda nid: (-ranks[nid], nid))[:limit]


def communities(
    nodes: dict[str, dict[str, Any]], edges: list[dict[str, Any]], ranks: dict[str, float]
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Leiden (igraph's, modularity, fixed seed) on the undirected weighted graph; stable ids.

    Tags join with a low weight so notes that share topics cluster; unresolved targets and
    external modules stay out. Returns node → community id and the community table.
    """
    import random

    import igraph as ig

    member_ids = sorted(nid for nid, a in nodes.items() if a.get("kind") not in (m.UNRESOLVED, m.EXTERNAL))
    if not member_ids:
        return {}, []
    index = {nid: i for i, nid in enumerate(member_ids)}
    weights: dict[tuple[int, int], float] = {}
    for e in edges:
        s, t = index.get(e["source"]), index.get(e["target"])
        if s is None or t is None or s == t:
            continue
        key = (s, t) if s < t else (t, s)
        w = float(e.get("score") or 0.0) * (0.3 if e["relation"] in (m.TAGGED, m.TAG_PARENT) else 1.0)
        weights[key] = weights.get(key, 0.0) + w
    pairs = sorted(weights)
    graph = ig.Graph(n=len(member_ids), edges=pairs)
    graph.es["weight"] = [weights[p] for p in pairs]
    ig.set_random_number_generator(random.Random(LEIDEN_SEED))
    try:
        membership = graph.community_leiden(objective_function="modularity", weights="weight", n_iterations=2).membership
    finally:
        ig.set_random_number_generator(random)
    groups: dict[int, list[str]] = {}
    for i, label in enumerate(membership):
        groups.setdefault(label, []).append(member_ids[i])
    ordered = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
    assignment: dict[str, int] = {}
    table: list[dict[str, Any]] = []
    for cid, members in enumerate(ordered):
        for nid in members:
            assignment[nid] = cid
        top = sorted(members, key=lambda nid: (-ranks.get(nid, 0.0), nid))[:5]
        named = [nodes[nid].get("label", nid) for nid in top if nid in ranks][:2] or [nodes[top[0]].get("label", top[0])]
        table.append({"id": cid, "name": " · ".join(named), "size": len(members), "members_top": top})
    internal = [0.0] * len(ordered)
    total = [0.0] * len(ordered)
    for (s, t), w in weights.items():
        cs, ct = assignment[member_ids[s]], assignment[member_ids[t]]
        total[cs] += w
        if cs == ct:
            internal[cs] += w
        else:
            total[ct] += w
    for row in table:
        cid = row["id"]
        row["cohesion"] = round(internal[cid] / total[cid], 3) if total[cid] else 1.0
    return assignment, table
