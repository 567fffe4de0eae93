"""One note's link, tag or alias edit, patched into the last assembled graph instead of folding every note.

When an agent adds, removes or retargets a link in one note (or changes its tags or aliases), the
whole route (`vault_kg.update.engine`) would load every cached extraction, resolve, fold every node and
derive the edge groups again, to find a graph that differs from the last one in a few owners'
edges and a few nodes. This stage, reached from `note_patch` when the edit is more than prose,
starts from what the last run left in the cache instead:

- the assembled nodes (the `nodes` table: every node as the last run wrote it, passes included);
- the kept edge groups and the rank's edge table (`cache.load_kept`, as every update uses them);
- the note index the links resolve against, as the last whole resolution left it (the cache's
  `note_index` blob, kept current by this patch when a note's aliases change).

It applies when the note's meta is as it was but for its tags and aliases (so the passes' inputs
are unchanged: the anchors pass reads frontmatter and labels, the model pass titles and statuses,
and both last ran on the same inputs and day, `note_patch._candidate`), and its nodes but for tag
nodes and its own node's `NOTE_PATCHABLE` attributes. The note's links are resolved again (and,
when an alias changed, those of the notes it can reach: `alias_patch`); a dangling target a note
starts or stops naming gains or loses it as a referrer, a section no note named becomes a node
under its note with the derived edge that note then owns, and tag nodes and the tag hierarchy
follow the note's tags (`tag_patch`). The changed owners' edge groups are derived again (a note's:
its extraction's edges, its links and the derived edges it owned, taken back from its kept group),
then the engine's own stages rank and write (`rank_nodes`, `write_artifacts`). Anything else (a
heading, a section a note stops naming, which another note may still name, an alias another note
or a file name shares, an owner whose edges a pass adds, an edge that would be dropped) goes down
the whole route. tests/test_link_patch.py and the property test compare the result with fresh
builds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import os
from typing import Any, Iterator, Mapping

import orjson

from graph_out.formats import pass_attrs

from vault_kg.core import model as m
from vault_kg.update.centrality import with_table
from vault_kg.update.edge_groups import OwnerGroups
from vault_kg.update import deferred_work as owed
from vault_kg.update.assembly import LOOKUP_BLOB, finalize_edges
from vault_kg.update.run_state import Run
from vault_kg.update.stages import rank_nodes, update_search_index, write_artifacts
from vault_kg.update.alias_patch import ALIAS_META, alias_readers
from vault_kg.update.tag_patch import TAG_META, patch_tags, tag_ids

__all__ = ["DERIVED_RELATIONS", "FREE_META", "NOTE_PATCHABLE", "PATCHABLE", "Patch", "patch_link_edit"]

DERIVED_RELATIONS = (m.HAS_SECTION, m.TAG_PARENT)  # what vault resolution derives (never an extraction's or a link's)
PATCHABLE = ("end_line", "summary")  # the note node's attributes the whole route would take from the new extraction, unchecked
NOTE_PATCHABLE = (*PATCHABLE, "tags", "aliases")  # ... and the tags (`tag_patch` follows their nodes) and aliases (`alias_readers`)
FREE_META = ("size", "summary", "fm_digest", "fm_title")


def patch_link_edit(run: Run, rel: str, st: os.stat_result, old: m.Extraction | None, new: m.Extraction) -> bool:
    """Finish the run with `rel`'s new links patched into the last graph; False: the whole route."""
    nid = m.note_id(rel)
    if not _patchable_edit(old, new, nid):
        return False
    cache = run.cache
    kept = with_table(cache.load_kept(lazy=run.request.settings.defers_whole_graph))
    if kept is None or kept.touched:
        return False  # passes add edges to some owners after assembly; the whole route redoes them
    nodes = cache.load_nodes(lazy=run.request.settings.defers_whole_graph)
    last = cache.get_meta("graph", {}) or {}
    row = nodes.get(nid)
    if row is None or row.get("status") not in (m.LIVE, m.PENDING) or any(row.get(k) != old.nodes[nid].get(k) for k in NOTE_PATCHABLE):  # type: ignore[union-attr]
        return False
    patch = _resolved_again(run, rel, old, new, nodes, last)  # type: ignore[arg-type]
    if patch is None:
        return False
    row.update({k: new.nodes[nid][k] for k in NOTE_PATCHABLE if k in new.nodes[nid]})
    groups = _groups(patch, kept.groups, nodes)
    if groups is None:
        return False
    _commit(run, rel, st, new, patch, groups, kept, nodes, last)
    return True


