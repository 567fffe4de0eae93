"""BM25 seeds for queries, from the FTS5 index in the scope's cache (see `vault_kg.storage.cache`).

SQLite FTS5 ranks with the same BM25 as bm25s or rank-bm25 and, unlike them, deletes and inserts
single documents, so a one-note update re-indexes one note instead of the whole vault.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from vault_kg.storage.light_reads import DatabaseError

if TYPE_CHECKING:  # push-recall imports the constants on the hook's fast path: no cache module
    from vault_kg.storage.cache import GraphReader

__all__ = ["STOPWORDS", "TOKEN_RE", "WEIGHTS", "query_terms", "search", "search_names", "stem"]

TOKEN_RE = re.compile(r"\w+", re.UNICODE)
# Column weights for bm25(): label counts most, then aliases and summary, then the body.
WEIGHTS = (8.0, 4.0, 3.0, 1.0)
STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from has have how i in is it its me my of on or "
    "our so that the their them then there these this to was we were what when where which who why "
    "will with you your about into over under than".split()
)


def query_terms(question: str) -> list[str]:
    terms = [t.lower() for t in TOKEN_RE.findall(question)]
    kept = [t for t in terms if t not in STOPWORDS and len(t) > 1]
    return kept or terms


def stem(term: str) -> str:
    """A crude, deterministic stem: plural and -ing/-ed endings dropped (`retries` → `retry`)."""
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("s", "")):
        if term.endswith(suffix) and len(term) - len(suffix) >= 3 and not term.endswith("ss"):
            return term[: -len(suffix)] + repl
    return term


def _any_term(question: str) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in query_terms(question))


def search(reader: "GraphReader", question: str, limit: int = 20) -> list[tuple[str, float]]:
    """(node id, score) best first; score positive (FTS5's bm25 negated); any term may match."""
    match = _any_term(question)
    if not match:
        return []
    try:
        return reader.search(match, WEIGHTS, limit)
    except DatabaseError:
        return []


def search_names(reader: "GraphReader", question: str, limit: int = 20) -> list[tuple[str, float]]:
    """`search` over titles and aliases alone: the graph's names, a signal of their own."""
    match = _any_term(question)
    if not match:
        return []
    try:
        return reader.search("{label aliases} : (" + match + ")", WEIGHTS, limit)
    except DatabaseError:
        return []
