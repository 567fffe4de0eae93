"""A note's YAML frontmatter: where it is, what it says, and when it does not parse, which line and what to do.

Obsidian shows a note whose properties are not valid YAML with its body, links and backlinks intact,
and only marks the properties invalid; kg does the same. :func:`parse_frontmatter` raises
:class:`FrontmatterError`, which names the file line YAML stopped at and the fix a person would
make there (quote a value that holds `: `, close a `[` list), so the build can say it in one line
and keep the note's body in the graph.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_FRONTMATTER_CHARS", "FrontmatterError", "frontmatter_line", "parse_frontmatter", "quoted_fix", "split_frontmatter"]

MAX_FRONTMATTER_CHARS = 64 * 1024
YAML_ALIAS_RE = re.compile(r"(?:^|[\s\[{,:-])[&*][A-Za-z0-9_][\w-]*", re.MULTILINE)
FM_BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)  # python-frontmatter's YAML boundary, which notes were split with
_KEY_VALUE_RE = re.compile(r"^([A-Za-z0-9_][\w .-]*?):[ \t]+(\S.*?)[ \t]*$")
_QUOTED = ("'", '"')


class FrontmatterError(ValueError):
    """The frontmatter does not parse: `str()` says why; `line` is the file line it is about and
    `fix` what to do there."""

    def __init__(self, problem: str, line: int = 1, fix: str = "fix the YAML between the `---` lines") -> None:
        super().__init__(f"malformed YAML frontmatter at line {line}: {problem.removeprefix('YAML: ')}" if problem.startswith("YAML: ") else problem)
        self.problem = problem
        self.line = line
        self.fix = fix


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, 1-based file line where the body starts), split as
    python-frontmatter's YAML handler splits it (`FM_BOUNDARY`), without importing it (or YAML)."""
    if not FM_BOUNDARY.match(text):
        return None, text, 1
    parts = FM_BOUNDARY.split(text, 2)
    if len(parts) != 3:
        return None, text, 1
    _, fm_text, body = parts
    offset = len(text) - len(body)
    return fm_text, body, text.count("\n", 0, offset) + 1


def frontmatter_line(text: str, fm_text: str) -> int:
    """The file line of `fm_text`'s first line (what `split_frontmatter` cut from `text`)."""
    return text.count("\n", 0, max(0, text.find(fm_text))) + 1


def parse_frontmatter(fm_text: str, first_line: int = 1) -> dict[str, Any]:
    """Parse YAML frontmatter with the C loader; raise :class:`FrontmatterError` with a user-facing
    reason. `first_line` is the file line of `fm_text`'s first line (:func:`frontmatter_line`)."""
    if len(fm_text) > MAX_FRONTMATTER_CHARS:
        raise FrontmatterError(f"frontmatter is larger than {MAX_FRONTMATTER_CHARS // 1024} KB", first_line, "keep long text in the note's body")
    if YAML_ALIAS_RE.search(fm_text) and re.search(r"(^|[\s:\[,-])\*[A-Za-z0-9_]", fm_text, re.MULTILINE):
        raise FrontmatterError("frontmatter uses YAML anchors/aliases (`&x` / `*x`), which notes do not need", first_line, "write the values out instead of `&x` / `*x`")
    import yaml  # here: a note whose frontmatter did not change is never parsed again (`extract.notes.FmFields`)

    try:
        data = yaml.load(fm_text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise _explained(fm_text, exc, first_line) from exc
    except RecursionError as exc:
        raise FrontmatterError("frontmatter nested too deeply to read", first_line, "flatten the nested lists") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter is not a key: value mapping", first_line, "write one `key: value` per line")
    return data


def _explained(fm_text: str, exc: Exception, first_line: int) -> FrontmatterError:
    """The parser's complaint as a reason, the file line it is about, and the fix for that line."""
    mark = getattr(exc, "problem_mark", None)
    context = getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    opened = str(getattr(exc, "context", "") or "")
    # "while parsing a flow sequence": the `[` that never closes is on the context's line
    index = context.line if context is not None and "flow" in opened else mark.line if mark is not None else 0
    lines = fm_text.split("\n")
    raw = lines[index] if 0 <= index < len(lines) else ""
    fix = quoted_fix(raw) if "mapping values" in problem else None
    if fix is None and "flow" in opened:
        fix = "close the `[` list (or `{` map) on that line, or quote the value"
    return FrontmatterError(f"YAML: {problem}", first_line + index, fix or "quote the value on that line if it holds `: `, `#` or starts with `[`, `{`, `*`, `&`, `!`, `@` or a backtick")


def quoted_fix(raw: str) -> str | None:
    """`key: a: b` → the advice to write `key: "a: b"` (None when the line is not a plain `key: value`)."""
    found = _KEY_VALUE_RE.match(raw)
    if found is None or found.group(2).startswith((*_QUOTED, "[", "{", "|", ">")):
        return None
    return f"quote the value: `{found.group(1)}: {json.dumps(found.group(2), ensure_ascii=False)}`"
