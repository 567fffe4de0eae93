"""Ranks and communities carried from edit to edit, within a stated tolerance of a full recompute.

A link edit changes a few owners' edges, and PageRank then moves the rank of nearly every node in
its sixth decimal: ranking from scratch and writing every moved rank costs the whole graph on
every edit. The background job that settles a hook's edits (`vault_kg.update.owed_settle`) carries
the last answer forward instead:

- **PageRank, warm-started**: the power iteration starts from the last vector (`raw`, unscaled),
  not the uniform one, and runs to the same stopping rule, so it ends at the same fixed point
  within that rule's tolerance. A node's *shown* rank (its node row, graph.json, the report) is
  rewritten only when the computed one moved more than `RANK_TOLERANCE` (absolute, ranks scaled
  so the top node is 1): every shown rank is within that of the computed one, at every moment,
  and only the nodes that moved are written. God nodes come from the computed ranks (their shown
  ranks are always the computed ones), so they are a full recompute's but for ties closer than the
  stopping rule.
- **Communities, kept**: every node keeps its community; a new node joins the community it is
  most strongly linked to (tags count 0.3, as in Leiden's graph), or none. The community table
  (sizes, cohesion, names, top members) is recomputed over the current graph.
- **A full recompute** (PageRank from the uniform vector, Leiden from scratch: byte for byte a
  build's answer) runs after `FULL_EVERY` carried edits, when the new nodes placed without Leiden
  pass `JOINED_LIMIT` of the community members, or when the kept partition's modularity fell more
  than `MODULARITY_DROP` below what Leiden found.

The state lives in the cache's `rankstate` blob, over the edge table's node ids: the unscaled
vector, the shown ranks, the communities, each node's class (rankable, test path, community
member), the edits carried since the last full recompute and the modularity it found.
"""

from __future__ import annotations

import marshal
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from vault_kg.core import model as m
from vault_kg.core.memory_kinds import is_episodic
from vault_kg.update.centrality import COMMUNITY_SKIP_KINDS, RANK_KINDS, EdgeTable, is_test_path, power_iteration

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "BLOB",
    "FULL_EVERY",
    "JOINED_LIMIT",
    "MEMBER",
    "MODULARITY_DROP",
    "RANKABLE",
    "RANK_TOLERANCE",
    "TEST_PATH",
    "Carried",
    "RankState",
    "carry",
    "community_rows",
    "full_state",
    "keep_full",
    "load",
    "modularity",
    "node_class",
]

BLOB = "rankstate"
RANK_TOLERANCE = 1e-4  # a shown rank follows the computed one when they differ by more than this
FULL_EVERY = 200  # carried edits between full recomputes (`KG_RANK_FULL_EVERY`; 1: recompute every time)
JOINED_LIMIT = 0.02  # share of community members placed by `join` rather than by Leiden
MODULARITY_DROP = 0.01
RANKABLE, TEST_PATH, MEMBER = 1, 2, 4
GODS = 20


def node_class(kind: Any, status: Any, source: Any) -> int:
    """What ranking reads of a node, as bits: it takes part in PageRank, its source is a test path
    (a tenth of the teleport weight, never a god node), it is a community member."""
    node = {"kind": kind, "source": source}
    episodic = is_episodic(node)
    ranked = kind in RANK_KINDS and status not in (m.QUARANTINED, m.SUPERSEDED, m.STALE) and not episodic
    return (RANKABLE if ranked else 0) | (TEST_PATH if is_test_path(source or "") else 0) | (MEMBER if kind not in COMMUNITY_SKIP_KINDS and not episodic else 0)


@dataclass
class RankState:
    """The ranking carried from edit to edit, over `ids` (the edge table's node ids, sorted)."""

    ids: list[str]
    raw: np.ndarray  # the unscaled PageRank vector (0: takes no part)
    shown: np.ndarray  # the rank each node's row and graph.json show
    community: np.ndarray  # community id, -1 for none
    cls: np.ndarray  # `node_class` bits
    edits: int = 0  # carried since the last full recompute
    joined: int = 0  # community members placed by `join` since then
    modularity: float = 0.0  # what the last full recompute's Leiden found

    def to_bytes(self) -> bytes:
        arrays = (self.raw.astype("float64"), self.shown.astype("float64"), self.community.astype("int32"), self.cls.astype("uint8"))
        return marshal.dumps((self.ids, *(a.tobytes() for a in arrays), self.edits, self.joined, self.modularity))

    @classmethod
    def from_bytes(cls, blob: bytes) -> "RankState":
        import numpy as np

        ids, raw, shown, community, classes, edits, joined, q = marshal.loads(blob)
        return cls(
            ids,
            np.frombuffer(raw, "float64").copy(),
            np.frombuffer(shown, "float64").copy(),
            np.frombuffer(community, "int32").astype(np.int64),
            np.frombuffer(classes, "uint8").copy(),
            edits,
            joined,
            q,
        )


