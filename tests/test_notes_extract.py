"""The deterministic pass over one note: frontmatter, tags, links, headings, quarantine."""

from __future__ import annotations

from extract.links import normalize_tag, parse_wikilink, scan_markdown
from extract.notes import extract_note
from vault_kg.core import model as m

NOTE = """---
summary: Retry policy for the payments worker
tags: [topic/payments/retries, scope/acme]
aliases: [Retry Policy, retries]
owner: jo
reviewed: 2026-01-05
---
# Payment Retries

We retry with backoff. See [[Payments Worker]] and [[Payments API|the API]].
Heading link [[Payments API#Idempotency]] and block [[ADR-003^key-rule]] and ![[Diagram Note]].
A markdown link [worker](../services/Payments%20Worker.md) and an URL http://example.com/#nottag.
Inline #tool/stripe and #Client/Acme/Billing but not `#code-span` nor [[#Local heading]] twice.

```python
# comment #not-a-tag [[Not A Link]]
```

## Local heading
~~~
## not a heading
~~~
"""


def test_frontmatter_fields_and_props() -> None:
    ext = extract_note("notes/retries.md", NOTE.encode())
    node = ext.nodes[m.note_id("notes/retries.md")]
    assert node["label"] == "Payment Retries"
    assert node["summary"] == "Retry policy for the payments worker"
    assert node["aliases"] == ["Retry Policy", "retries"]
    assert node["props"] == {"owner": "jo", "reviewed": "2026-01-05"}
    assert node["end_line"] == NOTE.count("\n") + 1
    assert ext.quarantine is None


def test_tags_inline_nested_and_not_in_code() -> None:
    ext = extract_note("n.md", NOTE.encode())
    tags = ext.nodes[m.note_id("n.md")]["tags"]
    assert tags == sorted(["topic/payments/retries", "scope/acme", "tool/stripe", "client/acme/billing"])
    assert "not-a-tag" not in tags and "code-span" not in tags and "nottag" not in tags
    tagged = [e for e in ext.edges if e["relation"] == m.TAGGED]
    assert {e["target"] for e in tagged} == {m.tag_id(t) for t in tags}
    inline = next(e for e in tagged if e["target"] == "tag:tool/stripe")
    assert inline["line"] == 13


def test_links_every_form_with_lines() -> None:
    ext = extract_note("notes/retries.md", NOTE.encode())
    refs = [(r.target, r.relation, r.line, {k: v for k, v in r.attrs.items() if k not in ("key", "raw")}) for r in ext.refs]
    assert ("Payments Worker", m.LINKS_TO, 10, {}) in refs
    assert ("Payments API", m.LINKS_TO, 10, {"label": "the API"}) in refs
    assert ("Payments API", m.LINKS_TO, 11, {"heading": "Idempotency"}) in refs
    assert ("ADR-003", m.LINKS_TO, 11, {"block": "key-rule"}) in refs
    assert ("Diagram Note", m.EMBEDS, 11, {}) in refs
    assert ("services/Payments Worker.md", m.LINKS_TO, 12, {"path": True, "label": "worker", "written": "../services/payments worker"}) in refs
    assert ("notes/retries.md", m.LINKS_TO, 13, {"path": True, "heading": "Local heading"}) in refs
    assert not any("Not A Link" in r[0] for r in refs)


def test_headings_skip_fences() -> None:
    ext = extract_note("n.md", NOTE.encode())
    assert ext.meta["headings"] == [[1, "Payment Retries", 8], [2, "Local heading", 19]]


def test_wikilink_parsing() -> None:
    assert parse_wikilink("Note#Head^blk|Label") == ("Note", "Head", "blk", "Label")
    assert parse_wikilink("Note#^blk") == ("Note", None, "blk", None)
    assert parse_wikilink("Note#Head\\|Label") == ("Note", "Head", None, "Label")  # a table row escapes the pipe
    assert normalize_tag("#Tool/SEMrush/") == "tool/semrush"
    assert normalize_tag("#123") is None


def test_scan_keeps_line_numbers_from_offset() -> None:
    scan = scan_markdown("x\n[[A]]\n", first_line=5)
    assert scan.links[0].line == 6


def test_malformed_frontmatter_keeps_the_body_and_names_the_line_and_the_fix() -> None:
    """Obsidian still shows such a note's body, links and backlinks: its properties are ignored,
    one line names the file, the line and the fix (a note used to be quarantined, links and all)."""
    ext = extract_note("bad.md", b"---\ntags: [a, b\nsummary: x\n---\nbody [[A]] #topic/x\n")
    assert ext.quarantine is None and [r.target for r in ext.refs] == ["A"]
    node = ext.nodes[m.note_id("bad.md")]
    assert node["status"] == m.LIVE and node["tags"] == ["topic/x"] and "props" not in node
    assert ext.warnings == [ext.warnings[0]] and ext.warnings[0].startswith("bad.md:2: properties ignored") and "close the `[` list" in ext.warnings[0]
    assert ext.meta["frontmatter_error"]["line"] == 2


