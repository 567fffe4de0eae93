"""The one build/update route: a flat list of stages over one `Run` (`STAGES`, at the end of this file).

scan (stat fast path) → finish what a hook deferred (`owed`) → patch one note (a prose edit ends here) → extract changes → enrich → resolve →
assemble → post_assembly (anchors) → rank → write artifacts → record. `kg build`, `kg update`, `kg update PATH`, the hooks and the MCP
server all come through `run()`.
The graph is always the fold of the cached extractions of the files that exist now (plus what
resolution derives from them), so an incremental update and a from-scratch build cannot disagree
and nothing outlives its source. Work is proportional to the change: unchanged files are never
read (size + mtime), and only links a change can affect are resolved again.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from graph_out import formats
from graph_out.graph_json import encode_group

from vault_kg import __version__
from vault_kg.core import model as m
from vault_kg.update import centrality as rank
from vault_kg.core import store
from vault_kg.core.adapter import Resolution, ScopeAdapter, SourceSkip
from vault_kg.storage.cache import Kept, KnownSources, ScopeCache
from vault_kg.core.errors import KgError
from vault_kg.core.passes import Pass
from vault_kg.update.edge_groups import OwnerGroups, by_owner, signatures
from vault_kg.core.safe_read import display_name, valid_name
from vault_kg.update.extract_pool import Read, extracted, read_source, worker_count
from vault_kg.update.import_ahead import import_ahead
from vault_kg.update.run_result import RunResult, fill_counts as _fill_counts
from vault_kg.core.scopes import Scope
from vault_kg.update.deferred_work import OWED, finish_owed, owed_owners
from vault_kg.update.noop_checks import SWEPT, artifacts_current as _artifacts_current, deps_changed, pass_modules, record_artifacts as _record_artifacts

Progress = Callable[[str, int, int], None]

def adapter_for(kind: str) -> ScopeAdapter:
    if kind == "vault":
        from extract.notes import VaultAdapter

        return VaultAdapter()
    if kind == "code":
        from extract.code import CodeAdapter

        return CodeAdapter()
    raise KgError(f"unknown scope kind '{kind}'")


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


@dataclass
class Run:
    """One build or update of one scope: what it was asked, and what each stage found so far.

    The stages (`STAGES`) take it in turn; a stage that finds nothing left to do sets `done`. It is
    also what the passes see (`vault_kg.core.passes.PassContext`)."""

    scope: Scope
    adapter: ScopeAdapter
    layout: store.Layout
    cache: ScopeCache
    result: RunResult
    paths: list[Path] | None = None
    force: bool = False
    refresh: bool = False
    progress: Progress | None = None
    passes: tuple[Pass, ...] = ()
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
    table: rank.EdgeTable | None = None
    encoded: dict[str, bytes] = field(default_factory=dict)
    ranks: dict[str, float] = field(default_factory=dict)
    communities: list[dict[str, Any]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def changed(self) -> list[str]:
        """Sources extracted (or enriched) by this run."""
        return self.result.extracted

    def replace_extraction(self, rel: str, extraction: m.Extraction) -> None:
        """For `enrich` passes: swap in an enriched extraction, persist it, and mark it changed."""
        from extract.redaction import redact_extraction

        extraction = redact_extraction(extraction)  # model output may repeat a secret from the note
        self.extractions[rel] = extraction
        self.cache.put_extraction(rel, extraction)
        if rel not in self.changed:
            self.changed.append(rel)

    def nothing_changed(self) -> bool:
        return self.artifacts_ok and not self.rebuild_all and not self.outside_changed


def run(scope: Scope, paths: list[Path] | None = None, force: bool = False, progress: Progress | None = None, refresh: bool = False) -> RunResult:
    """Bring the scope's artifacts up to date with its files.

    `refresh` re-reads the named `paths` even when they did not change (the model worker merges
    the notes it answered this way: their cached answers are looked up again)."""
    started = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()  # bulk unpickling and assembly create millions of objects; cyclic GC only slows it
    try:
        result = _locked_run(scope, paths, force, progress, refresh and paths is not None)
    finally:
        if collecting:
            gc.enable()
    result.seconds = time.perf_counter() - started
    return result


def _locked_run(scope: Scope, paths: list[Path] | None, force: bool, progress: Progress | None, refresh: bool) -> RunResult:
    """Take the scope's lock and its cache transaction, and run every stage inside them."""
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
            state = Run(scope, adapter, layout, cache, result, paths, force, refresh, progress, pass_modules(scope.kind))
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


