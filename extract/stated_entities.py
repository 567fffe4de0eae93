"""Entities a note names by its form, read without a model.

People mark the names that matter: a frontmatter property (``people:``,
``tools:``, ``client:``), a table cell under a ``Team`` or ``Tool`` column, ``inline code`` that is a
command or a package, a ``[linked name](url)``, a **bold name**, an ``@handle``, a Capitalised Name
in the middle of a sentence. Reading those costs a few patterns per prose line and gives a vault
without Ollama (or a note still waiting for the model) entities with a type; with the model on,
they are added to what the model names (the model's type wins), so its misses are not lost.
A ``[[wikilink]]`` needs nothing here: its target is already a node of the graph (a note, or an
unresolved name), linked from the note.

What is read, and the type each gives (see ``guess_type`` for the words that decide a type):

- frontmatter properties named after a type (``PROPERTY_TYPES``): that type;
- table cells under a header naming a type (``COLUMN_TYPES``): that type;
- ``@handles``: person; a link to a GitHub profile: person;
- ``inline code`` holding one command or package name (``kubectl``, ``go-libp2p-core``), or the
  command word of a shell line (``oc get pods`` → ``oc``): tool;
- link texts, bold names and capitalised names: by their words (``… Team`` is a
  team, ``… API`` an api, ``… Style Guide`` a convention), else ``tool`` for a single word
  (``PostgreSQL``, ``Terraform``, ``js-ipfs``), ``person`` for two or three plain capitalised
  words (``Beth Griggs``; so ``Docker Hub`` is a person too until the model says otherwise), else
  ``concept``.

Rules were chosen on the tune half of ``tests/gold_heldout`` only (docs/llm.md says so).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from .entities import canonical_name, is_pronoun

PROPERTY_TYPES: dict[str, str] = {
    **dict.fromkeys(
        ("people", "person", "persons", "attendees", "participants", "author", "authors", "assignee", "assignees", "contact", "contacts", "reviewer", "reviewers", "deciders", "with"), "person"
    ),
    **dict.fromkeys(("tools", "tool", "stack", "tech", "technologies", "languages", "language", "libraries", "library", "packages", "frameworks"), "tool"),
    **dict.fromkeys(("client", "clients", "customer", "customers"), "client"),
    **dict.fromkeys(("team", "teams", "squad"), "team"),
    **dict.fromkeys(("project", "projects"), "project"),
    **dict.fromkeys(("service", "services", "systems", "components"), "service"),
    **dict.fromkeys(("company", "companies", "organization", "organisation", "org", "vendor", "vendors"), "organization"),
}
COLUMN_TYPES: dict[str, str] = {
    **dict.fromkeys(
        ("name", "person", "people", "who", "owner", "owners", "assignee", "lead", "leads", "contact", "member", "members", "maintainer", "maintainers", "reviewer", "author", "chair", "chairs"),
        "person",
    ),
    **dict.fromkeys(("tool", "tools", "library", "package", "technology", "language", "framework", "dependency", "dependencies"), "tool"),
    **dict.fromkeys(("service", "services", "system", "component", "application", "app"), "service"),
    **dict.fromkeys(("team", "teams", "group", "squad", "working group"), "team"),
    **dict.fromkeys(("project", "projects", "repository", "repo"), "project"),
    **dict.fromkeys(("client", "customer"), "client"),
    **dict.fromkeys(("company", "organization", "organisation", "vendor"), "organization"),
}

MAX_LINE = 4000  # characters of a line read for names: prose lines are shorter; a longer one is data
# a token, an id, a key's line: letters of both cases and digits, 16 or more, no space
_KEY_SHAPED = re.compile(r"(?=[^ ]*\d)(?=[^ ]*[a-z])(?=[^ ]*[A-Z])[A-Za-z0-9+/=_-]{16,}")
_PLACEHOLDER = re.compile(r"\[REDACTED:[\w-]+\]")
_WIKILINK = re.compile(r"\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]")
_MD_LINK = re.compile(r"(?<!!)\[([^\]\[]{1,80})\]\(([^)\s]*)[^)]*\)")
_BOLD = re.compile(r"\*\*([^*\n]{1,60}?)\*\*|(?<!\w)__([^_\n]{1,60}?)__(?!\w)")
_CODE = re.compile(r"(?<!`)`([^`\n]{1,80})`(?!`)")
_HANDLE = re.compile(r"(?<![\w@/.])@([A-Za-z0-9][A-Za-z0-9-]{1,38})(?![\w@.]*\.\w)")
_GITHUB_REPO = re.compile(r"^https?://github\.com/[\w.-]+/[\w.-]+")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TOOL_TOKEN = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)*$")
_SOFTWARE_SHAPE = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|^[a-z]+-[a-z0-9-]+$|\d")
_WORD = re.compile(r"[\w@][\w'’.&+-]*")
# a run of capitalised words (with lower-case joiners between them) in running text
_CAP_WORD = r"[A-Z][\w’'+-]*(?:\.[A-Za-z]\w*)*"
_UPPER = re.compile(r"[A-Z]")
_STARTS_SENTENCE = frozenset('.!?:;>(["“|*_-')
_CAPITALISED = re.compile(rf"(?<![\w@#/.`-])({_CAP_WORD}(?:\s+(?:(?:of|for|&|de|du|the)\s+)?{_CAP_WORD})*)")

# words that start sentences, label things or are common nouns capitalised in headings: never a name alone
_NOT_NAMES = frozenset(
    """
    a an the this that these those there here it its we our us you your they their i me my he she his her
    if when while where what why how who which whom whose as at by for from in into of on onto to with
    and or but so not no yes also then than thus however therefore although though because since until
    after before during above below all any each every some many most more other such only just even
    be is are was were been being do does did done have has had can could may might must shall should
    will would please note notes see read check use using used make run set get add new next last first
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december today yesterday tomorrow week weeks month year
    overview summary background context decision decisions status consequences introduction conclusion
    goals goal scope purpose example examples usage details description references links resources todo
    done tip warning important info caution danger faq tl;dr tldr action actions agenda attendees
    update updates notes problem solution pros cons option options alternatives proposal question
    questions answer answers step steps prerequisites requirements impact mitigation diagnosis
    meaning severity runbook playbook guide guidelines rules rule best practice practices general
    dos don'ts do's don't avoid prefer always never yes ok okay etc e.g i.e vs via per
    """.split()
)
_TEAM_TAIL = re.compile(r"(?:\bteam|\bteams|\bsquad|\bgroup|\bworking group|\bwg|\bsig|\bcommittee|\bcouncil|\bguild|\bcrew)$|^(?:wg|sig)\b|^@[\w-]+/[\w-]+$", re.IGNORECASE)
_API_TAIL = re.compile(r"\b(?:api|apis|endpoint|protocol)$", re.IGNORECASE)
_CONVENTION_TAIL = re.compile(r"\b(?:style guide|guide|guidelines|conventions?|standards?|code of practice|principles|policy|manifesto|charter)$", re.IGNORECASE)
_DECISION = re.compile(r"^(?:adr[- ]?)?\d{1,4}[.:)]?\s+\S|^adr\b|\bdecision record\b", re.IGNORECASE)
_ORG_TAIL = re.compile(
    r"\b(?:inc|ltd|llc|corp|corporation|company|foundation|institute|university|college|ministry|department|agency|office|library|house|council|government|administration|association|society|consortium|commission|bureau|gmbh|plc)\.?$",
    re.IGNORECASE,
)
_PROJECT_TAIL = re.compile(r"\b(?:project|initiative|migration|programme|program|roadmap|rollout)$", re.IGNORECASE)
_SERVICE_TAIL = re.compile(r"\b(?:service|server|cluster|database|platform|gateway|pipeline|worker|daemon|registry|operator)$", re.IGNORECASE)
# generic technical abbreviations: words, not names of anything a graph should hold
_GENERIC_ABBREVIATIONS = frozenset(
    """
    api apis cli gui ui ux cpu gpu ram ssd os vm vms pr prs mr mrs ci cd qa sql json yaml xml csv pdf html css url urls uri http https
    tl dr tldr tbd wip faq rc lts eol eta id ids io orm cms crm db dbs adr rfc mvp sla slo sli kpi okr pm am utc pt et
    n/a na ok etc vs
    """.split()
)
_PERSON_SITE = re.compile(r"^https?://(?:www\.)?(?:twitter\.com|x\.com|linkedin\.com/in|github\.com|mastodon\.\w+|bsky\.app/profile)/@?[\w.-]+/?(?:\?.*)?$")
_PLAIN_NAME = re.compile(r"^[A-Z][a-zà-ÿ]+(?: [A-Z][a-zà-ÿ]+){1,2}$")
_SHELL_WORD = re.compile(r"^([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)\s+(?:-{1,2}\w|[a-z][\w.-]*(?:\s|$))")


def reads_names(relpath: str, answered: bool = False) -> bool:
    """Whether the names a note's form marks become entities of the note.

    Never in kg's own journal days (`journal/2026-12-04.md`: entries agents write every session,
    read back by `kg recall`; a name there would add a node per session); hand-written daily notes
    elsewhere are read. Under a model's answer (``answered``: verified in the background worker),
    always. Otherwise, for a note with the model off or still pending, when ``KG_NAMES=on``: off by
    default, because an edit that changes a note's names leaves the hook's fast paths today (a
    one-note update several times dearer on a docs vault, docs/entities.md); `kg build --force`
    after turning it on or off."""
    if relpath.startswith("journal/"):
        from vault_kg.core.memory_kinds import journal_day

        if journal_day(relpath) is not None:
            return False
    return answered or names_on()


def names_on() -> bool:
    """``KG_NAMES=on``: the names a note's form marks become entities without a model too."""
    return os.environ.get("KG_NAMES", "off").strip().lower() in ("on", "1", "true", "yes")


