"""Entities and typed relations from one note, through a local model served by Ollama.

One ``/api/chat`` call per ordinary note, with the real ``ollama`` client: ``stream: true``,
``format`` = a flat JSON schema with enums, bounded arrays and bounded strings, ``temperature 0``,
a fixed ``seed``, ``think: false``, ONE ``num_ctx`` for every call of a run (Ollama reloads the
model when it changes), ``num_predict`` = the schema's largest legal answer, an explicit timeout
and a time budget per note.

What small models do, and what this module does about it (DESIGN.md section 5): they loop, repeating
an item until ``num_predict``. Output tokens are what costs on a CPU, so the answer is read as it
streams and the reader stops at the first repeated item, keeping the de-duplicated items before it;
the chunk is re-asked (in two halves) only when nothing valid came back. The answer is compact:
relations as ``[line, source, relation, target]`` and entities as ``[name, type]`` (short arrays, no
keys), about half the output tokens of the same answer as objects with keys. Only prose of about 8,000
characters and up is split, at headings. Fenced code, frontmatter and URLs never reach the prompt.
The note is wrapped as untrusted data. Lines are numbered from 1 in each chunk, so what the model
sees (and the cache key) does not move when the frontmatter or another section changes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import httpx
import ollama
import pydantic

from .entities import canonical_name, is_pronoun
from .llm_cache import LlmCache
from .llm_prompt import (  # noqa: F401 (the pipeline's public names, re-exported)
    PROMPT_SHA,
    ASCII_CHARS_PER_TOKEN,
    CONSECUTIVE_FAILURES_TO_STOP,
    ENTITY_TYPES,
    EXTRACTION_SCHEMA,
    ENTITY_FIELDS,
    MAX_ENTITIES,
    MAX_LINE,
    MAX_NAME_CHARS,
    MAX_RELATIONS,
    MIN_SPLIT_LINES,
    NOTE_BUDGET_S,
    NUM_CTX,
    NUM_PREDICT,
    OK,
    PENDING,
    PROMPT_VERSION,
    RELATION_FIELDS,
    RELATIONS,
    SCHEMA_VERSION,
    SEED,
    SPLIT_CHARS,
    SYSTEM_PROMPT,
    Chunk,
    NotePlan,
    dedupe_entities,
    body_start,
    build_prompt,
    chunk_key,
    chunk_note,
    estimate_tokens,
    inert,
    largest_answer,
    link_targets,
    merge_answers,
    plan_note,
    prose_lines,
    request_options,
    split_chunk,
    token_budget,
    verify_answer,
)
from .llm_stream import ItemScanner
from .llm_wire import AnswerTooLong, BadLine, OllamaWire

MAX_META_BYTES = 4 * 1024 * 1024  # /api/tags and /api/show: a list of models, a model's card
ANSWER_BYTES_PER_TOKEN = 1024  # a streamed line holds one token in an envelope of a few hundred bytes


class _Entity(pydantic.BaseModel):
    name: Annotated[str, pydantic.StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
    type: Literal[ENTITY_TYPES]  # type: ignore[valid-type]


class _Relation(pydantic.BaseModel):
    line: int | None = None
    source: Annotated[str, pydantic.StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
    relation: Literal[RELATIONS]  # type: ignore[valid-type]
    target: Annotated[str, pydantic.StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]


@dataclass
class NoteLlmResult:
    """What the model pass says about one note, verified.

    ``status`` is "ok" or "pending". ``relations`` are verified, with FILE line numbers; ``raw``
    is the merged answer before verification. ``keys`` are the note's chunk keys in the cache.
    """

    status: str
    message: str = ""
    entities: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)
    calls: int = 0
    cache_hit: bool = False
    eval_tokens_per_s: float | None = None
    prompt_tokens: int = 0
    output_tokens: int = 0
    keys: list[str] = field(default_factory=list)
    model: str = ""
    digest: str = ""
    chunks: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NoteLlmResult:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class ModelDown(Exception):
    """Ollama cannot serve any note now (not running, model missing): back off and stop."""


class NoteFailed(Exception):
    """This note could not be extracted now; it stays pending and is retried later."""


class _Empty(Exception):
    """Nothing valid came back for a chunk (cut before the first item): worth one re-ask on halves."""


def _model_matches(entry_names: list[str], wanted: str) -> bool:
    def norm(name: str) -> str:
        name = name.casefold()
        return name if ":" in name else name + ":latest"

    return norm(wanted) in {norm(n) for n in entry_names if n}


class OllamaExtractor:
    """Ask a model served by Ollama about notes, one chunk per call, caching every answer.

    It checks Ollama once (:meth:`preflight`), then :meth:`answer` gives a note's chunk answers
    (cached ones without a call). Thread-safe: with ``[ollama] parallel = k`` the worker keeps k
    notes in flight on one instance.
    """

    def __init__(
        self,
        host: str,
        model: str,
        timeout: float = 600.0,
        cache_dir: Path | str | None = None,
        *,
        retries: int = 2,
        backoff_s: float = 1.0,
        connect_timeout: float = 3.0,
        keep_alive: str | float | None = "10m",
        num_ctx: int = NUM_CTX,
        note_budget_s: float = NOTE_BUDGET_S,
        seed: int = SEED,
    ) -> None:
        self.host = host
        self.model = model
        self.timeout = timeout
        self.retries = retries
        self.backoff_s = backoff_s
        self.keep_alive = keep_alive
        self.num_ctx = num_ctx
        self.note_budget_s = note_budget_s
        self.seed = seed
        self.cache = LlmCache(Path(cache_dir)) if cache_dir is not None else None
        self.wire = OllamaWire(host, timeout, connect_timeout)
        self.digest: str | None = None
        self.context_length: int | None = None
        self._ready = False
        self._lock = threading.Lock()

    @property
    def options(self) -> dict[str, Any]:
        return request_options(self.num_ctx, self.seed)

    def down_message(self) -> str:
        return f"Ollama is not reachable at {self.host}: run `ollama serve` (or set OLLAMA_HOST)"

    def missing_message(self) -> str:
        return f"model '{self.model}' is not available in Ollama at {self.host}: run `ollama pull {self.model}`"

    def preflight(self) -> str | None:
        """None when Ollama answers and has the model; else the one line telling what to run.

        Never pulls a model. Records the model digest (cache key) and its trained context length
        (``num_ctx`` is capped at it, once, for the whole run).
        """
        if self._ready:
            return None
        try:
            listed = ollama.ListResponse.model_validate(self.wire.get("/api/tags", time.monotonic() + self.timeout, MAX_META_BYTES))
            entry = next(
                (m for m in listed.models if _model_matches([m.model or "", getattr(m, "name", "") or ""], self.model)),
                None,
            )
            if entry is None:
                return self.missing_message()
            shown = self.show()
        except (ConnectionError, httpx.ConnectError):
            return self.down_message()
        except httpx.TimeoutException:
            return f"Ollama at {self.host} did not answer within {self.timeout:g}s: check `ollama ps`, or raise [ollama] timeout"
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                return self.missing_message()
            return f"Ollama at {self.host} failed ({exc.status_code}: {exc.error}): check the `ollama serve` logs"
        except (httpx.TransportError, pydantic.ValidationError, ValueError, AnswerTooLong) as exc:
            return f"Ollama at {self.host} gave an unusable answer ({type(exc).__name__}): run `ollama serve` and retry"
        self.digest = entry.digest or f"unknown:{self.model}"
        info = shown.modelinfo or {}
        lengths = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
        self.context_length = min(lengths) if lengths else None
        if self.context_length:
            self.num_ctx = min(self.num_ctx, self.context_length)
        if self.cache is not None:
            self.cache.remember_model(self.model, self.digest, self.context_length)
        self._ready = True
        return None

    def show(self) -> ollama.ShowResponse:
        """The model's card (`/api/show`), read within the timeout."""
        return ollama.ShowResponse.model_validate(self.wire.post("/api/show", {"model": self.model}, time.monotonic() + self.timeout, MAX_META_BYTES))

    def key(self, prompt: str) -> str:
        assert self.digest is not None, "preflight() first"
        return chunk_key(prompt, self.model, self.digest, self.options)

    def plan(self, title: str, text: str) -> NotePlan:
        return plan_note(title, text, self.num_ctx)

    def answer(self, plan: NotePlan, stats: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Each chunk's answer, from the cache or from one call (cached as soon as it arrives).

        Raises :class:`ModelDown` or :class:`NoteFailed`; answers already cached stay cached.
        """
        stats = stats if stats is not None else new_stats()
        deadline = time.monotonic() + self.note_budget_s
        answers = []
        for chunk, prompt in zip(plan.chunks, plan.prompts):
            key = self.key(prompt)
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                stats["hits"] += 1
                answers.append(cached)
                continue
            payload = self._ask(plan.title, chunk, plan.raw, prompt, stats, deadline, depth=0)
            if self.cache is not None:
                self.cache.put(key, payload)
            answers.append(payload)
        return answers

    def extract_note(
        self,
        relpath: str,
        text: str,
        *,
        title: str | None = None,
        aliases: list[str] | None = None,
        alias_map: dict[str, list[str]] | None = None,
    ) -> NoteLlmResult:
        """The whole pipeline for one note (plan, answer, merge, verify); never raises for Ollama
        trouble. ``title`` / ``aliases`` default to what the deterministic pass reads in the note;
        ``alias_map`` maps other notes' titles to their aliases, for verification."""
        title, aliases = note_identity(relpath, text, title, aliases)
        base = NoteLlmResult(status=PENDING, model=self.model)
        problem = self.preflight()
        if problem:
            base.message = f"{relpath}: not extracted by the model (pending): {problem}"
            return base
        base.digest = self.digest or ""
        plan = self.plan(title, text)
        stats = new_stats()
        try:
            answers = self.answer(plan, stats)
        except (ModelDown, NoteFailed) as exc:
            base.message = f"{relpath}: not extracted by the model (pending): {exc}"
            base.calls = stats["calls"]
            return base
        merged = merge_answers(plan, answers)
        entities, relations = verify_note(merged, plan.raw, title, aliases, alias_map, note_subject(relpath, text, title, aliases))
        base.status = OK
        base.entities, base.relations, base.raw = entities, relations, merged
        base.calls, base.chunks, base.prompt_tokens = stats["calls"], len(plan.chunks), stats["prompt_tokens"]
        base.output_tokens = stats["output_tokens"]
        base.cache_hit = stats["calls"] == 0 and bool(plan.chunks)
        base.keys = [self.key(p) for p in plan.prompts]
        base.warnings = list(stats["warnings"])
        if stats["eval_ns"]:
            base.eval_tokens_per_s = round(stats["eval_tokens"] / (stats["eval_ns"] / 1e9), 2)
        return base

    # one chunk ---------------------------------------------------------------------------------
    def _ask(self, title: str, chunk: Chunk, raw: dict[int, str], prompt: str, stats: dict[str, Any], deadline: float, depth: int) -> dict[str, Any]:
        """A chunk's cleaned answer (chunk-relative lines); re-asked in halves only when nothing
        valid came back."""
        try:
            return self._stream(prompt, chunk, stats, deadline)
        except _Empty as exc:
            if depth > 0 or len(chunk.lines) < MIN_SPLIT_LINES:
                raise NoteFailed(f"{exc}; the worker retries it later") from None
            stats["warnings"].append(f"{exc}: asked again about lines {chunk.lines[0][0]}-{chunk.lines[-1][0]} in two halves")
            left, right = split_chunk(chunk)
            answers = []
            for half in (left, right):
                half_prompt = build_prompt(title, half, link_targets(raw, half), raw)
                answers.append(self._ask(title, half, raw, half_prompt, stats, deadline, depth + 1))
            offset = len(left.lines)
            shifted = [{**r, "line": r["line"] + offset if isinstance(r.get("line"), int) else None} for r in answers[1]["relations"]]
            return {"relations": answers[0]["relations"] + shifted, "entities": dedupe_entities(answers[0]["entities"] + answers[1]["entities"])}

    def _stream(self, prompt: str, chunk: Chunk, stats: dict[str, Any], deadline: float) -> dict[str, Any]:
        """One call with bounded retries (5xx, an error line mid-stream, timeouts, broken connections)."""
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * (2 ** (attempt - 1)))
            if time.monotonic() > deadline:
                raise NoteFailed(f"over the time budget of {self.note_budget_s:g}s per note; raise [ollama] note_budget_s for slow models")
            stats["calls"] += 1
            try:
                return self._read(prompt, chunk, stats, deadline)
            except (ConnectionError, httpx.ConnectError):
                raise ModelDown(self.down_message()) from None
            except ollama.ResponseError as exc:
                if exc.status_code == 404:
                    raise ModelDown(self.missing_message()) from None
                if 400 <= exc.status_code < 500:
                    raise NoteFailed(f"Ollama rejected the request ({exc.status_code}: {exc.error}); upgrade Ollama or report a bug") from None
                last = f"Ollama failed ({exc.status_code}: {exc.error})"
            except httpx.TimeoutException:
                last = f"Ollama did not answer within {self.timeout:g}s"
            except httpx.TransportError as exc:
                last = f"connection to Ollama broke ({type(exc).__name__})"
            except (pydantic.ValidationError, BadLine) as exc:
                raise NoteFailed(f"Ollama sent a response that is not a chat response ({exc}); check OLLAMA_HOST") from None
        raise NoteFailed(f"{last} after {self.retries + 1} attempts; check `ollama ps`")

    def _count_tokens(self, final: Any, pieces: int, prompt: str, stats: dict[str, Any]) -> None:
        """Token counts from the answer's last line (a cut answer: one piece per token, the prompt estimated)."""
        stats["output_tokens"] += final.eval_count or pieces if final is not None else pieces
        if final is None:
            stats["prompt_tokens"] += estimate_tokens(SYSTEM_PROMPT + prompt)
            return
        prompt_tokens = final.prompt_eval_count or 0
        stats["prompt_tokens"] += prompt_tokens
        if final.eval_duration:
            stats["eval_tokens"] += final.eval_count or 0
            stats["eval_ns"] += final.eval_duration
        expected = estimate_tokens(SYSTEM_PROMPT + prompt)
        if prompt_tokens > expected * 1.25 and prompt_tokens >= self.num_ctx // 2 - 64:
            raise NoteFailed(f"the prompt did not fit num_ctx {self.num_ctx} ({prompt_tokens} tokens reported): the model read a truncated note")

    def _read(self, prompt: str, chunk: Chunk, stats: dict[str, Any], deadline: float) -> dict[str, Any]:
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            "format": EXTRACTION_SCHEMA,
            "options": self.options,
            "think": False,
            "stream": True,
            **({"keep_alive": self.keep_alive} if self.keep_alive is not None else {}),
        }
        lines = self.wire.stream("/api/chat", body, deadline, 64 * 1024 + self.options["num_predict"] * ANSWER_BYTES_PER_TOKEN)
        scanner = ItemScanner()
        seen: set[Any] = set()
        items: dict[str, list[dict[str, Any]]] = {"relations": [], "entities": []}
        invalid = 0
        stop = ""
        final = None
        pieces = 0
        try:
            for line in lines:
                part = ollama.ChatResponse.model_validate(line)
                if part.done:
                    final = part
                    break
                pieces += 1
                for key, raw_item in scanner.feed(part.message.content or "" if part.message else ""):
                    item = _valid_item(key, raw_item, len(chunk.lines))
                    if item is None:
                        invalid += 1
                        continue
                    ident = (key, _identity(key, item))
                    if ident in seen:
                        stop = "repeat"
                        break
                    seen.add(ident)
                    items[key].append(item)
                if stop:
                    break
                if time.monotonic() > deadline:
                    stop = "budget"
                    break
            if final is None and not stop and time.monotonic() >= deadline:
                stop = "budget"  # the stream ended at the deadline (a server too slow, or dripping)
        except AnswerTooLong as exc:
            stop = "bytes"
            stats["warnings"].append(f"{exc}: the answer was cut there")
        finally:
            lines.close()  # stops the generation: Ollama cancels a request whose client went away
        self._count_tokens(final, pieces, prompt, stats)
        cleaned = _clean(items, chunk)
        found = len(items["relations"]) + len(items["entities"])
        if stop == "repeat":
            stats["warnings"].append(f"model repeated an item (looping): kept the {found} items before it")
        elif stop == "bytes" and not found:
            raise NoteFailed("Ollama's answer did not end (it passed its size bound before any item); check the model and `ollama ps`")
        elif stop == "budget":
            if not found:
                raise NoteFailed(f"over the time budget of {self.note_budget_s:g}s per note; raise [ollama] note_budget_s for slow models")
            stats["warnings"].append(f"over the time budget of {self.note_budget_s:g}s per note: kept the {found} items read by then")
        elif final is not None and final.done_reason == "length":
            if not found:
                raise _Empty(f"answer cut at num_predict {self.options['num_predict']} before its first item (model looping)")
            stats["warnings"].append(f"answer cut at num_predict {self.options['num_predict']}: kept its {found} complete items")
        if found or stop:
            if invalid:
                stats["warnings"].append(f"{invalid} item(s) not matching the schema were dropped")
            return cleaned
        whole = scanner.whole()
        if whole is None:
            raise NoteFailed("model answered invalid JSON; check that the model supports structured output")
        if not (isinstance(whole, dict) and isinstance(whole.get("relations", []), list) and isinstance(whole.get("entities", []), list)) or invalid:
            raise NoteFailed("model answered JSON not matching the schema; check that the model supports structured output")
        return cleaned


