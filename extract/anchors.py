"""Normalized span hashing: the anchor hash that reformatting and comment edits leave alone.

The text of a span is cut of its comment nodes first (by the extractor, which knows the
language's comment node types); what is left is normalized here: runs of whitespace become one
space, and a space next to punctuation disappears, so ``f(a,b)`` and ``f( a,\n  b )`` hash the
same while ``return x`` and ``returnx`` do not. Indentation-significant languages mark block
boundaries with ``{``/``}`` before normalizing, so moving a statement out of a block still
changes the hash. Whitespace inside string literals is normalized too (a documented blind spot).
"""

from __future__ import annotations

import hashlib
import re

_WS = re.compile(r"\s+")
_SPACE_BY_PUNCT = re.compile(r" (?=[^\w])|(?<=[^\w]) ")

BLOCK_OPEN = "\x01{"
BLOCK_CLOSE = "\x01}"


def normalize(text_without_comments: str) -> str:
    """Collapse whitespace the way the anchor hash sees it."""
    collapsed = _WS.sub(" ", text_without_comments).strip()
    return _SPACE_BY_PUNCT.sub("", collapsed)


def normalized_hash(text_without_comments: str) -> str:
    """SHA-256 (hex) of a span's text after :func:`normalize`."""
    return hashlib.sha256(normalize(text_without_comments).encode("utf-8")).hexdigest()


def splice(src: bytes, start: int, end: int, cuts: list[tuple[int, int, bytes]]) -> str:
    """The text of ``src[start:end]`` with each ``(cut_start, cut_end, replacement)`` applied.

    ``cuts`` are sorted, non-overlapping and inside the span: comments become a space, block
    boundaries insert markers (an empty cut with a replacement).
    """
    parts: list[bytes] = []
    pos = start
    for cut_start, cut_end, replacement in cuts:
        if cut_start < pos:
            continue
        parts.append(src[pos:cut_start])
        parts.append(replacement)
        pos = cut_end
    parts.append(src[pos:end])
    return b"".join(parts).decode("utf-8", "replace")
