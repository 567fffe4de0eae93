"""Storage: the per-scope SQLite cache (the only code that speaks SQL) and the files under `kg-out/`."""
