"""PostToolUse (Write|Edit|MultiEdit|NotebookEdit): keep the graph current with what the agent edits.

A vault `.md` gets an incremental update of that one note; a file in a registered project gets
an update of that file's code graph, then one line per anchored vault note that the edit just
made dirty. Anything else returns at once, before any heavy import. Concurrent hooks queue
behind the scope's lock inside `engine.run`. The model never runs here: an edited note is marked
pending and the background model worker is woken (started when none runs; never waited for).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import HookEnv, cache_problem, hook_env, inside, is_built

EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
MAX_LINES = 12


def edited_path(payload: dict[str, Any]) -> str | None:
    """The absolute path the tool wrote, or None when this call wrote no file."""
    if payload.get("tool_name") not in EDIT_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    raw = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw)
    if not path.is_absolute():
        cwd = payload.get("cwd")
        path = Path(cwd if isinstance(cwd, str) and cwd else ".") / path
    return str(path)


def handle(payload: dict[str, Any]) -> dict[str, Any] | None:
    path = edited_path(payload)
    if path is None:
        return None
    env = hook_env(payload)
    lines: list[str] = []
    rel = inside(path, env.vault) if env.vault is not None else None
    if rel is not None and rel.endswith(".md"):
        if is_built(env.vault):
            lines = rebuild_later("vault", "vault", env.vault) or update_vault_note(env, rel)
    else:
        found = env.project_of(Path(path))
        if found is not None:
            name, root = found
            rel = inside(path, root)
            if rel is not None and is_built(root):
                lines = rebuild_later("code", name, root) or update_project_file(env, name, rel)
    if not lines:
        return None
    from vault_kg.core.agent_text import one_line  # a file name can hold a newline: each line stays one line

    shown = [one_line(line, 1000) for line in lines[:MAX_LINES]] + ([f"kg: … {len(lines) - MAX_LINES} more; run `kg check`"] if len(lines) > MAX_LINES else [])
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "\n".join(shown)}}


def rebuild_later(kind: str, name: str, root: Path) -> list[str]:
    """When the scope's cache is unusable, rebuild it in full in the background (one line)."""
    problem = cache_problem(root)
    if problem is None:
        return []
    from vault_kg import api

    if not api.rebuild_in_background(kind, name, root):
        return [f"kg: the {name} graph is being rebuilt in the background; this edit is picked up when it finishes"]
    return [f"kg: the {name} graph cache is unusable ({problem}); rebuilding it from the files in the background"]


def update_vault_note(env: HookEnv, rel: str) -> list[str]:
    """Re-extract one note; tell the agent only what it must fix (quarantine, warnings)."""
    from vault_kg import api
    from vault_kg.core.scopes import vault_scope

    [result] = api.update_runs([vault_scope(env.vault, cfg=env.cfg)], [env.vault / rel], hook=True, cfg=env.cfg)
    lines = [f"kg: {env.vault / rel} was quarantined: {reason}" for source, reason in result.quarantined if source == rel]
    lines += [f"kg: {w}" for w in result.warnings]
    return lines


def update_project_file(env: HookEnv, project: str, rel: str) -> list[str]:
    """Re-extract one code file; then list the anchored notes this edit made dirty."""
    from vault_kg import api
    from vault_kg.core.scopes import project_scope

    api.update_runs([project_scope(project, env.cfg)], [env.cfg.projects[project] / rel], hook=True, cfg=env.cfg, wake_model=False)
    if env.vault is None:
        return []
    return api.notes_dirtied(project, [rel], env.vault, env.cfg)