def full_state(nodes: Mapping[str, dict[str, Any]], table: EdgeTable, raw: np.ndarray, ranks: Mapping[str, float], assignment: Mapping[str, int]) -> RankState:
    """The state a full recompute leaves: its vector, its ranks and communities, nothing carried."""
    import numpy as np

    classes = np.array([node_class(a.get("kind"), a.get("status"), a.get("source")) for a in map(nodes.__getitem__, table.ids)], dtype=np.uint8)
    shown = np.array([ranks.get(nid, 0.0) for nid in table.ids], dtype=np.float64)
    community = np.array([assignment.get(nid, -1) for nid in table.ids], dtype=np.int64)
    return RankState(list(table.ids), np.asarray(raw, dtype=np.float64), shown, community, classes, 0, 0, modularity(table, classes, community))


def modularity(table: EdgeTable, classes: np.ndarray, community: np.ndarray) -> float:
    """Newman's modularity of `community` on the weighted graph Leiden clusters (edges between
    community members, tags at 0.3, no self-loops), summed over the edge rows."""
    import numpy as np

    a, b, w = _member_rows(table, classes)
    total = w.sum()
    if not len(w) or not total:
        return 0.0
    ca, cb = community[a], community[b]
    inside = (ca == cb) & (ca >= 0)
    ends, weights = np.concatenate((ca, cb)), np.concatenate((w, w))
    assigned = ends >= 0
    strength = np.bincount(ends[assigned], weights=weights[assigned]) if assigned.any() else np.zeros(0)
    return float(w[inside].sum() / total - ((strength / (2 * total)) ** 2).sum())


