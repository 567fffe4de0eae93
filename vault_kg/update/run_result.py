"""What one build or update reports (`RunResult`), and the counts a run that did nothing reports.

Kept apart from the engine so the no-op probe (`vault_kg.cli.noop_update`) can answer with it
without importing the engine and what the engine imports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vault_kg.core.adapter import SourceSkip
    from vault_kg.update.noop_checks import MetaStore

__all__ = ["RunResult", "fill_counts"]


@dataclass
class RunResult:
    scope: str
    kind: str
    sources: int = 0
    attachments: int = 0  # of the sources, the vault's files that are not notes (images, PDFs, canvases)
    extracted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    nodes: int = 0
    edges: int = 0
    unresolved: int = 0
    quarantined: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[SourceSkip] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    pending: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    graph_digest: int | None = None  # CRC-32 of the graph.json this run wrote (kept in the cache)
    new_skips: list[SourceSkip] = field(default_factory=list)  # skipped for the first time (or a full rebuild)
    model_worker: str | None = None  # what waking the model worker answered after the run (`jobs.scope_update.wake_jobs`); not reported

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "kind": self.kind,
            "sources": self.sources,
            "attachments": self.attachments,
            "extracted": self.extracted,
            "removed": self.removed,
            "nodes": self.nodes,
            "edges": self.edges,
            "unresolved": self.unresolved,
            "pending": self.pending,
            "quarantined": [{"source": s, "reason": r} for s, r in self.quarantined],
            "warnings": self.warnings,
            "skipped": [{"source": s.relpath, "reason": s.reason} for s in self.skipped],
            "written": self.written,
            "notices": self.notices,
            "seconds": round(self.seconds, 3),
            **self.extra,
        }


def fill_counts(result: RunResult, cache: MetaStore) -> None:
    """The counts the last run recorded, for a run that found nothing to do."""
    graph = cache.get_meta("graph", {}) or {}
    counts = graph.get("counts", {})
    result.sources = counts.get("sources", 0)
    result.attachments = (counts.get("by_kind") or {}).get("attachment", 0)
    result.nodes = counts.get("nodes", 0)
    result.edges = counts.get("edges", 0)
    result.unresolved = counts.get("unresolved", 0) + counts.get("unresolved_calls", 0)
    result.pending = counts.get("pending", 0)
    result.quarantined = [tuple(q) for q in graph.get("quarantined", [])]
