"""`update`: bring a scope's graph up to date, and the one line that reports it.

The verb behind `kg build`/`kg update` (which add progress bars, stderr notices and `--wait`)
and the MCP tool `update`. The engine does the work (`engine.run`, the one update route); this
module adds what every caller does after it: wake the model worker, say what happened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_kg.core.config import Config
from vault_kg.core.scopes import Scope


def update_scope(
    scope: Scope, paths: list[Path] | None = None, force: bool = False, long_lived: bool = False,
    cfg: Config | None = None, defer_communities: bool = False,
) -> Any:
    """Re-extract what changed in `scope` (or only `paths`) and wake the model worker if notes are pending.

    A `long_lived` caller (the MCP server) starts the worker at once; a command's worker waits
    for the command to exit. `defer_communities` (the PostToolUse hook) keeps Leiden off the caller's
    path, and a one-note link patch's ranks and artifacts too: a detached job does them afterwards
    (`vault_kg.update.ranking_policy`, `vault_kg.update.deferred_work`, `vault_kg.jobs.clustering`); graph.html renders detached at
    any size (`RunSettings.html_later`). Returns the
    engine's RunResult.
    """
    from vault_kg.core.config import load_config
    from vault_kg.update.engine import run
    from vault_kg.jobs.html_render import after_run as render_after
    from vault_kg.jobs.model_worker import after_update

    if defer_communities:
        from vault_kg.jobs import clustering as cluster_job
        from vault_kg.update.run_state import WHOLE_GRAPH, RunSettings

        result = run(scope, paths=paths, force=force, settings=RunSettings(defer=WHOLE_GRAPH, html_later=True))
        render_after(scope.out, result)
        cluster_job.after_run(scope, result)
    else:
        result = run(scope, paths=paths, force=force)
        render_after(scope.out, result)
    after_update(scope, result, cfg or load_config(), hook=not long_lived)
    return result


def format_run(r: Any, verb: str) -> str:
    """One line per run: `updated vault: 12 notes · 80 nodes · … · 0.05s` (`verb`: built or updated)."""
    unit = "notes" if r.kind == "vault" else "files"
    unresolved = "unresolved" if r.kind == "vault" else "unresolved refs"
    changed = f" · {len(r.extracted)} extracted · {len(r.removed)} removed" if verb == "updated" else ""
    wrote = "" if r.written or verb == "built" else " · nothing to rewrite"
    return (
        f"{verb} {r.scope}: {r.sources} {unit} · {r.nodes} nodes · {r.edges} edges · {r.unresolved} {unresolved} · "
        f"{len(r.quarantined)} quarantined{f' · {len(r.skipped)} skipped' if r.skipped else ''}{changed}{wrote} · {r.seconds:.2f}s"
    )


def problems_of(r: Any, root: Path) -> list[str]:
    """What a run found wrong, one line each: notices, quarantined files, warnings, newly skipped files."""
    lines = [f"kg: {notice}" for notice in r.notices]
    lines += [f"kg: quarantined {root / rel}: {reason}" for rel, reason in r.quarantined if rel in r.extracted]
    lines += [f"kg: warning: {warning}" for warning in r.warnings]
    lines += [f"kg: skipped {root / skip.relpath}: {skip.reason}" for skip in r.new_skips]
    return lines
