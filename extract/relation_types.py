"""Which relation makes sense between two kinds of entity, and the one each inverse form maps to.

A 1.5B model does not learn an 8-verb vocabulary from a prompt: it calls almost everything
`works_on` and puts the note's subject first ("payments-api owns Platform team"). The types of
the two ends say a lot more: a team can own a service, a service cannot own a team; a tool does
not work on anything. So the verb the model picks is kept only when it is valid for the two ends'
types; a pair read the wrong way round is flipped; any other verb becomes the one verb that the
type pair allows by default. Ends of unknown type are left as the model said.

Inverse and near-synonym forms (`replaced_by`, `owned_by`, `member_of`, `used_by`, ...) map to one
of the canonical relations with a direction, here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

PEOPLE = frozenset({"person", "team"})
ORGS = frozenset({"organization", "client"})
THINGS = frozenset({"project", "service", "tool", "api"})
RECORDS = frozenset({"decision", "convention"})

# relation -> the (source type, target type) pairs it is valid for
_VALID: dict[str, set[tuple[str, str]]] = {
    "uses": {(s, t) for s in PEOPLE | ORGS | THINGS for t in THINGS},
    "depends_on": {(s, t) for s in THINGS for t in THINGS},
    "integrates_with": {(s, t) for s in THINGS for t in THINGS},
    "replaces": {(s, t) for group in (THINGS, RECORDS) for s in group for t in group},
    "owns": {(s, t) for s in PEOPLE | {"organization"} for t in THINGS | RECORDS},
    "works_on": {(s, t) for s in PEOPLE for t in ORGS | {"project"}} | {("person", "service")},
    "part_of": {("person", t) for t in {"team"} | ORGS} | {("team", t) for t in ORGS} | {(s, t) for s in THINGS for t in THINGS},
    "client_of": {(s, t) for s in ORGS for t in ORGS},
}
SYMMETRIC = frozenset({"integrates_with"})

# (source type, target type) -> the relation to use when the model's verb does not fit
_DEFAULT: dict[tuple[str, str], str] = {}
for _s in PEOPLE | ORGS | THINGS:
    for _t in THINGS:
        _DEFAULT[(_s, _t)] = "uses"
for _t in ORGS:
    _DEFAULT[("person", _t)] = "works_on"
    _DEFAULT[("team", _t)] = "works_on"
_DEFAULT[("person", "team")] = "part_of"
_DEFAULT[("team", "organization")] = "part_of"
for _s in PEOPLE:
    _DEFAULT[(_s, "project")] = "works_on"
    for _t in RECORDS:
        _DEFAULT[(_s, _t)] = "owns"
_DEFAULT[("team", "service")] = "owns"  # a team working on a service owns it

# inverse or synonym verb -> (canonical relation, True when the ends are swapped)
INVERSES: dict[str, tuple[str, bool]] = {
    "replaced_by": ("replaces", True),
    "superseded_by": ("replaces", True),
    "supersedes": ("replaces", False),
    "owned_by": ("owns", True),
    "maintained_by": ("owns", True),
    "maintains": ("owns", False),
    "owner": ("owns", True),
    "owners": ("owns", True),
    "led_by": ("owns", True),
    "leads": ("owns", False),
    "member_of": ("part_of", False),
    "members": ("part_of", True),
    "has_member": ("part_of", True),
    "contains": ("part_of", True),
    "includes": ("part_of", True),
    "component_of": ("part_of", False),
    "used_by": ("uses", True),
    "users": ("uses", True),
    "stack": ("uses", False),
    "tools": ("uses", False),
    "requires": ("depends_on", False),
    "needs": ("depends_on", False),
    "dependencies": ("depends_on", False),
    "depends": ("depends_on", False),
    "required_by": ("depends_on", True),
    "dependents": ("depends_on", True),
    "integrations": ("integrates_with", False),
    "integrates": ("integrates_with", False),
    "clients": ("client_of", True),
    "client": ("client_of", True),
    "customer_of": ("client_of", False),
    "worked_on_by": ("works_on", True),
    "contributors": ("works_on", True),
    "works_for": ("works_on", False),
}

_SEP = re.compile(r"[\s-]+")


def canonical_relation(verb: str) -> tuple[str, bool] | None:
    """(relation, swapped) for a canonical verb, an inverse form or a synonym; None if unknown."""
    key = _SEP.sub("_", verb.strip().casefold())
    if key in _VALID:
        return key, False
    return INVERSES.get(key)


def valid(relation: str, source_type: str | None, target_type: str | None) -> bool:
    return (source_type, target_type) in _VALID.get(relation, set())


def fit(relation: str, source_type: str | None, target_type: str | None) -> tuple[str, bool]:
    """(relation, flip): the model's verb when it fits the two ends' types, read the other way
    round when only that fits, else the type pair's default verb (either way round). Unknown
    types, or a pair no verb fits: the verb as given, unflipped."""
    if source_type is None or target_type is None:
        return relation, False
    if valid(relation, source_type, target_type):
        return relation, False
    if relation not in SYMMETRIC and valid(relation, target_type, source_type):
        return relation, True
    default = _DEFAULT.get((source_type, target_type))
    if default is not None:
        return default, False
    default = _DEFAULT.get((target_type, source_type))
    if default is not None:
        return default, True
    return relation, False


_TEAM = re.compile(r"(?:^|[\s-])(?:team|squad|rota|guild|chapter|crew|department|dept)$", re.IGNORECASE)
_API = re.compile(r"(?:[\s-]api|^api)$", re.IGNORECASE)
_SERVICE = re.compile(r"[\s-](?:service|svc|worker|workers|gateway|server|daemon|job)$", re.IGNORECASE)


def type_from_name(name: str) -> str | None:
    """What a name's own words say about its type ("Discovery team", "payments-api")."""
    stripped = name.strip()
    if _TEAM.search(stripped):
        return "team"
    if _API.search(stripped):
        return "api"
    if _SERVICE.search(stripped):
        return "service"
    return None


