"""Render a scope's graph.html from its graph.json in a detached process, serialized on `kg-out/.html.lock`.

Large graphs take seconds to lay out, which an update (and the hook behind it) must not wait
for: the route draws small graphs inline and leaves large ones to this job
(`python -m vault_kg.jobs.html_render OUT_DIR`), which the caller of the run wakes (`after_run`),
at low priority (a build or `kg update` a person runs; the hooks and the jobs leave graph.html to
whoever looks next, `vault_kg.update.html_page`). Renders queue on the lock, each reads the newest graph.json, and a render that
finds one already waiting leaves, so the last one to finish always matches the last graph written
and a burst of updates renders twice at most.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from vault_kg.jobs.launcher import lock_held, one_runs_one_waits, reported, spawn
from vault_kg.storage.layout import Layout
from vault_kg.update.html_page import BACKGROUND

__all__ = ["after_run", "lock_held", "render_later", "render_now", "rendering"]


def rendering(out: Path) -> bool:
    """Whether a graph.html render of `out` is running or waiting to run."""
    return lock_held(Layout(out).html_lock) or lock_held(Layout(out).html_waiting)


def render_now(out: Path) -> bool:
    """Render `out/graph.html` from `out/graph.json`; True when the file changed.

    At most one render runs and one waits: a render that finds another already waiting leaves
    at once, since the waiting one reads graph.json only when it starts, so it will draw the
    newest graph anyway. A burst of edits costs two renders, not one per edit.
    """
    from vault_kg.update.html_page import draw_locked, read_graph

    with one_runs_one_waits(Layout(out).html_lock, Layout(out).html_waiting) as mine:  # the page's lock, held across the read too
        return mine and draw_locked(out, *read_graph(Layout(out).graph_json))


def after_run(out: Path, result: Any) -> None:
    """Start the detached render a run left owed (`extra["html"]`): what every caller of the route does after it."""
    if result.extra.get("html") == BACKGROUND:
        render_later(out)


def render_later(out: Path) -> None:
    """Start a detached render; its output goes to `kg-out/html.log`."""
    spawn(["-m", "vault_kg.jobs.html_render", str(out)], log=Layout(out).html_log)


if __name__ == "__main__":
    from vault_kg.core.secrets import redact_output

    redact_output()  # its output is its log under kg-out/
    os.nice(10)  # a background nicety: the updates and hooks that follow must not wait on it
    with reported("graph.html"):
        render_now(Path(sys.argv[1]))
