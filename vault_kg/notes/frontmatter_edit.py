"""Editing a note's frontmatter the way a careful person would: change the keys a repair owns, keep every other byte.

Repairs (`kg anchor`, accept, reanchor, supersede, retire, `kg consolidate --apply`, MCP `remember`
with an anchor) used to load the frontmatter as YAML 1.1 and dump it back, which rewrote values
nobody touched (`country: NO` became `false`, `version: 1.10` became `1.1`, `zip: 0123` became `83`)
and lost comments and key order. Here the note's text is spliced instead. ruamel.yaml's composer
gives the exact span of every top-level key; a key whose value the repair did not change keeps its
bytes; a changed key is re-rendered alone by ruamel.yaml in round-trip mode (comments and unchanged
items inside it kept; a list that only grew gets its new items appended after the old ones, which
stay byte for byte); new keys go at the end; the body is never touched.

The result is read back with the reader the graph uses (YAML 1.1, PyYAML) and with a YAML 1.2
loader before anything is written: if any value would read back differently from what the repair
meant, or the frontmatter has a shape that cannot be spliced safely (a flow mapping, duplicate or
complex keys, an indented top level), the repair is refused with one line naming the note.
"""

from __future__ import annotations

import copy
import io
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from vault_kg.core.errors import KgError

__all__ = ["BOM", "EditableFrontmatter", "Fresh", "NOTHING_WRITTEN", "STR_TAG", "edit_text", "read_frontmatter", "same"]

BOM = "\ufeff"
_OPEN_RE = re.compile(r"---[ \t]*(\r?\n)")
_CLOSE_RE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_DASH_RE = re.compile(r"^( *)- ", re.MULTILINE)
STR_TAG = "tag:yaml.org,2002:str"
NOTHING_WRITTEN = "(nothing written)"


class Fresh(str):
    """A string a repair adds: quoted whenever YAML 1.1 or 1.2 would read its plain form as something else."""


@dataclass(frozen=True)
class _Entry:
    key: Any  # the key as the graph's reader (PyYAML) sees it
    name: str  # the key as written
    start: int  # where the key's first line starts, in the frontmatter text
    end: int  # just after the line break of the value's last line
    block_sequence: bool  # the value is a `- item` list (new items can be appended as text)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down (`True` is not `1`, `1.0` is not `1`)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _reader_view(text: str) -> dict[str, Any] | None:
    """What the graph reads as this note's frontmatter (None: no frontmatter), as `extract_note` does."""
    from extract.notes import parse_frontmatter, split_frontmatter

    plain = text[1:] if text.startswith(BOM) else text
    fm_text, _, _ = split_frontmatter(plain.replace("\r\n", "\n").replace("\r", "\n"))
    return None if fm_text is None else parse_frontmatter(fm_text)


