"""The one table of languages the code extractor knows.

Each entry says, for one language: which file extensions it owns, which grammar of
``tree-sitter-language-pack`` parses it, and one tree-sitter query whose captures name the
symbols (``@def.<segment>`` + ``@name``), calls (``@call`` + ``@callee``; JSX elements too, a
component use being a call in React semantics), imports (``@import``),
comments (``@comment``) and indentation blocks (``@block``). The few things a query cannot say
(how an import statement binds names, what a class inherits) are small functions named in the
entry. Adding a language is adding an entry here plus a fixture under ``tests/fixtures/code``.

Capture ``@def.<segment>`` names the locator segment word (``class Foo``, ``struct S``,
``type T``, ``impl S``); functions become methods when their nearest container is class-like.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import tree_sitter as ts
import tree_sitter_language_pack as tslp

Node = ts.Node
ImportSpec = dict[str, Any]

# Segment words that make a container class-like (so a function directly inside is a method).
CLASS_LIKE = frozenset({"class", "struct", "interface", "trait", "enum", "type", "impl", "record", "union"})
# Segment words that are containers but not graph nodes (their methods hang off the type).
VIRTUAL = frozenset({"impl"})
# Segment word -> graph node kind for containers that are nodes.
MODULE_SEGMENTS = frozenset({"mod", "namespace"})

_GENERIC_CUT = re.compile(r"[\[<(]")


def text(node: Node | None, src: bytes) -> str:
    """Source text of a node (empty for a missing node)."""
    if node is None:
        return ""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def base_name(expr: str) -> str:
    """A type expression without generic arguments or pointers: ``Base[T]`` → ``Base``."""
    expr = expr.strip().lstrip("*&").strip()
    return _GENERIC_CUT.split(expr, 1)[0].strip()


def _string_value(node: Node, src: bytes) -> str:
    raw = text(node, src).strip()
    return raw[1:-1] if len(raw) >= 2 and raw[0] in "'\"`" else raw


# ---------------------------------------------------------------- Python hooks


def python_module_name(relpath: str) -> str:
    """Dotted module name of a Python file from its path (``src/`` layout stripped)."""
    stem = relpath.rsplit(".", 1)[0]
    parts = stem.split("/")
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)



def _py_imports(node: Node, src: bytes) -> list[ImportSpec]:
    line = node.start_point[0] + 1
    specs: list[ImportSpec] = []
    if node.type == "import_statement":
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                module = text(child.child_by_field_name("name"), src)
                specs.append({"module": module, "alias": text(child.child_by_field_name("alias"), src), "line": line})
            else:
                module = text(child, src)
                specs.append({"module": module, "alias": module.split(".")[0], "head": True, "line": line})
        return specs
    module_node = node.child_by_field_name("module_name")
    level = 0
    module = ""
    if module_node is not None and module_node.type == "relative_import":
        for part in module_node.named_children:
            if part.type == "import_prefix":
                level = len(text(part, src).strip())
            else:
                module = text(part, src)
    else:
        module = text(module_node, src)
    if module == "__future__":
        return []
    if any(c.type == "wildcard_import" for c in node.named_children):
        return [{"module": module, "level": level, "star": True, "line": line}]
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            name = text(child.child_by_field_name("name"), src)
            alias = text(child.child_by_field_name("alias"), src)
        else:
            name = alias = text(child, src)
        specs.append({"module": module, "level": level, "name": name, "alias": alias, "line": line})
    return specs


def _py_bases(node: Node, src: bytes) -> list[tuple[str, str]]:
    args = node.child_by_field_name("superclasses")
    if args is None:
        return []
    out = []
    for child in args.named_children:
        if child.type in ("keyword_argument", "list_splat", "dictionary_splat", "comment"):
            continue
        out.append((base_name(text(child, src)), "inherits"))
    return out


# ---------------------------------------------------------------- JavaScript / TypeScript hooks


def _js_imports(node: Node, src: bytes) -> list[ImportSpec]:
    line = node.start_point[0] + 1
    if node.type == "variable_declarator":  # const x = require('m')
        value = node.child_by_field_name("value")
        args = value.child_by_field_name("arguments") if value is not None else None
        strings = [c for c in args.named_children if c.type == "string"] if args is not None else []
        if not strings:
            return []
        module = _string_value(strings[0], src)
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
    module = _string_value(source, src)
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


# ---------------------------------------------------------------- Go hooks


def _go_imports(node: Node, src: bytes) -> list[ImportSpec]:
    path = _string_value(node.child_by_field_name("path"), src)
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


# ---------------------------------------------------------------- Rust hooks


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


# ---------------------------------------------------------------- Java hooks


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


def _no_bases(node: Node, src: bytes) -> list[tuple[str, str]]:
    return []


# ---------------------------------------------------------------- the table


@dataclass(frozen=True)
class Language:
    """Everything the extractor needs to know about one language."""

    name: str
    grammar: str
    extensions: tuple[str, ...]
    query: str
    import_parser: Callable[[Node, bytes], list[ImportSpec]]
    bases: Callable[[Node, bytes], list[tuple[str, str]]] = _no_bases
    # Node types whose wrapper (decorators, ``export``) belongs to the symbol's anchor text.
    wrappers: tuple[str, ...] = ()
    # Member-call node types: type -> (receiver field, name field).
    member_calls: dict[str, tuple[str, str]] = field(default_factory=dict)
    docstring: str = "comment"  # "python": first string in the body; "comment": comment above
    self_names: tuple[str, ...] = ()  # receivers that mean "this object"
    super_receivers: tuple[str, ...] = ()
    bare_calls_see_members: bool = False  # Java: foo() inside a class means this.foo()
    builtins: frozenset[str] = frozenset()
    subkind: Callable[[Node], str] | None = None  # refines a segment's subkind (Go type specs)
    impl_name: Callable[[Node, bytes], str] | None = None  # names a virtual container (Rust impl)
    body_field: str = "body"
    # Element node types (JSX) whose ``@callee`` name is a component use when it is not intrinsic.
    jsx_elements: frozenset[str] = frozenset()

    @property
    def ts_language(self) -> ts.Language:
        return tslp.get_language(self.grammar)  # type: ignore[arg-type]


_PY_BUILTINS = frozenset(
    "abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile "
    "complex delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals "
    "hasattr hash help hex id input int isinstance issubclass iter len list locals map max memoryview "
    "min next object oct open ord pow print property range repr reversed round set setattr slice "
    "sorted staticmethod str sum super tuple type vars zip __import__ NotImplementedError ValueError "
    "TypeError KeyError IndexError RuntimeError AttributeError Exception StopIteration AssertionError "
    "ImportError ModuleNotFoundError OSError IOError ZeroDivisionError OverflowError ArithmeticError "
    "LookupError NameError UnboundLocalError RecursionError FileNotFoundError PermissionError "
    "NotADirectoryError IsADirectoryError TimeoutError KeyboardInterrupt SystemExit GeneratorExit "
    "UserWarning DeprecationWarning FutureWarning RuntimeWarning Warning BaseException UnicodeDecodeError "
    "UnicodeEncodeError StopAsyncIteration BufferError EOFError MemoryError ReferenceError SyntaxError".split()
)
_JS_BUILTINS = frozenset(
    "require parseInt parseFloat isNaN isFinite encodeURIComponent decodeURIComponent encodeURI "
    "decodeURI setTimeout clearTimeout setInterval clearInterval queueMicrotask structuredClone "
    "fetch Symbol String Number Boolean Array Object Promise Map Set WeakMap WeakSet Date RegExp Error "
    "TypeError RangeError SyntaxError BigInt JSON Math Reflect Proxy console alert super".split()
)
_GO_BUILTINS = frozenset(
    "append cap clear close complex copy delete imag len make max min new panic print println real "
    "recover string int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 uintptr float32 "
    "float64 byte rune bool error any".split()
)
_RUST_BUILTINS = frozenset("Some Ok Err Box Vec String Option Result drop".split())
_JAVA_BUILTINS = frozenset("super this".split())

_PY_QUERY = """
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(call function: (_) @callee) @call
(import_statement) @import
(import_from_statement) @import
(comment) @comment
(block) @block
"""

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

_JS_QUERY = _JS_COMMON + _JSX + """
(field_definition property: (_) @name value: [(arrow_function) (function_expression)]) @def.function
"""

_TS_QUERY = _JS_COMMON + """
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(enum_declaration name: (_) @name) @def.enum
(internal_module name: (_) @name) @def.namespace
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @def.function
(method_signature name: (_) @name) @def.function
(abstract_method_signature name: (_) @name) @def.function
"""

_GO_QUERY = """
(type_spec name: (type_identifier) @name) @def.type
(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.function
(method_elem name: (field_identifier) @name) @def.function
(call_expression function: (_) @callee) @call
(import_spec) @import
(comment) @comment
"""

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

_JS_MEMBERS = {"member_expression": ("object", "property")}

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
    )

LANGUAGES: tuple[Language, ...] = (
    Language(
        name="python",
        grammar="python",
        extensions=(".py", ".pyi"),
        query=_PY_QUERY,
        import_parser=_py_imports,
        bases=_py_bases,
        wrappers=("decorated_definition",),
        member_calls={"attribute": ("object", "attribute")},
        docstring="python",
        self_names=("self", "cls"),
        super_receivers=("super()",),
        builtins=_PY_BUILTINS,
    ),
    _js_family("typescript", (".ts", ".mts", ".cts"), _TS_QUERY, jsx=False),
    _js_family("tsx", (".tsx",), _TS_QUERY + _JSX, jsx=True),
    _js_family("javascript", (".js", ".jsx", ".mjs", ".cjs"), _JS_QUERY, jsx=True),
    Language(
        name="go",
        grammar="go",
        extensions=(".go",),
        query=_GO_QUERY,
        import_parser=_go_imports,
        bases=_go_bases,
        member_calls={"selector_expression": ("operand", "field")},
        builtins=_GO_BUILTINS,
        subkind=_go_subkind,
    ),
    Language(
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
    ),
    Language(
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
    ),
)

BY_NAME: dict[str, Language] = {lang.name: lang for lang in LANGUAGES}
BY_EXTENSION: dict[str, Language] = {ext: lang for lang in LANGUAGES for ext in lang.extensions}


def language_for(relpath: str) -> Language | None:
    """The language owning a path, by its extension (None when no entry claims it)."""
    dot = relpath.rfind(".")
    if dot < 0 or "/" in relpath[dot:]:
        return None
    return BY_EXTENSION.get(relpath[dot:].lower())


@cache
def parser_for(name: str) -> ts.Parser:
    return tslp.get_parser(BY_NAME[name].grammar)  # type: ignore[arg-type]


@cache
def query_for(name: str) -> ts.Query:
    """The compiled query of a language (compiled once per process)."""
    lang = BY_NAME[name]
    return ts.Query(lang.ts_language, lang.query)
