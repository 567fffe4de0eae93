"""Relations a note's structure already states, read without a model.

A `## Dependencies` list, an `## Owners` list, a table with an `Owner` column, a frontmatter
property such as `depends_on: [[Kafka]]`: people write these to say exactly one relation, so
reading them costs no model call and gets the verb and the direction right. What counts:

- list items under a heading that names a relation (see ``HEADINGS``): the item's first
  `[[wikilink]]`, else its first **bold** name, else the capitalised name it starts with;
- table rows under a header cell that names a relation (``Owner``, ``Maintainer``, ``Backup``):
  the cell's name relates to the entity the row's first cell names, or to the note itself;
- frontmatter properties named after a relation (``owner``, ``depends_on``, ``uses``, ...).

A negated item ("no longer", "not") states nothing. Every relation found is EXTRACTED, with the
line and the rule that found it in ``check``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .entities import canonical_name
from .links import HEADING_RE, WIKILINK_RE, parse_wikilink
from .stated_gate import COLUMNS, HEADING_RULES, PROPERTIES

HEADINGS: tuple[tuple[re.Pattern[str], str, bool], ...] = tuple((re.compile(pattern, re.IGNORECASE), relation, item_first) for pattern, relation, item_first in HEADING_RULES)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_BOLD = re.compile(r"\*\*([^*]{1,60})\*\*|__([^_]{1,60})__")
_LEAD = re.compile(r"^([A-Z0-9][\w.+-]*(?:\s+[A-Z0-9][\w.+-]*){0,3})")
_NEGATED = re.compile(r"\b(?:not|never|no longer|no more|removed|retired|deprecated|dropped|deleted|without)\b", re.IGNORECASE)
_AFTER_LEAD = re.compile(r"^\s*(?:$|[—–:(,;]|-\s)")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_CODE_ONLY = re.compile(r"^\s*`[^`]*`\s*$")
_ROW_SUBJECTS = frozenset({"service", "tool", "project", "api", None})
_DASH = {"", "-", "—", "–", "n/a", "none", "tbd", "?"}


def _name_in(text: str) -> str | None:
    """The entity a list item names: the wikilink or bold name it starts with, else its first
    wikilink or bold name, else the capitalised name it starts with when a separator (a dash, a
    colon, a parenthesis, a comma) or the end follows it ("Stripe — invoices")."""
    text = text.strip()
    if _CODE_ONLY.match(text):
        return None
    found = _names(text)
    if found:
        return found[0]
    lead = _LEAD.match(text.replace("`", ""))
    if lead and _AFTER_LEAD.match(text.replace("`", "")[lead.end() :]):
        return lead.group(1)
    return None


def _names(text: str, links_in: str | None = None) -> list[str]:
    """The wikilinked and bold names in `text`, in order (wikilinks looked for in `links_in`)."""
    found = [(m.start(), _link_name(m)) for m in WIKILINK_RE.finditer(text if links_in is None else links_in)]
    found += [(m.start(), (m.group(1) or m.group(2)).strip()) for m in _BOLD.finditer(text)]
    return [name for _, name in sorted(found) if name]


def _link_name(match: re.Match[str]) -> str:
    """The note a wikilink names, read the way the vault graph reads it (`links.parse_wikilink`)."""
    return parse_wikilink(match.group(2))[0].rsplit("/", 1)[-1]


def _cells(line: str) -> list[str]:
    """A table row's cells; `\\|` inside a cell (Obsidian's escaped pipe in `[[Note\\|label]]`) does not split."""
    return [c.strip() for c in _CELL_SPLIT.split(line.strip().strip("|"))]


def _cell_name(cell: str) -> str | None:
    """The name in a table cell or a property value: a wikilink or bold name, else the text
    without a parenthesised remark when it is short (up to 4 words)."""
    if _CODE_ONLY.match(cell):
        return None
    found = _names(cell, links_in=cell.split("(")[0])
    if found:
        return found[0]
    text = re.sub(r"\([^)]*\)", "", cell).replace("`", "").strip(" .")
    if text.casefold() in _DASH or len(text.split()) > 4 or re.search(r"[.;:!?]", text):
        return None
    return text


def stated_relations(lines: dict[int, str], subject: str, props: dict[str, Any] | None = None, subject_type: str | None = None) -> list[dict[str, Any]]:
    """Relations the note's headings, lists, tables and frontmatter state (``lines``: raw prose
    lines by file line number, fenced code already left out; ``subject``: the note's title;
    ``subject_type``: its type, which decides what a ``team`` property means)."""
    found: list[dict[str, Any]] = []

    def add(source: str | None, relation: str, target: str | None, line: int | None, how: str) -> None:
        if not source or not target or canonical_name(source) == canonical_name(target):
            return
        found.append({"source": source, "relation": relation, "target": target, "line": line, "confidence": "EXTRACTED", "score": 1.0, "check": f"stated by the note's {how}"})

    for key, value in (props or {}).items():
        prop = re.sub(r"[\s-]+", "_", str(key).strip().casefold())
        rule = ("part_of", False) if prop == "team" and subject_type == "person" else PROPERTIES.get(prop)
        if rule is None:
            continue
        relation, value_first = rule
        for item in _values(value):
            name = _cell_name(item)
            add(name, relation, subject, None, f"property {key}") if value_first else add(subject, relation, name, None, f"property {key}")

    rule: tuple[str, bool] | None = None
    heading = ""
    header: list[str] | None = None
    for number in sorted(lines):
        line = lines[number]
        match = HEADING_RE.match(line)
        if match:
            heading = match.group(2).rstrip("# \t")
            rule = next(((rel, first) for pattern, rel, first in HEADINGS if pattern.search(heading)), None)
            header = None
            continue
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = _cells(stripped)
            if header is None:
                header = [c.casefold().strip("* ") for c in cells]
                continue
            if all(set(c) <= set("-: ") for c in cells):
                continue
            _table_row(header, cells, subject, subject_type, number, add)
            continue
        header = None
        item = _ITEM.match(line)
        if rule is None or item is None or _NEGATED.search(_first_sentence(_with_continuation(item.group(1), number, lines))):
            continue
        relation, item_first = rule
        name = _name_in(item.group(1))
        how = f"list under '{heading}'"
        add(name, relation, subject, number, how) if item_first else add(subject, relation, name, number, how)
    return _dedupe(found)


def _first_sentence(text: str) -> str:
    """Up to the first full stop: "[[Envoy]] terminates TLS. The gateway does not rate limit"
    is not a negated item; "[[X]] wrote it; she is no longer on its rota." is."""
    return re.split(r"[.!?](?:\s|$)", text, maxsplit=1)[0]


def _with_continuation(text: str, number: int, lines: dict[int, str]) -> str:
    """A list item's text with the indented lines that continue it."""
    parts = [text]
    following = number + 1
    while following in lines and lines[following][:1] in (" ", "\t") and not _ITEM.match(lines[following]):
        parts.append(lines[following].strip())
        following += 1
    return " ".join(parts)


