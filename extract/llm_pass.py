"""The Ollama pass as an engine pass: entities and relations on top of the deterministic graph.

`enrich` runs after extraction: it asks the model about every new or changed note and every note
still pending, and stores the validated, verified answer in `Extraction.meta["llm"]` (so the
deterministic extraction and the model's answer are cached together, and a `--force` rebuild hits
the LLM cache: zero model calls for unchanged notes). `assemble` turns those answers into
entity nodes and edges. That needs the whole vault (an entity named like a note title or alias
*is* that note), so it runs on every assembly, over stored answers only: no model calls.

Ollama down, model missing, a timeout, unusable output: one line that says what to run, the
deterministic graph still lands, the note is marked `pending`, and the next update retries it.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import orjson

from vault_kg import model as m

NOTICE_LIMIT = 5


def enrich(ctx: Any) -> None:
    from vault_kg.config import load_config

    if ctx.scope.kind != "vault":
        return
    cfg = load_config()
    if not cfg.ollama_enabled:
        return
    exts = ctx.extractions
    fresh = [rel for rel in ctx.changed if not exts[rel].quarantine]
    pending = [rel for rel, ext in sorted(exts.items()) if (ext.hot("llm") or {}).get("status") == "pending" and rel not in fresh]
    targets = fresh + pending
    if not targets:
        return
    from .llm import OllamaExtractor
    from .llm_cache import default_cache_dir

    extractor = OllamaExtractor(cfg.ollama_host, cfg.ollama_model, cache_dir=default_cache_dir(ctx.scope.root) if ctx.scope.out == ctx.scope.root / "kg-out" else ctx.scope.out / "cache" / "llm")
    problem = extractor.preflight()
    if problem:
        ctx.result.notices.append(f"{problem} — {len(targets)} note(s) marked pending; the deterministic graph is complete")
    names = sorted({name for ext in exts.values() for name in [ext.hot("title", "")] + list(ext.hot("aliases", [])) if name})
    aliases = {ext.hot("title", ""): list(ext.hot("aliases", [])) for ext in exts.values() if ext.hot("aliases")}
    progress = _Progress(len(targets))
    messages = []
    for rel in targets:
        ext = exts[rel]
        try:
            text = (ctx.scope.root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        result = extractor.extract_note(rel, text, ext.hash, names, aliases=aliases)
        ext.meta["llm"] = result.to_dict()
        if result.status != "ok":
            ctx.retry = True
            if result.message and not problem:
                messages.append(result.message)
        ctx.replace_extraction(rel, ext)
        progress.step(result)
    progress.close()
    for message in messages[:NOTICE_LIMIT]:
        ctx.result.notices.append(message)
    if len(messages) > NOTICE_LIMIT:
        ctx.result.notices.append(f"… and {len(messages) - NOTICE_LIMIT} more notes pending; `kg stats` counts them")
    ctx.result.extra["llm"] = progress.summary()
    if extractor.cache is not None and not ctx.retry:
        live = [str((e.hot("llm") or {}).get("cache_key")) for e in exts.values() if (e.hot("llm") or {}).get("cache_key")]
        extractor.cache.collect(live)


class _Progress:
    """Notes done, cache hits and the model's speed, on stderr when it is a terminal."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.hits = 0
        self.calls = 0
        self.pending = 0
        self.speeds: list[float] = []
        self.bar = None
        if total >= 3 and sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.bar = Progress(TextColumn("model"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("", total=total)

    def step(self, result: Any) -> None:
        self.done += 1
        self.hits += int(result.cache_hit)
        self.calls += result.calls
        self.pending += int(result.status != "ok")
        if result.eval_tokens_per_s:
            self.speeds.append(result.eval_tokens_per_s)
        if self.bar is not None:
            speed = f"{self.speeds[-1]:.1f} tok/s" if self.speeds else "-"
            self.bar.update(self.task, completed=self.done, description=f"{self.hits} cached · {speed}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()

    def summary(self) -> dict[str, Any]:
        speed = round(sum(self.speeds) / len(self.speeds), 2) if self.speeds else None
        return {"notes": self.done, "cache_hits": self.hits, "model_calls": self.calls, "pending": self.pending, "tokens_per_s": speed}


def assemble(ctx: Any) -> None:
    """Entity nodes, and each answered note's entity edges (owned by the note, kept with its
    group); pending notes flagged. An entity named like a note title or alias is that note, so
    when any title or alias changed, every answered note's edges are redone (`ctx.redo`)."""
    if ctx.scope.kind != "vault":
        return
    exts = ctx.extractions
    answered = [rel for rel in sorted(exts) if exts[rel].hot("llm")]
    if not answered:
        return
    from .entities import build_title_index, likely_duplicates, llm_graph
    titles = {m.note_id(rel): [ext.hot("title", "")] + list(ext.hot("aliases", [])) for rel, ext in exts.items() if not ext.quarantine}
    fingerprint = hashlib.blake2b(orjson.dumps(titles, option=orjson.OPT_SORT_KEYS), digest_size=12).hexdigest()
    if ctx.cache.get_meta("llm_titles") != fingerprint:
        ctx.redo.update(answered)
        ctx.cache.set_meta("llm_titles", fingerprint)
    title_index = build_title_index(titles)
    added: dict[str, dict[str, Any]] = {}
    for rel in answered:
        llm = exts[rel].hot("llm")
        note = ctx.nodes.get(m.note_id(rel))
        if llm.get("status") != "ok":
            if note is not None and note.get("status") == m.LIVE:
                note["status"] = m.PENDING
            continue
        nodes, edges = llm_graph(rel, m.note_id(rel), llm, title_index)
        for nid, attrs in nodes.items():
            if nid in ctx.nodes and nid not in added:
                continue
            if nid in added:
                added[nid].setdefault("sources", []).append(rel)
            else:
                node = dict(attrs)
                node.setdefault("source", rel)
                node["sources"] = [rel]
                node.setdefault("status", m.LIVE)
                added[nid] = node
        if edges:
            ctx.owned_edges.setdefault(rel, []).extend(edges)
    ctx.nodes.update(added)
    entity_names = sorted({a.get("label", "") for a in added.values()})
    duplicates = likely_duplicates(entity_names)
    if duplicates:
        ctx.result.extra.setdefault("graph_attrs", {})["likely_duplicates"] = [list(d) for d in duplicates]
