"""The one way kg changes a file in the vault: one kg writer per file at a time, the change
re-applied to what is on disk now, atomic, and the file keeps its mode, owner and extended
attributes.

Writers race: eight MCP calls appending to one note, `kg journal add` beside a session-end hook,
an agent's edit while the user's editor saves the same note. A plain read-modify-write keeps only
the last writer's line. :func:`rewrite` takes a *change* (a function from the file's current text
to its new text) rather than a text, and:

1. serialises kg's own writers of the file across processes (an `flock` on one of
   `LOCK_STRIPES` lock files under `<vault>/kg-out/locks/`, chosen by the file's real path, so
   two names of one file share a lock; a thread that holds it may take it again);
2. reads the file (through `safe_read`: a regular file inside the vault, bounded), applies the
   change, and writes the result to a temp file beside it with the file's mode, owner and
   extended attributes;
3. reads the file once more: when another program changed it meanwhile, the change is applied
   again to the new text (an append appends; an exact-string edit applies if its text is still
   there, else the change refuses with one line), `ATTEMPTS` times and for up to `RETRY_S` seconds;
4. puts the result in place: an append (the new text starts with the old) is written at the end
   of the file itself (`O_APPEND`), so nothing is ever renamed over another writer's bytes; any
   other change renames the temp file over the file when its stat is still the one just read, then
   reads the replaced file once more through the descriptor it checked: bytes another program
   wrote into it during the rename are taken back and the change applied to them; a new file is
   linked into place, so a file that appeared meanwhile is never replaced.

What remains possible, for changes other than appends, is a file another program renames into
place during kg's rename (an editor that saves by rename), or a write into the replaced file after
that last read: it is replaced. docs/safety.md states the guarantee and the measured size of that
window (`bench/write_window.py`). Such a rename gives the file a new inode, so its birth time
becomes the time of the write, and a second hard link keeps the old text.
"""

from __future__ import annotations

import errno
import itertools
import os
import threading
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

from vault_kg.core.config import OUT_DIRNAME
from vault_kg.core.errors import KgError, StoreBusy
from vault_kg.core.store import ignored_folder, write_temp

__all__ = ["ATTEMPTS", "LOCK_STRIPES", "LOCK_TIMEOUT_S", "MAX_BYTES", "RETRY_S", "copy_xattrs", "encoded", "lock_folder", "locked", "rewrite"]

LOCK_STRIPES = 64
LOCK_TIMEOUT_S = float(os.environ.get("KG_WRITE_LOCK_TIMEOUT", "30"))
ATTEMPTS = 8
RETRY_S = 2.0  # an editor saving while someone types: kg's change waits for a pause this long, then gives up
MAX_BYTES = 64 * 1024 * 1024  # a bound on what a rewrite reads, far above any note
_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS, errno.EXDEV}
_APPEND = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_held = threading.local()


def lock_folder(vault: Path) -> Path:
    return vault / OUT_DIRNAME / "locks"


def _stripe(vault: Path, target: Path) -> int:
    """The lock stripe of a file: by its real path inside the vault, case-folded (`daily/x.md`
    through a folder link and `journal/x.md` are one file, and so are `A.md` and `a.md` where the
    file system folds case)."""
    real = os.path.realpath(target)
    root = os.path.realpath(vault)
    rel = os.path.relpath(real, root) if real.startswith(root + os.sep) else real
    return zlib.crc32(rel.casefold().encode("utf-8", "surrogateescape")) % LOCK_STRIPES


@contextmanager
def locked(vault: Path, targets: Iterable[Path] | None, timeout: float | None = None) -> Iterator[None]:
    """Hold the write locks of `targets` (None: of every file of the vault, as `kg sync` does while
    git rewrites files), taken in one order, so two writers of several files cannot deadlock; a
    lock this thread already holds is not taken twice. An `OSError` when the lock folder cannot be
    made (a read-only vault)."""
    held: set[tuple[str, int]] = getattr(_held, "stripes", None) or set()
    _held.stripes = held
    folder = lock_folder(vault)
    stripes = set(range(LOCK_STRIPES)) if targets is None else {_stripe(vault, t) for t in targets}
    wanted = sorted(stripes - {n for f, n in held if f == str(folder)})
    fds: list[int] = []
    try:
        if wanted:
            ignored_folder(folder.parent)
            folder.mkdir(exist_ok=True)
        for stripe in wanted:
            fds.append(_take(folder / f"{stripe:02d}.lock", LOCK_TIMEOUT_S if timeout is None else timeout))
            held.add((str(folder), stripe))
        yield
    finally:
        for stripe in wanted:
            held.discard((str(folder), stripe))
        for fd in fds:
            os.close(fd)  # closing the descriptor releases its lock


