"""The MCP server (a face): `kg mcp`, thin tools over the front door."""