class EditableFrontmatter:
    """A note's text with its frontmatter as data: change `data`, then `render()` the new text.

    `data` is what the graph reads (YAML 1.1, the same loader as `kg build`), so repairs decide on
    the values the graph serves; `render()` writes back only the differences.
    """

    def __init__(self, rel: str, text: str) -> None:
        self.rel = rel
        self.text = text
        start = 1 if text.startswith(BOM) else 0
        opening = _OPEN_RE.match(text, start)
        closing = _CLOSE_RE.search(text, opening.end()) if opening else None
        if opening and closing:
            self.newline = opening.group(1)
            self.head, self.inner = text[: opening.end()], text[opening.end() : closing.start()]
            self.tail, self.body = closing.group(0), text[closing.end() :]
            self.present = True
        elif opening:
            raise KgError(f"{rel}: the frontmatter's opening `---` has no closing `---` line (kg reads no frontmatter there); close it, then repair {NOTHING_WRITTEN}")
        else:
            self.newline = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
            self.head, self.inner, self.tail, self.body = text[:start], "", "", text[start:]
            self.present = False
        self.original = self._read()
        self.data: dict[str, Any] = copy.deepcopy(self.original)
        self.entries = self._locate() if self.present else []

    # ---------------------------------------------------------------- reading

    def refuse(self, why: str) -> KgError:
        return KgError(f"{self.rel}: {why}; fix the frontmatter by hand first {NOTHING_WRITTEN}")

    def _read(self) -> dict[str, Any]:
        from extract.notes import parse_frontmatter

        try:
            mine = parse_frontmatter(self.inner) if self.present else None
            reader = _reader_view(self.text)
        except ValueError as exc:
            raise self.refuse(str(exc)) from exc
        if (mine is None) != (reader is None) or (mine is not None and not same(mine, reader)):
            raise self.refuse("the frontmatter's `---` lines are unusual (the graph reads them differently)")
        return mine or {}

    def _locate(self) -> list[_Entry]:
        """Every top-level key's span in the frontmatter text, checked against the YAML 1.1 reading."""
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

        try:
            root = YAML(typ="rt").compose(self.inner)
        except (YAMLError, ValueError) as exc:
            raise self.refuse(f"the frontmatter cannot be parsed exactly ({' '.join(str(exc).split())[:120]})") from exc
        if root is None:
            return []
        if not isinstance(root, MappingNode) or root.flow_style:
            raise self.refuse("the frontmatter is not block `key: value` lines")
        pairs = root.value
        keys = list(self.original)
        texts = [k.value for k, _ in pairs if isinstance(k, ScalarNode)]
        if len(texts) != len(pairs) or len(set(texts)) != len(texts) or "<<" in texts or len(pairs) != len(keys):
            raise self.refuse("the frontmatter has duplicate, merged (`<<`) or complex keys")
        entries: list[_Entry] = []
        for (key_node, value_node), key in zip(pairs, keys):
            begin = key_node.start_mark.index
            if key_node.start_mark.column != 0 or (begin and self.inner[begin - 1] != "\n") or (isinstance(key, str) and key != key_node.value):
                raise self.refuse(f"key `{key_node.value}` does not start a line of its own")
            last = max(key_node.end_mark.index, _content_end(value_node))
            if self.inner[last - 1 : last] == "\n":
                end = last
            else:
                newline = self.inner.find("\n", last)
                end = len(self.inner) if newline < 0 else newline + 1
            block = isinstance(value_node, SequenceNode) and not value_node.flow_style and bool(value_node.value)
            entries.append(_Entry(key, str(key_node.value), begin, end, block))
        for before, after in zip(entries, entries[1:]):
            if before.end > after.start:
                raise self.refuse("two keys share a line")
        return entries

    # ---------------------------------------------------------------- writing

    def render(self) -> str:
        """The note's new text: owned keys changed, every other byte as it was; checked before it is returned."""
        from ruamel.yaml.error import YAMLError

        try:
            return self._render()
        except (YAMLError, ValueError, TypeError) as exc:
            raise KgError(f"{self.rel}: cannot rewrite the frontmatter safely ({' '.join(str(exc).split())[:120]}); edit the note by hand {NOTHING_WRITTEN}") from exc

    def _render(self) -> str:
        if not isinstance(self.data, dict):
            raise self.refuse("a repair left the frontmatter without a mapping")
        old, new = self.original, self.data
        changed = [k for k in old if k not in new or not same(old[k], new[k])] + [k for k in new if k not in old]
        if not changed:
            return self.text
        pieces: list[str] = []
        at = 0
        for entry in self.entries:
            if entry.key in new and same(old[entry.key], new[entry.key]):
                continue
            pieces.append(self.inner[at : entry.start])
            if entry.key in new:
                pieces.append(self._rerender(entry, old[entry.key], new[entry.key]))
            at = entry.end
        pieces.append(self.inner[at:])
        inner = "".join(pieces)
        added = {k: new[k] for k in new if k not in old}
        if added:
            inner += self._newlines(_dump({_fresh(k): _fresh(v) for k, v in added.items()}, self._offset()))
        if self.present:
            text = self.head + inner + self.tail + self.body
        else:
            text = self.head + "---" + self.newline + inner + "---" + self.newline + self.body
        self._verify(text, changed)
        return text

    def _newlines(self, text: str) -> str:
        return text.replace("\n", self.newline) if self.newline != "\n" else text

    def _offset(self) -> int:
        """How far this note indents `- item` under its key (PyYAML writes 0, many people write 2)."""
        found = _DASH_RE.search(self.inner)
        return len(found.group(1)) if found else 0

    def _rerender(self, entry: _Entry, old: Any, new: Any) -> str:
        """One changed key's lines: the old lines plus appended items when a list only grew, else re-dumped."""
        source = self.inner[entry.start : entry.end]
        if not source.endswith("\n"):
            source += self.newline
        offset = _DASH_RE.search(source)
        dash = len(offset.group(1)) if offset else self._offset()
        grew = isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and same(new[: len(old)], old)
        if grew and entry.block_sequence:
            items = _dump({"k": [_fresh(v) for v in new[len(old) :]]}, dash).split("\n", 1)[1]
            return source + self._newlines(items)
        loaded = _yaml(dash).load(source.replace("\r\n", "\n"))
        (key,) = list(loaded)
        loaded[key] = _merge(loaded[key], old, new)
        return self._newlines(_dump(loaded, dash))

    def _verify(self, text: str, changed: list[Any]) -> None:
        """Refuse unless the new text reads back (YAML 1.1 and 1.2) as exactly the intended edit."""
        try:
            again = EditableFrontmatter(self.rel, text)
        except KgError as exc:
            raise KgError(f"{self.rel}: the edited frontmatter would not read back cleanly; edit the note by hand {NOTHING_WRITTEN}") from exc
        if not same(again.original, self.data):
            wrong = [str(k) for k in self.data if k not in again.original or not same(again.original[k], self.data[k])]
            raise KgError(f"{self.rel}: cannot write {', '.join(wrong) or 'the frontmatter'} without changing what it means; edit the note by hand {NOTHING_WRITTEN}")
        if again.body != self.body:
            raise KgError(f"{self.rel}: the edit would change the note's body {NOTHING_WRITTEN}")
        before, after = _yaml12(self.inner), _yaml12(again.inner)
        for entry in self.entries:
            if entry.key in changed:
                continue
            if not same(before.get(entry.name, _MISSING), after.get(entry.name, _MISSING)):
                raise KgError(f"{self.rel}: the edit would change `{entry.name}`, which the repair does not own {NOTHING_WRITTEN}")


