"""Go: its table entry (query, imports, embedded types as bases, type-spec subkinds)."""

from __future__ import annotations

from .base import ImportSpec, Language, Node, base_name, string_value, text

_GO_BUILTINS = frozenset(
    "append cap clear close complex copy delete imag len make max min new panic print println real "
    "recover string int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 uintptr float32 "
    "float64 byte rune bool error any".split()
)
_GO_QUERY = """
(type_spec name: (type_identifier) @name) @def.type
(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.function
(method_elem name: (field_identifier) @name) @def.function
(call_expression function: (_) @callee) @call
(import_spec) @import
(comment) @comment
"""


def _go_imports(node: Node, src: bytes) -> list[ImportSpec]:
    path = string_value(node.child_by_field_name("path"), src)
    name_node = node.child_by_field_name("name")
    spec: ImportSpec = {"module": path, "line": node.start_point[0] + 1}
    if name_node is not None:
        alias = text(name_node, src)
        if alias == ".":
            spec["star"] = True
        elif alias != "_":
            spec["alias"] = alias
    else:
        spec["alias"] = path.rstrip("/").rsplit("/", 1)[-1]
        spec["implicit_alias"] = True
    return [spec]


def _go_bases(node: Node, src: bytes) -> list[tuple[str, str]]:
    body = node.child_by_field_name("type")
    out: list[tuple[str, str]] = []
    if body is None:
        return out
    if body.type == "struct_type":
        for fields in body.named_children:
            for decl in fields.named_children:
                if decl.type == "field_declaration" and decl.child_by_field_name("name") is None:
                    out.append((base_name(text(decl.child_by_field_name("type"), src)), "inherits"))
    elif body.type == "interface_type":
        for elem in body.named_children:
            if elem.type == "type_elem":
                out.append((base_name(text(elem, src)), "inherits"))
    return out


def _go_subkind(node: Node) -> str:
    body = node.child_by_field_name("type")
    return {"struct_type": "struct", "interface_type": "interface"}.get(body.type if body else "", "type")


LANGUAGE = Language(
    name="go",
    grammar="go",
    extensions=(".go",),
    query=_GO_QUERY,
    import_parser=_go_imports,
    bases=_go_bases,
    member_calls={"selector_expression": ("operand", "field")},
    builtins=_GO_BUILTINS,
    subkind=_go_subkind,
    receiver_methods="method_declaration",
)
