"""Resolution of code references against the whole scope: imports, calls, inheritance.

Every name is looked up the way the language does it, through the file's own import table,
enclosing scopes, the receiver of a call (``self``/``this``, a module, a class) and a class's
resolved bases; bare JS/TS specifiers first through tsconfig/jsconfig path mapping
(:mod:`extract.js_paths`). A name that no such route reaches stays unresolved and is counted on its caller;
there is no global guess by bare name. Modules outside the scope become ``external:<module>``.

Targets are small tuples: ``("mod", relpath)`` an in-scope module file, ``("pkg", dir)`` a Go
package, ``("sym", node id)`` a symbol, ``("ext", name)`` an external module, ``("builtin", name)``.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from functools import cache
from typing import Any

from extract.js_config import LANGUAGE as JS_CONFIG
from extract.js_paths import JsPathMapper
from extract.lang.python import python_module_name
from extract.languages import BY_NAME
from vault_kg.core.adapter import Resolution
from vault_kg.core.model import CALLS, CLASS, EXTERNAL, IMPORTS, LOCATOR_SEP, Extraction, Ref, edge, external_id, file_id

Target = tuple[str, str]
_DOTTED = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*$")
_SPLIT = re.compile(r"\.|::")
_CONSTRUCTED = re.compile(r"^(?:new\s+)?([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)\s*\(.*\)$", re.DOTALL)
_JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_MAX_DEPTH = 12


@cache
def _ancestors(locator: str | None) -> tuple[str, ...]:
    """The locator and its enclosing symbols' locators, innermost first (file excluded)."""
    if not locator:
        return ()
    parts = locator.split(LOCATOR_SEP)
    return tuple(LOCATOR_SEP.join(parts[:k]) for k in range(len(parts), 1, -1))


def _external_name(language: str, module: str) -> str:
    if language == "python":
        return module.split(".")[0] or module
    if language in ("javascript", "typescript", "tsx"):
        module = module.removeprefix("node:")
        parts = module.split("/")
        return "/".join(parts[:2]) if module.startswith("@") else parts[0]
    if language == "rust":
        return module.split("::")[0]
    return module