def _patchable_edit(old: m.Extraction | None, new: m.Extraction, nid: str) -> bool:
    """The note's meta and model status as they were (but the tags it uses and the meta no other
    stage reads), its nodes too (but tag nodes, and its own node's `NOTE_PATCHABLE` attributes);
    its links and edges may differ."""
    if old is None or old.quarantine or new.quarantine or nid not in new.nodes or new.nodes[nid].get("kind") != m.NOTE:
        return False
    if (new.hot("llm") or {}).get("status") == "answered":
        return False  # the model pass verifies new answers in `enrich`
    if _without(old.meta, FREE_META + TAG_META + ALIAS_META) != _without(new.meta, FREE_META + TAG_META + ALIAS_META):
        return False
    if old.nodes.keys() - tag_ids(old.nodes) != new.nodes.keys() - tag_ids(new.nodes):
        return False
    if any(old.nodes[n] != new.nodes[n] for n in new.nodes.keys() & old.nodes.keys() if n != nid):
        return False
    return _without(old.nodes[nid], NOTE_PATCHABLE) == _without(new.nodes[nid], NOTE_PATCHABLE)


@dataclass
class Patch:
    """The links resolved again (the edited note's, and those of notes an alias change reaches),
    and what that changes beyond their edge groups."""

    resolved: dict[str, dict[str, Any]] = field(default_factory=dict)  # note → its links resolved again
    sources: dict[str, m.Extraction] = field(default_factory=dict)  # note → its extraction (the edited note's new one)
    nodes: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # node id → new attributes (None: gone)
    derived: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # owner → derived edges it gains
    parents: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # owner → all its `tag_parent` edges, when they changed


def _resolved_again(run: Run, rel: str, old: m.Extraction, new: m.Extraction, nodes: dict[str, dict[str, Any]], last: dict[str, Any]) -> Patch | None:
    """The note's links resolved again, and those of the notes whose links may find it by an alias
    it gained or lost, with the dangling targets and sections they add or drop; None when the
    change reaches further (see the module docstring)."""
    from extract.notes import NoteIndex, link_source

    tables = run.cache.get_blob(LOOKUP_BLOB)  # the note index of the last whole resolution, kept current
    if tables is None or len(tables[0]) != (last.get("counts") or {}).get("sources") or tables[0].get(NoteIndex.path_key(rel)) != rel:
        return None
    index = NoteIndex.from_tables(tables, _Extractions(run))
    before, after = old.hot("aliases", []), new.hot("aliases", [])
    index.set_aliases(rel, before, after)
    readers = alias_readers(run.cache, rel, before, after, index, nodes, last)
    if readers is None:
        return None
    if before != after:
        run.state["note_index"] = index.lookup_tables()  # stored with the edit (`_commit`)
    patch = Patch()
    for note in [rel, *readers]:
        source = new if note == rel else run.cache.load_extraction(note)
        before = run.cache.load_resolution(note)
        if source is None or before is None:
            return None
        patch.sources[note], patch.resolved[note] = source, link_source(note, source.refs, index)
        if not _dangling_patched(run, note, before, patch, nodes) or not _sections_patched(run, before, patch.resolved[note], patch, nodes):
            return None
    return patch if patch_tags(rel, old, new, nodes, patch.nodes, patch.parents) else None


def _dangling_patched(run: Run, rel: str, before: dict[str, Any], patch: Patch, nodes: dict[str, dict[str, Any]]) -> bool:
    """Each dangling target the note starts or stops naming: its referrers (in path order, the
    first gives its label and source), a new node, or none when no note names it any more."""
    old, now = _first_labels(before["unresolved"]), _first_labels(patch.resolved[rel]["unresolved"])
    for uid in sorted(old.keys() | now.keys()):
        if old.get(uid) == now.get(uid):
            continue
        node = patch.nodes[uid] if uid in patch.nodes else nodes.get(uid)
        if node is None and uid in old or node is not None and node.get("kind") != m.UNRESOLVED:
            return False
        referrers = sorted(set(node["referrers"] if node else ()) - {rel} | ({rel} if uid in now else set()))
        if not referrers:
            patch.nodes[uid] = None
            continue
        first = referrers[0]
        resolution = patch.resolved.get(first) or run.cache.load_resolution(first) or {}
        label = _first_labels(resolution.get("unresolved", [])).get(uid)
        if label is None:
            return False
        patch.nodes[uid] = {"kind": m.UNRESOLVED, "label": label, "source": first, "referrers": referrers, "status": m.LIVE}
    return True


def _first_labels(unresolved: Any) -> dict[str, str]:
    """Dangling target → the label its first link in this note gives it."""
    labels: dict[str, str] = {}
    for uid, label in unresolved:
        labels.setdefault(uid, label)
    return labels


def _sections_patched(run: Run, before: dict[str, Any], resolved: dict[str, Any], patch: Patch, nodes: dict[str, dict[str, Any]]) -> bool:
    """Sections the note starts naming that no note named: a new node under its note and the
    derived edge to it. A section it stops naming may still be named by another note: then None."""
    old = {tuple(s) for s in before["sections"]}
    now = [tuple(s) for s in resolved["sections"]]
    if not old <= set(now):
        return False
    for sid, target, text, line in now:
        if sid in nodes or sid in patch.nodes:
            continue
        owner = nodes.get(m.note_id(target))
        if owner is None or owner.get("status") != m.LIVE:
            return False  # the anchors pass marks what a stale note owns
        title = run.cache.load_extraction(target).hot("title", target)  # type: ignore[union-attr]
        patch.nodes[sid] = {"kind": m.SECTION, "label": f"{title} › {text}", "source": target, "line": line, "status": m.LIVE}
        patch.derived.setdefault(target, []).append(m.edge(m.note_id(target), sid, m.HAS_SECTION, target, line))
    return True


