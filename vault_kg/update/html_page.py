"""graph.html: whether a run draws it, leaves it to a detached render or to whoever looks next, and its one writer.

graph.html is drawn when someone looks: `kg html` (`--open`), and a build or `kg update` a person
runs (small graphs inline, large ones by `vault_kg.jobs.html_render`, which the caller of the run
wakes; the route never starts a process). The hooks, the background jobs, the watcher and the MCP
server never draw it (`RunSettings.html_later`): an agent's edits would otherwise pay a render per
edit for a page nobody has open. Whoever draws it writes it through `write_page`, under
`kg-out/.html.lock`: graph.html has one writer.

Every write of graph.json also writes `kg-out/graph-state.js` (`write_state`: a few bytes naming
the graph.json it describes); the page loads it beside itself and says when it is behind the
graph it was drawn from, and how to redraw it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vault_kg.storage.layout import Layout

__all__ = ["BACKGROUND", "HTML_INLINE_NODES", "LATER", "draw_locked", "html_mode", "page_lock", "read_graph", "state_script", "write_page", "write_state"]

HTML_INLINE_NODES = int(os.environ.get("KG_HTML_INLINE_NODES", "3000"))
BACKGROUND = "rendering in the background"  # what a run's `extra["html"]` says when the job is owed a render
LATER = "later"  # graph.html is left to whoever looks next (`kg html`, a person's build or update)


def html_mode(nodes: int, later: bool = False) -> str:
    """How graph.html gets written: "off", "inline", "background" (large graphs), or `LATER` (the
    hooks and the jobs: `RunSettings.html_later`) (KG_HTML=inline draws in-process whatever the size)."""
    mode = os.environ.get("KG_HTML", "auto").lower()
    if mode in ("off", "0", "false", "no"):
        return "off"
    if mode == "inline":
        return "inline"
    if later:
        return LATER
    return "inline" if nodes <= HTML_INLINE_NODES else "background"


def page_lock(out: Path) -> Any:
    """The lock every writer of `out/graph.html` holds while it writes (a `filelock.FileLock`)."""
    from filelock import FileLock

    return FileLock(str(Layout(out).html_lock), timeout=600)


def write_page(out: Path, data: dict[str, Any], digest: int | None) -> bool:
    """Draw `data` (graph.json's content, whose bytes' CRC-32 is `digest`) into `out/graph.html`
    under the page's lock; True when it changed."""
    with page_lock(out):
        return draw_locked(out, data, digest)


def draw_locked(out: Path, data: dict[str, Any], digest: int | None) -> bool:
    """`write_page` for a caller that holds `page_lock(out)` already (the detached render)."""
    from graph_out.html import render_html
    from vault_kg.core import store

    store.sweep_temp(out, ("graph.html",))
    if not Layout(out).graph_state.exists():  # a graph.json written before kg kept graph-state.js: the page loads it
        write_state(out, digest, data.get("graph", {}).get("counts", {}))
    return store.write_if_changed(Layout(out).html, render_html(data, digest).encode("utf-8"))


def read_graph(path: Path) -> tuple[dict[str, Any], int]:
    """graph.json's content and the CRC-32 of its bytes (what graph-state.js names), read once."""
    import zlib

    import orjson

    raw = path.read_bytes()
    return orjson.loads(raw), zlib.crc32(raw)


def state_script(digest: int | None, counts: dict[str, Any]) -> bytes:
    """`graph-state.js`: which graph.json is current (its CRC-32) and its size, for the page to compare."""
    import json

    state = {"digest": digest, "nodes": counts.get("nodes", 0), "edges": counts.get("edges", 0)}
    return f"window.kgGraphState = {json.dumps(state, sort_keys=True)};\n".encode()


def write_state(out: Path, digest: int | None, counts: dict[str, Any]) -> None:
    """Write `graph-state.js` after graph.json changed (a few bytes, atomically; unchanged: untouched)."""
    from vault_kg.core import store

    store.write_if_changed(Layout(out).graph_state, state_script(digest, counts))
