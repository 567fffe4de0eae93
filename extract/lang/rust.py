"""Rust: its table entry (query, `use` trees, trait bounds as bases, `impl` blocks)."""

from __future__ import annotations

from .base import ImportSpec, Language, Node, base_name, text

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
)
