"""The model pass inside the engine: cached answers become entities and relations; no model call.

Model calls happen in the background worker (`vault_kg.jobs.model_worker`), never here: a build, an
update or a hook only looks answers up. For each note read, `annotate` plans its chunks (what the
model would see) and looks their answers up in the cache; a note with an answer for every chunk
is "answered", any other is marked `status: pending` (and the worker picks it up). Nothing here
touches the network: the model's digest comes from the last preflight the worker recorded; before
the first one, every note is simply pending.

`enrich` verifies answered notes against their own lines (see `extract.verify`) and turns them
into entity nodes and edges owned by the note. Verification and the entity-to-note mapping read
other notes' titles and aliases, so each answered note records the canonical names it depends on;
when the vault's title/alias tables change for one of those names, the note is verified again from
its stored answer (no model call). That keeps an incremental graph equal to a from-scratch build
over the same cache. `check_mode` asks for a full rebuild when the pass is turned on or off or the
model, prompt or options change (answers are keyed on them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_kg.core import model as m
from vault_kg.core.passes import CacheView, PassContext, ScopeView

MODE_META = "llm_mode"
STATED = "stated"  # the model pass is off; the note's structure states relations (see `_stated_only`)
STATED_VERSION = 1  # part of the pass's mode: a change re-reads every note
COUNTS_META = "llm_counts"
NAMES_BLOB = "llm_names"
NAMES_META = "llm_names_fingerprint"
DUPLICATES_BLOB = "llm_duplicates"
MODEL_VIA = ("llm", "stated")  # the `via` of the edges this pass adds (see `entities.llm_graph`)


@dataclass
class Settings:
    """What the pass needs to compute cache keys, from the config and the last preflight."""

    enabled: bool
    model: str
    digest: str | None
    num_ctx: int
    cache_dir: Path

    @property
    def options(self) -> dict[str, Any]:
        from .llm_schema import request_options

        return request_options(self.num_ctx)

    def mode(self) -> dict[str, Any]:
        from .verifier_version import VERIFIER_VERSION

        if not self.enabled:
            return {"enabled": False, "stated": STATED_VERSION, "verifier": VERIFIER_VERSION}
        from .llm_schema import PROMPT_SHA, PROMPT_VERSION, SCHEMA_VERSION

        return {
            "enabled": True,
            "model": self.model,
            "digest": self.digest,
            "options": self.options,
            "prompt": [PROMPT_VERSION, SCHEMA_VERSION, PROMPT_SHA],
            "verifier": VERIFIER_VERSION,
            "stated": STATED_VERSION,
        }


def settings(scope: ScopeView, cfg: Any = None) -> Settings:
    from vault_kg.core.config import load_config

    from .llm_cache import LlmCache, cache_dir_for

    cfg = cfg or load_config()
    cache_dir = cache_dir_for(scope.out)
    if not cfg.ollama_enabled:
        return Settings(False, cfg.ollama_model, None, cfg.ollama_num_ctx, cache_dir)
    info = LlmCache(cache_dir).model_info(cfg.ollama_model)
    limit = info.get("context_length")
    num_ctx = min(cfg.ollama_num_ctx, limit) if isinstance(limit, int) and limit > 0 else cfg.ollama_num_ctx
    return Settings(True, cfg.ollama_model, info.get("digest"), num_ctx, cache_dir)


def _settings(ctx: PassContext) -> Settings:
    if "llm" not in ctx.state:
        ctx.state["llm"] = settings(ctx.scope)
    return ctx.state["llm"]


def check_mode(scope: ScopeView, cache: CacheView) -> bool:
    """True when every note must be looked at again: the pass was turned on or off, or the model,
    prompt or options changed. A new digest needs it only once some note holds an answer from the
    model (before that, no note depends on it: a note with nothing to ask has no keys)."""
    if scope.kind != "vault":
        return False
    mode = settings(scope).mode()
    stored = cache.get_meta(MODE_META)
    if stored == mode:
        return False
    cache.set_meta(MODE_META, mode)
    if stored is None:
        return True

    def without_digest(d: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in d.items() if k != "digest"}

    counts = cache.get_meta(COUNTS_META) or {}
    return not (without_digest(stored) == without_digest(mode) and not counts.get("keyed", counts.get("answered", 0)))


def decode(data: bytes) -> str:
    """A note's text the way the deterministic pass reads it."""
    return data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def annotate(ctx: PassContext, rel: str, data: bytes, ext: m.Extraction) -> m.Extraction:
    """Look the note's chunk answers up in the cache: "answered" (verified in `enrich`) or pending.
    With no answer (the pass off, or the note pending), the relations the note's structure states
    are still kept for `enrich` (see `extract.stated_relations`): they need no model."""
    s = _settings(ctx)
    prose = ext.meta.pop("prose", None)  # read in the extraction, kept only where verification needs it
    if ext.quarantine or not m.is_note_path(rel):  # an attachment has no prose to ask about
        return ext
    if not s.enabled:
        return _stated_only(rel, data, ext, STATED, prose)
    from .prose import asks_the_model

    text = decode(data)
    if s.digest is None and asks_the_model(text):  # a note with nothing to ask needs no
        return _stated_only(rel, data, _pending(rel, ext), m.PENDING, prose)  # model: pending, an update would keep it so
    from .llm_cache import LlmCache
    from .llm_prompt import chunk_key, merge_answers, plan_note

    plan = plan_note(ext.meta.get("title") or Path(rel).stem, text, s.num_ctx)
    keys = [chunk_key(prompt, s.model, s.digest, s.options) for prompt in plan.prompts]
    cache = ctx.state.setdefault("llm_cache", LlmCache(s.cache_dir))
    answers = [cache.get(key) for key in keys]
    if any(a is None for a in answers):
        return _stated_only(rel, data, _pending(rel, ext), m.PENDING, prose)
    ext.meta["llm"] = {"status": "answered", "keys": keys}
    ext.meta["llm_src"] = {"raw": plan.raw, "answer": merge_answers(plan, answers)}
    return ext