def _groups(patch: Patch, kept: dict[str, bytes], nodes: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]] | None:
    """The finalized edge group of every owner the patch changes: each note resolved again (its
    extraction's edges, its links, the derived edges it owned) and the notes whose derived edges
    changed."""
    for nid, attrs in patch.nodes.items():
        if attrs is None:
            nodes.pop(nid, None)
        else:
            nodes[nid] = attrs
    groups: dict[str, list[dict[str, Any]]] = {}
    for owner in sorted(patch.resolved.keys() | patch.derived.keys() | patch.parents.keys()):
        edges = orjson.loads(kept[owner]) if owner in kept else []
        if owner in patch.resolved:
            edges = [e for e in edges if e["relation"] in DERIVED_RELATIONS]
        if owner in patch.parents:
            edges = [e for e in edges if e["relation"] != m.TAG_PARENT] + [dict(e) for e in patch.parents[owner]]
        if owner in patch.resolved:
            edges = [*patch.sources[owner].edges, *patch.resolved[owner]["edges"], *edges]
        raw = [*edges, *patch.derived.get(owner, [])]
        if any(e["source"] not in nodes or e["target"] not in nodes for e in raw):
            return None  # the whole route drops such edges with a warning
        groups[owner] = finalize_edges(owner, raw, nodes)
    return groups


class _Extractions(Mapping[str, m.Extraction]):
    """Cached extractions, read one by one: the index asks only for the headings of the notes
    that a `[[Note#Heading]]` link of the edited note names."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def __getitem__(self, rel: str) -> m.Extraction:
        found = self.run.cache.load_extraction(rel)
        if found is None:
            raise KeyError(rel)
        return found

    def __iter__(self) -> Iterator[str]:
        raise TypeError("not iterable: read one note at a time")

    def __len__(self) -> int:
        raise TypeError("not sized: read one note at a time")


def _without(d: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


def _commit(
    run: Run, rel: str, st: os.stat_result, new: m.Extraction, patch: Patch, groups: dict[str, list[dict[str, Any]]], kept: Any, nodes: dict[str, dict[str, Any]], last: dict[str, Any]
) -> None:
    """What `extract`, `resolve`, `assemble` and `post_assembly` store for this edit; then the
    engine's own `rank_nodes` and `write_artifacts`, and what `record` keeps."""
    from graph_out.graph_json import encode_group

    cache, result = run.cache, run.result
    more_edges = sum(len(edges) - (len(orjson.loads(kept.groups[owner])) if owner in kept.groups else 0) for owner, edges in groups.items())
    cache.put_source(rel, st.st_size, st.st_mtime_ns, new.hash, new)
    cache.put_resolutions(sorted(patch.resolved.items()))
    if "note_index" in run.state:
        cache.put_blob(LOOKUP_BLOB, run.state["note_index"])
    encoded = {owner: encode_group(edges) for owner, edges in groups.items() if edges}
    cache.put_groups(encoded, clear=False, gone=[owner for owner, edges in groups.items() if not edges])
    cache.set_meta("retry", False)  # as `post_assembly` leaves it; ranking asks again while clustering is deferred
    if patch.derived or patch.parents:  # their derived share changed: a digest no derivation gives makes the next full resolution redo them
        cache.put_kept_state({**kept.derived, **{owner: "" for owner in (*patch.derived, *patch.parents)}}, [])
    run.extractions, run.fresh, run.nodes, run.kept = {rel: new}, [rel], nodes, kept
    run.changed_nodes = {m.note_id(rel), *patch.nodes}  # the note's own attributes, dangling targets, sections, tags
    result.extracted, result.sources = [rel], last["counts"]["sources"]
    result.attachments = (last["counts"].get("by_kind") or {}).get(m.ATTACHMENT, 0)
    result.extra["rederived_owners"] = len(groups)
    if run.request.settings.defers_whole_graph:
        owed.defer(run, groups, encoded, more_edges, last)
        _record_note(run, new, last)
        return
    run.edges_by_owner = OwnerGroups(groups, kept.groups, encoded)
    result.extra["graph_attrs"] = pass_attrs(last)
    rank_nodes(run)
    write_artifacts(run)
    _record_note(run, new, last)
    owed.record(run)


def _record_note(run: Run, new: m.Extraction, last: dict[str, Any]) -> None:
    """`engine.record` for one changed note: its search text and warnings."""
    rel = new.source
    update_search_index(run.cache, run.adapter, {rel: new}, [rel], [], False)
    run.result.warnings.extend(i["message"] for i in last.get("anchor_issues", []) if i.get("source") == rel)
    run.result.warnings.extend(new.warnings)
