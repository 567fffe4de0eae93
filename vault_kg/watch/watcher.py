"""Keep a vault's graph current while something runs: a file watcher feeding the one update route.

watchdog reports file events; `VaultWatcher` keeps those that can change the graph (`.md` files
outside dot-folders, `kg-out/` and the scanner's skipped folders), waits for a burst to go quiet
(`debounce` seconds, never more than `max_delay` after its first event) and hands the changed
paths to `engine.run(scope, paths)`, the route `kg update PATH` and the hooks take, then wakes the
model worker as they do. Batches run one at a time on one thread, so a burst of writes costs a
few updates, not one per write. A folder created, moved or deleted turns its batch into an
incremental update of the whole vault (`engine.run(scope)`: stat every note, read the changed).

One watcher per vault updates: the one holding `kg-out/watch.lock`. Another (a second `kg mcp`
on the same vault) stands by and, the first time it gets the lock, catches up with one
whole-vault incremental update; so does every watcher when it starts. Writers still queue on the
scope lock inside `engine.run`, so a watcher, the hooks and `kg update` never write at once.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from vault_kg.core.config import OUT_DIRNAME, inside
from vault_kg.storage.layout import Layout
from vault_kg.core.errors import KgError, StoreBusy
from vault_kg.core.scopes import Scope

DEBOUNCE_S = 0.5
MAX_DELAY_S = 5.0
BUSY_RETRY_S = 2.0
SERVER_STOP_S = 10.0  # an update still running then is abandoned: its writes are atomic
SKIP_DIRS = {OUT_DIRNAME, "node_modules", "__pycache__"}
_KINDS = {"created", "modified", "closed", "deleted", "moved"}


@dataclass
class Report:
    """What one update of a watcher did (or why it did nothing)."""

    scope: str
    paths: list[str]
    whole: bool
    extracted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    nodes: int = 0
    edges: int = 0
    seconds: float = 0.0
    notices: list[str] = field(default_factory=list)
    error: str | None = None
    at: float = field(default_factory=time.time)

    @property
    def changed(self) -> bool:
        return bool(self.extracted or self.removed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.at)),
            "scope": self.scope,
            "paths": self.paths,
            "whole_vault": self.whole,
            "extracted": self.extracted,
            "removed": self.removed,
            "nodes": self.nodes,
            "edges": self.edges,
            "seconds": round(self.seconds, 3),
            "notices": self.notices,
            "error": self.error,
        }


def format_report(report: Report) -> str:
    when = time.strftime("%H:%M:%S", time.localtime(report.at))
    if report.error:
        return f"{when} {report.scope}: {report.error}"
    what = "whole vault" if report.whole else f"{len(report.paths)} path(s)"
    return f"{when} updated {report.scope} ({what}): {len(report.extracted)} extracted · {len(report.removed)} removed · {report.nodes} nodes · {report.edges} edges · {report.seconds:.2f}s"


def note_path(root: Path, path: str) -> str | None:
    """The vault-relative path when `path` is a note the scanner reads, else None."""
    rel = inside(path, root)
    if rel is None or not rel.lower().endswith(".md"):
        return None
    return None if any(part in SKIP_DIRS for part in rel.split("/")[:-1]) else rel


def folder_counts(root: Path, path: str) -> bool:
    """A folder event that can add or remove notes (not one in kg-out/ or a dot-folder)."""
    rel = inside(path, root)
    return rel is not None and not any(part in SKIP_DIRS for part in rel.split("/"))


class VaultWatcher:
    """Watch one vault scope and keep its graph current; `start()`, then `stop()`.

    `on_report` gets a `Report` after every update (on the watcher's thread). `cfg` is the loaded
    configuration (the model worker is woken with it after an update that left notes pending).
    """

    def __init__(
        self,
        scope: Scope,
        on_report: Callable[[Report], None] | None = None,
        cfg: Any = None,
        debounce: float = DEBOUNCE_S,
        max_delay: float = MAX_DELAY_S,
    ) -> None:
        if scope.kind != "vault":
            raise KgError(f"scope '{scope.name}' is a code scope; `kg watch` keeps a vault current")
        self.scope = scope
        self.root = scope.root
        self.on_report = on_report or (lambda report: None)
        self.cfg = cfg
        self.debounce = debounce
        self.max_delay = max_delay
        self.updates = 0
        self._paths: set[str] = set()
        self._whole = False
        self._first = 0.0
        self._last = 0.0
        self._stopping = False
        self._wake = threading.Condition()
        self._lease: Any = None
        self._observer: Any = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start watching, and queue the catch-up update (what changed while nobody watched)."""
        from watchdog.observers import Observer

        handler = _Handler(self)
        self._observer = Observer()
        self._observer.schedule(handler, str(self.root), recursive=True)
        try:
            self._observer.start()
        except OSError as exc:  # inotify watch limit reached: poll instead (slower, still correct)
            from watchdog.observers.polling import PollingObserver

            self._observer = PollingObserver(timeout=1.0)
            self._observer.schedule(handler, str(self.root), recursive=True)
            self._observer.start()
            self.on_report(Report(self.scope.name, [], False, error=f"file events unavailable ({exc.strerror or exc}); polling every second instead"))
        self._thread = threading.Thread(target=self._loop, name=f"kg-watch-{self.scope.name}", daemon=True)
        self._thread.start()
        self.queue(None)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop watching; an update under way finishes first (its writes are atomic anyway)."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout)
        if self._thread is not None:
            self._thread.join(timeout)
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    def __enter__(self) -> "VaultWatcher":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- batching

    def queue(self, rel: str | None) -> None:
        """Add a changed note (None: the whole vault) to the next batch."""
        now = time.monotonic()
        with self._wake:
            if not self._paths and not self._whole:
                self._first = now
            self._last = now
            if rel is None:
                self._whole = True
            else:
                self._paths.add(rel)
            self._wake.notify_all()

    def _take(self) -> tuple[list[str], bool] | None:
        """Block until a batch is quiet for `debounce` (or `max_delay` old); None when stopping."""
        with self._wake:
            while not self._stopping:
                if not self._paths and not self._whole:
                    self._wake.wait()
                    continue
                now = time.monotonic()
                due = min(self._last + self.debounce, self._first + self.max_delay)
                if now < due:
                    self._wake.wait(due - now)
                    continue
                batch = (sorted(self._paths), self._whole)
                self._paths, self._whole = set(), False
                return batch
            return None

    def _loop(self) -> None:
        while True:
            batch = self._take()
            if batch is None:
                return
            paths, whole = batch
            try:
                self._update(paths, whole)
            except StoreBusy:
                for rel in paths:
                    self.queue(rel)
                if whole:
                    self.queue(None)
                time.sleep(BUSY_RETRY_S)
            except Exception as exc:  # a watcher outlives one bad update: say it, keep watching
                self.on_report(Report(self.scope.name, paths, whole, error=f"{type(exc).__name__}: {exc}"))

    # ---------------------------------------------------------------- updating

    def _holds_lease(self) -> bool | None:
        """True: this watcher updates; None: it just became the updater; False: another one is."""
        if self._lease is not None:
            return True
        from filelock import FileLock, Timeout

        lease = FileLock(str(Layout(self.scope.out).watch_lease), thread_local=False)  # released by stop(), on another thread
        try:
            lease.acquire(timeout=0)
        except Timeout:
            return False
        self._lease = lease
        return None

    def _update(self, paths: list[str], whole: bool) -> None:
        from vault_kg import api

        if not Layout(self.scope.out).cache_db.exists():
            self.on_report(Report(self.scope.name, paths, whole, error=f"no graph yet at {self.scope.out}; run `kg build` (watching anyway)"))
            return
        held = self._holds_lease()
        if held is False:
            return
        whole = whole or held is None
        # a long-lived process: the model worker starts now (when the watcher was given the config)
        [result] = api.update_runs([self.scope], None if whole else [self.root / rel for rel in paths], long_lived=True, cfg=self.cfg, wake_model=self.cfg is not None)
        self.updates += 1
        self.on_report(
            Report(
                self.scope.name,
                paths,
                whole,
                result.extracted,
                result.removed,
                result.nodes,
                result.edges,
                result.seconds,
                list(result.notices),
            )
        )


class _Handler:
    """watchdog's callback: keep the events that can change the graph, queue them."""

    def __init__(self, watcher: VaultWatcher) -> None:
        self.watcher = watcher

    def dispatch(self, event: Any) -> None:
        if event.event_type not in _KINDS:
            return
        root = self.watcher.root
        paths = [event.src_path, *([event.dest_path] if event.event_type == "moved" else [])]
        for path in (os.fsdecode(p) for p in paths):
            if event.is_directory:
                if event.event_type != "modified" and folder_counts(root, path):
                    self.watcher.queue(None)
                continue
            rel = note_path(root, path)
            if rel is not None:
                self.watcher.queue(rel)


def watch_vault(
    scope: Scope,
    on_report: Callable[[Report], None],
    cfg: Any,
    timeout: float | None = None,
    once: bool = False,
    debounce: float = DEBOUNCE_S,
) -> int:
    """`kg watch`: watch in the foreground until Ctrl-C, SIGTERM, `timeout` seconds, or (`once`)
    the first update that changed the graph. Returns the number of updates run."""
    done = threading.Event()

    def report(item: Report) -> None:
        on_report(item)
        if once and item.changed:
            done.set()

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: done.set()) if main else None
    watcher = VaultWatcher(scope, report, cfg, debounce=debounce)
    try:
        watcher.start()
        try:
            done.wait(timeout)
        except KeyboardInterrupt:
            pass
    finally:
        watcher.stop()
        if main:
            signal.signal(signal.SIGTERM, previous)
    return watcher.updates


def server_lifespan(vault: Path | None) -> Callable[[Any], Any]:
    """A FastMCP lifespan: the MCP server watches its vault while it runs (`KG_WATCH=off`: not).

    No vault configured, or one not built yet: the server runs without a watcher."""

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[dict[str, Any]]:
        import anyio.to_thread

        watcher = None if os.environ.get("KG_WATCH", "").strip().lower() in ("off", "0", "false", "no") else _server_watcher(vault)
        try:
            yield {}
        finally:
            if watcher is not None:  # a client closing the server should not wait long
                await anyio.to_thread.run_sync(lambda: watcher.stop(timeout=SERVER_STOP_S))

    return lifespan


def _server_watcher(vault: Path | None) -> VaultWatcher | None:
    from vault_kg.core.config import load_config
    from vault_kg.core.scopes import vault_scope

    try:
        cfg = load_config()
        watcher = VaultWatcher(vault_scope(vault, cfg=cfg), cfg=cfg)
        watcher.start()
    except (KgError, OSError):
        return None
    return watcher
