"""Render a scope's graph.html from its graph.json, serialized on `kg-out/.html.lock`.

Large graphs take seconds to lay out, which an update (and the hook behind it) must not wait
for: the engine renders small graphs inline and hands large ones to this module in a detached
process (`python -m vault_kg.html_job OUT_DIR`). Renders queue on the lock and each reads the
newest graph.json, so the last one to finish always matches the last graph written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HTML_INLINE_NODES = int(os.environ.get("KG_HTML_INLINE_NODES", "3000"))


def render_now(out: Path) -> bool:
    """Render `out/graph.html` from `out/graph.json`; True when the file changed."""
    from filelock import FileLock

    from graph_out.html import render_html

    from .store import load_json, sweep_temp, write_if_changed

    with FileLock(str(out / ".html.lock"), timeout=600):
        sweep_temp(out, ("graph.html",))
        data = load_json(out / "graph.json")
        return write_if_changed(out / "graph.html", render_html(data).encode("utf-8"))


def render_later(out: Path) -> None:
    """Start a detached render; its output goes to `kg-out/html.log`."""
    with (out / "html.log").open("ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "vault_kg.html_job", str(out)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )


if __name__ == "__main__":
    render_now(Path(sys.argv[1]))
