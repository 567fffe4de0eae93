"""Centrality ("god nodes") and communities, computed deterministically from the assembled graph.

God nodes are PageRank over the *meaning* edges only (note→note links, mentions, typed relations,
calls, inheritance), weighted by edge confidence. Tags, sections, unresolved targets, files and
external modules take no part, so a tag used by every note or a file that contains everything is
never crowned. PageRank rather than degree because an index/MOC note has many out-links but few
in-links: it passes rank on instead of hoarding it. Test code gets a tenth of the teleport weight,
and calls made from decorators count a tenth. Journal day notes are episodic memory and take part
in neither ranking nor communities (`vault_kg.core.memory_kinds`).

numpy is imported by the functions that compute, not by this module, so the paths that compute
nothing (a no-op update) import the engine without paying for it.
"""

from __future__ import annotations

import hashlib
import marshal
import random
import re
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import orjson

from vault_kg.core import model as m
from vault_kg.core.memory_kinds import is_episodic

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "ARRAY_CODES",
    "COMMUNITY_SKIP_KINDS",
    "EdgeTable",
    "HUB_RELATIONS",
    "LEIDEN_ITERATIONS",
    "LEIDEN_SEED",
    "RANK_KINDS",
    "RANK_RELATIONS_SKIP",
    "STORED_DTYPES",
    "StoredTable",
    "TEST_PATH_RE",
    "communities",
    "edge_table",
    "god_nodes",
    "is_test_path",
    "leiden",
    "member_pairs",
    "owners_of_rows_to",
    "pagerank",
    "patched",
    "power_iteration",
    "ranking_digest",
    "with_table",
]

RANK_KINDS = {m.NOTE, m.ENTITY, m.CLASS, m.FUNCTION, m.METHOD, m.MODULE}
RANK_RELATIONS_SKIP = {m.TAGGED, m.TAG_PARENT, m.HAS_SECTION, m.CONTAINS, m.IMPORTS}
HUB_RELATIONS = {m.TAGGED, m.TAG_PARENT}
COMMUNITY_SKIP_KINDS = {m.UNRESOLVED, m.EXTERNAL, m.ATTACHMENT}
TEST_PATH_RE = re.compile(r"(^|/)(tests?|testing|__tests__|spec)(/|$)|(^|/)(test_[^/]*|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+|conftest\.py)$")
LEIDEN_SEED = 42
LEIDEN_ITERATIONS = 1  # a second pass costs 40% more for +1% modularity on the 10k-note bench vault


def is_test_path(path: str) -> bool:
    """Every alternative of `TEST_PATH_RE` holds "test" or "spec": a path with neither skips the
    regex (ranking asks this of every note)."""
    if not path or ("test" not in path and "spec" not in path):
        return False
    return bool(TEST_PATH_RE.search(path))


@dataclass
class EdgeTable:
    """The graph as numpy arrays over sorted node ids: built once, shared by rank and communities.

    Rows come owner by owner (owners sorted, each group in its order), and remember their owner
    and relation, so an update can replace the rows of the owners it re-derived (`patched`)
    and get exactly the table a full build would.
    """

    ids: list[str]
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    relation: np.ndarray
    relations: list[str]
    owner: np.ndarray
    owners: list[str]

    @property
    def meaning(self) -> np.ndarray:
        import numpy as np

        return np.array([r not in RANK_RELATIONS_SKIP for r in self.relations], dtype=bool)[self.relation] if len(self.relation) else np.zeros(0, dtype=bool)

    @property
    def hub(self) -> np.ndarray:
        import numpy as np

        return np.array([r in HUB_RELATIONS for r in self.relations], dtype=bool)[self.relation] if len(self.relation) else np.zeros(0, dtype=bool)

    def relation_counts(self) -> dict[str, int]:
        import numpy as np

        counts = np.bincount(self.relation, minlength=len(self.relations))
        return dict(sorted((self.relations[i], int(c)) for i, c in enumerate(counts) if c))

    def row_count(self) -> int:
        return len(self.src)

    def digest_parts(self) -> list[bytes]:
        """What `ranking_digest` hashes of the table: sources, targets, weights, meaning, hub."""
        import numpy as np

        return [np.ascontiguousarray(a).tobytes() for a in (self.src, self.dst, self.weight, self.meaning, self.hub)]

    def to_bytes(self) -> bytes:
        arrays = [a.astype(t).tobytes() for a, t in zip((self.src, self.dst, self.weight, self.relation, self.owner), STORED_DTYPES)]
        return marshal.dumps((self.ids, self.relations, self.owners, *arrays))

    @classmethod
    def from_bytes(cls, blob: bytes) -> "EdgeTable":
        ids, relations, owners, *arrays = marshal.loads(blob)
        return StoredTable(ids, relations, owners, arrays, blob)


