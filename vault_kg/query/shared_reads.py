"""What the views of one cache file share: node rows as stored and query walk steps, bounded.

A long-running server (`kg mcp`) keeps one view per worker thread (a SQLite reader stays on the
thread that opened it) and drops it when the cache file changes. What those views read does not
change until then, so they share it, whichever thread read it first: each node's row as stored
(every call still serves its own copies, with the read-time anchor check applied, see
`GraphView`) and each node's walk steps (`GraphView.walk_edges`). Past `ROWS_KEPT` rows or
`WALK_STEPS_KEPT` steps, a table starts over. Threads may fill and clear the tables at once:
readers take what they need into local names first, and two threads reading the same row store
the same value.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KeptReads", "ROWS_KEPT", "WALK_STEPS_KEPT"]

ROWS_KEPT = 20_000  # node rows as stored (about 1.5 KB each, parsed)
WALK_STEPS_KEPT = 100_000  # walk steps (about 0.35 KB each)


class KeptReads:
    """Node rows (None: no such node) and walk steps read from one state of a cache file."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any] | None] = {}
        self.walks: dict[str, list[tuple[float, str, str]]] = {}
        self._steps = 0

    def clear(self) -> None:
        """Hold nothing any more (the cache file moved on; views still holding this table, in
        threads not called since, read again, and drop it at their next call)."""
        self.rows.clear()
        self.walks.clear()
        self._steps = 0

    def make_room_for_rows(self, more: int) -> None:
        if len(self.rows) + more > ROWS_KEPT:
            self.rows.clear()

    def keep_walk(self, nid: str, steps: list[tuple[float, str, str]]) -> None:
        if self._steps + len(steps) > WALK_STEPS_KEPT:
            self.walks.clear()
            self._steps = 0
        self.walks[nid] = steps
        self._steps += len(steps)
