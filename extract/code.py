"""Code extraction with tree-sitter: one source file in, one :class:`Extraction` out.

What a single file can decide lands here as nodes and ``contains`` edges (file, classes,
functions, methods, each with its anchor). What needs the whole scope (where a call or an
import points, what a base class is) is kept as :class:`Ref` records plus the file's import
table in ``meta["code"]``, for :mod:`extract.code_resolve` to settle.
"""

from __future__ import annotations

import bisect
import hashlib
import posixpath
import re
from pathlib import Path
from typing import Any

import tree_sitter as ts

from extract import code_resolve, code_scan
from extract.anchors import BLOCK_CLOSE, BLOCK_OPEN, normalized_hash, splice
from extract.redaction import redact_extraction
from extract.lang.base import CLASS_LIKE, MODULE_SEGMENTS, VIRTUAL, Language, base_name, text
from extract.languages import language_for, parser_for, project_file, query_for
from vault_kg.core.adapter import Resolution, SourceSkip
from vault_kg.core.model import CLASS, CONTAINS, FILE, FUNCTION, LOCATOR_SEP, METHOD, MODULE, Extraction, Ref, edge, file_id

_WS = re.compile(r"\s+")
_SIMPLE_CALLEE = frozenset({"identifier", "type_identifier", "field_identifier", "property_identifier", "super"})
_DOC_SKIP = frozenset({"attribute_item", "decorator", "annotation", "marker_annotation"})
_MAX_DOC = 2000
_MAX_SIGNATURE = 200
_MAX_CALL_NAME = 80


def _line(node: ts.Node) -> int:
    return node.start_point[0] + 1


def _one_line(value: str, limit: int) -> str:
    value = _WS.sub(" ", value).strip()
    value = value.replace("( ", "(").replace(" )", ")")
    return value if len(value) <= limit else value[: limit - 1] + "…"


class _Symbol:
    """One definition found in the tree, before it becomes a node."""

    __slots__ = ("node", "name", "segment", "subkind", "start", "end", "parent", "locator", "kind", "virtual", "enclosing_class", "receiver")

    def __init__(self, node: ts.Node, name: str, segment: str, subkind: str) -> None:
        self.node = node
        self.name = name
        self.segment = segment
        self.subkind = subkind
        outer = node.parent if node.parent is not None and node.parent.type == "decorated_definition" else node
        self.start = outer.start_byte  # decorators belong to the symbol they decorate
        self.end = outer.end_byte
        self.parent: _Symbol | None = None
        self.locator = ""
        self.kind = ""
        self.virtual = segment in VIRTUAL
        self.enclosing_class: _Symbol | None = None  # never the symbol itself: no reference cycle
        self.receiver = ""  # Go: the receiver variable of a method (``s`` in ``func (s *Server)``)

    @property
    def cls(self) -> "_Symbol | None":
        """The class this symbol is or sits in (the engine runs with cyclic GC off, so no self-reference)."""
        return self if self.segment in CLASS_LIKE else self.enclosing_class


