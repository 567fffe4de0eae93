"""`kg mcp` (the MCP server on stdio) and `kg hook` (the Claude Code hooks), for coding agents.

`kg hook EVENT` normally never reaches this module: `vault_kg.cli.entry` dispatches it before the
CLI is imported, to keep the hooks fast. It is registered here so `kg --help` lists it and so it
behaves the same when the CLI is driven in-process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from vault_kg.core.errors import KgError

from vault_kg.cli.commands.options import VaultOpt


def mcp_command(
    vault: Optional[Path] = VaultOpt,
    check: bool = typer.Option(False, "--check", help="List the tools and resources as JSON and exit, without serving."),
) -> None:
    """Serve the graph and the vault to an agent over MCP on stdio (query, explain, notes, journal, recent, update, lint; docs/mcp.md).

    \b
    Example: claude mcp add vault-kg -- kg mcp
    Example: kg mcp --check
    """
    from vault_kg.mcp.server import build_server, serve

    if vault is not None and not vault.expanduser().is_dir():
        raise KgError(f"{vault}: vault folder does not exist; check the path")
    if check:
        import asyncio

        server = build_server(vault)

        async def listing() -> dict[str, list[str]]:
            tools = await server.list_tools()
            templates = await server.list_resource_templates()
            return {"tools": sorted(t.name for t in tools), "resources": sorted(t.uri_template for t in templates)}

        sys.stdout.write(json.dumps(asyncio.run(listing()), indent=2) + "\n")
        return
    serve(vault)


def hook_command(
    event: str = typer.Argument(..., help="session-start | user-prompt-submit | pre-tool-use | post-tool-use | stop | pre-compact | session-end"),
) -> None:
    """Run a Claude Code hook: the JSON payload on stdin, the hook's JSON on stdout; always exits 0.

    \b
    Example: echo '{"cwd": ".", "source": "startup"}' | kg hook session-start
    """
    from hooks.dispatch import main

    raise typer.Exit(main([event]))


def register(app: typer.Typer) -> None:
    """Add `kg mcp` and `kg hook` to the main app."""
    app.command("mcp")(mcp_command)
    app.command("hook")(hook_command)
