"""The stages of the update route, each a function of the `Run` (`vault_kg.update.engine.STAGES` lists them in order).

scan → extract → enrich → resolve → assemble → post_assembly → rank_nodes → write_artifacts →
record; the one-note patches (`prose_patch`, `link_patch`) and the background job's short update
(`deferred_work.finish_owed`) end a run early, calling `rank_nodes`, `write_artifacts` and
`update_search_index` by name where they do the same work.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import zlib
from pathlib import Path
from typing import Any, Callable, Iterator

from graph_out import formats
from graph_out.graph_json import encode_group
from vault_kg import __version__
from vault_kg.core import model as m
from vault_kg.core import store
from vault_kg.storage.layout import Layout
from vault_kg.core.adapter import ScopeAdapter, SourceSkip
from vault_kg.core.safe_read import display_name, valid_name
from vault_kg.core.scopes import Scope
from vault_kg.storage.cache import KnownSources, ScopeCache
from vault_kg.update import centrality as rank
from vault_kg.update.assembly import assemble_nodes, dirty_owners, finalize_groups, raw_edges, resolve_references
from vault_kg.update.edge_groups import OwnerGroups, by_owner, signatures
from vault_kg.update.extract_pool import Read, extracted, read_source, worker_count
from vault_kg.update.import_ahead import import_ahead
from vault_kg.update.noop_checks import OWED, artifacts_current, deps_changed, owed_owners, record_artifacts
from vault_kg.update.run_result import RunResult, fill_counts
from vault_kg.update.run_state import Run

__all__ = ["Stage", "assemble", "enrich", "extract", "post_assembly", "rank_nodes", "record", "relpath_in", "resolve", "scan", "update_search_index", "write_artifacts"]

Stage = Callable[[Run], None]


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


def scan(run: Run) -> None:
    """Which sources to read (size or mtime changed, or all of them) and which are gone."""
    scope, cache, result = run.scope, run.cache, run.result
    run.stats = stats = cache.stats()
    mode_changed = any([p.check_mode(scope, cache) for p in run.passes])
    run.rebuild_all = run.request.force or not stats or mode_changed
    paths = None if run.rebuild_all else run.request.paths  # an empty or recreated cache: the whole scope, whatever files were named
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
        if run.rebuild_all or run.request.refresh or known is None or known[0] != st.st_size or known[1] != st.st_mtime_ns:
            run.to_read.append((rel, st))
    run.removed = sorted(set(removed))
    run.artifacts_ok = artifacts_current(run.layout, cache)
    run.outside_changed = deps_changed(cache.get_meta("deps", {}) or {}) or bool(cache.get_meta("retry", False))
    if not run.to_read and not run.removed and run.nothing_changed():
        fill_counts(result, cache)
        run.done = True


def extract(run: Run) -> None:
    """Read and extract the changed sources (an unchanged hash costs a stat update), drop the removed."""
    run.extractions, run.per_source = run.cache.load_all()
    total = len(run.to_read)
    with contextlib.closing(_reads(run)) as reads:
        for done, ((rel, st), read) in enumerate(zip(run.to_read, reads), 1):
            if run.request.progress:
                run.request.progress(rel, done, total)
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
    data, reason, prepared = read or (*read_source(scope.root, rel, run.adapter), None)
    if data is None:
        return m.Extraction(source=rel, hash="unreadable", quarantine=reason, nodes=_unreadable_node(scope, rel, reason or "unreadable"))
    digest = hashlib.sha256(data).hexdigest()
    known = run.stats.get(rel)
    if not run.rebuild_all and not run.request.refresh and known is not None and known[2] == digest and rel in run.extractions:
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
        fill_counts(run.result, run.cache)
        run.done = True
        return
    if not run.artifacts_ok and not run.rebuild_all:
        run.result.notices.append(f"{run.layout.graph_json}: missing, changed or corrupt; rewritten from the cache")
    if run.rebuild_all:
        run.previous = {rel: None for rel in run.extractions}
        run.per_source = {}


def resolve(run: Run) -> None:
    """Resolve references across sources (only what a change can reach), and fold the nodes."""
    run.resolution, run.recomputed = resolve_references(run.adapter, run.extractions, run.previous, run.per_source, run.cache)
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
    dirty = None if kept is None else dirty_owners(kept, run.nodes, run.previous, run.recomputed or set(), run.derived_sigs) | run.redo
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
    raw: dict[str, Any] = {}
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
    run.ranks, assignment, run.communities = _ranking(cache, nodes, table, run.result, run.request.settings.defer, raw)
    for nid, attrs in nodes.items():
        attrs["rank"] = run.ranks.get(nid, 0.0)
    for nid, attrs in nodes.items():
        if nid in assignment:
            attrs["community"] = assignment[nid]
    cache.sync_ranks(nodes)
    if run.scope.kind == "vault":  # what the hooks' background job carries forward (`rank_state`)
        from vault_kg.update.rank_state import keep_full

        keep_full(cache, nodes, table, raw, run.ranks, assignment, run.result.extra.get("communities") == "deferred")


def write_artifacts(run: Run) -> None:
    """graph.json (edges spliced from the encoded per-owner groups, in owner order), report, brief, html."""
    from graph_out.graph_json import encode_indexed, encode_node_link, node_link
    from graph_out.report import render_report

    from vault_kg.update import graph_splice

    scope, layout, nodes, result = run.scope, run.layout, run.nodes, run.result
    assert run.table is not None
    edges = run.edges_by_owner.all_edges() if _needs_edge_list(scope, nodes, run.request.settings.html_later) else []
    gods = rank.god_nodes(nodes, run.ranks)
    counts = formats.counts_of(nodes, run.table.row_count(), result.sources, run.table.relation_counts())
    result.unresolved = counts["unresolved"] + counts["unresolved_calls"]
    result.attachments = counts["by_kind"].get(m.ATTACHMENT, 0)
    skipped = [(s.relpath, s.reason) for s in result.skipped]
    attrs = formats.graph_attrs(scope.name, scope.kind, scope.root, f"vault-kg {__version__}", nodes, gods, run.communities, counts, skipped, result.extra.pop("graph_attrs", {}))
    data = node_link(dict(attrs), nodes, edges)
    if scope.kind == "vault":  # where each piece lies, for the updates that splice it (`graph_splice`)
        graph_bytes, pieces = encode_indexed(data, run.encoded)
        graph_splice.keep(run.cache, pieces)
    else:
        graph_bytes = encode_node_link(data, run.encoded.values())
    result.graph_digest = zlib.crc32(graph_bytes)
    for path, payload in ((layout.graph_json, graph_bytes), (layout.report, render_report(data).encode())):
        if store.write_if_changed(path, payload):
            result.written.append(str(path))
    store.write_if_changed(layout.brief, store.dumps_json(formats.brief_of(attrs, nodes)))
    _write_html(layout, data, result, run.request.settings.html_later, counts)
    marker = layout.out / f"{scope.kind}.scope"
    if not marker.exists():
        marker.touch()
    run.data = data


def record(run: Run) -> None:
    """The search index, the result's counts and warnings, and what the next run checks first."""
    cache, result, layout, data = run.cache, run.result, run.layout, run.data
    update_search_index(cache, run.adapter, run.extractions, run.fresh, run.removed, run.rebuild_all)
    for rel in sorted(run.extractions):
        ext = run.extractions[rel]
        if ext.quarantine:
            result.quarantined.append((rel, ext.quarantine))
        result.warnings.extend(w for w in ext.warnings if rel in result.extracted)
    if run.full_listing:
        layout.reconciled.touch()
    record_artifacts(layout, cache, result.graph_digest)
    cache.set_meta("graph", data["graph"])
    result.nodes, result.edges = len(data["nodes"]), data["graph"]["counts"]["edges"]
    result.pending = data["graph"]["counts"].get("pending", 0)