def _stated_only(rel: str, data: bytes, ext: m.Extraction, status: str, prose: dict[int, str] | None = None) -> m.Extraction:
    """The note with what verification needs to add the entities its form names and the relations
    its structure states, when it has any (``meta["llm"]["stated"]``, see
    :mod:`extract.stated_entities` and :mod:`extract.stated_relations`); the model's answer is
    empty until it arrives."""
    from .stated_gate import may_state

    node = ext.nodes.get(m.note_id(rel)) or {}
    props = node.get("props")
    from .prose import raw_prose_lines

    if not ext.meta.get("named", True) and not may_state(ext.meta.get("headings") or [], props, data):
        return ext  # a note that names nothing and states nothing: no line read here
    if prose is None:  # an extraction cached before it read them
        from .stated_entities import redacted_lines

        prose = redacted_lines(raw_prose_lines(decode(data)))
    raw = prose  # kept for verification: redacted, never a secret
    if not _named(rel, ext, raw, props):
        if not may_state(ext.meta.get("headings") or [], props, data):
            return ext
        from .relation_types import type_from_tags
        from .stated_relations import stated_relations

        title = ext.meta.get("title") or Path(rel).stem
        if not stated_relations(raw, title, props, type_from_tags(node.get("tags", []), [title, *node.get("aliases", [])])):
            return ext
    ext.meta["llm"] = {"status": status, "stated": True}
    ext.meta["llm_src"] = {"raw": raw, "answer": {"entities": [], "relations": []}}
    return ext


def _pending(rel: str, ext: m.Extraction) -> m.Extraction:
    ext.meta["llm"] = {"status": m.PENDING}
    note = ext.nodes.get(m.note_id(rel))
    if note is not None and note.get("status") == m.LIVE:
        note["status"] = m.PENDING
    return ext