def scan(run: Run) -> None:
    """Which sources to read (size or mtime changed, or all of them) and which are gone."""
    scope, cache, result = run.scope, run.cache, run.result
    run.stats = stats = cache.stats()
    mode_changed = any([p.check_mode(scope, cache) for p in run.passes])
    run.rebuild_all = run.force or not stats or mode_changed
    paths = None if run.rebuild_all else run.paths  # an empty or recreated cache: the whole scope, whatever files were named
    run.full_listing = paths is None
    if paths is None:
        listed, result.skipped = run.adapter.list_sources(scope.root)
        known_skips = {tuple(item) for item in cache.get_meta("skipped", []) or []}
        result.new_skips = [s for s in result.skipped if (s.relpath, s.reason) not in known_skips or run.rebuild_all]
        cache.set_meta("skipped", [[s.relpath, s.reason] for s in result.skipped])
        candidates = listed
        removed = sorted(set(stats) - set(listed))
    else:
        result.skipped = [SourceSkip(a, b) for a, b in cache.get_meta("skipped", [])]
        candidates, removed = _explicit(scope, run.adapter, paths, stats, result)
    for rel in candidates:
        try:
            st = os.stat(scope.root / rel)
        except OSError:
            if rel in stats:
                removed.append(rel)
            continue
        known = stats.get(rel)
        if run.rebuild_all or run.refresh or known is None or known[0] != st.st_size or known[1] != st.st_mtime_ns:
            run.to_read.append((rel, st))
    run.removed = sorted(set(removed))
    run.artifacts_ok = _artifacts_current(run.layout, cache)
    run.outside_changed = deps_changed(cache.get_meta("deps", {}) or {}) or bool(cache.get_meta("retry", False))
    if not run.to_read and not run.removed and run.nothing_changed():
        _fill_counts(result, cache)
        run.done = True


def patch_one_note(run: Run) -> None:
    """A prose edit of one note: its node patched into the last graph (`vault_kg.update.prose_patch`),
    which ends the run; any other change goes on down the route."""
    from vault_kg.update.prose_patch import patch_prose_edit

    patch_prose_edit(run)


def extract(run: Run) -> None:
    """Read and extract the changed sources (an unchanged hash costs a stat update), drop the removed."""
    run.extractions, run.per_source = run.cache.load_all()
    total = len(run.to_read)
    with contextlib.closing(_reads(run)) as reads:
        for done, ((rel, st), read) in enumerate(zip(run.to_read, reads), 1):
            if run.progress:
                run.progress(rel, done, total)
            extraction = _extract_one(run, rel, st, read)
            if extraction is None:
                continue
            run.previous[rel] = run.extractions.get(rel)
            run.extractions[rel] = extraction
            run.cache.put_source(rel, st.st_size, st.st_mtime_ns, extraction.hash, extraction)
            run.result.extracted.append(rel)
    for rel in run.removed:
        run.previous[rel] = run.extractions.pop(rel, None)
        run.per_source.pop(rel, None)
    run.cache.delete_sources(run.removed)
    run.result.removed = run.removed
    run.result.sources = len(run.extractions)


def _reads(run: Run) -> Iterator[Read | None]:
    """One item per source to read: what worker processes read and extracted on a large full
    build (see `extract_pool`), else None (`_extract_one` reads it)."""
    workers = worker_count(len(run.to_read), run.adapter) if run.rebuild_all else 1
    if workers > 1:
        with contextlib.closing(extracted(run.adapter, run.scope.root, [rel for rel, _ in run.to_read], workers)) as reads:
            for done, read in enumerate(reads):
                if done == 1:  # the workers are running: what the ranking imports, imported meanwhile
                    import_ahead()
                yield read
    else:
        yield from (None for _ in run.to_read)


def _extract_one(run: Run, rel: str, st: os.stat_result, read: Read | None = None) -> m.Extraction | None:
    """The source's new extraction (annotated by the passes), or None when its content did not change."""
    scope = run.scope
    data, reason, prepared = read or (*read_source(scope.root, rel), None)
    if data is None:
        return m.Extraction(source=rel, hash="unreadable", quarantine=reason, nodes=_unreadable_node(scope, rel, reason or "unreadable"))
    digest = hashlib.sha256(data).hexdigest()
    known = run.stats.get(rel)
    if not run.rebuild_all and not run.refresh and known is not None and known[2] == digest and rel in run.extractions:
        run.cache.touch_source(rel, st.st_size, st.st_mtime_ns)
        return None
    extraction = prepared if prepared is not None else run.adapter.extract(rel, data)
    for p in run.passes:
        extraction = p.annotate(run, rel, data, extraction)
    return extraction


