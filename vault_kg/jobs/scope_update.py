"""Update a scope and wake its jobs: the one library call after a write, and the line that reports it.

The verb behind `kg build`/`kg update` (which add progress bars, stderr notices and `--wait`),
the MCP tool `update`, the hooks, the watcher and the note writers. The engine does the work
(`engine.run`, the one update route); this module adds what every caller does after it: start the
jobs the run left work for (graph.html, the clustering, the model worker), say what happened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_kg.core.config import Config
from vault_kg.core.scopes import Scope

__all__ = ["format_run", "problems_of", "update_scope", "wake_jobs"]


def update_scope(
    scope: Scope,
    paths: list[Path] | None = None,
    force: bool = False,
    long_lived: bool = False,
    cfg: Config | None = None,
    defer_communities: bool = False,
    progress: Any = None,
    explicit: bool = False,
    wake_model: bool = True,
    draw_html: bool | None = None,
) -> Any:
    """Re-extract what changed in `scope` (or only `paths`), then wake the jobs the run left work for.

    The one call after a write, whoever wrote: the CLI, the MCP server, the hooks, the watcher,
    the reconcile, the note writers. A `long_lived` caller (the MCP server, the watcher) starts the
    model worker at once; a command's worker waits for the command to exit. `defer_communities`
    (the PostToolUse hook) keeps Leiden off the caller's path, and a one-note link patch's ranks
    and artifacts too, and draws graph.html in the background at any size: the jobs do them
    afterwards (`vault_kg.update.run_state.RunSettings`). `explicit` (`kg build`) wakes the model
    worker even when nothing changed. `draw_html`: whether this run draws graph.html (a person's
    build or update); by default neither the hook nor a `long_lived` caller (the MCP server, the
    watcher) does: the page is drawn when someone looks (`vault_kg.update.html_page`). Returns the
    engine's RunResult.
    """
    from vault_kg.update.engine import run
    from vault_kg.update.run_state import COMMUNITIES, WHOLE_GRAPH, RunSettings

    later = not draw_html if draw_html is not None else defer_communities or long_lived
    defer = (WHOLE_GRAPH if scope.kind == "vault" else COMMUNITIES) if defer_communities else ""
    settings = RunSettings(defer=defer, html_later=later)
    result = run(scope, paths=paths, force=force, progress=progress, settings=settings)
    result.model_worker = wake_jobs(scope, result, cfg, explicit=explicit, hook=not long_lived, wake_model=wake_model)
    return result


def wake_jobs(scope: Scope, result: Any, cfg: Config | None = None, explicit: bool = False, hook: bool = True, wake_model: bool = True) -> str | None:
    """Start what `result` left owed: graph.html's render, the clustering, the passage vectors, the
    model worker (its answer: "started", "running", ...; None when no note waits for the model)."""
    from vault_kg.core.config import load_config
    from vault_kg.jobs import clustering, embed
    from vault_kg.jobs.html_render import after_run as render_after
    from vault_kg.jobs.model_worker import after_update

    cfg = cfg or load_config()
    render_after(scope.out, result)
    clustering.after_run(scope, result)
    embed.after_run(scope, result, cfg)
    return after_update(scope, result, cfg, explicit=explicit, hook=hook) if wake_model else None


def format_run(r: Any, verb: str) -> str:
    """One line per run: `updated vault: 12 notes · 80 nodes · … · 0.05s` (`verb`: built or updated)."""
    unit = "notes" if r.kind == "vault" else "files"
    unresolved = "unresolved" if r.kind == "vault" else "unresolved refs"
    files = f"{r.sources - r.attachments} {unit}" + (f" · {r.attachments} attachments" if r.attachments else "")
    changed = f" · {len(r.extracted)} extracted · {len(r.removed)} removed" if verb == "updated" else ""
    wrote = "" if r.written or verb == "built" else " · nothing to rewrite"
    return (
        f"{verb} {r.scope}: {files} · {r.nodes} nodes · {r.edges} edges · {r.unresolved} {unresolved} · "
        f"{len(r.quarantined)} quarantined{f' · {len(r.skipped)} skipped' if r.skipped else ''}{changed}{wrote} · {r.seconds:.2f}s"
    )


def problems_of(r: Any, root: Path) -> list[str]:
    """What a run found wrong, one line each: notices, quarantined files, warnings, newly skipped files."""
    lines = [f"kg: {notice}" for notice in r.notices]
    lines += [f"kg: quarantined {root / rel}: {reason}" for rel, reason in r.quarantined if rel in r.extracted]
    lines += [f"kg: warning: {warning}" for warning in r.warnings]
    lines += [f"kg: skipped {root / skip.relpath}: {skip.reason}" for skip in r.new_skips]
    return lines
