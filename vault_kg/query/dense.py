"""The dense signals: a scope's passages ranked by cosine to the question, per embedder.

A scope's vectors are whatever the background job (`vault_kg.jobs.embed`) has written so far:
a store per embedder under `kg-out/vectors/`. A note not embedded yet simply has no dense rank,
which reciprocal rank fusion needs no special case for; a scope with no store at all answers
from its other signals and says nothing about it. Stores are read once per process and kept
while their file does not change (a warm server re-reads one after the job rewrites it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_kg.storage.layout import Layout
from vault_kg.storage.vectors import Row, read_store, store_stamp

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_TOP", "Loaded", "best_by_node", "configured", "loaded", "question_vector", "scores"]

DEFAULT_TOP = 100  # rows of each signal fused (the memo's measurements used the top 100)
_LOCK = threading.Lock()
_KEPT: dict[Path, tuple[tuple[int, int], Loaded | None]] = {}


@dataclass
class Loaded:
    """One store, ready for questions: float32 rows and, per node, the rows of its passages."""

    embedder: str
    rows: list[Row]
    matrix: np.ndarray  # float32, unit rows
    by_node: dict[str, list[int]]
    by_digest: dict[str, int]
    episodic: np.ndarray  # bool per row: a journal day's passage (kept out of default queries)


def configured(cfg: Any = None) -> tuple[str, ...]:
    """The embedders this machine uses (`[query] embedders`, `KG_EMBEDDERS`; empty: none)."""
    from vault_kg.core.config import load_config

    return tuple((cfg or load_config()).embedders)


def loaded(out: Path, embedder: str) -> Loaded | None:
    """The store of `embedder` in the scope folder `out`, kept per process while its file is unchanged."""
    path = Layout(out).vector_store(embedder)
    stamp = store_stamp(path)
    if stamp is None:
        return None
    with _LOCK:
        kept = _KEPT.get(path)
        if kept is not None and kept[0] == stamp:
            return kept[1]
    found = _load(path, embedder)
    with _LOCK:
        _KEPT[path] = (stamp, found)
    return found


def _load(path: Path, embedder: str) -> Loaded | None:
    import numpy as np

    from vault_kg.core.memory_kinds import journal_day

    stored = read_store(path, embedder)
    if stored is None or not stored.rows:
        return None
    by_node: dict[str, list[int]] = {}
    for i, row in enumerate(stored.rows):
        by_node.setdefault(row[0], []).append(i)
    days = {node for node in by_node if node.startswith("note:journal/") and journal_day(node[5:]) is not None}
    episodic = np.fromiter((row[0] in days for row in stored.rows), dtype=bool, count=len(stored.rows))
    return Loaded(embedder, stored.rows, np.asarray(stored.matrix, dtype=np.float32), by_node, stored.by_digest(), episodic)


def question_vector(embedder: str, question: str) -> np.ndarray:
    from extract.embedders import get

    vector: np.ndarray = get(embedder).query(question)
    return vector


def scores(store: Loaded, vector: np.ndarray, journal: bool = False) -> np.ndarray:
    """The cosine of every stored passage to the question (rows and question are unit length);
    journal days' passages score -2 unless `journal` (a default query never shows them)."""
    cosines: np.ndarray = store.matrix @ vector
    if not journal and store.episodic.any():
        cosines[store.episodic] = -2.0
    return cosines


def best_by_node(store: Loaded, cosines: np.ndarray, top: int = DEFAULT_TOP) -> list[tuple[str, float]]:
    """(node, its best passage's cosine), best first, the first `top` nodes; ties by node id."""
    import numpy as np

    want = min(len(cosines), max(top * 8, 64))
    order = np.argpartition(-cosines, want - 1)[:want] if want < len(cosines) else np.arange(len(cosines))
    best: dict[str, float] = {}
    for i in order.tolist():
        node = store.rows[i][0]
        value = float(cosines[i])
        if value <= -2.0:
            continue
        if value > best.get(node, -2.0):
            best[node] = value
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