def enrich(run: Run) -> None:
    """The passes' `enrich` hooks; then stop if, after all, nothing changed."""
    run.fresh = list(run.result.extracted)
    for p in run.passes:
        p.enrich(run)
    for rel in run.changed:
        if rel not in run.previous:
            run.previous[rel] = None
    if not run.previous and run.nothing_changed():
        _fill_counts(run.result, run.cache)
        run.done = True
        return
    if not run.artifacts_ok and not run.rebuild_all:
        run.result.notices.append(f"{run.layout.graph_json}: missing, changed or corrupt; rewritten from the cache")
    if run.rebuild_all:
        run.previous = {rel: None for rel in run.extractions}
        run.per_source = {}


def resolve(run: Run) -> None:
    """Resolve references across sources (only what a change can reach), and fold the nodes."""
    run.resolution, run.recomputed = _resolve(run.adapter, run.extractions, run.previous, run.per_source, run.cache)
    run.nodes = assemble_nodes(run.extractions, run.resolution)
    run.derived = by_owner(run.resolution.derived)
    run.derived_sigs = signatures(run.derived)
    if not run.rebuild_all and run.recomputed is not None and getattr(run.adapter, "edges_owned_by_source", False):
        run.kept = rank.with_table(run.cache.load_kept())


def assemble(run: Run) -> None:
    """The passes' `assemble` hooks, then each dirty owner's edge group derived again and cached."""
    for p in run.passes:
        p.assemble(run)
    kept, cache = run.kept, run.cache
    dirty = None if kept is None else _dirty_owners(kept, run.nodes, run.previous, run.recomputed or set(), run.derived_sigs) | run.redo
    raw = raw_edges(run.extractions, run.resolution, run.derived, dirty)
    for owner, edges in run.owned_edges.items():
        if dirty is None or owner in dirty:
            raw.setdefault(owner, []).extend(edges)
    live = finalize_groups(raw, run.nodes, run.result)
    run.result.extra["rederived_owners"] = len(live) if dirty is not None else "all"
    live_encoded = {owner: encode_group(group) for owner, group in live.items() if group}
    cache.put_groups(live_encoded, clear=dirty is None, gone=[o for o, g in live.items() if not g])
    run.edges_by_owner = OwnerGroups(live, kept.groups if kept else {}, live_encoded)
    for owner in kept.touched if kept else ():
        if owner in run.edges_by_owner:
            run.edges_by_owner.group(owner)


def post_assembly(run: Run) -> None:
    """The passes' `post_assembly` hooks (anchors: staleness), then what the next run must know."""
    for p in run.passes:
        p.post_assembly(run)
    run.cache.set_meta("deps", dict(sorted(run.deps.items())))
    run.cache.set_meta("retry", run.retry)
    run.cache.put_kept_state(run.derived_sigs, sorted(run.edges_by_owner.accessed))


def rank_nodes(run: Run) -> None:
    """Rank and cluster, and sync the query tables.

    On an update (`kept`), the edge table is the kept one with the rows of the re-derived owners
    replaced, and only those owners' groups are encoded and synced; kept groups go into
    graph.json as the bytes they are.
    """
    cache, nodes, groups, kept = run.cache, run.nodes, run.edges_by_owner, run.kept
    owners = groups.owners()
    fresh = groups.live
    owed = owed_owners(cache)  # a hook's link patches stored these owners' rows but not in the table (`vault_kg.update.deferred_work`)
    if owed is not None:
        cache.set_meta(OWED, None)
    behind = {owner: groups.group(owner) for owner in owed or () if owner in groups and owner not in fresh}
    table = rank.patched(kept.table, nodes, owners, {**behind, **fresh}) if kept is not None else None
    if table is None:
        table = rank.edge_table(nodes, {owner: groups.group(owner) for owner in owners})
    cache.put_table(table)
    run.table = table
    run.encoded = groups.encoded()
    cache.sync_graph(nodes, fresh, run.encoded, None if kept is None else set(fresh) | set(kept.touched), run.changed_nodes)
    run.ranks, assignment, run.communities = _ranking(cache, nodes, table, run.result)
    for nid, attrs in nodes.items():
        attrs["rank"] = run.ranks.get(nid, 0.0)
    for nid, attrs in nodes.items():
        if nid in assignment:
            attrs["community"] = assignment[nid]
    cache.sync_ranks(nodes)


