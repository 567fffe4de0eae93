"""What the model is asked about a note, without talking to it: the chunks, the prompts and their
cache keys, and how chunk answers become one note's answer (the schema, the system prompt and the
request options are in `extract.llm_schema`, the prose lines in `extract.prose`).

Pure and light (no HTTP client imported): the engine plans a note and computes its keys on every
build and update to look answers up; the worker (`extract.llm`) sends the same prompts.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .entities import canonical_name
from .llm_cache import cache_key
from .llm_schema import (  # noqa: F401 (re-exported: the pipeline reads them from here)
    PROMPT_SHA,
    ENTITY_FIELDS,
    ENTITY_TYPES,
    EXTRACTION_SCHEMA,
    MAX_ENTITIES,
    MAX_LINE,
    MAX_NAME_CHARS,
    MAX_RELATIONS,
    NUM_PREDICT,
    PROMPT_VERSION,
    RELATION_FIELDS,
    RELATIONS,
    SCHEMA_VERSION,
    SEED,
    SYSTEM_PROMPT,
    largest_answer,
    request_options,
)
from .pair_candidates import Pair, candidate_pairs
from .prose import WIKILINK, asks_the_model, body_start, prose_lines  # noqa: F401 (re-exported)
from .stated_entities import stated_entities
from .stated_relations import stated_relations
from .verify import verify_extraction

SPLIT_CHARS = 8000
NUM_CTX = 8192
MIN_SPLIT_LINES = 3
NOTE_BUDGET_S = 1800.0
CONSECUTIVE_FAILURES_TO_STOP = 3
# A pessimistic token count: English prose runs about 4 characters per token, other scripts can
# take a token per character. Chunks are sized with it so the prompt always fits num_ctx.
ASCII_CHARS_PER_TOKEN = 2.5

PENDING = "pending"
OK = "ok"


def chunk_key(user: str, model: str, digest: str, options: dict[str, Any]) -> str:
    """The cache key of one chunk: exactly what the model sees, and who answers with which options."""
    return cache_key(hashlib.sha256(user.encode()).hexdigest(), model, digest, PROMPT_VERSION, SCHEMA_VERSION, {**options, "prompt_sha": PROMPT_SHA})


@dataclass
class Chunk:
    """Prose lines of a note, each with its FILE line number; the prompt numbers them from 1."""

    lines: list[tuple[int, str]]

    @property
    def chars(self) -> int:
        return sum(len(text) + 1 for _, text in self.lines)


_HEADING = re.compile(r"^#{1,6}\s")


def link_targets(raw: dict[int, str], chunk: Chunk) -> list[str]:
    """The names the chunk's own `[[wikilinks]]` give (the target, without folder or heading)."""
    names: list[str] = []
    for number, _ in chunk.lines:
        line = raw.get(number, "")
        if "[[" in line:
            names.extend(PurePosixPath(m.group(1).strip()).name for m in WIKILINK.finditer(line) if m.group(1).strip())
    return names


def estimate_tokens(text: str) -> int:
    """A pessimistic token count (see ASCII_CHARS_PER_TOKEN)."""
    wide = sum(1 for c in text if ord(c) > 127) if not text.isascii() else 0
    return math.ceil((len(text) - wide) / ASCII_CHARS_PER_TOKEN) + wide


def _fits(chunk: Chunk, chars: int, tokens: int) -> bool:
    return chunk.chars <= chars and estimate_tokens("\n".join(t for _, t in chunk.lines)) + 6 * len(chunk.lines) <= tokens


