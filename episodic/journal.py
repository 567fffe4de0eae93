"""The daily journal: one append-only markdown note per day in the vault, `journal/YYYY-MM-DD.md`.

Writing an entry must be fast and must never wait for the recall index, so this module imports
nothing heavy. The frontmatter always has the same number of lines, so appending an entry never
moves an earlier entry: every entry keeps its `file:line` for good. Day files are written through
the vault's one write guard (`vault_kg.core.vault_guard`): no symlinked day file or journal folder
leading out of the vault, no read-only file forced, no secret in what is appended.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any

from vault_kg.core.errors import KgError
from vault_kg.core.secrets import redact
from vault_kg.core.vault_guard import rewrite_plain

JOURNAL_DIRNAME = "journal"
OUT_DIRNAME = "kg-out"
LOCK_TIMEOUT_S = 10.0
MAX_DAY_BYTES = 8 * 1024 * 1024
BASE_TAGS = ("type/journal", "scope/global")

_DAY_FILE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
_ENTRY_HEADING_RE = re.compile(r"^## (\d{2}:\d{2})(?: · (.*\S|\s+?))?\s*$")  # linear: no lazy group before `\s*$`
_ANY_HEADING_RE = re.compile(r"^(#{1,6})\s")
_SECTION_RE = re.compile(r"^#{1,2}\s")
_FRONTMATTER_RE = re.compile(r"\A---\n(.*?\n)?---\n", re.DOTALL)


@dataclass(frozen=True)
class Entry:
    """One journal entry: where it is (file, line) and what it says."""

    day: date
    time: str
    project: str
    file: str  # vault-relative POSIX path
    line: int  # 1-based line of the entry's heading
    end_line: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["day"] = self.day.isoformat()
        return data


def journal_dir(vault: Path) -> Path:
    return vault / JOURNAL_DIRNAME


def day_file(vault: Path, day: date) -> Path:
    return journal_dir(vault) / f"{day.isoformat()}.md"


def day_of(path: Path) -> date | None:
    """The day a journal file is for, from its name (None: not a journal day file)."""
    m = _DAY_FILE_RE.match(path.name)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def list_days(vault: Path) -> dict[date, Path]:
    """Every journal day file in the vault, by day."""
    folder = journal_dir(vault)
    if not folder.is_dir():
        return {}
    days: dict[date, Path] = {}
    for path in folder.iterdir():
        day = day_of(path)
        if day is not None and path.is_file():
            days[day] = path
    return dict(sorted(days.items()))


def out_dir(vault: Path) -> Path:
    """The vault's `kg-out/` (created with a `.gitignore`, so nothing in it is ever committed)."""
    folder = vault / OUT_DIRNAME
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        write_atomic(ignore, "*\n")
    return folder


def write_atomic(path: Path, text: str) -> None:
    """Write via a hidden temp file in the same folder + os.replace: readers see old or new."""
    from vault_kg.core.store import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))


def parse_entries(text: str, day: date, relpath: str) -> list[Entry]:
    """The entries of one day file, each from its `## HH:MM · project` heading to the next heading."""
    lines = text.split("\n")
    entries: list[Entry] = []
    for start, line in enumerate(lines):
        m = _ENTRY_HEADING_RE.match(line)
        if not m:
            continue
        stop = next((i for i in range(start + 1, len(lines)) if _SECTION_RE.match(lines[i])), len(lines))
        last = max((i for i in range(start, stop) if lines[i].strip()), default=start)
        body = "\n".join(lines[start + 1 : stop]).strip()
        entries.append(Entry(day, m.group(1), m.group(2) or "", relpath, start + 1, last + 1, body))
    return entries


def read_day(vault: Path, day: date) -> list[Entry]:
    """The entries of ``day`` in file order (empty when there is no journal for that day)."""
    from vault_kg.core.safe_read import read_regular

    path = day_file(vault, day)
    try:
        text = read_regular(path, MAX_DAY_BYTES, root=vault).decode("utf-8")
    except OSError:  # missing, or a FIFO / symlink out of the vault planted as a day file
        return []
    except UnicodeDecodeError as exc:
        raise KgError(f"{path}: not UTF-8 text; re-save it as UTF-8") from exc
    # a day file edited by hand or pulled from another machine never went through append_entry
    return parse_entries(redact(text, keep_lines=True), day, f"{JOURNAL_DIRNAME}/{path.name}")


