"""A full build reads and extracts its sources in worker processes, one per core (at most two).

Extraction is a pure function of a file's bytes (`ScopeAdapter.extract`), so the workers only
read and extract; the engine takes their answers in listing order and does everything else (the
passes, the cache) itself, exactly as it would have done them one by one: the same extractions
in the same order, whatever the number of workers. Only an adapter that says so
(`parallel_extract`) and a full rebuild of at least `MIN_SOURCES` files use them, and only from
a process with one thread (a fork copies one thread; the MCP server's builds stay serial).
`KG_EXTRACT_WORKERS=1` turns them off.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from vault_kg.core.safe_read import UnsafeFile, read_regular

__all__ = ["CHUNK", "MIN_SOURCES", "Read", "extracted", "read_source", "worker_count"]

MIN_SOURCES = 500  # below this, starting the workers costs more than they save
CHUNK = 64

Read = tuple[bytes | None, str | None, Any]  # (the bytes, or why they could not be read; the extraction)

_job: tuple[Any, Path] | None = None  # (adapter, root), set before the fork


def read_source(root: Path, rel: str, adapter: Any = None) -> tuple[bytes | None, str | None]:
    """A source's bytes, or None and the reason (a one-line fix) when it cannot be read; no bytes
    (`b""`) for a source the adapter extracts from its name alone (`reads`: a vault's images)."""
    reads = getattr(adapter, "reads", None)
    if reads is not None and not reads(rel):
        return b"", None
    try:
        return read_regular(root / rel, root=root, trust_folders=True), None
    except UnsafeFile as exc:  # swapped for a FIFO or an outside link since it was listed
        return None, f"{exc.strerror}; make it a regular file inside the scope or remove it"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror}); check its permissions"


def worker_count(sources: int, adapter: Any) -> int:
    """How many worker processes to extract `sources` files with (1: none, the caller does it)."""
    if sources < MIN_SOURCES or not getattr(adapter, "parallel_extract", False) or threading.active_count() > 1 or sys.platform == "win32":
        return 1
    setting = os.environ.get("KG_EXTRACT_WORKERS", "").strip()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    wanted = int(setting) if setting.isdigit() else min(2, cores)
    return max(1, wanted)


def extracted(adapter: Any, root: Path, rels: list[str], workers: int) -> Iterator[Read]:
    """Each of `rels` read and extracted, in order, by `workers` forked processes."""
    import multiprocessing

    global _job
    _job = (adapter, root)
    try:
        try:
            pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_started, initargs=(os.getpid(),))
        except OSError:  # no processes to be had (a ulimit, memory): the same work in this one
            yield from map(_read_and_extract, rels)
            return
        with pool:
            yield from pool.imap(_read_and_extract, rels, chunksize=CHUNK)
    finally:
        _job = None


def _worker_started(parent: int) -> None:
    """Ctrl-C is the build's to handle (it stops the workers); and a worker whose build was
    killed outright exits instead of waiting for work forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _read_and_extract(rel: str) -> Read:
    assert _job is not None
    adapter, root = _job
    data, reason = read_source(root, rel, adapter)
    return data, reason, None if data is None else adapter.extract(rel, data)
