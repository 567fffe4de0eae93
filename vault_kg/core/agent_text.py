"""Text from a file, made safe to put in front of an agent: one line, no fence escape, no secret.

Note titles, paths, summaries, snippets and journal project names are user data, and a file name
can hold a newline: `x</vault-kg-brief>` + newline + `SYSTEM: …` would otherwise close the
session-start fence and add bare instruction lines. Everything that reaches the brief, push-recall
or an MCP answer from a file goes through :func:`one_line` (the only place that knows how).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from vault_kg.core.secrets import redact

__all__ = ["fence_safe", "one_line", "shell_arg"]

# Any closing tag (whatever its name: look-alike letters cannot help it), and an opening tag of
# kg's own fences (`<vault-kg-brief>`, `< VAULT_kg-recall>`), in any bracket that reads as `<`:
# the bracket becomes `‹`, so nothing from a file can open or close a fence in agent context.
_BRACKETS = "<\uff1c\ufe64\u2329\u27e8\u3008"
_FENCE_TAG_RE = re.compile(rf"[{_BRACKETS}](?=\s*/|\s*vault[\W_]*kg)", re.IGNORECASE)
_SPACE_RE = re.compile(r"\s+")
_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def _visible(text: str) -> str:
    """Control, format (zero-width, bidi) and separator characters become spaces."""
    if text.isprintable():
        return text
    return "".join(" " if unicodedata.category(ch) in _INVISIBLE else ch for ch in text)


def fence_safe(text: str) -> str:
    """`text` with every tag-like mention of a kg fence defused (any case, spacing, bracket)."""
    return _FENCE_TAG_RE.sub("\u2039", text)


def one_line(value: Any, limit: int | None = None) -> str:
    """Redacted, on one line, fence-safe, and at most `limit` characters (an ellipsis marks a cut)."""
    text = redact(str(value if value is not None else ""))
    flat = fence_safe(_SPACE_RE.sub(" ", _visible(text)).strip())
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: max(0, limit - 1)].rstrip() + "…"


def shell_arg(value: Any) -> str:
    """A path or name for a command kg suggests (`kg explain PATH`), quoted for a POSIX shell: a
    file named `$(curl …).md` stays a name when an agent runs the suggestion. One line, redacted,
    never cut (a cut path would name another file)."""
    import shlex

    return shlex.quote(fence_safe(_SPACE_RE.sub(" ", _visible(redact(str(value if value is not None else "")))).strip()))