class _Scope:
    """Indexes over all extractions of a scope, with memoized lookups."""

    def __init__(self, extractions: dict[str, Extraction]) -> None:
        self.extractions = extractions
        self.code: dict[str, dict[str, Any]] = {rel: ex.hot("code", {}) for rel, ex in extractions.items()}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.children: dict[str, dict[str, str]] = {}
        for rel in sorted(extractions):
            self.nodes.update(extractions[rel].nodes)
            self.children.update(self.code[rel].get("children", {}))
        self.language = {rel: c.get("language", "") for rel, c in self.code.items()}
        self._index_python()
        self._index_js()
        self._index_go()
        self._index_rust()
        self._index_java()
        self._binding_memo: dict[tuple[str, int], Target | None] = {}
        self._member_memo: dict[tuple[Target, str], Target | None] = {}
        self._bindings_memo: dict[str, dict[str | None, dict[str, int]]] = {}
        self._bases_memo: dict[str, list[Target]] = {}
        self._active: set[Any] = set()
        self._exports_memo: dict[str, dict[str, Target]] = {}
        self._name_memo: dict[tuple[str, str | None, str], Target | None] = {}
        self._stars_memo: dict[str, list[dict[str, Any]]] = {}
        self._exports_active: set[str] = set()
        self.base_refs: dict[str, list[tuple[str, Ref]]] = defaultdict(list)
        for rel, ex in extractions.items():
            for ref in ex.refs:
                if ref.relation in ("inherits", "implements"):
                    self.base_refs[ref.source].append((rel, ref))
        self.type_methods: dict[str, dict[str, str]] = defaultdict(dict)
        self.virtual_type: dict[str, str] = {}
        self.extra_bases: dict[str, list[Target]] = defaultdict(list)
        self.impl_edges: list[dict[str, Any]] = []
        self._index_impls()

    # ------------------------------------------------------------ indexes

    def _files(self, *languages: str) -> list[str]:
        return sorted(rel for rel, lang in self.language.items() if lang in languages)

    def _index_python(self) -> None:
        files = self._files("python")
        self.py_files = set(files)
        package_dirs = {posixpath.dirname(rel) for rel in files if posixpath.basename(rel).startswith("__init__.")}
        self.py_mod: dict[str, str] = {}
        for rel in files:
            self.py_mod.setdefault(python_module_name(rel), rel)
            self.py_mod.setdefault(_package_chain_name(rel, package_dirs), rel)
        self.py_tops = {name.split(".")[0] for name in self.py_mod}

    def _py_file(self, directory: str, parts: list[str]) -> str | None:
        base = posixpath.join(directory, *parts) if parts else directory
        for candidate in (base + ".py", base + "/__init__.py", base + ".pyi", base + "/__init__.pyi"):
            candidate = candidate.lstrip("/")
            if candidate in self.py_files:
                return candidate
        return None

    def _index_js(self) -> None:
        self.js_files = set(self._files("javascript", "typescript", "tsx"))
        self.js_paths = JsPathMapper({rel: self.code[rel].get("js_config", {}) for rel in self._files(JS_CONFIG)})

    def _js_file(self, rel: str, module: str) -> str | None:
        return self._js_lookup(posixpath.normpath(posixpath.join(posixpath.dirname(rel), module)))

    def _js_bare(self, rel: str, module: str) -> Target | None:
        """A bare specifier: a file through tsconfig/jsconfig path mapping, else an external package."""
        candidates, claimed = self.js_paths.candidates(rel, module)
        for base in candidates:
            found = self._js_lookup(base)
            if found:
                return ("mod", found)
        return None if claimed else ("ext", _external_name(self.language[rel], module))

    def _js_lookup(self, base: str) -> str | None:
        """The file a scope-relative import path names: itself, with an extension, or its index file."""
        stems = [base]
        for ext in (".js", ".jsx", ".mjs", ".cjs"):
            if base.endswith(ext):
                stems.append(base[: -len(ext)])
        for stem in stems:
            if stem in self.js_files:
                return stem
            for ext in _JS_EXTS:
                if stem + ext in self.js_files:
                    return stem + ext
            for ext in _JS_EXTS:
                if f"{stem}/index{ext}" in self.js_files:
                    return f"{stem}/index{ext}"
        return None

    def _index_go(self) -> None:
        self.go_modules: list[tuple[str, str]] = []
        for rel, code in sorted(self.code.items()):
            if code.get("go_module"):
                self.go_modules.append((posixpath.dirname(rel), code["go_module"]))
        self.go_modules.sort(key=lambda m: -len(m[1]))
        self.go_pkg_files: dict[str, list[str]] = defaultdict(list)
        self.go_pkg_tops: dict[str, dict[str, str]] = defaultdict(dict)
        self.go_pkg_name: dict[str, str] = {}
        for rel in self._files("go"):
            directory = posixpath.dirname(rel)
            if self.code[rel].get("package", "").endswith("_test"):
                continue
            self.go_pkg_files[directory].append(rel)
            self.go_pkg_name.setdefault(directory, self.code[rel].get("package", ""))
            for name, loc in self.code[rel].get("tops", {}).items():
                self.go_pkg_tops[directory].setdefault(name, loc)

    def _go_package(self, path: str) -> Target | None:
        for directory, module in self.go_modules:
            if path == module or path.startswith(module + "/"):
                pkg = posixpath.normpath(posixpath.join(directory, path[len(module) :].lstrip("/")))
                pkg = "" if pkg == "." else pkg
                return ("pkg", pkg) if pkg in self.go_pkg_files else None
        return ("ext", path)

    def _index_rust(self) -> None:
        files = self._files("rust")
        roots = {posixpath.dirname(rel) for rel in files if posixpath.basename(rel) in ("lib.rs", "main.rs")}
        self.rust_mod: dict[tuple[str, tuple[str, ...]], str] = {}
        self.rust_path: dict[str, tuple[str, tuple[str, ...]]] = {}
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
            self.rust_mod.setdefault(key, rel)
            self.rust_path[rel] = key

    def _index_java(self) -> None:
        self.java_pkg: dict[str, dict[str, str]] = defaultdict(dict)
        for rel in self._files("java"):
            package = self.code[rel].get("package", "")
            for name, loc in self.code[rel].get("tops", {}).items():
                self.java_pkg[package].setdefault(name, loc)

    def _index_impls(self) -> None:
        for rel in sorted(self.code):
            for impl in self.code[rel].get("impls", []):
                type_target = self.resolve_expr(rel, impl.get("scope"), [impl["type"]])
                if self.language[rel] == "go":
                    loc = self.go_pkg_tops.get(posixpath.dirname(rel), {}).get(impl["type"])
                    type_target = ("sym", loc) if loc else None
                if type_target is None or type_target[0] != "sym":
                    continue
                type_id = type_target[1]
                self.virtual_type[impl["locator"]] = type_id
                self.type_methods[type_id].update(self.children.get(impl["locator"], {}))
                if impl.get("trait"):
                    trait = self.resolve_expr(rel, impl.get("scope"), _SPLIT.split(impl["trait"]))
                    if trait is not None:
                        self.extra_bases[type_id].append(trait)
                        target = _node_of(trait)
                        if target:
                            self.impl_edges.append(edge(type_id, target, "implements", rel, impl["line"]))

    # ------------------------------------------------------------ bindings

    def bindings(self, rel: str) -> dict[str | None, dict[str, int]]:
        """Per enclosing scope (None = file level), local name -> index in the import table."""
        cached = self._bindings_memo.get(rel)
        if cached is not None:
            return cached
        table: dict[str | None, dict[str, int]] = defaultdict(dict)
        for i, spec in enumerate(self.code[rel].get("imports", [])):
            alias = spec.get("alias")
            if alias and not spec.get("star"):
                if spec.get("implicit_alias"):
                    target = self.binding(rel, i)
                    if target is not None and target[0] == "pkg":
                        alias = self.go_pkg_name.get(target[1]) or alias
                table[spec.get("scope")][alias] = i
        self._bindings_memo[rel] = table
        return table

    def binding(self, rel: str, index: int) -> Target | None:
        """What the ``index``-th import of ``rel`` binds (memoized, cycle-safe)."""
        key = (rel, index)
        if key in self._binding_memo:
            return self._binding_memo[key]
        if key in self._active:
            return None
        self._active.add(key)
        try:
            spec = self.code[rel]["imports"][index]
            result = self._bind(rel, spec)
        finally:
            self._active.discard(key)
        self._binding_memo[key] = result
        return result

    def module_of(self, rel: str, spec: dict[str, Any]) -> Target | None:
        """The module an import statement names (before picking a member of it)."""
        lang = self.language[rel]
        module = spec.get("module", "")
        if lang == "python":
            level = spec.get("level", 0)
            parts = module.split(".") if module else []
            if level:
                directory = posixpath.dirname(rel)
                for _ in range(level - 1):
                    directory = posixpath.dirname(directory)
                found = self._py_file(directory, parts)
                return ("mod", found) if found else None
            if spec.get("head"):
                found = self.py_mod.get(parts[0])
            else:
                found = self.py_mod.get(module)
            if found:
                return ("mod", found)
            return None if parts and parts[0] in self.py_tops else ("ext", _external_name(lang, module))
        if lang in ("javascript", "typescript", "tsx"):
            if module.startswith("."):
                found = self._js_file(rel, module)
                return ("mod", found) if found else None
            return self._js_bare(rel, module)
        if lang == "go":
            return self._go_package(module)
        if lang == "rust":
            return self.rust_resolve(rel, module.split("::"))
        if lang == "java":
            if module in self.java_pkg:
                return ("pkg", module)
            head, _, last = module.rpartition(".")
            if last in self.java_pkg.get(head, {}):
                return ("sym", self.java_pkg[head][last])
            return ("ext", module)
        return None

    def _bind(self, rel: str, spec: dict[str, Any]) -> Target | None:
        module = self.module_of(rel, spec)
        name = spec.get("name")
        lang = self.language[rel]
        if lang == "python" and name and spec.get("level") and module is None:
            directory = posixpath.dirname(rel)
            for _ in range(spec["level"] - 1):
                directory = posixpath.dirname(directory)
            found = self._py_file(directory, [*spec.get("module", "").split("."), name] if spec.get("module") else [name])
            return ("mod", found) if found else None
        if module is None or not name:
            return module
        if module[0] == "ext":
            return module
        return self.member(module, name)

    # ------------------------------------------------------------ members

    def member(self, target: Target | None, name: str) -> Target | None:
        """``target.name``: a module's top-level name, a class's member, a package's export."""
        if target is None:
            return None
        kind, value = target
        if kind in ("ext", "builtin"):
            return target
        key = (target, name)
        if key in self._member_memo:
            return self._member_memo[key]
        if key in self._active:
            return None
        self._active.add(key)
        try:
            result = self._member(kind, value, name)
        finally:
            self._active.discard(key)
        self._member_memo[key] = result
        return result

    def _member(self, kind: str, value: str, name: str) -> Target | None:
        if kind == "pkg":
            if value in self.java_pkg:
                loc = self.java_pkg[value].get(name)
            else:
                loc = self.go_pkg_tops.get(value, {}).get(name)
            return ("sym", loc) if loc else None
        if kind == "sym":
            return self.lookup_member(value, name)
        code = self.code.get(value, {})
        lang = self.language.get(value, "")
        loc = code.get("tops", {}).get(name)
        if loc:
            return ("sym", loc)
        if lang == "python" and posixpath.basename(value).startswith("__init__."):
            found = self._py_file(posixpath.dirname(value), [name])
            if found:
                return ("mod", found)
        if lang == "rust":
            root, path = self.rust_path.get(value, ("", ()))
            found = self.rust_mod.get((root, (*path, name)))
            if found:
                return ("mod", found)
        if lang in ("javascript", "typescript", "tsx") and name == "default" and code.get("default_export"):
            loc = code.get("tops", {}).get(code["default_export"])
            if loc:
                return ("sym", loc)
        return self._entry(self.exports(value).get(name))

    def _entry(self, entry: Target | None) -> Target | None:
        """Settle an exports-table entry: a lazy import binding or a module-level alias."""
        if entry is None or entry[0] not in ("bind", "alias"):
            return entry
        rel, rest = entry[1].split("\0")
        if entry[0] == "bind":
            return self.binding(rel, int(rest))
        key = ("alias", entry[1])
        if key in self._active:
            return None
        self._active.add(key)
        try:
            return self.resolve_expr(rel, None, rest.split("."))
        finally:
            self._active.discard(key)

    def exports(self, rel: str) -> dict[str, Target]:
        """Names a module offers to ``import``/``use`` (its defs, re-exported imports, star imports).

        An imported name is stored as ``("bind", "<file>\\0<index>")`` and resolved on first use,
        so building the table never recurses through bindings; star imports recurse once per module.
        """
        cached = self._exports_memo.get(rel)
        if cached is not None:
            return cached
        if rel in self._exports_active:
            return {}
        self._exports_active.add(rel)
        code = self.code.get(rel, {})
        lang = self.language.get(rel, "")
        table: dict[str, Target] = {}
        for i, spec in enumerate(code.get("imports", [])):
            if spec.get("scope") is not None:
                continue
            if lang in ("javascript", "typescript", "tsx") and not spec.get("reexport"):
                continue
            if spec.get("star"):
                module = self.module_of(rel, spec)
                if module is not None and module[0] == "mod":
                    for name, target in self._star_names(module[1]).items():
                        table.setdefault(name, target)
                elif module is not None and module[0] == "pkg":
                    for name, loc in (self.java_pkg.get(module[1]) or self.go_pkg_tops.get(module[1], {})).items():
                        table.setdefault(name, ("sym", loc))
            elif spec.get("alias"):
                table[spec["alias"]] = ("bind", f"{rel}\0{i}")
        for name, expr in code.get("aliases", {}).items():
            table[name] = ("alias", f"{rel}\0{expr}")
        for name, loc in code.get("tops", {}).items():
            table[name] = ("sym", loc)
        self._exports_active.discard(rel)
        self._exports_memo[rel] = table
        return table

    def _star_names(self, rel: str) -> dict[str, Target]:
        table = self.exports(rel)
        public = self.code.get(rel, {}).get("all")
        if public is not None:
            wanted = set(public)
            return {k: v for k, v in table.items() if k in wanted}
        if self.language.get(rel) == "python":
            return {k: v for k, v in table.items() if not k.startswith("_")}
        return table

    def lookup_member(self, class_id: str | None, name: str, depth: int = 0) -> Target | None:
        """A member of a class (or Rust/Go type, or inline module), then of its bases in order."""
        if class_id is None or depth > _MAX_DEPTH:
            return None
        loc = self.children.get(class_id, {}).get(name) or self.type_methods.get(class_id, {}).get(name)
        if loc:
            return ("sym", loc)
        for base in self.bases(class_id):
            if base[0] == "ext":
                return base
            if base[0] == "sym":
                found = self.lookup_member(base[1], name, depth + 1)
                if found is not None:
                    return found
        return None

    def bases(self, class_id: str) -> list[Target]:
        cached = self._bases_memo.get(class_id)
        if cached is not None:
            return cached
        self._bases_memo[class_id] = []
        out: list[Target] = []
        for rel, ref in self.base_refs.get(class_id, []):
            target = self.resolve_expr(rel, ref.attrs.get("scope"), _SPLIT.split(ref.target)) if _DOTTED.match(ref.target) else None
            if target is not None and target != ("sym", class_id):
                out.append(target)
        out.extend(self.extra_bases.get(class_id, []))
        self._bases_memo[class_id] = out
        return out

    # ------------------------------------------------------------ names

    def resolve_name(self, rel: str, scope: str | None, name: str) -> Target | None:
        """A bare name as seen from ``scope`` in ``rel``: local imports, enclosing defs, file, package."""
        key = (rel, scope, name)
        if key in self._name_memo:
            return self._name_memo[key]
        result = self._resolve_name(rel, scope, name)
        self._name_memo[key] = result
        return result

    def _resolve_name(self, rel: str, scope: str | None, name: str) -> Target | None:
        table = self.bindings(rel)
        code = self.code[rel]
        lang = self.language[rel]
        for ancestor in _ancestors(scope):
            if ancestor in table and name in table[ancestor]:
                return self.binding(rel, table[ancestor][name])
            node = self.nodes.get(ancestor)
            if node is not None and node.get("kind") != CLASS:
                loc = self.children.get(ancestor, {}).get(name)
                if loc:
                    return ("sym", loc)
        loc = code.get("tops", {}).get(name)
        if loc:
            return ("sym", loc)
        if name in table.get(None, {}):
            return self.binding(rel, table[None][name])
        if lang == "go":
            loc = self.go_pkg_tops.get(posixpath.dirname(rel), {}).get(name)
            if loc:
                return ("sym", loc)
        if lang == "java":
            loc = self.java_pkg.get(code.get("package", ""), {}).get(name)
            if loc:
                return ("sym", loc)
        if lang == "rust":
            root, path = self.rust_path.get(rel, ("", ()))
            found = self.rust_mod.get((root, (*path, name)))
            if found:
                return ("mod", found)
        for spec in self.star_specs(rel):
            if spec.get("scope") in _ancestors(scope):
                module = self.module_of(rel, spec)
                found = self.member(module, name) if module is not None and module[0] in ("mod", "pkg") else None
                if found is not None:
                    return found
        entry = self.exports(rel).get(name)
        if entry is not None and entry[0] != "bind":
            return self._entry(entry)
        if name in BY_NAME[lang].builtins:
            return ("builtin", name)
        return None

    def resolve_expr(self, rel: str, scope: str | None, parts: list[str]) -> Target | None:
        """A dotted (``a.b.C``) or path (``a::b::C``) expression, head through names, rest through members."""
        if not parts or not parts[0]:
            return None
        lang = self.language.get(rel, "")
        if lang == "rust" and parts[0] in ("crate", "self", "super"):
            return self.rust_resolve(rel, parts)
        head = self.resolve_name(rel, scope, parts[0])
        if head is None and lang == "rust":
            head = ("ext", parts[0])
        for part in parts[1:]:
            head = self.member(head, part)
        return head

    def rust_resolve(self, rel: str, parts: list[str]) -> Target | None:
        """A Rust path from a ``use`` or an expression: ``crate::``, ``self::``, ``super::`` or a name."""
        if rel not in self.rust_path or not parts:
            return None
        root, path = self.rust_path[rel]
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
            head = self.resolve_name(rel, None, first) if first != parts[-1] or len(parts) > 1 else None
            if head is None:
                found = self.rust_mod.get((root, (*path, first))) or self.rust_mod.get((root, (first,)))
                head = ("mod", found) if found else ("ext", first)
            for part in rest:
                head = self.member(head, part)
            return head
        target: Target | None = None
        module = self.rust_mod.get((root, current))
        target = ("mod", module) if module else None
        for part in rest:
            deeper = self.rust_mod.get((root, (*current, part)))
            if deeper and target is not None and target[0] == "mod":
                current = (*current, part)
                target = ("mod", deeper)
            else:
                target = self.member(target, part)
        return target

    def star_specs(self, rel: str) -> list[dict[str, Any]]:
        """The star imports of a file scoped inside a def (file-level ones are in its exports)."""
        cached = self._stars_memo.get(rel)
        if cached is None:
            cached = [s for s in self.code[rel].get("imports", []) if s.get("star") and s.get("scope") is not None]
            self._stars_memo[rel] = cached
        return cached

    def package_files(self, package: str) -> list[str]:
        """Files of a Go package folder or a Java package."""
        if package in self.go_pkg_files:
            return self.go_pkg_files[package]
        return sorted({loc.split(LOCATOR_SEP, 1)[0] for loc in self.java_pkg.get(package, {}).values()})

    def class_id(self, locator: str | None) -> str | None:
        if not locator:
            return None
        if locator in self.nodes:
            return locator
        return self.virtual_type.get(locator)


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


