"""`kg check`, and the same question after one edit: which anchored notes are dirty now.

`check` recomputes every anchor against the files as they are now (reading only what changed since
the last check); `dirty_notes_for_paths` tells the PostToolUse hook which notes the code files it
just saw edited made dirty (once each).
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from vault_kg.anchors.dates import parse_date, today
from vault_kg.anchors.spans import Lookup, SymbolCache, split_locator
from vault_kg.anchors.evaluate import cache_path, evaluate, load_records, owned_stale, owners_from_nodes
from vault_kg.anchors.history import with_written
from vault_kg.core import model as m
from vault_kg.core.config import Config, load_config
from vault_kg.core.errors import KgError
from vault_kg.core.scopes import Scope, vault_scope

__all__ = ["check", "dirty_notes_for_paths", "format_check"]


def _owners_from_graph(vault: Scope) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Entities and sections of the last vault build (read-only; empty when there is none)."""
    from vault_kg.storage.cache import nodes_of_kinds
    from vault_kg.storage.layout import Layout

    nodes = nodes_of_kinds(Layout(vault.out).cache_db, (m.ENTITY, m.SECTION))
    return owners_from_nodes(nodes), {nid: str(a.get("label", nid)) for nid, a in nodes.items()}


def check(
    vault: Scope | None = None,
    projects: list[str] | None = None,
    strict: bool = False,
    as_of: dt.date | str | None = None,
    cfg: Config | None = None,
) -> dict[str, Any]:
    """Recompute every anchor against the files as they are now; report dirty notes and issues.

    Reads only the notes that changed since the last check and the anchored files that changed
    (each at most once). `projects` limits code anchors to those projects; `as_of` checks the
    notes that were current on that date (their anchors still against the files as they are now).
    """
    cfg = cfg or load_config()
    vault = vault or vault_scope(cfg=cfg)
    day = parse_date(as_of) if isinstance(as_of, str) else as_of
    if projects:
        unknown = [p for p in projects if p not in cfg.projects]
        if unknown:
            raise KgError(f"unknown scope '{unknown[0]}' (registered projects: {', '.join(sorted(cfg.projects)) or 'none'}); add it with `kg project add PATH --name {unknown[0]}`")
    cache = SymbolCache(cache_path(vault))
    records, note_reads = load_records(vault, cache)
    ev = evaluate(with_written(records, vault.root), cfg.projects, cache.lookup, as_of=day, now=today(cfg), only_projects=set(projects) if projects else None)
    owners, labels = _owners_from_graph(vault)
    dirty: list[dict[str, Any]] = []
    for rel in sorted(ev.dirty):
        d = ev.dirty[rel]
        dirty.append({"id": m.note_id(rel), "label": records[rel].get("title", rel), "source": rel, "reason": d.reason, "project": d.project})
    for nid, reason in owned_stale(ev.dirty, owners).items():
        if nid.startswith("entity:"):
            dirty.append({"id": nid, "label": labels.get(nid, nid), "source": owners[nid][0], "reason": reason, "project": ev.dirty[owners[nid][0]].project})
    cache.save()
    counts = {"notes": ev.notes, "anchors": ev.anchors, "dirty": len(dirty), "issues": len(ev.issues)}
    failed = strict and bool(dirty or ev.issues)
    return {
        "scope": vault.name,
        "as_of": day.isoformat() if day else None,
        "strict": strict,
        "ok": not failed,
        "dirty": dirty,
        "issues": ev.issues,
        "counts": counts,
        "summary": f"{counts['notes']} notes · {counts['anchors']} anchors · {counts['dirty']} dirty · {counts['issues']} issues",
        "read": {"notes": note_reads, "files": cache.reads},
    }


def format_check(report: dict[str, Any]) -> str:
    lines = [f"dirty ({len(report['dirty'])}):"]
    lines += [f"  {d['source'] if d['id'].startswith('note:') else d['id']}: {d['reason']}" for d in report["dirty"]]
    lines.append(f"issues ({len(report['issues'])}):")
    lines += [f"  {i['message']}" for i in report["issues"]]
    as_of = f" (as of {report['as_of']})" if report.get("as_of") else ""
    lines.append(report["summary"] + as_of)
    return "\n".join(lines)


def dirty_notes_for_paths(vault: Scope, project_name: str, relpaths: list[str], cfg: Config | None = None) -> list[str]:
    """One short line per anchored note that these code files (of `project_name`) just made dirty.

    "Just" means: dirty against the files now, and not dirty against what the last check, build
    or hook saw of these files. Call it after the edit; calling it twice reports a note once.
    """
    cfg = cfg or load_config()
    root = cfg.projects.get(project_name)
    if root is None:
        return []
    root = root.resolve()
    wanted = {os.path.join(str(root), rel.removeprefix("./")) for rel in relpaths}
    cache = SymbolCache(cache_path(vault))
    records, _ = load_records(vault, cache)
    touching = {
        rel
        for rel, rec in records.items()
        if isinstance(rec.get("anchors"), list)
        and any(isinstance(a, dict) and a.get("project") == project_name and os.path.join(str(root), split_locator(str(a.get("locator", "")))[0]) in wanted for a in rec["anchors"])
    }
    if not touching:
        cache.save()
        return []

    def before(absolute: str, relpath: str) -> Lookup | None:
        if absolute in wanted:
            seen = cache.cached(absolute)
            return None if seen is None else Lookup(False, seen)
        return cache.lookup(absolute, relpath)

    now = today(cfg)
    old = evaluate(records, cfg.projects, before, now=now)
    new = evaluate(records, cfg.projects, cache.lookup, now=now)
    cache.save()
    lines = []
    for rel in sorted(set(new.dirty) - set(old.dirty)):
        lines.append(f"kg: note {rel} is now stale ({new.dirty[rel].reason}); review it, then `kg accept` or `kg reanchor` it")
    return lines