def stated_entities(lines: dict[int, str], props: dict[str, Any] | None = None, redacted: bool = False) -> list[dict[str, Any]]:
    """``[{"name", "type", "line", "rule"}]``: the entities ``lines`` (file line number → raw prose
    line, see :func:`extract.prose.prose_lines`) and ``props`` (frontmatter) name by their form,
    first mention first, one per canonical name (a typed mention beats a ``concept`` one).
    ``redacted``: the lines already went through :func:`redacted_lines`.

    >>> [(e["name"], e["type"]) for e in stated_entities({3: "We moved `kubectl` jobs to the **Platform Team**, see [Terraform](https://terraform.io)."})]
    [('Terraform', 'tool'), ('Platform Team', 'team'), ('kubectl', 'tool')]
    """
    found: dict[str, dict[str, Any]] = {}

    def add(name: str, kind: str | None, line: int | None, rule: str) -> None:
        name = _clean(name)
        if not name or not _name_like(name):
            return
        key = canonical_name(name)
        if not key or is_pronoun(name):
            return
        entity_type = kind or guess_type(name)
        held = found.get(key)
        if held is None:
            found[key] = {"name": name, "type": entity_type, "line": line, "rule": rule}
        elif held["type"] == "concept" and entity_type != "concept":
            held["type"] = entity_type

    for key, value in (props or {}).items():
        kind = PROPERTY_TYPES.get(str(key).strip().casefold().replace(" ", "_"))
        if kind:
            for item in _values(value):
                if not _secret(item):
                    add(item, kind, None, f"property {key}")
    header: list[str | None] = []
    for number, line in _redacted(lines, already=redacted):
        if "|" in line and line.lstrip().startswith("|"):
            header = _table_line(line, number, header, add)
            continue
        header = []
        for rule, name, kind in _marked(line):
            if rule in ("link", "bold") and not kind and not _title_like(name):
                continue
            add(name, kind, number, rule)
        if not _HEADING.match(line):
            for name in _capitalised(line):
                add(name, None, number, "capitalised")
    return list(found.values())