STORED_DTYPES = ("int32", "int32", "float64", "int16", "int32")
ARRAY_CODES = ("i", "i", "d", "h", "i")  # the same layouts for the `array` module


def with_table(kept: Any) -> Any:
    """The cache's `Kept` (or None) with its edge table decoded from the bytes the cache stores."""
    if kept is not None and isinstance(kept.table, bytes):
        kept.table = EdgeTable.from_bytes(kept.table)
    return kept


def _decoded(index: int) -> property:
    return property(lambda self: self.decoded()[index])


class StoredTable(EdgeTable):
    """An `EdgeTable` read from the cache whose arrays stay bytes until something computes.

    An edit that leaves the graph's edges as they were (prose, a summary) gets this table back
    from `patched` unchanged, its digest and counts come from the bytes through the `array`
    module, and the update never imports numpy. Any numpy use decodes it (`decoded`)."""

    def __init__(self, ids: list[str], relations: list[str], owners: list[str], raw: list[bytes], blob: bytes) -> None:
        self.ids, self.relations, self.owners = ids, relations, owners
        self._raw, self._blob = raw, blob
        self._arrays: tuple[Any, ...] | None = None

    src, dst, weight, relation, owner = (_decoded(i) for i in range(5))

    def decoded(self) -> tuple[Any, ...]:
        if self._arrays is None:
            import numpy as np

            self._arrays = tuple(np.frombuffer(a, t).astype(np.float64 if t == "float64" else np.int64) for a, t in zip(self._raw, STORED_DTYPES))
        return self._arrays

    def column(self, index: int) -> array:
        return array(ARRAY_CODES[index], self._raw[index])

    def row_count(self) -> int:
        return len(self._raw[0]) // 4

    def relation_counts(self) -> dict[str, int]:
        if self._arrays is not None:
            return super().relation_counts()
        counts = Counter(self.column(3))
        return dict(sorted((self.relations[i], c) for i, c in counts.items()))

    def to_bytes(self) -> bytes:
        return self._blob if self._arrays is None else super().to_bytes()

    def digest_parts(self) -> list[bytes]:
        if self._arrays is not None:
            return super().digest_parts()
        relation = self.column(3)
        meaning = [int(r not in RANK_RELATIONS_SKIP) for r in self.relations]
        hub = [int(r in HUB_RELATIONS) for r in self.relations]
        return [array("q", self.column(0)).tobytes(), array("q", self.column(1)).tobytes(), self._raw[2], bytes(map(meaning.__getitem__, relation)), bytes(map(hub.__getitem__, relation))]

    def same_rows(self, ids: list[str], owners: list[str], fresh: dict[str, list[dict[str, Any]]]) -> bool:
        """Whether the table of `fresh` (the re-derived owners) over `ids` is this one, unchanged."""
        if self._arrays is not None or ids != self.ids or owners != self.owners:
            return False
        index = {nid: i for i, nid in enumerate(ids)}
        relation_code = {r: i for i, r in enumerate(self.relations)}
        owner_code = {o: i for i, o in enumerate(owners)}
        wanted = {o: fresh[o] for o in owners if o in fresh}
        try:
            new = list(zip(*_rows(index, wanted, relation_code, owner_code)))
        except KeyError:
            return False
        if len(relation_code) != len(self.relations):
            return False
        columns = [self.column(i) for i in range(5)]
        old: list[tuple[Any, ...]] = []
        for owner in wanted:  # rows are ordered by owner code: each owner's rows are one slice
            code = owner_code[owner]
            start, end = bisect_left(columns[4], code), bisect_right(columns[4], code)
            old.extend(zip(*(c[start:end] for c in columns)))
        return old == new