def write_artifacts(run: Run) -> None:
    """graph.json (edges spliced from the encoded per-owner groups, in owner order), report, brief, html."""
    from graph_out.graph_json import encode_node_link, node_link
    from graph_out.report import render_report

    scope, layout, nodes, result = run.scope, run.layout, run.nodes, run.result
    assert run.table is not None
    edges = run.edges_by_owner.all_edges() if _needs_edge_list(scope, nodes) else []
    gods = rank.god_nodes(nodes, run.ranks)
    counts = formats.counts_of(nodes, run.table.row_count(), result.sources, run.table.relation_counts())
    result.unresolved = counts["unresolved"] + counts["unresolved_calls"]
    skipped = [(s.relpath, s.reason) for s in result.skipped]
    attrs = formats.graph_attrs(scope.name, scope.kind, scope.root, f"vault-kg {__version__}", nodes, gods, run.communities, counts, skipped, result.extra.pop("graph_attrs", {}))
    data = node_link(dict(attrs), nodes, edges)
    graph_bytes = encode_node_link(data, run.encoded.values())
    result.graph_digest = zlib.crc32(graph_bytes)
    for path, payload in ((layout.graph_json, graph_bytes), (layout.report, render_report(data).encode())):
        if store.write_if_changed(path, payload):
            result.written.append(str(path))
    store.write_if_changed(layout.brief, store.dumps_json(formats.brief_of(attrs, nodes)))
    _write_html(layout, data, result)
    marker = layout.out / f"{scope.kind}.scope"
    if not marker.exists():
        marker.touch()
    run.data = data


def record(run: Run) -> None:
    """The search index, the result's counts and warnings, and what the next run checks first."""
    cache, result, layout, data = run.cache, run.result, run.layout, run.data
    _update_docs(cache, run.adapter, run.extractions, run.fresh, run.removed, run.rebuild_all)
    for rel in sorted(run.extractions):
        ext = run.extractions[rel]
        if ext.quarantine:
            result.quarantined.append((rel, ext.quarantine))
        result.warnings.extend(w for w in ext.warnings if rel in result.extracted)
    if run.full_listing:
        (layout.out / "reconciled.stamp").touch()
    _record_artifacts(layout, cache, result.graph_digest)
    cache.set_meta("graph", data["graph"])
    result.nodes, result.edges = len(data["nodes"]), data["graph"]["counts"]["edges"]
    result.pending = data["graph"]["counts"].get("pending", 0)


Stage = Callable[[Run], None]
# The one route, in order. A stage that finds nothing left to do sets `run.done`, and the rest is skipped.
STAGES: tuple[Stage, ...] = (scan, finish_owed, patch_one_note, extract, enrich, resolve, assemble, post_assembly, rank_nodes, write_artifacts, record)


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


def _ranking(cache: ScopeCache, nodes: dict[str, dict[str, Any]], table: rank.EdgeTable, result: RunResult) -> tuple[dict[str, float], dict[str, int], list[dict[str, Any]]]:
    """PageRank and Leiden, or the last run's answer when nothing they read has changed (see `ranking`)."""
    from vault_kg.update.ranking_policy import rank_graph

    return rank_graph(cache, nodes, table, result)


def _needs_edge_list(scope: Scope, nodes: dict[str, Any]) -> bool:
    """Whether the report (import cycles, code scopes) or an inline graph.html needs every edge."""
    from vault_kg.update.html_page import html_mode

    return scope.kind == "code" or html_mode(len(nodes)) == "inline"


def _write_html(layout: store.Layout, data: dict[str, Any], result: RunResult) -> None:
    """graph.html inline for small graphs; large ones, and a hook's, are left to the detached render
    the caller wakes (`vault_kg.jobs.html_render.after_run`)."""
    from vault_kg.update.html_page import BACKGROUND, html_mode, write_page

    mode = html_mode(len(data["nodes"]))
    if mode == "off":
        return
    if mode == "background":  # before importing the renderer: its layout code imports numpy
        result.extra["html"] = BACKGROUND
        return
    try:
        import graph_out.html  # noqa: F401  (an install without the renderer writes no page)
    except ImportError:
        return
    if write_page(layout.out, data):
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