def _take(path: Path, timeout: float) -> int:
    """An open descriptor of `path` holding its exclusive flock (polled until `timeout`)."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise StoreBusy(f"{path}: another kg process has been writing this note for {timeout:.0f}s; try again, or raise KG_WRITE_LOCK_TIMEOUT") from None
            time.sleep(0.005)


def rewrite(
    vault: Path,
    target: Path,
    relpath: str,
    change: Callable[[str | None], str],
    *,
    create: bool = False,
    timeout: float | None = None,
    noun: str = "the note",
) -> str:
    """Write `change(current text)` at `target` (a path the vault guard accepted) and return it.

    `change` gets the file's text (None when it does not exist) and returns the new text, or
    raises `KgError` to refuse; it may run more than once, each time on what is on disk then.
    With `create`, a file that exists (or appears) is refused. Nothing is written when the text
    would not change. `timeout` bounds the wait for another kg writer of the file; a failure of
    the disk is one line saying it could not write `noun`.
    """
    try:
        with locked(vault, [target], timeout):
            carried: tuple[bytes, bytes] | None = None  # (what another program left in the file kg replaced, what kg put there)
            until = time.monotonic() + RETRY_S
            for attempt in itertools.count():
                if attempt >= ATTEMPTS and time.monotonic() > until:
                    break
                current, st = _read(vault, target, relpath)
                recovering = carried is not None and current == carried[1]
                base = carried[0] if carried is not None and recovering else current
                if create and current is not None:
                    raise KgError(f"{relpath}: already exists; pick another name or edit the note (nothing written)")
                text = change(_decode(base, relpath))
                data = encoded(text, relpath)
                if data == current:
                    return text
                outcome: bool | bytes
                if not recovering and current and st is not None and data.startswith(current):
                    outcome = _append(vault, target, relpath, data[len(current) :], current, st)
                else:
                    outcome = _replace(vault, target, relpath, data, current, st)
                if outcome is True:
                    return text
                carried = (outcome, data) if isinstance(outcome, bytes) else None
    except OSError as exc:
        raise KgError(f"{relpath}: cannot write {noun} ({exc.strerror or exc}); make the vault writable, then try again (nothing written)") from exc
    raise KgError(f"{relpath}: another program kept changing it while kg was writing (for {RETRY_S:g}s); nothing written, try again")


def _append(vault: Path, target: Path, relpath: str, tail: bytes, before: bytes, st: os.stat_result) -> bool:
    """Add `tail` at the end of the file in place (O_APPEND) if it still holds `before`; False: it
    moved on. Nothing is renamed, so no other writer's change can be replaced: a program that
    writes the file in place meanwhile keeps its bytes and ours land after them (the inode, its
    birth time and its hard links stay as they are)."""
    try:
        fd = os.open(target, _APPEND)
    except FileNotFoundError:
        return False
    try:
        opened = os.fstat(fd)
        if _signature(opened)[:2] != _signature(st)[:2]:
            return False
        now, now_st = _read(vault, target, relpath)
        if now != before or now_st is None or _signature(os.fstat(fd)) != _signature(now_st):
            return False
        _write_all(fd, tail)
        try:  # a program that renamed a new file over it meanwhile: the bytes went with the old one
            return _signature(os.stat(target))[:2] == _signature(opened)[:2]
        except FileNotFoundError:
            return False
    finally:
        os.close(fd)


def _replace(vault: Path, target: Path, relpath: str, data: bytes, before: bytes | None, st: os.stat_result | None) -> bool | bytes:
    """Write `data` beside the file and put it in place if the file is still `before`: True when
    done, False when it moved on (nothing written), or what the replaced file holds when another
    program wrote into it during the rename (see `_install`)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = write_temp(target, data, st, (lambda fd: copy_xattrs(target, fd, relpath)) if st is not None else None)
    try:
        return _install(vault, target, relpath, tmp, before, st)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _read(vault: Path, target: Path, relpath: str) -> tuple[bytes | None, os.stat_result | None]:
    """The file's bytes and the stat of what was read (None, None: it does not exist)."""
    from vault_kg.core.safe_read import open_regular

    try:
        with open_regular(target, root=vault) as handle:
            st = os.fstat(handle.fileno())
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None, None
    if len(data) > MAX_BYTES:
        raise KgError(f"{relpath}: over {MAX_BYTES // (1024 * 1024)} MB; edit it in an editor (nothing written)")
    return data, st


