"""Render a scope's graph.html from its graph.json, serialized on `kg-out/.html.lock`.

Large graphs take seconds to lay out, which an update (and the hook behind it) must not wait
for: the engine renders small graphs inline and hands large ones to this module in a detached
process (`python -m vault_kg.html_job OUT_DIR`), at low priority. Renders queue on the lock,
each reads the newest graph.json, and a render that finds one already waiting leaves, so the last
one to finish always matches the last graph written and a burst of edits renders twice at most.
A hook renders in the background whatever the graph's size (`rendering_later`): a page of a few
hundred nodes still costs the render's imports and layout, most of a hook's time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import AbstractContextManager
from contextvars import ContextVar
from pathlib import Path

from .block_setting import setting

HTML_INLINE_NODES = int(os.environ.get("KG_HTML_INLINE_NODES", "3000"))
_LATER: ContextVar[bool] = ContextVar("kg_html_later", default=False)


def rendering_later() -> AbstractContextManager[None]:
    """Runs inside this block (the PostToolUse hook) leave graph.html to a detached render at any
    size, unless KG_HTML=inline asks for it in-process."""
    return setting(_LATER, True)


def html_mode(nodes: int) -> str:
    """How graph.html gets written: "off", "inline", or "background" (large graphs, and hooks) (KG_HTML)."""
    mode = os.environ.get("KG_HTML", "auto").lower()
    if mode in ("off", "0", "false", "no"):
        return "off"
    if mode == "inline" or (nodes <= HTML_INLINE_NODES and not _LATER.get()):
        return "inline"
    return "background"


def lock_held(path: Path) -> bool:
    """Whether another process holds the lock file `path` (probed without waiting)."""
    from filelock import FileLock, Timeout

    probe = FileLock(str(path))
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    probe.release()
    return False


def rendering(out: Path) -> bool:
    """Whether a graph.html render of `out` is running or waiting to run."""
    return lock_held(out / ".html.lock") or lock_held(out / ".html.waiting")


def render_now(out: Path) -> bool:
    """Render `out/graph.html` from `out/graph.json`; True when the file changed.

    At most one render runs and one waits: a render that finds another already waiting leaves
    at once, since the waiting one reads graph.json only when it starts, so it will draw the
    newest graph anyway. A burst of edits costs two renders, not one per edit.
    """
    from filelock import FileLock, Timeout

    from graph_out.html import render_html

    from .core.store import load_json, sweep_temp, write_if_changed

    waiting = FileLock(str(out / ".html.waiting"))
    try:
        waiting.acquire(timeout=0)
    except Timeout:
        return False
    try:
        with FileLock(str(out / ".html.lock"), timeout=600):
            waiting.release()
            sweep_temp(out, ("graph.html",))
            data = load_json(out / "graph.json")
            return write_if_changed(out / "graph.html", render_html(data).encode("utf-8"))
    finally:
        if waiting.is_locked:
            waiting.release()


def render_later(out: Path) -> None:
    """Start a detached render; its output goes to `kg-out/html.log`."""
    with (out / "html.log").open("ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "vault_kg.html_job", str(out)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )


if __name__ == "__main__":
    from .job_usage import reported

    os.nice(10)  # a background nicety: the updates and hooks that follow must not wait on it
    with reported("graph.html"):
        render_now(Path(sys.argv[1]))