def _redacted(lines: dict[int, str], already: bool = False) -> list[tuple[int, str]]:
    """(number, line) in order, each cut at ``MAX_LINE``, with every secret taken out (unless
    ``already``): a name is never read from a credential (see :func:`redacted_lines`)."""
    cut = {n: lines[n][:MAX_LINE] for n in sorted(lines)}
    return [(n, _PLACEHOLDER.sub(" ", line) if "[REDACTED:" in line else line) for n, line in (cut if already else redacted_lines(cut)).items()]


def redacted_lines(lines: dict[int, str]) -> dict[int, str]:
    """``lines`` with the secrets of each line replaced (`vault_kg.core.secrets.redact`): one scan
    for the words every secret contains, then only the lines holding one are redacted; the body of
    a key that spans lines holds no such word, and its lines never read as names (``_KEY_SHAPED``)."""
    from vault_kg.core.secrets import may_hold_secret, redact

    numbers = sorted(lines)
    if not may_hold_secret("\n".join(lines[n] for n in numbers)):
        return {n: lines[n] for n in numbers}
    return {n: redact(lines[n]) if may_hold_secret(lines[n]) else lines[n] for n in numbers}


def _marked(line: str) -> Iterable[tuple[str, str, str | None]]:
    """(rule, name, type or None) for each name a line marks: links, bold, code, handles."""
    if "](" in line:
        for match in _MD_LINK.finditer(line):
            text, url = match.group(1), match.group(2)
            if "#" in text or "_" in text or re.match(r"^v?\d", text) or ("/" in text and not text.startswith("@")):
                continue  # issue and pull-request references, versions, paths, identifiers
            yield "link", text, "person" if _PERSON_SITE.match(url) and not _GITHUB_REPO.match(url) else None
    if "**" in line or "__" in line:
        for match in _BOLD.finditer(line):
            text = match.group(1) or match.group(2) or ""
            if not text.rstrip().endswith(":"):
                yield "bold", text, None
    if "`" in line:
        for match in _CODE.finditer(line):
            tool = _command_or_package(match.group(1))
            if tool:
                yield "code", tool, "tool"
    if "@" in line:
        for match in _HANDLE.finditer(line):
            yield "handle", "@" + match.group(1), "person"


