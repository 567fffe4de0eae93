"""The layers hold: every import in the packages, read from the source (AST), points down.

From the top (see docs/architecture.md, "The layers"):

    faces           vault_kg.cli, vault_kg.mcp, vault_kg.watch, hooks
    front door      vault_kg.api
    services        vault_kg.health  >  vault_kg.notes  >  vault_kg.memory  >  vault_kg.query
    jobs            vault_kg.jobs
    update route    vault_kg.update
    anchors         vault_kg.anchors
    storage         vault_kg.storage
    lower packages  extract, episodic, graph_out
    core            vault_kg.core (and the package's own `__init__`: the version)

A module may import its own room, and any room below it; faces may also call one another (`kg
hook` runs hooks.dispatch), and the lower packages may use one another. Imports inside functions
count, and so does `importlib.import_module("...")` with a literal name; a dynamic import whose
name is not a literal is refused outside the faces, because nobody can see where it points. No
two modules import each other, however far round the loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("vault_kg", "extract", "episodic", "graph_out", "hooks")
LAYERS: tuple[tuple[str, ...], ...] = (
    ("vault_kg.cli", "vault_kg.mcp", "vault_kg.watch", "hooks"),
    ("vault_kg.api",),
    ("vault_kg.health",),
    ("vault_kg.notes",),
    ("vault_kg.memory",),
    ("vault_kg.query",),
    ("vault_kg.jobs",),
    ("vault_kg.update",),
    ("vault_kg.anchors",),
    ("vault_kg.storage",),
    ("extract", "episodic", "graph_out"),
    ("vault_kg.core", "vault_kg"),
)
FACES = LAYERS[0]
LOWER = LAYERS[-2]
ROOMS = tuple(room for layer in LAYERS for room in layer if room.startswith("vault_kg.") and room != "vault_kg.api")
# Imports that point up or close a loop, each one waiting for the stage of issue #31 that removes it.
KNOWN_UPWARD: set[tuple[str, str]] = set()
KNOWN_LOOPS: list[set[str]] = []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str) -> int | None:
    """The layer index of a module (0 is the top), by its longest matching room."""
    best: tuple[int, int] | None = None
    for index, layer in enumerate(LAYERS):
        for room in layer:
            if _within(name, room) and (best is None or len(room) > best[1]):
                best = (index, len(room))
    return None if best is None else best[0]


def room_of(name: str) -> str | None:
    found = [room for layer in LAYERS for room in layer if _within(name, room)]
    return max(found, key=len) if found else None


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The absolute name of each thing an ImportFrom takes (`from . import a, b`: both may be submodules)."""
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [f"{target}.{alias.name}" for alias in node.names]


def imports_of(path: Path) -> tuple[list[tuple[int, str]], list[int]]:
    """(line, imported module) for every import in the file, and the lines of dynamic imports."""
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    found: list[tuple[int, str]] = []
    dynamic: list[int] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.extend((node.lineno, name) for name in _resolve(module, is_package, node))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                arg = node.args[0] if node.args else None
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append((node.lineno, arg.value))
                else:
                    dynamic.append(node.lineno)
    return found, dynamic


def _project(name: str) -> bool:
    return any(_within(name, package) for package in PACKAGES)


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in _sources()}