def _rows(index: dict[str, int], groups: dict[str, list[dict[str, Any]]], relation_code: dict[str, int], owner_code: dict[str, int]) -> tuple[list[int], list[int], list[float], list[int], list[int]]:
    src: list[int] = []
    dst: list[int] = []
    weight: list[float] = []
    relation: list[int] = []
    owner: list[int] = []
    for name, edges in groups.items():
        code = owner_code[name]
        for e in edges:
            src.append(index[e["source"]])
            dst.append(index[e["target"]])
            w = e.get("score") or 0.0
            weight.append(w * 0.1 if e.get("decorator") else w)
            relation.append(relation_code.setdefault(e["relation"], len(relation_code)))
            owner.append(code)
    return src, dst, weight, relation, owner


def edge_table(nodes: dict[str, dict[str, Any]], groups: dict[str, list[dict[str, Any]]]) -> EdgeTable:
    """The table of `groups` (owner → edges, in owner order) over `nodes`."""
    import numpy as np

    ids = sorted(nodes)
    index = {nid: i for i, nid in enumerate(ids)}
    owners = list(groups)
    relation_code: dict[str, int] = {}
    src, dst, weight, relation, owner = _rows(index, groups, relation_code, {o: i for i, o in enumerate(owners)})
    return EdgeTable(
        ids,
        np.array(src, dtype=np.int64),
        np.array(dst, dtype=np.int64),
        np.array(weight, dtype=np.float64),
        np.array(relation, dtype=np.int64),
        list(relation_code),
        np.array(owner, dtype=np.int64),
        owners,
    )


def owners_of_rows_to(table: EdgeTable, gone: set[str]) -> set[str]:
    """Owners with a row whose source or target is one of the `gone` node ids."""
    if not gone or not table.row_count():
        return set()
    import numpy as np

    marked = np.zeros(len(table.ids), dtype=bool)
    marked[[i for i, nid in enumerate(table.ids) if nid in gone]] = True
    rows = marked[table.src] | marked[table.dst]
    return {table.owners[o] for o in np.unique(table.owner[rows]).tolist()}


def patched(old: EdgeTable, nodes: Mapping[str, Any], owners: list[str], fresh: dict[str, list[dict[str, Any]]]) -> EdgeTable | None:
    """`old` with the rows of every owner in `fresh` replaced (and of owners no longer in
    `owners` dropped), over the new node ids; equal to `edge_table` of the whole graph.

    None when a kept row points at a node that is gone: its owner should have been re-derived,
    and the caller falls back to a full build rather than trust the table.
    """
    ids = sorted(nodes)
    if isinstance(old, StoredTable) and old.same_rows(ids, owners, fresh):
        return old
    import numpy as np

    index = {nid: i for i, nid in enumerate(ids)}
    node_map = np.array([index.get(nid, -1) for nid in old.ids], dtype=np.int64)
    owner_code = {o: i for i, o in enumerate(owners)}
    owner_map = np.array([-1 if o in fresh else owner_code.get(o, -1) for o in old.owners], dtype=np.int64)
    keep = owner_map[old.owner] >= 0 if len(old.owner) else np.zeros(0, dtype=bool)
    src, dst = node_map[old.src[keep]], node_map[old.dst[keep]]
    if (src < 0).any() or (dst < 0).any():
        return None
    relation_code = {r: i for i, r in enumerate(old.relations)}
    new_src, new_dst, new_weight, new_relation, new_owner = _rows(index, {o: fresh[o] for o in owners if o in fresh}, relation_code, owner_code)
    owner = np.concatenate((owner_map[old.owner[keep]], np.array(new_owner, dtype=np.int64)))
    order = np.argsort(owner, kind="stable")
    return EdgeTable(
        ids,
        np.concatenate((src, np.array(new_src, dtype=np.int64)))[order],
        np.concatenate((dst, np.array(new_dst, dtype=np.int64)))[order],
        np.concatenate((old.weight[keep], np.array(new_weight, dtype=np.float64)))[order],
        np.concatenate((old.relation[keep], np.array(new_relation, dtype=np.int64)))[order],
        list(relation_code),
        owner[order],
        owners,
    )