class _FileExtractor:
    """Walks one parsed file; a class so the many small steps share the parse state."""

    def __init__(self, relpath: str, data: bytes, lang: Language) -> None:
        self.relpath = relpath
        self.src = data
        self.lang = lang
        self.fid = file_id(relpath)
        self.extraction = Extraction(source=relpath, hash=hashlib.sha256(data).hexdigest())

    def run(self) -> Extraction:
        tree = parser_for(self.lang.name).parse(self.src)
        root = tree.root_node
        defs, calls, imports, comments, blocks = self._captures(root)
        self.comment_starts = [c.start_byte for c in comments]
        self.comments = comments
        self.block_starts = [b.start_byte for b in blocks]
        self.blocks = blocks
        symbols = self._symbols(defs)
        self._file_node(root, symbols)
        for sym in symbols:
            if not sym.virtual:
                self._symbol_node(sym)
        self._contains(symbols)
        self._imports(imports, symbols)
        self._calls(calls, symbols)
        self._bases(symbols)
        if root.has_error:
            self.extraction.warnings.append(f"{self.relpath}:{_first_error_line(root)}: syntax error; extracted what parsed (fix the syntax to get the rest)")
        return self.extraction

    # ------------------------------------------------------------ captures

    def _captures(self, root: ts.Node) -> tuple[list[tuple[ts.Node, ts.Node | None, str]], list[tuple[ts.Node, ts.Node | None]], list[ts.Node], list[ts.Node], list[ts.Node]]:
        defs: list[tuple[ts.Node, ts.Node | None, str]] = []
        calls: list[tuple[ts.Node, ts.Node | None]] = []
        imports: list[ts.Node] = []
        comments: list[ts.Node] = []
        blocks: list[ts.Node] = []
        for _, caps in ts.QueryCursor(query_for(self.lang.name)).matches(root):
            if "call" in caps:
                callee = caps.get("callee")
                calls.append((caps["call"][0], callee[0] if callee else None))
            elif "comment" in caps:
                comments.append(caps["comment"][0])
            elif "block" in caps:
                blocks.append(caps["block"][0])
            elif "import" in caps:
                imports.append(caps["import"][0])
            else:
                for key, nodes in caps.items():
                    if key.startswith("def."):
                        name = caps.get("name")
                        defs.append((nodes[0], name[0] if name else None, key[4:]))
                        break
        comments.sort(key=lambda n: n.start_byte)
        blocks.sort(key=lambda n: n.start_byte)
        calls.sort(key=lambda c: c[0].start_byte)
        imports.sort(key=lambda n: n.start_byte)
        return defs, calls, imports, comments, blocks

    # ------------------------------------------------------------ symbols

    def _symbols(self, defs: list[tuple[ts.Node, ts.Node | None, str]]) -> list[_Symbol]:
        lang, src = self.lang, self.src
        found: list[_Symbol] = []
        seen: set[tuple[int, int]] = set()
        for node, name_node, segment in defs:
            key = (node.start_byte, node.end_byte)
            if key in seen:
                continue
            seen.add(key)
            if segment == "impl" and lang.impl_name is not None:
                name = lang.impl_name(node, src)
            else:
                name = text(name_node, src)
            if not name:
                continue
            subkind = lang.subkind(node) if lang.subkind is not None and segment == "type" else segment
            found.append(_Symbol(node, name, segment, subkind))
        found.sort(key=lambda s: (s.start, -s.end))
        stack: list[_Symbol] = []
        used: set[str] = set()
        for sym in found:
            while stack and stack[-1].end <= sym.start:
                stack.pop()
            sym.parent = stack[-1] if stack else None
            if sym.node.type == lang.receiver_methods:
                sym.parent = self._go_receiver(sym)
            self._name_symbol(sym, used)
            stack.append(sym)
        return found

    def _go_receiver(self, sym: _Symbol) -> _Symbol | None:
        receiver = sym.node.child_by_field_name("receiver")
        type_name = ""
        if receiver is not None:
            for param in receiver.named_children:
                type_name = base_name(text(param.child_by_field_name("type"), self.src))
        if not type_name:
            return None
        virtual = _Symbol(sym.node, type_name, "type", "type")
        virtual.virtual = True
        virtual.locator = f"{self.relpath}{LOCATOR_SEP}type {type_name}"
        virtual.kind = CLASS
        receiver_names = [text(p.child_by_field_name("name"), self.src) for p in receiver.named_children] if receiver else []
        sym.receiver = receiver_names[0] if receiver_names else ""
        return virtual

    def _name_symbol(self, sym: _Symbol, used: set[str]) -> None:
        parent = sym.parent
        if sym.segment == "function":
            in_class = parent is not None and parent.segment in CLASS_LIKE
            sym.kind = METHOD if in_class or sym.node.type == "method_declaration" else FUNCTION
            word = sym.kind
        elif sym.segment in MODULE_SEGMENTS:
            sym.kind, word = MODULE, sym.segment
        else:
            sym.kind, word = CLASS, sym.segment
        prefix = parent.locator if parent is not None else self.relpath
        locator = f"{prefix}{LOCATOR_SEP}{word} {sym.name}"
        if not sym.virtual and locator in used:
            n = 2
            while f"{locator} ({n})" in used:
                n += 1
            locator = f"{locator} ({n})"
        sym.locator = locator
        if not sym.virtual:
            used.add(locator)
        cls = parent
        while cls is not None and cls.segment not in CLASS_LIKE:
            cls = cls.parent
        sym.enclosing_class = cls

    def _outer(self, node: ts.Node) -> ts.Node:
        wrappers = self.lang.wrappers
        parent = node.parent
        while parent is not None and parent.type in wrappers:
            node, parent = parent, parent.parent
        return node

    def _anchor_hash(self, outer: ts.Node) -> str:
        start, end = outer.start_byte, outer.end_byte
        cuts: list[tuple[int, int, bytes]] = []
        lo = bisect.bisect_left(self.comment_starts, start)
        hi = bisect.bisect_left(self.comment_starts, end)
        cuts.extend((c.start_byte, c.end_byte, b" ") for c in self.comments[lo:hi])
        if self.blocks:
            lo = bisect.bisect_right(self.block_starts, start)  # a block starting at the span's start is the container's body
            hi = bisect.bisect_left(self.block_starts, end)
            for block in self.blocks[lo:hi]:
                if block.end_byte > end:
                    continue  # the enclosing class body runs past this symbol
                cuts.append((block.start_byte, block.start_byte, BLOCK_OPEN.encode()))
                cuts.append((block.end_byte, block.end_byte, BLOCK_CLOSE.encode()))
            cuts.sort(key=lambda c: (c[0], c[1]))
        return normalized_hash(splice(self.src, start, end, cuts))

    def _symbol_node(self, sym: _Symbol) -> None:
        node, lang = sym.node, self.lang
        outer = self._outer(node)
        doc = self._docstring(node, outer)
        qual = [sym.name]
        parent = sym.parent
        while parent is not None:
            qual.append(parent.name)
            parent = parent.parent
        attrs: dict[str, Any] = {
            "kind": sym.kind,
            "label": sym.name,
            "qualname": ".".join(reversed(qual)),
            "source": self.relpath,
            "line": _line(node),
            "end_line": node.end_point[0] + 1,
            "signature": self._signature(node),
            "doc": _first_line(doc),
            "language": lang.name,
            "anchor": {"locator": sym.locator, "hash": self._anchor_hash(outer)},
        }
        if sym.kind == CLASS or sym.kind == MODULE:
            attrs["subkind"] = sym.subkind
        self.extraction.nodes[sym.locator] = attrs
        if doc:
            self.extraction.meta.setdefault("code", {}).setdefault("docs", {})[sym.locator] = doc[:_MAX_DOC]

    def _signature(self, node: ts.Node) -> str:
        body = node.child_by_field_name(self.lang.body_field)
        if body is not None and body.start_byte > node.start_byte:
            raw = self.src[node.start_byte : body.start_byte].decode("utf-8", "replace")
        else:
            raw = text(node, self.src).split("\n", 1)[0]
        return _one_line(raw, _MAX_SIGNATURE).rstrip(" :{=").rstrip()

    def _docstring(self, node: ts.Node, outer: ts.Node) -> str:
        if self.lang.docstring == "body":
            body = node.child_by_field_name("body") if node.type != "module" else node
            return _body_docstring(body, self.src)
        lines: list[str] = []
        row = outer.start_point[0]
        prev = outer.prev_named_sibling
        while prev is not None and prev.type in _DOC_SKIP:
            row = prev.start_point[0]
            prev = prev.prev_named_sibling
        while prev is not None and prev.type in ("comment", "line_comment", "block_comment") and prev.end_point[0] >= row - 1:
            lines.insert(0, text(prev, self.src))
            row = prev.start_point[0]
            prev = prev.prev_named_sibling
        return _strip_comment_markers("\n".join(lines))

    # ------------------------------------------------------------ file node and containment

    def _file_node(self, root: ts.Node, symbols: list[_Symbol]) -> None:
        meta: dict[str, Any] = self.extraction.meta.setdefault("code", {})
        meta["language"] = self.lang.name
        attrs: dict[str, Any] = {
            "kind": FILE,
            "label": posixpath.basename(self.relpath),
            "source": self.relpath,
            "language": self.lang.name,
            "line": 1,
            "end_line": root.end_point[0] + 1,
        }
        doc = ""
        if self.lang.module_name is not None:
            attrs["module"] = meta["module"] = self.lang.module_name(self.relpath)
        if self.lang.docstring == "body":
            doc = _body_docstring(root, self.src)
            attrs["doc"] = _first_line(doc)
        package = self._package(root)
        if package:
            attrs["package"] = meta["package"] = package
        if self.lang.module_meta is not None:
            meta.update(self.lang.module_meta(root, self.src))
        default = self._default_export(root)
        if default:
            meta["default_export"] = default
        self.extraction.nodes[self.fid] = attrs
        tops = [s.name for s in symbols if s.parent is None and not s.virtual]
        self.extraction.text = " ".join(filter(None, [self.relpath, attrs.get("module", ""), doc[:_MAX_DOC], " ".join(tops)]))

    def _package(self, root: ts.Node) -> str:
        return self.lang.package_of(root, self.src) if self.lang.package_of is not None else ""

    def _default_export(self, root: ts.Node) -> str:
        return self.lang.default_export(root, self.src) if self.lang.default_export is not None else ""

    def _contains(self, symbols: list[_Symbol]) -> None:
        meta = self.extraction.meta["code"]
        tops: dict[str, str] = {}
        children: dict[str, dict[str, str]] = {}
        impls: list[dict[str, Any]] = []
        seen_virtual: set[str] = set()
        nodes = self.extraction.nodes
        for sym in symbols:
            parent = sym.parent
            if sym.virtual:
                if sym.segment == "impl":
                    seen_virtual.add(sym.locator)
                    trait = sym.node.child_by_field_name("trait")
                    impls.append(
                        {
                            "locator": sym.locator,
                            "type": base_name(text(sym.node.child_by_field_name("type"), self.src)),
                            "trait": base_name(text(trait, self.src)) if trait is not None else None,
                            "scope": parent.locator if parent is not None else None,
                            "line": _line(sym.node),
                        }
                    )
                continue
            if parent is not None and parent.virtual and parent.locator not in seen_virtual:
                seen_virtual.add(parent.locator)
                impls.append({"locator": parent.locator, "type": parent.name, "trait": None, "scope": None, "line": _line(sym.node)})
            if parent is None:
                tops.setdefault(sym.name, sym.locator)
                owner = self.fid
            else:
                children.setdefault(parent.locator, {}).setdefault(sym.name, sym.locator)
                owner = parent.locator if parent.locator in nodes else self._type_node(parent)
            self.extraction.edges.append(edge(owner, sym.locator, CONTAINS, self.relpath, _line(sym.node)))
        meta["tops"] = tops
        meta["children"] = children
        if impls:
            meta["impls"] = impls

    def _type_node(self, virtual: _Symbol) -> str:
        """The node a virtual container (``impl S``, Go receiver ``type T``) hangs off in this file."""
        for word in ("type", "struct", "enum", "union", "trait", "class"):
            candidate = f"{self.relpath}{LOCATOR_SEP}{word} {base_name(virtual.name.split(' for ')[-1])}"
            if candidate in self.extraction.nodes:
                return candidate
        return self.fid

    # ------------------------------------------------------------ imports, calls, bases

    def _enclosing(self, items: list[tuple[int, Any]], symbols: list[_Symbol]) -> list[tuple[Any, _Symbol | None]]:
        """Pair each (start byte, item) with the innermost real symbol around it (both sorted)."""
        out: list[tuple[Any, _Symbol | None]] = []
        stack: list[_Symbol] = []
        i = 0
        real = [s for s in symbols if not s.virtual]
        for start, item in items:
            while i < len(real) and real[i].start <= start:
                while stack and stack[-1].end <= real[i].start:
                    stack.pop()
                stack.append(real[i])
                i += 1
            while stack and stack[-1].end <= start:
                stack.pop()
            out.append((item, stack[-1] if stack else None))
        return out

    def _imports(self, imports: list[ts.Node], symbols: list[_Symbol]) -> None:
        specs: list[dict[str, Any]] = []
        for node, scope in self._enclosing([(n.start_byte, n) for n in imports], symbols):
            for spec in self.lang.import_parser(node, self.src):
                if scope is not None:
                    spec["scope"] = scope.locator
                specs.append(spec)
                self.extraction.refs.append(Ref(self.fid, spec["module"], "imports", spec["line"], {"spec": len(specs) - 1}))
        self.extraction.meta["code"]["imports"] = specs

    def _calls(self, calls: list[tuple[ts.Node, ts.Node | None]], symbols: list[_Symbol]) -> None:
        lang, src = self.lang, self.src
        refs = self.extraction.refs
        for (call, callee), scope in self._enclosing([(c[0].start_byte, c) for c in calls], symbols):
            node = callee if callee is not None else call
            if call.type in lang.jsx_elements and lang.host_element is not None and lang.host_element(node, src):
                continue
            recv: str | None = None
            if node.type in lang.member_calls:
                recv_field, name_field = lang.member_calls[node.type]
                recv_node = node.child_by_field_name(recv_field)
                recv = _one_line(text(recv_node, src), _MAX_CALL_NAME) if recv_node is not None else None
                name = text(node.child_by_field_name(name_field), src)
            elif node.type in _SIMPLE_CALLEE:
                name = text(node, src)
            else:
                name = ""
            raw = _one_line(text(node, src), _MAX_CALL_NAME)
            if call.type == "object_creation_expression" or (call.type == "new_expression" and node.type not in lang.member_calls):
                name = base_name(raw)
            attrs: dict[str, Any] = {"name": name}
            if call.type in ("object_creation_expression", "new_expression"):
                attrs["new"] = True
            if scope is not None and call.start_byte < scope.node.start_byte:
                attrs["decorator"] = True
            if recv is not None:
                attrs["recv"] = recv
            if scope is not None:
                if scope.cls is not None:
                    attrs["cls"] = scope.cls.locator
                method = scope
                while method is not None and method.kind != METHOD:
                    method = method.parent
                if method is not None and method.receiver:
                    attrs["self"] = method.receiver
            refs.append(Ref(scope.locator if scope is not None else self.fid, raw, "calls", _line(call), attrs))

    def _bases(self, symbols: list[_Symbol]) -> None:
        for sym in symbols:
            if sym.virtual or sym.kind != CLASS:
                continue
            for base, relation in self.lang.bases(sym.node, self.src):
                if base:
                    scope = sym.parent.locator if sym.parent is not None else None
                    self.extraction.refs.append(Ref(sym.locator, base, relation, _line(sym.node), {"scope": scope}))


