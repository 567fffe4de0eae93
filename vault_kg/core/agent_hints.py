"""How kg tells an agent to ask for more, spelled for the face the agent has.

Under the MCP server, or in a hook the Claude Code plugin runs, the agent's shell may have no
`kg` on PATH (the plugin finds kg without it), but it has the vault-kg MCP tools: a hint names
the tool and its parameters (`explain(node="Payments API")`, `include_stale=true`). Anywhere else
it names the command line (`kg explain "Payments API"`, `--include-stale`). The MCP server calls
:func:`serve_as_mcp` once; a plugin hook is known by `CLAUDE_PLUGIN_ROOT`, which Claude Code sets.
"""

from __future__ import annotations

import json
import os
from typing import Literal

__all__ = ["ask", "face", "option", "parameter", "serve_as_mcp"]

Face = Literal["mcp", "cli"]
# The parameters each command line takes as arguments, in order (the rest are `--options`).
POSITIONAL = {"explain": ("node",), "query": ("question",), "recall": ("question",), "path": ("a", "b"), "neighbors": ("node",), "affected": ("node",)}
_served: list[Face] = []


def serve_as_mcp() -> None:
    """This process is the MCP server: every hint from now on names tools."""
    _served[:] = ["mcp"]


def face() -> Face:
    """`mcp` in the MCP server or a plugin hook, else `cli`."""
    if _served or os.environ.get("CLAUDE_PLUGIN_ROOT"):
        return "mcp"
    return "cli"


def _quoted(value: str) -> str:
    """A value from a file or the agent, quoted for a POSIX shell (`$(...)` in a name stays a name)."""
    from vault_kg.core.agent_text import shell_arg

    return shell_arg(value)


def ask(verb: str, **params: str | bool | int) -> str:
    """The call that asks kg `verb`: `explain(node="X")` for MCP, `kg explain 'X'` for the CLI.
    Values are redacted and on one line, never cut (a cut path names another file)."""
    if face() == "mcp":
        from vault_kg.core.agent_text import one_line

        args = ", ".join(f"{name}={json.dumps(value if not isinstance(value, str) else one_line(value), ensure_ascii=False)}" for name, value in params.items())
        return f"{verb}({args})"
    words = ["kg", verb.replace("_", "-")]
    for name in POSITIONAL.get(verb, ()):
        if name in params:
            words.append(_quoted(str(params.pop(name))))
    for name, value in params.items():
        words.append(option(name) if value is True else option(name, _quoted(str(value))))
    return " ".join(words)


def parameter(name: str) -> str:
    """A parameter named without a value: `budget` for MCP, `--budget` for the CLI."""
    return name if face() == "mcp" else f"--{name.replace('_', '-')}"


def option(name: str, value: str = "true") -> str:
    """A parameter as the agent passes it: `include_stale=true` for MCP, `--include-stale` for the
    CLI (`value`: shown after the name, `budget=N` or `--budget N`; "true" is a switch)."""
    if face() == "mcp":
        return f"{name}={value}"
    flag = f"--{name.replace('_', '-')}"
    return flag if value == "true" else f"{flag} {value}"
