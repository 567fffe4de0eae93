"""Render a scope's graph.html from its graph.json in a detached process, serialized on `kg-out/.html.lock`.

Large graphs take seconds to lay out, which an update (and the hook behind it) must not wait
for: the route draws small graphs inline and leaves large ones to this job
(`python -m vault_kg.jobs.html_render OUT_DIR`), which the caller of the run wakes (`after_run`),
at low priority. Renders queue on the lock, each reads the newest graph.json, and a render that
finds one already waiting leaves, so the last one to finish always matches the last graph written
and a burst of edits renders twice at most. A hook renders in the background whatever the graph's
size (`vault_kg.update.run_state.RunSettings.html_later`): a page of a few hundred nodes still costs the
render's imports and layout, most of a hook's time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from vault_kg.update.html_page import BACKGROUND, LOCK


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
    return lock_held(out / LOCK) or lock_held(out / ".html.waiting")


def render_now(out: Path) -> bool:
    """Render `out/graph.html` from `out/graph.json`; True when the file changed.

    At most one render runs and one waits: a render that finds another already waiting leaves
    at once, since the waiting one reads graph.json only when it starts, so it will draw the
    newest graph anyway. A burst of edits costs two renders, not one per edit.
    """
    from filelock import FileLock, Timeout

    from vault_kg.core.store import load_json
    from vault_kg.update.html_page import draw_locked, page_lock

    waiting = FileLock(str(out / ".html.waiting"))
    try:
        waiting.acquire(timeout=0)
    except Timeout:
        return False
    try:
        with page_lock(out):  # held across the read too: the newest graph.json is drawn
            waiting.release()
            return draw_locked(out, load_json(out / "graph.json"))
    finally:
        if waiting.is_locked:
            waiting.release()


def after_run(out: Path, result: Any) -> None:
    """Start the detached render a run left owed (`extra["html"]`): what every caller of the route does after it."""
    if result.extra.get("html") == BACKGROUND:
        render_later(out)


def render_later(out: Path) -> None:
    """Start a detached render; its output goes to `kg-out/html.log`."""
    with (out / "html.log").open("ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "vault_kg.jobs.html_render", str(out)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )


if __name__ == "__main__":
    from vault_kg.jobs.usage import reported

    os.nice(10)  # a background nicety: the updates and hooks that follow must not wait on it
    with reported("graph.html"):
        render_now(Path(sys.argv[1]))
