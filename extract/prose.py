"""A note's prose lines, as the model pass reads them: frontmatter, fenced code and HTML comments
left out, links reduced to their text in the lines the prompt shows.

A module of its own, light on purpose: every build and update asks it of the notes it reads (with
the model pass off, for the relations a note's structure states; with the pass on and no model
reachable yet, whether a note asks the model anything), and neither needs the note planner
(`extract.llm_prompt`) and the pattern modules behind it.
"""

from __future__ import annotations

import re
from typing import Iterator

_FENCE = re.compile(r"^\s*(```|~~~)")
_URL = re.compile(r"<?https?://[^\s>)\]]+>?")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
WIKILINK = re.compile(r"!?\[\[([^\]|#^]*)(?:[#^][^\]|]*)?(?:\|([^\]]*))?\]\]")
_INLINE_TAG = re.compile(r"(?<![\w/#])#[\w/-]+")
_HTML_COMMENT = re.compile(r"<!--.*?-->")
_SPACES = re.compile(r"\s+")


def body_start(lines: list[str]) -> int:
    """Index of the first body line: after a frontmatter block opened by `---` on the first line."""
    if not lines or lines[0].strip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return i + 1
    return 0


def prose_lines(text: str, first_line: int = 1) -> tuple[dict[int, str], dict[int, str]]:
    """(raw prose lines, cleaned prompt lines) by FILE line number.

    Frontmatter, fenced code and HTML comments are dropped; in the prompt lines, URLs are removed,
    links are reduced to their text and inline tags to nothing. The raw lines are what
    verification reads (they keep wikilink targets, which are mentions too).
    """
    raw: dict[int, str] = {}
    clean: dict[int, str] = {}
    for number, line, cleaned in _prose(text, first_line):
        raw[number] = line
        clean[number] = cleaned
    return raw, clean


def raw_prose_lines(text: str) -> dict[int, str]:
    """The raw prose lines alone (frontmatter and fenced code left out, nothing cleaned): what the
    deterministic pass reads for stated entities and relations on every note, so no pattern runs
    over a line here (a hostile line of 10 MB costs one split)."""
    return {number: line for number, line, _ in _prose(text, clean=False)}


def _prose(text: str, first_line: int = 1, clean: bool = True) -> Iterator[tuple[int, str, str]]:
    """(file line number, raw line, cleaned line) of each prose line, in order (see `prose_lines`);
    with ``clean`` off, every non-blank line, the cleaned one left as it is."""
    lines = text.splitlines()
    in_fence = False
    for index in range(body_start(lines), len(lines)):
        line = lines[index]
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not clean:
            if line.strip():
                yield index + first_line, line, line
            continue
        cleaned = _HTML_COMMENT.sub("", line)
        if "[[" in cleaned:
            cleaned = WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), cleaned)
        if "](" in cleaned:
            cleaned = _MD_LINK.sub(lambda m: m.group(1), cleaned)
        if "://" in cleaned:
            cleaned = _URL.sub("", cleaned)
        if "#" in cleaned:
            cleaned = _INLINE_TAG.sub("", cleaned)
        cleaned = _SPACES.sub(" ", cleaned.replace("`", "").replace("**", "")).strip()
        if cleaned:
            yield index + first_line, line, cleaned


def asks_the_model(text: str) -> bool:
    """Whether `plan_note` would hold a prompt, without building one: whether the note has a line
    of prose (any prose makes at least one chunk). Read up to the first such line only: with no
    model reachable, a cold build asks this of every note."""
    return next(_prose(text), None) is not None
