"""The one build/update route: a flat list of stages over one `Run` (`STAGES`, at the end of this file;
the stages are `vault_kg.update.stages`, the run's state `vault_kg.update.run_state`).

scan (stat fast path) → finish what a hook deferred (`owed`) → patch one note (a prose edit ends here) → extract changes → enrich → resolve →
assemble → post_assembly (anchors) → rank → write artifacts → record. `kg build`, `kg update`, `kg update PATH`, the hooks and the MCP
server all come through `run()`.
The graph is always the fold of the cached extractions of the files that exist now (plus what
resolution derives from them), so an incremental update and a from-scratch build cannot disagree
and nothing outlives its source. Work is proportional to the change: unchanged files are never
read (size + mtime), and only links a change can affect are resolved again.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path

from vault_kg.core import store

from vault_kg.storage.layout import Layout, claim_out, ensure_out
from vault_kg.core.adapter import ScopeAdapter
from vault_kg.core.errors import KgError
from vault_kg.core.scopes import Scope
from vault_kg.storage.cache import ScopeCache
from vault_kg.update.deferred_work import finish_owed
from vault_kg.update.noop_checks import SWEPT, pass_modules
from vault_kg.update.prose_patch import patch_prose_edit
from vault_kg.update.run_result import RunResult
from vault_kg.update.run_state import Progress, Run, RunRequest, RunSettings
from vault_kg.update.stages import (
    Stage,
    assemble,
    enrich,
    extract,
    post_assembly,
    rank_nodes,
    record,
    resolve,
    scan,
    write_artifacts,
)

__all__ = ["STAGES", "RunSettings", "adapter_for", "run"]


def adapter_for(kind: str) -> ScopeAdapter:
    if kind == "vault":
        from extract.notes import VaultAdapter

        return VaultAdapter()
    if kind == "code":
        from extract.code import CodeAdapter

        return CodeAdapter()
    raise KgError(f"unknown scope kind '{kind}'")


def run(
    scope: Scope,
    paths: list[Path] | None = None,
    force: bool = False,
    progress: Progress | None = None,
    refresh: bool = False,
    settings: RunSettings = RunSettings(),
) -> RunResult:
    """Bring the scope's artifacts up to date with its files.

    `refresh` re-reads the named `paths` even when they did not change (the model worker merges
    the notes it answered this way: their cached answers are looked up again). `settings`: how the
    caller wants it run (`RunSettings`: what the hooks and the background job leave for later)."""
    started = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()  # bulk unpickling and assembly create millions of objects; cyclic GC only slows it
    try:
        result = _locked_run(scope, paths, force, progress, refresh and paths is not None, settings)
    finally:
        if collecting:
            gc.enable()
    result.seconds = time.perf_counter() - started
    return result


def _locked_run(scope: Scope, paths: list[Path] | None, force: bool, progress: Progress | None, refresh: bool, settings: RunSettings) -> RunResult:
    """Take the scope's lock and its cache transaction, and run every stage inside them."""
    adapter = adapter_for(scope.kind)
    layout = Layout(scope.out)
    ensure_out(scope.out)
    claim_out(scope.out, scope.kind, scope.name)
    result = RunResult(scope.name, scope.kind)
    with store.scope_lock(layout):
        for where, names in SWEPT:
            store.sweep_temp(getattr(layout, where), names)
        cache = ScopeCache(layout.cache_db)
        if cache.recreated:
            result.notices.append(f"{layout.cache_db}: cache unreadable or from another version; rebuilding from the files")
        try:
            cache.begin()
            request = RunRequest(scope, adapter, layout, cache, paths, force, refresh, progress, pass_modules(scope.kind), settings)
            state = Run(request, result)
            for stage in STAGES:
                stage(state)
                if state.done:
                    break
            cache.commit()
        except BaseException:
            cache.rollback()
            raise
        finally:
            cache.close()
    return result


# The one route, in order. A stage that finds nothing left to do sets `run.done`, and the rest is skipped.
STAGES: tuple[Stage, ...] = (
    scan,
    finish_owed,
    patch_prose_edit,
    extract,
    enrich,
    resolve,
    assemble,
    post_assembly,
    rank_nodes,
    write_artifacts,
    record,
)
