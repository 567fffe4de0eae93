"""Entity names and the graph nodes and edges that the LLM pass contributes for one note.

Naming decisions (documented in docs/entities.md):

- An entity's id is ``entity:<canonical>``: casefolded, NFKC-normalized, leading article and
  trailing possessive removed, runs of spaces / underscores / hyphens collapsed to one ``-``.
  "The Payments API", "payments_api" and "payments-api" are one entity; nothing fuzzier is merged.
- An entity whose canonical name equals a note's title or one of its ``aliases`` IS that note: the
  edges point at the note node and no separate entity node is made. Notes already are the
  vault's entities; a second node for the same thing would split its links in two.
- Near-duplicates (``payments-api`` vs ``payments-worker``, ``acme`` vs ``acme-corp``) are never
  merged: :func:`likely_duplicates` lists them as advice for a human.

``llm_graph`` is pure and cheap: call it at assembly time with the current title index, so a note
that appears or disappears re-targets the edges without re-running the model.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from vault_kg.core.model import (
    AMBIGUOUS,
    CONFIDENCE_SCORE,
    ENTITY,
    EXTRACTED,
    MENTIONS,
    edge,
    entity_id,
)

_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"(?:'s|’s)$")
_SEPARATORS = re.compile(r"[\s_\-]+")
_EDGE_PUNCT = "\"'`*[](){}<>.,;:!?“”‘’"
_GENERIC_TAIL = {"corp", "inc", "ltd", "llc", "gmbh", "team", "project"}

PRONOUNS = frozenset("i me my we us our ours you your he him his she her they them their it its this that these those someone everyone team the-team our-team client the-client".split())


def canonical_name(name: str) -> str:
    """The normalized form that decides identity (see module docstring)."""
    text = unicodedata.normalize("NFKC", name).strip().strip(_EDGE_PUNCT).strip()
    text = _ARTICLE.sub("", text)
    text = _POSSESSIVE.sub("", text)
    text = text.casefold().strip(_EDGE_PUNCT)
    return _SEPARATORS.sub("-", text).strip("-")


def is_pronoun(name: str) -> bool:
    """True for names that are not names (pronouns, "the team"): they never become entities."""
    canonical = canonical_name(name)
    return not canonical or canonical in PRONOUNS


def match_key(text: str) -> str:
    """Text in the space-separated form used to look for mentions of a name."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("[[", " ").replace("]]", " ").replace("`", " ")
    return " " + _SEPARATORS.sub(" ", text).strip() + " "


def surface_forms(name: str, aliases: Iterable[str] = ()) -> set[str]:
    """The spellings that count as a mention of ``name``: itself, without article/suffix, aliases."""
    forms: set[str] = set()
    for candidate in [name, *aliases]:
        canonical = canonical_name(candidate)
        if not canonical:
            continue
        words = canonical.split("-")
        forms.add(" ".join(words))
        if len(words) > 1 and words[-1] in _GENERIC_TAIL:
            forms.add(" ".join(words[:-1]))
    return forms


def find_mention(forms: Iterable[str], line: str) -> int | None:
    """Character offset (in ``match_key(line)``) of the first mention of any form, else None."""
    key = match_key(line)
    best: int | None = None
    for form in forms:
        for match in re.finditer(rf"(?<![\w]){re.escape(form)}(?:s|es)?(?![\w])", key):
            if best is None or match.start() < best:
                best = match.start()
            break
    return best


def build_title_index(notes: dict[str, list[str]]) -> dict[str, str]:
    """``{canonical title or alias: note node id}`` from ``{note node id: [title, *aliases]}``.

    When two notes share a name, the first (sorted by id) keeps it: deterministic, and the clash
    shows up in ``likely_duplicates`` of the titles.
    """
    index: dict[str, str] = {}
    for node_id in sorted(notes):
        for name in notes[node_id]:
            canonical = canonical_name(name)
            if canonical and canonical not in index:
                index[canonical] = node_id
    return index


def _acronym(canonical: str) -> str:
    words = [w for w in canonical.split("-") if w]
    return "".join(w[0] for w in words) if len(words) > 1 else ""


def likely_duplicates(entity_names: Iterable[str]) -> list[tuple[str, str, str]]:
    """Pairs of distinct canonical names that a human should look at; never merged automatically.

    Reasons: one name is a word-prefix of the other ("acme" / "acme-corp"), same words in another
    order, an acronym ("gsc" / "google-search-console"), the same stem with a different last word
    ("payments-api" / "payments-worker"), or a near spelling (ratio >= 0.88). Candidates are
    blocked by shared word / acronym (a block of more than 60 names is skipped) so large vaults stay
    near-linear.
    """
    names = sorted({canonical_name(n) for n in entity_names if canonical_name(n)})
    blocks: dict[str, list[str]] = defaultdict(list)
    for name in names:
        keys = set(name.split("-")) | {name[:4]}
        if _acronym(name):
            keys.add(_acronym(name))
        if "-" not in name:
            keys.add(name)
        for key in keys:
            blocks[key].append(name)
    pairs: dict[tuple[str, str], str] = {}
    for members in blocks.values():
        if len(members) > 60:
            continue  # a word sixty names share ("team", "api") says nothing about any two of them
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                pair = (a, b) if a < b else (b, a)
                if pair in pairs:
                    continue
                reason = _duplicate_reason(*pair)
                if reason:
                    pairs[pair] = reason
    return [(a, b, reason) for (a, b), reason in sorted(pairs.items())]


def _duplicate_reason(a: str, b: str) -> str | None:
    wa, wb = a.split("-"), b.split("-")
    if sorted(wa) == sorted(wb):
        return "same words in another order"
    short, long_ = (wa, wb) if len(wa) < len(wb) else (wb, wa)
    if long_[: len(short)] == short or long_[-len(short) :] == short:
        return "one name contains the other"
    if len(wa) == 1 and wa[0] == _acronym(b) or len(wb) == 1 and wb[0] == _acronym(a):
        return "acronym"
    if len(wa) == len(wb) > 1 and wa[:-1] == wb[:-1]:
        return "same stem, different last word"
    if 2 * min(len(a), len(b)) < 0.88 * (len(a) + len(b)):
        return None  # lengths too far apart for a ratio of 0.88
    from difflib import SequenceMatcher  # here: a hook that reads one note's names never needs it

    matcher = SequenceMatcher(None, a, b)
    if matcher.quick_ratio() >= 0.88 and matcher.ratio() >= 0.88:
        return "similar spelling"
    return None


_INDEXED: list[Any] = [None, {}]  # the last title index seen and its canonical form


def _canonical_index(title_index: dict[str, str]) -> dict[str, str]:
    """``title_index`` keyed by canonical name, computed once per table: a build verifies every
    note against the same one."""
    if _INDEXED[0] is not title_index or len(_INDEXED[1]) > len(title_index):
        _INDEXED[:] = [title_index, {canonical_name(k): v for k, v in title_index.items()}]
    return _INDEXED[1]  # type: ignore[no-any-return]


def llm_graph(
    relpath: str,
    note_node_id: str,
    result: Any,
    title_index: dict[str, str],
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Entity nodes and edges (``mentions`` + typed relations) owned by the note ``relpath``;
    ``via`` says where an edge came from: ``stated`` by the note's structure, or the ``llm``.

    ``result`` is a :class:`extract.llm.NoteLlmResult` or its ``to_dict()`` form (as stored in
    ``Extraction.meta["llm"]``). A pending result contributes nothing. ``title_index`` maps note
    titles/aliases (canonical or raw) to note node ids.
    """
    data = result.to_dict() if hasattr(result, "to_dict") else dict(result or {})
    if data.get("status") != "ok":
        return {}, []
    index = _canonical_index(title_index)
    nodes: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []
    targets: dict[str, str] = {}

    for entity in data.get("entities", []):
        canonical = canonical_name(entity["name"])
        if not canonical or canonical in targets:
            continue
        node = index.get(canonical)
        if node is None:
            node = entity_id(canonical)
            nodes[node] = {
                "kind": ENTITY,
                "label": entity["name"],
                "entity_type": entity.get("type", "concept"),
                "source": relpath,
                "sources": [relpath],
                "aliases": [],
                **({"via": "stated"} if entity.get("stated") else {}),
            }
        targets[canonical] = node
        if node == note_node_id:
            continue
        confidence = entity.get("confidence", EXTRACTED)
        edges.append(
            edge(
                note_node_id,
                node,
                MENTIONS,
                owner=relpath,
                line=entity.get("line"),
                confidence=confidence,
                score=entity.get("score", CONFIDENCE_SCORE[confidence]),
                key=MENTIONS,
                via="stated" if entity.get("stated") else "llm",
            )
        )

    for rel in data.get("relations", []):
        src = targets.get(canonical_name(rel["source"]))
        dst = targets.get(canonical_name(rel["target"]))
        if src is None or dst is None or src == dst:
            continue
        confidence = rel.get("confidence", AMBIGUOUS)
        edges.append(
            edge(
                src,
                dst,
                rel["relation"],
                owner=relpath,
                line=rel.get("line"),
                confidence=confidence,
                score=rel.get("score", CONFIDENCE_SCORE[confidence]),
                key=rel["relation"],
                via="stated" if str(rel.get("check", "")).startswith("stated by") else "llm",
                check=rel.get("check", ""),
                **({"fitted": rel["fitted"]} if rel.get("fitted") else {}),
            )
        )
    return nodes, edges
