"""Which files of a vault are sources (its notes and attachments): the listing every full update starts with.

Kept apart from the extraction (`extract.notes`) so the paths that only need to know whether
anything changed (a no-op `kg update`, the hooks) list the vault without importing the parser.
"""

from __future__ import annotations

import os
from operator import itemgetter
from pathlib import Path

from vault_kg.core.adapter import SourceSkip
from vault_kg.core.safe_read import display_name, file_kind, valid_name

from .obsidian_ignore import excluded, never

SKIP_DIRS = {"kg-out", "node_modules", "__pycache__"}
_MD = frozenset({".md", ".mD", ".Md", ".MD"})  # `name[-3:] in _MD`: `name.lower().endswith(".md")`, cheaper
Stats = tuple[list[str], list[int], list[int]]  # paths, sizes, mtimes (ns): what the cache compares


def list_sources(root: Path) -> tuple[list[str], list[SourceSkip]]:
    """Every note and attachment (any other file: images, PDFs, canvases), and what was skipped
    and why: symlinks that leave the vault, symlinked folders, FIFOs, sockets and devices named
    `*.md`, and names that are not valid UTF-8."""
    found, skips = _walk(root)
    return [rel for rel, _ in found], skips


def list_notes(root: Path) -> tuple[list[str], list[SourceSkip]]:
    """`list_sources` without the attachments: the vault's markdown notes."""
    found, skips = _walk(root, attachments=False)
    return [rel for rel, _ in found], skips


def list_source_stats(root: Path) -> tuple[Stats | None, list[SourceSkip]]:
    """`list_sources` with each note's size and mtime, in the same (sorted) order, stat'ed from
    the listing's own entries (the no-op probe compares them with the cache's); None when a note
    could not be stat'ed (it went away, or its symlink broke, meanwhile: not a no-op)."""
    found, skips = _walk(root)
    rels: list[str] = []
    sizes: list[int] = []
    mtimes: list[int] = []
    for rel, entry in found:
        try:
            st = entry.stat()  # as `os.stat` (a symlinked note: its target's)
        except OSError:
            return None, skips
        rels.append(rel)
        sizes.append(st.st_size)
        mtimes.append(st.st_mtime_ns)
    return (rels, sizes, mtimes), skips


def _walk(root: Path, attachments: bool = True) -> tuple[list[tuple[str, os.DirEntry[str]]], list[SourceSkip]]:
    """The notes and attachments (sorted, each with its folder entry) and the skips, Obsidian's
    exclusions applied.

    Folders are read in any order: both lists are sorted at the end. A plain note (a regular
    `*.md` file with an ASCII name) takes the first test; everything else the full rules. An
    attachment is a regular file (or a symlink to one inside the vault) with a valid name; any
    other entry that is not a note is not a source and is passed over without a word."""
    found: list[tuple[str, os.DirEntry[str]]] = []
    skips: list[SourceSkip] = []
    root_real = os.path.realpath(root)
    pending = [(os.fspath(root), "")]
    while pending:
        folder, rel_folder = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            skips.append(SourceSkip(rel_folder.rstrip("/") or ".", f"folder not readable ({exc.strerror}); check its permissions"))
            continue
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            if name[-3:] in _MD and entry.is_file(follow_symlinks=False) and name.isascii():
                found.append((rel_folder + name, entry))
                continue
            if entry.is_dir(follow_symlinks=False):
                if name in SKIP_DIRS:
                    continue
                if not valid_name(name):
                    skips.append(SourceSkip(display_name(rel_folder + name), "folder name is not valid UTF-8; rename it to read the notes in it"))
                    continue
                pending.append((entry.path, rel_folder + name + "/"))
                continue
            if entry.is_symlink() and os.path.isdir(entry.path):
                if name not in SKIP_DIRS:
                    skips.append(SourceSkip(display_name(rel_folder + name), "symlinked folder not followed (loops and escapes are refused)"))
                continue
            if name[-3:] not in _MD:
                if attachments and _is_attachment(entry, name, root_real):
                    found.append((rel_folder + name, entry))
                continue
            skip = _note_skip(entry, name, root_real)
            if skip is None:
                found.append((rel_folder + name, entry))
            else:
                skips.append(SourceSkip(display_name(rel_folder + name), skip))
    ignored = excluded(root)
    if ignored is not never:
        found = [item for item in found if not ignored(item[0])]
    found.sort(key=itemgetter(0))
    skips.sort(key=lambda s: s.relpath)
    return found, skips


def _note_skip(entry: os.DirEntry[str], name: str, root_real: str) -> str | None:
    """Why a `*.md` entry that is not a plain regular file is not read, or None when it is read."""
    if not valid_name(name):
        return "file name is not valid UTF-8; rename it (e.g. with `mv`) so kg can read it"
    if entry.is_symlink():
        target = os.path.realpath(entry.path)
        if not target.startswith(root_real + os.sep) or not os.path.isfile(target):
            return "symlink points outside the vault, nowhere, or not to a regular file; not followed"
        return None
    if entry.is_file(follow_symlinks=False):
        return None
    try:
        kind = file_kind(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        kind = "not a regular file"
    return f"{kind}, not a regular file; not read (remove it or rename it without .md)"


def _is_attachment(entry: os.DirEntry[str], name: str, root_real: str) -> bool:
    """A file that is not a note but can be linked: regular, or a symlink to a regular file inside the vault."""
    if entry.is_file(follow_symlinks=False):
        return valid_name(name)
    if not entry.is_symlink() or not valid_name(name):
        return False
    target = os.path.realpath(entry.path)
    return target.startswith(root_real + os.sep) and os.path.isfile(target)


def is_source(root: Path, relpath: str) -> bool:
    """`list_sources`'s rules for one path, without walking the vault (the hook's fast path)."""
    *folders, name = relpath.split("/")
    if not name or name.startswith(".") or not valid_name(relpath) or excluded(root)(relpath):
        return False
    folder = str(root)
    for part in folders:
        if part.startswith(".") or part in SKIP_DIRS or part in ("", "..", "."):
            return False
        folder = os.path.join(folder, part)
        if os.path.islink(folder):
            return False
    path = os.path.join(folder, name)
    if os.path.islink(path):
        target = os.path.realpath(path)
        return target.startswith(os.path.realpath(root) + os.sep) and os.path.isfile(target)
    return os.path.isfile(path)
