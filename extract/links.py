"""Markdown scanning for the deterministic pass: headings, wikilinks, markdown links, inline tags.

Works line by line so every hit keeps its 1-based line number. Fenced code and inline code spans
are masked first: a `#tag` or `[[link]]` inside code is not a tag or a link, and a `#` line inside a
fence is not a heading.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from vault_kg.core.secrets import redact

FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
# Every pattern here runs on every line of every note, so each must stay linear on any input:
# no two unbounded quantifiers that can trade characters (`(.+?)\s*#*\s*$` took 29 s on a
# 2 KB heading), and possessive or bounded repeats where a failed match would rescan a line.
HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s++(\S.*)$")
BACKTICK_RUN_RE = re.compile(r"`+")
WIKILINK_RE = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# Possessive and bounded on purpose: `[[[[…`, `[x](` or `](x "` repeated on one long line must
# stay linear, so a destination stops at the next `[` (a failed `[x](` may not rescan the line).
# A destination is `<any text but angle brackets>` or a run without spaces in which parentheses
# come in balanced pairs (`Image%20(2).png`), CommonMark's two forms.
MDLINK_RE = re.compile(r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*+\])*+)\]\(\s*+(?:<([^<>\n]{1,1000}+)>|((?:[^()\s<>\[]|\([^()\s]{0,200}+\))++))(?:\s++\"[^\"\n]{0,500}+\")?\s*+\)")
# What a markdown link to a missing file must end with to be recorded as dangling: a note, or a
# kind of file a vault holds. `[site](example.com)` or `[v](1.2)` that lead nowhere are not links.
ATTACHMENT_SUFFIXES = frozenset(
    """md canvas png jpg jpeg gif bmp svg webp avif heic heif tif tiff ico mp3 wav m4a ogg oga flac 3gp opus aac
    mp4 webm ogv mov mkv avi pdf txt csv tsv json xml epub doc docx xls xlsx ppt pptx odt ods odp rtf zip excalidraw""".split()
)
FILE_SUFFIX_RE = re.compile(r"\.([A-Za-z0-9]{1,10})$")
URL_RE = re.compile(r"\b(?:[a-z][a-z0-9+.-]{0,31}+://|www\.|mailto:)\S+", re.IGNORECASE)
SCHEME_RE = re.compile(r"[a-z][a-z0-9+.-]{0,31}:", re.IGNORECASE)  # `obsidian:`, `zotero:`, `C:`: not a vault path; `2024-06-14T16:18:08.png` is one
# A tag's characters are [A-Za-z0-9_\-/\u00C0-\uFFFF], written as what they are not (the other code
# points up to U+00BF, and those above U+FFFF): `re` compiles a range as wide as \u00C0-\uFFFF by
# walking each code point in it, 2 ms of every process that reads a note; this class, in microseconds.
TAG_CHARS = r"[^\x00-\x2c\x2e\x3a-\x40\x5b-\x5e\x60\x7b-\xbf\U00010000-\U0010ffff]"
INLINE_TAG_RE = re.compile(r"(?<![\w/#&\]\)])#(" + TAG_CHARS + "+)")
BLOCK_ID_RE = re.compile(r"\s\^([A-Za-z0-9-]+)\s*$")

MAX_HEADING_CHARS = 200


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int


@dataclass(frozen=True)
class Link:
    target: str
    line: int
    embed: bool = False
    heading: str | None = None
    block: str | None = None
    label: str | None = None
    markdown: bool = False
    optional: bool = False  # a markdown link to a file of no known kind: a link only if the file exists
    raw: str | None = None  # a markdown link's path as written, when it holds `%XX` escapes


@dataclass
class Scan:
    headings: list[Heading]
    links: list[Link]
    tags: list[tuple[str, int]]
    blocks: list[tuple[str, int]]
    prose: list[str]


def normalize_tag(raw: str) -> str | None:
    """`#Tool/SEMrush/` → `tool/semrush`; None for things that are not tags (`#123`, `#/`).

    A tag becomes a node id (`tag:…`), which redaction of attributes never touches, so a secret
    pasted as a tag is redacted here, before lowercasing hides its shape (`AKIA…`).
    """
    tag = redact(raw.strip()).lstrip("#").strip("/").lower()
    if not tag or "//" in tag or tag.replace("/", "").replace("-", "").replace("_", "").isdigit():
        return None
    if tag.split() != [tag]:  # it holds whitespace
        return None
    return tag


def _mask(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def mask_code_spans(line: str) -> str:
    """Blank out inline code spans (a run of N backticks up to the next run of exactly N).

    A scan over backtick runs instead of a backreferencing regex, which took minutes on a line
    of a few thousand backticks.
    """
    if "`" not in line:
        return line
    runs = [(m.start(), m.end()) for m in BACKTICK_RUN_RE.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        same = by_length[end - start]
        later = bisect.bisect_right(same, index)
        if later == len(same):
            index += 1
            continue
        close = same[later]
        spans.append((start, runs[close][1]))
        index = close + 1
    if not spans:
        return line
    chars = list(line)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def line_roles(lines: list[str]) -> Iterator[tuple[int, str, str]]:
    """Each line with its role: "fence" (an opening or closing marker), "code" (inside) or "text".

    One place that knows CommonMark's rule: a fence closes on a marker of the same character at
    least as long as the one that opened it.
    """
    fence: str | None = None
    for index, line in enumerate(lines):
        marker = FENCE_RE.match(line) if "```" in line or "~~~" in line else None
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
                yield index, line, "fence"
            else:
                yield index, line, "code"
        elif marker:
            fence = marker.group(1)
            yield index, line, "fence"
        else:
            yield index, line, "text"


def heading_text(rest: str) -> str:
    """A heading's text without its closing `#` sequence and surrounding spaces."""
    text = rest.rstrip().rstrip("#").rstrip()
    return text or rest.strip()


