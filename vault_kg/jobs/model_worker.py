"""The model worker: one detached background process per vault that asks the local model about
the notes the graph marks `pending`, and merges the answers into the graph.

Builds, updates and hooks never call the model: they mark changed notes pending and `wake()` the
worker, which costs a file lock probe and, when no worker runs, one `Popen`; nothing here is
imported that a hook would not already have. The worker:

- holds `kg-out/llm/worker.lock` (an flock: at most one worker per vault, released by the
  kernel even after `kill -9`) and runs at low priority (`os.nice`), in its own session;
- checks Ollama once (`preflight`); when it is down or the model is missing it records the cause
  with a growing back-off, and exits (hooks and updates do not restart it before that time);
- takes pending notes recently edited first, then by rank, and calls the model with no scope
  lock held; every chunk answer goes to the answer cache the moment it arrives, so a killed
  worker loses at most the call in flight, and the next one resumes from the cache;
- merges finished notes with short incremental updates (`engine.run(paths, refresh=True)`, every
  BATCH_NOTES notes or BATCH_SECONDS seconds), which take the scope lock briefly;
- backs a failing note off (growing delay, kept in `kg-out/llm/state.json`), and exits when
  nothing is pending or everything left is backing off.

`kg llm status / run / stop` and `kg build --wait` read and drive it through this module.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from vault_kg.jobs.launcher import CHECKOUT, spawn
from vault_kg.storage.layout import Layout
from vault_kg.jobs.launcher import stop as end

__all__ = [
    "BATCH_NOTES",
    "BATCH_SECONDS",
    "CONSECUTIVE_FAILURES_TO_STOP",
    "DOWN_BACKOFF_S",
    "LOG_MAX_BYTES",
    "NOTE_BACKOFF_S",
    "RATE_WINDOW",
    "RECENT_SLACK_S",
    "Worker",
    "after_update",
    "counts",
    "notice",
    "pending_notes",
    "rate_per_minute",
    "read_state",
    "run_worker",
    "running",
    "status",
    "stop",
    "update_state",
    "wake",
    "worker_dir",
]

BATCH_NOTES = 25
BATCH_SECONDS = 15.0
DOWN_BACKOFF_S = (30.0, 3600.0)  # first delay, cap: doubles with each failed start
NOTE_BACKOFF_S = (120.0, 86400.0)  # first delay, cap: times four with each failure of a note
CONSECUTIVE_FAILURES_TO_STOP = 3
RECENT_SLACK_S = 300.0
RATE_WINDOW = 50
LOG_MAX_BYTES = 1_000_000


def worker_dir(out: Path) -> Path:
    return Layout(Path(out)).model_worker


# ------------------------------------------------------------------------------- state file


def read_state(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((Layout(Path(out)).worker_state).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@contextmanager
def _state_lock(out: Path) -> Iterator[None]:
    folder = worker_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    with open(Layout(Path(out)).worker_state_lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def update_state(out: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Read-modify-write of `state.json` under its own lock, replaced atomically."""
    with _state_lock(out):
        state = read_state(out)
        change(state)
        path = Layout(Path(out)).worker_state
        tmp = path.with_name(f".state.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
        return state


# ------------------------------------------------------------------------------- the lock


def running(out: Path) -> int | None:
    """The pid of the worker that holds this vault's lock, or None when none runs."""
    path = Layout(Path(out)).worker_lock
    try:
        handle = open(path, "r")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            text = handle.read().strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def _acquire(out: Path) -> Any:
    """The open, flocked lock file, or None when another worker holds it."""
    folder = worker_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(Layout(Path(out)).worker_lock, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


# ------------------------------------------------------------------------------- waking it


def wake(root: Path, out: Path, force: bool = False, after_exit: bool = False) -> str:
    """Start the worker unless one runs, it was stopped, or Ollama is backing off ("started",
    "running", "stopped", "backing off"). `force` (`kg llm run`) clears the stop and back-offs.
    `after_exit` (hooks): the worker takes its lock at once but starts working only once this
    process has exited, so a hook never shares the machine, or the model server, with it."""
    if running(out):
        return "running"
    now = time.time()
    if force:

        def clear(state: dict[str, Any]) -> None:
            state["paused"] = False
            state.pop("down", None)
            for failure in (state.get("failures") or {}).values():
                failure["next_try"] = now

        update_state(out, clear)
    else:
        state = read_state(out)
        if state.get("paused"):
            return "stopped"
        if (state.get("down") or {}).get("until", 0) > now:
            return "backing off"
    log = Layout(Path(out)).worker_log
    log.parent.mkdir(parents=True, exist_ok=True)
    if log.exists() and log.stat().st_size > LOG_MAX_BYTES:
        os.replace(log, log.with_suffix(".log.1"))
    spawn(["-m", "vault_kg.jobs.model_worker", str(root), str(out), *([str(os.getpid())] if after_exit else [])], log=log, cwd=CHECKOUT)
    return "started"


def after_update(scope: Any, result: Any, cfg: Any, explicit: bool = False, hook: bool = True) -> str | None:
    """What builds, updates and hooks call after `engine.run`: wake the worker when this run left
    notes pending and changed something (a no-op update never starts it), or when the user asked
    for a build (`explicit`). With `hook` (the default) the worker waits for this process to exit
    before it works; a caller that then waits for the worker (`--wait`) passes False."""
    if scope.kind != "vault" or not cfg.ollama_enabled or not result.pending:
        return None
    if not (explicit or result.extracted or result.removed):
        return None
    return wake(scope.root, scope.out, after_exit=hook)


PROBE_TIMEOUT_S = 0.25  # a refused local port answers in well under a millisecond; this bounds a silent remote host


def reachable(host: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether anything accepts a TCP connection where Ollama should listen (no request is sent)."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(host if "://" in host else f"http://{host}")
        address = (parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 11434))
        with socket.create_connection(address, timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def unreachable_cause(host: str) -> str:
    return f"Ollama is not reachable at {host}: run `ollama serve` (or set OLLAMA_HOST)"


def down_cause(out: Path, host: str | None) -> tuple[str | None, float]:
    """Why the model pass cannot run now, and until when the worker waits (0: no retry is set):
    the worker's last finding, else a connection probe of `host` (None: not probed)."""
    down = read_state(out).get("down") or {}
    if down.get("cause"):
        return down["cause"], float(down.get("until") or 0)
    if host is not None and not reachable(host):
        return unreachable_cause(host), 0.0
    return None, 0.0


def notice(out: Path, pending: int, host: str | None = None, always: bool = False) -> str | None:
    """One line about why notes stay pending: once per cause (not on every update), or `always`
    (after `kg build`). With `host`, a cause the worker has not found yet (the first build) is
    found by a connection probe, which costs a millisecond."""
    if not pending:
        return None
    state = read_state(out)
    if not always and host is not None and not state.get("down") and state.get("warned") == unreachable_cause(host):
        return None  # said already; no probe on every no-op update
    cause, until = down_cause(out, host)
    if not cause or (not always and read_state(out).get("warned") == cause):
        return None
    update_state(out, lambda s: s.update(warned=cause))
    when = f"retried after {time.strftime('%H:%M', time.localtime(until))} or with `kg llm run`" if until else "retried by `kg llm run` or the next update"
    return f"model pass: {cause}; {pending} note(s) wait for it (the rest of the graph is complete), {when}"


def stop(out: Path, timeout: float = 15.0) -> dict[str, Any]:
    """Stop the worker (SIGTERM: it merges what it finished; SIGKILL after `timeout`), and keep it
    stopped until `kg llm run`."""
    update_state(out, lambda s: s.update(paused=True))
    pid = running(out)
    if not pid or pid < 0:
        return {"stopped": False, "pid": None}
    killed = end(pid, lambda: running(out), timeout)
    return {"stopped": True, "pid": pid} if killed is None else {"stopped": True, "pid": pid, "killed": killed}


# ------------------------------------------------------------------------------- status


def counts(out: Path) -> dict[str, int] | None:
    """Answered and pending notes as the graph last recorded them; None when the scope is unbuilt."""
    from vault_kg.storage.cache import peek_meta
    from vault_kg.storage.layout import Layout

    db = Layout(Path(out)).cache_db
    if not db.is_file():
        return None
    data = peek_meta(db, "llm_counts") or {}
    return {"answered": int(data.get("answered", 0)), "pending": int(data.get("pending", 0))}


def rate_per_minute(state: dict[str, Any], now: float | None = None) -> float | None:
    """Notes per minute over the last notes that needed a call (None: too few, or stale)."""
    recent = state.get("recent") or []
    now = now or time.time()
    if len(recent) < 2 or now - recent[-1] > 900:
        return None
    span = recent[-1] - recent[0]
    return (len(recent) - 1) / span * 60 if span > 0 else None


def state_line(out: Path, cfg: Any) -> str:
    """The model pass in one line, for `kg stats`: off, down and why, or how far it got."""
    if not cfg.ollama_enabled:
        return "model pass: off ([ollama] enabled = false or KG_OLLAMA=off); the graph is the deterministic one"
    found = counts(out) or {"answered": 0, "pending": 0}
    cause, _ = down_cause(out, cfg.ollama_host) if found["pending"] else (None, 0.0)
    where = f"{cfg.ollama_model} at {cfg.ollama_host}"
    progress = f"{found['answered']} notes done, {found['pending']} waiting"
    return f"model pass: {cause}; {progress}" if cause else f"model pass: {where}; {progress}" + (" (the worker is running)" if running(out) else "")


def status(scope: Any, cfg: Any) -> dict[str, Any]:
    """Everything `kg llm status` shows."""
    out = scope.out
    state = read_state(out)
    now = time.time()
    found = counts(out)
    failures = state.get("failures") or {}
    waiting = sorted(
        ({"note": rel, "error": f.get("error", ""), "attempts": f.get("attempts", 0), "next_try": f.get("next_try", 0)} for rel, f in failures.items() if f.get("next_try", 0) > now),
        key=lambda f: f["note"],
    )
    pid = running(out)
    rate = rate_per_minute(state, now)
    pending = found["pending"] if found else 0
    down = state.get("down") or {}
    return {
        "enabled": cfg.ollama_enabled,
        "model": cfg.ollama_model,
        "host": cfg.ollama_host,
        "built": found is not None,
        "done": found["answered"] if found else 0,
        "pending": pending,
        "failed": waiting,
        "worker": {"running": bool(pid), "pid": pid if pid and pid > 0 else None, "stopped": bool(state.get("paused"))},
        "rate_per_min": round(rate, 2) if rate else None,
        "eta_s": round(pending / rate * 60) if rate and pending else None,
        "calls": state.get("calls", 0),
        "last_error": down.get("cause") or state.get("last_error") or (None if not pending or reachable(cfg.ollama_host) else unreachable_cause(cfg.ollama_host)),
        "retry_at": down.get("until") if down.get("until", 0) > now else None,
    }


# ------------------------------------------------------------------------------- the worker


class _Stop(Exception):
    """SIGTERM: finish the merge, then exit."""


def _order(rows: list[tuple[str, float, int]], since: float) -> list[str]:
    """Recently edited first (newest first), then by rank, then by path."""
    recent = sorted((r for r in rows if r[2] / 1e9 >= since), key=lambda r: (-r[2], r[0]))
    rest = sorted((r for r in rows if r[2] / 1e9 < since), key=lambda r: (-(r[1] or 0.0), r[0]))
    return [r[0] for r in recent + rest]


def pending_notes(out: Path) -> list[tuple[str, float, int]]:
    """(note path, rank, mtime in ns) of every note waiting for its answer: the notes the graph
    marks pending, and the stale ones whose extraction still waits (stale outranks pending in a
    note's status, and a stale note would otherwise never be answered)."""
    from vault_kg.storage.light_reads import note_rows_waiting

    return [(rel, rank, mtime) for rel, rank, mtime, status, llm in note_rows_waiting(out) if status == "pending" or llm.get("status") == "pending"]


class Worker:
    """The loop of one worker process (also run in-process by tests through `drain`)."""

    def __init__(self, root: Path, out: Path, cfg: Any, log: Callable[[str], None] = lambda line: None) -> None:
        from extract.llm import OllamaExtractor
        from extract.llm_cache import cache_dir_for

        self.root, self.out, self.cfg, self.log = Path(root), Path(out), cfg, log
        self.started = time.time()
        self.extractor = OllamaExtractor(
            cfg.ollama_host,
            cfg.ollama_model,
            timeout=cfg.ollama_timeout,
            cache_dir=cache_dir_for(self.out),
            num_ctx=cfg.ollama_num_ctx,
            note_budget_s=cfg.ollama_note_budget_s,
        )
        self.merging = False
        self.stopping = False
        self.consecutive_failures = 0
        self.batch: list[str] = []
        self.last_merge = time.monotonic()
        self.done: dict[str, int] = {}  # note -> the mtime it had when answered (or when it failed)

    # the graph -------------------------------------------------------------------------------
    def scope(self) -> Any:
        from vault_kg.core.scopes import Scope

        return Scope("vault", "vault", self.root, self.out)

    def merge(self, everything: bool = False) -> None:
        """Fold the answered notes into the graph: a short incremental update under the scope lock."""
        if not self.batch and not everything:
            return
        from vault_kg.update.engine import run
        from vault_kg.update.run_state import RunSettings

        self.merging = True
        try:
            paths = None if everything else [self.root / rel for rel in self.batch]
            result = run(self.scope(), paths=paths, refresh=not everything, settings=RunSettings(html_later=True))  # the page is drawn when someone looks
            self.log(f"merged {len(self.batch)} note(s): {result.pending} pending, {result.seconds:.2f}s")
            merged, self.batch = set(self.batch), []
            self.last_merge = time.monotonic()
        finally:
            self.merging = False
        for rel, _, mtime in pending_notes(self.out):
            if rel in merged and self.done.get(rel) == mtime:  # engine and worker disagree on its prompts
                self._failed(rel, "answers are cached but the graph still marks the note pending; please report this with the note")
        if self.stopping:
            raise _Stop()

    def queue(self) -> list[str]:
        now = time.time()
        failures = read_state(self.out).get("failures") or {}

        def due(rel: str, mtime: int) -> bool:
            failure = failures.get(rel)
            return failure is None or failure.get("next_try", 0) <= now or mtime != failure.get("mtime")

        rows = [r for r in pending_notes(self.out) if self.done.get(r[0]) != r[2] and due(r[0], r[2])]
        return _order(rows, self.started - RECENT_SLACK_S)

    # one note --------------------------------------------------------------------------------
    def process(self, rel: str) -> tuple[str, int, float, int]:
        """Ask about every chunk of one note not yet in the cache: (note, calls, seconds, mtime)."""
        from extract.llm import new_stats
        from extract.llm_pass import decode
        from extract.notes import MAX_NOTE_BYTES, extract_note

        from vault_kg.core.safe_read import open_regular

        path = self.root / rel
        started = time.monotonic()
        try:  # the one reader: a regular file inside the vault (never a FIFO, never a link out), bounded
            with open_regular(path, root=self.root) as handle:
                st = os.fstat(handle.fileno())
                data = handle.read(MAX_NOTE_BYTES + 1)
        except FileNotFoundError:
            return rel, 0, 0.0, 0  # gone: the merge removes it
        ext = extract_note(rel, data)
        if ext.quarantine:
            return rel, 0, 0.0, st.st_mtime_ns
        plan = self.extractor.plan(ext.meta.get("title") or Path(rel).stem, decode(data))
        stats = new_stats()
        self.extractor.answer(plan, stats)
        return rel, stats["calls"], time.monotonic() - started, st.st_mtime_ns

    # bookkeeping -----------------------------------------------------------------------------
    def _done(self, rel: str, calls: int, mtime: int) -> None:
        self.done[rel] = mtime
        self.batch.append(rel)
        self.consecutive_failures = 0
        now = time.time()

        def change(state: dict[str, Any]) -> None:
            state["processed"] = state.get("processed", 0) + 1
            state["calls"] = state.get("calls", 0) + calls
            state["heartbeat"] = now
            state["last_note"] = rel
            (state.get("failures") or {}).pop(rel, None)
            if calls:
                state["recent"] = (state.get("recent") or [])[-(RATE_WINDOW - 1) :] + [now]

        update_state(self.out, change)

    def _failed(self, rel: str, message: str) -> None:
        from vault_kg.core.secrets import redact

        message = redact(message)  # kept in state.json and shown by `kg llm status`
        self.consecutive_failures += 1
        now = time.time()
        try:
            mtime = (self.root / rel).stat().st_mtime_ns
        except OSError:
            mtime = 0
        self.done[rel] = mtime
        self.log(f"{rel}: {message}")

        def change(state: dict[str, Any]) -> None:
            failures = state.setdefault("failures", {})
            attempts = failures.get(rel, {}).get("attempts", 0) + 1
            delay = min(NOTE_BACKOFF_S[0] * 4 ** (attempts - 1), NOTE_BACKOFF_S[1])
            failures[rel] = {"attempts": attempts, "next_try": now + delay, "error": message, "mtime": mtime}
            state["last_error"] = f"{rel}: {message}"

        update_state(self.out, change)

    def _down(self, cause: str) -> None:
        now = time.time()
        self.log(f"stopping: {cause}")

        def change(state: dict[str, Any]) -> None:
            count = (state.get("down") or {}).get("count", 0) + 1
            delay = min(DOWN_BACKOFF_S[0] * 2 ** (count - 1), DOWN_BACKOFF_S[1])
            state["down"] = {"cause": cause, "since": now, "until": now + delay, "count": count}

        update_state(self.out, change)

    # the loop --------------------------------------------------------------------------------
    def drain(self) -> str:
        """Work until nothing is pending (or everything left backs off); the reason it stopped."""
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        from extract.llm import ModelDown, NoteFailed

        before = self.extractor.cache.last_digest(self.cfg.ollama_model) if self.extractor.cache else None
        problem = self.extractor.preflight()
        if problem:
            self._down(problem)
            return problem
        update_state(self.out, lambda s: (s.pop("down", None), s.pop("warned", None)))
        if before is not None and before != self.extractor.digest:
            self.log(f"model digest changed ({before[:19]} -> {str(self.extractor.digest)[:19]}): every answer is asked again")
            self.merge(everything=True)
        parallel = max(1, int(self.cfg.ollama_parallel))
        pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="kg-llm")
        inflight: dict[Any, str] = {}
        reason = "nothing pending"
        try:
            todo = self.queue()
            while True:
                while len(inflight) < parallel and todo and not self.stopping:
                    rel = todo.pop(0)
                    if rel not in inflight.values():
                        inflight[pool.submit(self.process, rel)] = rel
                if not inflight:
                    self.merge()
                    todo = self.queue()
                    if not todo:
                        break
                    continue
                finished, _ = wait(list(inflight), timeout=BATCH_SECONDS, return_when=FIRST_COMPLETED)
                down = None
                for future in finished:
                    rel = inflight.pop(future)
                    try:
                        _, calls, _, mtime = future.result()
                        self._done(rel, calls, mtime)
                    except ModelDown as exc:
                        down = str(exc)
                    except NoteFailed as exc:
                        self._failed(rel, str(exc))
                    except OSError as exc:
                        self._failed(rel, f"not read ({exc.strerror or exc})")
                    except Exception as exc:  # anything else fails this note (with its back-off), never the worker
                        self._failed(rel, f"{type(exc).__name__}: {exc}")
                if down or self.consecutive_failures >= CONSECUTIVE_FAILURES_TO_STOP:
                    reason = down or f"{CONSECUTIVE_FAILURES_TO_STOP} notes failed in a row; last: {read_state(self.out).get('last_error', '')}"
                    for future in list(inflight):
                        future.cancel()
                    wait(list(inflight))
                    for future, rel in list(inflight.items()):
                        if not future.cancelled() and future.exception() is None:
                            self._done(rel, future.result()[1], future.result()[3])
                    inflight.clear()
                    self.merge()
                    self._down(reason)
                    return reason
                if len(self.batch) >= BATCH_NOTES or (self.batch and time.monotonic() - self.last_merge >= BATCH_SECONDS):
                    self.merge()
                    todo = self.queue()
            return reason
        finally:
            pool.shutdown(wait=not self.stopping, cancel_futures=True)

    def collect(self) -> int:
        """Drop cached answers no answered note uses (only when nothing is pending)."""
        from vault_kg.storage.light_reads import sources_llm_status

        if self.extractor.cache is None:
            return 0
        live: set[str] = set()
        for llm in sources_llm_status(self.out):
            if llm.get("status") == "pending":
                return 0
            live.update(llm.get("keys") or ())
        return self.extractor.cache.collect(live)


def run_worker(root: Path, out: Path, after: int | None = None) -> int:
    """The detached process: take the lock or leave; wait for the hook that started it (`after`)
    to exit; work; merge; release."""
    handle = _acquire(out)
    if handle is None:
        return 0
    deadline = time.monotonic() + 120
    while after is not None and os.getppid() == after and time.monotonic() < deadline:
        time.sleep(0.02)
    os.nice(10)

    def log(line: str) -> None:
        sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {line}\n")
        sys.stderr.flush()

    worker: Worker | None = None

    def on_term(signum: int, frame: Any) -> None:
        if worker is not None:
            worker.stopping = True
            if not worker.merging:
                raise _Stop()

    signal.signal(signal.SIGTERM, on_term)
    update_state(out, lambda s: s.update(pid=os.getpid(), started=time.time(), heartbeat=time.time()))
    try:
        from vault_kg.core.config import load_config

        cfg = load_config()
        if not cfg.ollama_enabled:
            return 0
        worker = Worker(root, out, cfg, log)
        log(f"started: {cfg.ollama_model} at {cfg.ollama_host}, {cfg.ollama_parallel} in flight")
        reason = worker.drain()
        log(f"exiting: {reason}")
        if reason == "nothing pending" and not pending_notes(out):
            removed = worker.collect()
            if removed:
                log(f"collected {removed} unused cached answer(s)")
    except _Stop:
        log("stopped (SIGTERM)")
        try:
            if worker is not None and worker.batch:
                worker.merging = True
                worker.stopping = False
                worker.merge()
        except Exception as exc:  # the answers stay cached; the next worker merges them
            log(f"merge on stop failed: {exc}")
        update_state(out, lambda s: s.update(pid=None))
        handle.close()
        os._exit(0)  # in-flight calls are abandoned: their answers were not complete
    except Exception as exc:
        import traceback

        log(f"failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        failure = f"worker failed: {type(exc).__name__}: {exc} (see {Layout(Path(out)).worker_log})"
        update_state(out, lambda s: s.update(last_error=failure))
        return 1
    finally:
        update_state(out, lambda s: s.update(pid=None))
    return 0


if __name__ == "__main__":
    from vault_kg.core.secrets import redact_output

    redact_output()  # its output is its log under kg-out/
    sys.exit(run_worker(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else None))
