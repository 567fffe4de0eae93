"""How a scope's artifacts and caches are written safely (where they live: `vault_kg.storage.layout`).

Every write is atomic (temp file in the same folder, fsync, `os.replace`), so a crash mid-write
leaves the previous file intact. Writers of a scope serialize on `kg-out/.lock`; readers never lock.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from vault_kg.core.errors import KgError, StoreBusy

__all__ = ["LOCK_TIMEOUT_S", "OUT_GITIGNORE", "atomic_write", "ignored_folder", "dumps_json", "load_json", "scope_lock", "sweep_temp", "write_if_changed", "write_temp"]

_UMASK = os.umask(0)
os.umask(_UMASK)
LOCK_TIMEOUT_S = float(os.environ.get("KG_LOCK_TIMEOUT", "120"))
OUT_GITIGNORE = "# vault-kg artifacts: rebuildable, never committed or synced.\n*\n"


def atomic_write(path: Path, data: bytes | Sequence[bytes | memoryview]) -> None:
    """Replace `path` with `data` in one step; on any failure the old file stays as it was.

    A file that exists keeps its permission bits and, where this user may set them, its owner and
    group (a 0640 note stays 0640); a new file gets the usual 0666 minus the umask. A folder that
    vanished (`kg-out/` removed mid-build) or refuses the write is one clear line.
    """
    try:
        before = os.stat(path)
    except OSError:
        before = None
    try:
        tmp = write_temp(path, data, before)
    except FileNotFoundError as exc:
        raise KgError(f"{path.parent}: the folder disappeared while kg was writing {path.name} (removed by another program?); run the command again") from exc
    except OSError as exc:
        raise KgError(f"{path}: cannot write ({exc.strerror}); check the folder's permissions and free space, or pass --out") from exc
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def write_temp(path: Path, data: bytes | Sequence[bytes | memoryview], like: os.stat_result | None, prepare: Any = None) -> str:
    """A hidden temp file beside `path` holding `data` (fsynced), with the mode and, where this
    user may set them, the owner and group of `like` (the file it will replace); `prepare(fd)` runs
    before the data is written (the vault's writer copies extended attributes there). The caller
    renames it into place or unlinks it. Failures are `OSError`s as the system raised them."""
    import tempfile  # here: the paths that only read (a no-op update) never pay for it

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if like is not None and hasattr(os, "fchown") and (like.st_uid, like.st_gid) != (os.getuid(), os.getgid()):
                try:  # before the chmod: a chown clears the set-id bits
                    os.fchown(fd, like.st_uid, like.st_gid)
                except OSError:
                    pass  # only root may give a file away; the mode is kept all the same
            os.fchmod(fd, (like.st_mode & 0o7777) if like is not None else 0o666 & ~_UMASK)
            if prepare is not None:
                prepare(fd)
            for part in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data:  # parts: spliced, not copied
                handle.write(part)
            handle.flush()
            os.fsync(fd)
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def ignored_folder(folder: Path) -> Path:
    """`folder` (a scope's `kg-out/`), created with its own `.gitignore` so nothing in it is committed."""
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, OUT_GITIGNORE.encode())
    return folder


def sweep_temp(folder: Path, names: tuple[str, ...]) -> int:
    """Remove temp files a killed writer left behind (`.<name>.*.tmp`); call with the lock held."""
    removed = 0
    for name in names:
        for leftover in folder.glob(f".{name}.*.tmp"):
            try:
                leftover.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write only when the bytes differ, so a no-op update rewrites nothing."""
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except OSError:
        pass
    atomic_write(path, data)
    return True


@contextmanager
def scope_lock(layout: Any, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Serialize writers of one scope; a second `kg update` waits its turn instead of corrupting.

    An exclusive `flock` on `kg-out/.lock`, polled like filelock's (which other writers of the
    same file, such as `vault_kg.cli.noop_update`'s probe, agree with); filelock itself costs an
    agent's every edit more to import than the lock takes, so it is used only where there is no
    `fcntl` (Windows)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        with _filelock(layout, timeout):
            yield
        return
    fd = os.open(layout.lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _busy(layout, timeout) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def _busy(layout: Any, timeout: float) -> StoreBusy:
    return StoreBusy(f"{layout.lock}: another kg process has held this scope for {timeout:.0f}s; wait for it to finish or raise KG_LOCK_TIMEOUT")


@contextmanager
def _filelock(layout: Any, timeout: float) -> Iterator[None]:  # pragma: no cover - Windows
    from filelock import FileLock, Timeout

    lock = FileLock(str(layout.lock))
    try:
        lock.acquire(timeout=timeout)
    except Timeout as exc:
        raise _busy(layout, timeout) from exc
    try:
        yield
    finally:
        lock.release()


def dumps_json(data: Any, indent: bool = True) -> bytes:
    """Canonical JSON: sorted keys, trailing newline (byte-identical reruns); big files compact."""
    import orjson  # here, as `tempfile` above: a no-op update reads no JSON through the store

    option = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(data, option=option)  # the newline from orjson: no second copy of a big graph.json


def load_json(path: Path) -> Any:
    import orjson

    return orjson.loads(path.read_bytes())
