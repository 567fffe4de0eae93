"""Obsidian's "Excluded files" (`.obsidian/app.json` → `userIgnoreFilters`): notes the user told
Obsidian to leave out are not read into the graph either.

Obsidian's two forms: a plain entry is a path prefix (`Archive/`, `templates`, `inbox/Scratch.md`),
matched against the vault-relative path as written; an entry between slashes is a regular
expression searched in that path (`/\\.excalidraw\\.md$/`). An unreadable or malformed app.json,
or an invalid expression, excludes nothing (the note is read, never silently dropped).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Callable

APP_JSON = (".obsidian", "app.json")
MAX_BYTES = 1_000_000
_memo: dict[str, tuple[tuple[int, int], Callable[[str], bool]]] = {}


def never(rel: str) -> bool:
    """What `excluded` answers when nothing is excluded (callers may test for it and skip the calls)."""
    return False


def excluded(root: Path) -> Callable[[str], bool]:
    """A predicate on vault-relative POSIX paths; re-read only when app.json's stat changes."""
    path = os.path.join(os.fspath(root), *APP_JSON)
    try:
        st = os.stat(path)
    except OSError:
        return never
    key = (st.st_size, st.st_mtime_ns)
    memo = _memo.get(path)
    if memo is not None and memo[0] == key:
        return memo[1]
    matcher = _matcher(path, os.fspath(root))
    _memo[path] = (key, matcher)
    return matcher


def _matcher(path: str, root: str) -> Callable[[str], bool]:
    """The user's filters, read through the one reader: a FIFO, a device (a link to `/dev/zero`,
    synced in from another machine) or a link out of the vault excludes nothing and never blocks."""
    from vault_kg.core.safe_read import read_regular

    try:
        data = read_regular(path, MAX_BYTES + 1, root=root)
        if len(data) > MAX_BYTES:
            return never
        filters = json.loads(data.decode("utf-8-sig")).get("userIgnoreFilters") or []
    except (OSError, ValueError, AttributeError):
        return never
    prefixes: list[str] = []
    patterns: list[re.Pattern[str]] = []
    for item in filters if isinstance(filters, list) else []:
        if not isinstance(item, str) or not item.strip():
            continue
        if len(item) > 2 and item.startswith("/") and item.endswith("/"):
            try:
                patterns.append(re.compile(item[1:-1]))
            except re.error:
                continue
        else:
            prefixes.append(item.lstrip("/"))
    if not prefixes and not patterns:
        return never
    starts = tuple(prefixes)
    return lambda rel: rel.startswith(starts) or any(p.search(rel) for p in patterns)
