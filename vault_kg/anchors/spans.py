"""What an anchor can point at, as the files are now: code symbols and markdown spans, cached by stat.

Code symbols come from the code extractor (`extract.code.symbols_of`), so an anchor and the code
graph agree on locators and hashes. Markdown files offer two kinds of span: a heading's section
(`path#Heading`, up to the next heading of the same or a higher level) and a table body row
(`path#<first cell>`). Fenced code is neither. HTML comments are cut before hashing, the way
code comments are, and the text goes through the same normalization (`extract.anchors`).

`SymbolCache` keeps each file's spans keyed by size + mtime (plus the content digest, so a touched
but unchanged file is not parsed again), in one JSON file under the vault's `kg-out/cache/`.
A file modified within two seconds of being cached is read again: a same-size edit inside one
timestamp tick must not hide behind the stat.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from extract.anchors import normalized_hash
from extract.links import HEADING_RE, heading_text, line_roles
from vault_kg.core.errors import KgError
from vault_kg.core.model import LOCATOR_SEP
from vault_kg.core.safe_read import UnsafeFile, read_regular
from vault_kg.core.store import atomic_write

__all__ = [
    "CACHE_VERSION",
    "Lookup",
    "MARKDOWN_EXTENSIONS",
    "MAX_SOURCE_BYTES",
    "RACY_NS",
    "SymbolCache",
    "is_code",
    "is_markdown",
    "markdown_spans",
    "qualname",
    "spans_of",
    "split_locator",
    "supported",
    "supported_extensions",
    "symbol_name",
]

MARKDOWN_EXTENSIONS = (".md", ".markdown")
CACHE_VERSION = 1
RACY_NS = 2_000_000_000
MAX_SOURCE_BYTES = 32 * 1024 * 1024  # an anchored file is read up to here (a bound, far above any source file)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TABLE_SEPARATOR = re.compile(r"^\s*+\|?+\s*+:?+-++:?+\s*+(?:\|\s*+:?+-++:?+\s*+)*+\|?+\s*+$")  # possessive: linear
_DUPLICATE = re.compile(r" \(\d+\)$")


def is_markdown(relpath: str) -> bool:
    return relpath.lower().endswith(MARKDOWN_EXTENSIONS)


def is_code(relpath: str) -> bool:
    from extract.languages import BY_EXTENSION  # not at import: a vault without code anchors never loads grammars

    dot = relpath.rfind(".")
    return dot > 0 and "/" not in relpath[dot:] and relpath[dot:].lower() in BY_EXTENSION


def supported(relpath: str) -> bool:
    return is_markdown(relpath) or is_code(relpath)


def supported_extensions() -> str:
    from extract.languages import BY_EXTENSION

    return ", ".join(sorted(set(BY_EXTENSION) | set(MARKDOWN_EXTENSIONS)))


def split_locator(locator: str) -> tuple[str, str]:
    """(file path, symbol part): `a.py › class A` → (`a.py`, `class A`); `b.md#Setup` → (`b.md`, `Setup`)."""
    if LOCATOR_SEP in locator:
        path, _, rest = locator.partition(LOCATOR_SEP)
        return path.strip(), rest
    path, sep, rest = locator.partition("#")
    if sep and is_markdown(path):
        return path.strip(), rest
    return locator.strip(), ""


def symbol_name(locator: str) -> str:
    """The bare name a locator ends with (`fetch` for `a.py › class C › method fetch`, `Setup` for `b.md#Setup`)."""
    if LOCATOR_SEP in locator:
        last = locator.rsplit(LOCATOR_SEP, 1)[1]
        last = _DUPLICATE.sub("", last)
        return last.split(" ", 1)[1] if " " in last else last
    return _DUPLICATE.sub("", locator.partition("#")[2])


def qualname(locator: str) -> str:
    """Dotted name of a code locator: `a.py › class C › method fetch` → `C.fetch`."""
    parts = locator.split(LOCATOR_SEP)[1:]
    return ".".join(p.split(" ", 1)[1] if " " in p else p for p in parts)


def _table_cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def _row_key(cell: str) -> str:
    return cell.strip().strip("`*_").strip()


def markdown_spans(relpath: str, data: bytes) -> dict[str, dict[str, Any]]:
    """Spans of a markdown file: `path#Heading` sections and `path#<first cell>` table rows.

    Keys repeat-proof the way code locators are: the second `## Setup` is `path#Setup (2)`.
    """
    text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    headings: list[tuple[int, int, str]] = []  # (index, level, text)
    rows: list[tuple[int, str]] = []
    in_table = False
    for i, line, role in line_roles(lines):
        if role != "text":
            in_table = False
            continue
        heading = HEADING_RE.match(line)
        if heading:
            headings.append((i, len(heading.group(1)), heading_text(heading.group(2))))
            in_table = False
            continue
        if "|" not in line or not line.strip():
            in_table = False
            continue
        if in_table:
            key = _row_key(_table_cells(line)[0])
            if key:
                rows.append((i, key))
        elif i + 1 < len(lines) and _TABLE_SEPARATOR.match(lines[i + 1]) and "-" in lines[i + 1]:
            in_table = True  # header row; the separator line follows and is skipped below
        elif _TABLE_SEPARATOR.match(line) and "-" in line:
            continue
    spans: dict[str, dict[str, Any]] = {}

    def add(key: str, start: int, end: int, kind: str) -> None:
        name = key
        n = 2
        while f"{relpath}#{key}" in spans:
            key = f"{name} ({n})"
            n += 1
        body = _HTML_COMMENT.sub(" ", "\n".join(lines[start:end]))
        spans[f"{relpath}#{key}"] = {"line": start + 1, "end_line": end, "hash": normalized_hash(body), "name": name, "kind": kind}

    items = [(i, "heading", level, title) for i, level, title in headings] + [(i, "row", 0, key) for i, key in rows]
    for i, kind, level, key in sorted(items):
        if kind == "heading":
            end = next((j for j, lvl, _ in headings if j > i and lvl <= level), len(lines))
            while end > i + 1 and not lines[end - 1].strip():
                end -= 1
            add(key, i, end, "heading")
        else:
            add(key, i, i + 1, "row")
    return spans


def spans_of(relpath: str, data: bytes) -> dict[str, dict[str, Any]]:
    """Anchorable spans of a file as it is now: locator → line, end_line, hash, name."""
    if is_markdown(relpath):
        return markdown_spans(relpath, data)
    from extract.code import symbols_of

    return symbols_of(relpath, data)


@dataclass
class Lookup:
    """The spans of one file now: `missing` when the file is gone, else `hashes` (locator → hash)."""

    missing: bool
    hashes: dict[str, str]


def _root_of(absolute: str, relpath: str) -> str:
    """The project folder an anchored file must stay in: `absolute` without `relpath`; a `relpath`
    that climbs (`..`) or is absolute has none, so nothing is read for it."""
    parts = relpath.replace("\\", "/").split("/")
    if not relpath or os.path.isabs(relpath) or ".." in parts:
        raise UnsafeFile(absolute, f"the locator's path {relpath!r} leaves the project; not read")
    base = absolute[: len(absolute) - len(relpath)] if absolute.endswith(relpath) else os.path.dirname(absolute)
    return base.rstrip("/" + os.sep) or os.sep


class SymbolCache:
    """Per-file spans keyed by absolute path, reused while size + mtime (or the digest) match."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, list[Any]] = {}
        self.notes: dict[str, list[Any]] = {}
        self.changed = False
        self.reads = 0
        self.read_paths: list[str] = []
        try:
            data = orjson.loads(path.read_bytes())
            if data.get("version") == CACHE_VERSION:
                self.entries = data.get("code", {})
                self.notes = data.get("notes", {})
        except (OSError, orjson.JSONDecodeError, AttributeError):
            pass
        self._memo: dict[str, Lookup] = {}

    def cached(self, absolute: str) -> dict[str, str] | None:
        """What the cache last saw for this file, without touching the disk (None: never seen)."""
        entry = self.entries.get(absolute)
        return None if entry is None else entry[4]

    def lookup(self, absolute: str, relpath: str, data: bytes | None = None) -> Lookup:
        """The file's spans now; each file is stat'ed once and read at most once per cache object."""
        memo = self._memo.get(absolute)
        if memo is not None:
            return memo
        try:
            st = os.stat(absolute)
        except OSError:
            memo = Lookup(True, {})
            self._memo[absolute] = memo
            return memo
        entry = self.entries.get(absolute)
        if entry is not None and entry[0] == st.st_size and entry[1] == st.st_mtime_ns and st.st_mtime_ns + RACY_NS < entry[3] and data is None:
            memo = Lookup(False, entry[4])
            self._memo[absolute] = memo
            return memo
        if data is None:
            try:  # the one reader: never a FIFO or a device, never outside the project, bounded
                data = read_regular(absolute, MAX_SOURCE_BYTES, root=_root_of(absolute, relpath))
            except OSError:
                memo = Lookup(True, {})
                self._memo[absolute] = memo
                return memo
            self.reads += 1
            self.read_paths.append(absolute)
        digest = hashlib.sha256(data).hexdigest()
        if entry is not None and entry[2] == digest:
            hashes = entry[4]
        else:
            hashes = {loc: info["hash"] for loc, info in spans_of(relpath, data).items()}
        self.entries[absolute] = [st.st_size, st.st_mtime_ns, digest, time.time_ns(), hashes]
        self.changed = True
        memo = Lookup(False, hashes)
        self._memo[absolute] = memo
        return memo

    def put(self, absolute: str, hashes: dict[str, str], data: bytes) -> None:
        """Record spans computed elsewhere (the code scope's own extraction) for this file."""
        try:
            st = os.stat(absolute)
        except OSError:
            return
        self.entries[absolute] = [st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest(), time.time_ns(), hashes]
        self._memo[absolute] = Lookup(False, hashes)
        self.changed = True

    def note(self, relpath: str, st: os.stat_result) -> Any:
        entry = self.notes.get(relpath)
        if entry is not None and entry[0] == st.st_size and entry[1] == st.st_mtime_ns and st.st_mtime_ns + RACY_NS < entry[2]:
            return entry[3]
        return None

    def put_note(self, relpath: str, st: os.stat_result, record: Any) -> None:
        self.notes[relpath] = [st.st_size, st.st_mtime_ns, time.time_ns(), record]
        self.changed = True

    def forget_notes(self, keep: set[str]) -> None:
        gone = [rel for rel in self.notes if rel not in keep]
        for rel in gone:
            del self.notes[rel]
        if gone:
            self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, orjson.dumps({"version": CACHE_VERSION, "code": self.entries, "notes": self.notes}))
        except (OSError, KgError):
            return  # a cache that cannot be written only costs the next run some reading
        self.changed = False
