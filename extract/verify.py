"""Check every model-proposed entity and relation against the note text, in code.

Small models cluster relations on the note's subject, flip directions ("X was replaced by Y") and
turn negations ("we do NOT use Redis") into ``uses``. So nothing the model says is kept as
EXTRACTED unless the cited line mentions both ends (or an alias of them) and is neither negated nor
read in the wrong direction. Everything else is downgraded, with the reason in ``check`` and a
score, never dropped silently:

=============================================  ============  =====
case                                           confidence    score
=============================================  ============  =====
both ends on the cited line                    EXTRACTED     1.0
direction reversed (passive, "replaced X by")  INFERRED      0.6   (edge flipped to the text's)
both ends on another line than the cited one   INFERRED      0.7   (line corrected)
one end on the line, other is the note subject
or on one of the 3 lines before (a pronoun)    INFERRED      0.5
negated on the line ("not", "no longer", …)    AMBIGUOUS     0.2
ends not found                                 AMBIGUOUS     0.3
=============================================  ============  =====

The model's answer cites no line (lines cost output tokens, and a small model cites the wrong one
often): the first line that names both ends is then judged as if it were cited.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from vault_kg.core.model import AMBIGUOUS, EXTRACTED, INFERRED

from .entities import canonical_name, find_mention, match_key, surface_forms
from .relation_types import SYMMETRIC, fit_relations, typer, valid

from .verifier_version import VERIFIER_VERSION  # noqa: F401  (part of the pass's mode; see there)

PRONOUN_WINDOW = 3
_PRONOUN = re.compile(r"\b(?:it|its|they|them|their|he|him|his|she|her|we|our|us|this|that)\b")

_CLAUSE_BREAK = re.compile(r"[.;!?]\s|\s(?:but|however|whereas|while|although|though)\s|,\s+and\s|,\s+(?=not\s)|\s[-–—]+\s")
_NEGATORS = re.compile(
    r"\b(?:not|never|no longer|no more|stopped|stop|avoid|avoids|avoided|without|neither|nor|"
    r"dropped|removed|retired|deprecated|decommissioned|cannot|previously|formerly|used to|"
    r"won t|don t|doesn t|didn t|isn t|"
    r"aren t|wasn t|weren t|shouldn t|can t)\b"
)
_POSITIONAL = re.compile(r"\b(?:instead of|rather than|in favou?r of|moved away from|migrated away from|away from|replacing|replaced)\s+(?:the\s+|our\s+)?$")
_PASSIVE = re.compile(r"\b(?:\w+(?:ed|en|wn)|run|built|kept|led|made|held|paid|sold|bought|done)\s+by\b")
_BY_BEFORE = re.compile(r"\b(?:\w+(?:ed|en|wn)|run|built|kept|led|made|held)\s+by\s+(?:the\s+)?$")
_REPLACED_BY = re.compile(r"\b(?:replaced|superseded|succeeded|supplanted)\s+(?:by|with)\b|\bin favou?r of\b|\bmigrat\w*\s+to\b|\bmov\w*\s+to\b|\bswitch\w*\s+to\b")
_REPLACE_FORWARD = re.compile(r"\b(?:replaces|replaced|replacing|supersedes|superseded|instead of|rather than|over|takes over from|took over from)\b")


def _clause(key: str, position: int) -> tuple[int, int]:
    start, end = 0, len(key)
    for match in _CLAUSE_BREAK.finditer(key):
        if match.end() <= position:
            start = match.end()
        elif match.start() >= position:
            end = match.start()
            break
    return start, end


def _negated(key: str, target_pos: int) -> bool:
    start, end = _clause(key, target_pos)
    plain = key.replace("'", " ").replace("’", " ")
    if _NEGATORS.search(plain[start:end]):
        return True
    return bool(_POSITIONAL.search(key[max(start, target_pos - 40) : target_pos]))


def _new_side_of_replacement(key: str, first: int, second: int) -> str | None:
    """For a ``replaces`` edge: is the newer thing the "first" or "second" mention on the line?"""
    between, before = key[first:second], key[:first]
    if _REPLACED_BY.search(between):
        return "second"
    if re.search(r"\bfrom\s+(?:the\s+)?$", before) and re.search(r"\bto\b", between):
        return "second"
    if re.search(r"\b(?:replac\w*|swap\w*)\s+(?:the\s+|our\s+)?$", before) and re.search(r"\b(?:with|by|for)\b", between):
        return "second"
    if _REPLACE_FORWARD.search(between):
        return "first"
    return None


def _judge(rel: dict[str, Any], line: str, ps: int, pt: int) -> tuple[str, float, str, bool]:
    """(confidence, score, check, flip) for a relation whose both ends are on ``line``."""
    key = match_key(line)
    relation = rel["relation"]
    if relation == "replaces":
        new_side = _new_side_of_replacement(key, min(ps, pt), max(ps, pt))
        if new_side is None:
            return EXTRACTED, 1.0, "both ends on the cited line", False
        source_is_new = (new_side == "first") == (ps < pt)
        if source_is_new:
            return EXTRACTED, 1.0, "both ends on the cited line", False
        return INFERRED, 0.6, "direction reversed to match the text", True
    if _negated(key, pt):
        return AMBIGUOUS, 0.2, "negated on the cited line", False
    if relation not in SYMMETRIC and ps < pt and _PASSIVE.search(key[ps:pt]):
        return INFERRED, 0.6, "direction reversed (passive voice)", True
    return EXTRACTED, 1.0, "both ends on the cited line", False


def verify_relation(
    rel: dict[str, Any],
    lines: dict[int, str],
    forms_of: Callable[[str], set[str]],
    subject_forms: set[str],
) -> dict[str, Any]:
    """A copy of ``rel`` with ``confidence``, ``score``, ``check`` and ``line`` (maybe a corrected
    direction). ``lines`` maps file line numbers to the raw prose lines of the note. A relation
    that cites no line (the model's answer does not carry one) is judged on the first line that
    names both ends, as if the model had cited it."""
    s_forms, t_forms = forms_of(rel["source"]), forms_of(rel["target"])
    cited = rel.get("line")
    if not isinstance(cited, int):
        both = next((n for n in sorted(lines) if find_mention(s_forms, lines[n]) is not None and find_mention(t_forms, lines[n]) is not None), None)
        if both is None:
            return _elsewhere(rel, lines, s_forms, t_forms, subject_forms, found=False)
        found = _on_line(rel, both, lines, s_forms, t_forms, subject_forms) or {}
        return {**found, "check": found["check"].replace("the cited line", f"line {both}")}
    on_line = _on_line(rel, cited, lines, s_forms, t_forms, subject_forms) if cited in lines else None
    return on_line if on_line is not None else _elsewhere(rel, lines, s_forms, t_forms, subject_forms, found=True)


def _verdict(rel: dict[str, Any], confidence: str, score: float, check: str, line: int | None, flip: bool = False) -> dict[str, Any]:
    out = {**rel, "confidence": confidence, "score": score, "check": check, "line": line}
    if flip:
        out["source"], out["target"] = rel["target"], rel["source"]
    return out


def _on_line(rel: dict[str, Any], number: int, lines: dict[int, str], s_forms: set[str], t_forms: set[str], subject_forms: set[str]) -> dict[str, Any] | None:
    """The verdict when line ``number`` names both ends, or one end with the other the subject or
    on one of the lines just before it (a pronoun); else None."""
    text = lines[number]
    ps, pt = find_mention(s_forms, text), find_mention(t_forms, text)
    if ps is not None and pt is not None:
        confidence, score, check, flip = _judge(rel, text, ps, pt)
        return _verdict(rel, confidence, score, check, number, flip)
    if ps is None and pt is None:
        return None
    missing = t_forms if ps is not None else s_forms
    present_pos = ps if ps is not None else pt
    window = [lines[n] for n in range(number - PRONOUN_WINDOW, number) if n in lines]
    if not (missing & subject_forms or (_PRONOUN.search(match_key(text)) and any(find_mention(missing, w) is not None for w in window))):
        return None
    if _negated(match_key(text), present_pos or 0):
        return _verdict(rel, AMBIGUOUS, 0.2, "negated on the cited line", number)
    if ps is None and rel["relation"] not in SYMMETRIC and _BY_BEFORE.search(match_key(text)[: pt or 0]):
        return _verdict(rel, INFERRED, 0.5, "one end on the line, the other is the subject; reversed (passive voice)", number, flip=True)
    return _verdict(rel, INFERRED, 0.5, "one end on the line, the other is the subject or nearby", number)


def _elsewhere(rel: dict[str, Any], lines: dict[int, str], s_forms: set[str], t_forms: set[str], subject_forms: set[str], found: bool) -> dict[str, Any]:
    """The verdict from another line than the cited one (``found``: a line was cited)."""
    cited = rel.get("line")
    if found:
        for number in sorted(lines):
            line = lines[number]
            ls, lt = find_mention(s_forms, line), find_mention(t_forms, line)
            if ls is not None and lt is not None:
                confidence, score, check, flip = _judge(rel, line, ls, lt)
                if confidence == EXTRACTED:
                    return _verdict(rel, INFERRED, 0.7, "both ends on another line than cited", number)
                return _verdict(rel, confidence, score, check + " (line corrected)", number, flip)
    other = t_forms if s_forms & subject_forms else s_forms if t_forms & subject_forms else None
    if other is not None:
        for number in sorted(lines):
            position = find_mention(other, lines[number])
            if position is not None:
                if _negated(match_key(lines[number]), position):
                    return _verdict(rel, AMBIGUOUS, 0.2, "negated on another line than cited", number)
                return _verdict(rel, INFERRED, 0.4, "one end on another line than cited, the other is the subject", number)
    return _verdict(rel, AMBIGUOUS, 0.3, "ends not found on the cited line" if found else "ends not found on one line", cited if isinstance(cited, int) else None)


def verify_entity(entity: dict[str, Any], lines: dict[int, str], forms: set[str]) -> dict[str, Any]:
    """Locate the entity's first mention; an entity the text never names is AMBIGUOUS, unless the
    note's form states it (a frontmatter property: ``stated``, see :mod:`extract.stated_entities`)."""
    out = dict(entity)
    if entity.get("stated") and entity.get("line") in lines:  # read from that very line
        out.update(confidence=EXTRACTED, score=1.0)
        return out
    for number in sorted(lines):
        if find_mention(forms, lines[number]) is not None:
            out.update(line=number, confidence=EXTRACTED, score=1.0)
            return out
    if entity.get("stated"):
        out.update(line=entity.get("line"), confidence=EXTRACTED, score=1.0)
        return out
    out.update(line=None, confidence=AMBIGUOUS, score=0.3)
    return out


def _typed(entity: dict[str, Any], type_of: Callable[[str], str | None]) -> dict[str, Any]:
    """The entity with the note's own type when it is the subject, or its name's type instead of
    the "concept" fallback."""
    known = type_of(entity["name"])
    return {**entity, "type": known} if known and known != entity.get("type") else entity


def _unfitting(rel: dict[str, Any], type_of: Callable[[str], str | None]) -> dict[str, Any]:
    """A relation that no verb fits, given both ends' types (a person `depends_on` a person, a
    country `part_of` a client), is AMBIGUOUS: the types say the two are not related that way."""
    source_type, target_type = type_of(rel["source"]), type_of(rel["target"])
    if rel["confidence"] == AMBIGUOUS or not source_type or not target_type or valid(rel["relation"], source_type, target_type):
        return rel
    return {**rel, "confidence": AMBIGUOUS, "score": 0.3, "check": f"{rel['check']}; no relation fits a {source_type} and a {target_type}"}


def verify_extraction(
    entities: list[dict[str, Any]],
    relations: list[dict[str, Any]],
    lines: dict[int, str],
    aliases: dict[str, Iterable[str]],
    subject_names: Iterable[str],
    subject_type: str | None = None,
    stated: Iterable[dict[str, Any]] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Verify a whole note's entities and relations. ``aliases`` maps canonical names to extra
    spellings (note aliases); ``subject_names`` are the note's own title and aliases, and
    ``subject_type`` its type as its tags say. Relation verbs are first fitted to the types of
    their ends (see :mod:`extract.relation_types`). ``stated`` are relations the note's structure
    states (already EXTRACTED, see :mod:`extract.stated_relations`): for a pair of ends they
    name, they replace what the model said."""
    subject_names = list(subject_names)
    type_of = typer(entities, subject_names, subject_type, canonical_name)
    relations = fit_relations(relations, type_of)

    def forms_of(name: str) -> set[str]:
        return surface_forms(name, aliases.get(canonical_name(name), ()))

    subject: set[str] = set()
    for name in subject_names:
        subject |= forms_of(name)
    title_of = {canonical_name(a): title for title, names in aliases.items() for a in names}

    def key(name: str) -> str:
        canonical = canonical_name(name)
        return title_of.get(canonical, canonical)

    stated = list(stated)
    stated_pairs = {frozenset((key(r["source"]), key(r["target"]))) for r in stated}
    named = {key(e["name"]) for e in entities}
    extra = [{"name": r[end], "type": type_of(r[end]) or "concept", "stated": True} for r in stated for end in ("source", "target")]
    for entity in extra:
        if key(entity["name"]) not in named:
            named.add(key(entity["name"]))
            entities = [*entities, entity]
    checked_entities = [verify_entity(_typed(e, type_of), lines, forms_of(e["name"])) for e in entities]
    best: dict[frozenset[str], dict[str, Any]] = {}
    for rel in fit_relations([verify_relation(rel, lines, forms_of, subject) for rel in relations], type_of):
        rel = _unfitting(rel, type_of)
        pair = frozenset((key(rel["source"]), key(rel["target"])))
        if pair in stated_pairs:
            continue
        if pair not in best or rel["score"] > best[pair]["score"]:
            best[pair] = rel
    for rel in stated:
        best.setdefault(frozenset((key(rel["source"]), key(rel["target"]))), dict(rel))
    return checked_entities, list(best.values())
