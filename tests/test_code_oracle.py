"""Oracle: every def/class Python's own ``ast`` finds in networkx is a node with the same name and line.

networkx is read in place from site-packages (never copied here). For decorated symbols ``ast``'s
``lineno`` is the line of ``def``/``class``, and so is the node's ``line``; the anchor span starts at
the first decorator.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import networkx
import pytest

from extract.code import extract_file
from extract.code_scan import list_sources

NX_ROOT = Path(networkx.__file__).parent.parent
SYMBOL_KINDS = ("class", "function", "method")


def _ast_symbols(data: bytes) -> collections.Counter[tuple[str, int]]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return collections.Counter((n.name, n.lineno) for n in ast.walk(ast.parse(data)) if isinstance(n, kinds))


def _files() -> list[Path]:
    return sorted((NX_ROOT / "networkx").rglob("*.py"))


def test_networkx_has_enough_code_to_mean_something() -> None:
    assert len(_files()) > 400


def test_every_ast_symbol_is_a_node_with_the_same_name_and_line() -> None:
    mismatches = []
    total = 0
    for path in _files():
        data = path.read_bytes()
        relpath = path.relative_to(NX_ROOT).as_posix()
        extraction = extract_file(relpath, data)
        assert extraction.quarantine is None, extraction.quarantine
        want = _ast_symbols(data)
        got = collections.Counter((attrs["label"], attrs["line"]) for attrs in extraction.nodes.values() if attrs["kind"] in SYMBOL_KINDS)
        total += sum(want.values())
        if want != got:
            mismatches.append((relpath, dict(want - got), dict(got - want)))
    assert total > 5000
    assert mismatches == []


@pytest.mark.parametrize("relpath", ["networkx/classes/graph.py", "networkx/algorithms/shortest_paths/weighted.py"])
def test_methods_and_functions_are_told_apart_like_ast(relpath: str) -> None:
    data = (NX_ROOT / relpath).read_bytes()
    tree = ast.parse(data)
    methods = {(f.name, f.lineno) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    extraction = extract_file(relpath, data)
    ours = {(a["label"], a["line"]) for a in extraction.nodes.values() if a["kind"] == "method"}
    assert ours == methods


def test_listing_finds_every_networkx_python_file() -> None:
    sources, skips = list_sources(NX_ROOT / "networkx")
    expected = sorted(p.relative_to(NX_ROOT / "networkx").as_posix() for p in _files())
    assert [s for s in sources if s.endswith(".py")] == expected
    assert skips == []
