"""A real MCP client (fastmcp's Client over stdio) against `kg mcp`, called from synchronous tests."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StdioTransport


class SyncClient:
    """A connected fastmcp Client on its own loop thread, called from synchronous tests."""

    def __init__(self, transport: StdioTransport) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = Client(transport, timeout=120)
        self.run(self.client.__aenter__())

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=180)

    def call(self, tool: str, **args: Any) -> Any:
        return self.run(self.client.call_tool(tool, args))

    def close(self) -> None:
        self.run(self.client.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def start_server(config: Path, cwd: Path) -> SyncClient:
    """`kg mcp` started the way Claude Code starts it (a subprocess on stdio), with this config."""
    env = {k: v for k, v in os.environ.items() if k not in ("KG_VAULT", "OLLAMA_HOST", "KG_MODEL")}
    env.update({"KG_CONFIG": str(config), "KG_OLLAMA": "off", "FASTMCP_LOG_LEVEL": "WARNING"})
    transport = StdioTransport(sys.executable, ["-c", "from vault_kg.cli.entry import main; main()", "mcp"], env=env, cwd=str(cwd))
    return SyncClient(transport)