def name_tables(exts: dict[str, m.Extraction]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(canonical note title -> the aliases of the notes with that title, canonical title or alias
    -> note id): what verification and the entity-to-note mapping read outside a note.

    The alias table is ordered by title, not by path: verification reads an alias several titles
    share as one of them by that order, so a moved note must not change which."""
    from .entities import build_title_index, canonical_name

    aliases: dict[str, set[str]] = {}
    titles: dict[str, list[str]] = {}
    for rel in sorted(exts):
        ext = exts[rel]
        if ext.quarantine or not m.is_note_path(rel):
            continue
        title = ext.hot("title", "") or ""
        own = list(ext.hot("aliases", []) or [])
        titles[m.note_id(rel)] = [title, *own]
        if own:
            aliases.setdefault(canonical_name(title), set()).update(own)
    return {k: sorted(aliases[k]) for k in sorted(aliases)}, build_title_index(titles)


def _changed(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    return {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}


def _changed_aliases(old: dict[str, list[str]], new: dict[str, list[str]]) -> set[str]:
    """The names whose meaning an alias change touches: the title and every alias it had or has,
    since verification maps each alias back to its title (a new note claiming an existing alias
    changes how that alias reads in every note that names it)."""
    from .entities import canonical_name

    names: set[str] = set()
    for title in _changed(old, new):
        names.add(title)
        names.update(canonical_name(a) for a in (*old.get(title, ()), *new.get(title, ())))
    return names


def enrich(ctx: PassContext) -> None:
    """Verify newly answered notes (and the relations notes state, answered or not), and verify
    again the notes whose names changed meaning."""
    if ctx.scope.kind != "vault":
        return
    enabled = _settings(ctx).enabled
    exts = ctx.extractions
    verifiable: list[str] = []
    answered = pending = keyed = 0
    for rel, ext in exts.items():
        llm = ext.hot("llm") or {}
        status = llm.get("status")
        if status in ("answered", "ok"):
            answered += 1
            keyed += bool(llm.get("keys"))  # answers that depend on the model's digest
            verifiable.append(rel)
        elif llm.get("stated"):
            verifiable.append(rel)
        if status == m.PENDING:
            pending += 1
    if enabled:
        ctx.cache.set_meta(COUNTS_META, {"answered": answered, "pending": pending, "keyed": keyed})
    if not verifiable:
        if ctx.cache.get_blob(NAMES_BLOB) is not None:
            ctx.cache.put_blob(NAMES_BLOB, None)
            ctx.cache.set_meta(NAMES_META, None)
        return
    fingerprint = _names_fingerprint(exts)
    if ctx.cache.get_meta(NAMES_META) == fingerprint and all("names" in exts[rel].hot("llm") for rel in verifiable):
        return  # no title, alias or note changed and nothing new to verify: the stored tables hold
    alias_map, title_index = name_tables(exts)
    old = ctx.cache.get_blob(NAMES_BLOB)
    changed = None if old is None else _changed_aliases(old[0], alias_map) | _changed(old[1], title_index)
    for rel in sorted(verifiable):
        llm = exts[rel].hot("llm")
        if llm["status"] == "answered" or "names" not in llm or changed is None or changed.intersection(llm["names"]):
            new = verified(rel, exts[rel], alias_map, title_index)
            ctx.replace_extraction(rel, new, redacted=bool(new.meta["llm"].get("named_only")))
    ctx.cache.put_blob(NAMES_BLOB, (alias_map, title_index))
    ctx.cache.set_meta(NAMES_META, fingerprint)


def _names_fingerprint(exts: dict[str, m.Extraction]) -> str:
    """What `name_tables` reads (each note's path, title, aliases, quarantine), hashed: far cheaper
    than the tables, so an update that changed none of it skips them."""
    import hashlib  # here, not at the top: a no-op update asks this module only `check_mode`

    import orjson

    rows = [[rel, bool(ext.quarantine), ext.hot("title", ""), ext.hot("aliases", [])] for rel, ext in sorted(exts.items())]
    return hashlib.blake2b(orjson.dumps(rows), digest_size=16).hexdigest()


def _names_read(entities: list[dict[str, Any]], relations: list[dict[str, Any]]) -> set[str]:
    """Every name verification looked up, kept or not: a relation dropped as a duplicate of
    another pair can come back when an alias changes which title a name reads as, so the names
    of what was dropped must trigger re-verification too."""
    from .entities import canonical_name

    return {canonical_name(e["name"]) for e in entities} | {canonical_name(r[end]) for r in relations for end in ("source", "target")}


def _named(rel: str, ext: m.Extraction, raw: dict[int, str], props: dict[str, Any] | None, answered: bool = False) -> list[dict[str, Any]]:
    """The entities the note's form names (see `extract.stated_entities.reads_names` for when):
    read by the extraction (`extract.notes`, in the workers of a full build), or here under a
    model's answer or for an extraction cached before it read them."""
    named = ext.meta.get("named")
    if named is None or (answered and not named):
        from .stated_entities import reads_names, stated_entities

        named = stated_entities(raw, props) if reads_names(rel, answered) else []
    return list(named)


def _may_state(ext: m.Extraction, props: dict[str, Any] | None, raw: dict[int, str]) -> bool:
    """Whether the note's structure could state a relation (`extract.stated_gate`), read from what
    the extraction holds."""
    from .stated_gate import may_state

    return may_state(ext.meta.get("headings") or [], props, "\n".join(raw.values()).encode())


def _named_only(named: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A note with no answer and no stated relation: its entities are those its form names
    (`extract.stated_entities`), each read from its own line, so there is nothing to verify."""
    return [{**e, "stated": True, "confidence": m.EXTRACTED, "score": 1.0} for e in named]


def verified(rel: str, ext: m.Extraction, alias_map: dict[str, list[str]], title_index: dict[str, str]) -> m.Extraction:
    """The note's extraction with its verified entities and relations (nodes and edges it owns):
    the model's answer when there is one, and always what the note's structure states."""
    from .entities import canonical_name, llm_graph
    from .relation_types import type_from_tags

    src = ext.meta["llm_src"]
    llm = ext.hot("llm")
    answered = llm["status"] in ("answered", "ok")
    title = ext.hot("title", "") or ""
    own = list(ext.hot("aliases", []) or [])
    nid = m.note_id(rel)
    own_node = ext.nodes.get(nid) or {}
    subject_type = type_from_tags(own_node.get("tags", []), [title, *own])
    props = own_node.get("props")
    named = _named(rel, ext, src["raw"], props, answered)
    if not answered and not _may_state(ext, props, src["raw"]):
        entities, relations, stated = _named_only(named), [], []  # no model, no relation: no verifier
    else:
        from .llm_prompt import verify_answer
        from .stated_relations import stated_relations

        entities, relations = verify_answer(src["answer"], src["raw"], alias_map, [title, *own], subject_type, props, named)
        stated = stated_relations(src["raw"], title, props, subject_type)
    result = {"status": "ok", "entities": entities, "relations": relations}
    graph_nodes, graph_edges = llm_graph(rel, nid, result, title_index)
    names = {canonical_name(n) for n in (title, *own)} | _names_read([*src["answer"]["entities"], *entities], [*src["answer"]["relations"], *relations, *stated])
    nodes = {k: v for k, v in ext.nodes.items() if v.get("kind") != m.ENTITY}
    note = nodes.get(nid)
    if answered and note is not None and note.get("status") == m.PENDING:
        nodes[nid] = {**note, "status": m.LIVE}
    for entity_id, attrs in graph_nodes.items():
        nodes[entity_id] = {**attrs, "shared": True, "status": m.LIVE}
    meta = dict(ext.meta)
    meta["llm"] = {"status": "ok", "keys": llm["keys"]} if answered else {"status": llm["status"], "stated": True}
    if not answered and not relations and not stated:
        meta["llm"]["named_only"] = True  # read from redacted lines alone (see `_stated_only`)
    meta["llm"]["names"] = sorted(names)
    meta["llm_result"] = result
    return m.Extraction(
        source=ext.source,
        hash=ext.hash,
        nodes=nodes,
        edges=[e for e in ext.edges if e.get("via") not in MODEL_VIA] + graph_edges,
        refs=ext.refs,
        text=ext.text,
        quarantine=ext.quarantine,
        warnings=list(ext.warnings),
        meta=meta,
    )


def assemble(ctx: PassContext) -> None:
    """Likely duplicate entity names the model gave, listed for a human (never merged); recomputed
    only when the set of those names changed. Names a note's form marks (`via: stated`) are the
    note's own spelling, and thousands of them: comparing them all on every edit would cost the
    hook seconds."""
    if ctx.scope.kind != "vault":
        return
    labels = sorted({str(a.get("label", "")) for a in ctx.nodes.values() if a.get("kind") == m.ENTITY and a.get("via") != "stated"})
    if not labels:
        return
    import hashlib

    import orjson

    digest = hashlib.blake2b(orjson.dumps(labels), digest_size=12).hexdigest()
    last = ctx.cache.get_blob(DUPLICATES_BLOB)
    if last is not None and last[0] == digest:
        duplicates = last[1]
    else:
        from .entities import likely_duplicates

        duplicates = [list(d) for d in likely_duplicates(labels)]
        ctx.cache.put_blob(DUPLICATES_BLOB, (digest, duplicates))
    if duplicates:
        ctx.result.extra.setdefault("graph_attrs", {})["likely_duplicates"] = duplicates


def post_assembly(ctx: PassContext) -> None:
    """Nothing to do after assembly: the model pass's edges are owned by their notes."""
