"""Resolution of code references against the whole scope: imports, calls, inheritance.

Every name is looked up the way the language does it, through the file's own import table,
enclosing scopes, the receiver of a call (``self``/``this``, a module, a class) and a class's
resolved bases. A name that no such route reaches stays unresolved and is counted on its caller;
there is no global guess by bare name. Modules outside the scope become ``external:<module>``.

This module holds only what every language shares. What one language knows (how an import names
a module, what a package or a crate path is, which names a star import takes) is asked of its
resolver, :class:`extract.lang.base.Resolver`, kept in ``extract/lang/<language>.py``.

Targets are small tuples: ``("mod", relpath)`` an in-scope module file, ``("pkg", name)`` a Go
or Java package, ``("sym", node id)`` a symbol, ``("ext", name)`` an external module, ``("builtin", name)``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from typing import Any

from extract.lang.base import Resolver, Target
from extract.languages import BY_NAME, LANGUAGES
from vault_kg.core.adapter import Resolution
from vault_kg.core.model import CALLS, CLASS, EXTERNAL, IMPORTS, LOCATOR_SEP, Extraction, Ref, edge, external_id, file_id

_DOTTED = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*$")
_SPLIT = re.compile(r"\.|::")
_CONSTRUCTED = re.compile(r"^(?:new\s+)?([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)\s*\(.*\)$", re.DOTALL)
_MAX_DEPTH = 12


@cache
def _ancestors(locator: str | None) -> tuple[str, ...]:
    """The locator and its enclosing symbols' locators, innermost first (file excluded)."""
    if not locator:
        return ()
    parts = locator.split(LOCATOR_SEP)
    return tuple(LOCATOR_SEP.join(parts[:k]) for k in range(len(parts), 1, -1))


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
        self._index_languages()
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

    def files(self, *languages: str) -> list[str]:
        """The scope's files of these languages, sorted (what a resolver indexes)."""
        return sorted(rel for rel, lang in self.language.items() if lang in languages)

    def _index_languages(self) -> None:
        """One resolver per resolver class (a language family shares one), each indexing its files."""
        names: dict[type[Resolver], list[str]] = defaultdict(list)
        for lang in LANGUAGES:
            names[lang.resolver].append(lang.name)
        self.resolvers: list[Resolver] = []
        self._resolver_of: dict[str, Resolver] = {}
        for cls, members in names.items():
            resolver = cls()
            resolver.index(self, self.files(*members))
            self.resolvers.append(resolver)
            self._resolver_of.update(dict.fromkeys(members, resolver))
        self._no_rules = Resolver()

    def resolver(self, rel: str) -> Resolver:
        """The resolver of a file's language (one without rules for files of no language)."""
        return self._resolver_of.get(self.language.get(rel, ""), self._no_rules)

    def package_tops(self, package: str) -> dict[str, str]:
        """Top-level names of a Go or Java package met as a member's owner (the first language knowing it)."""
        for resolver in self.resolvers:
            tops = resolver.package_tops(package)
            if tops is not None:
                return tops
        return {}

    def _index_impls(self) -> None:
        for rel in sorted(self.code):
            for impl in self.code[rel].get("impls", []):
                found = self.resolve_expr(rel, impl.get("scope"), [impl["type"]])
                type_target = self.resolver(rel).impl_type(self, rel, impl, found)
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
                    alias = self.resolver(rel).implicit_alias(self.binding(rel, i), alias)
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
        return self.resolver(rel).module_of(self, rel, spec)

    def _bind(self, rel: str, spec: dict[str, Any]) -> Target | None:
        module = self.module_of(rel, spec)
        name = spec.get("name")
        if name and module is None:
            return self.resolver(rel).bind_missing(self, rel, spec)
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
            loc = self.package_tops(value).get(name)
            return ("sym", loc) if loc else None
        if kind == "sym":
            return self.lookup_member(value, name)
        loc = self.code.get(value, {}).get("tops", {}).get(name)
        if loc:
            return ("sym", loc)
        found = self.resolver(value).module_member(self, value, name)
        if found is not None:
            return found
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
        resolver = self.resolver(rel)
        table: dict[str, Target] = {}
        for i, spec in enumerate(code.get("imports", [])):
            if spec.get("scope") is not None or not resolver.exports_import(spec):
                continue
            if spec.get("star"):
                module = self.module_of(rel, spec)
                if module is not None and module[0] == "mod":
                    for name, target in self._star_names(module[1]).items():
                        table.setdefault(name, target)
                elif module is not None and module[0] == "pkg":
                    for name, loc in (resolver.package_tops(module[1]) or {}).items():
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
        if self.resolver(rel).star_hides_private:
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
        found = self.resolver(rel).name_fallback(self, rel, name)
        if found is not None:
            return found
        for spec in self.star_specs(rel):
            if spec.get("scope") in _ancestors(scope):
                module = self.module_of(rel, spec)
                found = self.member(module, name) if module is not None and module[0] in ("mod", "pkg") else None
                if found is not None:
                    return found
        entry = self.exports(rel).get(name)
        if entry is not None and entry[0] != "bind":
            return self._entry(entry)
        if name in BY_NAME[self.language[rel]].builtins:
            return ("builtin", name)
        return None

    def resolve_expr(self, rel: str, scope: str | None, parts: list[str]) -> Target | None:
        """A dotted (``a.b.C``) or path (``a::b::C``) expression, head through names, rest through members."""
        if not parts or not parts[0]:
            return None
        resolver = self.resolver(rel)
        if parts[0] in resolver.path_roots:
            return resolver.resolve_path(self, rel, parts)
        head = self.resolve_name(rel, scope, parts[0])
        if head is None:
            head = resolver.unknown_head(parts[0])
        for part in parts[1:]:
            head = self.member(head, part)
        return head

    def star_specs(self, rel: str) -> list[dict[str, Any]]:
        """The star imports of a file scoped inside a def (file-level ones are in its exports)."""
        cached = self._stars_memo.get(rel)
        if cached is None:
            cached = [s for s in self.code[rel].get("imports", []) if s.get("star") and s.get("scope") is not None]
            self._stars_memo[rel] = cached
        return cached

    def package_files(self, rel: str, package: str) -> list[str]:
        """Files of the package an import of ``rel`` names (a Go folder, a Java package)."""
        return self.resolver(rel).package_files(package) or []

    def class_id(self, locator: str | None) -> str | None:
        if not locator:
            return None
        if locator in self.nodes:
            return locator
        return self.virtual_type.get(locator)


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
            for member_file in scope.package_files(rel, target[1]):
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
        for resolver in self.scope.resolvers:
            for node_id, notes in resolver.notes().items():
                nodes.setdefault(node_id, {}).update(notes)
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
