"""graph.html: whether a run writes it in-process or leaves it to a detached render, and its one writer.

Small graphs are drawn inline by the run that wrote graph.json; large ones (and every hook's, see
`RunSettings.html_later`) are left to `vault_kg.jobs.html_render`, which the caller of the run wakes
(the route never starts a process). Whoever draws it, inline, in the job or `kg html`, writes it
through `write_page`, under `kg-out/.html.lock`: graph.html has one writer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vault_kg.storage.layout import Layout

__all__ = ["BACKGROUND", "HTML_INLINE_NODES", "draw_locked", "html_mode", "page_lock", "write_page"]

HTML_INLINE_NODES = int(os.environ.get("KG_HTML_INLINE_NODES", "3000"))
BACKGROUND = "rendering in the background"  # what a run's `extra["html"]` says when the job is owed a render


def html_mode(nodes: int, later: bool = False) -> str:
    """How graph.html gets written: "off", "inline", or "background" (large graphs, and hooks: `later`,
    `RunSettings.html_later`) (KG_HTML=inline draws in-process whatever the size)."""
    mode = os.environ.get("KG_HTML", "auto").lower()
    if mode in ("off", "0", "false", "no"):
        return "off"
    if mode == "inline" or (nodes <= HTML_INLINE_NODES and not later):
        return "inline"
    return "background"


def page_lock(out: Path) -> Any:
    """The lock every writer of `out/graph.html` holds while it writes (a `filelock.FileLock`)."""
    from filelock import FileLock

    return FileLock(str(Layout(out).html_lock), timeout=600)


def write_page(out: Path, data: dict[str, Any]) -> bool:
    """Draw `data` (graph.json's content) into `out/graph.html` under the page's lock; True when it changed."""
    with page_lock(out):
        return draw_locked(out, data)


def draw_locked(out: Path, data: dict[str, Any]) -> bool:
    """`write_page` for a caller that holds `page_lock(out)` already (the detached render)."""
    from graph_out.html import render_html
    from vault_kg.core import store

    store.sweep_temp(out, ("graph.html",))
    return store.write_if_changed(Layout(out).html, render_html(data).encode("utf-8"))