def parse_wikilink(inner: str) -> tuple[str, str | None, str | None, str | None]:
    """Split `Note#Heading^block|label` into (note, heading, block, label)."""
    label = None
    if "|" in inner:
        inner, label = inner.split("|", 1)
        inner = inner[:-1] if inner.endswith("\\") else inner  # `[[Note\\|label]]`: a pipe escaped in a table row
        label = label.strip() or None
    block = None
    if "^" in inner:
        inner, block = inner.split("^", 1)
        block = block.strip() or None
    heading = None
    if "#" in inner:
        inner, heading = inner.split("#", 1)
        heading = heading.strip().lstrip("^") or None
    return inner.strip(), heading, block, label


def scan_markdown(body: str, first_line: int = 1) -> Scan:
    """Scan a note body; `first_line` is the file line the body starts on (after frontmatter)."""
    headings: list[Heading] = []
    links: list[Link] = []
    tags: list[tuple[str, int]] = []
    blocks: list[tuple[str, int]] = []
    lines = body.split("\n")
    if "```" in body or "~~~" in body:
        text = [(offset, line) for offset, line, role in line_roles(lines) if role == "text"]
        prose = [line for _, line in text]
    else:  # no fence marker anywhere: every line is text
        text, prose = list(enumerate(lines)), lines
    # no heading, tag, link or block id can start without one of these
    marked = [(offset, line) for offset, line in text if "#" in line or "[" in line or "^" in line]
    for offset, line in marked:
        number = first_line + offset
        visible = mask_code_spans(line)
        # Each pattern needs a character most lines lack (`#`, `[[`, `](`, `^`): one substring test
        # skips it, which is most of the scan's time on a 10,000-note vault (same result).
        hashed = "#" in visible
        if hashed:
            heading = HEADING_RE.match(visible)
            if heading:
                text = heading_text(heading.group(2))[:MAX_HEADING_CHARS]
                headings.append(Heading(len(heading.group(1)), text, number))
                visible = visible[heading.end(1) :]
                hashed = "#" in visible
        if "[[" in visible:
            _wikilinks(visible, number, links)
        if "](" in visible:
            _markdown_links(visible, number, links)
        if hashed:
            without_links = _mask(_mask(_mask(visible, WIKILINK_RE), MDLINK_RE), URL_RE)
            for match in INLINE_TAG_RE.finditer(without_links):
                tag = normalize_tag(match.group(1))
                if tag:
                    tags.append((tag, number))
        if "^" in visible:
            block_id = BLOCK_ID_RE.search(visible)
            if block_id:
                blocks.append((block_id.group(1), number))
    return Scan(headings, links, tags, blocks, prose)


TEMPLATE_MARKS = ("{{", "<%")  # `[[{{title}}]]` in a template note is filled in later: not a link yet


def _wikilinks(visible: str, number: int, links: list[Link]) -> None:
    for match in WIKILINK_RE.finditer(visible):
        target, head, block, label = parse_wikilink(match.group(2))
        if any(mark in target for mark in TEMPLATE_MARKS):
            continue
        if target or head or block:
            links.append(Link(target, number, bool(match.group(1)), head, block, label))


def _markdown_links(visible: str, number: int, links: list[Link]) -> None:
    for match in MDLINK_RE.finditer(visible):
        href = match.group(3) or match.group(4)
        if URL_RE.match(href) or href.startswith("#") or SCHEME_RE.match(href):
            continue
        written, _, fragment = href.partition("#")
        path = unquote(written)
        fragment = unquote(fragment)
        suffix = FILE_SUFFIX_RE.search(path.rpartition("/")[2])
        if suffix is None or not any(c.isalpha() for c in suffix.group(1)):
            continue  # `[x](folder/)`, `[x](Some Note)`, `[v](1.2)`: not a file Obsidian would open
        optional = suffix.group(1).lower() not in ATTACHMENT_SUFFIXES
        links.append(Link(path, number, bool(match.group(1)), fragment or None, None, match.group(2) or None, True, optional, written if written != path else None))
