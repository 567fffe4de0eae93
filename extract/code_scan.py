"""Listing a repository's source files: what the code scope extracts, and what it skips and why.

Sources are files with a language extension, plus the config files resolution reads
(``go.mod``, ``tsconfig*.json`` / ``jsconfig*.json``), so an edit to one is an ordinary update.

One ``os.scandir`` walk (no per-file stat beyond the size check), ``.gitignore`` and ``.kgignore``
rules at every level (``pathspec``, gitignore semantics), a fixed set of folders that are never
source (virtualenvs, ``node_modules``, build output, vendored code, ``kg-out``), and symlinks
handled so that nothing outside the repository is read and no cycle is walked.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pathspec

from extract.languages import BY_EXTENSION, project_file
from vault_kg.core.adapter import SourceSkip
from vault_kg.core.safe_read import display_name, file_kind, read_regular, valid_name

DEFAULT_MAX_BYTES = 1_000_000
MAX_IGNORE_BYTES = 1_000_000
SKIP_DIRS = frozenset({"kg-out", "node_modules", "build", "dist", "target", "vendor", "third_party", "__pycache__", "venv", "site-packages"})
IGNORE_FILES = (".gitignore", ".kgignore")

_Spec = tuple[str, pathspec.PathSpec]


def _is_source(name: str) -> bool:
    if project_file(name) is not None:  # go.mod, tsconfig.json, ... (each language's own)
        return True
    dot = name.rfind(".")
    if dot <= 0:
        return False
    return name[dot:].lower() in BY_EXTENSION


def _load_spec(directory: str, prefix: str) -> _Spec | None:
    lines: list[str] = []
    for name in IGNORE_FILES:
        try:  # a FIFO named .gitignore must not hang the listing
            lines.extend(read_regular(os.path.join(directory, name), MAX_IGNORE_BYTES).decode("utf-8", "replace").splitlines())
        except OSError:
            continue
    if not lines:
        return None
    return prefix, pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(relpath: str, is_dir: bool, specs: list[_Spec]) -> bool:
    for prefix, spec in specs:
        if prefix and not relpath.startswith(prefix):
            continue
        local = relpath[len(prefix) :]
        if spec.match_file(local + "/" if is_dir else local):
            return True
    return False


def list_sources(root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[list[str], list[SourceSkip]]:
    """Sorted scope-relative POSIX paths of supported source files, plus the files skipped."""
    root_real = os.path.realpath(root)
    sources: list[str] = []
    skips: list[SourceSkip] = []
    pending: list[tuple[str, str, list[_Spec]]] = [(root_real, "", [])]
    while pending:
        directory, prefix, specs = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            skips.append(SourceSkip(prefix.rstrip("/") or ".", f"folder not readable ({exc.strerror}); check its permissions"))
            continue
        names = {entry.name for entry in entries}
        if "pyvenv.cfg" in names and prefix:
            continue
        if names.intersection(IGNORE_FILES):
            spec = _load_spec(directory, prefix)
            if spec is not None:
                specs = [*specs, spec]
        for entry in entries:
            name = entry.name
            relpath = prefix + name
            if not valid_name(name):
                if entry.is_dir(follow_symlinks=False) or _is_source(name):
                    skips.append(SourceSkip(display_name(relpath), "name is not valid UTF-8; rename it (e.g. with `mv`) so kg can read it"))
                continue
            if entry.is_symlink():
                skip = _symlink_skip(entry, relpath, root_real)
                if skip is not None:
                    if _is_source(name) or skip.reason.startswith("symlink leaves"):
                        skips.append(skip)
                    continue
            if entry.is_dir(follow_symlinks=False):
                if name.startswith(".") or name in SKIP_DIRS or _ignored(relpath, True, specs):
                    continue
                pending.append((entry.path, relpath + "/", specs))
                continue
            if not _is_source(name) or _ignored(relpath, False, specs):
                continue
            try:
                st = entry.stat()
            except OSError as exc:
                skips.append(SourceSkip(relpath, f"not readable ({exc.strerror}); check its permissions"))
                continue
            if not stat.S_ISREG(st.st_mode):
                skips.append(SourceSkip(relpath, f"{file_kind(st.st_mode)}, not a regular file; not read"))
                continue
            size = st.st_size
            if size > max_bytes:
                skips.append(SourceSkip(relpath, f"{size} bytes is over the {max_bytes}-byte cap (generated?); add it to .kgignore or raise the cap"))
                continue
            sources.append(relpath)
    sources.sort()
    skips.sort(key=lambda s: s.relpath)
    return sources, skips


def _symlink_skip(entry: os.DirEntry[str], relpath: str, root_real: str) -> SourceSkip | None:
    """Why a symlink is not followed, or None for a file link that stays inside the repository."""
    target = os.path.realpath(entry.path)
    if target != root_real and not target.startswith(root_real + os.sep):
        return SourceSkip(relpath, "symlink leaves the repository; not followed")
    if not os.path.exists(target):
        return SourceSkip(relpath, "broken symlink; not followed")
    if os.path.isdir(target):
        return SourceSkip(relpath, "symlinked folder inside the repository; its target is scanned where it lives")
    if not os.path.isfile(target):
        return SourceSkip(relpath, "symlink to something that is not a regular file (a FIFO, a device); not followed")
    return None