def _node_of(target: Target | None) -> str | None:
    if target is None:
        return None
    kind, value = target
    if kind == "sym":
        return value
    if kind == "mod":
        return file_id(value)
    if kind == "ext":
        return external_id(value)
    return None


def _call_display(ref: Ref) -> str:
    recv = ref.attrs.get("recv")
    name = ref.attrs.get("name") or ref.target
    return f"{recv}.{name}" if recv else name


def _resolve_call(scope: _Scope, rel: str, ref: Ref) -> Target | None:
    attrs = ref.attrs
    name = attrs.get("name")
    if not name:
        return None
    lang = BY_NAME[scope.language[rel]]
    caller = ref.source if ref.source != file_id(rel) else None
    recv = attrs.get("recv")
    cls = scope.class_id(attrs.get("cls"))
    if recv is None:
        if lang.bare_calls_see_members and cls and not attrs.get("new"):
            found = scope.lookup_member(cls, name)
            if found is not None:
                return found
        return scope.resolve_name(rel, caller, name)
    if recv in lang.self_names or (attrs.get("self") and recv == attrs["self"]):
        return scope.lookup_member(cls, name) if cls else None
    if recv in lang.super_receivers or recv.startswith("super("):
        for base in scope.bases(cls) if cls else []:
            found = scope.lookup_member(base[1], name) if base[0] == "sym" else base
            if found is not None:
                return found
        return None
    constructed = _CONSTRUCTED.match(recv)
    if constructed:  # Engine().run() / new Engine().run(): a member of the class it constructs
        made = scope.resolve_expr(rel, caller, _SPLIT.split(constructed.group(1)))
        if made is not None and made[0] == "sym" and scope.nodes.get(made[1], {}).get("kind") == CLASS:
            return scope.lookup_member(made[1], name)
        return None
    if not _DOTTED.match(recv):
        return None
    head = scope.resolve_expr(rel, caller, _SPLIT.split(recv))
    if head is None or head[0] == "builtin":
        return head
    return scope.member(head, name)


