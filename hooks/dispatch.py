"""`kg hook EVENT`: the Claude Code hook protocol (JSON on stdin, JSON on stdout), failing open.

`vault_kg.cli.entry` calls `main` before the CLI is imported, and nothing heavy is imported here: an
edit outside the vault and the projects must cost the agent no more than starting Python. Every
error is logged to `<vault>/kg-out/hooks.log` (or beside the config file) and the hook still
exits 0, so a broken graph, a missing vault or a read-only disk never blocks a session.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

EVENTS = ("session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use", "stop", "pre-compact", "session-end", "reconcile")
USAGE = "usage: kg hook {session-start|user-prompt-submit|pre-tool-use|post-tool-use|stop|pre-compact|session-end} < payload.json  (Claude Code hook protocol)"


def read_payload(stream: Any) -> dict[str, Any]:
    raw = stream.read()
    if not raw.strip():
        return {}
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"hook payload is a JSON {type(data).__name__}, not an object")
    return data


def handler(event: str) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    if event == "pre-tool-use":
        from .pre_tool_use import handle
    elif event == "post-tool-use":
        from .post_tool_use import handle
    elif event == "session-start":
        from .session_start import handle
    elif event == "session-end":
        from .session_end import handle
    elif event == "user-prompt-submit":
        from .user_prompt_submit import handle
    elif event == "stop":
        from .stop import handle
    elif event == "pre-compact":
        from .pre_compact import handle
    else:
        from vault_kg.jobs.reconcile import handle
    return handle


def main(argv: list[str]) -> int:
    """Run one hook; always 0 (a hook that fails must not break the agent's session)."""
    event = argv[0] if argv else ""
    if event not in EVENTS:
        sys.stderr.write(USAGE + "\n")
        return 0
    payload: dict[str, Any] = {}
    try:
        payload = read_payload(sys.stdin)
        output = handler(event)(payload)
    except BaseException as exc:  # fail open, whatever happened
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        _record(event, exc, payload)
        return 0
    if output:
        sys.stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
    return 0


def _record(event: str, exc: BaseException, payload: dict[str, Any]) -> None:
    import traceback

    vault = None
    try:
        from .common import hook_env

        vault = hook_env(payload).vault
    except BaseException:
        pass
    summary = f"{type(exc).__name__}: {exc}"
    detail = "".join(traceback.format_exception(exc)).rstrip().replace("\n", "\n    ")
    try:
        from .common import log_failure

        where = log_failure(event, f"{summary}\n    {detail}", vault)
    except BaseException:
        where = None
    sys.stderr.write(f"kg hook {event}: {summary}" + (f" (logged to {where})" if where else "") + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