_MISSING = object()


def _yaml12(inner: str) -> dict[str, Any]:
    """The frontmatter as YAML 1.2 reads it, keyed by each key's text."""
    from ruamel.yaml import YAML

    loaded = YAML(typ="safe", pure=True).load(inner) if inner.strip() else {}
    return {str(k): _plain(v) for k, v in (loaded or {}).items()}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _content_end(node: Any) -> int:
    """Where a value's last character is (comments and blank lines after it excluded)."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode

    if isinstance(node, ScalarNode):
        return int(node.end_mark.index) if node.end_mark.index > node.start_mark.index else -1
    if node.flow_style:
        return int(node.end_mark.index)
    children = [c for pair in node.value for c in pair] if isinstance(node, MappingNode) else node.value
    return max((_content_end(c) for c in children), default=-1)


def _merge(node: Any, old: Any, new: Any) -> Any:
    """`node` (ruamel's round-trip value) changed from `old` to `new` in place, so its comments and
    unchanged parts survive; values the repair did not touch are compared as the graph reads them."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if same(old, new):
        return node
    if isinstance(old, dict) and isinstance(new, dict) and isinstance(node, CommentedMap) and len(node) == len(old):
        names = dict(zip(old, list(node)))
        for key in old:
            if key not in new:
                del node[names[key]]
        for key, value in new.items():
            if key in old:
                merged = _merge(node[names[key]], old[key], value)
                if merged is not node[names[key]]:
                    node[names[key]] = merged
            else:
                node[_fresh(key)] = _fresh(value)
        return node
    if isinstance(old, list) and isinstance(new, list) and isinstance(node, CommentedSeq) and len(node) == len(old):
        for i in range(min(len(old), len(new))):
            merged = _merge(node[i], old[i], new[i])
            if merged is not node[i]:
                node[i] = merged
        del node[len(new) :]
        node.extend(_fresh(v) for v in new[len(old) :])
        return node
    return _fresh(new)


def _fresh(value: Any) -> Any:
    """A repair's new value, with strings marked so they are quoted when YAML 1.1 would misread them."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, str):
        return value if isinstance(value, Fresh) else Fresh(value)
    if isinstance(value, dict):
        return CommentedMap((_fresh(k), _fresh(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return CommentedSeq(_fresh(v) for v in value)
    return value


def _misread_by_yaml11(text: str) -> bool:
    import yaml

    return yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False)) != STR_TAG


def _represent_fresh(representer: Any, data: Fresh) -> Any:
    style = "'" if _misread_by_yaml11(data) and "\n" not in data else None
    return representer.represent_scalar(STR_TAG, str(data), style=style)


_YAML_CACHE: dict[int, Any] = {}


def _yaml(offset: int) -> Any:
    """A round-trip ruamel.yaml instance that writes lists `offset` spaces in, never wraps, quotes new 1.1 traps."""
    if offset not in _YAML_CACHE:
        from ruamel.yaml import YAML
        from ruamel.yaml.representer import RoundTripRepresenter

        class Representer(RoundTripRepresenter):
            pass

        Representer.add_representer(Fresh, _represent_fresh)
        y = YAML(typ="rt")
        y.Representer = Representer
        y.preserve_quotes = True
        y.width = 1_000_000
        y.allow_unicode = True
        y.indent(mapping=2, sequence=offset + 2, offset=offset)
        _YAML_CACHE[offset] = y
    return _YAML_CACHE[offset]


def _dump(data: Any, offset: int) -> str:
    out = io.StringIO()
    _yaml(offset).dump(data, out)
    return out.getvalue()


def read_frontmatter(rel: str, text: str) -> dict[str, Any]:
    """A note's frontmatter as the graph reads it ({} when it has none), or a one-line refusal."""
    try:
        return _reader_view(text) or {}
    except ValueError as exc:
        raise KgError(f"{rel}: {exc}; fix the frontmatter by hand first {NOTHING_WRITTEN}") from exc


def edit_text(rel: str, text: str, change: Callable[[dict[str, Any]], None]) -> str:
    """`text` with `change(data)` applied to its frontmatter, every other byte kept (or a one-line refusal)."""
    doc = EditableFrontmatter(rel, text)
    change(doc.data)
    return doc.render()
