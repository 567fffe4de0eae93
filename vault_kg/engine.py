"""The one build/update route: list → stat fast path → extract changes → resolve → assemble → write.

`kg build`, `kg update`, `kg update PATH`, the hooks and the MCP server all come through `run()`.
The graph is always the fold of the cached extractions of the files that exist now (plus what
resolution derives from them), so an incremental update and a from-scratch build cannot disagree
and nothing outlives its source. Work is proportional to the change: unchanged files are never
read (size + mtime), and only links a change can affect are resolved again.
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import os
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from graph_out.graph_json import encode_group

from . import __version__, model as m
from . import rank, store
from .adapter import Resolution, ScopeAdapter, SourceSkip
from .cache import Kept, KnownSources, ScopeCache
from .errors import KgError
from .groups import OwnerGroups, by_owner, signatures
from .safe_read import UnsafeFile, display_name, read_regular, valid_name
from .scopes import Scope

Progress = Callable[[str, int, int], None]

# Feature passes, imported lazily per scope kind. A module may define any of:
#   check_mode(scope, cache) -> bool
#                       before anything is read: True when an input outside the files changed in
#                       a way that needs every source extracted again (the model pass: turned on
#                       or off, another model, prompt or options)
#   annotate(ctx, rel, data, extraction) -> extraction
#                       for each file read, before it is cached (the model pass: cached answers
#                       found for the note, or the note marked pending; never a model call)
#   enrich(ctx)         after extraction, before resolution (the model pass: verification)
#   assemble(ctx)       after the nodes are folded, before edge groups are finalized: may add
#                       nodes to `ctx.nodes` and edges owned by files to `ctx.owned_edges`
#                       (kept with their owner's group, so it must give every owner's edges on
#                       every run), and name in `ctx.redo` owners whose edges changed although
#                       their file did not (the Ollama pass: entities, `mentions`, relations)
#   post_assembly(ctx)  after assembly, before ranking; edges it adds are redone on every run
#                       (anchors: staleness, `anchored_to` edges)
# A pass records in `ctx.deps` the files outside the scope it read (absolute path → [size,
# mtime_ns]); when one of them changes, the next update reassembles even if no source changed.
# Setting `ctx.retry` asks the next update to run again (e.g. notes pending a model call).
PASS_MODULES: dict[str, tuple[str, ...]] = {"vault": ("extract.llm_pass", "vault_kg.anchors"), "code": ()}


SWEPT = (("out", ("graph.json", "GRAPH_REPORT.md", "brief.json", ".gitignore")), ("cache", ("anchors.json",)))  # temp files a killed run leaves


@dataclass
class PassContext:
    scope: Scope
    layout: store.Layout
    cache: ScopeCache
    extractions: dict[str, m.Extraction]
    changed: list[str]
    removed: list[str]
    result: "RunResult"
    force: bool = False
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges_by_owner: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    owned_edges: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    redo: set[str] = field(default_factory=set)
    deps: dict[str, list[int]] = field(default_factory=dict)
    retry: bool = False
    state: dict[str, Any] = field(default_factory=dict)

    def replace_extraction(self, rel: str, extraction: m.Extraction) -> None:
        """For `enrich` passes: swap in an enriched extraction, persist it, and mark it changed."""
        from extract.redaction import redact_extraction

        extraction = redact_extraction(extraction)  # model output may repeat a secret from the note
        self.extractions[rel] = extraction
        self.cache.put_extraction(rel, extraction)
        if rel not in self.changed:
            self.changed.append(rel)


def passes(kind: str, hook: str) -> list[Callable[[PassContext], None]]:
    found = []
    for name in PASS_MODULES.get(kind, ()):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        fn = getattr(module, hook, None)
        if fn is not None:
            found.append(fn)
    return found


def deps_changed(recorded: dict[str, list[int]]) -> bool:
    for path, stat in recorded.items():
        try:
            st = os.stat(path)
        except OSError:
            return True
        if [st.st_size, st.st_mtime_ns] != stat:
            return True
    return False


def adapter_for(kind: str) -> ScopeAdapter:
    if kind == "vault":
        from extract.notes import VaultAdapter

        return VaultAdapter()
    if kind == "code":
        from extract.code import CodeAdapter

        return CodeAdapter()
    raise KgError(f"unknown scope kind '{kind}'")


@dataclass
class RunResult:
    scope: str
    kind: str
    sources: int = 0
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

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "kind": self.kind,
            "sources": self.sources,
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


def relpath_in(scope: Scope, path: Path) -> str | None:
    """Scope-relative POSIX path of `path`, or None when it lies outside the scope or in kg-out."""
    try:
        absolute = Path(os.path.abspath(path if path.is_absolute() else Path.cwd() / path))
        if absolute.is_symlink():
            absolute = absolute.parent.resolve() / absolute.name
        else:
            absolute = absolute.resolve()
        rel = absolute.relative_to(scope.root)
    except (ValueError, OSError):
        return None
    if rel.parts and (scope.root / rel.parts[0]).resolve() == scope.out:
        return None
    try:
        absolute.relative_to(scope.out)
        return None
    except ValueError:
        return rel.as_posix()


def run(scope: Scope, paths: list[Path] | None = None, force: bool = False, progress: Progress | None = None, refresh: bool = False) -> RunResult:
    """Bring the scope's artifacts up to date with its files.

    `refresh` re-reads the named `paths` even when they did not change (the model worker merges
    the notes it answered this way: their cached answers are looked up again)."""
    started = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()  # bulk unpickling and assembly create millions of objects; cyclic GC only slows it
    try:
        return _run(scope, paths, force, progress, started, refresh and paths is not None)
    finally:
        if collecting:
            gc.enable()


def _run(scope: Scope, paths: list[Path] | None, force: bool, progress: Progress | None, started: float, refresh: bool) -> RunResult:
    adapter = adapter_for(scope.kind)
    layout = store.Layout(scope.out)
    store.ensure_out(scope.out)
    result = RunResult(scope.name, scope.kind)
    with store.scope_lock(layout):
        for where, names in SWEPT:
            store.sweep_temp(getattr(layout, where), names)
        cache = ScopeCache(layout.cache_db)
        if cache.recreated:
            result.notices.append(f"{layout.cache_db}: cache unreadable or from another version; rebuilding from the files")
        try:
            cache.begin()
            _run_locked(scope, adapter, layout, cache, paths, force, progress, result, refresh)
            cache.commit()
        except BaseException:
            cache.rollback()
            raise
        finally:
            cache.close()
    result.seconds = time.perf_counter() - started
    return result


def _run_locked(
    scope: Scope, adapter: ScopeAdapter, layout: store.Layout, cache: ScopeCache,
    paths: list[Path] | None, force: bool, progress: Progress | None, result: RunResult, refresh: bool = False,
) -> None:
    stats = cache.stats()
    mode_changed = any([check(scope, cache) for check in passes(scope.kind, "check_mode")])
    rebuild_all = force or not stats or mode_changed
    if rebuild_all:
        paths = None  # an empty or recreated cache: the whole scope, whatever files were named
    full_listing = paths is None
    if paths is None:
        listed, result.skipped = adapter.list_sources(scope.root)
        known_skips = {tuple(item) for item in cache.get_meta("skipped", []) or []}
        result.new_skips = [s for s in result.skipped if (s.relpath, s.reason) not in known_skips or rebuild_all]
        cache.set_meta("skipped", [[s.relpath, s.reason] for s in result.skipped])
        candidates = listed
        removed = sorted(set(stats) - set(listed))
    else:
        result.skipped = [SourceSkip(a, b) for a, b in cache.get_meta("skipped", [])]
        candidates, removed = _explicit(scope, adapter, paths, stats, result)

    to_read: list[tuple[str, os.stat_result]] = []
    for rel in candidates:
        try:
            st = os.stat(scope.root / rel)
        except OSError:
            if rel in stats:
                removed.append(rel)
            continue
        known = stats.get(rel)
        if rebuild_all or refresh or known is None or known[0] != st.st_size or known[1] != st.st_mtime_ns:
            to_read.append((rel, st))
    removed = sorted(set(removed))
    artifacts_ok = _artifacts_current(layout, cache)
    outside_changed = deps_changed(cache.get_meta("deps", {}) or {}) or bool(cache.get_meta("retry", False))
    if not to_read and not removed and artifacts_ok and not rebuild_all and not outside_changed:
        _fill_counts(result, cache)
        return

    _assemble_and_write(scope, adapter, layout, cache, stats, to_read, removed, force, rebuild_all, artifacts_ok, outside_changed, full_listing, progress, result, refresh)


def _assemble_and_write(
    scope: Scope, adapter: ScopeAdapter, layout: store.Layout, cache: ScopeCache, stats: KnownSources,
    to_read: list[tuple[str, os.stat_result]], removed: list[str], force: bool, rebuild_all: bool, artifacts_ok: bool, outside_changed: bool,
    full_listing: bool, progress: Progress | None, result: RunResult, refresh: bool = False,
) -> None:
    extractions, per_source = cache.load_all()
    previous: dict[str, m.Extraction | None] = {}
    ctx = PassContext(scope, layout, cache, extractions, result.extracted, removed, result, force)
    annotators = passes(scope.kind, "annotate")
    total = len(to_read)
    for done, (rel, st) in enumerate(to_read, 1):
        if progress:
            progress(rel, done, total)
        try:
            data: bytes | None = read_regular(scope.root / rel, root=scope.root, trust_folders=True)
        except UnsafeFile as exc:  # swapped for a FIFO or an outside link since it was listed
            data = None
            reason = f"{exc.strerror}; make it a regular file inside the scope or remove it"
        except OSError as exc:
            data = None
            reason = f"unreadable ({exc.strerror}); check its permissions"
        if data is not None:
            digest = hashlib.sha256(data).hexdigest()
            known = stats.get(rel)
            if not rebuild_all and not refresh and known is not None and known[2] == digest and rel in extractions:
                cache.touch_source(rel, st.st_size, st.st_mtime_ns)
                continue
            extraction = adapter.extract(rel, data)
            for annotate in annotators:
                extraction = annotate(ctx, rel, data, extraction)
        else:
            extraction = m.Extraction(source=rel, hash="unreadable", quarantine=reason, nodes=_unreadable_node(scope, rel, reason))
        previous[rel] = extractions.get(rel)
        extractions[rel] = extraction
        cache.put_source(rel, st.st_size, st.st_mtime_ns, extraction.hash, extraction)
        result.extracted.append(rel)
    for rel in removed:
        previous[rel] = extractions.pop(rel, None)
        per_source.pop(rel, None)
    cache.delete_sources(removed)
    result.removed = removed
    result.sources = len(extractions)

    fresh = list(result.extracted)
    for enrich in passes(scope.kind, "enrich"):
        enrich(ctx)
    for rel in ctx.changed:
        if rel not in previous:
            previous[rel] = None

    if not previous and artifacts_ok and not rebuild_all and not outside_changed:
        _fill_counts(result, cache)
        return
    if not artifacts_ok and not rebuild_all:
        result.notices.append(f"{layout.graph_json}: missing, changed or corrupt; rewritten from the cache")
    if rebuild_all:
        previous = {rel: None for rel in extractions}
        per_source = {}
    resolution, recomputed = _resolve(adapter, extractions, previous, per_source, cache)
    nodes = assemble_nodes(extractions, resolution)
    derived = by_owner(resolution.derived)
    derived_sigs = signatures(derived)
    kept = None
    if not rebuild_all and recomputed is not None and getattr(adapter, "edges_owned_by_source", False):
        kept = cache.load_kept()
    ctx.nodes = nodes
    for contribute in passes(scope.kind, "assemble"):
        contribute(ctx)
    dirty = None if kept is None else _dirty_owners(kept, nodes, previous, recomputed, derived_sigs) | ctx.redo
    raw = raw_edges(extractions, resolution, derived, dirty)
    for owner, edges in ctx.owned_edges.items():
        if dirty is None or owner in dirty:
            raw.setdefault(owner, []).extend(edges)
    live = finalize_groups(raw, nodes, result)
    result.extra["rederived_owners"] = len(live) if dirty is not None else "all"
    live_encoded = {owner: encode_group(group) for owner, group in live.items() if group}
    cache.put_groups(live_encoded, clear=dirty is None, gone=[o for o, g in live.items() if not g])
    edges_by_owner = OwnerGroups(live, kept.groups if kept else {}, live_encoded)
    for owner in kept.touched if kept else ():
        if owner in edges_by_owner:
            edges_by_owner.group(owner)
    ctx.edges_by_owner = edges_by_owner
    for post in passes(scope.kind, "post_assembly"):
        post(ctx)
    cache.set_meta("deps", dict(sorted(ctx.deps.items())))
    cache.set_meta("retry", ctx.retry)
    cache.put_kept_state(derived_sigs, sorted(edges_by_owner.accessed))
    data = _rank_and_write(scope, layout, cache, nodes, edges_by_owner, kept, result)
    _update_docs(cache, adapter, extractions, fresh, removed, rebuild_all)
    for rel in sorted(extractions):
        ext = extractions[rel]
        if ext.quarantine:
            result.quarantined.append((rel, ext.quarantine))
        result.warnings.extend(w for w in ext.warnings if rel in result.extracted)
    if full_listing:
        (layout.out / "reconciled.stamp").touch()
    _record_artifacts(layout, cache, result.graph_digest)
    cache.set_meta("graph", data["graph"])
    result.nodes, result.edges = len(data["nodes"]), data["graph"]["counts"]["edges"]
    result.pending = data["graph"]["counts"].get("pending", 0)


def _resolve(
    adapter: ScopeAdapter, extractions: dict[str, m.Extraction], previous: dict[str, m.Extraction | None], per_source: dict[str, Any], cache: ScopeCache
) -> tuple[Resolution, set[str] | None]:
    """The resolution, and the sources whose own resolution was redone (None: all of them)."""
    incremental = getattr(adapter, "resolve_incremental", None)
    if incremental is None:
        return adapter.resolve(extractions), None
    resolution, recomputed = incremental(extractions, previous, per_source)
    cache.put_resolutions((rel, value) for rel, value in recomputed.items() if rel in extractions)
    return resolution, set(recomputed)


def _dirty_owners(kept: Kept, nodes: dict[str, dict[str, Any]], previous: dict[str, Any], recomputed: set[str], derived_sigs: dict[str, str]) -> set[str]:
    """Owners whose edge group must be derived again: their source or its resolution changed,
    the derived edges they own changed, or a kept edge of theirs points at a node that is gone."""
    dirty = set(previous) | recomputed
    dirty.update(o for o in derived_sigs.keys() | kept.derived.keys() if derived_sigs.get(o) != kept.derived.get(o))
    dirty.update(rank.owners_of_rows_to(kept.table, set(kept.table.ids) - nodes.keys()))
    return dirty


def _record_artifacts(layout: store.Layout, cache: ScopeCache, digest: int | None) -> None:
    st = layout.graph_json.stat()
    cache.set_meta("artifacts", {"graph_json": [st.st_size, st.st_mtime_ns], "changed": [st.st_ctime_ns, st.st_ino], "digest": digest, "report": layout.report.exists()})


def _artifacts_current(layout: store.Layout, cache: ScopeCache) -> bool:
    """True when graph.json is the one this cache last wrote: a stat match, no parse.

    Size and mtime can be put back by hand (`touch -d`), but not the inode change time: when that
    moved, the recorded content digest decides (and is recorded again when the content is the same).
    """
    recorded = cache.get_meta("artifacts")
    if not recorded or not layout.report.exists():
        return False
    try:
        st = layout.graph_json.stat()
    except OSError:
        return False
    if [st.st_size, st.st_mtime_ns] != recorded["graph_json"]:
        return False
    if recorded.get("changed") == [st.st_ctime_ns, st.st_ino]:
        return True
    try:
        same = recorded.get("digest") is not None and zlib.crc32(layout.graph_json.read_bytes()) == recorded["digest"]
    except OSError:
        return False
    if same:
        _record_artifacts(layout, cache, recorded["digest"])
    return same


def _fill_counts(result: RunResult, cache: ScopeCache) -> None:
    graph = cache.get_meta("graph", {}) or {}
    counts = graph.get("counts", {})
    result.sources = counts.get("sources", 0)
    result.nodes = counts.get("nodes", 0)
    result.edges = counts.get("edges", 0)
    result.unresolved = counts.get("unresolved", 0) + counts.get("unresolved_calls", 0)
    result.pending = counts.get("pending", 0)
    result.quarantined = [tuple(q) for q in graph.get("quarantined", [])]


def _unreadable_node(scope: Scope, rel: str, reason: str) -> dict[str, dict[str, Any]]:
    if scope.kind == "vault":
        return {m.note_id(rel): {"kind": m.NOTE, "label": Path(rel).stem, "source": rel, "status": m.QUARANTINED, "quarantine": reason, "summary": "", "tags": [], "aliases": []}}
    return {m.file_id(rel): {"kind": m.FILE, "label": rel, "source": rel, "status": m.QUARANTINED, "quarantine": reason}}


def _explicit(
    scope: Scope, adapter: ScopeAdapter, paths: list[Path], known: KnownSources, result: RunResult
) -> tuple[list[str], list[str]]:
    """`kg update PATH...`: only these files; a missing one that we knew is a deletion."""
    candidates: list[str] = []
    removed: list[str] = []
    eligible: set[str] | None = None
    for path in paths:
        rel = relpath_in(scope, path)
        if rel is None:
            result.notices.append(f"{display_name(str(path))}: not inside scope '{scope.name}' ({scope.root}); ignored")
            continue
        if not valid_name(rel):
            result.notices.append(f"{display_name(str(path))}: file name is not valid UTF-8; rename it (e.g. with `mv`) so kg can read it")
            continue
        absolute = scope.root / rel
        if absolute.is_dir():
            if eligible is None:
                eligible = set(adapter.list_sources(scope.root)[0])
            prefix = "" if rel == "." else rel.rstrip("/") + "/"
            candidates.extend(sorted(s for s in eligible if s.startswith(prefix)))
            removed.extend(s for s in known if s.startswith(prefix) and s not in eligible)
            continue
        if not os.path.lexists(absolute):
            if rel in known:
                removed.append(rel)
            continue
        is_source = getattr(adapter, "is_source", None)
        if is_source is not None:
            eligible_file = is_source(scope.root, rel)
        else:
            if eligible is None:
                eligible = set(adapter.list_sources(scope.root)[0])
            eligible_file = rel in eligible
        if not eligible_file:
            if rel in known:
                removed.append(rel)
            else:
                result.notices.append(f"{path}: not a source of scope '{scope.name}' (ignored, hidden or unsupported); nothing to do")
            continue
        candidates.append(rel)
    return sorted(set(candidates)), removed  # `kg update a.md a.md` or overlapping folders: each file once


def assemble_nodes(extractions: dict[str, m.Extraction], resolution: Resolution) -> dict[str, dict[str, Any]]:
    """Fold the nodes of every extraction (sorted by source) and of the resolution.

    A shared node (a tag, an entity) takes its attributes from its first source and lists all.
    """
    nodes: dict[str, dict[str, Any]] = {}
    for rel in sorted(extractions):
        for nid, attrs in extractions[rel].nodes.items():
            existing = nodes.get(nid)
            if existing is None:
                node = dict(attrs)
                if node.pop("shared", None):
                    node["sources"] = [rel]
                nodes[nid] = node
            elif "sources" in existing:
                existing["sources"].append(rel)
    for nid, attrs in resolution.nodes.items():
        if nid in nodes:
            nodes[nid].update(attrs)
        else:
            node = dict(attrs)
            node.pop("shared", None)
            nodes[nid] = node
    return nodes


def raw_edges(
    extractions: dict[str, m.Extraction], resolution: Resolution, derived: dict[str, list[dict[str, Any]]], owners: set[str] | None
) -> dict[str, list[dict[str, Any]]]:
    """Each owner's edges before finalizing: its extraction's, its resolution's, the derived ones.

    `owners` None means all of them; otherwise only those (and the adapter must keep every
    extraction's edges owned by that extraction's source, which makes the lookup direct).
    """
    raw: dict[str, list[dict[str, Any]]] = {}
    if owners is None:
        for rel in sorted(extractions):
            for e in extractions[rel].edges:
                raw.setdefault(e["owner"], []).append(e)
    else:
        raw = {o: list(extractions[o].edges) if o in extractions else [] for o in owners}
    for e in resolution.edges:
        owner = e["owner"]
        if owners is None:
            raw.setdefault(owner, []).append(e)
        elif owner in raw:
            raw[owner].append(e)
    for owner in sorted(resolution.owned) if owners is None else sorted(owners & resolution.owned.keys()):
        raw.setdefault(owner, []).extend(resolution.owned[owner])
    for owner, edges in derived.items():
        if owners is None or owner in raw:
            raw.setdefault(owner, []).extend(edges)
    return raw


def finalize_groups(raw: dict[str, list[dict[str, Any]]], nodes: dict[str, dict[str, Any]], result: RunResult | None = None) -> dict[str, list[dict[str, Any]]]:
    """`finalize_edges` for every owner in `raw` (an empty list for an owner left with none).

    Parallel duplicates from one owner (the same link twice) become one edge with `lines`. An
    edge's `key` is its relation, or `relation@owner` when a file other than the source node's
    own file asserts it, so keys are unique without looking at the rest of the graph.
    """
    dropped = 0
    grouped: dict[str, list[dict[str, Any]]] = {}
    for owner in sorted(raw):
        grouped[owner] = finalize_edges(owner, raw[owner], nodes)
        dropped += sum(1 for e in raw[owner] if e["source"] not in nodes or e["target"] not in nodes)
    if dropped and result is not None:
        result.warnings.append(f"{dropped} edge(s) pointed at nodes no source owns; dropped")
    return grouped


def finalize_edges(owner: str, edges: list[dict[str, Any]], nodes: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One owner's edges, sorted, duplicates folded into `lines`, each with its `key`.

    Edges whose ends no source owns are dropped (the caller counts them).
    """
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in edges:
        source_node = nodes.get(e["source"])
        if source_node is None or e["target"] not in nodes:
            continue
        key = (e["source"], e["target"], e["relation"])
        first = merged.get(key)
        if first is None:
            own = source_node.get("source") == owner and source_node.get("kind") != m.ENTITY  # an entity's first source depends on the vault
            e["key"] = e["relation"] if own else f"{e['relation']}@{owner}"
            merged[key] = e
        elif first is not e:
            lines = first.setdefault("lines", [first.get("line")])
            lines.extend(e.get("lines") or [e.get("line")])
    group = []
    for key in sorted(merged):
        edge = merged[key]
        if "lines" in edge:
            edge["lines"] = sorted({x for x in edge["lines"] if x is not None})
        group.append(edge)
    return group