def _table_row(header: list[str], cells: list[str], subject: str, subject_type: str | None, number: int, add: Any) -> None:
    """A row whose first cell names no entity is about the note itself only in a note about a
    service, tool, project or API (an `Owner` column in a decision's plan owns a step, not the
    decision)."""
    if not cells or _CODE_ONLY.match(cells[0]) or _NEGATED.search(" ".join(cells)):
        return
    about = _about(cells[0], cells) or (subject if subject_type in _ROW_SUBJECTS else None)
    if about is None:
        return
    for index, column in enumerate(header):
        rule = COLUMNS.get(column)
        if rule is None or index >= len(cells) or index == 0:
            continue
        relation, cell_first = rule
        name = _cell_name(cells[index])
        how = f"table column '{column}'"
        add(name, relation, about, number, how) if cell_first else add(about, relation, name, number, how)


def _about(first: str, cells: list[str]) -> str | None:
    """What a table row is about: the wikilink its first cell starts with, or a wikilink elsewhere
    in the row whose name the first cell mentions ("Envoy config" with "(see [[Envoy]])")."""
    link = WIKILINK_RE.match(first.strip())
    if link and _link_name(link):
        return _link_name(link)
    lowered = first.casefold()
    for cell in cells[1:]:
        for match in WIKILINK_RE.finditer(cell):
            name = _link_name(match)
            if name and re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", lowered):
                return name
    return None


def _values(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        return [v for v in (value,) if v.strip()]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []


def _dedupe(relations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One relation per pair of ends, the first stated (an `Owner` cell before a `Backup` cell)."""
    seen: set[frozenset[str]] = set()
    out = []
    for rel in relations:
        ident = frozenset((canonical_name(rel["source"]), canonical_name(rel["target"])))
        if ident not in seen:
            seen.add(ident)
            out.append(rel)
    return out
