"""The walk of one PostToolUse edit, from the hook's payload to graph.json: which modules and rooms it passes through.

    .venv/bin/python bench/hook_walk.py [--edit prose|link] [--json]

Copies the example vault to a temporary folder, builds it with this checkout's `kg`, edits one
note, then runs the PostToolUse hook's handler in this process (`hooks.post_tool_use.handle`)
under a profiler that notes every call from one of the project's modules into another (code run
at import time left out). It reports the modules and rooms the walk visits, in the order first
entered, the calls between them (distinct caller -> callee pairs), and the calls that *return*
into a module (or room) the walk came down from: a pair whose callee also calls its caller,
however far round (the two stand in one loop of the run's call graph). A room is a sub-package
of `vault_kg` (a module directly in it is its own room) or a top-level package. It reads module
names only, so it runs against an older checkout too (`../main/.venv/bin/python bench/hook_walk.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("vault_kg", "extract", "episodic", "graph_out", "hooks")
EDITS = {
    "prose": lambda text: text + "\nOne more sentence of prose.\n",
    "link": lambda text: text + "\nSee also [[Acme]].\n",
}


def room_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "vault_kg" and len(parts) > 2 else parts[0] if parts[0] != "vault_kg" else module


def walk(calls: list[tuple[str, str]], key: Any) -> dict[str, Any]:
    """Visited (in the order first entered), calls between distinct units, and those that return up a loop."""
    import networkx as nx

    graph = nx.DiGraph()
    order: list[str] = []
    for caller, callee in calls:
        a, b = key(caller), key(callee)
        for unit in (a, b):
            if unit not in order:
                order.append(unit)
        if a != b:
            graph.add_edge(a, b)
    loops = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    inside = {u: i for i, loop in enumerate(loops) for u in loop}
    back = sorted(f"{a} -> {b}" for a, b in graph.edges if a in inside and inside[a] == inside.get(b) and order.index(b) < order.index(a))
    return {"visited": len(order), "calls": graph.number_of_edges(), "returns": len(back), "back": back, "loops": loops, "order": order}


def traced_hook(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(caller module, callee module) of every call between project modules while the hook handles `payload`."""
    from hooks.post_tool_use import handle

    calls: list[tuple[str, str]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name == "<module>" or frame.f_back is None:
            return
        callee, caller = frame.f_globals.get("__name__", ""), frame.f_back.f_globals.get("__name__", "")
        if callee.split(".")[0] in PROJECT and caller.split(".")[0] in PROJECT:
            calls.append((caller, callee))

    sys.setprofile(profile)
    try:
        handle(payload)
    finally:
        sys.setprofile(None)
    return calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edit", choices=sorted(EDITS), default="prose")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="kg-walk-"))
    vault = work / "vault"
    shutil.copytree(ROOT / "examples" / "vault", vault)
    os.environ.update(KG_CONFIG=str(work / "config.toml"), KG_OLLAMA="off", KG_VAULT=str(vault), KG_HTML="off")
    kg = Path(sys.executable).with_name("kg")
    subprocess.run([str(kg), "build", "--vault", str(vault)], check=True, capture_output=True)
    note = sorted(vault.rglob("*.md"))[0]
    note.write_text(EDITS[args.edit](note.read_text(encoding="utf-8")), encoding="utf-8")
    payload = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "cwd": str(vault), "tool_input": {"file_path": str(note)}}
    calls = traced_hook(payload)
    found = {"edit": args.edit, "modules": walk(calls, lambda m: m), "rooms": walk(calls, room_of)}
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    for level in ("modules", "rooms"):
        w = found[level]
        print(f"{level}: {w['visited']} visited, {w['calls']} caller -> callee pairs, {w['returns']} returning up a loop")
        print("  " + " > ".join(w["order"]))
        for line in w["back"]:
            print(f"  returns: {line}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("hook_walk_" + (sys.argv[sys.argv.index("--edit") + 1] if "--edit" in sys.argv[:-1] else "prose")):
        status = main()
    sys.exit(status)
