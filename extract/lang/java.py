"""Java: its table entry (query, imports, extends/implements as bases) and its packages."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from vault_kg.core.model import LOCATOR_SEP

from .base import ImportSpec, Language, Node, Resolver, Target, base_name, text

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


class JavaResolver(Resolver):
    """Packages by their ``package`` declaration: a name is visible package-wide, imports name classes."""

    def index(self, scope: Any, files: list[str]) -> None:
        self.pkg: dict[str, dict[str, str]] = defaultdict(dict)
        for rel in files:
            package = scope.code[rel].get("package", "")
            for name, loc in scope.code[rel].get("tops", {}).items():
                self.pkg[package].setdefault(name, loc)

    def module_of(self, scope: Any, rel: str, spec: ImportSpec) -> Target | None:
        module = spec.get("module", "")
        if module in self.pkg:
            return ("pkg", module)
        head, _, last = module.rpartition(".")
        if last in self.pkg.get(head, {}):
            return ("sym", self.pkg[head][last])
        return ("ext", module)

    def name_fallback(self, scope: Any, rel: str, name: str) -> Target | None:
        loc = self.pkg.get(scope.code[rel].get("package", ""), {}).get(name)
        return ("sym", loc) if loc else None

    def package_tops(self, package: str) -> dict[str, str] | None:
        return self.pkg.get(package)

    def package_files(self, package: str) -> list[str] | None:
        tops = self.pkg.get(package)
        return sorted({loc.split(LOCATOR_SEP, 1)[0] for loc in tops.values()}) if tops else None


def _java_package(root: Node, src: bytes) -> str:
    """The package a Java file declares (``package a.b;``)."""
    for child in root.named_children:
        if child.type == "package_declaration":
            ids = [c for c in child.named_children if c.type in ("scoped_identifier", "identifier")]
            return text(ids[0], src) if ids else ""
    return ""


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
    resolver=JavaResolver,
    package_of=_java_package,
)