def _table_line(line: str, number: int, header: list[str | None], add: Any) -> list[str | None]:
    """Read one table line: the header row sets each column's type, the rule row is skipped, a
    body row adds the cells under typed columns. Returns the header for the next line."""
    cells = [c.strip() for c in _CELL_SPLIT.split(line.strip().strip("|"))]
    if _TABLE_RULE.match(line):
        return header
    if not header:
        return [COLUMN_TYPES.get(re.sub(r"[*_`]", "", c).strip().casefold()) for c in cells] or [None]
    for kind, cell in zip(header, cells):
        if kind:
            for part in re.split(r",\s*|<br\s*/?>|;\s*", cell):
                text = _WIKILINK.sub(lambda m: m.group(1), part)
                text = _MD_LINK.sub(lambda m: m.group(1), text)
                add(text, kind, number, "table")
    for rule, name, kind in _marked(line):
        add(name, kind, number, rule)
    return header


def _command_or_package(code: str) -> str | None:
    """The tool an inline code span names: the span itself when it is one name-shaped word
    (``kubectl``, ``go-libp2p-core``, ``PyMol``), or the command word of a shell line (``oc get
    pods``); paths, flags, calls, assignments and ALL_CAPS variables are not tools."""
    code = code.strip()
    if _TOOL_TOKEN.match(code):
        if len(code) < 2 or not code[0].islower() or re.search(r"[a-z][A-Z]", code):
            return None  # constants, types and camelCase identifiers are code, not tools
        if "." in code and not code.endswith(".js"):
            return None  # file.ext and a.b attribute paths
        return code
    shell = _SHELL_WORD.match(code)
    return shell.group(1) if shell and "=" not in code and "(" not in code else None


def _mid_capital(line: str) -> bool:
    """Whether a capital appears that no sentence start explains: inside a word (``GitHub``,
    ``AWS``) or after a word and a space. A cheap look at each capital, not a pattern tried at
    every position: most lines of most notes stop here."""
    for match in _UPPER.finditer(line, 1):
        i = match.start()
        before = line[i - 1]
        if before.isalnum():
            return True
        j = i - 1
        while j >= 0 and line[j].isspace():
            j -= 1
        if 0 <= j < i - 1 and line[j] not in _STARTS_SENTENCE:
            return True
    return False


