"""The vault watcher (a face): `kg watch` and the MCP server's watcher, updating the graph after a burst of edits."""
