"""Which passages of a hit answer the question, and the window of one that fits the room left.

A hit's passages are cut from its file as it is now (`extract.passages`), so they are current even
before the background job has embedded the latest edit. They are ranked by cosine to the question,
averaged over the embedders the ranking used (from the stored vectors, or, wordllama costing
microseconds, embedded on the spot for passages not stored yet), blended with BM25 among the
note's passages (`blend`); with no vectors at all, by the question's words. Measured on the tune
half (docs/queries.md): given the right note, the two passages best by meaning hold the answering
text far more often than the note's first lines.
A passage longer than the room left keeps the lines around its best-matching line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vault_kg.core import model as m
from vault_kg.core.agent_text import one_line
from vault_kg.core.safe_read import read_regular
from vault_kg.query.graph_view import GraphView

__all__ = [
    "LEXICAL_WEIGHT",
    "PER_HIT",
    "SNIPPET_CHARS",
    "SNIPPET_READ_BYTES",
    "Chosen",
    "blend",
    "choose",
    "cost_of",
    "lexical_scores",
    "passage_lines",
    "safe_line",
    "snippet",
    "window",
]

PER_HIT = 2
# How much the words count beside the meaning when a hit's passages are ranked (z-scores over the
# note's passages). Chosen on the tune half of vault_a only: with both embedders the answering text
# printed within 800 tokens went from 0.57 to 0.62 at 0.3 (0.5: 0.62, 1.0: 0.60); see docs/queries.md.
LEXICAL_WEIGHT = 0.3
SNIPPET_CHARS = 160
SNIPPET_READ_BYTES = 2_000_000
_CODE_KINDS = {m.FILE, m.CLASS, m.FUNCTION, m.METHOD}
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Chosen:
    """A passage picked for a hit, with its score and its rank among the hit's passages."""

    first: int
    last: int
    heading: str
    text: str
    score: float
    rank: int

    def as_dict(self, label: str = "") -> dict[str, Any]:
        return {"first": self.first, "last": self.last, "heading": _heading(self.heading, label), "text": self.text}


def _passages(view: GraphView, hit: dict[str, Any]) -> list[Any]:
    from extract.passages import source_passages

    node = view.nodes.get(hit["id"])
    source = hit.get("source")
    if node is None or not source:
        return []
    if view.scope.kind == "vault" and node.get("kind") == m.NOTE:
        return source_passages("vault", view.scope.root, source, [(hit["id"], node)])
    if view.scope.kind == "code" and node.get("kind") in _CODE_KINDS:
        return source_passages("code", view.scope.root, source, [(hit["id"], node)])
    return []


def choose(view: GraphView, hit: dict[str, Any], question: str, vectors: dict[str, Any], keep: int = PER_HIT) -> list[Chosen]:
    """The hit's `keep` best passages, best first."""
    passages = _passages(view, hit)
    if not passages:
        return []
    dense = _dense_scores(view, passages, vectors)
    scores = blend(dense, lexical_scores(passages, question), LEXICAL_WEIGHT) if dense else _word_scores(passages, question)
    order = sorted(range(len(passages)), key=lambda i: (-scores[i], i))[:keep]
    return [Chosen(passages[i].first, passages[i].last, passages[i].heading, passages[i].text, scores[i], rank) for rank, i in enumerate(order)]


def _dense_scores(view: GraphView, passages: list[Any], vectors: dict[str, Any]) -> list[float] | None:
    """The mean cosine over the embedders with a vector for every passage (None: none has)."""
    if not vectors:
        return None
    import numpy as np

    from vault_kg.query import dense

    total, used = np.zeros(len(passages), dtype=np.float32), 0
    for name, question_vector in sorted(vectors.items()):
        store = dense.loaded(view.scope.out, name)
        rows = [store.by_digest.get(p.digest) if store is not None else None for p in passages]
        if all(r is not None for r in rows):
            assert store is not None
            matrix = store.matrix[[int(r) for r in rows if r is not None]]
        elif name == "wordllama":
            from extract.embedders import get

            matrix = get(name).passages([p.embed_text for p in passages])
        else:
            continue
        total += matrix @ question_vector
        used += 1
    return None if not used else (total / used).tolist()


def lexical_scores(passages: list[Any], question: str) -> list[float]:
    """BM25 of each passage (heading path and text) among the note's passages, over the
    question's stemmed words: the words an answer shares with its question, which static and small
    embedders blur (a typo'd or very short question, a rare name).

    >>> from extract.passages import Passage
    >>> rows = [Passage("n", "a.md", 1, 1, "Travel", "Book flights early."), Passage("n", "a.md", 3, 3, "Travel > Meals", "80 dollars a day for meals.")]
    >>> [round(s, 2) for s in lexical_scores(rows, "meal per diem")]
    [0.0, 0.87]
    """
    import math

    from vault_kg.query.search import query_terms, stem

    terms = {stem(t) for t in query_terms(question)}
    docs = [[stem(w) for w in _WORD.findall(p.embed_text.lower())] for p in passages]
    mean = sum(map(len, docs)) / len(docs) if docs else 1.0
    found = {t: sum(1 for d in docs if t in d) for t in terms}
    scores = []
    for words in docs:
        score = 0.0
        for t in terms:
            tf = words.count(t)
            if tf:
                idf = math.log(1 + (len(docs) - found[t] + 0.5) / (found[t] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(words) / (mean or 1.0)))
        scores.append(score)
    return scores


