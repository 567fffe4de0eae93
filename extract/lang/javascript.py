"""TypeScript, TSX and JavaScript: one family, three entries (grammar, extensions, query, JSX), one resolver."""

from __future__ import annotations

import posixpath
from typing import Any

from extract.lang.js_config import LANGUAGE as JS_CONFIG, is_config, read_config
from extract.lang.js_paths import JsPathMapper
from vault_kg.core.model import file_id

from .base import ImportSpec, Language, Node, ProjectFile, Resolver, Target, base_name, string_value, text

_JS_BUILTINS = frozenset(
    "require parseInt parseFloat isNaN isFinite encodeURIComponent decodeURIComponent encodeURI "
    "decodeURI setTimeout clearTimeout setInterval clearInterval queueMicrotask structuredClone "
    "fetch Symbol String Number Boolean Array Object Promise Map Set WeakMap WeakSet Date RegExp Error "
    "TypeError RangeError SyntaxError BigInt JSON Math Reflect Proxy console alert super".split()
)
_JS_COMMON = """
(class_declaration name: (_) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(method_definition name: (_) @name) @def.function
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function
(call_expression function: (_) @callee) @call
(new_expression constructor: (_) @callee) @call
(import_statement) @import
(export_statement source: (_)) @import
(variable_declarator value: (call_expression function: (identifier) @req (#eq? @req "require"))) @import
(comment) @comment
"""
# JSX: `<Button />` and `<Layout>` use a component, as a call would (React semantics).
_JSX = """
(jsx_opening_element name: (_) @callee) @call
(jsx_self_closing_element name: (_) @callee) @call
"""
_JSX_ELEMENTS = frozenset({"jsx_opening_element", "jsx_self_closing_element"})
_JS_QUERY = (
    _JS_COMMON
    + _JSX
    + """
(field_definition property: (_) @name value: [(arrow_function) (function_expression)]) @def.function
"""
)
_TS_QUERY = (
    _JS_COMMON
    + """
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(enum_declaration name: (_) @name) @def.enum
(internal_module name: (_) @name) @def.namespace
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @def.function
(method_signature name: (_) @name) @def.function
(abstract_method_signature name: (_) @name) @def.function
"""
)
_JS_MEMBERS = {"member_expression": ("object", "property")}


def _js_imports(node: Node, src: bytes) -> list[ImportSpec]:
    line = node.start_point[0] + 1
    if node.type == "variable_declarator":  # const x = require('m')
        value = node.child_by_field_name("value")
        args = value.child_by_field_name("arguments") if value is not None else None
        strings = [c for c in args.named_children if c.type == "string"] if args is not None else []
        if not strings:
            return []
        module = string_value(strings[0], src)
        target = node.child_by_field_name("name")
        if target is not None and target.type == "identifier":
            return [{"module": module, "alias": text(target, src), "line": line}]
        specs = []
        for part in target.named_children if target is not None else []:
            if part.type == "shorthand_property_identifier_pattern":
                specs.append({"module": module, "name": text(part, src), "alias": text(part, src), "line": line})
            elif part.type == "pair_pattern":
                key, value_node = part.child_by_field_name("key"), part.child_by_field_name("value")
                specs.append({"module": module, "name": text(key, src), "alias": text(value_node, src), "line": line})
        return specs
    source = node.child_by_field_name("source")
    if source is None:
        return []
    module = string_value(source, src)
    specs: list[ImportSpec] = []
    reexport = node.type == "export_statement"
    for child in node.named_children:
        if child.type == "import_clause":
            for part in child.named_children:
                if part.type == "identifier":
                    specs.append({"module": module, "name": "default", "alias": text(part, src), "line": line})
                elif part.type == "namespace_import":
                    ids = [c for c in part.named_children if c.type == "identifier"]
                    if ids:
                        specs.append({"module": module, "alias": text(ids[0], src), "line": line})
                elif part.type == "named_imports":
                    specs.extend(_js_specifiers(part, module, line, src, "import_specifier"))
        elif child.type == "export_clause":
            specs.extend(_js_specifiers(child, module, line, src, "export_specifier"))
        elif child.type == "namespace_export":
            ids = [c for c in child.named_children if c.type in ("identifier", "string")]
            if ids:
                specs.append({"module": module, "alias": text(ids[0], src), "line": line})
    if not specs:
        specs.append({"module": module, "star": reexport, "line": line})
    for spec in specs:
        spec["reexport"] = reexport
    return specs


def _js_specifiers(node: Node, module: str, line: int, src: bytes, kind: str) -> list[ImportSpec]:
    specs = []
    for spec in node.named_children:
        if spec.type != kind:
            continue
        name = text(spec.child_by_field_name("name"), src)
        alias = text(spec.child_by_field_name("alias"), src) or name
        specs.append({"module": module, "name": name, "alias": alias, "line": line})
    return specs


def _js_bases(node: Node, src: bytes) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "class_heritage":
            for part in child.named_children:
                if part.type == "extends_clause":
                    for value in part.children_by_field_name("value"):
                        out.append((base_name(text(value, src)), "inherits"))
                elif part.type == "implements_clause":
                    for value in part.named_children:
                        out.append((base_name(text(value, src)), "implements"))
                elif part.is_named:  # plain JavaScript: class A extends B
                    out.append((base_name(text(part, src)), "inherits"))
        elif child.type == "extends_type_clause":
            for value in child.children_by_field_name("type"):
                out.append((base_name(text(value, src)), "inherits"))
    return out


_JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


def _package_name(module: str) -> str:
    """The npm package a bare specifier names (``@scope/pkg/sub`` -> ``@scope/pkg``)."""
    module = module.removeprefix("node:")
    parts = module.split("/")
    return "/".join(parts[:2]) if module.startswith("@") else parts[0]


class JsResolver(Resolver):
    """Relative specifiers by file, index file and extension; bare ones through tsconfig/jsconfig paths."""

    def index(self, scope: Any, files: list[str]) -> None:
        self.files = set(files)
        self.paths = JsPathMapper({rel: scope.code[rel].get("js_config", {}) for rel in scope.files(JS_CONFIG)})

    def module_of(self, scope: Any, rel: str, spec: ImportSpec) -> Target | None:
        module = spec.get("module", "")
        if module.startswith("."):
            found = self._lookup(posixpath.normpath(posixpath.join(posixpath.dirname(rel), module)))
            return ("mod", found) if found else None
        return self._bare(rel, module)

    def _bare(self, rel: str, module: str) -> Target | None:
        """A bare specifier: a file through tsconfig/jsconfig path mapping, else an external package."""
        candidates, claimed = self.paths.candidates(rel, module)
        for base in candidates:
            found = self._lookup(base)
            if found:
                return ("mod", found)
        return None if claimed else ("ext", _package_name(module))

    def _lookup(self, base: str) -> str | None:
        """The file a scope-relative import path names: itself, with an extension, or its index file."""
        stems = [base]
        for ext in (".js", ".jsx", ".mjs", ".cjs"):
            if base.endswith(ext):
                stems.append(base[: -len(ext)])
        for stem in stems:
            if stem in self.files:
                return stem
            for ext in _JS_EXTS:
                if stem + ext in self.files:
                    return stem + ext
            for ext in _JS_EXTS:
                if f"{stem}/index{ext}" in self.files:
                    return f"{stem}/index{ext}"
        return None

    def module_member(self, scope: Any, rel: str, name: str) -> Target | None:
        code = scope.code.get(rel, {})
        if name == "default" and code.get("default_export"):
            loc = code.get("tops", {}).get(code["default_export"])
            if loc:
                return ("sym", loc)
        return None

    def exports_import(self, spec: ImportSpec) -> bool:
        return bool(spec.get("reexport"))

    def notes(self) -> dict[str, dict[str, Any]]:
        """Config files whose ``extends`` names a file that is not there."""
        out: dict[str, dict[str, Any]] = {}
        for config in self.paths.configs:
            missing = self.paths.missing_extends(config)
            if missing:
                out[file_id(config)] = {"unresolved_extends": missing}
        return out


def _host_element(name: Node, src: bytes) -> bool:
    """``<div>``, ``<my-el>``, ``<svg:rect>``: host elements, not components (JSX's lowercase rule)."""
    if name.type == "member_expression":
        return False
    return name.type != "identifier" or text(name, src)[:1].islower()


def _default_export(root: Node, src: bytes) -> str:
    """The name ``export default`` binds: a declaration's name, or an identifier's."""
    for child in root.named_children:
        if child.type != "export_statement" or not any(c.type == "default" for c in child.children):
            continue
        decl = child.child_by_field_name("declaration")
        if decl is not None:
            return text(decl.child_by_field_name("name"), src)
        value = child.child_by_field_name("value")
        if value is not None and value.type == "identifier":
            return text(value, src)
    return ""


def _read_js_config(relpath: str, data: bytes) -> tuple[dict[str, Any], list[str]]:
    """What a tsconfig/jsconfig says of imports (path mapping, base URL), and what it got wrong."""
    config, warnings = read_config(relpath, data)
    return {"js_config": config}, warnings


PROJECT_FILES = (ProjectFile(JS_CONFIG, is_config, _read_js_config),)


def _js_family(name: str, extensions: tuple[str, ...], query: str, jsx: bool) -> Language:
    """TypeScript, TSX and JavaScript share everything but the grammar, extensions, query and JSX."""
    return Language(
        name=name,
        grammar=name,
        extensions=extensions,
        query=query,
        import_parser=_js_imports,
        bases=_js_bases,
        wrappers=("export_statement",),
        member_calls=_JS_MEMBERS,
        self_names=("this",),
        super_receivers=("super",),
        builtins=_JS_BUILTINS,
        jsx_elements=_JSX_ELEMENTS if jsx else frozenset(),
        resolver=JsResolver,
        host_element=_host_element if jsx else None,
        default_export=_default_export,
    )


LANGUAGES = (
    _js_family("typescript", (".ts", ".mts", ".cts"), _TS_QUERY, jsx=False),
    _js_family("tsx", (".tsx",), _TS_QUERY + _JSX, jsx=True),
    _js_family("javascript", (".js", ".jsx", ".mjs", ".cjs"), _JS_QUERY, jsx=True),
)
