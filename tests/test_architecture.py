"""The layers hold: every import in the packages, read from the source (AST), points one way.

    faces (vault_kg/cli.py, vault_kg/entry.py, vault_kg/commands/, vault_kg/mcp.py, hooks/)
      -> the library (vault_kg: engine, query, anchors, ...)
        -> extract, episodic, graph_out
          -> vault_kg.core (imports nothing of the project outside itself)

Imports inside functions count, and so does `importlib.import_module("...")` with a literal name;
a dynamic import whose name is not a literal is refused in the library, because nobody can see
where it points (the engine's passes and the CLI's commands are imported objects, not strings).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("vault_kg", "extract", "episodic", "graph_out", "hooks")
FACES = ("vault_kg.cli", "vault_kg.entry", "vault_kg.commands", "vault_kg.mcp", "hooks")
CORE = "vault_kg.core"
LOWER = ("extract", "episodic", "graph_out")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_face(name: str) -> bool:
    return any(_within(name, face) for face in FACES)


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


def _violations(rule) -> list[str]:
    found = []
    for path in _sources():
        module = _module_name(path)
        imports, _ = imports_of(path)
        for line, name in imports:
            if _project(name) and rule(module, name):
                found.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {name}")
    return found


def test_the_core_imports_only_itself() -> None:
    assert _violations(lambda mod, name: _within(mod, CORE) and not _within(name, CORE)) == []


def test_extract_episodic_graph_out_use_only_the_core_of_vault_kg() -> None:
    def rule(mod: str, name: str) -> bool:
        if not any(_within(mod, low) for low in LOWER):
            return False
        return (_within(name, "vault_kg") and not _within(name, CORE)) or _within(name, "hooks")

    assert _violations(rule) == []


def test_the_library_never_imports_a_face() -> None:
    assert _violations(lambda mod, name: not _is_face(mod) and _is_face(name)) == []


def test_no_hidden_import_in_the_library() -> None:
    """A dynamic import with a computed name is a tie nobody sees; faces may still use one."""
    hidden = []
    for path in _sources():
        if not _is_face(_module_name(path)):
            hidden.extend(f"{path.relative_to(ROOT)}:{line}" for line in imports_of(path)[1])
    assert hidden == []


@pytest.mark.parametrize("source, expected", [
    ("from vault_kg.engine import run\n", "vault_kg.engine"),
    ("def f():\n    from vault_kg import engine\n", "vault_kg.engine"),
    ("import importlib\nimportlib.import_module('vault_kg.engine')\n", "vault_kg.engine"),
])
def test_the_reader_sees_every_kind_of_import(tmp_path: Path, source: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules above are only as good as the reader: top-level, function-level and importlib imports all count."""
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    path = tmp_path / "extract" / "probe.py"
    path.parent.mkdir()
    path.write_text(source, encoding="utf-8")
    assert any(_within(name, expected) for _, name in imports_of(path)[0])


def test_relative_imports_resolve_against_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    path = tmp_path / "vault_kg" / "commands" / "probe.py"
    path.parent.mkdir(parents=True)
    path.write_text("from ..core.errors import KgError\nfrom .. import engine\nfrom . import view\n", encoding="utf-8")
    assert [name for _, name in imports_of(path)[0]] == ["vault_kg.core.errors.KgError", "vault_kg.engine", "vault_kg.commands.view"]
