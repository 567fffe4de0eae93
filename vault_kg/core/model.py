"""The graph model shared by every extractor, the engine and the writers.

An :class:`Extraction` is everything one source file contributes to a scope's graph. The engine
owns nothing else: the graph is the fold of the extractions of the files that exist now, plus
what resolution derives from them. That is what makes "no ghost nodes" hold on every route.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AMBIGUOUS",
    "ANCHORED_TO",
    "ATTACHMENT",
    "CALLS",
    "CLASS",
    "CONFIDENCE_SCORE",
    "CONTAINS",
    "EMBEDS",
    "ENTITY",
    "EXTERNAL",
    "EXTRACTED",
    "Extraction",
    "FILE",
    "FUNCTION",
    "HAS_SECTION",
    "HOT_META",
    "IMPLEMENTS",
    "IMPORTS",
    "INFERRED",
    "INHERITS",
    "LINKS_TO",
    "LIVE",
    "LOCATOR_SEP",
    "MENTIONS",
    "METHOD",
    "MODULE",
    "NOTE",
    "PENDING",
    "QUARANTINED",
    "Ref",
    "attachment_id",
    "is_note_path",
    "SCHEMA_VERSION",
    "SECTION",
    "STALE",
    "SUPERSEDED",
    "SUPERSEDES",
    "TAG",
    "TAGGED",
    "TAG_PARENT",
    "UNRESOLVED",
    "edge",
    "entity_id",
    "external_id",
    "file_id",
    "note_id",
    "section_id",
    "tag_id",
    "unresolved_id",
]

SCHEMA_VERSION = 1

# Node kinds.
NOTE = "note"
TAG = "tag"
SECTION = "section"
UNRESOLVED = "unresolved"
ENTITY = "entity"
FILE = "file"
MODULE = "module"
CLASS = "class"
FUNCTION = "function"
METHOD = "method"
EXTERNAL = "external"
ATTACHMENT = "attachment"  # a vault file that is not a note: an image, a PDF, a canvas, any attachment

# Edge relations (documented in docs/vault-graph.md and docs/code-graph.md).
LINKS_TO = "links_to"
EMBEDS = "embeds"
TAGGED = "tagged"
TAG_PARENT = "tag_parent"
HAS_SECTION = "has_section"
MENTIONS = "mentions"
CONTAINS = "contains"
IMPORTS = "imports"
CALLS = "calls"
INHERITS = "inherits"
IMPLEMENTS = "implements"
ANCHORED_TO = "anchored_to"
SUPERSEDES = "supersedes"

# Confidence levels and their default scores.
EXTRACTED = "EXTRACTED"
INFERRED = "INFERRED"
AMBIGUOUS = "AMBIGUOUS"
CONFIDENCE_SCORE = {EXTRACTED: 1.0, INFERRED: 0.6, AMBIGUOUS: 0.3}

# Node status.
LIVE = "live"
STALE = "stale"
SUPERSEDED = "superseded"
PENDING = "pending"
QUARANTINED = "quarantined"

LOCATOR_SEP = " › "


def note_id(relpath: str) -> str:
    return f"note:{relpath}"


def attachment_id(relpath: str) -> str:
    return f"attachment:{relpath}"


def is_note_path(relpath: str) -> bool:
    """A vault source is a note when it ends in `.md` (any letter case); anything else is an attachment."""
    return relpath[-3:].lower() == ".md"


def tag_id(tag: str) -> str:
    return f"tag:{tag}"


def section_id(relpath: str, heading: str) -> str:
    return f"section:{relpath}#{heading}"


def unresolved_id(target: str) -> str:
    return f"unresolved:{target}"


def file_id(relpath: str) -> str:
    return f"file:{relpath}"


def external_id(module: str) -> str:
    return f"external:{module}"


def entity_id(canonical: str) -> str:
    return f"entity:{canonical}"


def edge(
    source: str,
    target: str,
    relation: str,
    owner: str,
    line: int | None = None,
    confidence: str = EXTRACTED,
    score: float | None = None,
    **attrs: Any,
) -> dict[str, Any]:
    """Build an edge record; every edge names the file whose extraction produced it."""
    record = {
        "source": source,
        "target": target,
        "relation": relation,
        "confidence": confidence,
        "score": CONFIDENCE_SCORE[confidence] if score is None else score,
        "owner": owner,
        "line": line,
    }
    record.update(attrs)
    return record


@dataclass
class Ref:
    """A reference that only the whole scope can resolve (a wikilink, a call, an import).

    The owning file keeps the raw target; resolution at assembly turns it into an edge to a real
    node or to an explicit ``unresolved:`` / ``external:`` node, so a dangling reference resolves
    by itself once its target appears.
    """

    source: str
    target: str
    relation: str
    line: int | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its fields in order: a full build's extraction workers send tens of
        thousands of references back, and the default (a new object, then its `__dict__`)
        takes several times as long to load."""
        return type(self), (self.source, self.target, self.relation, self.line, self.attrs)


@dataclass
class Extraction:
    """What one source file contributes: the nodes and edges it owns, and its open references.

    ``nodes`` maps node id to attributes. Shared nodes (tags, entities) may be contributed by many
    files; the engine merges them and each lives exactly as long as one contributor does.
    ``text`` is the searchable text of the file's main node (for BM25). ``quarantine`` holds the
    reason when the file could not be read or parsed; the file's node still exists so that nothing
    is silently dropped.
    """

    source: str
    hash: str
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: list[dict[str, Any]] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    text: str = ""
    quarantine: str | None = None
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def hot(self, key: str, default: Any = None) -> Any:
        """`meta[key]` for a key in HOT_META: what every update reads from every source.

        Extractions loaded from the cache answer these without decoding the rest of their
        meta and refs, which only the few sources an update re-resolves need.
        """
        return self.meta.get(key, default)


HOT_META = ("title", "aliases", "llm", "code")
