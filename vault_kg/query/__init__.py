"""Services: answering from a built graph (query, explain, neighbors, path, god nodes, affected, stats) over a read-only view of the cache."""