def _rank_and_write(
    scope: Scope, layout: store.Layout, cache: ScopeCache, nodes: dict[str, dict[str, Any]],
    edges_by_owner: OwnerGroups, kept: Kept | None, result: RunResult,
) -> dict[str, Any]:
    """Rank, cluster, sync the query tables and write the artifacts.

    With `kept` (an update), the edge table is the kept one with the rows of the re-derived
    owners replaced, and only those owners' groups are encoded and synced; kept groups go into
    graph.json as the bytes they are.
    """
    owners = edges_by_owner.owners()
    fresh = edges_by_owner.live
    table = rank.patched(kept.table, nodes, owners, fresh) if kept is not None else None
    if table is None:
        table = rank.edge_table(nodes, {owner: edges_by_owner.group(owner) for owner in owners})
    cache.put_table(table)
    encoded = edges_by_owner.encoded()
    cache.sync_graph(nodes, fresh, encoded, None if kept is None else set(fresh) | set(kept.touched))
    ranks, assignment, communities = _ranking(cache, nodes, table, result)
    for nid, attrs in nodes.items():
        attrs["rank"] = ranks.get(nid, 0.0)
    for nid, attrs in nodes.items():
        if nid in assignment:
            attrs["community"] = assignment[nid]
    cache.sync_ranks(nodes)
    edges = edges_by_owner.all_edges() if _needs_edge_list(scope, nodes) else []
    return _write_artifacts(scope, layout, nodes, edges, table, encoded, ranks, communities, result)


