"""One run's state: what it was asked (`RunRequest`, read by every stage and written by none), how
the caller wants it run (`RunSettings`), and what the stages find and write (`Run`).

The settings replace what used to be set around a run from outside: the PostToolUse hook leaves
clustering and a link patch's whole-graph work to the background job and graph.html to a detached
render; that job's first update leaves the artifacts to the update after its clustering.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from vault_kg.core import model as m
from vault_kg.storage.layout import Layout
from vault_kg.core.adapter import Resolution, ScopeAdapter
from vault_kg.core.passes import Pass
from vault_kg.core.scopes import Scope
from vault_kg.storage.cache import Kept, KnownSources, ScopeCache
from vault_kg.update.centrality import EdgeTable
from vault_kg.update.edge_groups import OwnerGroups
from vault_kg.update.run_result import RunResult

__all__ = ["COMMUNITIES", "WHOLE_GRAPH", "Progress", "Run", "RunRequest", "RunSettings"]

Progress = Callable[[str, int, int], None]
COMMUNITIES, WHOLE_GRAPH = "communities", "whole graph"


@dataclass(frozen=True)
class RunSettings:
    """How the caller wants the route run; the default is a plain build or update.

    `defer`: "" (rank and cluster inline), `COMMUNITIES` (the hooks and their background job:
    Leiden left to `vault_kg.jobs.clustering`, see `vault_kg.update.ranking_policy`) or
    `WHOLE_GRAPH` (the PostToolUse hook on a vault note: a one-note link patch leaves its ranks and
    artifacts to that job too, `vault_kg.update.deferred_work`). `html_later`: graph.html is left
    to the detached render whatever the graph's size. `clustering_next`: the job's first update,
    which leaves the artifacts to the update after its clustering, so they are written once."""

    defer: str = ""
    html_later: bool = False
    clustering_next: bool = False

    @property
    def defers_whole_graph(self) -> bool:
        return self.defer == WHOLE_GRAPH


@dataclass(frozen=True)
class RunRequest:
    """What one run was asked, and what it works on: read by every stage, written by none."""

    scope: Scope
    adapter: ScopeAdapter
    layout: Layout
    cache: ScopeCache
    paths: list[Path] | None = None
    force: bool = False
    refresh: bool = False
    progress: Progress | None = None
    passes: tuple[Pass, ...] = ()
    settings: RunSettings = RunSettings()


@dataclass
class Run:
    """What the stages of one build or update found so far, and what they write: each stage reads
    `request` (what was asked, never changed) and the fields the stages before it filled.

    The stages (`vault_kg.update.engine.STAGES`) take it in turn; a stage that finds nothing left
    to do sets `done`. It is also what the passes see (`vault_kg.core.passes.PassContext`)."""

    request: RunRequest
    result: RunResult
    done: bool = False
    # scan: what changed since the last run
    stats: KnownSources = field(default_factory=dict)
    rebuild_all: bool = False
    full_listing: bool = False
    to_read: list[tuple[str, os.stat_result]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    artifacts_ok: bool = False
    outside_changed: bool = False
    # extract: every source's extraction, and the ones this run replaced (rel → the old one)
    extractions: dict[str, m.Extraction] = field(default_factory=dict)
    per_source: dict[str, Any] = field(default_factory=dict)
    previous: dict[str, m.Extraction | None] = field(default_factory=dict)
    fresh: list[str] = field(default_factory=list)
    # resolve and assemble
    resolution: Resolution = field(default_factory=Resolution)
    recomputed: set[str] | None = None
    derived: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    derived_sigs: dict[str, str] = field(default_factory=dict)
    kept: Kept | None = None
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    changed_nodes: set[str] | None = None  # the nodes that may differ from the last run's (None: any)
    owned_edges: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    redo: set[str] = field(default_factory=set)
    edges_by_owner: OwnerGroups = field(default_factory=lambda: OwnerGroups({}, {}))
    deps: dict[str, list[int]] = field(default_factory=dict)
    retry: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    # rank and write
    table: EdgeTable | None = None
    encoded: dict[str, bytes] = field(default_factory=dict)
    ranks: dict[str, float] = field(default_factory=dict)
    communities: list[dict[str, Any]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def scope(self) -> Scope:
        return self.request.scope

    @property
    def cache(self) -> ScopeCache:
        return self.request.cache

    @property
    def adapter(self) -> ScopeAdapter:
        return self.request.adapter

    @property
    def layout(self) -> Layout:
        return self.request.layout

    @property
    def passes(self) -> tuple[Pass, ...]:
        return self.request.passes

    @property
    def changed(self) -> list[str]:
        """Sources extracted (or enriched) by this run."""
        return self.result.extracted

    def replace_extraction(self, rel: str, extraction: m.Extraction, redacted: bool = False) -> None:
        """For `enrich` passes: swap in an enriched extraction, persist it, and mark it changed.
        ``redacted``: everything it holds was read from redacted text (no model output), so the
        secret scan is not run a second time."""
        if not redacted:
            from extract.redaction import redact_extraction

            extraction = redact_extraction(extraction)  # model output may repeat a secret from the note
        self.extractions[rel] = extraction
        self.cache.put_extraction(rel, extraction)
        if rel not in self.changed:
            self.changed.append(rel)

    def nothing_changed(self) -> bool:
        return self.artifacts_ok and not self.rebuild_all and not self.outside_changed