def _target(name: str, modules: dict[str, Path]) -> str:
    """The module an imported name lives in (`vault_kg.update.engine.run` -> `vault_kg.update.engine`)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def edges() -> set[tuple[str, str]]:
    """Every (importer, imported module) pair between two modules of the project."""
    modules = _modules()
    found = set()
    for module, path in modules.items():
        for _, name in imports_of(path)[0]:
            if _project(name):
                target = _target(name, modules)
                if target and target != module:
                    found.add((module, target))
    return found


def _allowed(module: str, target: str) -> bool:
    here, there = layer_of(module), layer_of(target)
    if here is None or there is None:
        return False
    if there > here or room_of(module) == room_of(target):
        return True
    return here == there and LAYERS[here] in (FACES, LOWER)


def upward_imports() -> set[tuple[str, str]]:
    return {(module, target) for module, target in edges() if not _allowed(module, target)}


def loops() -> list[set[str]]:
    """The groups of modules that import each other, however far round (strongly connected)."""
    graph: dict[str, set[str]] = {}
    for module, target in edges():
        graph.setdefault(module, set()).add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found, key=sorted)


def test_every_module_stands_in_a_layer() -> None:
    assert [m for m in _modules() if layer_of(m) is None] == []


def test_the_hall_holds_only_the_front_door() -> None:
    """Every module of vault_kg lives in a room (a sub-package), but the front door and the version."""
    hall = sorted(p.name for p in (ROOT / "vault_kg").glob("*.py"))
    assert hall == ["__init__.py", "api.py"]
    assert sorted(p.name for p in (ROOT / "vault_kg").iterdir() if p.is_dir() and (p / "__init__.py").exists()) == sorted(r.split(".")[1] for r in ROOMS)


def test_room_doors_say_what_the_room_holds_and_import_nothing() -> None:
    """A package's `__init__.py` holds its docstring alone: it says what the room holds, and importing
    one module of a room never imports the rest (the hooks' fast paths stay fast)."""
    found = []
    for path in sorted(p for package in PACKAGES for p in (ROOT / package).rglob("__init__.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        docstring = bool(body) and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
        rest = body[1:] if docstring else body
        if path.parent == ROOT / "vault_kg":  # the package's own door holds the version too
            rest = [node for node in rest if not (isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__version__"])]
        if not docstring or rest:
            found.append(str(path.relative_to(ROOT)))
    assert found == []


def test_every_import_points_down() -> None:
    assert sorted(upward_imports() - KNOWN_UPWARD) == []


def face_reaches() -> set[tuple[str, str]]:
    """Imports from a face (CLI, MCP, watcher, hooks) into the library past its front door (`vault_kg.api`;
    the core's vocabulary and the other faces are open to every face)."""
    return {(module, target) for module, target in edges() if layer_of(module) == 0 and layer_of(target) not in (0, 1) and not _within(target, "vault_kg.core") and target != "vault_kg"}


# Still reached directly, each waiting for its verb at the front door (issue #31, item 3): the
# CLI's feature commands and the MCP server's note tools and view cache.
KNOWN_FACE_REACHES: set[tuple[str, str]] = {
    ("hooks.dispatch", "vault_kg.jobs.reconcile"),  # the reconcile job runs in a hook process, to fail open like one
    ("vault_kg.cli.commands.journal", "episodic.dates"),
    ("vault_kg.cli.commands.journal", "episodic.recall"),
    ("vault_kg.cli.commands.llm", "extract.llm"),
    ("vault_kg.cli.commands.llm", "vault_kg.jobs.model_worker"),
    ("vault_kg.cli.commands.vaultops", "vault_kg.notes.consolidate"),
    ("vault_kg.cli.commands.vaultops", "vault_kg.notes.gitops"),
    ("vault_kg.cli.commands.vaultops", "vault_kg.notes.journal_merge"),
    ("vault_kg.cli.commands.vaultops", "vault_kg.notes.promote"),
    ("vault_kg.cli.commands.vaultops", "vault_kg.notes.sync"),
    ("vault_kg.cli.commands.view", "graph_out.export"),
    ("vault_kg.cli.commands.view", "vault_kg.update.html_page"),
    ("vault_kg.mcp.server", "vault_kg.notes.notebook"),
    ("vault_kg.mcp.server", "vault_kg.query.graph_view"),
    ("vault_kg.mcp.server", "vault_kg.query.shared_reads"),
    ("vault_kg.mcp.server", "vault_kg.query.verbs"),
    ("vault_kg.mcp.server", "vault_kg.storage.layout"),
    ("vault_kg.watch.watcher", "vault_kg.storage.layout"),
}


def test_faces_go_through_the_front_door() -> None:
    """The hooks, the MCP server, the watcher and the CLI call `vault_kg.api`; a new direct reach fails here."""
    assert sorted(face_reaches() - KNOWN_FACE_REACHES) == []
    assert sorted(KNOWN_FACE_REACHES - face_reaches()) == [], "a reach was removed: take it off the list"


def test_no_loop_of_imports() -> None:
    assert [sorted(group) for group in loops() if group not in KNOWN_LOOPS] == []


def private_reaches() -> list[str]:
    """Every place a module takes a private name (`_name`) from another module of the project: by
    `from module import _name`, or as `module._name` through a module it imported."""
    modules = _modules()
    found = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias, target in zip(node.names, _resolve(module, path.name == "__init__.py", node)):
                    source = target.rpartition(".")[0]
                    if not _project(target):
                        continue
                    if target in modules:
                        aliases[alias.asname or alias.name] = target
                    elif alias.name.startswith("_") and not alias.name.startswith("__") and _target(source, modules) != module:
                        found.append(f"{module}:{node.lineno} takes {alias.name} from {source}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in modules:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                if node.attr.startswith("_") and not node.attr.startswith("__") and aliases[node.value.id] != module:
                    found.append(f"{module}:{node.lineno} takes {node.attr} from {aliases[node.value.id]}")
    return sorted(found)


def test_no_module_reaches_into_another_modules_privates() -> None:
    """A name with a leading underscore is its module's own business: the patches call named stage functions."""
    assert private_reaches() == []


def sql_outside_storage() -> list[str]:
    """Every place outside `vault_kg.storage` that imports sqlite3 or runs a statement (`.execute`)."""
    found = []
    for module, path in _modules().items():
        if _within(module, "vault_kg.storage"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import) and any(alias.name == "sqlite3" for alias in node.names):
                found.append(f"{module}:{node.lineno} imports sqlite3")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("execute", "executemany", "executescript"):
                found.append(f"{module}:{node.lineno} runs SQL")
    return found


def test_only_storage_speaks_sql() -> None:
    """The cache's tables are storage's business: every other room asks it by name."""
    assert sql_outside_storage() == []


def test_the_core_imports_only_itself() -> None:
    core = [(m, t) for m, t in edges() if _within(m, "vault_kg.core") and not _within(t, "vault_kg.core")]
    assert core == []


def test_extract_episodic_graph_out_use_only_the_core_of_vault_kg() -> None:
    low = [(m, t) for m, t in edges() if any(_within(m, p) for p in LOWER) and (_within(t, "hooks") or (_within(t, "vault_kg") and not _within(t, "vault_kg.core") and t != "vault_kg"))]
    assert low == []


def test_no_hidden_import_in_the_library() -> None:
    """A dynamic import with a computed name is a tie nobody sees; faces may still use one."""
    hidden = []
    for path in _sources():
        if layer_of(_module_name(path)) != 0:
            hidden.extend(f"{path.relative_to(ROOT)}:{line}" for line in imports_of(path)[1])
    assert hidden == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from vault_kg.update.engine import run\n", "vault_kg.update.engine"),
        ("def f():\n    from vault_kg.update import engine\n", "vault_kg.update.engine"),
        ("import importlib\nimportlib.import_module('vault_kg.update.engine')\n", "vault_kg.update.engine"),
    ],
)
def test_the_reader_sees_every_kind_of_import(tmp_path: Path, source: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules above are only as good as the reader: top-level, function-level and importlib imports all count."""
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    path = tmp_path / "extract" / "probe.py"
    path.parent.mkdir()
    path.write_text(source, encoding="utf-8")
    assert any(_within(name, expected) for _, name in imports_of(path)[0])


def test_relative_imports_resolve_against_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    path = tmp_path / "vault_kg" / "cli" / "commands" / "probe.py"
    path.parent.mkdir(parents=True)
    path.write_text("from ...core.errors import KgError\nfrom ... import api\nfrom . import view\n", encoding="utf-8")
    assert [name for _, name in imports_of(path)[0]] == ["vault_kg.core.errors.KgError", "vault_kg.api", "vault_kg.cli.commands.view"]


@pytest.mark.parametrize(
    "importer, imported, allowed",
    [
        ("vault_kg.cli.app", "vault_kg.api", True),
        ("vault_kg.update.engine", "vault_kg.storage.cache", True),
        ("vault_kg.storage.cache", "vault_kg.update.centrality", False),  # storage below the update route
        ("vault_kg.update.engine", "vault_kg.jobs.html_render", False),  # the route never starts a job
        ("vault_kg.query.verbs", "vault_kg.memory.recall_log", False),  # query below memory
        ("vault_kg.cli.app", "hooks.dispatch", True),  # a face may call a face
        ("extract.notes", "vault_kg.anchors.spans", False),
    ],
)
def test_the_layer_rule(importer: str, imported: str, allowed: bool) -> None:
    """What the rule says of an import, one case per kind: a future upward import fails `test_every_import_points_down`."""
    assert _allowed(importer, imported) is allowed


LIBRARY = ("vault_kg.api", "vault_kg.core", "vault_kg.storage", "vault_kg.anchors", "vault_kg.update", "vault_kg.jobs", "vault_kg.query", "vault_kg.memory", "vault_kg.notes")


def missing_all() -> list[str]:
    """Library modules without an `__all__`, or naming in it what they do not define or import."""
    found = []
    for module, path in _modules().items():
        if path.name == "__init__.py" or not any(_within(module, room) for room in LIBRARY):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared = [node for node in tree.body if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__all__"]]
        if not declared:
            found.append(f"{module}: no __all__")
            continue
        bound = {getattr(t, "id", "") for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign)) for t in (node.targets if isinstance(node, ast.Assign) else [node.target])}
        bound |= {el.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Tuple) for el in t.elts if isinstance(el, ast.Name)}
        bound |= {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        bound |= {alias.asname or alias.name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
        names = ast.literal_eval(declared[0].value)
        found.extend(f"{module}: __all__ names {name}, which it does not define" for name in names if name not in bound)
    return found


def test_the_library_says_what_it_exports() -> None:
    """Every module behind the front door lists its public names (`__all__`), and only names it has."""
    assert missing_all() == []


NEUTRAL = ("extract/code.py", "extract/code_scan.py", "extract/code_resolve.py")
LANGUAGE_WORDS = ("go.mod", "tsconfig", "jsconfig", "package_clause", "package_declaration", "export_statement", "member_expression")


def language_rules_outside_lang() -> list[str]:
    """String constants in the language-neutral extractor that name one language's files or nodes."""
    found = []
    for rel in NEUTRAL:
        for node in ast.walk(ast.parse((ROOT / rel).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value:  # docstrings may name them
                found.extend(f"{rel}:{node.lineno} {word}" for word in LANGUAGE_WORDS if word in node.value)
    return found


def test_language_rules_live_in_extract_lang() -> None:
    """go.mod, tsconfig/jsconfig, package clauses, JSX and default exports belong to their language's module in extract/lang/."""
    assert language_rules_outside_lang() == []
