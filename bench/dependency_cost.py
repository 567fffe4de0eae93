"""What each runtime dependency of kg costs: installed size, import time, and who imports it.

For every requirement in pyproject.toml's `dependencies`, read from the environment this runs in
(the package metadata, no install): its own size (the files its RECORD lists), the size of what
it alone brings (its requirements, transitively, that no other direct requirement needs), the
wall time of `import <module>` in a fresh interpreter (median of --runs; the interpreter's own
start-up subtracted), and the kg modules that import it (read from the source). Then the total
of the whole runtime closure, and what the extra `kg-vault[memsearch]` (memsearch, milvus-lite,
pymilvus and what only they bring: the optional recall backend since issue #32) adds on top of it
when it is installed in this environment.

Usage: python bench/dependency_cost.py [--runs 5]
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import subprocess
import sys
import time
import tomllib
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("vault_kg", "extract", "episodic", "graph_out", "hooks")
RECALL_CHAIN = ("memsearch", "milvus-lite", "pymilvus")


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(dist: metadata.Distribution) -> list[str]:
    """The names a distribution requires unconditionally (no extras, no markers that fail here)."""
    from packaging.requirements import Requirement

    names = []
    for raw in dist.requires or []:
        req = Requirement(raw)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        names.append(canon(req.name))
    return names


def closure(roots: list[str], dists: dict[str, metadata.Distribution]) -> set[str]:
    seen: set[str] = set()
    todo = [canon(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen or name not in dists:
            continue
        seen.add(name)
        todo.extend(requirement_names(dists[name]))
    return seen


def size_of(dist: metadata.Distribution) -> int:
    total = 0
    for file in dist.files or []:
        try:
            total += Path(file.locate()).stat().st_size
        except OSError:
            pass
    return total


def import_names(dist: metadata.Distribution) -> list[str]:
    mapping = metadata.packages_distributions()
    return sorted(module for module, owners in mapping.items() if dist.metadata["Name"] in owners and not module.startswith("_"))


def import_seconds(module: str, runs: int) -> float:
    def once(code: str) -> float:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        return time.perf_counter() - began

    base = statistics.median(once("pass") for _ in range(runs))
    return max(0.0, statistics.median(once(f"import {module}") for _ in range(runs)) - base)


def importers(modules: list[str]) -> list[str]:
    """The kg modules whose source imports any of `modules` (at the top or inside a function)."""
    found = set()
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
                if any(n.split(".")[0] in modules for n in names):
                    found.add(str(path.relative_to(REPO).with_suffix("")).replace("/", "."))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from packaging.requirements import Requirement

    direct = [canon(Requirement(r).name) for r in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]]
    dists = {canon(d.metadata["Name"]): d for d in metadata.distributions()}
    everything = closure(direct, dists)
    sizes = {name: size_of(dists[name]) for name in everything}
    mb = 1024 * 1024
    print(f"{'requirement':<28}{'own MB':>8}{'+ alone MB':>12}{'import s':>10}   imported by")
    for name in direct:
        others = set().union(*(closure([o], dists) for o in direct if o != name))
        alone = closure([name], dists) - others - {name}
        modules = import_names(dists[name]) or [name.replace("-", "_")]  # a meta-package (fastmcp) or one whose files RECORD misses
        module = next((m for m in modules if canon(m) == name or m == name.replace("-", "_")), modules[0] if modules else name)
        seconds = import_seconds(module, args.runs)
        users = importers(modules)
        shown = ", ".join(users[:4]) + (f" (+{len(users) - 4})" if len(users) > 4 else "") if users else "(no kg module: a requirement of another)"
        print(f"{name:<28}{sizes[name] / mb:>8.1f}{sum(sizes[a] for a in alone) / mb:>12.1f}{seconds:>10.2f}   {shown}")
        if alone:
            print(f"{'':<28}  alone brings: {', '.join(sorted(alone, key=lambda a: -sizes[a])[:8])}")
    total = sum(sizes.values())
    print(f"\nruntime closure: {len(everything)} distributions, {total / mb:.0f} MB (site-packages files, no .pyc compiled after install)")
    # the memsearch recall backend is the extra kg-vault[memsearch]: what it adds on top of the core
    installed = [c for c in RECALL_CHAIN if c in dists]
    if installed:
        extra = closure(installed, dists) - everything
        added = sum(size_of(dists[c]) for c in extra)
        print(f"the extra kg-vault[memsearch] ({', '.join(RECALL_CHAIN)}) adds {len(extra)} distributions, {added / mb:.0f} MB: {', '.join(sorted(extra, key=lambda c: -size_of(dists[c]))[:10])}")
    else:
        print(f"the extra kg-vault[memsearch] ({', '.join(RECALL_CHAIN)}) is not installed here: its cost is not measured")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("dependency_cost"):
        main()
