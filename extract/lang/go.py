"""Go: its table entry (query, imports, embedded types as bases, type-spec subkinds) and its packages."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from typing import Any

from .base import ImportSpec, Language, Node, ProjectFile, Resolver, Target, base_name, string_value, text

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


class GoResolver(Resolver):
    """Packages are folders: import paths through ``go.mod`` module paths, names shared folder-wide."""

    def index(self, scope: Any, files: list[str]) -> None:
        self.modules: list[tuple[str, str]] = []
        for rel, code in sorted(scope.code.items()):
            if code.get("go_module"):
                self.modules.append((posixpath.dirname(rel), code["go_module"]))
        self.modules.sort(key=lambda m: -len(m[1]))
        self.pkg_files: dict[str, list[str]] = defaultdict(list)
        self.pkg_tops: dict[str, dict[str, str]] = defaultdict(dict)
        self.pkg_name: dict[str, str] = {}
        for rel in files:
            directory = posixpath.dirname(rel)
            if scope.code[rel].get("package", "").endswith("_test"):
                continue
            self.pkg_files[directory].append(rel)
            self.pkg_name.setdefault(directory, scope.code[rel].get("package", ""))
            for name, loc in scope.code[rel].get("tops", {}).items():
                self.pkg_tops[directory].setdefault(name, loc)

    def module_of(self, scope: Any, rel: str, spec: ImportSpec) -> Target | None:
        path = spec.get("module", "")
        for directory, module in self.modules:
            if path == module or path.startswith(module + "/"):
                pkg = posixpath.normpath(posixpath.join(directory, path[len(module) :].lstrip("/")))
                pkg = "" if pkg == "." else pkg
                return ("pkg", pkg) if pkg in self.pkg_files else None
        return ("ext", path)

    def name_fallback(self, scope: Any, rel: str, name: str) -> Target | None:
        loc = self.pkg_tops.get(posixpath.dirname(rel), {}).get(name)
        return ("sym", loc) if loc else None

    def impl_type(self, scope: Any, rel: str, impl: dict[str, Any], found: Target | None) -> Target | None:
        """A method's receiver type is declared in the same package, never imported."""
        loc = self.pkg_tops.get(posixpath.dirname(rel), {}).get(impl["type"])
        return ("sym", loc) if loc else None

    def implicit_alias(self, target: Target | None, alias: str) -> str:
        if target is not None and target[0] == "pkg":
            return self.pkg_name.get(target[1]) or alias
        return alias

    def package_tops(self, package: str) -> dict[str, str] | None:
        return self.pkg_tops.get(package)

    def package_files(self, package: str) -> list[str] | None:
        return self.pkg_files.get(package)


def _go_package(root: Node, src: bytes) -> str:
    """The package a Go file declares (``package x``)."""
    for child in root.named_children:
        if child.type == "package_clause":
            return text(child.named_children[0], src) if child.named_children else ""
    return ""


GO_MOD = "go.mod"


def _read_go_mod(relpath: str, data: bytes) -> tuple[dict[str, Any], list[str]]:
    """What go.mod says of import paths: the module path its packages' imports start with."""
    match = re.search(rb"^\s*module\s+(\S+)", data, re.MULTILINE)
    return ({"go_module": match.group(1).decode("utf-8", "replace").strip('"')} if match else {}), []


PROJECT_FILES = (ProjectFile("gomod", lambda name: name == GO_MOD, _read_go_mod),)

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
    resolver=GoResolver,
    package_of=_go_package,
)