def _capitalised(line: str) -> Iterable[str]:
    """Capitalised names inside running text: a run of capitalised words that is not the first word
    of a sentence (unless it is several words, an acronym or CamelCase)."""
    if not _mid_capital(line):
        return  # capitals only where sentences start: nothing to read
    text = _LIST.sub("", line)
    text = re.sub(r"`[^`]*`|\[\[[^\]]*\]\]|\]\([^)]*\)|https?://\S+|<[^>]+>", " ", text)
    text = text.replace("**", " ").replace("__", " ").replace("[", " ").replace("]", " ")
    for match in _CAPITALISED.finditer(text):
        name = match.group(1).rstrip(".’'")
        i = match.start() - 1
        while i >= 0 and text[i].isspace():
            i -= 1
        words = name.split()
        sentence_start = i < 0 or text[i] in '.!?:;—–|>"“(' or (text[i] == "-" and text[i - 1 : i] == " ")
        if sentence_start:
            while words and words[0].casefold().strip(".,") in _NOT_NAMES:
                words = words[1:]
            if len(words) == 1 and not _SOFTWARE_SHAPE.search(words[0]) and not words[0].isupper():
                continue
        while words and words[-1].casefold().strip(".,") in _NOT_NAMES and not (len(words) > 1 and words[-1].isupper()):
            words = words[:-1]  # "… Monday", but "Tool A" and "Plan B" keep their letter
        if all(w.casefold() in _GENERIC_ABBREVIATIONS or w.casefold().removesuffix("s") in _GENERIC_ABBREVIATIONS for w in words):
            continue
        if words:
            yield " ".join(words)


# the words that give a name its type, first match wins (``type_from_name`` is the relation
# verifier's narrower reading of team / api / service endings)
_TYPE_WORDS = (
    (_DECISION, "decision"),
    (_TEAM_TAIL, "team"),
    (_API_TAIL, "api"),
    (_CONVENTION_TAIL, "convention"),
    (_ORG_TAIL, "organization"),
    (_PROJECT_TAIL, "project"),
    (_SERVICE_TAIL, "service"),
)


def guess_type(name: str) -> str:
    """The type a name's own words give it (see the module docstring)."""
    text = name.strip()
    if text.startswith("@"):
        return "team" if "/" in text else "person"
    for pattern, kind in _TYPE_WORDS:
        if pattern.search(text):
            return kind
    if " " not in text:
        return "tool"  # one word written as a name mid-sentence is most often software (tune half: 45 of 60 typed)
    if _PLAIN_NAME.match(text):
        return "person"  # "Beth Griggs": two or three plain capitalised words (tune half: 22 of 38 typed)
    return "concept"


def _clean(name: str) -> str:
    name = re.sub(r"[`*_]{1,2}", "", name) if ("`" in name or "*" in name or "__" in name) else name
    return re.sub(r"\s+", " ", name).strip(" \t\"'“”‘’.,;:!?()[]{}<>")


def _name_like(name: str) -> bool:
    """A name, not a phrase: one to five words, not a stop word alone, with a capital, a digit, a
    hyphen or an ``@`` somewhere unless it is one word (``kubectl``)."""
    words = _WORD.findall(name)
    if not words or len(words) > 5 or len(name) > 60 or "://" in name or _KEY_SHAPED.fullmatch(name):
        return False
    if words[0].casefold() in _NOT_NAMES and (
        len(words) == 1 or words[0].casefold() in {"a", "an", "this", "that", "here", "see", "read", "how", "what", "why", "when", "if", "to", "in", "on", "for", "with"}
    ):
        return False
    if all(w.casefold() in _NOT_NAMES for w in words):
        return False
    if len(words) > 1 and not any(c.isupper() or c.isdigit() or c in "@-" for c in name):
        return False
    return not name.endswith(("…", "..."))


def _title_like(name: str) -> bool:
    """A linked or bold phrase that reads as a name: one word, or most words capitalised
    ("Cloud Platform Team", "Effective Go"), not a sentence ("Access controls", "Mailing list")."""
    words = [w for w in _WORD.findall(name) if w.casefold() not in {"of", "for", "and", "the", "&", "de", "in", "on", "to", "a"}]
    if len(words) <= 1:
        return True
    capitals = sum(1 for w in words if not w[0].islower())
    return capitals * 2 > len(words)


def _secret(text: str) -> bool:
    from vault_kg.core.secrets import find_secrets, may_hold_secret

    return may_hold_secret(text) and bool(find_secrets(text))


def _values(value: Any) -> Iterable[str]:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, str):
            text = _WIKILINK.sub(lambda m: m.group(1), item)
            yield from (part for part in re.split(r",\s*", text) if part.strip())
