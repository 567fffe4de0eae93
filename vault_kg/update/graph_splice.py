"""graph.json written as the change: the pieces an update replaced, spliced between the old file's unchanged runs.

A full write (`stages.write_artifacts`) records where every edge group and node lies in the file
(`graph_out.graph_json.Pieces`, the cache's `graph_pieces` blob, vault scopes). An update that
changed a few owners' groups, a few nodes and the `graph` object (a hook's edits, settled by the
background job; a person's one-note prose edit) writes the new file from the mapped old one's
unchanged runs and the new pieces: nothing else is encoded or copied in memory, and the bytes
are the ones a whole encoding gives. The file is still replaced atomically (a crash leaves the old
or the new one), so the write itself is the file's size; the CRC-32 the no-op check records is
computed over the same parts.
"""

from __future__ import annotations

import mmap
import zlib
from typing import Any, Mapping

from graph_out.graph_json import Pieces, splice
from vault_kg.core import store
from vault_kg.storage.cache import ScopeCache
from vault_kg.storage.layout import Layout
from vault_kg.update.noop_checks import record_artifacts

__all__ = ["BLOB", "forget", "graph_attrs_bytes", "keep", "node_bytes_at", "pieces_of", "write_spliced"]

BLOB = "graph_pieces"


def keep(cache: ScopeCache, pieces: Pieces | None) -> None:
    """Record where the pieces of the graph.json just written lie (None: this scope keeps none)."""
    if pieces is None:
        forget(cache)
    else:
        cache.put_blob(BLOB, pieces.to_bytes())


def forget(cache: ScopeCache) -> None:
    """graph.json was written without its pieces recorded: the next update writes it whole."""
    cache.drop_blob(BLOB)


def pieces_of(cache: ScopeCache, layout: Layout) -> Pieces | None:
    """The recorded pieces of graph.json as it is on disk, or None (none recorded, or another file)."""
    blob = cache.get_blob(BLOB)
    if blob is None:
        return None
    pieces = Pieces.from_bytes(blob)
    try:
        size = layout.graph_json.stat().st_size
    except OSError:
        return None
    return pieces if size == pieces.size else None


def node_bytes_at(layout: Layout, pieces: Pieces, nid: str) -> bytes | None:
    """The bytes of node `nid` in graph.json as it is (None when the pieces do not name it)."""
    from bisect import bisect_left

    i = bisect_left(pieces.ids, nid)
    if i == len(pieces.ids) or pieces.ids[i] != nid:
        return None
    at = pieces.size - 3 - sum(pieces.node_lengths[i:]) - (len(pieces.ids) - 1 - i)  # before the tail `]}\n`, counting back
    with layout.graph_json.open("rb") as handle:
        handle.seek(at)
        return handle.read(pieces.node_lengths[i])


def write_spliced(cache: ScopeCache, layout: Layout, pieces: Pieces, groups: Mapping[str, bytes | None], nodes: Mapping[str, bytes | None], graph: bytes | None) -> int:
    """Replace graph.json with these groups, nodes and `graph` object spliced in (see `splice`),
    record its stat, digest and pieces; return its CRC-32."""
    with layout.graph_json.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mapped)
    parts: list[Any] = []
    try:
        parts, after = splice(view, pieces, groups, nodes, graph)
        digest = 0
        for part in parts:
            digest = zlib.crc32(part, digest)
        store.atomic_write(layout.graph_json, parts)
    finally:
        for part in parts:  # the views of the old file go before the mapping does
            if isinstance(part, memoryview):
                part.release()
        view.release()
        mapped.close()
    record_artifacts(layout, cache, digest)
    keep(cache, after)
    return digest


def graph_attrs_bytes(attrs: dict[str, Any]) -> bytes:
    """The `graph` object as graph.json encodes it."""
    import orjson

    from graph_out.graph_json import JSON_OPTIONS

    return orjson.dumps(attrs, option=JSON_OPTIONS)