class _Collector:
    """The edges and per-node notes of one resolution, collected ref by ref."""

    def __init__(self, scope: _Scope) -> None:
        self.scope = scope
        self.resolution = Resolution()
        self.edges: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.externals: dict[str, set[str]] = defaultdict(set)
        self.unresolved: dict[str, list[str]] = defaultdict(list)
        self.unresolved_imports: dict[str, set[str]] = defaultdict(set)
        self.builtin_calls: dict[str, int] = defaultdict(int)
        self.call_memo: dict[tuple[Any, ...], Target | None] = {}

    def add(self, source: str, target: str, relation: str, owner: str, line: int | None, **extra: Any) -> None:
        key = (source, target, relation)
        existing = self.edges.get(key)
        if existing is None:
            self.edges[key] = edge(source, target, relation, owner, line, count=1, **extra)
        else:
            existing["count"] += 1
        if target.startswith("external:"):
            self.externals[target].add(owner)

    def import_ref(self, rel: str, ref: Ref) -> None:
        scope, fid = self.scope, file_id(rel)
        specs = scope.code[rel].get("imports", [])
        index = ref.attrs.get("spec", 0)
        spec = specs[index] if index < len(specs) else {}
        target = scope.module_of(rel, spec) if spec.get("star") else scope.binding(rel, index)
        if target is None and not spec.get("star"):
            target = scope.module_of(rel, spec)
        if target is not None and target[0] == "pkg":
            for member_file in scope.package_files(target[1]):
                self.add(fid, file_id(member_file), IMPORTS, rel, ref.line)
            return
        node = _node_of(target)
        if node is None:
            shown = "." * spec.get("level", 0) + spec.get("module", ref.target)
            self.unresolved_imports[fid].add(shown + (f" ({spec['name']})" if spec.get("name") else ""))
            return
        if node != fid:
            self.add(fid, node, IMPORTS, rel, ref.line)

    def call_ref(self, rel: str, ref: Ref) -> None:
        attrs = ref.attrs
        call_key = (rel, ref.source, attrs.get("recv"), attrs.get("name"), attrs.get("cls"), attrs.get("self"), attrs.get("new"))
        if call_key in self.call_memo:
            target = self.call_memo[call_key]
        else:
            target = self.call_memo[call_key] = _resolve_call(self.scope, rel, ref)
        if target is not None and target[0] == "builtin":
            self.builtin_calls[ref.source] += 1
            return
        node = _node_of(target) if target is None or target[0] != "mod" else None
        if node is None:
            self.unresolved[ref.source].append(_call_display(ref))
            return
        self.add(ref.source, node, CALLS, rel, ref.line, **({"decorator": True} if ref.attrs.get("decorator") else {}))

    def base_ref(self, rel: str, ref: Ref) -> None:
        target = None
        if _DOTTED.match(ref.target):
            target = self.scope.resolve_expr(rel, ref.attrs.get("scope"), _SPLIT.split(ref.target))
        node = _node_of(target) if target is not None and target[0] in ("sym", "ext") else None
        if node is None or node == ref.source:
            self.resolution.nodes.setdefault(ref.source, {}).setdefault("unresolved_bases", []).append(ref.target)
            return
        self.add(ref.source, node, ref.relation, rel, ref.line)

    def finish(self) -> Resolution:
        """The resolution: derived nodes carry what stayed unresolved, externals list their owners."""
        resolution, nodes = self.resolution, self.resolution.nodes
        for caller, names in self.unresolved.items():
            if names:
                attrs = nodes.setdefault(caller, {})
                attrs["unresolved_calls"] = len(names)
                attrs["unresolved_call_names"] = sorted(set(names))
        for caller, count in self.builtin_calls.items():
            nodes.setdefault(caller, {})["builtin_calls"] = count
        for config in self.scope.js_paths.configs:
            missing = self.scope.js_paths.missing_extends(config)
            if missing:
                nodes.setdefault(file_id(config), {})["unresolved_extends"] = missing
        for fid, names in self.unresolved_imports.items():
            nodes.setdefault(fid, {})["unresolved_imports"] = sorted(names)
        for attrs in nodes.values():
            if "unresolved_bases" in attrs:
                attrs["unresolved_bases"] = sorted(set(attrs["unresolved_bases"]))
        for ext_id, owners in self.externals.items():
            name = ext_id.removeprefix("external:")
            nodes[ext_id] = {"kind": EXTERNAL, "label": name, "source": min(owners), "sources": sorted(owners)}
        resolution.nodes = dict(sorted(nodes.items()))
        resolution.edges = [self.edges[key] for key in sorted(self.edges)]
        return resolution


def resolve(extractions: dict[str, Extraction]) -> Resolution:
    """Edges and derived nodes for every import, call and base of every file, in sorted order."""
    scope = _Scope(extractions)
    collect = _Collector(scope)
    for rel in sorted(extractions):
        if rel not in scope.language or not scope.language[rel] or scope.language[rel] not in BY_NAME:
            continue
        for ref in extractions[rel].refs:
            if ref.relation == IMPORTS:
                collect.import_ref(rel, ref)
            elif ref.relation == CALLS:
                collect.call_ref(rel, ref)
            elif ref.relation in ("inherits", "implements"):
                collect.base_ref(rel, ref)
    for record in scope.impl_edges:
        collect.add(record["source"], record["target"], record["relation"], record["owner"], record["line"])
    return collect.finish()