def blend(dense: list[float], lexical: list[float], weight: float = LEXICAL_WEIGHT) -> list[float]:
    """Meaning and words on one scale: each as z-scores over the hit's passages, the words weighted.
    A signal that does not vary (one passage, no word of the question anywhere) adds nothing.

    >>> [round(s, 2) for s in blend([0.50, 0.52, 0.30], [0.0, 0.0, 0.0])]
    [0.6, 0.81, -1.41]
    >>> [round(s, 2) for s in blend([0.50, 0.52, 0.30], [3.0, 0.0, 0.0], weight=1.0)]
    [2.02, 0.1, -2.12]
    """

    def z(values: list[float]) -> list[float]:
        mean = sum(values) / len(values)
        spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
        return [(v - mean) / spread if spread > 1e-9 else 0.0 for v in values]

    return [d + weight * w for d, w in zip(z(dense), z(lexical))]


def _terms(question: str) -> set[str]:
    from vault_kg.query.search import query_terms

    return {t[:-1] if len(t) > 4 and t.endswith("s") else t for t in query_terms(question)}


def _word_scores(passages: list[Any], question: str) -> list[float]:
    terms = _terms(question)
    scores = []
    for p in passages:
        words = _WORD.findall(p.text.lower())
        scores.append(float(sum(1 for t in terms if any(w.startswith(t) for w in words))) + min(1.0, sum(w in terms for w in words) / 50))
    return scores


def safe_line(line: str) -> str:
    """A line from a file as an agent may read it: its indentation kept, the rest one line (redacted, fence-safe)."""
    body = line.expandtabs(4)
    indent = len(body) - len(body.lstrip(" "))
    return " " * min(indent, 24) + one_line(body)


def _heading(heading: str, label: str) -> str:
    """The heading path without the note's own title (its header line already shows it)."""
    if label and heading == label:
        return ""
    if label and heading.startswith(label + " > "):
        return heading[len(label) + 3 :]
    return heading


def passage_lines(p: dict[str, Any]) -> list[str]:
    """A printed passage: its § line (heading path and lines), then its lines, indented."""
    where = f"{p['first']}-{p['last']}" if p["last"] != p["first"] else f"{p['first']}"
    head = f"    § {one_line(p['heading'])} ({where})" if p.get("heading") else f"    § lines {where}"
    return [head, *(f"      {safe_line(line)}" if line.strip() else "" for line in p["text"].split("\n"))]


def cost_of(p: dict[str, Any]) -> int:
    return sum(len(line) + 1 for line in passage_lines(p))


def window(chosen: Chosen, question: str, room: int, label: str = "") -> dict[str, Any] | None:
    """The passage as printed within `room` characters (its § line included): whole when it fits,
    else the lines around its best-matching line; None when not even one useful line fits."""
    heading = _heading(chosen.heading, label)
    lines = chosen.text.split("\n")

    def block(a: int, b: int, text: str | None = None) -> dict[str, Any]:
        return {"first": chosen.first + a, "last": chosen.first + b, "heading": heading, "text": "\n".join(lines[a : b + 1]) if text is None else text, "rank": chosen.rank}

    whole = block(0, len(lines) - 1)
    if cost_of(whole) <= room:
        return whole
    terms = _terms(question)
    best = max(range(len(lines)), key=lambda i: (sum(w.startswith(t) for w in _WORD.findall(lines[i].lower()) for t in terms), -i))
    a = b = best
    if cost_of(block(a, b)) > room:
        keep = room - cost_of(block(a, b, "")) - 1
        return block(a, b, one_line(lines[best], keep)) if keep >= 40 else None
    while True:
        grew = False
        for nxt in (b + 1, a - 1):
            if 0 <= nxt < len(lines) and cost_of(block(min(a, nxt), max(b, nxt))) <= room:
                a, b = min(a, nxt), max(b, nxt)
                grew = True
        if not grew:
            return block(a, b)


def snippet(scope: Any, node: dict[str, Any], terms: list[str]) -> tuple[int | None, str]:
    """The line of the node's span that best matches the question, verbatim and cut short."""
    source = node.get("source")
    if not source or node.get("kind") in (m.TAG, m.UNRESOLVED, m.EXTERNAL):
        return node.get("line"), ""
    try:
        raw = read_regular(scope.root / source, SNIPPET_READ_BYTES, root=scope.root)
    except OSError:  # gone, unreadable, or not a regular file inside the scope: no snippet
        return node.get("line"), ""
    lines = raw.decode("utf-8", "replace").splitlines()
    start = max(1, int(node.get("line") or 1))
    end = min(len(lines), int(node.get("end_line") or len(lines)))
    best, best_score = None, 0
    in_frontmatter = False
    for number in range(start, end + 1):
        text = lines[number - 1]
        if number == 1 and text.strip() == "---" and node.get("kind") == m.NOTE:
            in_frontmatter = True
            continue
        if in_frontmatter:
            if text.strip() == "---":
                in_frontmatter = False
            continue
        lowered = text.lower()
        score = sum(lowered.count(t) for t in terms)
        if score > best_score:
            best, best_score = number, score
    if best is None:
        return start, ""
    return best, one_line(lines[best - 1], SNIPPET_CHARS + 1)  # the file itself may hold a secret