def clean_project(project: str | None) -> str:
    return re.sub(r"\s+", " ", (project or "").replace("·", "-")).strip()


def _slug(project: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", project.lower()).strip("-")


def _clean_text(text: str) -> str:
    """Redacted, trimmed, with headings inside the text escaped so they cannot split the entry.

    Lines are split the way any reader may split them (`str.splitlines`: a bare `\\r`, `\\x0b`,
    `\\x0c`, `\\x1c`-`\\x1e`, `\\x85`, `\\u2028`, `\\u2029` too) and written back with `\\n` only, so
    no separator can smuggle in a line that starts a forged entry heading.
    """
    lines = [line.rstrip() for line in redact(text).strip().splitlines()]
    return "\n".join("\\" + line if _ANY_HEADING_RE.match(line) else line for line in lines)


def render_frontmatter(day: date, entries: list[Entry]) -> str:
    """Always exactly five lines: earlier entries never move when the summary changes."""
    projects = sorted({e.project for e in entries if e.project}, key=str.lower)
    count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    summary = f"Journal for {day:%A} {day.isoformat()}: {count}" + (f" ({', '.join(projects)})" if projects else "")
    tags = [*BASE_TAGS, *dict.fromkeys(f"project/{_slug(p)}" for p in projects if _slug(p))]
    return f"---\nsummary: {json.dumps(summary, ensure_ascii=False)}\ntags: [{', '.join(tags)}]\ndate: {day.isoformat()}\n---\n"


def append_entry(
    vault: Path,
    text: str,
    *,
    project: str | None = None,
    now: datetime | None = None,
    tz: tzinfo | None = None,
    lock_timeout: float = LOCK_TIMEOUT_S,
) -> Entry:
    """Append a timestamped entry to the day's journal note (secrets redacted first)."""
    body = _clean_text(text)
    if not body:
        raise KgError("nothing to record: the journal entry text is empty")
    moment = now or datetime.now(tz)
    if tz is not None and moment.tzinfo is not None:
        moment = moment.astimezone(tz)
    day = moment.date()
    path = day_file(vault, day)
    relpath = f"{JOURNAL_DIRNAME}/{path.name}"
    project = clean_project(redact(project or ""))
    heading = f"## {moment:%H:%M}" + (f" · {project}" if project else "")
    try:  # the append is re-applied to what is on disk when another program wrote the day meanwhile
        new = rewrite_plain(vault, relpath, lambda old: _with_entry(old or "", day, heading, body, relpath), scan=f"{heading}\n{body}", timeout=lock_timeout, noun="the journal")
    except OSError as exc:
        raise KgError(f"{path}: cannot write the journal ({exc.strerror or exc}); make the vault writable, then add the entry again") from exc
    entries = parse_entries(new.replace("\r\n", "\n"), day, relpath)
    return entries[-1]


def _with_entry(old: str, day: date, heading: str, body: str, relpath: str) -> str:
    """The day file's new text: the old body untouched, the entry appended, the summary renewed."""
    match = _FRONTMATTER_RE.match(old)
    head: str | None
    if not old.strip():
        head, rest = None, f"\n# {day.isoformat()} ({day:%A})\n"
    elif match and is_kg_frontmatter(match.group(1) or ""):
        head, rest = None, old[match.end() :]
    else:  # a frontmatter someone else wrote, or none: the top of the file stays exactly as it is
        head, rest = (old[: match.end()], old[match.end() :]) if match else ("", old)
    newline = "\r\n" if "\r\n" in old else "\n"
    rest = rest.rstrip("\r\n") + f"\n\n{heading}\n{body}\n".replace("\n", newline)
    if head is not None:
        return head + rest
    return render_frontmatter(day, parse_entries(rest, day, relpath)) + rest


def is_kg_frontmatter(frontmatter: str) -> bool:
    """True for the five-line frontmatter this module writes (safe to rewrite in place)."""
    keys = [line.split(":", 1)[0] for line in frontmatter.strip().split("\n")]
    return keys == ["summary", "tags", "date"]
