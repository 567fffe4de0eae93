"""Passage vectors under `kg-out/vectors/`: one file per embedder, and the job's passage list.

A store is one safetensors file (`<embedder>.safetensors`): a float16 matrix, one row per embedded
passage, and in its header the row keys (the passage's node, first and last line, the digest of
the text it was embedded from). Rows are in passage order (sources by path, then by position), and
the file is rewritten whole through a temporary file and a rename, so it is byte-stable: a store
brought up to date edit by edit equals one built from scratch, and a reader sees the old file or
the new one, never half of either. Any number of processes read it at once (measured against
sqlite-vec and Milvus Lite in docs/benchmarks/retrieval_research_stores.md: numpy over a stored
matrix was the fastest to write, open and query at this size, and needs no server).

`passages.json` is the background job's record of what each source was cut into (its content
hash and passage keys), so the next run re-cuts only the sources that changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from vault_kg.core.store import atomic_write

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FORMAT", "Manifest", "Row", "Stored", "load_manifest", "read_store", "store_stamp", "write_manifest", "write_store"]

FORMAT = 1
Row = tuple[str, int, int, str]  # node, first line, last line, digest


@dataclass
class Stored:
    """One embedder's vectors: `matrix[i]` is the vector of `rows[i]`."""

    embedder: str
    rows: list[Row]
    matrix: np.ndarray  # float16, (len(rows), dim)

    def by_digest(self) -> dict[str, int]:
        return {row[3]: i for i, row in enumerate(self.rows)}


def write_store(path: Path, embedder: str, rows: list[Row], matrix: np.ndarray) -> bool:
    """Write the store (float16) atomically; False when the file already holds exactly this."""
    import numpy as np
    from safetensors.numpy import save

    data = np.ascontiguousarray(matrix, dtype=np.float16).reshape(len(rows), -1)
    header = orjson.dumps({"format": FORMAT, "embedder": embedder, "rows": [list(r) for r in rows]}).decode()
    payload = save({"vectors": data}, metadata={"kg": header})
    try:
        if path.stat().st_size == len(payload) and path.read_bytes() == payload:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, payload)
    return True


def read_store(path: Path, embedder: str) -> Stored | None:
    """The store at `path`, or None when there is none or it is not one this version wrote."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="numpy") as opened:
            header = orjson.loads((opened.metadata() or {}).get("kg", "{}"))
            if header.get("format") != FORMAT or header.get("embedder") != embedder:
                return None
            matrix = opened.get_tensor("vectors")
    except (OSError, SafetensorError, orjson.JSONDecodeError, ValueError):
        return None
    rows = [(str(n), int(a), int(b), str(d)) for n, a, b, d in header.get("rows", [])]
    if matrix.ndim != 2 or matrix.shape[0] != len(rows):
        return None
    return Stored(embedder, rows, matrix)


def store_stamp(path: Path) -> tuple[int, int] | None:
    """(mtime in ns, size) of a store file: a reader holding it re-reads when this changes."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


@dataclass
class Manifest:
    """What each source was cut into: its content hash and its passages' keys, in order."""

    sources: dict[str, tuple[str, list[Row]]] = field(default_factory=dict)

    def rows(self) -> list[Row]:
        """Every passage's key, sources in path order."""
        return [row for rel in sorted(self.sources) for row in self.sources[rel][1]]


def load_manifest(path: Path) -> Manifest:
    """The job's record (empty when missing, unreadable or of another format: everything is re-cut)."""
    try:
        raw: Any = orjson.loads(path.read_bytes())
        if raw.get("format") != FORMAT:
            return Manifest()
        return Manifest({rel: (str(h), [(str(n), int(a), int(b), str(d)) for n, a, b, d in rows]) for rel, (h, rows) in raw["sources"].items()})
    except (OSError, orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return Manifest()


def write_manifest(path: Path, manifest: Manifest) -> None:
    data = {"format": FORMAT, "sources": {rel: [h, [list(r) for r in rows]] for rel, (h, rows) in sorted(manifest.sources.items())}}
    payload = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    try:
        if path.read_bytes() == payload:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, payload)
