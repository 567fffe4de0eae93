"""vault-kg vs Graphify on the installed networkx package tree, side by side in one run.

Copies the networkx package (read from site-packages, never committed) to a scratch folder twice,
then times whole processes for each tool: cold build, update after a one-file edit, no-op
update. Peak RSS and CPU time come from ``os.wait4`` on each process. Prints ratios kg/Graphify
plus call-edge counts and resolved cross-file calls read from both tools' graph.json.

    python bench/code_vs_graphify.py [--graphify ~/graphify-venv/bin/graphify] [--kg kg]

Graphify (``pip install graphifyy``) lives in its own venv; its ``update <path>`` is the AST-only
route. An in-process figure for the code adapter alone (list + extract + resolve) is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import settle  # noqa: E402

EDITED = "networkx/algorithms/cluster.py"
EDIT = "\n\ndef _bench_added(G):\n    return triangles(G)\n"


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float
    code: int


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> Run:
    """Run one whole process; wall time, CPU (user+sys, incl. waited children), peak RSS."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"warning: {' '.join(cmd)} exited {code}: {stderr.strip()[-300:]}", file=sys.stderr)
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code)


def copy_networkx(dest: Path) -> None:
    source = Path(networkx.__file__).parent
    shutil.copytree(source, dest / "networkx", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def kg_counts(graph_path: Path) -> dict[str, int]:
    graph = json.loads(graph_path.read_text())
    source_of = {n["id"]: n.get("source") for n in graph["nodes"]}
    calls = [e for e in graph["edges"] if e.get("relation") == "calls"]
    cross = [e for e in calls if source_of.get(e["target"]) and not e["target"].startswith("external:") and source_of[e["target"]] != e.get("owner")]
    return {"nodes": len(graph["nodes"]), "edges": len(graph["edges"]), "calls": len(calls), "cross_file_calls": len(cross)}


def graphify_counts(graph_path: Path) -> dict[str, int]:
    graph = json.loads(graph_path.read_text())
    links = graph.get("links", graph.get("edges", []))
    source_of = {n["id"]: n.get("source_file") for n in graph["nodes"]}
    calls = [e for e in links if e.get("relation") == "calls"]
    cross = [e for e in calls if source_of.get(e["target"]) and source_of.get(e["source"]) and source_of[e["target"]] != source_of[e["source"]]]
    extracted = [e for e in cross if e.get("confidence") == "EXTRACTED"]
    return {
        "nodes": len(graph["nodes"]),
        "edges": len(links),
        "calls": len(calls),
        "cross_file_calls": len(cross),
        "cross_file_calls_extracted": len(extracted),
    }


def in_process(root: Path) -> dict[str, float]:
    """The code adapter alone, without the engine (ranking, communities, writers)."""
    from extract.code import CodeAdapter

    adapter = CodeAdapter()
    t0 = time.perf_counter()
    sources, _ = adapter.list_sources(root)
    t1 = time.perf_counter()
    extractions = {rel: adapter.extract(rel, (root / rel).read_bytes()) for rel in sources}
    t2 = time.perf_counter()
    adapter.resolve(extractions)
    t3 = time.perf_counter()
    return {"files": len(sources), "list_s": t1 - t0, "extract_s": t2 - t1, "resolve_s": t3 - t2}


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}" if b else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--graphify",
        default=shutil.which("graphify") or str(Path.home() / "graphify-venv" / "bin" / "graphify"),
        help="Graphify's CLI (default: on PATH, else ~/graphify-venv, as docs/performance.md sets it up)",
    )
    parser.add_argument("--kg", default=shutil.which("kg") or str(Path(sys.executable).parent / "kg"))
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="kg-bench-"))
    kg_root, gfy_root = scratch / "kg" / "repo", scratch / "graphify" / "repo"
    copy_networkx(kg_root)
    copy_networkx(gfy_root)
    files = sum(1 for _ in (kg_root / "networkx").rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in (kg_root / "networkx").rglob("*.py"))
    print(f"networkx {networkx.__version__}: {files} Python files, {lines} lines; scratch {scratch}")

    # graph.html is rendered inside kg's own process (KG_HTML=inline), so its time, CPU and memory
    # are in kg's figures, and no detached render runs while Graphify is measured.
    env = dict(os.environ, KG_CONFIG=str(scratch / "kg-config.toml"), KG_HTML="inline")
    subprocess.run([args.kg, "project", "add", str(kg_root), "--name", "nxbench"], env=env, check=True, capture_output=True)
    kg_build = [args.kg, "build", "--scope", "nxbench"]
    kg_update = [args.kg, "update", "--scope", "nxbench"]
    gfy_update = [args.graphify, "update", str(gfy_root)]

    def both(kg_cmd: list[str]) -> tuple[Run, Run]:
        kg = run(kg_cmd, env, kg_root)
        waited = settle(kg_root / "kg-out")  # nothing of kg's may still run while Graphify is timed
        if waited > 0.5:
            print(f"warning: kg left background work that ran {waited:.1f}s after it exited", file=sys.stderr)
        return kg, run(gfy_update, env, gfy_root)

    results: dict[str, tuple[Run, Run]] = {}
    results["cold build"] = both(kg_build)
    for root in (kg_root, gfy_root):
        with open(root / EDITED, "a", encoding="utf-8") as handle:
            handle.write(EDIT)
    results["one-file update"] = both(kg_update)
    results["no-op update"] = both(kg_update)
    html = kg_root / "kg-out" / "graph.html"
    print(f"kg renders graph.html inside the timed process (KG_HTML=inline): {html.stat().st_size / 1e6:.1f} MB" if html.exists() else "kg wrote no graph.html")

    print(f"\n{'step':<16} {'kg wall s':>9} {'gfy wall s':>10} {'ratio':>7}   {'kg cpu s':>8} {'gfy cpu s':>9} {'ratio':>7}   {'kg RSS MB':>9} {'gfy RSS MB':>10} {'ratio':>7}")
    for step, (kg, gfy) in results.items():
        print(
            f"{step:<16} {kg.wall:>9.2f} {gfy.wall:>10.2f} {ratio(kg.wall, gfy.wall):>7}   "
            f"{kg.cpu:>8.2f} {gfy.cpu:>9.2f} {ratio(kg.cpu, gfy.cpu):>7}   "
            f"{kg.rss_mb:>9.0f} {gfy.rss_mb:>10.0f} {ratio(kg.rss_mb, gfy.rss_mb):>7}"
        )

    kg_graph = kg_root / "kg-out" / "graph.json"
    gfy_graph = gfy_root / "graphify-out" / "graph.json"
    counts: dict[str, Any] = {}
    if kg_graph.exists():
        counts["kg"] = kg_counts(kg_graph)
    if gfy_graph.exists():
        counts["graphify"] = graphify_counts(gfy_graph)
    print("\ngraph counts (after the edit):")
    for tool, values in counts.items():
        print(f"  {tool:<9} " + "  ".join(f"{k}={v}" for k, v in values.items()))
    adapter = in_process(kg_root)
    print(f"\nkg code adapter in-process: {adapter['files']:.0f} files, list {adapter['list_s'] * 1000:.0f} ms, extract {adapter['extract_s']:.2f} s, resolve {adapter['resolve_s']:.2f} s")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("code_vs_graphify"):
        main()
