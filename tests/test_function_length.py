"""No function in the packages is longer than 80 lines (from its `def` to its last line)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("vault_kg", "extract", "episodic", "graph_out", "hooks")
LIMIT = 80
EXEMPT: tuple[str, ...] = ()  # faces included: the CLI, the MCP server and the hooks obey the same rule


def long_functions(root: Path = ROOT, limit: int = LIMIT) -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if any(rel == e or (e.endswith("/") and rel.startswith(e)) for e in EXEMPT):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > limit:
                        found.append(f"{rel}:{node.lineno} {node.name} is {length} lines")
    return found


def test_no_function_is_over_80_lines() -> None:
    assert long_functions() == []


def test_the_measure_counts_from_def_to_the_last_line(tmp_path: Path) -> None:
    (tmp_path / "extract").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))  # def line + 80 = 81 lines
    (tmp_path / "extract" / "long.py").write_text(f"def too_long():\n{body}\n\ndef fine():\n    pass\n")
    assert long_functions(tmp_path) == ["extract/long.py:1 too_long is 81 lines"]
