"""Python: its table entry (query, imports, bases, builtins), its module names and how imports resolve."""

from __future__ import annotations

import posixpath
from typing import Any

from .base import ImportSpec, Language, Node, Resolver, Target, base_name, text

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
_PY_QUERY = """
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(call function: (_) @callee) @call
(import_statement) @import
(import_from_statement) @import
(comment) @comment
(block) @block
"""


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


def _python_all(root: Node, src: bytes) -> list[str] | None:
    """The literal ``__all__`` of a Python module (what ``from m import *`` takes), if any."""
    names: list[str] | None = None
    for child in root.named_children:
        stmt = child.named_children[0] if child.type == "expression_statement" and child.named_children else child
        if stmt.type not in ("assignment", "augmented_assignment"):
            continue
        if text(stmt.child_by_field_name("left"), src) != "__all__":
            continue
        right = stmt.child_by_field_name("right")
        if right is None or right.type not in ("list", "tuple"):
            continue
        found = [text(s, src).strip("'\"") for s in right.named_children if s.type == "string"]
        names = (names or []) + found if stmt.type == "augmented_assignment" else found
    return names


def _python_aliases(root: Node, src: bytes) -> dict[str, str]:
    """Module-level ``name = other.name`` assignments: names that are another symbol."""
    aliases: dict[str, str] = {}
    for child in root.named_children:
        stmt = child.named_children[0] if child.type == "expression_statement" and child.named_children else child
        if stmt.type != "assignment":
            continue
        left, right = stmt.child_by_field_name("left"), stmt.child_by_field_name("right")
        if left is not None and right is not None and left.type == "identifier" and right.type in ("identifier", "attribute"):
            aliases[text(left, src)] = text(right, src)
    return aliases


def _module_meta(root: Node, src: bytes) -> dict[str, Any]:
    """What a Python module says of its names: its literal ``__all__`` and its module-level aliases."""
    meta: dict[str, Any] = {}
    exported = _python_all(root, src)
    if exported is not None:
        meta["all"] = exported
    aliases = _python_aliases(root, src)
    if aliases:
        meta["aliases"] = aliases
    return meta


def _package_chain_name(relpath: str, package_dirs: set[str]) -> str:
    """Dotted name by Python's rule: walk up while the folder is a package (has ``__init__``)."""
    stem = relpath.rsplit(".", 1)[0]
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    directory = posixpath.dirname(relpath)
    depth = 0
    while directory and directory in package_dirs:
        depth += 1
        directory = posixpath.dirname(directory)
    keep = depth + (0 if posixpath.basename(relpath).startswith("__init__.") else 1)
    return ".".join(parts[-keep:]) if keep else ""


def _up(rel: str, level: int) -> str:
    """The folder a relative import of ``level`` dots starts from."""
    directory = posixpath.dirname(rel)
    for _ in range(level - 1):
        directory = posixpath.dirname(directory)
    return directory


class PythonResolver(Resolver):
    """Modules by dotted name (``src/`` layout and package chains), relative imports by folder."""

    star_hides_private = True

    def index(self, scope: Any, files: list[str]) -> None:
        self.files = set(files)
        package_dirs = {posixpath.dirname(rel) for rel in files if posixpath.basename(rel).startswith("__init__.")}
        self.modules: dict[str, str] = {}
        for rel in files:
            self.modules.setdefault(python_module_name(rel), rel)
            self.modules.setdefault(_package_chain_name(rel, package_dirs), rel)
        self.tops = {name.split(".")[0] for name in self.modules}

    def _file(self, directory: str, parts: list[str]) -> str | None:
        base = posixpath.join(directory, *parts) if parts else directory
        for candidate in (base + ".py", base + "/__init__.py", base + ".pyi", base + "/__init__.pyi"):
            candidate = candidate.lstrip("/")
            if candidate in self.files:
                return candidate
        return None

    def module_of(self, scope: Any, rel: str, spec: ImportSpec) -> Target | None:
        module = spec.get("module", "")
        level = spec.get("level", 0)
        parts = module.split(".") if module else []
        if level:
            found = self._file(_up(rel, level), parts)
            return ("mod", found) if found else None
        found = self.modules.get(parts[0]) if spec.get("head") else self.modules.get(module)
        if found:
            return ("mod", found)
        return None if parts and parts[0] in self.tops else ("ext", module.split(".")[0] or module)

    def bind_missing(self, scope: Any, rel: str, spec: ImportSpec) -> Target | None:
        """``from . import name``: ``name`` may be a submodule of a folder that is no module itself."""
        if not spec.get("level"):
            return None
        name = spec["name"]
        found = self._file(_up(rel, spec["level"]), [*spec.get("module", "").split("."), name] if spec.get("module") else [name])
        return ("mod", found) if found else None

    def module_member(self, scope: Any, rel: str, name: str) -> Target | None:
        if posixpath.basename(rel).startswith("__init__."):
            found = self._file(posixpath.dirname(rel), [name])
            if found:
                return ("mod", found)
        return None


LANGUAGE = Language(
    name="python",
    grammar="python",
    extensions=(".py", ".pyi"),
    query=_PY_QUERY,
    import_parser=_py_imports,
    bases=_py_bases,
    wrappers=("decorated_definition",),
    member_calls={"attribute": ("object", "attribute")},
    docstring="body",
    self_names=("self", "cls"),
    super_receivers=("super()",),
    builtins=_PY_BUILTINS,
    module_meta=_module_meta,
    module_name=python_module_name,
    resolver=PythonResolver,
)