def _first_error_line(root: ts.Node) -> int:
    node = root
    while True:
        nxt = next((c for c in node.children if c.has_error or c.is_missing or c.type == "ERROR"), None)
        if nxt is None or node.type == "ERROR" or node.is_missing:
            return node.start_point[0] + 1
        node = nxt


def _body_docstring(body: ts.Node | None, src: bytes) -> str:
    if body is None:
        return ""
    first = next((c for c in body.named_children if c.type != "comment"), None)
    if first is not None and first.type == "expression_statement" and first.named_children:
        first = first.named_children[0]
    if first is None or first.type != "string":
        return ""
    raw = text(first, src).lstrip("rRuUbBfF")
    for quote in ('"""', "'''", '"', "'"):
        if raw.startswith(quote) and raw.endswith(quote) and len(raw) >= 2 * len(quote):
            return raw[len(quote) : -len(quote)].strip()
    return raw.strip()


_COMMENT_MARKER = re.compile(r"^\s*(///?|//!|/\*\*?|\*/|\*|#)?\s?")


def _strip_comment_markers(raw: str) -> str:
    lines = [_COMMENT_MARKER.sub("", line).rstrip().removesuffix("*/").rstrip() for line in raw.splitlines()]
    return "\n".join(lines).strip()


def _first_line(doc: str) -> str:
    for line in doc.splitlines():
        if line.strip():
            return _one_line(line, _MAX_SIGNATURE)
    return ""


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _file_only(relpath: str, data: bytes, language: str, reason: str | None) -> Extraction:
    extraction = Extraction(source=relpath, hash=hashlib.sha256(data).hexdigest(), quarantine=reason)
    extraction.nodes[file_id(relpath)] = {"kind": FILE, "label": posixpath.basename(relpath), "source": relpath, "language": language}
    extraction.meta["code"] = {"language": language}
    return extraction


