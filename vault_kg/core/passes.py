"""What a feature pass is, and what it sees of a run: typed protocols, so passes need not import the engine.

A pass is a module that defines the five hooks of `Pass`; the engine lists the passes of each scope
kind by importing them (`vault_kg.update.engine.pass_modules`), and calls every hook of every pass at its
stage of the run. A hook a pass does not need is a one-line no-op. The run object the engine
hands to the hooks (`vault_kg.update.engine.Run`) satisfies `PassContext`.

    check_mode     before anything is read: True when an input outside the files changed in a way
                   that needs every source extracted again (the model pass: turned on or off,
                   another model, prompt or options)
    annotate       for each file read, before it is cached (the model pass: cached answers found
                   for the note, or the note marked pending; never a model call)
    enrich         after extraction, before resolution (the model pass: verification)
    assemble       after the nodes are folded, before edge groups are finalized: may add nodes to
                   `ctx.nodes` and edges owned by files to `ctx.owned_edges` (kept with their
                   owner's group, so it must give every owner's edges on every run), and name in
                   `ctx.redo` owners whose edges changed although their file did not
    post_assembly  after assembly, before ranking; edges it adds are redone on every run (anchors:
                   staleness, `anchored_to` edges)

A pass records in `ctx.deps` the files outside the scope it read (absolute path → [size, mtime_ns]);
when one of them changes, the next update reassembles even if no source changed. Setting
`ctx.retry` asks the next update to run again (e.g. notes pending a model call).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Protocol

from vault_kg.core.model import Extraction

__all__ = ["CacheView", "Edge", "Node", "Pass", "PassContext", "ResultView", "ScopeView"]

Node = dict[str, Any]
Edge = dict[str, Any]


class ScopeView(Protocol):
    """The scope being built (`vault_kg.core.scopes.Scope`)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def root(self) -> Path: ...
    @property
    def out(self) -> Path: ...


class CacheView(Protocol):
    """The scope's cache, as far as passes keep state in it (`vault_kg.storage.cache.ScopeCache`)."""

    def get_meta(self, key: str, default: Any = None) -> Any: ...
    def set_meta(self, key: str, value: Any) -> None: ...
    def get_blob(self, key: str) -> Any: ...
    def put_blob(self, key: str, value: Any) -> None: ...


class ResultView(Protocol):
    """What a pass may report (`vault_kg.update.engine.RunResult`)."""

    notices: list[str]
    warnings: list[str]
    extra: dict[str, Any]


class PassContext(Protocol):
    """The run, as a pass sees it."""

    retry: bool

    @property
    def scope(self) -> ScopeView: ...
    @property
    def cache(self) -> CacheView: ...
    @property
    def result(self) -> ResultView: ...
    @property
    def extractions(self) -> dict[str, Extraction]: ...
    @property
    def changed(self) -> list[str]: ...
    @property
    def nodes(self) -> dict[str, Node]: ...
    @property
    def owned_edges(self) -> dict[str, list[Edge]]: ...
    @property
    def edges_by_owner(self) -> MutableMapping[str, list[Edge]]: ...
    @property
    def redo(self) -> set[str]: ...
    @property
    def deps(self) -> dict[str, list[int]]: ...
    @property
    def state(self) -> dict[str, Any]: ...

    def replace_extraction(self, rel: str, extraction: Extraction, redacted: bool = False) -> None: ...


class Pass(Protocol):
    """A feature pass: a module defining these five hooks (see the module docstring for when each runs)."""

    def check_mode(self, scope: ScopeView, cache: CacheView) -> bool: ...
    def annotate(self, ctx: PassContext, rel: str, data: bytes, extraction: Extraction) -> Extraction: ...
    def enrich(self, ctx: PassContext) -> None: ...
    def assemble(self, ctx: PassContext) -> None: ...
    def post_assembly(self, ctx: PassContext) -> None: ...