def _member_rows(table: EdgeTable, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edge rows between two community members (self-loops left out): their ends and weights
    (tags 0.3), as Leiden's graph counts them (`centrality.member_pairs`, before pairs are merged)."""
    import numpy as np

    member = (classes & MEMBER) > 0
    keep = member[table.src] & member[table.dst] & (table.src != table.dst)
    return table.src[keep], table.dst[keep], table.weight[keep] * np.where(table.hub[keep], 0.3, 1.0)


@dataclass
class Carried:
    """One carried step: the new state, the nodes whose row must be written (shown rank or
    community changed, or the row itself changed), the god nodes, and why a full recompute is due
    instead (None: the carried state stands)."""

    state: RankState
    moved: list[str]
    gods: list[str]
    full_reason: str | None = None


def carry(old: RankState, table: EdgeTable, classes: Mapping[str, int], changed: set[str]) -> Carried:
    """The state for `table` (the edge table with a hook's edits patched in) carried from `old`:
    `classes` holds the class of every node in `changed` (new nodes, and nodes whose row changed)."""
    import numpy as np

    index = {nid: i for i, nid in enumerate(old.ids)}
    where = np.array([index.get(nid, -1) for nid in table.ids], dtype=np.int64)
    known = where >= 0

    def pick(values: np.ndarray, fill: float) -> np.ndarray:
        return np.where(known, values[np.maximum(where, 0)], fill)

    cls = pick(old.cls, 0).astype(np.uint8)
    for i, nid in enumerate(table.ids):
        if nid in classes:
            cls[i] = classes[nid]
    before = pick(old.shown, np.nan)
    state = RankState(list(table.ids), pick(old.raw, 0.0), before.copy(), pick(old.community, -1), cls, old.edits + 1, old.joined, old.modularity)
    scaled = _ranked(state, table)
    gods = _gods(state, scaled)
    moved = np.isnan(before) | (np.abs(scaled - np.nan_to_num(before, nan=0.0)) > RANK_TOLERANCE)
    moved[gods] = True
    state.shown = np.where(moved, scaled, before)
    newcomers = [i for i, nid in enumerate(table.ids) if (not known[i] or nid in changed) and cls[i] & MEMBER and state.community[i] < 0]
    for i, nid in enumerate(table.ids):
        if nid in changed and not cls[i] & MEMBER:
            state.community[i] = -1
    joined = _join(state, table, newcomers)
    state.joined += len(newcomers)
    rows = moved & (np.nan_to_num(before, nan=-1.0) != state.shown)
    rows[joined] = True
    moved_ids = sorted({table.ids[i] for i in np.flatnonzero(rows)} | (changed & set(table.ids)))
    return Carried(state, moved_ids, [table.ids[i] for i in gods], _full_due(state, table))


def _ranked(state: RankState, table: EdgeTable) -> np.ndarray:
    """PageRank warm-started from the carried vector: the new raw vector (kept in `state`), and
    the ranks scaled so the top node is 1 and rounded as a build rounds them (0: no part)."""
    import numpy as np

    rankable = (state.cls & RANKABLE) > 0
    scaled = np.zeros(len(state.ids))
    if not rankable.any():
        state.raw = np.zeros(len(state.ids))
        return scaled
    positions = np.flatnonzero(rankable)
    start = state.raw[positions]
    start = np.where(start > 0, start, start[start > 0].mean() if (start > 0).any() else 1.0)  # a new node starts at the mean
    rank = power_iteration(table, rankable, np.where(state.cls[positions] & TEST_PATH, 0.1, 1.0), start=start)
    state.raw = np.zeros(len(state.ids))
    state.raw[positions] = rank
    scaled[positions] = np.round(rank / (rank.max() or 1.0), 6)
    return scaled


def _gods(state: RankState, scaled: np.ndarray) -> list[int]:
    """The god nodes' positions: the best `GODS` computed ranks (then by id) of rankable nodes outside test paths."""
    import numpy as np

    candidates = np.flatnonzero(((state.cls & RANKABLE) > 0) & ((state.cls & TEST_PATH) == 0))
    order = np.lexsort((candidates, -scaled[candidates]))
    return [int(i) for i in candidates[order[:GODS]]]


def _join(state: RankState, table: EdgeTable, newcomers: list[int]) -> list[int]:
    """Each newcomer (in id order) joins the community it has the most edge weight to, among
    members that have one (ties: the lower id); the positions that joined one."""
    import numpy as np

    if not newcomers:
        return []
    a, b, w = _member_rows(table, state.cls)
    joined = []
    for i in newcomers:
        mine = (a == i) | (b == i)
        other = np.where(a[mine] == i, b[mine], a[mine])
        labels = state.community[other]
        ok = labels >= 0
        if not ok.any():
            continue
        weight = np.bincount(labels[ok], weights=w[mine][ok])
        state.community[i] = int(np.argmax(weight))
        joined.append(i)
    return joined


def _full_due(state: RankState, table: EdgeTable) -> str | None:
    """Why the carried state should give way to a full recompute now (None: it stands)."""
    if state.edits >= int(os.environ.get("KG_RANK_FULL_EVERY", FULL_EVERY)):
        return f"{state.edits} edits carried"
    members = int(((state.cls & MEMBER) > 0).sum())
    if members and state.joined / members > JOINED_LIMIT:
        return f"{state.joined} of {members} community members placed since the last clustering"
    kept = modularity(table, state.cls, state.community)
    if kept < state.modularity - MODULARITY_DROP:
        return f"modularity {kept:.3f}, {state.modularity:.3f} at the last clustering"
    return None


def community_rows(state: RankState, table: EdgeTable, labels: Callable[[list[str]], dict[str, str]]) -> list[dict[str, Any]]:
    """The community table over the current graph with the carried communities (as a build's,
    by community id): size, cohesion, the five best-ranked members, named after the best two
    that take part in ranking (`labels`: node id -> label, for the ids asked)."""
    import numpy as np

    a, b, w = _member_rows(table, state.cls)
    community = np.where((state.cls & MEMBER) > 0, state.community, -1)
    present = np.flatnonzero(community >= 0)
    if not len(present):
        return []
    k = int(community[present].max()) + 1
    ca, cb = community[a], community[b]
    both = (ca >= 0) & (cb >= 0)
    ca, cb, w = ca[both], cb[both], w[both]
    internal = np.bincount(ca[ca == cb], weights=w[ca == cb], minlength=k)
    total = np.bincount(ca, weights=w, minlength=k) + np.bincount(cb[ca != cb], weights=w[ca != cb], minlength=k)
    rankable = (state.cls & RANKABLE) > 0
    order = present[np.lexsort((present, -np.where(rankable, state.shown, 0.0)[present], community[present]))]
    sizes = np.bincount(community[present], minlength=k)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    tops = {cid: [int(i) for i in order[starts[cid] : min(starts[cid] + 5, starts[cid + 1])]] for cid in np.flatnonzero(sizes).tolist()}
    named = {cid: [i for i in top if rankable[i]][:2] or top[:1] for cid, top in tops.items()}
    found = labels(sorted({state.ids[i] for top in named.values() for i in top}))
    rows = []
    for cid, top in tops.items():
        cohesion = round(float(internal[cid] / total[cid]), 3) if total[cid] else 1.0
        name = " · ".join(str(found.get(state.ids[i], state.ids[i])) for i in named[cid])
        rows.append({"id": cid, "name": name, "size": int(sizes[cid]), "members_top": [state.ids[i] for i in top], "cohesion": cohesion})
    return rows


def load(cache: Any) -> RankState | None:
    """The carried state in the cache, or None."""
    blob = cache.get_blob(BLOB)
    return None if blob is None else RankState.from_bytes(blob)


def keep_full(cache: Any, nodes: Mapping[str, dict[str, Any]], table: EdgeTable, raw: dict[str, Any], ranks: Mapping[str, float], assignment: Mapping[str, int], deferred: bool) -> None:
    """After a full ranking (`stages.rank_nodes`): the state it leaves, from its vector (`raw`),
    or from the kept state when the ranking was reused as it was; none while the communities wait
    for the background clustering (the job's next update keeps one)."""
    from vault_kg.update.centrality import pagerank

    if deferred:
        cache.drop_blob(BLOB)
        return
    vector = raw.get("vector")
    if vector is None:
        last = load(cache)
        if last is not None and last.edits == 0 and last.ids == table.ids:
            vector = last.raw
        else:
            pagerank(nodes, table, raw=raw)  # the ranks were reused: their vector, once more
            vector = raw["vector"]
    cache.put_blob(BLOB, full_state(nodes, table, vector, ranks, assignment).to_bytes())
