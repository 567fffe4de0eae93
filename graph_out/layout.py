"""Deterministic 2-D positions for a graph.json: communities as discs, members inside their disc.

Computed once in Python so the page is interactive at once (no force simulation in the browser)
and the same graph always gives the same coordinates. Two levels keep it fast at 10,000+ nodes:
a spring layout of the community graph places the discs, and a spring layout of each community's
own subgraph (its top members only, when large) places the members; the rest sit by a neighbour.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

SEED = 42
NODE_GAP = 6.0
CORE_LIMIT = 150
PACKED_COMMUNITIES = 300
GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))


def rank_of(node: dict[str, Any]) -> float:
    """The node's rank as a finite float in [0, 1] (missing or malformed: 0)."""
    value = node.get("rank")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def community_of(node: dict[str, Any]) -> int:
    """The node's community id; -1 when the graph carries none for it."""
    value = node.get("community")
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def node_radius(rank: float) -> float:
    """Drawn radius of a node, in layout units: grows with the square root of its rank."""
    return round(3.0 + 11.0 * math.sqrt(min(1.0, max(0.0, rank))), 2)


def compute_layout(data: dict[str, Any]) -> tuple[dict[str, tuple[float, float]], dict[int, tuple[float, float, float]]]:
    """Positions by node id, and (x, y, radius) by community id, rounded for stable output."""
    nodes = sorted(data.get("nodes", []), key=lambda n: str(n["id"]))
    rank = {str(n["id"]): rank_of(n) for n in nodes}
    members: dict[int, list[str]] = defaultdict(list)
    comm: dict[str, int] = {}
    for n in nodes:
        c = community_of(n)
        members[c].append(str(n["id"]))
        comm[str(n["id"])] = c
    inner: dict[int, set[tuple[str, str]]] = defaultdict(set)
    between: dict[tuple[int, int], int] = defaultdict(int)
    for e in data.get("edges", []):
        u, v = str(e["source"]), str(e["target"])
        if u == v or u not in comm or v not in comm:
            continue
        cu, cv = comm[u], comm[v]
        if cu == cv:
            inner[cu].add((min(u, v), max(u, v)))
        else:
            between[(min(cu, cv), max(cu, cv))] += 1

    order = sorted(members, key=lambda c: (-len(members[c]), c))
    size = {nid: node_radius(r) for nid, r in rank.items()}
    radius = {c: 1.25 * math.sqrt(sum((size[m] + NODE_GAP) ** 2 for m in members[c])) + NODE_GAP for c in order}
    centres = _place_communities(order, radius, between)
    ids: list[str] = []
    points: list[tuple[float, float]] = []
    for c in order:
        local = _local_layout(members[c], inner[c], rank)
        cx, cy = centres[c]
        r = radius[c] - NODE_GAP
        for nid, (x, y) in local.items():
            ids.append(nid)
            points.append((cx + x * r, cy + y * r))
    xy = _separate(np.array(points, dtype=float), np.array([size[n] for n in ids]), gap=NODE_GAP, rounds=40)
    positions = {nid: (round(float(xy[i, 0]), 1), round(float(xy[i, 1]), 1)) for i, nid in enumerate(ids)}
    discs = {c: (round(centres[c][0], 1), round(centres[c][1], 1), round(radius[c], 1)) for c in order}
    return positions, discs


def _place_communities(order: list[int], radius: dict[int, float], between: dict[tuple[int, int], int]) -> dict[int, tuple[float, float]]:
    """Discs of the largest communities by a weighted spring layout, then pushed apart; the small
    remainder on a spiral around them."""
    big = order[:PACKED_COMMUNITIES]
    rest = order[PACKED_COMMUNITIES:]
    centres: dict[int, tuple[float, float]] = {}
    if len(big) == 1:
        centres[big[0]] = (0.0, 0.0)
    elif big:
        import networkx as nx  # here, not at the top: a build that renders graph.html later never pays for it

        cg = nx.Graph()
        cg.add_nodes_from(big)
        for (a, b), w in sorted(between.items()):
            if a in cg and b in cg:
                cg.add_edge(a, b, weight=math.log1p(w))
        pos = nx.spring_layout(cg, seed=SEED, iterations=80, weight="weight")
        xy = np.array([pos[c] for c in big], dtype=float)
        r = np.array([radius[c] for c in big], dtype=float)
        span = math.sqrt(float(np.sum(r * r))) * 0.8
        xy = _separate(xy * span, r, gap=NODE_GAP * 4)
        for _ in range(4):
            xy = _separate(xy * 0.75, r, gap=NODE_GAP * 4)
        centres = {c: (float(xy[i, 0]), float(xy[i, 1])) for i, c in enumerate(big)}
    if rest:
        extent = max((math.hypot(*centres[c]) + radius[c] for c in big), default=0.0)
        step = 2.0 * max(radius[c] for c in rest) + NODE_GAP * 2
        ring, angle = extent + step, 0.0
        for c in rest:
            centres[c] = (ring * math.cos(angle), ring * math.sin(angle))
            angle += step / ring
            if angle >= 2 * math.pi:
                ring, angle = ring + step, 0.0
    return centres