def pagerank(nodes: Mapping[str, dict[str, Any]], table: EdgeTable, alpha: float = 0.85, raw: dict[str, Any] | None = None) -> dict[str, float]:
    """Weighted, personalized PageRank by power iteration (numpy only), scaled to max 1.

    Only live, rankable nodes take part: stale and superseded knowledge is never crowned. `raw`,
    when given, receives the unscaled vector over `table.ids` (`raw["vector"]`, 0 for nodes that
    take no part), which an incremental ranking warm-starts from (`vault_kg.update.rank_state`)."""
    import numpy as np

    rankable = np.array(
        [nodes[nid].get("kind") in RANK_KINDS and nodes[nid].get("status") not in (m.QUARANTINED, m.SUPERSEDED, m.STALE) and not is_episodic(nodes[nid]) for nid in table.ids], dtype=bool
    )
    if not rankable.any():
        if raw is not None:
            raw["vector"] = np.zeros(len(table.ids))
        return {}
    positions = np.flatnonzero(rankable)
    teleport = np.array([0.1 if is_test_path(nodes[table.ids[p]].get("source", "")) else 1.0 for p in positions])
    rank = power_iteration(table, rankable, teleport, alpha)
    if raw is not None:
        raw["vector"] = np.zeros(len(table.ids))
        raw["vector"][positions] = rank
    top = rank.max() or 1.0
    scaled = np.round(rank / top, 6)
    return {table.ids[p]: float(scaled[i]) for i, p in enumerate(positions)}


def power_iteration(table: EdgeTable, rankable: np.ndarray, teleport: np.ndarray, alpha: float = 0.85, start: np.ndarray | None = None) -> np.ndarray:
    """The PageRank vector over the rankable positions (`teleport`: their unnormalized teleport
    weights), from the uniform vector or from `start` (a vector over the same positions: a warm
    start converges in fewer passes, to the same fixed point within the stopping tolerance)."""
    import numpy as np

    keep = table.meaning & rankable[table.src] & rankable[table.dst] & (table.src != table.dst)
    positions = np.flatnonzero(rankable)
    remap = np.full(len(table.ids), -1, dtype=np.int64)
    remap[positions] = np.arange(len(positions))
    src, dst, w = remap[table.src[keep]], remap[table.dst[keep]], table.weight[keep]
    n = len(positions)
    out = np.bincount(src, weights=w, minlength=n)
    share = w / np.where(out[src] > 0, out[src], 1.0)
    dangling = out == 0
    teleport = teleport / teleport.sum()
    rank = np.full(n, 1.0 / n) if start is None else start / (start.sum() or 1.0)
    for _ in range(100):
        flow = np.bincount(dst, weights=rank[src] * share, minlength=n)
        new = alpha * (flow + rank[dangling].sum() * teleport) + (1 - alpha) * teleport
        done = np.abs(new - rank).sum() < 1e-10
        rank = new
        if done:
            break
    return rank


def ranking_digest(nodes: dict[str, dict[str, Any]], table: EdgeTable) -> str:
    """Everything `pagerank` and `communities` read, hashed: when an edit leaves it unchanged
    (a note's prose, its summary), their answer can be reused as is. (The source stands for the
    test-path flag it decides.)"""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(orjson.dumps([(a.get("kind"), a.get("status"), a.get("label"), a.get("source")) for a in map(nodes.__getitem__, table.ids)]))
    digest.update("\n".join(table.ids).encode())
    for part in table.digest_parts():
        digest.update(part)
    return digest.hexdigest()


def god_nodes(nodes: dict[str, dict[str, Any]], ranks: dict[str, float], limit: int = 20) -> list[str]:
    found: list[str] = []
    for nid, _ in sorted(ranks.items(), key=lambda kv: (-kv[1], kv[0])):
        if not is_test_path(nodes[nid].get("source", "")):
            found.append(nid)
            if len(found) == limit:
                break
    return found


