"""The background refresh: catch what changed behind the hooks' back (Obsidian, git pull, scripts); and
the journal note's update after a session end (`index_later`).

Every session start calls `refresh()`, which starts `kg hook reconcile` detached for the built
scopes that have none running and returns at once. That process runs an incremental update of
the whole scope (`engine.run`: stat every file, read only the changed; writers queue on the scope
lock) and records the time in `kg-out/reconciled.stamp`; `kg-out/reconcile.started` keeps two
sessions from starting two. The brief says so only when a scope's last one is older than
`reconcile_days` (its answers may lag noticeably until the refresh finishes).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from vault_kg.storage.layout import Layout, out_dir
from vault_kg.jobs.launcher import CHECKOUT, spawn

__all__ = ["DAY_S", "RUNNING_GRACE_S", "age_days", "due", "handle", "index_later", "launch", "refresh", "running"]

RUNNING_GRACE_S = 3600.0
DAY_S = 86400.0


def _done(root: Path) -> Path:
    return Layout(out_dir(root)).reconciled


def _started(root: Path) -> Path:
    return Layout(out_dir(root)).reconcile_started


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def age_days(root: Path, now: float | None = None) -> float | None:
    """Days since the last full reconcile of the scope at `root` (None: never recorded)."""
    done = _mtime(_done(root))
    return None if done is None else ((now or time.time()) - done) / DAY_S


def running(root: Path, now: float | None = None) -> bool:
    """A reconcile of the scope at `root` was started within the last hour and has not finished."""
    started = _mtime(_started(root))
    done = _mtime(_done(root)) or 0.0
    return started is not None and started > done and (now or time.time()) - started < RUNNING_GRACE_S


def due(root: Path, days: int, now: float | None = None) -> bool:
    """A full reconcile is due and none is running."""
    now = now or time.time()
    age = age_days(root, now)
    if age is not None and age < days:
        return False
    return not running(root, now)


def refresh(targets: list[dict[str, str]], days: int, now: float | None = None) -> list[dict[str, str]]:
    """Start the background update of each target with none running; return those overdue
    (never refreshed, or not for `days`), which the brief names."""
    now = now or time.time()
    idle = [t for t in targets if not running(Path(t["root"]), now)]
    if idle:
        launch(idle)
    return [t for t in idle if (age := age_days(Path(t["root"]), now)) is None or age >= days]


def launch(targets: list[dict[str, str]]) -> None:
    """Start `kg hook reconcile` in its own session; the hook does not wait for it."""
    for target in targets:
        marker = _started(Path(target["root"]))
        marker.touch()
    spawn(["-m", "hooks.dispatch", "reconcile"], stdin=json.dumps({"targets": targets}).encode(), cwd=CHECKOUT)  # failures land in hooks.log


def handle(payload: dict[str, Any]) -> None:
    """Full update of each target scope (`{"kind": "vault"|"code", "name", "root"}`), then stamp."""
    from vault_kg.core.config import load_config
    from vault_kg.core.scopes import project_scope, vault_scope
    from vault_kg.jobs.scope_update import update_scope

    cfg = load_config()
    failures = []
    for target in payload.get("targets", []):
        root = Path(target["root"])
        try:
            scope = vault_scope(root, cfg=cfg) if target["kind"] == "vault" else project_scope(target["name"], cfg)
            update_scope(scope, cfg=cfg, draw_html=False)  # a session start's refresh: the page is drawn when someone looks
        except Exception as exc:
            failures.append(f"{root}: {exc}")
            (_started(root)).unlink(missing_ok=True)  # the next session tries again
            continue
        stamp = _done(root)
        stamp.write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n", encoding="utf-8")
        os.utime(stamp)
    if failures:
        raise RuntimeError("reconcile failed for " + "; ".join(failures))


def index_later(vault: Path, note: Path) -> None:
    """`kg update NOTE` in its own session (the session-end hook's journal note): the hook returns while the note is re-extracted."""
    spawn(["-c", "from vault_kg.cli.entry import main; main()", "update", str(note), "--vault", str(vault)])