def test_a_plain_value_holding_colon_space_gets_the_quoted_line_as_its_fix() -> None:
    text = "---\ntitle: Acme\nsummary: Client profile for Acme: contacts, scope\ntags: [client/acme]\n---\n# Acme\nSee [[Bob]].\n"
    ext = extract_note("clients/Acme.md", text.encode())
    assert ext.quarantine is None and [r.target for r in ext.refs] == ["Bob"] and "Client profile" in ext.text
    assert ext.warnings[0].startswith("clients/Acme.md:3: properties ignored")
    assert 'quote the value: `summary: "Client profile for Acme: contacts, scope"`' in ext.warnings[0]


def test_non_utf8_binary_huge_and_empty() -> None:
    assert "not UTF-8" in extract_note("a.md", b"ok \xff\xfe").quarantine
    assert "binary" in extract_note("b.md", b"\x00\x01\x02").quarantine
    empty = extract_note("c.md", b"")
    assert empty.quarantine is None and empty.nodes[m.note_id("c.md")]["label"] == "c"


def test_yaml_bomb_refused() -> None:
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b]\n---\n"
    ext = extract_note("bomb.md", bomb.encode())
    assert ext.quarantine is None and "anchors/aliases" in ext.warnings[0] and "props" not in ext.nodes[m.note_id("bomb.md")]


def test_frontmatter_not_a_mapping() -> None:
    ext = extract_note("list.md", b"---\n- a\n- b\n---\ntext\n")
    assert ext.quarantine is None and "not a key: value mapping" in ext.warnings[0] and "text" in ext.text


def test_tags_as_string_and_crlf() -> None:
    ext = extract_note("s.md", b"---\r\nsummary: s\r\ntags: tool/a, scope/global topic/x\r\n---\r\nbody\r\n")
    assert ext.nodes[m.note_id("s.md")]["tags"] == ["scope/global", "tool/a", "topic/x"]


def test_the_note_index_is_the_lookup_tables_the_rules_describe() -> None:
    """`NoteIndex` builds its tables with `_strip_md` and `basename` spelled out (a link patch
    builds it over the whole vault on every edit): the same tables, lists in the same order, as
    those calls give, on paths with upper-case `.MD`, backslashes, spaces, shared names and
    letters whose lower case is longer."""
    import posixpath

    from extract.notes import NoteIndex, _strip_md

    def tables(aliases: dict[str, list[str]]) -> list[dict]:
        by_path: dict[str, str] = {}
        by_stem: dict[str, list[str]] = {}
        by_alias: dict[str, list[str]] = {}
        for relpath in sorted(aliases):
            key = _strip_md(relpath).lower()
            by_path[key] = relpath
            by_stem.setdefault(posixpath.basename(key), []).append(relpath)
            for alias in aliases[relpath]:
                by_alias.setdefault(alias.lower(), []).append(relpath)
        return [by_path, by_stem, by_alias]

    aliases = {
        "Alpha.md": ["A", "first"],
        "area/Alpha.md": ["a"],
        "Area/BETA.MD": [],
        "deep/er/Gamma.md": ["Γ", "gamma"],
        "win\\path\\Note.md": [],
        " padded .md": ["x"],
        "İstanbul.md": ["City"],
        "notes/readme": [],
        "x.md.md": [],
    }
    exts = {rel: extract_note(rel, ("---\naliases: [" + ", ".join(names) + "]\n---\ntext\n").encode()) for rel, names in aliases.items()}
    for index, expected in ((NoteIndex({}, aliases), tables(aliases)), (NoteIndex(exts), tables({r: e.hot("aliases", []) for r, e in exts.items()}))):
        built = [index.by_path, index.by_stem, index.by_alias]
        assert built == expected and [list(t) for t in built] == [list(t) for t in expected]
    index = NoteIndex({}, aliases)
    assert index.lookup("alpha") == ["Alpha.md"] and index.lookup("beta") == ["Area/BETA.MD"] and index.lookup("Γ") == ["deep/er/Gamma.md"]
    assert index.lookup("win/path/note") == ["win\\path\\Note.md"]


def test_tag_characters_are_the_class_they_stand_for() -> None:
    """`links.TAG_CHARS` spells [A-Za-z0-9_\\-/\\u00C0-\\uFFFF] by what it is not (it compiles in
    microseconds where the range takes milliseconds): the same code points, all of them."""
    import re

    from extract.links import TAG_CHARS

    every = "".join(map(chr, range(0x110000)))
    ours = [m.start() for m in re.finditer(TAG_CHARS, every)]
    assert ours == [m.start() for m in re.finditer(r"[A-Za-z0-9_\-/\u00C0-\uFFFF]", every)]
    assert len(ours) == 26 * 2 + 10 + 3 + (0xFFFF - 0xC0 + 1)


def test_a_markdown_embed_of_a_file_named_with_a_time_is_a_link_and_a_scheme_is_not() -> None:
    """Screenshot tools name files `2024-06-14T16:18:08,98+02:00.png`: the `:` is no URL scheme."""
    text = "![](2024-06-14T16:18:08,984568739+02:00.png) [z](zotero://select/items/1) [o](obsidian:open) [c](C:/x.png)\n"
    assert [link.target for link in scan_markdown(text).links] == ["2024-06-14T16:18:08,984568739+02:00.png"]