_TYPE_TAGS = {t: t for t in (*PEOPLE, *ORGS, *THINGS, *RECORDS)} | {"people": "person", "customer": "client", "adr": "decision", "lib": "tool", "library": "tool"}


def type_from_tags(tags: Iterable[str], names: Iterable[str]) -> str | None:
    """The note's own type from its tags: `type/service`, a bare `person` or `team`, or
    `tool/semrush` when the tag's last part is the start of the note's title or an alias
    (`client/globex` on a meeting note about Globex says nothing about the meeting)."""
    slugs = [_SEP.sub("-", n.strip().casefold()) for n in names if n and n.strip()]
    found: str | None = None
    for tag in tags:
        parts = [p for p in str(tag).casefold().split("/") if p]
        if not parts:
            continue
        if parts[0] == "type" and len(parts) > 1 and parts[1] in _TYPE_TAGS:
            return _TYPE_TAGS[parts[1]]
        kind = _TYPE_TAGS.get(parts[0])
        if kind is None or found is not None:
            continue
        if len(parts) == 1:
            found = kind
        elif any(slug == parts[-1] or slug.startswith(parts[-1] + "-") for slug in slugs):
            found = kind
    return found


def typer(entities: Iterable[dict[str, Any]], subject: Iterable[str], subject_type: str | None, key: Callable[[str], str]) -> Callable[[str], str | None]:
    """A name's type: the note's own type for the subject, else the model's (never its
    "concept" fallback), else what the name's words say."""
    given = {key(e["name"]): e.get("type") for e in entities if e.get("type") not in (None, "concept")}
    own = {key(n) for n in subject}

    def type_of(name: str) -> str | None:
        k = key(name)
        if k in own and subject_type is not None:
            return subject_type
        return given.get(k) or type_from_name(name)

    return type_of


def fit_relations(relations: list[dict[str, Any]], type_of: Callable[[str], str | None]) -> list[dict[str, Any]]:
    """Relations with verbs fitted to their ends' types (``fitted`` records the model's verb)."""
    out = []
    for rel in relations:
        relation, flip = fit(rel["relation"], type_of(rel["source"]), type_of(rel["target"]))
        if relation == rel["relation"] and not flip:
            out.append(rel)
            continue
        new = {**rel, "relation": relation, "fitted": rel["relation"] + (" (reversed)" if flip else "")}
        if flip:
            new["source"], new["target"] = rel["target"], rel["source"]
        out.append(new)
    return out