def communities(nodes: dict[str, dict[str, Any]], table: EdgeTable, ranks: dict[str, float], previous: dict[str, int] | None = None) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """igraph's Leiden (modularity, fixed seed) on the undirected weighted graph; stable ids.

    Tags join with weight 0.3 so notes that share topics cluster; unresolved targets and external
    modules stay out. Ids are ordered by size, then by first member. Returns node → community id
    and the community table (name from the most central members, size, cohesion).

    With `previous` (an earlier assignment), Leiden does not run: the nodes that still exist keep
    their community, new ones get none, and the table is recomputed over this graph (what a hook
    serves while the real clustering runs in the background; see `vault_kg.update.ranking_policy`).
    """
    import numpy as np

    member = np.array([nodes[nid].get("kind") not in COMMUNITY_SKIP_KINDS and not is_episodic(nodes[nid]) for nid in table.ids], dtype=bool)
    positions = np.flatnonzero(member)
    n = len(positions)
    if not n:
        return {}, []
    pairs, weights = member_pairs(table, member)
    member_ids = [table.ids[p] for p in positions]
    groups: dict[int, list[str]] = {}
    if previous is None:
        for i, label in enumerate(leiden(n, pairs, weights)):
            groups.setdefault(label, []).append(member_ids[i])
        numbered = list(enumerate(sorted(groups.values(), key=lambda g: (-len(g), g[0]))))
    else:
        for nid in member_ids:
            if nid in previous:
                groups.setdefault(previous[nid], []).append(nid)
        numbered = sorted(groups.items())
    assignment: dict[str, int] = {}
    for cid, members in numbered:
        for nid in members:
            assignment[nid] = cid
    community = np.array([assignment.get(nid, -1) for nid in member_ids], dtype=np.int64)
    cs, ct = community[pairs[:, 0]], community[pairs[:, 1]]
    both = (cs >= 0) & (ct >= 0)
    cs, ct, pw = cs[both], ct[both], weights[both]
    k = numbered[-1][0] + 1 if numbered else 0
    internal = np.bincount(cs[cs == ct], weights=pw[cs == ct], minlength=k)
    total = np.bincount(cs, weights=pw, minlength=k) + np.bincount(ct[cs != ct], weights=pw[cs != ct], minlength=k)
    table_rows: list[dict[str, Any]] = []
    for cid, members in numbered:
        top = sorted(members, key=lambda nid: (-ranks.get(nid, 0.0), nid))[:5]
        named = [nodes[nid].get("label", nid) for nid in top if nid in ranks][:2] or [nodes[top[0]].get("label", top[0])]
        cohesion = round(float(internal[cid] / total[cid]), 3) if total[cid] else 1.0
        table_rows.append({"id": cid, "name": " · ".join(str(x) for x in named), "size": len(members), "members_top": top, "cohesion": cohesion})
    return assignment, table_rows


def member_pairs(table: EdgeTable, member: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The undirected weighted graph communities are found on: pairs of member positions (indexes
    among `member`'s true entries, smaller first, each pair once) and their summed weights (tags
    count 0.3; self-loops left out)."""
    import numpy as np

    positions = np.flatnonzero(member)
    n = len(positions)
    remap = np.full(len(table.ids), -1, dtype=np.int64)
    remap[positions] = np.arange(n)
    keep = member[table.src] & member[table.dst] & (table.src != table.dst)
    a, b = remap[table.src[keep]], remap[table.dst[keep]]
    w = table.weight[keep] * np.where(table.hub[keep], 0.3, 1.0)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keys, inverse = np.unique(lo * n + hi, return_inverse=True)
    weights = np.bincount(inverse, weights=w)
    return np.column_stack((keys // n, keys % n)), weights


def leiden(n: int, pairs: np.ndarray, weights: np.ndarray) -> list[int]:
    """igraph's Leiden (modularity, fixed seed) on the undirected weighted graph: a membership list."""
    import igraph as ig

    graph = ig.Graph(n=n, edges=list(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist())))
    graph.es["weight"] = weights.tolist()
    ig.set_random_number_generator(random.Random(LEIDEN_SEED))
    try:
        return list(graph.community_leiden(objective_function="modularity", weights="weight", n_iterations=LEIDEN_ITERATIONS).membership)
    finally:
        ig.set_random_number_generator(random)
