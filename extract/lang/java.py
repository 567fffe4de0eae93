"""Java: its table entry (query, imports, extends/implements as bases)."""

from __future__ import annotations

from .base import ImportSpec, Language, Node, base_name, text

_JAVA_BUILTINS = frozenset("super this".split())
_JAVA_QUERY = """
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.record
(method_declaration name: (identifier) @name) @def.function
(constructor_declaration name: (identifier) @name) @def.function
(method_invocation) @call
(object_creation_expression type: (_) @callee) @call
(import_declaration) @import
(line_comment) @comment
(block_comment) @comment
"""


def _java_imports(node: Node, src: bytes) -> list[ImportSpec]:
    line = node.start_point[0] + 1
    path_nodes = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
    if not path_nodes:
        return []
    dotted = text(path_nodes[0], src)
    if any(c.type == "asterisk" for c in node.named_children):
        return [{"module": dotted, "star": True, "line": line}]
    module, _, name = dotted.rpartition(".")
    return [{"module": module, "name": name, "alias": name, "line": line}]


def _java_bases(node: Node, src: bytes) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    superclass = node.child_by_field_name("superclass")
    if superclass is not None:
        out.extend((base_name(text(t, src)), "inherits") for t in superclass.named_children)
    interfaces = node.child_by_field_name("interfaces")
    if interfaces is not None:
        for type_list in interfaces.named_children:
            out.extend((base_name(text(t, src)), "implements") for t in type_list.named_children)
    for child in node.named_children:
        if child.type == "extends_interfaces":
            for type_list in child.named_children:
                out.extend((base_name(text(t, src)), "inherits") for t in type_list.named_children)
    return out


LANGUAGE = Language(
    name="java",
    grammar="java",
    extensions=(".java",),
    query=_JAVA_QUERY,
    import_parser=_java_imports,
    bases=_java_bases,
    member_calls={"method_invocation": ("object", "name")},
    self_names=("this",),
    super_receivers=("super",),
    bare_calls_see_members=True,
    builtins=_JAVA_BUILTINS,
)