def _separate(xy: np.ndarray, r: np.ndarray, gap: float, rounds: int = 150) -> np.ndarray:
    """Push overlapping discs apart; only near pairs are looked at (k-d tree), and the number of
    rounds is fixed, so the result is deterministic and cheap even for 20,000 nodes."""
    if len(r) < 2:
        return xy
    from scipy.spatial import cKDTree  # ~30 MB of imports; only a page render needs it

    xy = xy.copy()
    reach = 2.0 * float(r.max()) + gap
    for _ in range(rounds):
        pairs = cKDTree(xy).query_pairs(reach, output_type="ndarray")
        if not len(pairs):
            break
        pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
        i, j = pairs[:, 0], pairs[:, 1]
        delta = xy[i] - xy[j]
        dist = np.sqrt((delta**2).sum(axis=1))
        overlap = r[i] + r[j] + gap - dist
        hit = overlap > 0
        if not hit.any():
            break
        i, j, delta, dist, overlap = i[hit], j[hit], delta[hit], dist[hit], overlap[hit]
        same = dist < 1e-9
        angle = GOLDEN_ANGLE * i[same]
        delta[same] = np.stack([np.cos(angle), np.sin(angle)], axis=1)
        dist[same] = 1.0
        push = delta / dist[:, None] * (overlap / 2.0)[:, None]
        n = len(xy)
        for axis in (0, 1):
            xy[:, axis] += np.bincount(i, weights=push[:, axis], minlength=n) - np.bincount(j, weights=push[:, axis], minlength=n)
    return xy


def _local_layout(ids: list[str], edges: set[tuple[str, str]], rank: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Member positions inside the unit disc.

    The best-ranked members that hold the community together (two or more inner links) get a
    force-directed layout; leaves (sections, unresolved targets) and the long tail sit in a small
    ring around their best-placed neighbour, so the cost stays bounded per community.
    """
    by_rank = sorted(ids, key=lambda n: (-rank[n], n))
    if len(ids) == 1:
        return {ids[0]: (0.0, 0.0)}
    if not edges:
        return _sunflower(by_rank)
    neighbours: dict[str, list[str]] = defaultdict(list)
    for u, v in sorted(edges):
        neighbours[u].append(v)
        neighbours[v].append(u)
    hubs = [n for n in by_rank if len(neighbours[n]) >= 2] or by_rank
    core = sorted(hubs[:CORE_LIMIT])
    index = {n: i for i, n in enumerate(core)}
    pairs = [(index[u], index[v]) for u, v in sorted(edges) if u in index and v in index]
    xy = _force_layout(len(core), pairs)
    placed = {n: (float(xy[i, 0]), float(xy[i, 1])) for i, n in enumerate(core)}
    children: dict[str, int] = defaultdict(int)
    for i, n in enumerate(x for x in by_rank if x not in index):
        anchor = next((m for m in neighbours[n] if m in placed), None)
        if anchor is None:
            a, rr = GOLDEN_ANGLE * i, 1.05 + 0.1 * ((i * 7919) % 11) / 11.0
            placed[n] = (rr * math.cos(a), rr * math.sin(a))
            continue
        k = children[anchor]
        children[anchor] += 1
        ax, ay = placed[anchor]
        a, rr = GOLDEN_ANGLE * k, 0.06 + 0.02 * math.sqrt(k)
        placed[n] = (ax + rr * math.cos(a), ay + rr * math.sin(a))
    return _normalise(placed)


def _force_layout(n: int, pairs: list[tuple[int, int]], iterations: int = 50) -> np.ndarray:
    """Fruchterman-Reingold on a small dense graph, seeded: the same input, the same output."""
    pos = np.random.RandomState(SEED).rand(n, 2)
    if n < 3:
        return pos
    adj = np.zeros((n, n))
    if pairs:
        e = np.array(pairs)
        adj[e[:, 0], e[:, 1]] = 1.0
        adj[e[:, 1], e[:, 0]] = 1.0
    k = math.sqrt(1.0 / n)
    temp = 0.1
    cool = temp / (iterations + 1)
    for _ in range(iterations):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.sqrt(np.einsum("ijk,ijk->ij", delta, delta))
        np.maximum(dist, 0.01, out=dist)
        force = k * k / dist**2 - adj * dist / k
        disp = np.einsum("ijk,ij->ik", delta, force)
        length = np.sqrt(np.einsum("ij,ij->i", disp, disp))
        np.maximum(length, 0.01, out=length)
        pos += disp * (temp / length)[:, None]
        temp -= cool
    return pos


def _sunflower(ids: list[str]) -> dict[str, tuple[float, float]]:
    n = len(ids)
    return {nid: (math.sqrt((i + 0.5) / n) * math.cos(GOLDEN_ANGLE * i), math.sqrt((i + 0.5) / n) * math.sin(GOLDEN_ANGLE * i)) for i, nid in enumerate(ids)}


def _normalise(placed: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """Centre on the mean and scale into the unit disc, squeezing far outliers radially."""
    xs = np.array([p[0] for p in placed.values()])
    ys = np.array([p[1] for p in placed.values()])
    xs, ys = xs - xs.mean(), ys - ys.mean()
    d = np.sqrt(xs**2 + ys**2)
    scale = float(np.percentile(d, 95)) or 1.0
    d_scaled = d / scale
    squeezed = np.where(d_scaled > 0.85, 0.85 + 0.15 * np.tanh((d_scaled - 0.85) * 3), d_scaled)
    factor = np.divide(squeezed, d, out=np.zeros_like(d), where=d > 0)
    return {n: (float(xs[i] * factor[i]), float(ys[i] * factor[i])) for i, n in enumerate(placed)}
