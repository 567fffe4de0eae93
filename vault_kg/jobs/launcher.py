"""The one way kg starts detached work: spawn, lock, log, stop, status.

Five jobs run outside the process that asked for them, so no update, hook or command waits on
them: the model worker (`model_worker`), the clustering (`clustering`), graph.html's render
(`html_render`), the reconcile after a session start (`reconcile`) and the journal note's update
after a session end (`reconcile.index_later`). Each is started here (`spawn`: its own session,
stdin closed or fed, its output appended to its log under `kg-out/`), holds its own lock while it
works (`lock_held` tells whether one does; `one_runs_one_waits` keeps a burst to one running and
one waiting), says at exit what it cost (`reported`), and can be stopped (`stop`).
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["CHECKOUT", "LINE", "jobs_in", "lock_held", "one_runs_one_waits", "reported", "spawn", "stop"]

CHECKOUT = Path(__file__).resolve().parents[2]  # where `python -m vault_kg...` and `-m hooks...` resolve
LINE = re.compile(r"^kg job (?P<name>[\w.-]+): (?P<wall>[\d.]+) s wall, (?P<cpu>[\d.]+) s CPU$", re.M)


def spawn(args: list[str], log: Path | None = None, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start `python ARGS` detached (its own session, no inherited descriptors), its output appended
    to `log` (discarded when None), its stdin closed or fed `stdin`; return at once."""
    sink = log.open("ab") if log is not None else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            [sys.executable, *args],
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            start_new_session=True,
            close_fds=True,
            cwd=str(cwd) if cwd is not None else None,
        )
    finally:
        if log is not None:
            sink.close()  # type: ignore[union-attr]
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
    return proc


def lock_held(path: Path) -> bool:
    """Whether another process holds the lock file `path` (probed without waiting; a `flock`, which
    filelock's locks agree with, so a hook asking never imports filelock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return _filelock_held(path)
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False  # never taken
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the probe's lock
    return False


def _filelock_held(path: Path) -> bool:  # pragma: no cover - Windows
    from filelock import FileLock, Timeout

    probe = FileLock(str(path))
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    probe.release()
    return False


@contextmanager
def one_runs_one_waits(lock: Path, waiting: Path, timeout: float = 600, tried: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold `lock` for the block (True), queuing behind a running job on `waiting`; False (and
    the block does nothing) when another job already waits, since it will see the newest state.
    `tried` runs once the place in the queue is taken or refused (the clustering drops its marker)."""
    from filelock import FileLock, Timeout

    queued = FileLock(str(waiting))
    try:
        queued.acquire(timeout=0)
    except Timeout:
        yield False
        return
    finally:
        if tried is not None:
            tried()
    try:
        with FileLock(str(lock), timeout=timeout):
            queued.release()
            yield True
    finally:
        if queued.is_locked:
            queued.release()


@contextmanager
def reported(name: str) -> Iterator[None]:
    """Print the block's wall time and the process's CPU time (its children's too) when it ends:
    one line per job in its log, `kg job communities: 0.84 s wall, 0.61 s CPU` (benches read it)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        cpu = sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for field in ("ru_utime", "ru_stime"))
        print(f"kg job {name}: {time.perf_counter() - started:.3f} s wall, {cpu:.3f} s CPU", flush=True)


def jobs_in(log: Path, offset: int = 0) -> list[tuple[str, float, float]]:
    """(name, wall s, CPU s) of each job line in `log` past `offset` bytes."""
    try:
        with log.open("rb") as handle:
            handle.seek(offset)
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [(m["name"], float(m["wall"]), float(m["cpu"])) for m in LINE.finditer(text)]


def stop(pid: int, still: Callable[[], object], timeout: float = 15.0) -> bool | None:
    """SIGTERM `pid`, then SIGKILL after `timeout` while `still()` says it runs: True when it had
    to be killed, False when it stopped, None when it was gone already."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return None
    deadline = time.monotonic() + timeout
    while still() and time.monotonic() < deadline:
        time.sleep(0.1)
    killed = False
    if still():
        try:
            os.kill(pid, signal.SIGKILL)
            killed = True
        except ProcessLookupError:
            pass
        while still() and time.monotonic() < deadline + 5:
            time.sleep(0.05)
    return killed