def chunk_note(clean: dict[int, str], budget: int = SPLIT_CHARS, token_budget: int = 10**9) -> list[Chunk]:
    """The whole note when its prose is under ``budget`` characters (and fits ``token_budget``);
    else heading-bounded sections packed in order up to that size, a section still too long cut
    at paragraph gaps. Sections are packed greedily, so an edit of one section changes one chunk
    unless it pushes a section across a chunk boundary."""
    items = sorted(clean.items())
    if not items:
        return []
    whole = Chunk(items)
    if _fits(whole, budget, token_budget):
        return [whole]
    sections: list[list[tuple[int, str]]] = []
    for number, text in items:
        if _HEADING.match(text) or not sections:
            sections.append([])
        sections[-1].append((number, text))
    pieces: list[Chunk] = []
    for section in sections:
        pieces.extend(_cut(Chunk(section), budget, token_budget))
    packed: list[Chunk] = []
    for piece in pieces:
        if packed and _fits(Chunk(packed[-1].lines + piece.lines), budget, token_budget):
            packed[-1] = Chunk(packed[-1].lines + piece.lines)
        else:
            packed.append(piece)
    return packed


def _cut(chunk: Chunk, budget: int, token_budget: int) -> list[Chunk]:
    if _fits(chunk, budget, token_budget):
        return [chunk]
    if len(chunk.lines) < 2:
        number, text = chunk.lines[0]
        keep = min(budget, max(64, int(token_budget * ASCII_CHARS_PER_TOKEN)) if text.isascii() else token_budget // 2)
        return [Chunk([(number, text[:keep])])]  # one line longer than a chunk: its head only
    left, right = split_chunk(chunk)
    return _cut(left, budget, token_budget) + _cut(right, budget, token_budget)


def split_chunk(chunk: Chunk) -> tuple[Chunk, Chunk]:
    """Two halves, cut at the gap in line numbers (a paragraph break) nearest the middle."""
    lines = chunk.lines
    middle = len(lines) // 2
    gaps = [i for i in range(1, len(lines)) if lines[i][0] - lines[i - 1][0] > 1]
    cut = min(gaps, key=lambda i: abs(i - middle)) if gaps else middle
    if not 0 < cut < len(lines):
        cut = max(1, middle)
    return Chunk(lines[:cut]), Chunk(lines[cut:])


_DELIMITER = re.compile(r"<\s*/?\s*note\b[^>]*>", re.IGNORECASE)


def inert(text: str) -> str:
    """Note text that cannot close or reopen the `<note>` delimiters, in any spelling, with every
    secret redacted: every piece of the vault in a prompt passes here, so no credential reaches
    the model server (which may be another machine's)."""
    from vault_kg.core.secrets import redact

    return _DELIMITER.sub(lambda m: m.group(0).replace("<", "&lt;"), redact(text))


def _one_line(text: str) -> str:
    return inert(" ".join(text.split()))


def known_in(chunk: Chunk, known_names: list[str], raw: dict[int, str] | None = None) -> list[str]:
    """The known names that occur in the chunk (in its `raw` lines when given: a link's target counts)."""
    text = "\n".join(raw.get(n, "") for n, _ in chunk.lines) if raw is not None else "\n".join(t for _, t in chunk.lines)
    lowered = text.casefold()
    return sorted({_one_line(k) for k in known_names if k and k.casefold() in lowered}, key=str.casefold)[:40]


def chunk_pairs(title: str, chunk: Chunk, known_names: list[str], raw: dict[int, str] | None = None) -> list[Pair]:
    """The pairs the model is asked about in this chunk (see :mod:`extract.pair_candidates`)."""
    return candidate_pairs(chunk.lines, _one_line(title), [_one_line(title), *known_in(chunk, known_names, raw)])


def build_prompt(title: str, chunk: Chunk, known_names: list[str], raw: dict[int, str] | None = None) -> str:
    """The user message: the known names that occur in this chunk, the title, the pairs of names
    that share a sentence (where the relations are: the model only has to say which ones the note
    states, and how), the delimited lines numbered from 1.

    Everything that comes from the vault (title, known names, lines) is made inert: a note that
    writes `</NOTE>` or a file name with a newline cannot step outside the untrusted block.
    """
    body = "\n".join(f"{i}: {inert(t)}" for i, (_, t) in enumerate(chunk.lines, 1))
    known = known_in(chunk, known_names, raw)
    parts = []
    if known:
        parts.append("KNOWN NAMES: " + "; ".join(known))
    parts.append(f"NOTE TITLE: {_one_line(title)}")
    pairs = chunk_pairs(title, chunk, known_names, raw)
    if pairs:
        parts.append("PAIRS:\n" + "\n".join(f'line {p.line}: "{_one_line(p.first)}", "{_one_line(p.second)}"' for p in pairs))
    parts.append(f"<note>\n{body}\n</note>")
    return "\n".join(parts)


@dataclass
class NotePlan:
    """What the model is asked about one note: its chunks, their prompts, and the raw prose lines
    that verification reads."""

    title: str
    raw: dict[int, str]
    chunks: list[Chunk]
    prompts: list[str]


def token_budget(num_ctx: int) -> int:
    """Prompt tokens a chunk may take: the window minus the answer, the system prompt and the header."""
    return num_ctx - request_options(num_ctx)["num_predict"] - estimate_tokens(SYSTEM_PROMPT) - 400


def plan_note(title: str, text: str, num_ctx: int = NUM_CTX) -> NotePlan:
    """Chunks and prompts of one note (pure: the engine and the worker compute the same keys)."""
    raw, clean = prose_lines(text)
    chunks = chunk_note(clean, SPLIT_CHARS, token_budget(num_ctx))
    return NotePlan(title, raw, chunks, [build_prompt(title, chunk, link_targets(raw, chunk), raw) for chunk in chunks])


def merge_answers(plan: NotePlan, answers: list[dict[str, Any]]) -> dict[str, Any]:
    """One note's answer from its chunks' cached answers: FILE line numbers, one entity per name
    (relation ends included, as "concept" when no other type was given)."""
    entities: list[dict[str, Any]] = []
    relations: list[dict[str, Any]] = []
    for chunk, answer in zip(plan.chunks, answers):
        numbers = [n for n, _ in chunk.lines]
        for rel in answer.get("relations", []):
            line = rel.get("line")
            relations.append({**rel, "line": numbers[line - 1] if isinstance(line, int) and 0 < line <= len(numbers) else None})
        entities.extend(answer.get("entities", []))
    for rel in relations:
        entities.extend({"name": rel[end], "type": "concept"} for end in ("source", "target"))
    return {"entities": dedupe_entities(entities), "relations": relations}


def verify_answer(
    answer: dict[str, Any],
    raw: dict[int, str],
    alias_map: dict[str, list[str]],
    subject: list[str],
    subject_type: str | None = None,
    props: dict[str, Any] | None = None,
    named: list[dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Verified entities and relations (see :mod:`extract.verify`), with the relations the note's
    lists, tables and properties state (:mod:`extract.stated_relations`) and the entities its form
    names (``named``, or read here when None: :mod:`extract.stated_entities`). ``alias_map`` maps
    canonical note titles to their aliases; ``subject`` is the note's own title and aliases,
    ``subject_type`` the note's type from its tags, ``props`` its frontmatter properties."""
    stated = stated_relations(raw, subject[0], props, subject_type) if subject else []
    entities = with_stated_entities(answer["entities"], stated_entities(raw, props) if named is None else named)
    return verify_extraction(entities, answer["relations"], raw, alias_map, subject, subject_type, stated)


def with_stated_entities(entities: list[dict[str, Any]], stated: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model's entities, then those the note names by its form (:mod:`extract.stated_entities`)
    that the model left out: the model's type wins, a stated type replaces its "concept"."""
    typed = {canonical_name(e["name"]): e for e in stated}
    out = []
    for entity in entities:
        held = typed.pop(canonical_name(entity["name"]), None)
        out.append({**entity, "type": held["type"]} if held and entity.get("type", "concept") == "concept" else entity)
    out.extend({"name": e["name"], "type": e["type"], "stated": True, **({"line": e["line"]} if e.get("line") else {})} for e in typed.values())
    return out


def dedupe_entities(entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per canonical name; a specific type beats the "concept" fallback."""
    seen: dict[str, dict[str, Any]] = {}
    for entity in entities:
        canonical = canonical_name(entity["name"])
        if canonical not in seen or (seen[canonical]["type"] == "concept" and entity["type"] != "concept"):
            seen[canonical] = entity
    return list(seen.values())
