"""One note's link edit, patched into the last assembled graph instead of loading and folding every note.

When an agent adds, removes or moves a link in one note, the whole route (`vault_kg.engine`) would
load every cached extraction, resolve, fold every node and derive the note's edge group again, to
find a graph that differs from the last one in that one owner's edges (and the note's own
`PATCHABLE` attributes). This stage, reached from `note_patch` when the edit is more than prose,
starts from what the last run left in the cache instead:

- the assembled nodes (the `nodes` table: every node as the last run wrote it, passes included);
- the kept edge groups and the rank's edge table (`cache.load_kept`, as every update uses them);
- the note index the links resolve against, rebuilt from the note nodes' paths and aliases
  (the same keys `NoteIndex` reads from every extraction).

It applies when the note's nodes, its tags, aliases, headings, title and the rest of its meta are as
they were, and its links, resolved again alone, reach the same dangling targets and the same
sections as before: then no other note's resolution, no node, no derived edge and no pass input
changed (the anchors pass reads frontmatter, labels and aliases, the model pass titles, aliases and
statuses, and both last ran on the same inputs and day: `note_patch._candidate`). Only the note's
edge group is derived again (its extraction's edges, its links, and the derived edges it owned,
taken back from its kept group); ranking, the query tables, graph.json, the report and the brief
are then made by the engine's own stages (`rank_nodes`, `write_artifacts`) from that graph.
Anything else (a new or renamed tag, an alias, a heading, a link to a dangling target or a section
no link reached before, an owner whose edges a pass adds, an edge that would be dropped) goes down
the whole route. tests/test_link_patch.py and the property test compare it with fresh builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping

import orjson

from .core import model as m
from .groups import OwnerGroups

if TYPE_CHECKING:
    import os

    from .engine import Run

DERIVED_RELATIONS = (m.HAS_SECTION, m.TAG_PARENT)  # what vault resolution derives (never an extraction's or a link's)
PATCHABLE = ("end_line", "summary")  # the note node's attributes the whole route would take from the new extraction
FREE_META = ("size", "summary")
STANDARD_ATTRS = {"scope", "kind", "root", "schema_version", "built_with", "god_nodes", "communities", "counts", "skipped", "quarantined", "stamp"}


def patch_link_edit(run: Run, rel: str, st: os.stat_result, old: m.Extraction | None, new: m.Extraction) -> bool:
    """Finish the run with `rel`'s new links patched into the last graph; False: the whole route."""
    nid = m.note_id(rel)
    if not _only_links_changed(old, new, nid):
        return False
    cache = run.cache
    kept = cache.load_kept()
    if kept is None or kept.touched:
        return False  # passes add edges to some owners after assembly; the whole route redoes them
    nodes = cache.load_nodes()
    last = cache.get_meta("graph", {}) or {}
    group = _group_of(run, rel, new, kept.groups.get(rel), nodes, last)
    if group is None:
        return False
    resolved, edges = group
    row = nodes.get(nid)
    if row is None or any(row.get(k) != old.nodes[nid].get(k) for k in PATCHABLE):  # type: ignore[union-attr]
        return False
    row.update({k: new.nodes[nid][k] for k in PATCHABLE if k in new.nodes[nid]})
    _commit(run, rel, st, new, resolved, edges, kept, nodes, last)
    return True


def _only_links_changed(old: m.Extraction | None, new: m.Extraction, nid: str) -> bool:
    """The note's nodes, meta and model status as they were (but `PATCHABLE` attributes of its own
    node, and the meta no other stage reads); its links and edges may differ."""
    if old is None or old.quarantine or new.quarantine or nid not in new.nodes or new.nodes[nid].get("kind") != m.NOTE:
        return False
    if (new.hot("llm") or {}).get("status") == "answered":
        return False  # the model pass verifies new answers in `enrich`
    if _without(old.meta, FREE_META) != _without(new.meta, FREE_META):
        return False
    if old.nodes.keys() != new.nodes.keys() or any(old.nodes[n] != new.nodes[n] for n in new.nodes if n != nid):
        return False
    return _without(old.nodes[nid], PATCHABLE) == _without(new.nodes[nid], PATCHABLE)