def _ranking(cache: ScopeCache, nodes: dict[str, dict[str, Any]], table: rank.EdgeTable, result: RunResult) -> tuple[dict[str, float], dict[str, int], list[dict[str, Any]]]:
    """PageRank and Leiden, or the last run's answer when nothing they read has changed (see `ranking`)."""
    from .ranking import rank_graph

    return rank_graph(cache, nodes, table, result)


def _needs_edge_list(scope: Scope, nodes: dict[str, Any]) -> bool:
    """Whether the report (import cycles, code scopes) or an inline graph.html needs every edge."""
    return scope.kind == "code" or _html_mode(len(nodes)) == "inline"


def _html_mode(nodes: int) -> str:
    """How graph.html gets written: "off", "inline", or "background" for large graphs (KG_HTML)."""
    from .html_job import HTML_INLINE_NODES

    mode = os.environ.get("KG_HTML", "auto").lower()
    if mode in ("off", "0", "false", "no"):
        return "off"
    return "inline" if mode == "inline" or nodes <= HTML_INLINE_NODES else "background"


def _write_artifacts(
    scope: Scope, layout: store.Layout, nodes: dict[str, dict[str, Any]], edges: list[dict[str, Any]], table: rank.EdgeTable,
    encoded: dict[str, bytes], ranks: dict[str, float], communities: list[dict[str, Any]], result: RunResult,
) -> dict[str, Any]:
    """graph.json (edges spliced from `encoded`, the per-owner groups in owner order), report, brief, html."""
    from graph_out.graph_json import encode_node_link, node_link
    from graph_out.report import render_report

    gods = rank.god_nodes(nodes, ranks)
    kinds = Counter(str(a.get("kind")) for a in nodes.values())
    statuses = Counter(a.get("status") for a in nodes.values())
    counts = {
        "nodes": len(nodes),
        "edges": table.row_count(),
        "sources": result.sources,
        "unresolved": kinds.get(m.UNRESOLVED, 0),
        "unresolved_calls": sum(int(a["unresolved_calls"] or 0) for a in nodes.values() if "unresolved_calls" in a),
        "quarantined": statuses.get(m.QUARANTINED, 0),
        "stale": statuses.get(m.STALE, 0),
        "pending": statuses.get(m.PENDING, 0),
        "by_kind": dict(sorted(kinds.items())),
        "by_relation": table.relation_counts(),
    }
    result.unresolved = counts["unresolved"] + counts["unresolved_calls"]
    graph_attrs = {
        "scope": scope.name,
        "kind": scope.kind,
        "root": str(scope.root),
        "schema_version": m.SCHEMA_VERSION,
        "built_with": f"vault-kg {__version__}",
        "god_nodes": gods,
        "communities": communities,
        "counts": counts,
        "skipped": [{"source": s.relpath, "reason": s.reason} for s in result.skipped],
        "quarantined": sorted([a["source"], a.get("quarantine", "")] for a in nodes.values() if a.get("status") == m.QUARANTINED and a.get("source")),
    }
    graph_attrs.update(result.extra.pop("graph_attrs", {}))
    data = node_link(graph_attrs, nodes, edges)
    graph_bytes = encode_node_link(data, encoded.values())
    result.graph_digest = zlib.crc32(graph_bytes)
    for path, payload in ((layout.graph_json, graph_bytes), (layout.report, render_report(data).encode())):
        if store.write_if_changed(path, payload):
            result.written.append(str(path))
    brief = {
        "scope": scope.name,
        "root": str(scope.root),
        "god_nodes": [
            {"id": nid, "label": nodes[nid].get("label", nid), "summary": nodes[nid].get("summary") or nodes[nid].get("doc") or "", "source": nodes[nid].get("source", ""), "line": nodes[nid].get("line")}
            for nid in gods
        ],
        "counts": counts,
        "stale": graph_attrs.get("stale", []),
        "conventions": [
            {"id": nid, "label": a.get("label", nid), "summary": a.get("summary", ""), "source": a.get("source", ""), "tags": [t for t in a.get("tags", []) if t.startswith("convention/")]}
            for nid, a in sorted((nid, a) for nid, a in nodes.items() if a.get("kind") == m.NOTE and any(t.startswith("convention/") for t in a.get("tags") or ()))
            if a.get("status") not in (m.STALE, m.SUPERSEDED, m.QUARANTINED)
        ],
    }
    store.write_if_changed(layout.brief, store.dumps_json(brief))
    _write_html(layout, data, result)
    marker = layout.out / f"{scope.kind}.scope"
    if not marker.exists():
        marker.touch()
    return data


