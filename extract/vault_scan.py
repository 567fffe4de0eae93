"""Which files of a vault are notes: the listing every full update starts with.

Kept apart from the extraction (`extract.notes`) so the paths that only need to know whether
anything changed (a no-op `kg update`, the hooks) list the vault without importing the parser.
"""

from __future__ import annotations

import os
from pathlib import Path

from vault_kg.core.adapter import SourceSkip
from vault_kg.core.safe_read import display_name, file_kind, valid_name

from .obsidian_ignore import excluded

SKIP_DIRS = {"kg-out", "node_modules", "__pycache__"}


def list_sources(root: Path) -> tuple[list[str], list[SourceSkip]]:
    """Every note, and what was skipped and why: symlinks that leave the vault, symlinked
    folders, FIFOs, sockets and devices named `*.md`, and names that are not valid UTF-8."""
    sources: list[str] = []
    skips: list[SourceSkip] = []
    root_real = os.path.realpath(root)
    pending = [(os.fspath(root), "")]
    while pending:
        folder, rel_folder = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skips.append(SourceSkip(rel_folder.rstrip("/") or ".", f"folder not readable ({exc.strerror}); check its permissions"))
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
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
            if not name.lower().endswith(".md"):
                continue
            shown = display_name(rel_folder + name)
            if not valid_name(name):
                skips.append(SourceSkip(shown, "file name is not valid UTF-8; rename it (e.g. with `mv`) so kg can read it"))
            elif entry.is_symlink():
                target = os.path.realpath(entry.path)
                if not target.startswith(root_real + os.sep) or not os.path.isfile(target):
                    skips.append(SourceSkip(shown, "symlink points outside the vault, nowhere, or not to a regular file; not followed"))
                else:
                    sources.append(rel_folder + name)
            elif not entry.is_file(follow_symlinks=False):
                try:
                    kind = file_kind(entry.stat(follow_symlinks=False).st_mode)
                except OSError:
                    kind = "not a regular file"
                skips.append(SourceSkip(shown, f"{kind}, not a regular file; not read (remove it or rename it without .md)"))
            else:
                sources.append(rel_folder + name)
    ignored = excluded(root)
    sources = sorted(s for s in sources if not ignored(s))
    skips.sort(key=lambda s: s.relpath)
    return sources, skips


def is_source(root: Path, relpath: str) -> bool:
    """`list_sources`'s rules for one path, without walking the vault (the hook's fast path)."""
    *folders, name = relpath.split("/")
    if not name.lower().endswith(".md") or name.startswith(".") or not valid_name(relpath) or excluded(root)(relpath):
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
