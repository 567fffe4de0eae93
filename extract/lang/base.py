"""What every language module fills in: the `Language` entry, and the tree-sitter helpers they share.

Capture ``@def.<segment>`` names the locator segment word (``class Foo``, ``struct S``,
``type T``, ``impl S``); functions become methods when their nearest container is class-like.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
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


def string_value(node: Node, src: bytes) -> str:
    raw = text(node, src).strip()
    return raw[1:-1] if len(raw) >= 2 and raw[0] in "'\"`" else raw


def no_bases(node: Node, src: bytes) -> list[tuple[str, str]]:
    return []


Target = tuple[str, str]


class Resolver:
    """One language's part of scope-wide resolution; the defaults are what a language without rules does.

    ``scope`` is :class:`extract.code_resolve._Scope`: its ``code``/``language`` tables and its
    language-neutral lookups (``resolve_name``, ``member``, ``exports``). Targets are the small
    tuples described there (``("mod", relpath)``, ``("pkg", name)``, ``("sym", id)``, ``("ext", name)``).
    """

    path_roots: frozenset[str] = frozenset()  # expression heads that start a module path (Rust ``crate``)
    star_hides_private: bool = False  # a star import skips ``_names`` when the module has no ``__all__``

    def index(self, scope: Any, files: list[str]) -> None:
        """Build this language's indexes over its files (sorted) once per resolution."""

    def module_of(self, scope: Any, rel: str, spec: ImportSpec) -> Target | None:
        """The module an import statement names (before picking a member of it)."""
        return None

    def bind_missing(self, scope: Any, rel: str, spec: ImportSpec) -> Target | None:
        """What ``from <module> import name`` binds when the module itself was not found."""
        return None

    def module_member(self, scope: Any, rel: str, name: str) -> Target | None:
        """A member of module file ``rel`` beyond its top-level defs (submodules, default export)."""
        return None

    def exports_import(self, spec: ImportSpec) -> bool:
        """Whether a file-level import re-exports what it binds."""
        return True

    def name_fallback(self, scope: Any, rel: str, name: str) -> Target | None:
        """A bare name not bound in the file: the rest of its package, a sibling module."""
        return None

    def resolve_path(self, scope: Any, rel: str, parts: list[str]) -> Target | None:
        """An expression whose head is one of ``path_roots``."""
        return None

    def unknown_head(self, name: str) -> Target | None:
        """The head of an expression no scope binds (Rust: an external crate)."""
        return None

    def impl_type(self, scope: Any, rel: str, impl: dict[str, Any], found: Target | None) -> Target | None:
        """The type a method block (``impl``, Go receiver) attaches to, given the name's resolution."""
        return found

    def implicit_alias(self, target: Target | None, alias: str) -> str:
        """The local name of an import that names no alias itself (Go: the package's own name)."""
        return alias

    def package_tops(self, package: str) -> dict[str, str] | None:
        """Top-level names of a package this language knows (``("pkg", name)`` targets)."""
        return None

    def package_files(self, package: str) -> list[str] | None:
        """Files of a package this language knows."""
        return None

    def notes(self) -> dict[str, dict[str, Any]]:
        """Per-node notes of the resolution (node id -> attributes), e.g. config files' missing parents."""
        return {}


@dataclass(frozen=True)
class ProjectFile:
    """A file that is no source but says how a language's imports resolve (Go's ``go.mod``,
    TypeScript's ``tsconfig.json``): listed with the sources, extracted as a file node whose code
    meta carries what `read` finds (and its warnings)."""

    language: str
    matches: Callable[[str], bool]  # by file name
    read: Callable[[str, bytes], tuple[dict[str, Any], list[str]]]


@dataclass(frozen=True)
class Language:
    """Everything the extractor needs to know about one language."""

    name: str
    grammar: str
    extensions: tuple[str, ...]
    query: str
    import_parser: Callable[[Node, bytes], list[ImportSpec]]
    bases: Callable[[Node, bytes], list[tuple[str, str]]] = no_bases
    # Node types whose wrapper (decorators, ``export``) belongs to the symbol's anchor text.
    wrappers: tuple[str, ...] = ()
    # Member-call node types: type -> (receiver field, name field).
    member_calls: dict[str, tuple[str, str]] = field(default_factory=dict)
    docstring: str = "comment"  # "body": first string in the body (Python); "comment": comment above
    self_names: tuple[str, ...] = ()  # receivers that mean "this object"
    super_receivers: tuple[str, ...] = ()
    bare_calls_see_members: bool = False  # Java: foo() inside a class means this.foo()
    builtins: frozenset[str] = frozenset()
    subkind: Callable[[Node], str] | None = None  # refines a segment's subkind (Go type specs)
    impl_name: Callable[[Node, bytes], str] | None = None  # names a virtual container (Rust impl)
    body_field: str = "body"
    # Element node types (JSX) whose ``@callee`` name is a component use when it is not intrinsic.
    jsx_elements: frozenset[str] = frozenset()
    # Node type of a method declared outside its type, on a receiver (Go): its parent is that type.
    receiver_methods: str | None = None
    # What a module's root says of its names, kept in the file's code meta (Python: ``__all__``, aliases).
    module_meta: Callable[[Node, bytes], dict[str, Any]] | None = None
    # A file's dotted module name from its path, for languages whose modules have one (Python).
    module_name: Callable[[str], str] | None = None
    # How the scope-wide resolver settles this language's imports and names (languages sharing a
    # class, such as JavaScript/TypeScript/TSX, share one instance per resolution).
    resolver: type[Resolver] = Resolver
    # The package a file declares (Go's ``package x``, Java's ``package a.b``), from its root.
    package_of: Callable[[Node, bytes], str] | None = None
    # For ``jsx_elements``: True when an element names a host element, not a component (JSX: ``<div>``).
    host_element: Callable[[Node, bytes], bool] | None = None
    # The name a module's default export binds (``export default class X``), kept in its code meta.
    default_export: Callable[[Node, bytes], str] | None = None

    @property
    def ts_language(self) -> ts.Language:
        return tslp.get_language(self.grammar)  # type: ignore[arg-type]
