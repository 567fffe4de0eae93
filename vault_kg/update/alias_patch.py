"""A note's aliases changed: which other notes' links that can reach (for `link_patch`).

A wikilink finds a note by path, then by file name, then by alias (`extract.notes.NoteIndex`). An
alias a note gains or loses changes what a link with that key finds only when no path or file name
answers to it first and no other note holds it (then the notes linking by it are not recorded).
Under those conditions the links with that key either dangled (their notes are the referrers of
its `unresolved:` node) or found this note (their notes own edges to it or to its sections): those
notes' links are resolved again, all of them. The model pass (its name tables hold every alias)
and the anchors pass (it looks names up the same way) must have nothing to redo: no note the
model answered, no anchor issue, no stale note, no anchor or `supersedes` edge.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from vault_kg.core import model as m

__all__ = ["ALIAS_META", "alias_readers"]

ALIAS_META = ("aliases",)


def alias_readers(cache: Any, rel: str, before: list[str], after: list[str], index: Any, nodes: dict[str, dict[str, Any]], last: dict[str, Any]) -> list[str] | None:
    """The other notes whose links must be resolved again after `rel`'s aliases went from
    `before` to `after` (`index`: the note index with `after`), or None: the whole route."""
    old, new = Counter(a.lower() for a in before), Counter(a.lower() for a in after)
    keys = sorted(k for k in old.keys() | new.keys() if old[k] != new[k])
    if not keys:
        return []
    from extract.llm_pass import NAMES_BLOB  # present while some note has model answers to verify

    if cache.get_blob(NAMES_BLOB) is not None or last.get("anchor_issues") or last.get("stale"):
        return None
    readers: set[str] = set()
    for key in keys:
        if "/" in key:
            continue  # a key with a slash is looked up as a path suffix, never as an alias
        if key != key.strip() or not key:
            return None
        if key in index.by_path or key in index.by_stem:
            continue  # a path or a file name answers first
        if any(holder != rel for holder in index.by_alias.get(key, ())):
            return None  # another note answers to it too
        dangling = nodes.get(m.unresolved_id(key))
        readers.update(dangling.get("referrers", ()) if dangling else ())
        if old[key]:
            readers.update(_linking_to(cache, rel))
    readers.discard(rel)
    return sorted(readers)


def _linking_to(cache: Any, rel: str) -> set[str]:
    """Owners of an edge to the note or to one of its sections (from the query tables)."""
    return set(cache.owners_linking_to(m.note_id(rel), m.section_id(rel, "")))
