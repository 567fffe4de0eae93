"""The contract between the engine and a kind of scope (a vault, a code repository).

The engine is one route for build and update: list sources → stat fast path → extract what
changed → resolve → assemble → rank → write. A scope kind plugs in by implementing this protocol;
nothing else in the engine knows what a note or a function is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vault_kg.core.model import Extraction

__all__ = ["Resolution", "ScopeAdapter", "SourceSkip"]


@dataclass
class Resolution:
    """Nodes and edges derived from all extractions together (link targets, call targets).

    Every edge still names the file that owns it (``owner``): the file whose reference produced it.
    Derived nodes (``unresolved:``, ``external:``) exist only while some reference needs them.
    """

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: list[dict[str, Any]] = field(default_factory=list)
    owned: dict[str, Sequence[dict[str, Any]]] = field(default_factory=dict)
    """Edges filed by owner, for resolvers that keep them per source (read lazily, per owner)."""
    derived: list[dict[str, Any]] = field(default_factory=list)
    """Edges that no single source's references produce (a section under its note, a nested
    tag's parent): the engine compares them per owner between runs to find the owners to redo."""
    lookup: Any = None
    """What names were looked up in, when the resolver can hand it to the next one-note patch
    (the vault's note index: `extract.notes.NoteIndex.lookup_tables`); None otherwise."""

    def every_edge(self) -> list[dict[str, Any]]:
        """All the edges, wherever they are filed."""
        return [*self.edges, *(e for owner in sorted(self.owned) for e in self.owned[owner]), *self.derived]


@dataclass(frozen=True)
class SourceSkip:
    """A file the scanner saw and did not extract, with the reason (reported, never silent)."""

    relpath: str
    reason: str


class ScopeAdapter(Protocol):
    kind: str

    def list_sources(self, root: Path) -> tuple[list[str], list[SourceSkip]]:
        """Scope-relative POSIX paths of the files to extract, sorted; plus skipped files."""

    def extract(self, relpath: str, data: bytes) -> Extraction:
        """Extract one file. Must never raise: bad input becomes ``Extraction.quarantine``."""

    def resolve(self, extractions: dict[str, Extraction]) -> Resolution:
        """Resolve every open reference of every extraction against the whole scope."""

    def search_text(self, node_id: str, attrs: dict[str, Any], extraction: Extraction) -> str:
        """The text BM25 indexes for a node owned by ``extraction`` ("" to leave it out)."""
