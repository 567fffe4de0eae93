"""Rust: its table entry (query, `use` trees, trait bounds as bases, `impl` blocks) and its module tree."""

from __future__ import annotations

import posixpath
from typing import Any

from .base import ImportSpec, Language, Node, Resolver, Target, base_name, text

_RUST_BUILTINS = frozenset("Some Ok Err Box Vec String Option Result drop".split())
_RUST_QUERY = """
(struct_item name: (_) @name) @def.struct
(enum_item name: (_) @name) @def.enum
(union_item name: (_) @name) @def.union
(trait_item name: (_) @name) @def.trait
(impl_item type: (_)) @def.impl
(mod_item name: (_) @name body: (_)) @def.mod
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(call_expression function: (_) @callee) @call
(use_declaration) @import
(mod_item !body) @import
(line_comment) @comment
(block_comment) @comment
"""


def _rust_imports(node: Node, src: bytes) -> list[ImportSpec]:
    line = node.start_point[0] + 1
    if node.type == "mod_item":
        name = text(node.child_by_field_name("name"), src)
        return [{"module": f"self::{name}", "alias": name, "mod_decl": True, "line": line}]
    specs: list[ImportSpec] = []
    _rust_use_tree(node.child_by_field_name("argument"), [], src, line, specs)
    return specs


def _rust_use_tree(part: Node | None, prefix: list[str], src: bytes, line: int, specs: list[ImportSpec]) -> None:
    """One `use` tree into `specs` (a module-level function: a recursive closure is a reference
    cycle, and the engine runs with cyclic GC off, so it would keep `src` alive)."""
    if part is None:
        return
    kind = part.type
    if kind in ("identifier", "crate", "self", "super", "scoped_identifier"):
        path = prefix + text(part, src).split("::")
        if path[-1] == "self":
            path = path[:-1]
        specs.append({"module": "::".join(path), "alias": path[-1], "line": line})
    elif kind == "use_as_clause":
        path = prefix + text(part.child_by_field_name("path"), src).split("::")
        specs.append({"module": "::".join(path), "alias": text(part.child_by_field_name("alias"), src), "line": line})
    elif kind == "scoped_use_list":
        inner = prefix + (text(part.child_by_field_name("path"), src).split("::") if part.child_by_field_name("path") else [])
        _rust_use_tree(part.child_by_field_name("list"), inner, src, line, specs)
    elif kind == "use_list":
        for child in part.named_children:
            _rust_use_tree(child, prefix, src, line, specs)
    elif kind == "use_wildcard":
        path = [p for p in text(part, src).split("::") if p and p != "*"]
        specs.append({"module": "::".join(prefix + path), "star": True, "line": line})


def _rust_bases(node: Node, src: bytes) -> list[tuple[str, str]]:
    bounds = node.child_by_field_name("bounds")
    if bounds is None:
        return []
    return [(base_name(text(b, src)), "inherits") for b in bounds.named_children]


def _rust_impl_name(node: Node, src: bytes) -> str:
    type_name = base_name(text(node.child_by_field_name("type"), src))
    trait = node.child_by_field_name("trait")
    return f"{base_name(text(trait, src))} for {type_name}" if trait is not None else type_name


class RustResolver(Resolver):
    """Modules by crate root (``lib.rs``/``main.rs``) and path; ``crate::``/``self::``/``super::`` paths."""

    path_roots = frozenset({"crate", "self", "super"})

    def index(self, scope: Any, files: list[str]) -> None:
        roots = {posixpath.dirname(rel) for rel in files if posixpath.basename(rel) in ("lib.rs", "main.rs")}
        self.mod: dict[tuple[str, tuple[str, ...]], str] = {}
        self.path: dict[str, tuple[str, tuple[str, ...]]] = {}
        for rel in files:
            directory = posixpath.dirname(rel)
            root = directory
            while root and root not in roots:
                root = posixpath.dirname(root)
            if root not in roots:
                root = directory
            inner = rel[len(root) :].lstrip("/")[: -len(".rs")].split("/") if root else rel[: -len(".rs")].split("/")
            if inner[-1] in ("mod", "lib", "main") and (inner[-1] == "mod" or len(inner) == 1):
                inner = inner[:-1]
            key = (root, tuple(p for p in inner if p))
            self.mod.setdefault(key, rel)
            self.path[rel] = key

    def module_of(self, scope: Any, rel: str, spec: ImportSpec) -> Target | None:
        return self.resolve_path(scope, rel, spec.get("module", "").split("::"))

    def _submodule(self, rel: str, name: str) -> Target | None:
        root, path = self.path.get(rel, ("", ()))
        found = self.mod.get((root, (*path, name)))
        return ("mod", found) if found else None

    def module_member(self, scope: Any, rel: str, name: str) -> Target | None:
        return self._submodule(rel, name)

    def name_fallback(self, scope: Any, rel: str, name: str) -> Target | None:
        return self._submodule(rel, name)

    def unknown_head(self, name: str) -> Target | None:
        return ("ext", name)

    def resolve_path(self, scope: Any, rel: str, parts: list[str]) -> Target | None:
        """A Rust path from a ``use`` or an expression: ``crate::``, ``self::``, ``super::`` or a name."""
        if rel not in self.path or not parts:
            return None
        root, path = self.path[rel]
        first, rest = parts[0], parts[1:]
        if first == "crate":
            current: tuple[str, ...] = ()
        elif first in ("self", "super"):
            current = path
            while rest is not None and first == "super":
                current = current[:-1]
                if rest and rest[0] == "super":
                    first, rest = rest[0], rest[1:]
                else:
                    break
        else:
            head = scope.resolve_name(rel, None, first) if first != parts[-1] or len(parts) > 1 else None
            if head is None:
                found = self.mod.get((root, (*path, first))) or self.mod.get((root, (first,)))
                head = ("mod", found) if found else ("ext", first)
            for part in rest:
                head = scope.member(head, part)
            return head
        module = self.mod.get((root, current))
        target: Target | None = ("mod", module) if module else None
        for part in rest:
            deeper = self.mod.get((root, (*current, part)))
            if deeper and target is not None and target[0] == "mod":
                current = (*current, part)
                target = ("mod", deeper)
            else:
                target = scope.member(target, part)
        return target


LANGUAGE = Language(
    name="rust",
    grammar="rust",
    extensions=(".rs",),
    query=_RUST_QUERY,
    import_parser=_rust_imports,
    bases=_rust_bases,
    member_calls={"field_expression": ("value", "field"), "scoped_identifier": ("path", "name")},
    self_names=("self", "Self"),
    builtins=_RUST_BUILTINS,
    impl_name=_rust_impl_name,
    resolver=RustResolver,
)
