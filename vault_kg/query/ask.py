"""`kg query`: one ranking over every scope asked, then what the best hits connect to.

Per scope, each signal ranks its nodes (`vault_kg.query.fusion`: BM25, titles and aliases, each
embedder's passages). The dense signals are ranked across all the scopes asked at once (a cosine
means the same in every scope: one embedder, one question), BM25 and the names within each scope
(BM25 scores of two indexes do not compare); reciprocal rank fusion then puts every scope's
nodes on one scale, so the order scopes are named in never decides. On code, tests rank below
the code they test unless the question asks for tests. The fused hits are the seeds; a bounded
walk along the graph (not tags) adds what they connect to, each with its route, after them: the
walk explains hits and never promotes a neighbour above one (measured in phase 1: giving link
neighbours a share of their parent's score lowered MRR).
"""

from __future__ import annotations

import heapq
import re
from typing import Any

from vault_kg.core import model as m
from vault_kg.core.agent_hints import ask as hint
from vault_kg.core.errors import KgError
from vault_kg.core.memory_kinds import JOURNAL, Filters
from vault_kg.core.scopes import Scope
from vault_kg.query import fusion
from vault_kg.query.graph_view import GraphView, load_view

__all__ = ["FILTERED_TOP", "HUB_KINDS", "MAX_BUDGET", "MAX_DEPTH", "SEEDS", "asks_for_tests", "is_test_path", "query"]

HUB_KINDS = {m.TAG, m.UNRESOLVED, m.EXTERNAL, m.ATTACHMENT}  # never a hit: a tag, a missing target, an image is not an answer
MAX_BUDGET = 50_000
MAX_DEPTH = 6
SEEDS = 10
FILTERED_TOP = 2000  # a filtered query reads this many candidates per signal before filtering
_TESTS_WORDS = re.compile(r"\b(tests?|testing|tested|pytest|unittest|fixtures?|specs?|conftest)\b", re.IGNORECASE)
_TEST_NAME = re.compile(r"^(test_.*|.*_test\.\w+|.*\.(test|spec)\.\w+|conftest\.py)$")


def is_test_path(path: str) -> bool:
    """A test file: under a `tests`/`test` folder, or named like one (`test_x.py`, `x_test.go`, `x.spec.ts`, `conftest.py`)."""
    parts = path.split("/")
    return any(p in ("tests", "test", "__tests__") for p in parts[:-1]) or bool(_TEST_NAME.match(parts[-1]))


def asks_for_tests(question: str) -> bool:
    return bool(_TESTS_WORDS.search(question))


def query(
    scopes: list[Scope],
    question: str,
    budget: int = 1500,
    include_stale: bool = False,
    depth: int = 2,
    seeds: int = SEEDS,
    as_of: str | None = None,
    views: list[GraphView] | None = None,
    filters: Filters | None = None,
) -> dict[str, Any]:
    """The fused ranking's best hits (seeds), a bounded walk from them, and the answer printed
    from both within `budget` tokens (`vault_kg.query.answer`).

    `as_of` answers with what was valid on that date; `views` lets a long-running server pass
    graphs it holds open; `filters` narrows every hit (tag, folder, kind, date); without them
    journal days stay out (`memory_kinds`).
    """
    from vault_kg.query.answer import render

    filters = filters or Filters()
    if not question.strip():
        raise KgError(f"empty question; try `{hint('query', question='payments retries')}`")
    budget = max(100, min(int(budget), MAX_BUDGET))
    depth = max(0, min(int(depth), MAX_DEPTH))
    views = views if views is not None else [load_view(s) for s in scopes]
    for view in views:
        view.as_of = as_of
    by_name = {v.scope.name: v for v in views}
    vectors: dict[str, Any] = {}
    fused, hidden = _ranked(views, question, include_stale, filters, vectors)
    top = fused[0][1] if fused else 1.0
    scored = {key: score / top for key, score in fused[:seeds]}
    seed_keys = [key for key, _ in fused[:seeds]]
    via: dict[tuple[str, str], str] = {}
    _expand(by_name, seed_keys, scored, via, depth, include_stale, filters)
    ordered = seed_keys + sorted((k for k in scored if k not in seed_keys), key=lambda k: (-scored[k], k))
    answer = render(question, ordered, set(seed_keys), scored, via, by_name, budget, vectors, multi=len(views) > 1)
    if not answer["hits"] and hidden:
        answer["hidden_matches"] = hidden
    return answer


