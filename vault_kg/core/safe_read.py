"""Reading files kg did not write without being tricked by them.

A vault or a repository is user data, and so is a path an agent hands a hook: a note can be
replaced by a symlink to `~/.ssh/id_rsa`, a FIFO named `x.md` blocks a plain `open()` forever, and
`/dev/zero` never ends. Every read of such a file goes through :func:`read_regular`: it opens
without blocking (`O_NONBLOCK`), refuses anything that is not a regular file (checked on the open
descriptor, so a swap between check and open cannot slip through), refuses a file that resolves
outside the folder it must live in, and reads at most `limit` bytes (the head, or the tail).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

__all__ = ["UnsafeFile", "display_name", "file_kind", "inside", "is_regular", "open_regular", "read_regular", "read_text", "valid_name"]

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class UnsafeFile(OSError):
    """Not read: the path is not a regular file, or it resolves outside the folder it must stay in."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(reason)
        self.filename = os.fspath(path)
        self.strerror = reason


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words a user recognises."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """True when `path`, with every symlink resolved, lies under `root` (also resolved)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def read_regular(
    path: str | os.PathLike[str],
    limit: int | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    tail: bool = False,
    trust_folders: bool = False,
) -> bytes:
    """The bytes of a regular file (at most `limit`: the first ones, or the last with `tail`).

    Raises :class:`UnsafeFile` for a FIFO, socket, device or folder, or (with `root`) a path that
    resolves outside `root`; other `OSError`s as `open` raises them. Never blocks on the open.
    `trust_folders` is for a path listed a moment ago by a walk that refuses symlinked folders:
    only a symlink in the last component is resolved then, which spares a bulk read the cost of
    resolving every folder of every path.
    """
    with open_regular(path, root=root, trust_folders=trust_folders) as handle:
        if tail and limit is not None:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                handle.seek(size - limit)
        return handle.read() if limit is None else handle.read(limit)


def open_regular(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None, trust_folders: bool = False) -> BinaryIO:
    """:func:`read_regular`'s checks, then the open file (binary) for reading in pieces."""
    fd = _open_checked(path, root, trust_folders)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(path, f"is {file_kind(st.st_mode)}, not a regular file; not read")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _open_checked(path: str | os.PathLike[str], root: str | os.PathLike[str] | None, trust_folders: bool) -> int:
    """An open descriptor of `path`, which (with `root`) is known to be the file inside `root`."""
    if root is None:
        return os.open(path, _FLAGS)
    if trust_folders:
        try:
            return os.open(path, _FLAGS | os.O_NOFOLLOW)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise  # ELOOP: the last component is a symlink; resolve it below
    if not inside(path, root):
        raise UnsafeFile(path, f"resolves outside {root}; not read")
    real = os.path.realpath(path)
    fd = os.open(real, _FLAGS | os.O_NOFOLLOW)
    try:
        if not inside(real, root):  # swapped between the check and the open
            raise UnsafeFile(path, f"resolves outside {root}; not read")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_text(path: str | os.PathLike[str], limit: int | None = None, *, root: str | os.PathLike[str] | None = None, errors: str = "replace") -> str:
    """:func:`read_regular` decoded as UTF-8 (a BOM dropped); undecodable bytes replaced by default."""
    return read_regular(path, limit, root=root).decode("utf-8-sig", errors)


def is_regular(path: str | os.PathLike[str]) -> bool:
    """`lstat` says regular file (a symlink, FIFO, socket, device or folder is not)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def display_name(name: str) -> str:
    """A file name safe to print and store: bytes that are not UTF-8 shown as `\\xNN`."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")


def valid_name(name: str) -> bool:
    """False for a name holding bytes that are not UTF-8 (Python keeps them as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
