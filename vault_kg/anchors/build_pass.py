"""The anchors pass of a vault build: statuses, `anchored_to` and `supersedes` edges, the `stale` list.

A `vault_kg.core.passes.Pass`: it only acts after assembly (anchors are evaluated on every
assembly, against the files as they are now), and records the anchored files and the config as
dependencies, so a code change makes the next update reassemble. Importing it is cheap (the
evaluation and its tree-sitter spans load when a build reaches `post_assembly`), so a fast path
may call `check_mode` through `vault_kg.update.engine.pass_modules` without paying for them.
"""

from __future__ import annotations

import os
from typing import Any

from vault_kg.anchors.dates import today
from vault_kg.core import model as m
from vault_kg.core.config import config_path, load_config
from vault_kg.core.errors import KgError
from vault_kg.core.passes import CacheView, PassContext, ScopeView

__all__ = ["DAY_META", "annotate", "assemble", "check_mode", "enrich", "post_assembly"]

DAY_META = "anchors_day"  # the day the anchors were last evaluated on (None: not evaluated)


def _stat_dep(path: str) -> tuple[str, list[int]]:
    """The stat to remember for `path`; for a missing file, its nearest existing folder (whose
    mtime changes when the file comes back), so a missing anchor target does not force a
    reassembly on every update."""
    probe = path
    while True:
        try:
            st = os.stat(probe)
            return probe, [st.st_size, st.st_mtime_ns]
        except OSError:
            parent = os.path.dirname(probe)
            if parent == probe:
                return probe, [0, 0]
            probe = parent


def check_mode(scope: ScopeView, cache: CacheView) -> bool:
    """Anchors never need every source extracted again: they are evaluated on every assembly."""
    return False


def annotate(ctx: PassContext, rel: str, data: bytes, extraction: m.Extraction) -> m.Extraction:
    return extraction


def enrich(ctx: PassContext) -> None:
    """Nothing before resolution: anchors read the assembled nodes."""


def assemble(ctx: PassContext) -> None:
    """Nothing before the edge groups: anchor edges are redone after assembly, on every run."""


def post_assembly(ctx: PassContext) -> None:
    """Vault builds: mark stale and superseded notes (and what they own), add `anchored_to` and
    `supersedes` edges, remember the anchored files so a code change triggers a reassembly."""
    from vault_kg.anchors.spans import SymbolCache
    from vault_kg.anchors.evaluate import cache_path, evaluate, owned_stale, owners_from_nodes, record_from_frontmatter
    from vault_kg.anchors.history import history_path, with_written

    if ctx.scope.kind != "vault":
        return
    try:
        cfg = load_config()
    except KgError as exc:
        ctx.result.notices.append(f"anchors not checked: {exc}")
        ctx.cache.set_meta(DAY_META, None)
        return
    nodes: dict[str, dict[str, Any]] = ctx.nodes
    records: dict[str, dict[str, Any]] = {}
    for rel, ext in ctx.extractions.items():
        node = nodes.get(m.note_id(rel))
        if node is None or node.get("kind") != m.NOTE:
            continue
        if ext.quarantine:
            records[rel] = {"title": node.get("label", rel), "error": ext.quarantine}
        else:
            records[rel] = record_from_frontmatter(rel, node.get("props") or {}, node.get("label"), node.get("aliases"))
    cache = SymbolCache(cache_path(ctx.scope))
    day = today(cfg)
    ev = evaluate(with_written(records, ctx.scope.root), cfg.projects, cache.lookup, now=day)
    ctx.cache.set_meta(DAY_META, day.isoformat())  # a one-note patch skips this pass only on the same day
    cache.save()
    for rel, why in ev.superseded.items():
        node = nodes[m.note_id(rel)]
        if node.get("status") != m.QUARANTINED:
            node["status"] = m.SUPERSEDED
            node["superseded_reason"] = why
    stale: list[dict[str, Any]] = []
    for rel in sorted(ev.dirty):
        node = nodes[m.note_id(rel)]
        node["status"] = m.STALE
        node["stale_reason"] = ev.dirty[rel].reason
        stale.append({"id": m.note_id(rel), "label": node.get("label", rel), "source": rel, "reason": ev.dirty[rel].reason, "project": ev.dirty[rel].project})
    for nid, reason in owned_stale(ev.dirty, owners_from_nodes(nodes)).items():
        node = nodes[nid]
        if node.get("status") != m.QUARANTINED:
            node["status"] = m.STALE
            node["stale_reason"] = reason
    for rel, keys in ev.anchored.items():
        nodes[m.note_id(rel)]["anchored"] = keys
    for source, target, relation, owner in ev.edges:
        sid, tid = m.note_id(source), m.note_id(target)
        if sid not in nodes or tid not in nodes:
            continue
        key = relation if nodes[sid].get("source") == owner else f"{relation}@{owner}"
        ctx.edges_by_owner.setdefault(owner, []).append(m.edge(sid, tid, relation, owner, key=key))
    for absolute in ev.files:
        probe, stat = _stat_dep(absolute)
        ctx.deps[probe] = stat
    probe, stat = _stat_dep(str(config_path()))
    ctx.deps[probe] = stat
    kept = history_path(ctx.scope.root)
    if kept.is_file():  # a repair's history entry, or one pulled from elsewhere (never the vault folder: every write moves its mtime)
        probe, stat = _stat_dep(str(kept))
        ctx.deps[probe] = stat
    changed = set(ctx.changed)
    ctx.result.warnings.extend(i["message"] for i in ev.issues if i["source"] in changed and not records[i["source"]].get("error"))
    graph_attrs = ctx.result.extra.setdefault("graph_attrs", {})
    graph_attrs["stale"] = stale
    graph_attrs["anchor_issues"] = ev.issues