def _extract_project_file(relpath: str, data: bytes, found: Any) -> Extraction:
    """A project file (`extract.languages.PROJECT_FILES`): a file node, what it says in its code meta."""
    extraction = _file_only(relpath, data, found.language, None)
    said, extraction.warnings = found.read(relpath, data)
    extraction.meta["code"].update(said)
    return extraction


def extract_file(relpath: str, data: bytes) -> Extraction:
    """Extract one file; never raises (bad input becomes a quarantine reason or a warning)."""
    name = posixpath.basename(relpath)
    found = project_file(name)
    if found is not None:
        return _extract_project_file(relpath, data, found)
    lang = language_for(relpath)
    if lang is None:
        return _file_only(relpath, data, "unknown", f"{relpath}: no language entry for this extension")
    if _is_binary(data):
        return _file_only(relpath, data, lang.name, f"{relpath}: binary content in a {lang.name} file; not extracted (remove it or add it to .kgignore)")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _file_only(relpath, data, lang.name, f"{relpath}: not UTF-8 (byte {exc.start}); re-save it as UTF-8 or add it to .kgignore")
    try:
        return redact_extraction(_FileExtractor(relpath, data, lang).run())
    except Exception as exc:  # a grammar or extractor bug must not stop the scope
        return _file_only(relpath, data, lang.name, f"{relpath}: extractor failed ({type(exc).__name__}: {exc}); please report it")