def _unreadable_node(scope: Scope, rel: str, reason: str) -> dict[str, dict[str, Any]]:
    if scope.kind == "vault":
        return {m.note_id(rel): {"kind": m.NOTE, "label": Path(rel).stem, "source": rel, "status": m.QUARANTINED, "quarantine": reason, "summary": "", "tags": [], "aliases": []}}
    return {m.file_id(rel): {"kind": m.FILE, "label": rel, "source": rel, "status": m.QUARANTINED, "quarantine": reason}}


def _explicit(scope: Scope, adapter: ScopeAdapter, paths: list[Path], known: KnownSources, result: RunResult) -> tuple[list[str], list[str]]:
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


def _ranking(
    cache: ScopeCache,
    nodes: dict[str, dict[str, Any]],
    table: rank.EdgeTable,
    result: RunResult,
    defer: str,
    raw: dict[str, Any] | None = None,
) -> tuple[dict[str, float], dict[str, int], list[dict[str, Any]]]:
    """PageRank and Leiden, or the last run's answer when nothing they read has changed (see `ranking`)."""
    from vault_kg.update.ranking_policy import rank_graph

    return rank_graph(cache, nodes, table, result, defer, raw)


def _needs_edge_list(scope: Scope, nodes: dict[str, Any], later: bool) -> bool:
    """Whether the report (import cycles, code scopes) or an inline graph.html needs every edge."""
    from vault_kg.update.html_page import html_mode

    return scope.kind == "code" or html_mode(len(nodes), later) == "inline"


def _write_html(layout: Layout, data: dict[str, Any], result: RunResult, later: bool, counts: dict[str, Any]) -> None:
    """graph.html inline for small graphs; large ones are left to the detached render the caller
    wakes (`vault_kg.jobs.html_render.after_run`), and the hooks' and jobs' to whoever looks next
    (`html_page.LATER`); graph-state.js tells a page drawn earlier that it is behind."""
    from vault_kg.update.html_page import BACKGROUND, LATER, html_mode, write_page, write_state

    mode = html_mode(len(data["nodes"]), later)
    if mode == "off":
        return
    write_state(layout.out, result.graph_digest, counts)
    if mode == LATER:
        return
    if mode == "background":  # before importing the renderer: its layout code imports numpy
        result.extra["html"] = BACKGROUND
        return
    try:
        import graph_out.html  # noqa: F401  (an install without the renderer writes no page)
    except ImportError:
        return
    if write_page(layout.out, data, result.graph_digest):
        result.written.append(str(layout.html))


def update_search_index(cache: ScopeCache, adapter: ScopeAdapter, extractions: dict[str, m.Extraction], changed: list[str], removed: list[str], rebuild_all: bool) -> None:
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
