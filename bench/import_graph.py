"""The import graph of a package, read from the source: rooms, floors, arrows, arrows running back up, circles.

    python bench/import_graph.py                      # vault_kg, one room per module
    python bench/import_graph.py --level room         # one room per sub-package (a module in the hall is its own room)
    python bench/import_graph.py --root ../other/checkout --level room --json

Every import counts, at the top of a file or inside a function (`import_module("x")` with a
literal name too). An arrow A -> B is "A imports B" between two different rooms. A room's floor
stands above everything it imports (floor 1 imports no other room). Where rooms import each
other in a loop (a circle), the loop is cut where a depth-first walk in name order first closes
it; each arrow so cut runs back up. Imports of other packages (extract, graph_out, ...) are left
out: this measures the inside of one package.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(root: Path, path: Path) -> set[str]:
    """Every dotted name the file imports (absolute; `from x import y` gives `x.y`)."""
    module = module_name(root, path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.update(f"{target}.{alias.name}" for alias in node.names)
            found.add(target)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__"):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def _holds_code(path: Path) -> bool:
    """Whether a package's `__init__.py` holds more than its docstring (a door that only describes the room is no module)."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(not (isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)) for node in body)


def module_graph(root: Path, package: str) -> nx.DiGraph:
    """Modules of `package` (files; an empty `__init__.py` is no module) and who imports whom."""
    paths = {module_name(root, p): p for p in sorted((root / package).rglob("*.py"))}
    modules = {name: p for name, p in paths.items() if p.name != "__init__.py" or _holds_code(p)}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    packages = {name for name, p in paths.items() if p.name == "__init__.py" and name not in modules}
    for name, path in modules.items():
        for target in imported(root, path):
            while target and target not in modules and target not in packages:
                target = target.rpartition(".")[0]  # `pkg.mod.func` -> `pkg.mod`; a package door that holds no code is no arrow
            if target in modules and target != name:
                graph.add_edge(name, target)
    return graph


def room_of(module: str, package: str, level: str) -> str:
    if level == "module":
        return module
    rest = module[len(package) + 1 :].split(".") if module != package else []
    return f"{package}.{rest[0]}" if rest else package


def rooms(graph: nx.DiGraph, package: str, level: str) -> nx.DiGraph:
    folded = nx.DiGraph()
    folded.add_nodes_from(room_of(m, package, level) for m in graph)
    for a, b in graph.edges:
        ra, rb = room_of(a, package, level), room_of(b, package, level)
        if ra != rb:
            folded.add_edge(ra, rb)
    return folded


def back_arrows(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """The arrows a depth-first walk in name order finds closing a loop (to a room still on its path)."""
    state: dict[str, int] = {}
    back: list[tuple[str, str]] = []
    for start in sorted(graph):
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(sorted(graph.successors(start))))]
        while stack:
            node, successors = stack[-1]
            nxt = next(successors, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                back.append((node, nxt))
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph.successors(nxt)))))
    return back


def measure(graph: nx.DiGraph) -> dict[str, object]:
    back = back_arrows(graph)
    dag = graph.copy()
    dag.remove_edges_from(back)
    floor: dict[str, int] = {}
    for node in reversed(list(nx.topological_sort(dag))):
        floor[node] = 1 + max((floor[s] for s in dag.successors(node)), default=0)
    circles = sorted((sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1), key=lambda c: (-len(c), c))
    by_floor: dict[int, list[str]] = {}
    for node, f in floor.items():
        by_floor.setdefault(f, []).append(node)
    return {
        "rooms": graph.number_of_nodes(),
        "floors": max(floor.values(), default=0),
        "arrows": graph.number_of_edges(),
        "arrows running back up": len(back),
        "circles": circles,
        "back up": sorted(back),
        "by floor": {f: sorted(by_floor[f]) for f in sorted(by_floor, reverse=True)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to read (default: this one)")
    parser.add_argument("--package", default="vault_kg")
    parser.add_argument("--level", choices=("module", "room"), default="module")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    graph = rooms(module_graph(args.root.resolve(), args.package), args.package, args.level)
    found = measure(graph)
    if args.json:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
        return 0
    print(
        f"{args.package} ({args.level}s): {found['rooms']} rooms, {found['floors']} floors, {found['arrows']} arrows, "
        f"{found['arrows running back up']} running back up, {len(found['circles'])} circles"
    )  # type: ignore[arg-type]
    for circle in found["circles"]:  # type: ignore[attr-defined]
        print("  circle: " + " <-> ".join(circle))
    for a, b in found["back up"]:  # type: ignore[attr-defined]
        print(f"  back up: {a} -> {b}")
    for f, names in found["by floor"].items():  # type: ignore[attr-defined]
        print(f"  floor {f:2}: {'  '.join(n.removeprefix(args.package + '.') for n in names)}")
    return 0


if __name__ == "__main__":
    if "--root" in sys.argv:  # another checkout: no page for this one
        sys.exit(main())
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("import_graph" + ("_" + sys.argv[sys.argv.index("--level") + 1] if "--level" in sys.argv[:-1] else "")):
        status = main()
    sys.exit(status)
