"""Pairs of names that share a sentence: what the model is asked to relate, one short answer each.

A 1.5B model asked to find relations itself names few of them, nearly all from the note's
subject. Asked about one given pair at a time, it only has to pick a verb (or `none`), which costs
a few output tokens. The pairs come from the note's text without a model: two names in the same
sentence, in reading order. A name is a `[[wikilink]]` target, the note's title or alias, a run of
capitalised words ("Priya Raman", "Google Analytics 4", optionally ending in a word such as
"team" or "service": "Data team"), or a hyphenated lower-case identifier ("ingest-worker"). A
sentence that opens with a pronoun meaning the subject ("It", "They", "The team") names the
subject too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .entities import canonical_name

MAX_PAIRS = 24
MAX_NAMES_PER_SENTENCE = 5

_WORD = r"(?:[A-Z][\w.+&]*[\w+]|[A-Z])"
_MORE = r"(?:[A-Z][\w.+&]*[\w+]|[A-Z]|[0-9][\w.]*)"
_TAILS = ("team", "squad", "service", "api", "worker", "project", "platform", "cluster", "pipeline")
_TAIL = r"(?:\s+(?:" + "|".join(_TAILS) + r"|API))?"
_CAPS = re.compile(rf"(?<![\w-])({_WORD}(?:[ \t]+{_MORE}){{0,3}}{_TAIL})(?![\w-])")
_MID_CAPS = re.compile(r"(?<=[a-z,] )([A-Z][\w.+&]*[\w+])")
_BLOCK = re.compile(r"^(?:[-*+]\s|\d+[.)]\s|\|)")
_IDENT = re.compile(r"(?<![\w-])([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w-])")
_COMMON_SUFFIX = frozenset("side only related up based like level wide free time list usage down out in off safe aware".split())
_COMMON_PREFIX = frozenset(
    "on ad read write follow end up day long real self built opt sign re one e hand in non pre co out off well high low "
    "two three multi cross back front full half open no all per sub semi anti post mid short so x first second third last".split()
)
_SENTENCE_SPAN = re.compile(r"(?:[^.!?—–]|[.](?=\S))+[.!?—–]?")
_SUBJECT_OPENER = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)?(?:it|they|we|this|the (?:team|project|service|tool|client|company|api))\b", re.IGNORECASE)
_NOT_NAMES = frozenset(
    "the a an it its they we our this that these those he she his her their there here if when while after before "
    "in on at by for from to of and or but not no yes each every all some any one two three see also note notes why what how "
    "who which ad hoc out scope tbd n/a ok done todo monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december q1 q2 q3 q4 "
    "get post put patch delete head nightly daily weekly monthly people architecture timeline owner owners status context decision consequences".split()
)


@lru_cache(maxsize=4096)
def _bounded(folded: str) -> re.Pattern[str]:
    """A known name as a whole word (not inside another word or identifier)."""
    return re.compile(rf"(?<![\w-]){re.escape(folded)}(?![\w-])")


@dataclass(frozen=True)
class Pair:
    """Two names of one sentence, in reading order, and the chunk line (from 1) they share."""

    first: str
    second: str
    line: int


def names_in(sentence: str, known: Iterable[str], capitalised: frozenset[str] = frozenset()) -> list[tuple[int, str]]:
    """The names a sentence holds with their offsets, in reading order, each once (see the module
    docstring). A single capitalised word opening the sentence (or a table cell) counts only when
    it is known, or ``capitalised`` (written capitalised elsewhere in the note mid-sentence), or
    looks like a product name ("PagerDuty", "GA4"): "Persistence is ..." names nothing."""
    found: list[tuple[int, str, bool]] = []
    lowered = sentence.casefold()
    for name in known:
        folded = name.casefold()
        if folded not in lowered:  # most known names are not in a given sentence: skip the regex
            continue
        match = _bounded(folded).search(lowered)
        if match:
            found.append((match.start(), sentence[match.start() : match.end()], True))
    for pattern in (_CAPS, _IDENT):
        for match in pattern.finditer(sentence):
            trimmed = _trim(match.group(1))
            found.append((match.end(1) - len(trimmed), trimmed, False))
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    taken: list[tuple[int, int]] = []
    for start, name, is_known in sorted(found, key=lambda f: (f[0], -len(f[1]))):
        key = canonical_name(name)
        if not key or key in seen or key in _NOT_NAMES or len(key) < 2 or any(a <= start < b for a, b in taken):
            continue
        if not is_known and not _is_name(name, sentence[:start], capitalised):
            continue
        seen.add(key)
        taken.append((start, start + len(name)))
        out.append((start, name))
    return out


def _is_name(name: str, before: str, capitalised: frozenset[str]) -> bool:
    words = name.split()
    if words[-1].casefold() in _TAILS and len(words) == 1:
        return False
    if name[0].islower():
        parts = name.split("-")
        return parts[0] not in _COMMON_PREFIX and parts[-1] not in _COMMON_SUFFIX
    opens = not before.strip() or before.rstrip().endswith("|")
    if not opens or len(words) > 1 or "-" in name:
        return True
    return name in capitalised or any(c.isupper() or c.isdigit() for c in name[1:])


def _trim(name: str) -> str:
    """A capitalised run without a leading sentence word ("The Data team" -> "Data team")."""
    words = name.split()
    while len(words) > 1 and words[0].casefold() in _NOT_NAMES:
        words = words[1:]
    return " ".join(words)


def _paragraphs(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Runs of lines that one sentence can span: a heading, a list item, a table row or a gap in
    the file's line numbers starts a new one; headings are left out."""
    out: list[list[tuple[int, str]]] = []
    previous = None
    for index, (number, text) in enumerate(lines, 1):
        stripped = text.lstrip()
        if stripped.startswith("#"):
            previous = None
            continue
        starts = previous is None or number != previous + 1 or _BLOCK.match(stripped) or out[-1][-1][1].lstrip().startswith("|")
        if starts:
            out.append([])
        out[-1].append((index, text))
        previous = number
    return out


