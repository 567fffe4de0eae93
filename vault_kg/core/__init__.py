"""The shared core: types, errors, config, redaction, safe reads, atomic writes and the vault write guard.

`extract`, `episodic` and `graph_out` depend on this package alone; it imports nothing outside itself
(tests/test_architecture.py holds both rules). Importing it is cheap: nothing heavy at module level.
"""