def symbols_of(relpath: str, data: bytes) -> dict[str, dict[str, Any]]:
    """Anchors of a file as it is now: locator -> line, end_line, hash, name (for ``kg check``)."""
    extraction = extract_file(relpath, data)
    out: dict[str, dict[str, Any]] = {}
    for node_id, attrs in extraction.nodes.items():
        anchor = attrs.get("anchor")
        if anchor:
            out[node_id] = {"line": attrs["line"], "end_line": attrs["end_line"], "hash": anchor["hash"], "name": attrs["label"]}
    return out


class CodeAdapter:
    """The ``code`` scope kind: a project repository read with tree-sitter."""

    kind = "code"

    def __init__(self, max_bytes: int = code_scan.DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes

    def list_sources(self, root: Path) -> tuple[list[str], list[SourceSkip]]:
        return code_scan.list_sources(root, self.max_bytes)

    def extract(self, relpath: str, data: bytes) -> Extraction:
        return extract_file(relpath, data)

    def resolve(self, extractions: dict[str, Extraction]) -> Resolution:
        return code_resolve.resolve(extractions)

    def search_text(self, node_id: str, attrs: dict[str, Any], extraction: Extraction) -> str:
        if attrs.get("kind") == FILE:
            return extraction.text
        docs = extraction.meta.get("code", {}).get("docs", {})
        parts = [attrs.get("label", ""), attrs.get("qualname", ""), attrs.get("signature", ""), docs.get(node_id, attrs.get("doc", ""))]
        return " ".join(p for p in parts if p)
