"""Property: every repair changes only the frontmatter keys it owns, whatever the user wrote.

Random frontmatter (YAML 1.1 traps, comments, every quoting style, flow and block lists, nested maps,
block scalars, unicode, CRLF, a BOM) goes through the real repair functions; a YAML 1.2 round-trip
loader (ruamel.yaml, independent of the splice code's own bookkeeping) then finds each top-level
key's source text before and after, and every key the repair does not own must be byte for byte
the same, in the same order, with the same value under YAML 1.1 and 1.2; the body too.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from anchor_helpers import RETRY_PY, World, make_world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_kg.core.errors import KgError
from vault_kg.notes.frontmatter_edit import EditableFrontmatter, same

FETCH = "src/retry.py › class Client › method fetch"
TRAP_SCALARS = [
    "NO",
    "no",
    "No",
    "yes",
    "Yes",
    "on",
    "off",
    "OFF",
    "y",
    "n",
    "Y",
    "true",
    "False",
    "1.10",
    "0123",
    "012",
    "0o17",
    "0x1F",
    "0b101",
    "12:30",
    "1:20:30",
    "+4712345678",
    "-0",
    ".5",
    "1e3",
    "1_000",
    "2024-01-05",
    "2024-01-05 10:00:00",
    "2024-01-05T10:00:00Z",
    "~",
    "null",
    "Null",
    "NULL",
    "",
    ".inf",
    "-.Inf",
    ".NaN",
]
TRAP_KEYS = ["on", "no", "yes", "y", "off", "1", "0123", "12:30", "null_", "Country"]
OWNED_BY_SOME_REPAIR = {
    "anchors",
    "history",
    "superseded_by",
    "supersedes",
    "valid_to",
    "valid_from",
    "retired",
    "summary",
    "tags",
    "tag",
    "aliases",
    "alias",
    "merged_into",
}
WORD = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzäöüéß東京д"), min_size=1, max_size=8)
PLAIN = st.builds(lambda a, b: f"{a} {b}".strip(), WORD, st.one_of(st.just(""), WORD, st.just("😀")))
QUOTABLE = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Cn", "Co", "Zl", "Zp")), max_size=12)


@st.composite
def scalar(draw: Any) -> str:
    kind = draw(st.sampled_from(["trap", "plain", "single", "double"]))
    if kind == "trap":
        return draw(st.sampled_from(TRAP_SCALARS))
    if kind == "plain":
        return draw(PLAIN)
    text = draw(QUOTABLE)
    return "'" + text.replace("'", "''") + "'" if kind == "single" else json.dumps(text, ensure_ascii=False)


def comment(draw: Any) -> str:
    return draw(st.sampled_from(["", "", "  # note", "   # NO: keep me", " #x"]))


@st.composite
def value(draw: Any) -> str:
    """The text after `key:` (starting with a space or a newline), always ending in a newline."""
    kind = draw(st.sampled_from(["scalar", "scalar", "empty", "flow", "block", "map", "literal"]))
    if kind == "scalar":
        text = draw(scalar())
        return (f" {text}" if text else "") + comment(draw) + "\n"
    if kind == "empty":
        return comment(draw) + "\n"
    if kind == "flow":
        items = draw(st.lists(scalar().filter(lambda s: s and not s.startswith(("-", "?", "[", "{"))), max_size=4))
        items = [i for i in items if ":" not in i.strip("'\"")]
        sep = draw(st.sampled_from([", ", ",", ",  "]))
        return f" [{sep.join(items)}]" + comment(draw) + "\n"
    if kind == "block":
        dash = draw(st.sampled_from(["", "  "]))
        items = draw(st.lists(scalar(), min_size=1, max_size=4))
        return "\n" + "".join(f"{dash}- {i}{comment(draw)}\n" if i else f"{dash}-\n" for i in items)
    if kind == "map":
        keys = draw(st.lists(st.sampled_from(["a", "b", "on", "zip", "when"]), min_size=1, max_size=3, unique=True))
        return "\n" + "".join(f"  {k}: {draw(scalar())}{comment(draw)}\n" for k in keys)
    style = draw(st.sampled_from(["|", ">", "|-", ">+"]))
    lines = draw(st.lists(PLAIN, min_size=1, max_size=3))
    return f" {style}\n" + "".join(f"  {line}\n" for line in lines)


def yaml11_key(key: str) -> Any:
    """The key as YAML 1.1 reads it: `on` and `1` are the same dict key there (True == 1)."""
    return next(iter(yaml.safe_load(f"{key}: 1")))


@st.composite
def user_frontmatter(draw: Any, extra: str = "") -> str:
    """Block `key: value` lines in any order, comments between them, plus `extra` (e.g. a hand-written anchor)."""
    keys = draw(st.lists(st.one_of(st.sampled_from(TRAP_KEYS), st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)), min_size=1, max_size=7, unique_by=yaml11_key))
    keys = [k for k in keys if k not in OWNED_BY_SOME_REPAIR]
    parts = []
    if draw(st.booleans()):
        parts.append(f"summary: {draw(PLAIN)}\ntags: [scope/global, topic/{draw(st.sampled_from(['a', 'b']))}]\n")
    for key in keys:
        if draw(st.integers(0, 4)) == 0:
            parts.append(draw(st.sampled_from(["# a comment\n", "\n", "#: looks like a key\n"])))
        parts.append(f"{key}:{draw(value())}")
    if extra:
        parts.insert(draw(st.integers(0, len(parts))), extra)
    return "".join(parts)


def valid(front: str) -> bool:
    """Both YAML versions read it as a mapping (the generator's quoted text can still be illegal YAML)."""
    try:
        return isinstance(yaml11(front), dict) and isinstance(yaml12(front), dict)
    except Exception:
        return False


@st.composite
def note(draw: Any, extra: str = "") -> str:
    front = draw(user_frontmatter(extra).filter(valid))
    body = draw(st.sampled_from(["# Title\n\nBody.\n", "Body with a CRLF\r\nline", "", "---\nnot frontmatter\n---\n"]))
    text = f"---\n{front}---\n{body}"
    if draw(st.booleans()):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    if draw(st.integers(0, 5)) == 0:
        text = "\ufeff" + text
    return text


# ------------------------------------------------------------------ the independent checker

_FM_RE = re.compile(r"\A\ufeff?---\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


def split(text: str) -> tuple[str, str]:
    match = _FM_RE.match(text)
    assert match, text
    return match.group(1), text[match.end() :]


def key_sources(front: str) -> dict[str, str]:
    """Each top-level key's own lines, found by ruamel.yaml's round-trip loader (YAML 1.2): from the
    key's line to the next key's, trailing blank and comment-only lines left out."""
    from ruamel.yaml import YAML

    data = YAML(typ="rt").load(front) or {}
    lines = front.replace("\r\n", "\n").split("\n")
    starts = sorted((data.lc.key(k)[0], str(k)) for k in data)
    spans = {}
    for (line, name), nxt in zip(starts, [*starts[1:], (len(lines), None)]):
        chunk = lines[line : nxt[0]]
        while chunk and (not chunk[-1].strip() or chunk[-1].lstrip().startswith("#")):
            chunk.pop()
        spans[name] = "\n".join(chunk)
    return spans


def yaml12(front: str) -> dict[str, Any]:
    from ruamel.yaml import YAML

    return {str(k): v for k, v in (YAML(typ="safe", pure=True).load(front) or {}).items()}


def yaml11(front: str) -> dict[str, Any]:
    return yaml.load(front, Loader=yaml.SafeLoader) or {}


def comments(front: str) -> Counter[str]:
    return Counter(line.strip() for line in front.replace("\r\n", "\n").split("\n") if line.strip().startswith("#"))


def assert_only_owned_changed(before: str, after: str, owned: set[str], body_owned: bool = False) -> None:
    front_before, body_before = split(before)
    front_after, body_after = split(after)
    if not body_owned:
        assert body_after == body_before
    assert after.startswith("\ufeff") == before.startswith("\ufeff")
    if "\r\n" in front_before and "\n" not in front_before.replace("\r\n", ""):
        assert "\n" not in front_after.replace("\r\n", ""), "line endings mixed"
    src_before, src_after = key_sources(front_before), key_sources(front_after)
    kept = [k for k in src_before if k not in owned]
    assert [k for k in src_after if k in kept] == kept, "key order changed"
    for key in kept:
        assert src_after[key] == src_before[key], key
    v12_before, v12_after = yaml12(front_before), yaml12(front_after)
    v11_before, v11_after = yaml11(front_before), yaml11(front_after)
    for key in kept:
        assert same(v12_after[key], v12_before[key]), key
    for key, val in v11_before.items():
        if key not in owned:
            assert same(v11_after[key], val), key
    assert not comments(front_before) - comments(front_after), "a comment was lost"


# ------------------------------------------------------------------ the repairs


@pytest.fixture
def world(tmp_path: Path) -> World:
    """One vault and registered project per test, reused by every generated example."""
    return make_world(tmp_path)


@pytest.fixture
def scope(world: World) -> Any:
    from vault_kg.core.scopes import vault_scope

    return vault_scope(world.vault)


def hand_anchor() -> str:
    from extract.code import symbols_of

    digest = symbols_of("src/retry.py", RETRY_PY.encode())[FETCH]["hash"]
    return f'anchors:\n  - project: demo   # by hand\n    locator: "{FETCH}"\n    hash: {digest}\n'


def run_repair(world: World, scope: Any, name: str, texts: dict[str, str]) -> None:
    from vault_kg.notes import anchor_repair as ar

    (world.repo / "src/retry.py").write_text(RETRY_PY)
    (world.repo / "src/net.py").unlink(missing_ok=True)
    for rel, text in texts.items():
        (world.vault / rel).write_bytes(text.encode("utf-8"))
    if name == "accept":
        (world.repo / "src/retry.py").write_text(RETRY_PY.replace("range(3)", "range(4)"))
    if name == "reanchor":
        (world.repo / "src/retry.py").write_text("")
        (world.repo / "src/net.py").write_text(RETRY_PY)
    calls: dict[str, Callable[[], Any]] = {
        "anchor-note": lambda: ar.add_anchor(scope, "notes/A.md", "[[notes/Setup]]"),
        "anchor-code": lambda: ar.add_anchor(scope, "notes/A.md", "src/retry.py::Client.fetch", "demo"),
        "accept": lambda: ar.accept(scope, "notes/A.md"),
        "reanchor": lambda: ar.reanchor(scope, "notes/A.md"),
        "supersede": lambda: ar.supersede(scope, "notes/A.md", "notes/B.md"),
        "retire": lambda: ar.retire(scope, "notes/A.md", "no"),
    }
    calls[name]()


OWNED = {
    "anchor-note": ({"anchors", "history"}, set()),
    "anchor-code": ({"anchors", "history"}, set()),
    "accept": ({"anchors", "history"}, set()),
    "reanchor": ({"anchors", "history"}, set()),
    "supersede": ({"superseded_by", "valid_to", "history"}, {"supersedes", "valid_from", "history"}),
    "retire": ({"valid_to", "retired", "history"}, set()),
}
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(repair=st.sampled_from(sorted(OWNED)), data=st.data())
def test_every_repair_changes_only_the_keys_it_owns(world: World, scope: Any, repair: str, data: st.DataObject) -> None:
    anchored = repair in ("accept", "reanchor")
    texts = {"notes/A.md": data.draw(note(hand_anchor() if anchored else "")), "notes/B.md": data.draw(note())}
    run_repair(world, scope, repair, texts)
    for rel, owned in zip(("notes/A.md", "notes/B.md"), OWNED[repair]):
        after = (world.vault / rel).read_bytes().decode("utf-8")
        assert_only_owned_changed(texts[rel], after, owned)
        if owned:
            assert after != texts[rel]


@SETTINGS
@given(text=note(), data=st.data())
def test_consolidate_changes_only_tags_and_summary(text: str, data: st.DataObject) -> None:
    from vault_kg.notes.consolidate import _apply_frontmatter

    action = {"note": "notes/A.md", "add_tags": ["scope/global", data.draw(st.sampled_from(["topic/new", "on", "no"]))], "rename_tags": {"topic/a": "topic/renamed"}}
    if data.draw(st.booleans()):
        action["summary"] = data.draw(st.sampled_from(["A new summary", "NO", "12:30"]))
    after = _apply_frontmatter(text, action)
    assert_only_owned_changed(text, after, {"summary", "tags", "tag"})
    fm = yaml11(split(after)[0])
    assert action["add_tags"][1] in fm["tags"] and fm.get("summary") == action.get("summary", fm.get("summary"))


@SETTINGS
@given(keep=note(), drop=note())
def test_consolidate_merge_changes_only_tags_and_aliases_of_the_kept_note(keep: str, drop: str) -> None:
    from vault_kg.notes.consolidate import _apply_merge

    texts = {"notes/Keep.md": keep, "notes/Drop.md": drop}
    _apply_merge(texts, {"keep": "notes/Keep.md", "merge": "notes/Drop.md"}, "notes/Keep")
    assert_only_owned_changed(keep, texts["notes/Keep.md"], {"tags", "aliases"}, body_owned=True)
    assert_only_owned_changed(drop, texts["notes/Drop.md"], {"summary", "merged_into"}, body_owned=True)
    assert split(texts["notes/Keep.md"])[1].startswith(split(keep)[1].rstrip("\r\n"))


# ------------------------------------------------------------------ shapes the splice refuses


@pytest.mark.parametrize(
    ("front", "why"),
    [
        ("{a: 1, b: NO}\n", "not block"),
        ("a: 1\na: 2\n", "duplicate"),
        ("  a: 1\n  b: 2\n", "start a line"),
        ("a: [1,\n2]\n", None),
    ],
)
def test_unsafe_shapes_are_refused_or_kept(front: str, why: str | None) -> None:
    text = f"---\n{front}---\nbody\n"
    try:
        doc = EditableFrontmatter("notes/X.md", text)
        doc.data["history"] = [{"action": "retire"}]
        out = doc.render()
    except KgError as exc:
        assert why is not None and why in str(exc) and str(exc).startswith("notes/X.md: ") and "\n" not in str(exc)
        return
    assert why is None and out.startswith(f"---\n{front}") and out.endswith("---\nbody\n")


@pytest.mark.parametrize(
    ("text", "why"),
    [("---\na: 1\n...\nbody\n", "no closing `---`"), ("----\na: 1\n----\nbody\n", "reads them differently")],
)
def test_delimiters_the_graph_reads_differently_are_refused(text: str, why: str) -> None:
    with pytest.raises(KgError, match=re.escape(why)):
        EditableFrontmatter("notes/X.md", text).render()


def test_a_note_without_frontmatter_gets_one_and_keeps_its_body() -> None:
    doc = EditableFrontmatter("n.md", "\ufeffno: frontmatter here\r\nat all")
    doc.data["anchors"] = [{"note": "[[x]]"}]
    out = doc.render()
    assert out.startswith("\ufeff---\r\nanchors:\r\n") and out.endswith("---\r\nno: frontmatter here\r\nat all")  # the file's line endings
    assert EditableFrontmatter("n.md", out).data == {"anchors": [{"note": "[[x]]"}]}


def test_an_untouched_note_is_returned_unchanged() -> None:
    text = "---\ncountry: NO\n---\nbody"
    assert EditableFrontmatter("n.md", text).render() == text