def candidate_pairs(lines: list[tuple[int, str]], subject: str, known: Iterable[str]) -> list[Pair]:
    """Up to MAX_PAIRS pairs of names sharing a sentence of a chunk's prompt ``lines`` (file line
    number, text), in reading order, each with the chunk line (from 1) of its second name.
    ``known`` are names the vault gives (link targets, the note's title and aliases)."""
    known = sorted({k for k in known if k and len(k) > 1}, key=len, reverse=True)
    subject_key = canonical_name(subject)
    capitalised = frozenset(m.group(1) for _, text in lines for m in _MID_CAPS.finditer(text))
    pairs: list[Pair] = []
    seen: set[frozenset[str]] = set()
    for paragraph in _paragraphs(lines):
        text, starts = "", []
        for index, line in paragraph:
            starts.append((len(text), index))
            text += line.strip() + " "
        for match in _SENTENCE_SPAN.finditer(text):
            sentence = match.group(0)
            names = [(match.start() + offset, name) for offset, name in names_in(sentence, known, capitalised)]
            if _SUBJECT_OPENER.match(sentence.strip()) and subject_key not in {canonical_name(n) for _, n in names}:
                names.insert(0, (match.start(), subject))
            names = names[:MAX_NAMES_PER_SENTENCE]
            for i, (_, first) in enumerate(names):
                for offset, second in names[i + 1 :]:
                    ident = frozenset((canonical_name(first), canonical_name(second)))
                    if len(ident) < 2 or ident in seen:
                        continue
                    seen.add(ident)
                    pairs.append(Pair(first, second, max(index for at, index in starts if at <= offset)))
                    if len(pairs) >= MAX_PAIRS:
                        return pairs
    return pairs
