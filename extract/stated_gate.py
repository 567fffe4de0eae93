"""Whether a note could state relations by its structure: the cheap test every note takes.

Most notes state none, and learn so here without importing what reads the relations
(`extract.stated_relations`, with its patterns and the entity names behind them): a build or a
hook that reads such a note pays for these few tables and two patterns only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .relation_types import INVERSES

# heading words -> (relation, True when the item is the source and the note the target)
HEADING_RULES: tuple[tuple[str, str, bool], ...] = (
    (r"\b(?:depends on|dependencies|requires|requirements|upstreams?)\b", "depends_on", False),
    (r"\b(?:used by|consumers|dependents|downstreams?)\b", "uses", True),
    (r"\b(?:owned by|owners?|maintainers?|maintained by)\b", "owns", True),
    (r"\bowns?\b|\bowned\b|\bresponsibilit", "owns", False),
    (r"\b(?:members|membership)\b", "part_of", True),
    (r"\b(?:replaced by|superseded by|successors?)\b", "replaces", True),
    (r"\b(?:replaces|supersedes|predecessors?)\b", "replaces", False),
    (r"\bintegrations?\b|\bintegrates with\b", "integrates_with", False),
    (r"\b(?:uses|what (?:it|they|we) uses?|stack|tools|tooling|built with|talks to|what it talks to)\b", "uses", False),
)
# table header cell -> (relation, True when the cell's name is the source)
COLUMNS: dict[str, tuple[str, bool]] = {
    "owner": ("owns", True),
    "owners": ("owns", True),
    "owned by": ("owns", True),
    "maintainer": ("owns", True),
    "maintainers": ("owns", True),
    "maintained by": ("owns", True),
    "lead": ("owns", True),
    "backup": ("works_on", True),
    "backups": ("works_on", True),
    "contributors": ("works_on", True),
}
# frontmatter property -> (relation, True when the property's value is the source)
PROPERTIES: dict[str, tuple[str, bool]] = {
    **INVERSES,
    **{rel: (rel, False) for rel in ("uses", "depends_on", "owns", "part_of", "replaces", "integrates_with", "works_on", "client_of")},
    "team": ("owns", True),
    "maintainer": ("owns", True),
}

_ANY_HEADING = re.compile("|".join(f"(?:{pattern})" for pattern, _, _ in HEADING_RULES), re.IGNORECASE)  # one search, not one per rule

_OWNER_HEADER = re.compile(rb"^[ \t]*\|.*\b(?:" + "|".join(re.escape(c) for c in COLUMNS).encode() + rb")\b", re.IGNORECASE | re.MULTILINE)


def may_state(headings: Iterable[Any], props: dict[str, Any] | None, data: bytes) -> bool:
    """A cheap test the deterministic pass runs on every note: could ``stated_relations`` find
    anything (a heading that names a relation, a property named after one, a table with an owner
    column)? Most notes have none, and pay no more than this."""
    if props and any(re.sub(r"[\s-]+", "_", str(k).strip().casefold()) in PROPERTIES or str(k).strip().casefold() == "team" for k in props):
        return True
    if any(_ANY_HEADING.search(str(h[1])) for h in headings):
        return True
    return b"|" in data and _OWNER_HEADER.search(data) is not None