def note_identity(relpath: str, text: str, title: str | None = None, aliases: list[str] | None = None) -> tuple[str, list[str]]:
    """The note's title and aliases as the deterministic pass reads them (unless given)."""
    if title is None or aliases is None:
        from .notes import extract_note as deterministic

        meta = deterministic(relpath, text.encode()).meta
        title = meta.get("title") or PurePosixPath(relpath).stem if title is None else title
        aliases = list(meta.get("aliases", [])) if aliases is None else aliases
    return title, aliases


def note_subject(relpath: str, text: str, title: str, aliases: list[str]) -> tuple[str | None, dict[str, Any]]:
    """(the note's own entity type as its tags say, its frontmatter properties): what
    verification reads besides the lines (see :mod:`extract.relation_types`, :mod:`extract.stated_relations`)."""
    from .notes import extract_note as deterministic
    from .relation_types import type_from_tags

    ext = deterministic(relpath, text.encode())
    node = next((n for n in ext.nodes.values() if n.get("kind") == "note"), {})
    return type_from_tags(node.get("tags", []), [title, *aliases]), dict(node.get("props") or {})


def verify_note(
    merged: dict[str, Any],
    raw: dict[int, str],
    title: str,
    aliases: list[str],
    alias_map: dict[str, list[str]] | None,
    subject: tuple[str | None, dict[str, Any]] = (None, {}),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Verified entities and relations of one note's merged answer, with the relations its
    structure states (also re-run on stored answers by ``bench/extraction_quality.py --rescore``).
    ``subject`` is :func:`note_subject`'s answer."""
    amap = {canonical_name(k): list(v) for k, v in (alias_map or {}).items()}
    amap.setdefault(canonical_name(title), []).extend(aliases)
    return verify_answer(merged, raw, amap, [title, *aliases], *subject)


def new_stats() -> dict[str, Any]:
    return {"calls": 0, "hits": 0, "prompt_tokens": 0, "output_tokens": 0, "eval_tokens": 0, "eval_ns": 0, "warnings": []}


def _valid_item(key: str, item: Any, lines: int) -> dict[str, Any] | None:
    """An answer item (``[line, source, relation, target]`` or ``[name, type]``) as a dict, or
    None; a line outside the chunk becomes None (the verifier finds the line)."""
    fields = {"relations": RELATION_FIELDS, "entities": ENTITY_FIELDS}.get(key)
    if fields is None or not isinstance(item, list) or len(item) != len(fields):
        return None
    try:
        if key == "relations":
            rel = _Relation.model_validate(dict(zip(fields, item)))
            return {"line": rel.line if rel.line is not None and 0 < rel.line <= lines else None, "source": rel.source, "relation": rel.relation, "target": rel.target}
        if key == "entities":
            ent = _Entity.model_validate(dict(zip(fields, item)))
            return {"name": ent.name, "type": ent.type}
    except pydantic.ValidationError:
        return None
    return None


def _identity(key: str, item: dict[str, Any]) -> Any:
    if key == "relations":
        return (canonical_name(item["source"]), item["relation"], canonical_name(item["target"]))
    return canonical_name(item["name"])


_SCHEMA_WORDS = frozenset(canonical_name(w) for w in (*ENTITY_TYPES, *RELATIONS))


def _not_a_name(name: str) -> bool:
    """Pronouns and schema words echoed back as names ("it", "organization", "tool")."""
    return is_pronoun(name) or canonical_name(name) in _SCHEMA_WORDS


def _clean(items: dict[str, list[dict[str, Any]]], chunk: Chunk) -> dict[str, Any]:
    """Drop pronoun and schema-word names and self-relations (chunk-relative lines kept)."""
    relations = [r for r in items["relations"] if not _not_a_name(r["source"]) and not _not_a_name(r["target"]) and canonical_name(r["source"]) != canonical_name(r["target"])]
    entities = [e for e in items["entities"] if not _not_a_name(e["name"])]
    return {"relations": relations, "entities": dedupe_entities(entities)}