def _write_html(layout: store.Layout, data: dict[str, Any], result: RunResult) -> None:
    """graph.html inline for small graphs; large ones render in a detached process (see html_job)."""
    mode = _html_mode(len(data["nodes"]))
    if mode == "off":
        return
    if mode == "background":  # before importing the renderer: its layout code imports numpy
        from .html_job import render_later

        result.extra["html"] = "rendering in the background"
        render_later(layout.out)
        return
    try:
        from graph_out.html import render_html
    except ImportError:
        return
    from filelock import FileLock

    with FileLock(str(layout.out / ".html.lock"), timeout=600):
        store.sweep_temp(layout.out, ("graph.html",))
        if store.write_if_changed(layout.html, render_html(data).encode()):
            result.written.append(str(layout.html))


def _update_docs(cache: ScopeCache, adapter: ScopeAdapter, extractions: dict[str, m.Extraction], changed: list[str], removed: list[str], rebuild_all: bool) -> None:
    docs = []
    for rel in sorted(extractions if rebuild_all else changed):
        ext = extractions[rel]
        for nid, attrs in ext.nodes.items():
            if attrs.get("shared"):
                continue
            text = adapter.search_text(nid, attrs, ext)
            if text:
                docs.append((nid, rel, str(attrs.get("label", "")), " ".join(attrs.get("aliases", []) or []), attrs.get("summary") or attrs.get("doc") or "", text))
    cache.replace_docs(sorted(set(changed) | set(removed)), docs, clear=rebuild_all)
