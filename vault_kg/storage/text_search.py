"""BM25 over a handful of texts, with SQLite FTS5 in memory (the same ranking as a scope's index).

Recall ranks the passages of the journal days a question reaches, which no persistent index holds
one by one (the scope's index has a row per day note); building a throw-away FTS5 table over
them takes milliseconds for a few thousand passages and ranks them with the BM25 queries use.
"""

from __future__ import annotations

import sqlite3

__all__ = ["rank_texts"]


def rank_texts(texts: list[str], match: str, limit: int = 200) -> list[tuple[int, float]]:
    """(index into `texts`, BM25 score, higher is better) of the texts matching the FTS5 query
    `match`, best first, ties by index; empty for an empty match or a query FTS5 refuses."""
    if not texts or not match:
        return []
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
        con.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate(texts))
        rows = con.execute("SELECT rowid, -bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, limit + 16)).fetchall()
    except sqlite3.DatabaseError:
        return []
    finally:
        con.close()
    ranked = sorted(((int(i), float(s)) for i, s in rows), key=lambda r: (-r[1], r[0]))
    return ranked[:limit]