def _decode(data: bytes | None, relpath: str) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KgError(f"{relpath}: not UTF-8 text (byte {exc.start}); re-save it as UTF-8 first (nothing written)") from exc


def encoded(text: str, relpath: str) -> bytes:
    """`text` as UTF-8, or one line when it holds what UTF-8 cannot carry (a non-UTF-8 byte of a command-line argument)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise KgError(f"{relpath}: the text holds bytes that are not UTF-8 (at character {exc.start}); pass it as UTF-8 (nothing written)") from exc


def _signature(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _install(vault: Path, target: Path, relpath: str, tmp: str, before: bytes | None, st: os.stat_result | None) -> bool | bytes:
    """Put `tmp` in place if the file is still what the change was applied to; False: it moved on.

    The file replaced is read once more after the rename, through the descriptor of the last
    check: a program that wrote into it in place during the rename (an editor's save, an append)
    left its bytes there, and they are returned, so the change is applied to them and written
    again (`rewrite`). Only a write that lands on the replaced file after that read, or a file
    another program renames into place during the rename, is lost."""
    from vault_kg.core.safe_read import open_regular

    if before is None:
        try:
            os.link(tmp, target)  # never replaces a file that appeared meanwhile
            return True
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
        if os.path.lexists(target):  # a file system without hard links
            return False
        os.replace(tmp, target)
        return True
    try:
        with open_regular(target, root=vault) as handle:
            now_st = os.fstat(handle.fileno())
            now = handle.read(MAX_BYTES + 1)
            if now != before or st is None or _signature(now_st)[:2] != _signature(st)[:2]:
                return False
            tmp_st = os.lstat(tmp)
            if _signature(os.stat(target)) != _signature(now_st):  # the last check: the window starts here
                return False
            os.replace(tmp, target)
            handle.seek(0)
            after = handle.read(MAX_BYTES + 1)  # the replaced file, through the descriptor still open
    except FileNotFoundError:
        return False
    if after == before:
        return True
    if before is not None and after.startswith(before):  # appended to meanwhile (a log, `echo >>`): append it again
        return _carry_over(target, after[len(before) :], tmp_st) or after
    return after


def _carry_over(target: Path, tail: bytes, installed: os.stat_result) -> bool:
    """Append `tail` (what another program appended to the file kg just replaced) to the file kg put
    in place, when that is still the file at `target`; False when it is not."""
    fd = os.open(target, _APPEND)
    try:
        if _signature(os.fstat(fd))[:2] != _signature(installed)[:2]:
            return False
        _write_all(fd, tail)
        return True
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` at the end of an O_APPEND descriptor, then fsync it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def copy_xattrs(source: Path, fd: int, relpath: str) -> None:
    """Give the open file `fd` every extended attribute of `source` (Finder and desktop tags,
    sync clients' metadata, ACLs); one that cannot be carried over refuses the write."""
    if not hasattr(os, "listxattr"):
        return  # no xattr API on this system (Python on macOS): nothing to copy
    try:
        names = os.listxattr(source)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return
        raise
    for name in names:
        try:
            value = os.getxattr(source, name)
        except OSError:
            continue  # gone meanwhile, or one this user may not read (and so could not have set)
        try:
            os.setxattr(fd, name, value)
        except OSError as exc:
            try:
                same = os.getxattr(fd, name) == value  # one the kernel sets itself (security.selinux)
            except OSError:
                same = False
            if not same:
                raise OSError(exc.errno, f"cannot keep its extended attribute {name}: {exc.strerror}") from exc