def _group_of(run: Run, rel: str, new: m.Extraction, kept_group: bytes | None, nodes: dict[str, dict[str, Any]], last: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The note's links resolved again and its finalized edge group, or None when the change
    reaches beyond that group (see the module docstring)."""
    from extract.notes import NoteIndex, _link_source

    from .engine import finalize_edges

    aliases = dict(_notes_and_aliases(nodes))
    if len(aliases) != (last.get("counts") or {}).get("sources") or rel not in aliases:
        return None
    before = run.cache.load_resolution(rel)
    if before is None:
        return None
    resolved = _link_source(rel, new.refs, NoteIndex(_Extractions(run), aliases))
    if _plain(resolved["unresolved"]) != _plain(before["unresolved"]) or _plain(resolved["sections"]) != _plain(before["sections"]):
        return None  # a dangling target or a section gains or loses a referrer: nodes change
    derived = [e for e in (orjson.loads(kept_group) if kept_group else []) if e["relation"] in DERIVED_RELATIONS]
    for e in derived:
        e.pop("key", None)
    raw = [*new.edges, *resolved["edges"], *derived]
    if any(e["source"] not in nodes or e["target"] not in nodes for e in raw):
        return None  # the whole route drops such edges with a warning
    return resolved, finalize_edges(rel, raw, nodes)


def _notes_and_aliases(nodes: dict[str, dict[str, Any]]) -> Iterator[tuple[str, list[str]]]:
    """Each note's path and aliases, from its node (what `NoteIndex` reads from its extraction)."""
    for nid, attrs in nodes.items():
        if attrs.get("kind") == m.NOTE:
            source = attrs.get("source")
            if source and nid == m.note_id(source):
                yield source, attrs.get("aliases") or []


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


def _plain(items: Any) -> list[list[Any]]:
    return [list(item) for item in items]


def _without(d: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


def _commit(run: Run, rel: str, st: os.stat_result, new: m.Extraction, resolved: dict[str, Any], edges: list[dict[str, Any]],
            kept: Any, nodes: dict[str, dict[str, Any]], last: dict[str, Any]) -> None:
    """What `extract`, `resolve` and `assemble` store for this edit; then the engine's own
    `rank_nodes` and `write_artifacts`, and what `record` keeps."""
    from graph_out.graph_json import encode_group

    from .engine import rank_nodes, write_artifacts

    cache, result = run.cache, run.result
    cache.put_source(rel, st.st_size, st.st_mtime_ns, new.hash, new)
    cache.put_resolutions([(rel, resolved)])
    encoded = {rel: encode_group(edges)} if edges else {}
    cache.put_groups(encoded, clear=False, gone=[] if edges else [rel])
    run.extractions, run.fresh, run.nodes, run.kept = {rel: new}, [rel], nodes, kept
    run.changed_nodes = {m.note_id(rel)}  # its own `PATCHABLE` attributes; no other node changed
    run.edges_by_owner = OwnerGroups({rel: edges}, kept.groups, encoded)
    result.extracted, result.sources = [rel], last["counts"]["sources"]
    result.extra["rederived_owners"] = 1
    result.extra["graph_attrs"] = {k: v for k, v in last.items() if k not in STANDARD_ATTRS}  # what the passes added
    rank_nodes(run)
    write_artifacts(run)
    _record(run, new, last)


def _record(run: Run, new: m.Extraction, last: dict[str, Any]) -> None:
    """`engine.record` for one changed note: its search text and warnings, the graph's counts."""
    from .engine import _record_artifacts, _update_docs

    cache, result, data, rel = run.cache, run.result, run.data, new.source
    _update_docs(cache, run.adapter, {rel: new}, [rel], [], False)
    result.warnings.extend(i["message"] for i in last.get("anchor_issues", []) if i.get("source") == rel)
    result.warnings.extend(new.warnings)
    result.quarantined = [tuple(q) for q in data["graph"].get("quarantined", [])]
    _record_artifacts(run.layout, cache, result.graph_digest)
    cache.set_meta("graph", data["graph"])
    result.nodes, result.edges = len(data["nodes"]), data["graph"]["counts"]["edges"]
    result.pending = data["graph"]["counts"].get("pending", 0)
    run.done = True