def _ranked(views: list[GraphView], question: str, include_stale: bool, filters: Filters, vectors: dict[str, Any]) -> tuple[list[tuple[tuple[str, str], float]], int]:
    """(scope, node) keys by fused score, filtered; and how many matches were hidden as stale."""
    top = FILTERED_TOP if filters.narrowing else fusion.TOP
    embedders = fusion.configured_embedders()
    rankings: dict[str, list[tuple[str, str]]] = {}
    dense: dict[str, list[tuple[float, tuple[str, str]]]] = {}
    for view in views:
        name = view.scope.name
        for signal, ranked in fusion.signals(view, question, embedders, top, vectors, journal=JOURNAL in filters.kinds).items():
            if signal in embedders:
                dense.setdefault(signal, []).extend((score, (name, nid)) for nid, score in ranked)
            else:
                rankings[f"{signal}@{name}"] = [(name, nid) for nid, _ in ranked]
    for signal, found in dense.items():
        rankings[signal] = [key for _, key in sorted(found, key=lambda sk: (-sk[0], sk[1]))[:top]]
    weights = {key: fusion.WEIGHTS.get(key.split("@")[0], 1.0) for key in rankings}
    fused = fusion.rrf({k: [f"{s}\0{n}" for s, n in v] for k, v in rankings.items()}, weights)
    kept: list[tuple[tuple[str, str], float]] = []
    hidden = 0
    by_name = {v.scope.name: v for v in views}
    for view in views:
        view.nodes.prefetch([joined.split("\0", 1)[1] for joined, _ in fused if joined.startswith(view.scope.name + "\0")][: top * 2])
    for joined, score in fused:
        name, nid = joined.split("\0", 1)
        view = by_name[name]
        if nid not in view.nodes or view.nodes[nid].get("kind") in HUB_KINDS or not filters.admits(view.nodes[nid], view.scope.root):
            continue
        if not view.visible(nid, include_stale):
            hidden += 1
            continue
        kept.append(((name, nid), score))
    if not asks_for_tests(question):
        kept = [k for k in kept if not _in_test(by_name, k[0])] + [k for k in kept if _in_test(by_name, k[0])]
    return kept, hidden


def _in_test(views: dict[str, GraphView], key: tuple[str, str]) -> bool:
    view = views[key[0]]
    return view.scope.kind == "code" and is_test_path(str(view.nodes[key[1]].get("source") or ""))


def _expand(
    views: dict[str, GraphView], seed_keys: list[tuple[str, str]], scored: dict[tuple[str, str], float], via: dict[tuple[str, str], str], depth: int, include_stale: bool, filters: Filters
) -> None:
    """Best-first from the seeds, up to `depth` hops: a neighbour scores its parent's relevance ×
    the edge's score × 0.5 and keeps its best route (the edge's JSON) in `via`. Tag hubs are never
    followed, and a seed keeps its own place.

    An end is loaded only when its edge could raise its score; the ends of one node's edges are
    loaded in one read, then judged in edge order exactly as if each had been read alone.
    """
    seeds = set(seed_keys)
    frontier = [(-scored[k], 0, k) for k in seed_keys]
    heapq.heapify(frontier)
    expanded: set[tuple[str, str]] = set()
    while frontier:
        neg, hops, key = heapq.heappop(frontier)
        if key in expanded or hops >= depth:
            continue
        expanded.add(key)
        view = views[key[0]]
        steps = []
        for score, other, e in view.walk_edges(key[1]):
            relevance = -neg * score * 0.5
            if (key[0], other) not in seeds and relevance > scored.get((key[0], other), 0.0):
                steps.append((e, other, relevance))
        view.nodes.prefetch([other for _, other, _ in steps])
        for e, other, relevance in steps:
            if not view.visible(other, include_stale):
                continue
            node = view.nodes[other]
            if node.get("kind") in HUB_KINDS or not filters.admits(node, view.scope.root):
                continue
            okey = (key[0], other)
            if relevance > scored.get(okey, 0.0):
                scored[okey] = relevance
                via[okey] = e
                heapq.heappush(frontier, (-relevance, hops + 1, okey))
