"""The doctor's lines about what keeps the graph current: the hooks, the watcher, the sync remote.

The hooks are installed through the plugin (enabled in Claude Code's settings) or by hand
(`kg hook` commands in its settings.json); their failures are the lines of `kg-out/hooks.log`
(and the one beside the config file). The watcher is whoever holds the vault's watch lease. The
sync remote is read without a fetch: a doctor never waits for the network.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from vault_kg.core.config import config_path
from vault_kg.core.scopes import Scope
from vault_kg.health.install import CONFIG_BYTES, PLUGIN_ID, claude_dir, plugin_root
from vault_kg.core.safe_read import read_regular, read_text
from vault_kg.health.report import Report
from vault_kg.storage.layout import Layout

__all__ = ["check_hooks", "check_sync", "check_watcher", "recent_failures"]

RECENT_S = 86_400.0


LOG_BYTES = 1024 * 1024


def _hooks_installed() -> str | None:
    """How the hooks reach Claude Code (None: they do not)."""
    try:
        settings = json.loads(read_text(claude_dir() / "settings.json", CONFIG_BYTES))
    except (OSError, ValueError):
        settings = {}
    if plugin_root() is not None and (settings.get("enabledPlugins") or {}).get(PLUGIN_ID) is not False:
        return f"through the plugin {PLUGIN_ID}"
    if "kg hook" in json.dumps(settings.get("hooks") or {}) or "kg-launch" in json.dumps(settings.get("hooks") or {}):
        return f"by hand, in {claude_dir() / 'settings.json'}"
    return None


def recent_failures(log: Path, since: float) -> list[str]:
    """The failures `log` recorded after `since` (the first line of each)."""
    try:
        text = read_regular(log, LOG_BYTES, tail=True).decode("utf-8", "replace")  # the newest failures
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        if line[:1].isdigit():
            try:
                stamp = time.mktime(time.strptime(line[:19], "%Y-%m-%dT%H:%M:%S"))
            except ValueError:
                continue
            if stamp >= since:
                found.append(line)
    return found


def check_hooks(report: Report, vault: Scope | None) -> None:
    how = _hooks_installed()
    if how is None:
        report.add("hooks", "off", "not installed in Claude Code", f"claude plugin install {PLUGIN_ID} (or the settings.json entries in docs/hooks.md)")
    else:
        report.add("hooks", "ok", f"installed {how}")
    logs = [Layout(vault.out).hooks_log] if vault is not None else []
    logs.append(config_path().parent / "hooks.log")
    for log in logs:
        failed = recent_failures(log, time.time() - RECENT_S)
        if failed:
            report.add("hook failures", "warn", f"{len(failed)} in the last day; the last: {failed[-1][:300]}", f"read {log} (hooks fail open: the session went on)")
            return
    report.add("hook failures", "ok", "none in the last day")


def check_watcher(report: Report, vault: Scope | None) -> None:
    if vault is None:
        return
    from filelock import FileLock, Timeout

    lease = Layout(vault.out).watch_lease
    if not lease.parent.is_dir():
        report.add("watcher", "off", "the vault is not built yet")
        return
    try:
        with FileLock(str(lease), timeout=0):
            pass
    except Timeout:
        report.add("watcher", "ok", "a watcher keeps the vault current (kg mcp or kg watch)")
        return
    later = "notes written outside Claude Code reach the graph at the next session start or `kg update`"
    report.add("watcher", "off", f"none running: {later} (`kg watch`, or an MCP client running `kg mcp`, keeps it current)")


def check_sync(report: Report, vault: Scope | None) -> None:
    if vault is None:
        return
    from vault_kg.notes.gitops import is_repo
    from vault_kg.notes.sync import status

    if not is_repo(vault.root):
        report.add("sync", "off", "the vault is not a git repository: `kg sync --init` makes it one")
        return
    state = status(vault.root, fetch=False)
    if not state.upstream:
        report.add("sync", "off", f"branch {state.branch} has no remote: `kg sync` commits locally only (git remote add origin URL)")
        return
    if state.in_progress or state.conflicts:
        report.add("sync", "fail", f"a {state.in_progress or 'merge'} is in progress with {len(state.conflicts)} conflicted file(s)", f"resolve them in {state.vault}, then `kg sync`")
        return
    report.add("sync", "ok", f"{state.branch} tracks {state.upstream}: {state.ahead} ahead, {state.behind} behind as of the last fetch, {len(state.uncommitted)} note(s) not committed")
